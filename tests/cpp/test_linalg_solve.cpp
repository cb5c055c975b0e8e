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
    for (int64_t m : {1, 3, 17}) {
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

}  // namespace
}  // namespace tessera
