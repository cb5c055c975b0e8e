// Unblocked kernels for small matrices (every dimension <= kSmallMatrix), used by lu, cholesky and
// triangular_solve instead of a LAPACK/BLAS call per matrix. For a batch of many 8x8 or 16x16
// matrices the library call's fixed costs (argument checks, the column-major scratch copies of
// getrf, workspace queries) are larger than the arithmetic; these loops work on the row-major
// buffers in place, with no allocation, and their inner loops run along contiguous rows so the
// compiler vectorizes them.
//
// The algorithms are the textbook ones LAPACK's unblocked routines use (getf2's right-looking LU
// with partial pivoting — the first row of largest |value| wins, as i?amax —, potf2's Cholesky,
// trsm's substitution), so results agree with LAPACK's to rounding (not bitwise: the order of the
// sums differs). Only the matrix sizes choose between the two paths, never the thread count.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace tessera::prims::linalg {

// Every dimension of a matrix at most this takes the small path.
inline constexpr int64_t kSmallMatrix = 32;

// LU with partial pivoting of the row-major m x n matrix a (leading dimension n), in place: L's
// strict lower part (unit diagonal implied) and U packed; piv[j] (0-based) is the row swapped with
// row j at step j, for j < min(m, n). A zero pivot leaves its column unscaled (U is singular).
template <class T>
void lu_small(T* a, int64_t m, int64_t n, int32_t* piv) {
  const int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    T best = std::abs(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i) {
      const T v = std::abs(a[i * n + j]);
      if (v > best) best = v, p = i;
    }
    piv[j] = static_cast<int32_t>(p);
    if (p != j)
      for (int64_t c = 0; c < n; ++c) {
        const T t = a[j * n + c];
        a[j * n + c] = a[p * n + c];
        a[p * n + c] = t;
      }
    const T d = a[j * n + j];
    if (d == T(0)) continue;  // the column below is all zero: nothing to eliminate
    // As getf2: multiply by the pivot's reciprocal unless that would overflow.
    const bool recip = std::abs(d) >= std::numeric_limits<T>::min();
    const T r = T(1) / d;
    const T* rj = a + j * n;
    for (int64_t i = j + 1; i < m; ++i) {
      T* ri = a + i * n;
      const T l = recip ? ri[j] * r : ri[j] / d;
      ri[j] = l;
      for (int64_t c = j + 1; c < n; ++c) ri[c] -= l * rj[c];
    }
  }
}

// Cholesky of the row-major n x n matrix a, reading its lower triangle, into l (row-major lower,
// strict upper zero; l may alias a). False (and l all NaN) when a is not positive definite.
template <class T>
bool cholesky_small(const T* a, T* l, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    T* lj = l + j * n;
    const T* aj = a + j * n;
    for (int64_t c = 0; c <= j; ++c) {
      // l[j][c] = (a[j][c] - sum_{t<c} l[j][t] * l[c][t]) / l[c][c]
      const T* lc = l + c * n;
      T s = aj[c];
      for (int64_t t = 0; t < c; ++t) s -= lj[t] * lc[t];
      if (c < j) {
        lj[c] = s / lc[c];
      } else {
        if (!(s > T(0))) {  // not positive definite (or NaN)
          for (int64_t i = 0; i < n * n; ++i) l[i] = std::numeric_limits<T>::quiet_NaN();
          return false;
        }
        lj[j] = std::sqrt(s);
      }
    }
    for (int64_t c = j + 1; c < n; ++c) lj[c] = T(0);
  }
  return true;
}

// Solves op(a) · x = b (left) or x · op(a) = b (right) in place in b (row-major rows x cols,
// leading dimension cols), a row-major triangular m x m (m = rows when left, cols when right);
// op(a) = aᵀ when transpose. The triangle read is a's lower or upper one; unit_diagonal takes its
// diagonal as ones.
template <class T>
void trsm_small(bool left, bool lower, bool transpose, bool unit, int64_t rows, int64_t cols,
                const T* a, int64_t m, T* b) {
  // op(a)(i, k)
  auto at = [&](int64_t i, int64_t k) { return transpose ? a[k * m + i] : a[i * m + k]; };
  const bool op_lower = lower != transpose;  // is op(a) lower triangular?
  if (left) {
    // Rows of x by forward (op(a) lower) or backward substitution; each step updates a whole
    // contiguous row of b.
    for (int64_t s = 0; s < rows; ++s) {
      const int64_t i = op_lower ? s : rows - 1 - s;
      T* xi = b + i * cols;
      const int64_t k0 = op_lower ? 0 : i + 1, k1 = op_lower ? i : rows;
      for (int64_t k = k0; k < k1; ++k) {
        const T f = at(i, k);
        const T* xk = b + k * cols;
        for (int64_t c = 0; c < cols; ++c) xi[c] -= f * xk[c];
      }
      if (!unit) {
        const T d = at(i, i);
        for (int64_t c = 0; c < cols; ++c) xi[c] /= d;
      }
    }
    return;
  }
  // x · op(a) = b, one row of b at a time: x[j] = (b[j] - sum_k x[k] op(a)(k, j)) / op(a)(j, j),
  // over k > j when op(a) is lower (so j descends), k < j when upper (j ascends).
  for (int64_t r = 0; r < rows; ++r) {
    T* x = b + r * cols;
    for (int64_t s = 0; s < cols; ++s) {
      const int64_t j = op_lower ? cols - 1 - s : s;
      T v = x[j];
      const int64_t k0 = op_lower ? j + 1 : 0, k1 = op_lower ? cols : j;
      for (int64_t k = k0; k < k1; ++k) v -= x[k] * at(k, j);
      x[j] = unit ? v : v / at(j, j);
    }
  }
}

}  // namespace tessera::prims::linalg
