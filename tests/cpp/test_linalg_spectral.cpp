// The spectral linear algebra family (eigh, svd, qr and the composites on them) on fresh random
// inputs, checked against reconstruction identities computed on the host in float64
// (A·v = v·diag(w) with vᵀv = I and w ascending; U·diag(s)·Vᵀ = A with orthonormal factors and s
// descending; Q·R = A with QᵀQ = I and R upper triangular; the four Penrose conditions for
// pinv; the normal equations for lstsq; a Taylor-series reference for expm), gradients against
// float64 central differences of sign-invariant functions of the results, vmap against a loop
// over matrices, jit against eager, empty and 1x1 matrices, NaN propagation and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "tessera/linalg_spectral.h"
#include "tessera/nn_initializers.h"
#include "tessera/numpy_manip.h"
#include "tessera/random.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;
namespace ll = lax::linalg;

using Mat = std::vector<double>;  // row-major

// Host float64 helpers on one matrix (row-major).
Mat host_matmul(const Mat& a, const Mat& b, int64_t m, int64_t k, int64_t n) {
  Mat c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}
Mat host_t(const Mat& a, int64_t m, int64_t n) {
  Mat t(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) t[j * m + i] = a[i * n + j];
  return t;
}
double max_abs(const Mat& a) {
  double r = 0;
  for (double v : a) r = std::max(r, std::abs(v));
  return r;
}
// Max |a - b|.
double max_diff(const Mat& a, const Mat& b) {
  double r = 0;
  for (size_t i = 0; i < a.size(); ++i) r = std::max(r, std::abs(a[i] - b[i]));
  return r;
}
Mat eye_host(int64_t n) {
  Mat e(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) e[i * n + i] = 1.0;
  return e;
}
// Matrix b of a batch (flattened host values).
Mat part(const std::vector<double>& all, int64_t b, int64_t size) {
  return Mat(all.begin() + b * size, all.begin() + (b + 1) * size);
}
double tol_of(DType d) { return d == DType::kFloat64 ? 1e-11 : 2e-5; }
int64_t batch_of(const Shape& s) {
  int64_t b = 1;
  for (int64_t d : s) b *= d;
  return b;
}

// ---- eigh ----
TEST(LinalgEigh, ReconstructsOnRandomSymmetricMatrices) {
  testing::Threads threads(2);
  testing::X64Scope x64;
  for (DType dt : {DType::kFloat32, DType::kFloat64})
    for (Shape batch : {Shape{}, Shape{3}, Shape{2, 2}})
      for (int64_t n : {1, 2, 5, 17}) {
        Shape s = batch;
        s.insert(s.end(), {n, n});
        Array x = random_array(s, dt);
        auto [v, w] = ll::eigh(x);
        ASSERT_EQ(v.shape(), s);
        ASSERT_EQ(w.dtype(), dt);
        const auto xs = to_doubles(x), vs = to_doubles(v), ws = to_doubles(w);
        for (int64_t b = 0; b < batch_of(batch); ++b) {
          Mat a = part(xs, b, n * n), vb = part(vs, b, n * n), wb = part(ws, b, n);
          Mat sym = a;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) sym[i * n + j] = 0.5 * (a[i * n + j] + a[j * n + i]);
          Mat av = host_matmul(sym, vb, n, n, n), vw = vb;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) vw[i * n + j] *= wb[j];
          const double scale = std::max(1.0, max_abs(sym)) * n;
          EXPECT_LT(max_diff(av, vw), tol_of(dt) * scale) << dtype_name(dt) << " n " << n;
          EXPECT_LT(max_diff(host_matmul(host_t(vb, n, n), vb, n, n, n), eye_host(n)),
                    tol_of(dt) * n);
          for (int64_t i = 0; i + 1 < n; ++i) EXPECT_LE(wb[i], wb[i + 1]);
        }
      }
}

TEST(LinalgEigh, ReadsOnlyTheChosenTriangle) {
  testing::X64Scope x64;
  const int64_t n = 6;
  Array x = random_array({n, n}, DType::kFloat64);
  const auto xs = to_doubles(x);
  for (bool lower : {true, false}) {
    // The symmetric matrix the chosen triangle describes.
    Mat sym(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const bool in = lower ? j <= i : j >= i;
        sym[i * n + j] = in ? xs[i * n + j] : xs[j * n + i];
      }
    auto [v, w] = ll::eigh(x, lower, /*symmetrize_input=*/false);
    Mat vb = to_doubles(v), wb = to_doubles(w);
    Mat av = host_matmul(sym, vb, n, n, n), vw = vb;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) vw[i * n + j] *= wb[j];
    EXPECT_LT(max_diff(av, vw), 1e-11 * n * 4) << "lower " << lower;
  }
}

TEST(LinalgEigh, EmptyNaNAndErrors) {
  auto [v0, w0] = ll::eigh(numpy::zeros({0, 0}, DType::kFloat32));
  EXPECT_EQ(v0.shape(), (Shape{0, 0}));
  EXPECT_EQ(w0.shape(), (Shape{0}));
  auto [v1, w1] = ll::eigh(numpy::zeros({0, 3, 3}, DType::kFloat32));
  EXPECT_EQ(v1.shape(), (Shape{0, 3, 3}));
  // One NaN matrix in a batch: that matrix is all NaN, the other is fine.
  std::vector<double> vals = {1, NAN, 2, 1, 2, 1, 1, 3};
  auto [v, w] = ll::eigh(numpy::array(vals, {2, 2, 2}));
  const auto ws = to_doubles(w);
  EXPECT_TRUE(std::isnan(ws[0]) && std::isnan(ws[1]));
  EXPECT_NEAR(ws[2], (5 - std::sqrt(5.0)) / 2, 1e-5);  // [[2, 1], [1, 3]]
  EXPECT_NEAR(ws[3], (5 + std::sqrt(5.0)) / 2, 1e-5);
  EXPECT_ERROR(ValueError, ll::eigh(numpy::zeros({2, 3}, DType::kFloat32)), "[..., n, n]");
  EXPECT_ERROR(ValueError, ll::eigh(numpy::zeros({3}, DType::kFloat32)), "[..., n, n]");
  EXPECT_ERROR(TypeError, ll::eigh(numpy::zeros({2, 2}, DType::kInt32)), "float32 or float64");
}

// Central differences of scalar f at x (float64), compared with g.
void check_fd(const std::function<Array(const Array&)>& f, const Array& x, double tol) {
  const auto g = to_doubles(grad(f)(x));
  const auto xs = to_doubles(x);
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> p = xs, m = xs;
    p[i] += h;
    m[i] -= h;
    const double fd = (to_doubles(f(numpy::array(p, x.shape())))[0] -
                       to_doubles(f(numpy::array(m, x.shape())))[0]) /
                      (2 * h);
    EXPECT_NEAR(g[i], fd, tol * std::max(1.0, std::abs(fd))) << "element " << i;
  }
}

TEST(LinalgEigh, GradientMatchesFiniteDifferences) {
  testing::X64Scope x64;
  for (Shape s : {Shape{4, 4}, Shape{2, 3, 3}}) {
    Array x = random_array(s, DType::kFloat64);
    Array c1 = random_array(Shape(s.begin(), s.end() - 1), DType::kFloat64);
    Array c2 = random_array(s, DType::kFloat64);
    // Eigenvector signs are arbitrary: v∘v is not.
    auto f = [&](const Array& a) {
      auto [v, w] = ll::eigh(a);
      return lax::add(numpy::sum(lax::mul(w, c1)), numpy::sum(lax::mul(lax::mul(v, v), c2)));
    };
    check_fd(f, x, 1e-5);
  }
}

// ---- svd ----
struct SvdCase {
  int64_t m, n;
};

TEST(LinalgSvd, ReconstructsTallWideSquareFullAndReduced) {
  testing::Threads threads(2);
  testing::X64Scope x64;
  for (DType dt : {DType::kFloat32, DType::kFloat64})
    for (SvdCase c : {SvdCase{1, 1}, SvdCase{3, 3}, SvdCase{7, 3}, SvdCase{3, 7}, SvdCase{9, 1}})
      for (Shape batch : {Shape{}, Shape{3}})
        for (bool full : {true, false}) {
          Shape s = batch;
          s.insert(s.end(), {c.m, c.n});
          Array x = random_array(s, dt);
          std::vector<Array> usv = ll::svd(x, full, true);
          const int64_t k = std::min(c.m, c.n), uc = full ? c.m : k, vr = full ? c.n : k;
          ASSERT_EQ(usv[0].shape().back(), uc);
          ASSERT_EQ(usv[2].shape()[usv[2].ndim() - 2], vr);
          Array s_only = ll::svd(x, full, false)[0];
          const auto xs = to_doubles(x), us = to_doubles(usv[0]), ss = to_doubles(usv[1]),
                     vs = to_doubles(usv[2]), s2 = to_doubles(s_only);
          EXPECT_EQ(testing::compare(s2, ss, tol_of(dt) * 10, tol_of(dt) * 10), "");
          for (int64_t b = 0; b < batch_of(batch); ++b) {
            Mat a = part(xs, b, c.m * c.n), u = part(us, b, c.m * uc), sv = part(ss, b, k),
                vt = part(vs, b, vr * c.n);
            // U[:, :k] diag(s) Vt[:k, :]
            Mat us_(static_cast<size_t>(c.m * k));
            for (int64_t i = 0; i < c.m; ++i)
              for (int64_t j = 0; j < k; ++j) us_[i * k + j] = u[i * uc + j] * sv[j];
            Mat vtk(vt.begin(), vt.begin() + k * c.n);
            const double scale = std::max(1.0, max_abs(a)) * std::max(c.m, c.n);
            EXPECT_LT(max_diff(host_matmul(us_, vtk, c.m, k, c.n), a), tol_of(dt) * scale)
                << dtype_name(dt) << " " << c.m << "x" << c.n << " full " << full;
            EXPECT_LT(max_diff(host_matmul(host_t(u, c.m, uc), u, uc, c.m, uc), eye_host(uc)),
                      tol_of(dt) * scale);
            EXPECT_LT(max_diff(host_matmul(vt, host_t(vt, vr, c.n), vr, c.n, vr), eye_host(vr)),
                      tol_of(dt) * scale);
            for (int64_t i = 0; i < k; ++i) {
              EXPECT_GE(sv[i], 0.0);
              if (i + 1 < k) {
                EXPECT_GE(sv[i], sv[i + 1]);
              }
            }
          }
        }
}

TEST(LinalgSvd, EmptyNaNAndErrors) {
  std::vector<Array> r = ll::svd(numpy::zeros({2, 0, 3}, DType::kFloat32), true, true);
  EXPECT_EQ(r[0].shape(), (Shape{2, 0, 0}));
  EXPECT_EQ(r[1].shape(), (Shape{2, 0}));
  EXPECT_EQ(r[2].shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(to_doubles(r[2]), to_doubles(numpy::broadcast_to(numpy::eye(3), {2, 3, 3})));
  std::vector<Array> r2 = ll::svd(numpy::zeros({4, 0}, DType::kFloat32), false, true);
  EXPECT_EQ(r2[0].shape(), (Shape{4, 0}));
  EXPECT_EQ(r2[2].shape(), (Shape{0, 0}));
  std::vector<double> vals = {1, NAN, 2, 3};
  auto bad = ll::svd(numpy::array(vals, {2, 2}), false, true);
  for (const Array& a : bad)
    for (double v : to_doubles(a)) EXPECT_TRUE(std::isnan(v));
  EXPECT_ERROR(ValueError, ll::svd(numpy::zeros({3}, DType::kFloat32)), "ndims >= 2");
  EXPECT_ERROR(TypeError, ll::svd(numpy::zeros({2, 2}, DType::kInt32)), "float32 or float64");
}

TEST(LinalgSvd, GradientMatchesFiniteDifferences) {
  testing::X64Scope x64;
  for (SvdCase c : {SvdCase{4, 4}, SvdCase{5, 3}, SvdCase{3, 5}}) {
    Shape s{2, c.m, c.n};
    const int64_t k = std::min(c.m, c.n);
    Array x = random_array(s, DType::kFloat64);
    Array c1 = random_array({2, k}, DType::kFloat64);
    Array cu = random_array({2, c.m, k}, DType::kFloat64);
    Array cv = random_array({2, k, c.n}, DType::kFloat64);
    auto f = [&](const Array& a) {
      std::vector<Array> usv = ll::svd(a, false, true);
      Array t = numpy::sum(lax::mul(usv[1], c1));
      t = lax::add(t, numpy::sum(lax::mul(lax::mul(usv[0], usv[0]), cu)));
      return lax::add(t, numpy::sum(lax::mul(lax::mul(usv[2], usv[2]), cv)));
    };
    check_fd(f, x, 1e-5);
    auto g = [&](const Array& a) { return numpy::sum(lax::mul(ll::svd(a, true, false)[0], c1)); };
    check_fd(g, x, 1e-5);
  }
  // Square full_matrices is the reduced decomposition: differentiable.
  Array sq = random_array({3, 3}, DType::kFloat64);
  auto fs = [](const Array& a) { return numpy::sum(ll::svd(a, true, true)[1]); };
  check_fd(fs, sq, 1e-5);
  Array tall = random_array({4, 2}, DType::kFloat64);
  EXPECT_ERROR(NotImplementedError,
               grad([](const Array& a) { return numpy::sum(ll::svd(a, true, true)[0]); })(tall),
               "not implemented for full matrices");
}

// ---- qr ----
TEST(LinalgQr, ReconstructsTallWideSquareFullAndReduced) {
  testing::Threads threads(2);
  testing::X64Scope x64;
  for (DType dt : {DType::kFloat32, DType::kFloat64})
    for (SvdCase c : {SvdCase{1, 1}, SvdCase{4, 4}, SvdCase{7, 3}, SvdCase{3, 7}, SvdCase{5, 1}})
      for (Shape batch : {Shape{}, Shape{2, 2}})
        for (bool full : {true, false}) {
          Shape s = batch;
          s.insert(s.end(), {c.m, c.n});
          Array x = random_array(s, dt);
          auto [q, r] = ll::qr(x, full);
          const int64_t k = std::min(c.m, c.n), qc = full ? c.m : k;
          Shape qs = batch, rs = batch;
          qs.insert(qs.end(), {c.m, qc});
          rs.insert(rs.end(), {qc, c.n});
          ASSERT_EQ(q.shape(), qs);
          ASSERT_EQ(r.shape(), rs);
          const auto xs = to_doubles(x), qv = to_doubles(q), rv = to_doubles(r);
          for (int64_t b = 0; b < batch_of(batch); ++b) {
            Mat a = part(xs, b, c.m * c.n), qb = part(qv, b, c.m * qc), rb = part(rv, b, qc * c.n);
            const double scale = std::max(1.0, max_abs(a)) * std::max(c.m, c.n);
            EXPECT_LT(max_diff(host_matmul(qb, rb, c.m, qc, c.n), a), tol_of(dt) * scale)
                << dtype_name(dt) << " " << c.m << "x" << c.n << " full " << full;
            EXPECT_LT(max_diff(host_matmul(host_t(qb, c.m, qc), qb, qc, c.m, qc), eye_host(qc)),
                      tol_of(dt) * scale);
            for (int64_t i = 0; i < qc; ++i)
              for (int64_t j = 0; j < std::min(i, c.n); ++j) EXPECT_EQ(rb[i * c.n + j], 0.0);
          }
        }
}

TEST(LinalgQr, EmptyAndErrors) {
  auto [q, r] = ll::qr(numpy::zeros({3, 0}, DType::kFloat32), true);
  EXPECT_EQ(q.shape(), (Shape{3, 3}));
  EXPECT_EQ(to_doubles(q), to_doubles(numpy::eye(3)));
  EXPECT_EQ(r.shape(), (Shape{3, 0}));
  auto [q2, r2] = ll::qr(numpy::zeros({0, 4, 2}, DType::kFloat64), false);
  EXPECT_EQ(q2.shape(), (Shape{0, 4, 2}));
  EXPECT_EQ(r2.shape(), (Shape{0, 2, 2}));
  EXPECT_ERROR(ValueError, ll::qr(numpy::zeros({3}, DType::kFloat32)), "ndims >= 2");
  EXPECT_ERROR(TypeError, ll::qr(numpy::zeros({2, 2}, DType::kInt32)), "float32 or float64");
}

TEST(LinalgQr, GradientMatchesFiniteDifferences) {
  testing::X64Scope x64;
  for (SvdCase c : {SvdCase{4, 4}, SvdCase{6, 3}}) {
    Array x = random_array({2, c.m, c.n}, DType::kFloat64);
    Array cq = random_array({2, c.m, c.n}, DType::kFloat64);
    Array cr = random_array({2, c.n, c.n}, DType::kFloat64);
    auto f = [&](const Array& a) {
      auto [q, r] = ll::qr(a, false);
      return lax::add(numpy::sum(lax::mul(q, cq)), numpy::sum(lax::mul(r, cr)));
    };
    check_fd(f, x, 1e-5);
  }
  Array wide = random_array({2, 4}, DType::kFloat64);
  EXPECT_ERROR(NotImplementedError,
               grad([](const Array& a) { return numpy::sum(ll::qr(a, false).second); })(wide),
               "Unimplemented case of QR decomposition derivative");
}

// ---- composites ----
TEST(LinalgComposites, PinvSatisfiesThePenroseConditionsAndItsGradientMatchesFD) {
  testing::X64Scope x64;
  for (SvdCase c : {SvdCase{5, 3}, SvdCase{3, 5}, SvdCase{4, 4}}) {
    Array a = random_array({c.m, c.n}, DType::kFloat64);
    Array p = linalg::pinv(a);
    ASSERT_EQ(p.shape(), (Shape{c.n, c.m}));
    Mat A = to_doubles(a), P = to_doubles(p);
    Mat AP = host_matmul(A, P, c.m, c.n, c.m), PA = host_matmul(P, A, c.n, c.m, c.n);
    EXPECT_LT(max_diff(host_matmul(AP, A, c.m, c.m, c.n), A), 1e-10);
    EXPECT_LT(max_diff(host_matmul(PA, P, c.n, c.n, c.m), P), 1e-10);
    EXPECT_LT(max_diff(AP, host_t(AP, c.m, c.m)), 1e-10);
    EXPECT_LT(max_diff(PA, host_t(PA, c.n, c.n)), 1e-10);
    Array w = random_array({c.n, c.m}, DType::kFloat64);
    check_fd([&](const Array& x) { return numpy::sum(lax::mul(linalg::pinv(x), w)); }, a, 1e-5);
  }
  // A rank-1 matrix: its pseudo-inverse is vᵀ uᵀ / (|u|² |v|²).
  Array u = random_array({4, 1}, DType::kFloat64), v = random_array({1, 3}, DType::kFloat64);
  Mat U = to_doubles(u), V = to_doubles(v);
  double nu = 0, nv = 0;
  for (double t : U) nu += t * t;
  for (double t : V) nv += t * t;
  Mat want = host_matmul(V, U, 3, 1, 4);
  for (double& t : want) t /= nu * nv;
  EXPECT_LT(max_diff(to_doubles(linalg::pinv(numpy::matmul(u, v))), want), 1e-12);
}

TEST(LinalgComposites, MatrixRankLstsqCondNorm) {
  testing::X64Scope x64;
  for (int64_t r : {1, 2, 3}) {
    Array a =
        numpy::matmul(random_array({5, r}, DType::kFloat64), random_array({r, 4}, DType::kFloat64));
    EXPECT_EQ(to_doubles(linalg::matrix_rank(a))[0], static_cast<double>(r));
  }
  EXPECT_EQ(to_doubles(linalg::matrix_rank(numpy::zeros({3}, DType::kFloat64)))[0], 0.0);
  // lstsq on a tall full-rank system: the normal equations aᵀ(a x - b) = 0 hold.
  Array a = random_array({7, 3}, DType::kFloat64), b = random_array({7, 2}, DType::kFloat64);
  std::vector<Array> res = linalg::lstsq(a, b);
  Mat A = to_doubles(a), B = to_doubles(b), X = to_doubles(res[0]);
  Mat r = host_matmul(A, X, 7, 3, 2);
  for (size_t i = 0; i < r.size(); ++i) r[i] -= B[i];
  EXPECT_LT(max_abs(host_matmul(host_t(A, 7, 3), r, 3, 7, 2)), 1e-12);
  const auto resid = to_doubles(res[1]);
  for (int64_t j = 0; j < 2; ++j) {
    double ss = 0;
    for (int64_t i = 0; i < 7; ++i) ss += r[i * 2 + j] * r[i * 2 + j];
    EXPECT_NEAR(resid[j], ss, 1e-12);
  }
  EXPECT_EQ(to_doubles(res[2])[0], 3.0);
  // cond and the norms of a matrix with known singular values: q1 diag(d) q2ᵀ.
  Array q1 = ll::qr(random_array({4, 4}, DType::kFloat64)).first;
  Array q2 = ll::qr(random_array({4, 4}, DType::kFloat64)).first;
  const std::vector<double> d = {5.0, 2.0, 0.5, 0.25};
  Array m = numpy::matmul(numpy::multiply(q1, numpy::array(d, {1, 4})), numpy::swapaxes(q2, 0, 1));
  auto scalar = [](const Array& x) { return to_doubles(x)[0]; };
  EXPECT_NEAR(scalar(linalg::cond(m)), 20.0, 1e-10);
  EXPECT_NEAR(scalar(linalg::cond(m, -2)), 0.05, 1e-12);
  EXPECT_NEAR(scalar(linalg::cond(m, "fro")),
              std::sqrt(25 + 4 + 0.25 + 0.0625) * std::sqrt(0.04 + 0.25 + 4 + 16), 1e-9);
  EXPECT_NEAR(scalar(numpy::linalg::norm(m, 2)), 5.0, 1e-12);
  EXPECT_NEAR(scalar(numpy::linalg::norm(m, -2)), 0.25, 1e-12);
  EXPECT_NEAR(scalar(numpy::linalg::norm(m, "nuc")), 7.75, 1e-12);
  Array batch = numpy::stack({m, numpy::multiply(m, 2.0)});
  EXPECT_EQ(numpy::linalg::norm(batch, 2, {1, 2}, true).shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(testing::compare(to_doubles(numpy::linalg::norm(batch, "nuc", {2, 1})), {7.75, 15.5},
                             1e-12, 1e-12),
            "");
  EXPECT_ERROR(ValueError, linalg::cond(random_array({3, 2}, DType::kFloat64), 1), "square");
  EXPECT_ERROR(NotImplementedError, linalg::eig(m), "complex64");
  EXPECT_EQ(linalg::qr(m, "raw")[0].shape(), (Shape{4, 4}));  // test_linalg_qr_raw.cpp
}

// exp(A) by its Taylor series after scaling by 2^-s, then s squarings (float64 on the host).
Mat taylor_expm(const Mat& a, int64_t n) {
  const int s = 10;
  Mat x = a;
  for (double& t : x) t /= std::ldexp(1.0, s);
  Mat sum = eye_host(n), term = eye_host(n);
  for (int k = 1; k < 30; ++k) {
    term = host_matmul(term, x, n, n, n);
    for (double& t : term) t /= k;
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += term[i];
  }
  for (int i = 0; i < s; ++i) sum = host_matmul(sum, sum, n, n, n);
  return sum;
}

TEST(LinalgComposites, ExpmMatchesATaylorReference) {
  testing::X64Scope x64;
  for (DType dt : {DType::kFloat32, DType::kFloat64})
    for (double scale : {0.01, 0.3, 1.0, 3.0, 12.0}) {
      const int64_t n = 4;
      Array a = random_array({3, n, n}, dt, -scale, scale);
      Array e = linalg::scipy::expm(a);
      ASSERT_EQ(e.dtype(), dt);
      const auto as = to_doubles(a), es = to_doubles(e);
      for (int64_t b = 0; b < 3; ++b) {
        Mat want = taylor_expm(part(as, b, n * n), n);
        const double rel = dt == DType::kFloat64 ? 1e-11 : 2e-5;
        EXPECT_LT(max_diff(part(es, b, n * n), want), rel * std::max(1.0, max_abs(want)) * 10)
            << dtype_name(dt) << " scale " << scale;
      }
    }
  Array a = random_array({3, 3}, DType::kFloat64, -0.5, 0.5);
  Array w = random_array({3, 3}, DType::kFloat64);
  check_fd([&](const Array& x) { return numpy::sum(lax::mul(linalg::scipy::expm(x), w)); }, a,
           1e-5);
  EXPECT_ERROR(ValueError, linalg::scipy::expm(numpy::zeros({2, 3}, DType::kFloat32)), "square");
}

TEST(LinalgComposites, OrthogonalInitializerGivesOrthonormalColumns) {
  for (auto [shape, axis] : std::vector<std::pair<Shape, int64_t>>{
           {{5, 3}, -1}, {{3, 5}, -1}, {{4, 2, 3}, 0}, {{6, 6}, 1}}) {
    Array w = nn::initializers::orthogonal(1.5, axis)(random::key(3), shape);
    ASSERT_EQ(w.shape(), shape);
    ASSERT_EQ(w.dtype(), DType::kFloat32);
    const int64_t ax = axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
    const int64_t cols = shape[ax], rows = shape_size(shape) / cols;
    Mat m = to_doubles(numpy::reshape(numpy::moveaxis(w, ax, -1), {rows, cols}));
    for (double& t : m) t /= 1.5;
    Mat g = rows >= cols ? host_matmul(host_t(m, rows, cols), m, cols, rows, cols)
                         : host_matmul(m, host_t(m, rows, cols), rows, cols, rows);
    EXPECT_LT(max_diff(g, eye_host(std::min(rows, cols))), 1e-5) << shape_str(shape);
  }
  EXPECT_ERROR(ValueError, nn::initializers::orthogonal()(random::key(0), {3}), "2D");
}

// Batches run one LAPACK call per matrix on the pool: the results are bit-identical whatever the
// thread count, and equal to the matrices decomposed one at a time.
TEST(LinalgSpectral, BatchedResultsDoNotDependOnTheThreadCount) {
  Array x = random_array({9, 6, 6}, DType::kFloat64);
  Array s = lax::add(x, numpy::swapaxes(x, 1, 2));
  auto run = [&] {
    std::vector<double> all;
    for (const Array& a : {ll::eigh(s).first, ll::svd(x, false, true)[0], ll::qr(x).first}) {
      const auto v = to_doubles(a);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  std::vector<double> one, three;
  {
    testing::Threads t(1);
    one = run();
  }
  {
    testing::Threads t(3);
    three = run();
  }
  EXPECT_EQ(one, three);
  const auto batched = to_doubles(ll::svd(x, false, false)[0]);
  for (int64_t b = 0; b < 9; ++b) {
    const auto single = to_doubles(ll::svd(lax::index_in_dim(x, b, 0, false), false, false)[0]);
    EXPECT_EQ(single, part(batched, b, 6)) << b;
  }
}

// ---- vmap and jit of the three primitives ----
TEST(LinalgSpectral, VmapMatchesALoopAndJitMatchesEager) {
  Array x = random_array({3, 4, 5}, DType::kFloat32);  // batch axis 1 (size 4)
  std::vector<std::function<Array(const Array&)>> fs = {
      [](const Array& a) {
        Array s = lax::add(a, numpy::swapaxes(a, 0, 1));
        return ll::eigh(s).second;
      },
      [](const Array& a) { return ll::svd(a, false, false)[0]; },
      [](const Array& a) { return numpy::abs(ll::svd(a, false, true)[2]); },
      [](const Array& a) { return numpy::abs(ll::qr(a, false).second); },
      [](const Array& a) { return numpy::abs(ll::qr(a, true).first); },
  };
  for (size_t i = 0; i < fs.size(); ++i) {
    auto f = fs[i];
    // eigh needs square: slice to 3x3.
    auto g = [&](const Array& a) { return f(i == 0 ? lax::slice(a, {0, 0}, {3, 3}) : a); };
    std::vector<Array> loop;
    for (int64_t b = 0; b < 4; ++b) loop.push_back(g(lax::index_in_dim(x, b, 1, false)));
    EXPECT_EQ(
        testing::compare(to_doubles(vmap(g, {1})(x)), to_doubles(numpy::stack(loop)), 1e-5, 1e-5),
        "")
        << "function " << i;
    Array xb = lax::index_in_dim(x, 0, 1, false);
    EXPECT_EQ(testing::compare(to_doubles(jit(g)(xb)), to_doubles(g(xb)), 1e-6, 1e-6), "")
        << "function " << i;
  }
}

}  // namespace
}  // namespace tessera
