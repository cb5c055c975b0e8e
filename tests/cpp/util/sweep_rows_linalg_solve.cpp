// Sweep rows of the solve family of linear algebra (src/prims/linalg_triangular_solve.cpp,
// linalg_cholesky.cpp, linalg_lu.cpp). The sweep draws entries uniformly, so each row's fn first
// makes its operand well conditioned with Tessera ops (a diagonal shift, or a·aᵀ + n·I for
// Cholesky): the derivative checks then stay away from singular matrices and, for lu, from pivot
// ties (a column-diagonally-dominant matrix is never pivoted). Forward references are float64
// computations written here (substitution, Cholesky-Banachiewicz, Doolittle with partial
// pivoting), independent of LAPACK.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "tessera/linalg_solve.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using Shapes = std::vector<std::vector<Shape>>;

// x + shift·I over the last two axes (rectangular: the leading diagonal).
Array shifted(const Array& x, double shift) {
  const int64_t r = x.ndim();
  Array i = lax::broadcasted_iota(DType::kInt32, x.shape(), r - 2);
  Array j = lax::broadcasted_iota(DType::kInt32, x.shape(), r - 1);
  Array d = lax::convert_element_type(lax::eq(i, j), x.dtype());
  return lax::add(x, lax::mul(d, numpy::full(x.shape(), shift, x.dtype())));
}

// s·sᵀ + n·I.
Array spd(const Array& x) {
  const int64_t r = x.ndim();
  std::vector<int64_t> batch(static_cast<size_t>(r - 2));
  std::iota(batch.begin(), batch.end(), 0);
  Array g = lax::dot_general(x, x, lax::DotDimensionNumbers{{r - 1}, {r - 1}, batch, batch});
  return shifted(g, static_cast<double>(x.shape().back()));
}

int64_t count_of(const Shape& s) {
  int64_t n = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i) n *= s[i];
  return n;
}

// Doolittle LU with partial pivoting of one m×n matrix (in place); returns the permutation.
std::vector<int64_t> lu_ref(std::vector<double>& a, int64_t m, int64_t n) {
  std::vector<int64_t> perm(static_cast<size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t c = 0; c < std::min(m, n); ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[p * n + c])) p = r;
    if (p != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[p * n + j], a[c * n + j]);
      std::swap(perm[p], perm[c]);
    }
    if (a[c * n + c] == 0) continue;
    for (int64_t r = c + 1; r < m; ++r) {
      a[r * n + c] /= a[c * n + c];
      for (int64_t j = c + 1; j < n; ++j) a[r * n + j] -= a[r * n + c] * a[c * n + j];
    }
  }
  return perm;
}

Row tri_row(bool left, bool lower, bool trans, bool unit) {
  Row r;
  r.name = std::string("triangular_solve_") + (left ? "left" : "right") +
           (lower ? "_lower" : "_upper") + (trans ? "_t" : "") + (unit ? "_unit" : "");
  r.prim = "triangular_solve";
  r.family = "linalg_solve";
  r.fn = [=](const Args& x) {
    return lax::linalg::triangular_solve(shifted(x[0], 4.0), x[1], left, lower, trans, false, unit);
  };
  r.operands = {any(-1, 1), any()};
  if (left)
    r.shapes = {{{3, 3}, {3, 2}},
                {{2, 3, 3}, {2, 3, 1}},
                {{1, 1}, {1, 3}},
                {{0, 0}, {0, 2}},
                {{2, 2}, {2, 0}}};
  else
    r.shapes = {{{3, 3}, {2, 3}}, {{2, 3, 3}, {2, 1, 3}}, {{1, 1}, {3, 1}}, {{0, 0}, {2, 0}}};
  r.dtypes = {DType::kFloat32, DType::kFloat64};
  r.ref = [=](const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals) {
    const Shape& bs = avals[1].shape;
    const int64_t m = avals[0].shape.back();
    const int64_t rows = bs[bs.size() - 2], cols = bs.back();
    RefOut out{bs, avals[1].dtype, v[1]};
    for (int64_t b = 0; b < count_of(bs); ++b) {
      auto A = [&](int64_t i, int64_t j) {  // op(tri(a + 4 I))
        if (trans) std::swap(i, j);
        if (i == j) return unit ? 1.0 : v[0][b * m * m + i * m + j] + 4.0;
        return (lower ? j < i : j > i) ? v[0][b * m * m + i * m + j] : 0.0;
      };
      double* x = out.values.data() + b * rows * cols;
      // op(A) lower triangular exactly when lower != trans: forward substitution, else back.
      const bool fwd = lower != trans;
      if (left) {
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t s = 0; s < m; ++s) {
            const int64_t i = fwd ? s : m - 1 - s;
            double acc = x[i * cols + c];
            for (int64_t k = 0; k < m; ++k)
              if (fwd ? k < i : k > i) acc -= A(i, k) * x[k * cols + c];
            x[i * cols + c] = acc / A(i, i);
          }
      } else {  // x·op(A) = b: column j of x from the columns after (fwd) or before it
        for (int64_t rr = 0; rr < rows; ++rr)
          for (int64_t s = 0; s < m; ++s) {
            const int64_t j = fwd ? m - 1 - s : s;
            double acc = x[rr * m + j];
            for (int64_t k = 0; k < m; ++k)
              if (fwd ? k > j : k < j) acc -= x[rr * m + k] * A(k, j);
            x[rr * m + j] = acc / A(j, j);
          }
      }
    }
    return out;
  };
  r.ref_rtol = 1e-5;
  r.ref_atol = 1e-5;
  r.vmap_exact = false;
  r.vmap_ulps = 64;
  return r;
}

}  // namespace

std::vector<Row> rows_linalg_solve() {
  std::vector<Row> t;
  for (int flags = 0; flags < 16; flags += 1)
    if (flags == 0 || flags == 3 || flags == 5 || flags == 6 || flags == 9 || flags == 14)
      t.push_back(tri_row(flags & 1, flags & 2, flags & 4, flags & 8));
  {
    Row r;
    r.name = r.prim = "cholesky";
    r.family = "linalg_solve";
    r.fn = [](const Args& x) { return lax::linalg::cholesky(spd(x[0])); };
    r.operands = {any(-1, 1)};
    r.shapes = {{{3, 3}}, {{2, 4, 4}}, {{1, 1}}, {{0, 0}}, {{0, 2, 2}}};
    r.dtypes = {DType::kFloat32, DType::kFloat64};
    r.ref = [](const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals) {
      const Shape& s = avals[0].shape;
      const int64_t n = s.back();
      RefOut out{s, avals[0].dtype, std::vector<double>(v[0].size(), 0.0)};
      for (int64_t b = 0; b < count_of(s); ++b) {
        const double* x = v[0].data() + b * n * n;
        std::vector<double> a(static_cast<size_t>(n * n));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double acc = i == j ? static_cast<double>(n) : 0.0;
            for (int64_t k = 0; k < n; ++k) acc += x[i * n + k] * x[j * n + k];
            a[i * n + j] = acc;
          }
        double* l = out.values.data() + b * n * n;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j <= i; ++j) {
            double acc = a[i * n + j];
            for (int64_t k = 0; k < j; ++k) acc -= l[i * n + k] * l[j * n + k];
            l[i * n + j] = i == j ? std::sqrt(acc) : acc / l[j * n + j];
          }
      }
      return out;
    };
    r.ref_rtol = 1e-5;
    r.ref_atol = 1e-5;
    r.vmap_exact = false;
    r.vmap_ulps = 64;
    t.push_back(std::move(r));
  }
  for (int out_index : {0, 2}) {
    Row r;
    r.name = out_index == 0 ? "lu_factors" : "lu_permutation";
    r.prim = "lu";
    r.family = "linalg_solve";
    // Factors: column-diagonally dominant (never pivoted: smooth). Permutation: raw entries.
    const double shift = out_index == 0 ? 5.0 : 0.0;
    r.fn = [=](const Args& x) {
      auto f = lax::linalg::lu(shift != 0 ? shifted(x[0], shift) : x[0]);
      return out_index == 0 ? std::get<0>(f) : std::get<2>(f);
    };
    r.operands = {any(-1, 1)};
    // 1x1 (and 1xn) factors are linear in a: their exact-zero second derivative is a sum of
    // cancelling roundoff that the relative adjoint check cannot scale, so the smallest
    // nonlinear case (2x1) stands in for them here (test_linalg_solve.cpp covers 1x1).
    r.shapes = {{{3, 3}}, {{4, 3}}, {{2, 4}}, {{2, 3, 3}}, {{2, 1}}, {{0, 0}}, {{0, 3}}};
    r.dtypes = {DType::kFloat32, DType::kFloat64};
    r.ref = [=](const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals) {
      const Shape& s = avals[0].shape;
      const int64_t m = s[s.size() - 2], n = s.back();
      Shape ps(s.begin(), s.end() - 1);
      RefOut out{out_index == 0 ? s : ps, out_index == 0 ? avals[0].dtype : DType::kInt32, {}};
      for (int64_t b = 0; b < count_of(s); ++b) {
        std::vector<double> a(v[0].begin() + b * m * n, v[0].begin() + (b + 1) * m * n);
        for (int64_t i = 0; i < std::min(m, n); ++i) a[i * n + i] += shift;
        const auto perm = lu_ref(a, m, n);
        if (out_index == 0)
          out.values.insert(out.values.end(), a.begin(), a.end());
        else
          for (int64_t p : perm) out.values.push_back(static_cast<double>(p));
      }
      return out;
    };
    r.ref_rtol = 1e-5;
    r.ref_atol = 1e-5;
    r.vmap_exact = false;
    r.vmap_ulps = 64;
    if (out_index == 2) r.deriv = Deriv::kZeroTangent;
    t.push_back(std::move(r));
  }
  {
    Row r;
    r.name = r.prim = "lu_pivots_to_permutation";
    r.family = "linalg_solve";
    r.fn = [](const Args& x) { return lax::linalg::lu_pivots_to_permutation(x[0], 5); };
    r.operands = {index(5)};
    r.shapes = {{{3}}, {{2, 5}}, {{0}}, {{4, 0}}};
    r.dtypes = {};
    r.ref = [](const std::vector<std::vector<double>>& v, const std::vector<Aval>& avals) {
      Shape s = avals[0].shape;
      const int64_t k = s.back();
      s.back() = 5;
      RefOut out{s, DType::kInt32, {}};
      const int64_t rows =
          k == 0 ? (s.size() > 1 ? s[0] : 1) : static_cast<int64_t>(v[0].size()) / k;
      for (int64_t b = 0; b < rows; ++b) {
        std::vector<double> p = {0, 1, 2, 3, 4};
        for (int64_t i = 0; i < k; ++i) std::swap(p[i], p[static_cast<int64_t>(v[0][b * k + i])]);
        out.values.insert(out.values.end(), p.begin(), p.end());
      }
      return out;
    };
    r.deriv = Deriv::kZeroTangent;
    t.push_back(std::move(r));
  }
  return t;
}

}  // namespace tessera::sweep
