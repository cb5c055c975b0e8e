// The solve family of dense linear algebra (tessera/linalg_solve.h) on fresh random inputs:
// triangular_solve, cholesky and lu against float64 identities computed here (op(a)·x = b,
// L·Lᵀ = A, P·A = L·U), the composites against naive float64 references (Gaussian elimination
// written in this file); gradients against float64 central differences; vmap against a loop
// over the batch; jit against eager; JAX's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <sstream>
#include <vector>

#include "tessera/linalg_solve.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;
namespace tl = lax::linalg;

// A random [batch..., n, n] matrix whose triangle `lower` is well conditioned (diagonal of
// magnitude in [2, 3], random sign), the other triangle random.
Array random_triangular(const Shape& batch, int64_t n, DType dt) {
  Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  std::vector<double> v = to_doubles(random_array(s, DType::kFloat64, -0.5, 0.5));
  std::uniform_real_distribution<double> u(2.0, 3.0);
  const int64_t count = static_cast<int64_t>(v.size()) / std::max<int64_t>(1, n * n);
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < n; ++i)
      v[b * n * n + i * n + i] = u(testing::rng()) * ((i % 2) ? -1.0 : 1.0);
  return lax::convert_element_type(numpy::array(v, s), dt);
}

// op(tri(a)) · x (left) or x · op(tri(a)) (right) for one matrix, in float64.
std::vector<double> apply_tri(const std::vector<double>& a, const std::vector<double>& x, int64_t m,
                              int64_t rows, int64_t cols, bool left, bool lower, bool trans,
                              bool unit) {
  auto A = [&](int64_t i, int64_t j) {
    if (trans) std::swap(i, j);
    if (i == j) return unit ? 1.0 : a[i * m + j];
    const bool in = lower ? j < i : j > i;
    return in ? a[i * m + j] : 0.0;
  };
  std::vector<double> out(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < m; ++k)
        s += left ? A(i, k) * x[k * cols + j] : x[i * m + k] * A(k, j);
      out[i * cols + j] = s;
    }
  return out;
}

TEST(TriangularSolve, SolvesEveryVariant) {
  testing::Threads threads(2);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    testing::X64Scope x64(dt == DType::kFloat64);
    const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-11;
    // 32/33: both sides of linalg_small.h's threshold (own loops vs cblas_?trsm).
    for (int64_t m : {1, 3, 17, 32, 33}) {
      for (int64_t n : {1, 4}) {
        for (int flags = 0; flags < 16; ++flags) {
          const bool left = flags & 1, lower = flags & 2, trans = flags & 4, unit = flags & 8;
          const Shape batch{2, 3};
          Array a = random_triangular(batch, m, dt);
          const int64_t rows = left ? m : n, cols = left ? n : m;
          Array b = random_array({2, 3, rows, cols}, dt);
          Array x = tl::triangular_solve(a, b, left, lower, trans, false, unit);
          ASSERT_EQ(x.shape(), b.shape());
          ASSERT_EQ(x.dtype(), dt);
          const auto av = to_doubles(a), xv = to_doubles(x), bv = to_doubles(b);
          for (int64_t i = 0; i < 6; ++i) {
            std::vector<double> ai(av.begin() + i * m * m, av.begin() + (i + 1) * m * m);
            std::vector<double> xi(xv.begin() + i * rows * cols,
                                   xv.begin() + (i + 1) * rows * cols);
            std::vector<double> bi(bv.begin() + i * rows * cols,
                                   bv.begin() + (i + 1) * rows * cols);
            const auto got = apply_tri(ai, xi, m, rows, cols, left, lower, trans, unit);
            ASSERT_EQ(testing::compare(got, bi, tol, tol), "")
                << "m " << m << " n " << n << " flags " << flags << " batch " << i;
          }
        }
      }
    }
  }
}

TEST(TriangularSolve, VectorRhsEmptyAndSingular) {
  Array a = random_triangular({}, 4, DType::kFloat32);
  Array b = random_array({4}, DType::kFloat32);
  Array x = tl::triangular_solve(a, b, /*left_side=*/true, /*lower=*/true);
  ASSERT_EQ(x.shape(), (Shape{4}));
  Array x2 = tl::triangular_solve(a, lax::reshape(b, {4, 1}), true, true);
  EXPECT_EQ(to_doubles(x), to_doubles(x2));
  Array xr = tl::triangular_solve(a, b, /*left_side=*/false, /*lower=*/true);
  EXPECT_EQ(to_doubles(xr),
            to_doubles(tl::triangular_solve(a, lax::reshape(b, {1, 4}), false, true)));
  // Empty matrices and batches.
  EXPECT_EQ(tl::triangular_solve(random_array({0, 0}, DType::kFloat32),
                                 random_array({0, 3}, DType::kFloat32), true)
                .shape(),
            (Shape{0, 3}));
  EXPECT_EQ(tl::triangular_solve(random_array({0, 2, 2}, DType::kFloat64),
                                 random_array({0, 5, 2}, DType::kFloat64))
                .shape(),
            (Shape{0, 5, 2}));
  EXPECT_EQ(tl::triangular_solve(random_array({3, 3}, DType::kFloat64),
                                 random_array({3, 0}, DType::kFloat64), true)
                .shape(),
            (Shape{3, 0}));
  // A zero pivot gives non-finite values, not an error (as JAX).
  Array z = numpy::array(std::vector<double>{1, 0, 5, 0}, {2, 2});
  const auto xs = to_doubles(
      tl::triangular_solve(z, numpy::array(std::vector<double>{1, 1}, {2, 1}), true, true));
  EXPECT_FALSE(std::isfinite(xs[1]));
}

TEST(TriangularSolve, Errors) {
  Array a = random_array({3, 3}, DType::kFloat32);
  EXPECT_ERROR(TypeError, tl::triangular_solve(random_array({3, 4}, DType::kFloat32), a, true),
               "last two dimensions of a to be equal");
  EXPECT_ERROR(TypeError, tl::triangular_solve(a, random_array({2, 3, 3}, DType::kFloat32), true),
               "equal batch dimensions");
  EXPECT_ERROR(TypeError, tl::triangular_solve(a, random_array({4, 2}, DType::kFloat32), true),
               "Incompatible shapes for arguments to triangular_solve");
  EXPECT_ERROR(TypeError, tl::triangular_solve(a, random_array({3, 3}, DType::kInt32), true),
               "float32 or float64");
  EXPECT_ERROR(
      TypeError,
      tl::triangular_solve(random_array({3}, DType::kFloat32), random_array({3}, DType::kFloat32)),
      "at least 2");
}

// Central differences of scalar f at x (float64), compared with g.
void expect_grad_fd(const std::function<Array(const Array&)>& f, const Array& x, const Array& g,
                    double tol, const std::string& what) {
  const auto xs = to_doubles(x);
  const auto gs = to_doubles(g);
  ASSERT_EQ(xs.size(), gs.size()) << what;
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> p = xs, m = xs;
    p[i] += h;
    m[i] -= h;
    const double fd = (to_doubles(f(numpy::array(p, x.shape())))[0] -
                       to_doubles(f(numpy::array(m, x.shape())))[0]) /
                      (2 * h);
    EXPECT_NEAR(gs[i], fd, tol * (1 + std::abs(fd))) << what << " element " << i;
  }
}

TEST(TriangularSolve, GradientsMatchFiniteDifferences) {
  testing::X64Scope x64;
  for (int flags = 0; flags < 16; ++flags) {
    const bool left = flags & 1, lower = flags & 2, trans = flags & 4, unit = flags & 8;
    for (auto [m, n] : {std::pair<int64_t, int64_t>{3, 2}, {2, 4}}) {
      Array a = random_triangular({2}, m, DType::kFloat64);
      const int64_t rows = left ? m : n, cols = left ? n : m;
      Array b = random_array({2, rows, cols}, DType::kFloat64);
      Array w = random_array({2, rows, cols}, DType::kFloat64);
      auto fa = [&](const Array& aa) {
        return numpy::sum(
            lax::mul(tl::triangular_solve(aa, b, left, lower, trans, false, unit), w));
      };
      auto fb = [&](const Array& bb) {
        return numpy::sum(
            lax::mul(tl::triangular_solve(a, bb, left, lower, trans, false, unit), w));
      };
      const std::string what = "flags " + std::to_string(flags) + " m " + std::to_string(m);
      expect_grad_fd(fa, a, grad(fa)(a), 1e-6, what + " d/da");
      expect_grad_fd(fb, b, grad(fb)(b), 1e-6, what + " d/db");
      // Forward mode agrees with reverse mode: <jvp(t), 1> = <grad, t>.
      Array t = random_array(a.shape(), DType::kFloat64);
      auto [y, yt] =
          jvp([&](const Array& aa) { return fa(aa); }, std::make_tuple(a), std::make_tuple(t));
      EXPECT_NEAR(to_doubles(yt)[0], to_doubles(numpy::sum(lax::mul(grad(fa)(a), t)))[0], 1e-9)
          << what;
    }
  }
}

TEST(TriangularSolve, VmapAndJit) {
  for (int flags = 0; flags < 4; ++flags) {
    const bool left = flags & 1, lower = flags & 2;
    Array a = random_triangular({5}, 3, DType::kFloat32);
    const int64_t rows = left ? 3 : 2, cols = left ? 2 : 3;
    Array b = random_array({rows, 5, cols}, DType::kFloat32);  // batch axis 1
    auto f = [&](const Array& aa, const Array& bb) {
      return tl::triangular_solve(aa, bb, left, lower, true);
    };
    // Both batched.
    std::vector<Array> loop;
    for (int64_t i = 0; i < 5; ++i)
      loop.push_back(f(lax::index_in_dim(a, i, 0, false), lax::index_in_dim(b, i, 1, false)));
    EXPECT_EQ(testing::compare(to_doubles(vmap(f, {0, 1})(a, b)), to_doubles(numpy::stack(loop)),
                               1e-6, 1e-6),
              "");
    // Only b batched (folded into the free dim), only a batched (b broadcast).
    Array a0 = lax::index_in_dim(a, 0, 0, false);
    Array b0 = lax::index_in_dim(b, 0, 1, false);
    std::vector<Array> lb, la;
    for (int64_t i = 0; i < 5; ++i) {
      lb.push_back(f(a0, lax::index_in_dim(b, i, 1, false)));
      la.push_back(f(lax::index_in_dim(a, i, 0, false), b0));
    }
    auto fb = [&](const Array& bb) { return f(a0, bb); };
    auto fa = [&](const Array& aa) { return f(aa, b0); };
    EXPECT_EQ(
        testing::compare(to_doubles(vmap(fb, {1})(b)), to_doubles(numpy::stack(lb)), 1e-6, 1e-6),
        "");
    EXPECT_EQ(
        testing::compare(to_doubles(vmap(fa, {0})(a)), to_doubles(numpy::stack(la)), 1e-6, 1e-6),
        "");
    EXPECT_EQ(to_doubles(jit(f)(a0, b0)), to_doubles(f(a0, b0)));
  }
}

// ---------------------------------------------------------------- helpers for the rest

// A random [batch..., n, n] symmetric positive-definite matrix (M·Mᵀ + n·I).
Array random_spd(const Shape& batch, int64_t n, DType dt) {
  Shape s = batch;
  s.resize(batch.size() + 2, n);  // (two push_backs trip GCC 12's -Warray-bounds)
  const auto m = to_doubles(random_array(s, DType::kFloat64, -1, 1));
  std::vector<double> out(m.size());
  const int64_t count = n == 0 ? 0 : static_cast<int64_t>(m.size()) / (n * n);
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = i == j ? static_cast<double>(n) : 0.0;
        for (int64_t k = 0; k < n; ++k) acc += m[b * n * n + i * n + k] * m[b * n * n + j * n + k];
        out[b * n * n + i * n + j] = acc;
      }
  return lax::convert_element_type(numpy::array(out, s), dt);
}

// A random well-conditioned [batch..., n, n] matrix (random plus 3·I).
Array random_wellcond(const Shape& batch, int64_t n, DType dt) {
  Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  auto v = to_doubles(random_array(s, DType::kFloat64, -1, 1));
  const int64_t count = n == 0 ? 0 : static_cast<int64_t>(v.size()) / (n * n);
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < n; ++i) v[b * n * n + i * n + i] += (i % 2 ? -3.0 : 3.0);
  return lax::convert_element_type(numpy::array(v, s), dt);
}

std::vector<double> matmul_d(const std::vector<double>& a, const std::vector<double>& b, int64_t m,
                             int64_t k, int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

std::vector<double> slice_mat(const std::vector<double>& v, int64_t i, int64_t size) {
  return std::vector<double>(v.begin() + i * size, v.begin() + (i + 1) * size);
}

// Naive float64 Gaussian elimination with partial pivoting: det and solve (reference).
double naive_det(std::vector<double> a, int64_t n) {
  double d = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[p * n + c])) p = r;
    if (a[p * n + c] == 0) return 0;
    if (p != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[p * n + j], a[c * n + j]);
      d = -d;
    }
    d *= a[c * n + c];
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (int64_t j = c; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  return d;
}

TEST(Cholesky, ReconstructsAndNaNsForNonPD) {
  testing::Threads threads(2);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    testing::X64Scope x64(dt == DType::kFloat64);
    const double tol = dt == DType::kFloat32 ? 2e-4 : 1e-11;
    for (int64_t n : {0, 1, 2, 5, 32, 33, 40}) {  // 32/33: own loop vs ?potrf
      Array a = random_spd({3}, n, dt);
      Array l = tl::cholesky(a);
      ASSERT_EQ(l.shape(), a.shape());
      ASSERT_EQ(l.dtype(), dt);
      const auto lv = to_doubles(l), av = to_doubles(a);
      for (int64_t b = 0; b < 3; ++b) {
        auto lb = slice_mat(lv, b, n * n);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = i + 1; j < n; ++j) ASSERT_EQ(lb[i * n + j], 0.0);
        std::vector<double> lt(lb.size());
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) lt[j * n + i] = lb[i * n + j];
        EXPECT_EQ(
            testing::compare(matmul_d(lb, lt, n, n, n), slice_mat(av, b, n * n), tol, tol * n), "")
            << "n " << n;
      }
    }
  }
  // symmetrize_input=false reads only the lower triangle.
  {
    Array a = random_spd({}, 4, DType::kFloat32);
    Array junk = lax::add(a, numpy::triu(random_array({4, 4}, DType::kFloat32), 1));
    EXPECT_EQ(to_doubles(tl::cholesky(junk, false)), to_doubles(tl::cholesky(a, false)));
    EXPECT_EQ(to_doubles(linalg::cholesky(junk, false, false)), to_doubles(tl::cholesky(a)));
  }
  // Not positive definite: that matrix all NaN, the others fine.
  Array good = random_spd({}, 3, DType::kFloat32);
  Array bad = numpy::array(std::vector<double>{1, 2, 0, 2, 1, 0, 0, 0, 1}, {3, 3});
  Array l = tl::cholesky(numpy::stack({good, bad}));
  const auto lv = to_doubles(l);
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(std::isnan(lv[i]));
  for (int i = 9; i < 18; ++i) EXPECT_TRUE(std::isnan(lv[i]));
  EXPECT_ERROR(ValueError, tl::cholesky(random_array({3, 4}, DType::kFloat32)),
               "must have shape [..., n, n]");
  EXPECT_ERROR(TypeError, tl::cholesky(random_array({3, 3}, DType::kInt32)), "float32 or float64");
}

// Many small matrices run on the pool, one LAPACK/BLAS call per matrix: the results do not
// depend on the thread count (bit for bit).
TEST(LinalgSolve, ResultsIndependentOfThreadCount) {
  Array a = random_spd({64}, 5, DType::kFloat32);
  Array b = random_array({64, 5, 3}, DType::kFloat32);
  auto run = [&] {
    std::vector<double> out = to_doubles(tl::cholesky(a));
    auto lu = to_doubles(std::get<0>(tl::lu(a)));
    auto x = to_doubles(tl::triangular_solve(a, b, true, true));
    out.insert(out.end(), lu.begin(), lu.end());
    out.insert(out.end(), x.begin(), x.end());
    return out;
  };
  std::vector<double> one, four;
  {
    testing::Threads t(1);
    one = run();
  }
  {
    testing::Threads t(4);
    four = run();
  }
  EXPECT_EQ(one, four);
}

// The small-matrix kernels factor groups of 8 (float32) or 4 (float64) interleaved matrices at
// once: a matrix's results must not depend on its group, its lane or the group's other matrices
// (a singular or non-positive-definite neighbour included), bit for bit, full groups and the
// short last one alike.
TEST(LinalgSolve, SmallKernelsIndependentOfLane) {
  testing::Threads threads(2);
  // values with every NaN the same (NaN != NaN would fail equal vectors)
  auto nan_same = [](const Array& x) {
    auto v = to_doubles(x);
    for (double& e : v)
      if (std::isnan(e)) e = std::numeric_limits<double>::max();
    return v;
  };
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    testing::X64Scope x64(dt == DType::kFloat64);
    for (int64_t n : {1, 3, 7, 16, 32}) {
      const int64_t batch = 19;
      Array spd = random_spd({batch}, n, dt);
      // matrix 9 not positive definite, matrix 4 singular (a zero column)
      std::vector<double> mask(static_cast<size_t>(batch * n * n), 1.0);
      for (int64_t i = 0; i < n; ++i) mask[4 * n * n + i * n] = 0.0;
      Array gen = lax::mul(random_array({batch, n, n}, dt),
                           lax::convert_element_type(numpy::array(mask, {batch, n, n}), dt));
      std::vector<double> flip(static_cast<size_t>(batch * n * n), 1.0);
      for (int64_t i = 0; i < n * n; ++i) flip[9 * n * n + i] = -1.0;
      spd = lax::mul(spd, lax::convert_element_type(numpy::array(flip, {batch, n, n}), dt));
      Array rhs = random_array({batch, n, 2}, dt);
      const Array chol = tl::cholesky(spd, false);
      auto [lu, piv, perm] = tl::lu(gen);
      const Array ts = tl::triangular_solve(gen, rhs, true, false, true, false, false);
      const Array tsr = tl::triangular_solve(gen, lax::transpose(rhs, {0, 2, 1}), false, true,
                                             false, false, true);
      for (int64_t b : {int64_t{0}, int64_t{4}, int64_t{7}, int64_t{9}, int64_t{18}}) {
        auto one = [&](const Array& x) {
          return lax::slice(x, {b, 0, 0}, {b + 1, x.shape()[1], x.shape()[2]});
        };
        auto row = [&](const Array& x) { return lax::slice(x, {b, 0}, {b + 1, x.shape()[1]}); };
        EXPECT_EQ(nan_same(tl::cholesky(one(spd), false)), nan_same(one(chol))) << n << " " << b;
        auto [lu1, piv1, perm1] = tl::lu(one(gen));
        EXPECT_EQ(nan_same(lu1), nan_same(one(lu))) << n << " " << b;
        EXPECT_EQ(nan_same(piv1), nan_same(row(piv))) << n << " " << b;
        EXPECT_EQ(nan_same(perm1), nan_same(row(perm))) << n << " " << b;
        EXPECT_EQ(
            nan_same(tl::triangular_solve(one(gen), one(rhs), true, false, true, false, false)),
            nan_same(one(ts)))
            << n << " " << b;
        EXPECT_EQ(nan_same(tl::triangular_solve(one(gen), lax::transpose(one(rhs), {0, 2, 1}),
                                                false, true, false, false, true)),
                  nan_same(one(tsr)))
            << n << " " << b;
      }
      // the non-positive-definite matrix (n > 0: -SPD) is all NaN, its neighbours are not
      const auto cv = to_doubles(chol);
      if (n > 0) {
        EXPECT_TRUE(std::isnan(cv[9 * n * n]));
        EXPECT_FALSE(std::isnan(cv[8 * n * n]));
        EXPECT_FALSE(std::isnan(cv[10 * n * n]));
      }
    }
  }
}

TEST(Cholesky, GradientVmapJit) {
  testing::X64Scope x64;
  Array a = random_spd({}, 4, DType::kFloat64);
  Array w = random_array({4, 4}, DType::kFloat64);
  auto f = [&](const Array& x) { return numpy::sum(lax::mul(tl::cholesky(x), w)); };
  expect_grad_fd(f, a, grad(f)(a), 1e-6, "cholesky");
  Array ab = random_spd({5}, 3, DType::kFloat64);
  std::vector<Array> loop;
  for (int64_t i = 0; i < 5; ++i) loop.push_back(tl::cholesky(lax::index_in_dim(ab, i, 0, false)));
  auto chol = [](const Array& x) { return tl::cholesky(x); };
  EXPECT_EQ(testing::compare(to_doubles(vmap(chol, {0})(ab)), to_doubles(numpy::stack(loop)), 1e-12,
                             1e-12),
            "");
  EXPECT_EQ(testing::compare(to_doubles(jit(chol)(ab)), to_doubles(chol(ab)), 1e-12, 1e-12), "");
}

TEST(Lu, FactorsRectangularAndSingular) {
  testing::Threads threads(2);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    testing::X64Scope x64(dt == DType::kFloat64);
    const double tol = dt == DType::kFloat32 ? 1e-5 : 1e-13;
    for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1},
                        {4, 4},
                        {5, 3},
                        {3, 6},
                        {0, 2},
                        {2, 0},
                        {30, 30},
                        {32, 32},
                        {33, 33},
                        {40, 20},
                        {20, 40},
                        {33, 5}}) {  // 32 vs 33: own loop vs ?getrf
      Array a = random_array({2, m, n}, dt);
      if (m == 4)
        a = lax::mul(a, lax::convert_element_type(  // a zero column: singular
                            numpy::array(std::vector<double>{1, 0, 1, 1}, {1, 1, 4}), dt));
      auto [lu, piv, perm] = tl::lu(a);
      const int64_t k = std::min(m, n);
      ASSERT_EQ(lu.shape(), a.shape());
      ASSERT_EQ(piv.shape(), (Shape{2, k}));
      ASSERT_EQ(perm.shape(), (Shape{2, m}));
      ASSERT_EQ(piv.dtype(), DType::kInt32);
      const auto luv = to_doubles(lu), av = to_doubles(a), pv = to_doubles(perm),
                 pivv = to_doubles(piv);
      for (int64_t b = 0; b < 2; ++b) {
        std::vector<double> L(static_cast<size_t>(m * k), 0.0), U(static_cast<size_t>(k * n), 0.0);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j)
            L[i * k + j] = i == j ? 1.0 : (j < i ? luv[b * m * n + i * n + j] : 0.0);
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = i; j < n; ++j) U[i * n + j] = luv[b * m * n + i * n + j];
        const auto prod = matmul_d(L, U, m, k, n);
        std::vector<double> pa(static_cast<size_t>(m * n));
        // The permutation from the pivots, independently.
        std::vector<int64_t> p(static_cast<size_t>(m));
        std::iota(p.begin(), p.end(), 0);
        for (int64_t i = 0; i < k; ++i) std::swap(p[i], p[static_cast<int64_t>(pivv[b * k + i])]);
        for (int64_t i = 0; i < m; ++i) {
          ASSERT_EQ(pv[b * m + i], static_cast<double>(p[i]));
          for (int64_t j = 0; j < n; ++j) pa[i * n + j] = av[b * m * n + p[i] * n + j];
        }
        EXPECT_EQ(testing::compare(prod, pa, tol, tol * 4), "") << m << "x" << n;
        for (int64_t i = 0; i < m; ++i)  // partial pivoting: |L| <= 1
          for (int64_t j = 0; j < std::min(i, k); ++j)
            EXPECT_LE(std::abs(L[i * k + j]), 1.0 + 1e-6);
      }
    }
  }
  EXPECT_ERROR(ValueError, tl::lu(random_array({3}, DType::kFloat32)), "ndims >= 2");
  Array piv = numpy::array(std::vector<double>{2, 2, 2}, {3});
  EXPECT_EQ(
      to_doubles(tl::lu_pivots_to_permutation(lax::convert_element_type(piv, DType::kInt32), 4)),
      (std::vector<double>{2, 0, 1, 3}));
  EXPECT_ERROR(ValueError,
               tl::lu_pivots_to_permutation(lax::convert_element_type(piv, DType::kInt32), 2),
               "permutation size");
}

TEST(Lu, GradientVmapJit) {
  testing::X64Scope x64;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{3, 3}, {4, 2}, {2, 4}}) {
    Array a = random_array({m, n}, DType::kFloat64);
    Array w = random_array({m, n}, DType::kFloat64);
    auto f = [&](const Array& x) { return numpy::sum(lax::mul(std::get<0>(tl::lu(x)), w)); };
    expect_grad_fd(f, a, grad(f)(a), 1e-5, "lu " + std::to_string(m) + "x" + std::to_string(n));
  }
  Array ab = random_array({3, 4, 3}, DType::kFloat64);
  auto g = [](const Array& x) { return std::get<0>(tl::lu(x)); };
  auto gp = [](const Array& x) { return std::get<2>(tl::lu(x)); };
  std::vector<Array> loop, loopp;
  for (int64_t i = 0; i < 4; ++i) {
    loop.push_back(g(lax::index_in_dim(ab, i, 1, false)));
    loopp.push_back(gp(lax::index_in_dim(ab, i, 1, false)));
  }
  EXPECT_EQ(to_doubles(vmap(g, {1})(ab)), to_doubles(numpy::stack(loop)));
  EXPECT_EQ(to_doubles(vmap(gp, {1})(ab)), to_doubles(numpy::stack(loopp)));
  Array a0 = lax::index_in_dim(ab, 0, 1, false);
  EXPECT_EQ(to_doubles(jit(g)(a0)), to_doubles(g(a0)));
}

TEST(LinalgSolve, SolveInvDetSlogdet) {
  testing::Threads threads(2);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    testing::X64Scope x64(dt == DType::kFloat64);
    const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-10;
    for (int64_t n : {1, 3, 8}) {
      Array a = random_wellcond({2}, n, dt);
      Array b = random_array({2, n, 2}, dt);
      Array x = linalg::solve(a, b);
      ASSERT_EQ(x.shape(), b.shape());
      const auto av = to_doubles(a), xv = to_doubles(x), bv = to_doubles(b);
      for (int64_t i = 0; i < 2; ++i)
        EXPECT_EQ(
            testing::compare(matmul_d(slice_mat(av, i, n * n), slice_mat(xv, i, n * 2), n, n, 2),
                             slice_mat(bv, i, n * 2), tol, tol),
            "");
      // Vector b broadcast over a's batch.
      Array bvec = random_array({n}, dt);
      Array xvec = linalg::solve(a, bvec);
      ASSERT_EQ(xvec.shape(), (Shape{2, n}));
      // inv: a · inv(a) = I.
      const auto iv = to_doubles(linalg::inv(a));
      for (int64_t i = 0; i < 2; ++i) {
        auto prod = matmul_d(slice_mat(av, i, n * n), slice_mat(iv, i, n * n), n, n, n);
        for (int64_t r = 0; r < n; ++r)
          for (int64_t c = 0; c < n; ++c)
            EXPECT_NEAR(prod[r * n + c], r == c ? 1.0 : 0.0, tol * 10);
      }
      // det and slogdet against naive elimination.
      const auto dv = to_doubles(linalg::det(a));
      auto [sign, logdet] = linalg::slogdet(a);
      const auto sv = to_doubles(sign), lv = to_doubles(logdet);
      for (int64_t i = 0; i < 2; ++i) {
        const double want = naive_det(slice_mat(av, i, n * n), n);
        EXPECT_NEAR(dv[i], want, tol * 10 * std::abs(want));
        EXPECT_EQ(sv[i], want > 0 ? 1.0 : -1.0);
        EXPECT_NEAR(lv[i], std::log(std::abs(want)), tol * 10);
      }
    }
  }
  // Singular: det 0, slogdet (0, -inf).
  Array s = numpy::array(std::vector<double>{1, 2, 2, 4}, {2, 2});
  EXPECT_EQ(to_doubles(linalg::det(s))[0], 0.0);
  auto [sg, ld] = linalg::slogdet(s);
  EXPECT_EQ(to_doubles(sg)[0], 0.0);
  EXPECT_EQ(to_doubles(ld)[0], -INFINITY);
  // Integers promote; empty.
  Array ai = lax::convert_element_type(numpy::array(std::vector<double>{2, 1, 1, 3}, {2, 2}),
                                       DType::kInt32);
  EXPECT_EQ(linalg::det(ai).dtype(), DType::kFloat32);
  EXPECT_NEAR(to_doubles(linalg::det(ai))[0], 5.0, 1e-5);
  EXPECT_EQ(to_doubles(linalg::det(random_array({0, 0}, DType::kFloat32)))[0], 1.0);
  EXPECT_EQ(linalg::inv(random_array({3, 0, 0}, DType::kFloat32)).shape(), (Shape{3, 0, 0}));
  EXPECT_ERROR(ValueError, linalg::inv(random_array({2, 3}, DType::kFloat32)),
               "must have shape [..., n, n]");
  EXPECT_ERROR(
      ValueError,
      linalg::solve(random_array({3}, DType::kFloat32), random_array({3}, DType::kFloat32)),
      "at least two dimensional");
  EXPECT_ERROR(
      ValueError,
      linalg::solve(random_array({3, 3}, DType::kFloat32), random_array({4}, DType::kFloat32)),
      "The arguments to solve must have shapes");
}

TEST(LinalgSolve, Gradients) {
  testing::X64Scope x64;
  const int64_t n = 3;
  Array a = random_wellcond({}, n, DType::kFloat64);
  Array b = random_array({n, 2}, DType::kFloat64);
  Array w = random_array({n, 2}, DType::kFloat64);
  auto fa = [&](const Array& x) { return numpy::sum(lax::mul(linalg::solve(x, b), w)); };
  auto fb = [&](const Array& y) { return numpy::sum(lax::mul(linalg::solve(a, y), w)); };
  expect_grad_fd(fa, a, grad(fa)(a), 1e-6, "solve d/da");
  expect_grad_fd(fb, b, grad(fb)(b), 1e-6, "solve d/db");
  Array wi = random_array({n, n}, DType::kFloat64);
  auto finv = [&](const Array& x) { return numpy::sum(lax::mul(linalg::inv(x), wi)); };
  expect_grad_fd(finv, a, grad(finv)(a), 1e-6, "inv");
  auto fdet = [](const Array& x) { return linalg::det(x); };
  expect_grad_fd(fdet, a, grad(fdet)(a), 1e-6, "det");
  auto fld = [](const Array& x) { return linalg::slogdet(x).second; };
  expect_grad_fd(fld, a, grad(fld)(a), 1e-6, "slogdet");
  // det of a singular matrix of rank n-1: the gradient is the adjugate's transpose (cofactors).
  Array s = numpy::array(std::vector<double>{1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3});
  const auto g = to_doubles(grad(fdet)(s));
  const auto sv = to_doubles(s);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      std::vector<double> minor;
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < 3; ++c)
          if (r != i && c != j) minor.push_back(sv[r * 3 + c]);
      const double cof = ((i + j) % 2 ? -1.0 : 1.0) * naive_det(minor, 2);
      EXPECT_NEAR(g[i * 3 + j], cof, 1e-9) << i << "," << j;
    }
  // Forward mode of solve agrees with reverse mode.
  Array t = random_array({n, n}, DType::kFloat64);
  auto [y, yt] = jvp(fa, std::make_tuple(a), std::make_tuple(t));
  EXPECT_NEAR(to_doubles(yt)[0], to_doubles(numpy::sum(lax::mul(grad(fa)(a), t)))[0], 1e-9);
}

// The gradient of solve reuses the forward factorization: one lu in the whole program, and the
// backward pass is two triangular solves with the transposed factors (JAX's
// custom_linear_solve), never a derivative of the LU kernel.
TEST(LinalgSolve, GradientCostsOneExtraSolve) {
  Array a = random_wellcond({}, 4, DType::kFloat32);
  Array b = random_array({4, 2}, DType::kFloat32);
  auto f = [&](const Array& x) { return numpy::sum(linalg::solve(x, b)); };
  std::ostringstream os;
  os << make_jaxpr(grad(f))(a);
  const std::string text = os.str();
  auto count = [&](const std::string& needle) {
    int64_t c = 0;
    for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
      ++c;
    return c;
  };
  // One factorization; two custom_linear_solve equations (the primal solve and its transpose),
  // each running one solve jaxpr of two triangular solves (solve and transpose_solve jaxprs are
  // printed in both, hence 8 occurrences in the text).
  EXPECT_EQ(count("= lu "), 1) << text;
  EXPECT_EQ(count("= custom_linear_solve["), 2) << text;
  EXPECT_EQ(count("triangular_solve"), 8) << text;
}

TEST(LinalgSolve, VmapJitComposites) {
  testing::X64Scope x64;
  Array a = random_wellcond({4}, 3, DType::kFloat64);
  Array b = random_array({4, 3}, DType::kFloat64);
  auto f = [](const Array& x, const Array& y) { return linalg::solve(x, y); };
  std::vector<Array> loop;
  for (int64_t i = 0; i < 4; ++i)
    loop.push_back(f(lax::index_in_dim(a, i, 0, false), lax::index_in_dim(b, i, 0, false)));
  EXPECT_EQ(testing::compare(to_doubles(vmap(f, {0, 0})(a, b)), to_doubles(numpy::stack(loop)),
                             1e-12, 1e-12),
            "");
  Array b2 = random_array({4, 3, 2}, DType::kFloat64);
  EXPECT_EQ(
      testing::compare(to_doubles(jit(f)(a, b2)), to_doubles(linalg::solve(a, b2)), 1e-12, 1e-12),
      "");
  auto d = [](const Array& x) { return linalg::det(x); };
  EXPECT_EQ(testing::compare(to_doubles(vmap(d, {0})(a)), to_doubles(linalg::det(a)), 1e-12, 1e-12),
            "");
  EXPECT_EQ(testing::compare(to_doubles(jit(d)(a)), to_doubles(linalg::det(a)), 1e-12, 1e-12), "");
  auto gd = grad([](const Array& x) { return numpy::sum(linalg::det(x)); });
  EXPECT_EQ(testing::compare(to_doubles(jit(gd)(a)), to_doubles(gd(a)), 1e-10, 1e-10), "");
  // matrix_power, multi_dot, tensorinv, tensorsolve.
  Array m = lax::index_in_dim(a, 0, 0, false);
  Array m3 = numpy::matmul(numpy::matmul(m, m), m);
  EXPECT_EQ(testing::compare(to_doubles(linalg::matrix_power(m, 3)), to_doubles(m3), 1e-12, 1e-12),
            "");
  EXPECT_EQ(
      testing::compare(to_doubles(numpy::matmul(linalg::matrix_power(m, -3), m3)),
                       to_doubles(numpy::eye(3, std::nullopt, 0, DType::kFloat64)), 1e-9, 1e-9),
      "");
  EXPECT_EQ(
      testing::compare(to_doubles(linalg::multi_dot({m, m, m})), to_doubles(m3), 1e-12, 1e-12), "");
  Array t4 = lax::reshape(random_wellcond({}, 6, DType::kFloat64), {2, 3, 6});
  Array ti = linalg::tensorinv(t4, 2);
  ASSERT_EQ(ti.shape(), (Shape{6, 2, 3}));
  Array bt = random_array({2, 3}, DType::kFloat64);
  Array xt = linalg::tensorsolve(t4, bt);
  ASSERT_EQ(xt.shape(), (Shape{6}));
  EXPECT_EQ(testing::compare(to_doubles(numpy::tensordot(t4, xt, 1)), to_doubles(bt), 1e-10, 1e-10),
            "");
}

TEST(ScipyLinalg, FactorsAndSolves) {
  testing::X64Scope x64;
  namespace sl = linalg::scipy;
  const int64_t n = 4;
  Array spd = random_spd({}, n, DType::kFloat64);
  Array b = random_array({n, 3}, DType::kFloat64);
  auto check_solves = [&](const Array& a, const Array& x, const std::string& what) {
    const auto prod = matmul_d(to_doubles(a), to_doubles(x), n, n, 3);
    EXPECT_EQ(testing::compare(prod, to_doubles(b), 1e-10, 1e-10), "") << what;
  };
  for (bool lower : {false, true}) {
    auto cf = sl::cho_factor(spd, lower);
    check_solves(spd, sl::cho_solve(cf, b), "cho_solve");
    check_solves(spd, sl::solve(spd, b, lower, "pos"), "solve pos");
    Array c = sl::cholesky(spd, lower);
    Array rec = lower ? numpy::matmul(c, numpy::swapaxes(c, 0, 1))
                      : numpy::matmul(numpy::swapaxes(c, 0, 1), c);
    EXPECT_EQ(testing::compare(to_doubles(rec), to_doubles(spd), 1e-10, 1e-10), "");
  }
  Array a = random_wellcond({}, n, DType::kFloat64);
  check_solves(a, sl::solve(a, b), "solve gen");
  auto lp = sl::lu_factor(a);
  check_solves(a, sl::lu_solve(lp, b, 0), "lu_solve 0");
  Array at = numpy::swapaxes(a, 0, 1);
  check_solves(at, sl::lu_solve(lp, b, 1), "lu_solve 1");
  check_solves(at, sl::lu_solve(lp, b, 2), "lu_solve 2");
  auto plu = sl::lu(a);
  EXPECT_EQ(testing::compare(to_doubles(numpy::matmul(numpy::matmul(plu[0], plu[1]), plu[2])),
                             to_doubles(a), 1e-12, 1e-12),
            "");
  auto pl = sl::lu(a, true);
  EXPECT_EQ(testing::compare(to_doubles(numpy::matmul(pl[0], pl[1])), to_doubles(a), 1e-12, 1e-12),
            "");
  for (int trans : {0, 1, 2}) {
    Array t = random_triangular({}, n, DType::kFloat64);
    Array x = sl::solve_triangular(t, b, trans, true);
    Array tt = numpy::tril(t);
    check_solves(trans ? numpy::swapaxes(tt, 0, 1) : tt, x, "solve_triangular");
  }
  // Gradient of the Cholesky solve (custom JVP with the same factors).
  Array w = random_array({n, 3}, DType::kFloat64);
  auto f = [&](const Array& x) {
    return numpy::sum(
        lax::mul(sl::solve(lax::add(x, numpy::swapaxes(x, 0, 1)), b, false, "pos"), w));
  };
  expect_grad_fd(f, lax::mul(spd, numpy::scalar(0.5, DType::kFloat64)),
                 grad(f)(lax::mul(spd, numpy::scalar(0.5, DType::kFloat64))), 1e-6,
                 "solve pos grad");
  EXPECT_ERROR(ValueError, sl::solve(a, b, false, "banded"), "assume_a");
}

}  // namespace
}  // namespace tessera
