// Kernels for batches of small matrices (every dimension <= kSmallMatrix), used by lu, cholesky
// and triangular_solve instead of a LAPACK/BLAS call per matrix. For many 8x8 or 16x16 matrices
// the library call's fixed costs (argument checks, getrf's column-major scratch copies, workspace
// queries) exceed the arithmetic, and a single small matrix's rows are too short to fill a vector
// register. So the kernels work on kLanes matrices at once (8 float32, 4 float64), "interleaved":
// element (i, j) of the group's matrix l sits at s[(i * cols + j) * kLanes + l]. Every loop's
// innermost level runs over the lanes — contiguous, of fixed length — so each scalar step of the
// textbook algorithm becomes one vector instruction for a whole group, whatever the matrix size.
// Pivot choices differ per lane: the search is branch-free (compare and select), the row swap is
// done per lane.
//
// The algorithms are the textbook ones LAPACK's unblocked routines use (getf2's right-looking LU
// with partial pivoting — the first row of largest |value| wins, as i?amax —, potf2's Cholesky,
// trsm's substitution), so results agree with LAPACK's to rounding (not bitwise: the order of the
// sums differs). Each lane's arithmetic is the same sequence of IEEE operations as one matrix
// done alone (no lane ever reads another's data; padding lanes are discarded), so the results
// depend neither on a matrix's position in its group nor on the thread count.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tessera::prims::linalg {

// Every dimension of a matrix at most this takes the small path.
inline constexpr int64_t kSmallMatrix = 32;
// Matrices per interleaved group: one 32-byte (AVX2) register of T.
template <class T>
inline constexpr int64_t kLanes = 32 / static_cast<int64_t>(sizeof(T));

// Copies count <= kLanes row-major rows x cols matrices (src, contiguous) into the interleaved
// scratch s. Missing lanes are padded with the identity (zero off the diagonal) so they factor
// without special cases; their results are never read.
template <class T>
void pack_lanes(const T* src, int64_t count, int64_t rows, int64_t cols, T* s) {
  const int64_t e = rows * cols;
  if (count == kLanes<T>) {  // a full group: one contiguous group-wide store per element
    for (int64_t k = 0; k < e; ++k)
      for (int64_t l = 0; l < kLanes<T>; ++l) s[k * kLanes<T> + l] = src[l * e + k];
    return;
  }
  for (int64_t l = 0; l < count; ++l)
    for (int64_t k = 0; k < e; ++k) s[k * kLanes<T> + l] = src[l * e + k];
  for (int64_t l = count; l < kLanes<T>; ++l)
    for (int64_t k = 0; k < e; ++k) s[k * kLanes<T> + l] = (k / cols == k % cols) ? T(1) : T(0);
}

// The inverse of pack_lanes for the first count lanes.
template <class T>
void unpack_lanes(const T* s, int64_t count, int64_t rows, int64_t cols, T* dst) {
  const int64_t e = rows * cols;
  if (count == kLanes<T>) {
    for (int64_t k = 0; k < e; ++k)
      for (int64_t l = 0; l < kLanes<T>; ++l) dst[l * e + k] = s[k * kLanes<T> + l];
    return;
  }
  for (int64_t l = 0; l < count; ++l)
    for (int64_t k = 0; k < e; ++k) dst[l * e + k] = s[k * kLanes<T> + l];
}

// The kLanes values of one element position of a group, as one vector (GCC/Clang vector
// extension: arithmetic, comparisons and ?: act lane by lane). The scratch holding a group is
// aligned to the vector's size, and every element position starts at a multiple of kLanes.
template <class T>
struct Lanes {
  typedef T V __attribute__((vector_size(sizeof(T) * kLanes<T>)));
};
template <class T>
using LaneVec = typename Lanes<T>::V;

template <class V>
inline V lane_abs(V x) {
  return x < V{} ? -x : x;
}

// LU with partial pivoting of kLanes interleaved m x n matrices, in place: L's strict lower part
// (unit diagonal implied) and U packed; piv[j * kLanes + l] (0-based) is the row swapped with row
// j at step j in lane l, for j < min(m, n). A zero pivot leaves its column unscaled (U singular).
template <class T>
void lu_lanes(T* s, int64_t m, int64_t n, int32_t* piv) {
  using V = LaneVec<T>;
  constexpr int64_t W = kLanes<T>;
  auto at = [&](int64_t i, int64_t j) { return reinterpret_cast<V*>(s + (i * n + j) * W); };
  const int64_t k = std::min(m, n);
  const V one = V{} + T(1), zero = V{}, tiny = V{} + std::numeric_limits<T>::min();
  for (int64_t j = 0; j < k; ++j) {
    // The pivot search, branch-free; row numbers are kept as T (small integers, exact) so the
    // compare-and-select has one lane width.
    V best = lane_abs(*at(j, j)), p = V{} + static_cast<T>(j);
    for (int64_t i = j + 1; i < m; ++i) {
      const V v = lane_abs(*at(i, j));
      const auto g = v > best;  // strict: the first largest row wins (NaN never does)
      best = g ? v : best;
      p = g ? V{} + static_cast<T>(i) : p;
    }
    for (int64_t l = 0; l < W; ++l) {
      const auto pl = static_cast<int64_t>(p[l]);
      piv[j * W + l] = static_cast<int32_t>(pl);
      if (pl != j)
        for (int64_t c = 0; c < n; ++c) std::swap(s[(j * n + c) * W + l], s[(pl * n + c) * W + l]);
    }
    // As getf2: multiply by the pivot's reciprocal unless that would overflow. A zero pivot (its
    // column below is then all zero) scales nothing; the trailing update still runs, with a zero
    // multiplier, as getf2's ?ger does.
    const V x0 = *at(j, j);
    const auto nz = x0 != zero;
    const V d = nz ? x0 : one;
    const auto big = lane_abs(x0) >= tiny;
    const V r = one / d;
    for (int64_t i = j + 1; i < m; ++i) {
      V* cij = at(i, j);
      const V x = *cij;
      const V q1 = x * r, q2 = x / d;
      const V q = big ? q1 : q2;
      *cij = nz ? q : x;
      const V f = nz ? q : zero;
      for (int64_t c = j + 1; c < n; ++c) *at(i, c) -= f * *at(j, c);
    }
  }
}

// Cholesky of kLanes interleaved n x n matrices, reading each one's lower triangle, into their
// lower factors in place (the strict upper part is left as read). ok[l] false when lane l's
// matrix is not positive definite (or holds a NaN): its factor must then be replaced by NaNs.
template <class T>
void cholesky_lanes(T* s, int64_t n, bool* ok) {
  using V = LaneVec<T>;
  auto at = [&](int64_t i, int64_t j) { return reinterpret_cast<V*>(s + (i * n + j) * kLanes<T>); };
  const V zero = V{}, one = V{} + T(1);
  auto good = zero == zero;  // all lanes true
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t c = 0; c <= j; ++c) {
      // l[j][c] = (a[j][c] - sum_{t<c} l[j][t] * l[c][t]) / l[c][c]
      V acc = *at(j, c);
      for (int64_t t = 0; t < c; ++t) acc -= *at(j, t) * *at(c, t);
      if (c < j) {
        *at(j, c) = acc / *at(c, c);
      } else {
        const auto pos = acc > zero;
        good = good & pos;
        V sq = pos ? acc : one;
        for (int64_t l = 0; l < kLanes<T>; ++l) sq[l] = std::sqrt(sq[l]);
        *at(j, j) = sq;
      }
    }
  }
  for (int64_t l = 0; l < kLanes<T>; ++l) ok[l] = good[l] != 0;
}

// Solves op(a) · x = b (left) or x · op(a) = b (right) for kLanes interleaved systems, in place in
// b (rows x cols each); a is m x m (m = rows when left, cols when right); op(a) = aᵀ when
// transpose. The triangle read is a's lower or upper one; unit_diagonal takes its diagonal as
// ones.
template <class T>
void trsm_lanes(bool left, bool lower, bool transpose, bool unit, int64_t rows, int64_t cols,
                const T* a, int64_t m, T* b) {
  using V = LaneVec<T>;
  // op(a)(i, k) and x(i, c), each kLanes values
  auto opa = [&](int64_t i, int64_t k) {
    return *reinterpret_cast<const V*>(a + (transpose ? k * m + i : i * m + k) * kLanes<T>);
  };
  auto xb = [&](int64_t i, int64_t c) {
    return reinterpret_cast<V*>(b + (i * cols + c) * kLanes<T>);
  };
  const bool op_lower = lower != transpose;  // is op(a) lower triangular?
  if (left) {
    // Row i of x by forward (op(a) lower) or backward substitution.
    for (int64_t s = 0; s < rows; ++s) {
      const int64_t i = op_lower ? s : rows - 1 - s;
      const int64_t k0 = op_lower ? 0 : i + 1, k1 = op_lower ? i : rows;
      for (int64_t c = 0; c < cols; ++c) {
        V acc = *xb(i, c);
        for (int64_t k = k0; k < k1; ++k) acc -= opa(i, k) * *xb(k, c);
        if (!unit) acc /= opa(i, i);
        *xb(i, c) = acc;
      }
    }
    return;
  }
  // x · op(a) = b, row by row: x[j] = (b[j] - sum_k x[k] op(a)(k, j)) / op(a)(j, j), over k > j
  // when op(a) is lower (so j descends), k < j when upper (j ascends).
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t s = 0; s < cols; ++s) {
      const int64_t j = op_lower ? cols - 1 - s : s;
      const int64_t k0 = op_lower ? j + 1 : 0, k1 = op_lower ? cols : j;
      V acc = *xb(r, j);
      for (int64_t k = k0; k < k1; ++k) acc -= *xb(r, k) * opa(k, j);
      if (!unit) acc /= opa(j, j);
      *xb(r, j) = acc;
    }
  }
}

}  // namespace tessera::prims::linalg
