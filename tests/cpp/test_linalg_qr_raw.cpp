// QR's raw and pivoted forms (src/prims/linalg_householder.cpp: geqrf, geqp3,
// householder_product; src/prims/linalg_qr.cpp: qr with pivoting; jnp.linalg.qr(mode='raw'),
// jax.scipy.linalg.qr(mode=..., pivoting=...)) on fresh random inputs: against LAPACK through
// SciPy/NumPy (tests/oracle/oracle_linalg_qr.py: scipy.linalg.lapack.dgeqrf/dgeqp3/dorgqr,
// scipy.linalg.qr with pivoting, numpy.linalg.qr mode='raw'), reconstruction identities on the
// host in float64 (A[:, p] = Q R with QᵀQ = I and |diag R| non-increasing; the reflectors
// rebuilt by hand reproduce householder_product), geqp3's fixed columns, empty and 1x1 matrices,
// the derivative rules (none for the raw primitives, as JAX; pivoted qr against float64 central
// differences), vmap against a loop, jit against eager, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "tessera/linalg_spectral.h"
#include "tessera/numpy_manip.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::json_bool;
using testing::json_obj;
using testing::json_str;
using testing::random_array;
using testing::to_doubles;
namespace ll = lax::linalg;

using Mat = std::vector<double>;  // row-major

Mat host_matmul(const Mat& a, const Mat& b, int64_t m, int64_t k, int64_t n) {
  Mat c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}
double max_diff(const Mat& a, const Mat& b) {
  double r = 0;
  for (size_t i = 0; i < a.size(); ++i) r = std::max(r, std::abs(a[i] - b[i]));
  return r;
}
Mat part(const std::vector<double>& all, int64_t b, int64_t size) {
  return Mat(all.begin() + b * size, all.begin() + (b + 1) * size);
}
double tol_of(DType d) { return d == DType::kFloat64 ? 1e-12 : 3e-6; }
int64_t count_of(const Shape& batch) {
  int64_t n = 1;
  for (int64_t d : batch) n *= d;
  return n;
}
Shape with(Shape batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

struct Dims {
  int64_t m, n;
};
const std::vector<Dims> kDims = {{1, 1}, {4, 4}, {6, 3}, {3, 6}, {5, 1}, {1, 4}, {0, 3}, {3, 0}};

// ---------------------------------------------------------------- against LAPACK via SciPy

// Every function of the family on one input, as oracle cases.
void add_cases(testing::OracleBatch& b, const std::string& tag, const Array& x) {
  const int64_t r = x.ndim(), m = x.shape()[r - 2], n = x.shape()[r - 1];
  const Shape batch(x.shape().begin(), x.shape().end() - 2);
  auto out = [](const char* o) { return json_obj({{"out", json_str(o)}}); };
  b.add(tag + " geqrf h", "linalg.geqrf", out("h"), {x}, [&] { return ll::geqrf(x).first; });
  b.add(tag + " geqrf taus", "linalg.geqrf", out("taus"), {x}, [&] { return ll::geqrf(x).second; });
  Array free = numpy::zeros(with(batch, {n}), DType::kInt32);
  const char* names[] = {"h", "jpvt", "taus"};
  for (size_t i = 0; i < 3; ++i)
    b.add(tag + " geqp3 " + names[i], "linalg.geqp3", out(names[i]), {x, free},
          [&] { return ll::geqp3(x, free)[i]; });
  // householder_product on geqrf's own output (its use in qr) and on random reflectors.
  if (m >= n) {
    auto [h, taus] = ll::geqrf(x);
    b.add(tag + " householder_product (geqrf)", "linalg.householder_product", "{}", {h, taus},
          [&] { return ll::householder_product(h, taus); });
    const int64_t kk = testing::rng()() % static_cast<uint64_t>(n + 1);
    Array t = random_array(with(batch, {kk}), x.dtype(), -1.0, 1.0);
    b.add(tag + " householder_product (random k " + std::to_string(kk) + ")",
          "linalg.householder_product", "{}", {x, t},
          [&] { return ll::householder_product(x, t); });
  }
  // qr with pivoting in SciPy's three modes, and jnp/scipy raw (SciPy's qr takes one matrix:
  // the oracle loops over the batch).
  for (const char* mode : {"full", "economic", "r"}) {
    const std::string ms = mode;
    for (const char* o : {"q", "r", "p"}) {
      if (ms == "r" && std::string(o) == "q") continue;
      const size_t which = o[0] == 'q' ? 0 : o[0] == 'r' ? 1 : 2;
      b.add(tag + " scipy qr pivoting " + ms + " " + o, "linalg.qr_pivoting",
            json_obj({{"out", json_str(o)}, {"mode", json_str(mode)}}), {x}, [&, ms, which] {
              std::vector<Array> res = linalg::scipy::qr(x, ms, true);
              return ms == "r" ? res[which - 1] : res[which];
            });
    }
  }
  b.add(tag + " jnp qr raw h", "linalg.qr_raw", out("h"), {x},
        [&] { return linalg::qr(x, "raw")[0]; });
  b.add(tag + " jnp qr raw tau", "linalg.qr_raw", out("tau"), {x},
        [&] { return linalg::qr(x, "raw")[1]; });
  for (bool piv : {false, true})
    for (const char* o : {"sh", "stau", "sr", "sp"}) {
      if (!piv && std::string(o) == "sp") continue;
      const size_t which = o[1] == 'h' ? 0 : o[1] == 't' ? 1 : o[1] == 'r' ? 2 : 3;
      b.add(tag + " scipy qr raw " + o + (piv ? " pivoting" : ""), "linalg.qr_raw",
            json_obj({{"out", json_str(o)}, {"pivoting", json_bool(piv)}}), {x},
            [&, piv, which] { return linalg::scipy::qr(x, "raw", piv)[which]; });
    }
}

TEST(LinalgQrRaw, MatchesLapackThroughScipy) {
  TESSERA_REQUIRE_ORACLE();
  testing::X64Scope x64;
  testing::OracleBatch b("linalg_qr", 10.0, 60);
  // Every shape unbatched in float32 and batched in float64, and empty batches (each case's
  // inputs are written to disk for the oracle: the list is kept short).
  std::vector<std::pair<DType, Shape>> inputs = {{DType::kFloat64, {0, 4, 3}},
                                                 {DType::kFloat32, {0, 2, 3, 6}}};
  for (Dims d : kDims) {
    inputs.push_back({DType::kFloat32, {d.m, d.n}});
    inputs.push_back({DType::kFloat64, {2, 3, d.m, d.n}});
  }
  for (const auto& [dt, s] : inputs) {
    Array x = random_array(s, dt);
    add_cases(b, std::string(dtype_name(dt)) + " " + shape_str(s), x);
  }
  // Random extras: fresh shapes up to 7x7, batched or not.
  while (b.time_left()) {
    auto& g = testing::rng();
    const DType dt = g() % 2 ? DType::kFloat64 : DType::kFloat32;
    Shape s = g() % 3 == 0 ? Shape{static_cast<int64_t>(1 + g() % 3)} : Shape{};
    s.push_back(static_cast<int64_t>(1 + g() % 7));
    s.push_back(static_cast<int64_t>(1 + g() % 7));
    Array x = random_array(s, dt);
    add_cases(b, "random " + std::string(dtype_name(dt)) + " " + shape_str(s), x);
  }
  auto sum = b.run();
  EXPECT_GT(sum.compared, 300);
  EXPECT_EQ(sum.skipped, 0);
}

// ---------------------------------------------------------------- identities

// A[:, p] = Q R, QᵀQ = I, R upper triangular with |diag R| non-increasing, p a permutation.
TEST(LinalgQrRaw, PivotedQrReconstructsThePermutedMatrix) {
  testing::X64Scope x64;
  for (DType dt : {DType::kFloat32, DType::kFloat64})
    for (Dims d : kDims)
      for (const Shape& batch : {Shape{}, Shape{3}})
        for (bool full : {true, false}) {
          Array x = random_array(with(batch, {d.m, d.n}), dt);
          std::vector<Array> res = ll::qr(x, true, full);
          ASSERT_EQ(res.size(), 3u);
          const int64_t m = d.m, n = d.n, k = std::min(m, n), qc = full ? m : k;
          ASSERT_EQ(res[0].shape(), with(batch, {m, qc}));
          ASSERT_EQ(res[1].shape(), with(batch, {qc, n}));
          ASSERT_EQ(res[2].shape(), with(batch, {n}));
          ASSERT_EQ(res[2].dtype(), DType::kInt32);
          const auto xs = to_doubles(x), qs = to_doubles(res[0]), rs = to_doubles(res[1]),
                     ps = to_doubles(res[2]);
          for (int64_t b = 0; b < count_of(batch); ++b) {
            Mat a = part(xs, b, m * n), q = part(qs, b, m * qc), r = part(rs, b, qc * n),
                p = part(ps, b, n);
            const std::string label = std::string(dtype_name(dt)) + " " + std::to_string(m) + "x" +
                                      std::to_string(n) + " full " + std::to_string(full);
            if (k == 0) {  // JAX's empty-matrix convention: p = 0
              for (double v : p) EXPECT_EQ(v, 0.0) << label;
              continue;
            }
            std::vector<double> sorted = p;
            std::sort(sorted.begin(), sorted.end());
            for (int64_t j = 0; j < n; ++j) ASSERT_EQ(sorted[j], static_cast<double>(j)) << label;
            Mat ap(static_cast<size_t>(m * n));
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) ap[i * n + j] = a[i * n + static_cast<int64_t>(p[j])];
            const double scale = 4.0 * std::max(m, n);
            EXPECT_LT(max_diff(host_matmul(q, r, m, qc, n), ap), tol_of(dt) * scale) << label;
            Mat qtq(static_cast<size_t>(qc * qc), 0.0);
            for (int64_t i = 0; i < qc; ++i)
              for (int64_t j = 0; j < qc; ++j)
                for (int64_t l = 0; l < m; ++l) qtq[i * qc + j] += q[l * qc + i] * q[l * qc + j];
            for (int64_t i = 0; i < qc; ++i) qtq[i * qc + i] -= 1.0;
            EXPECT_LT(max_diff(qtq, Mat(qtq.size(), 0.0)), tol_of(dt) * scale) << label;
            for (int64_t i = 0; i < qc; ++i)
              for (int64_t j = 0; j < std::min(i, n); ++j) EXPECT_EQ(r[i * n + j], 0.0) << label;
            for (int64_t i = 1; i < k; ++i)
              EXPECT_LE(std::abs(r[i * n + i]), std::abs(r[(i - 1) * n + i - 1]) * (1 + 1e-6))
                  << label << " diagonal " << i;
          }
        }
}

// H_1 ... H_k built on the host from geqrf's reflectors (H_i = I - tau_i v_i v_iᵀ, v_i[i] = 1,
// v_i below it from h) equals householder_product, and Q R = A.
TEST(LinalgQrRaw, ReflectorsBuiltByHandMatchHouseholderProduct) {
  testing::X64Scope x64;
  for (DType dt : {DType::kFloat32, DType::kFloat64})
    for (Dims d : std::vector<Dims>{{5, 3}, {4, 4}, {3, 5}, {1, 1}, {6, 1}}) {
      const int64_t m = d.m, n = d.n, k = std::min(m, n);
      Array x = random_array({m, n}, dt);
      auto [h, taus] = ll::geqrf(x);
      ASSERT_EQ(h.shape(), x.shape());
      ASSERT_EQ(taus.shape(), (Shape{k}));
      const Mat H = to_doubles(h), T = to_doubles(taus), A = to_doubles(x);
      Mat Q(static_cast<size_t>(m * m), 0.0);
      for (int64_t i = 0; i < m; ++i) Q[i * m + i] = 1.0;
      for (int64_t i = 0; i < k; ++i) {  // Q <- Q H_i
        Mat v(static_cast<size_t>(m), 0.0);
        v[i] = 1.0;
        for (int64_t l = i + 1; l < m; ++l) v[l] = H[l * n + i];
        for (int64_t row = 0; row < m; ++row) {
          double qv = 0;
          for (int64_t l = 0; l < m; ++l) qv += Q[row * m + l] * v[l];
          for (int64_t l = 0; l < m; ++l) Q[row * m + l] -= T[i] * qv * v[l];
        }
      }
      Mat R(static_cast<size_t>(m * n), 0.0);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = i; j < n; ++j) R[i * n + j] = H[i * n + j];
      const double tol = tol_of(dt) * 8 * std::max(m, n);
      EXPECT_LT(max_diff(host_matmul(Q, R, m, m, n), A), tol) << m << "x" << n;
      // householder_product needs m >= n: the first k columns of h (all of them when tall).
      Array hk = lax::slice(h, {0, 0}, {m, k});
      Mat got = to_doubles(ll::householder_product(hk, taus)), want(static_cast<size_t>(m * k));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) want[i * k + j] = Q[i * m + j];
      EXPECT_LT(max_diff(got, want), tol) << m << "x" << n;
      // qr is built on the same kernels: its reduced q is householder_product's.
      EXPECT_LT(max_diff(to_doubles(ll::qr(x, false).first), got), tol) << m << "x" << n;
    }
}

// geqp3 with jpvt: nonzero entries mark columns moved to the front and kept there.
TEST(LinalgQrRaw, Geqp3KeepsFixedColumnsInFront) {
  testing::X64Scope x64;
  const int64_t m = 6, n = 5;
  for (int trial = 0; trial < 20; ++trial) {
    Array x = random_array({m, n}, DType::kFloat64);
    std::vector<int32_t> fixed(static_cast<size_t>(n), 0);
    std::set<int64_t> want;
    for (int64_t j = 0; j < n; ++j)
      if (testing::rng()() % 2) fixed[j] = 1, want.insert(j + 1);
    Array jpvt = numpy::array(fixed, {n});
    std::vector<Array> out = ll::geqp3(x, jpvt);
    const auto piv = to_doubles(out[1]);
    std::set<int64_t> front;
    for (size_t j = 0; j < want.size(); ++j) front.insert(static_cast<int64_t>(piv[j]));
    EXPECT_EQ(front, want) << "trial " << trial;
    std::vector<double> sorted = piv;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t j = 0; j < n; ++j) EXPECT_EQ(sorted[j], static_cast<double>(j + 1));
    // a[:, jpvt - 1] = Q R with Q from householder_product.
    Array q = ll::householder_product(out[0], out[2]);
    Array r = numpy::triu(out[0]);
    const Mat A = to_doubles(x), Q = to_doubles(q), R = to_doubles(r);
    Mat ap(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) ap[i * n + j] = A[i * n + static_cast<int64_t>(piv[j]) - 1];
    EXPECT_LT(max_diff(host_matmul(Q, R, m, n, n), ap), 1e-12);
    // The free columns after the fixed ones follow the largest-norm rule.
    for (size_t i = want.size() + 1; i < static_cast<size_t>(n); ++i)
      EXPECT_LE(std::abs(R[i * n + i]), std::abs(R[(i - 1) * n + i - 1]) * (1 + 1e-12));
  }
}

TEST(LinalgQrRaw, EmptyAndOneByOne) {
  testing::X64Scope x64;
  // 1x1: h = ±|x| (LAPACK's beta = -sign(x)|x|), tau = 0 (a 1-vector needs no reflection).
  Array one = numpy::array(std::vector<double>{-2.5}, {1, 1});
  auto [h, tau] = ll::geqrf(one);
  EXPECT_EQ(to_doubles(h), (std::vector<double>{-2.5}));
  EXPECT_EQ(to_doubles(tau), (std::vector<double>{0.0}));
  EXPECT_EQ(to_doubles(ll::householder_product(h, tau)), (std::vector<double>{1.0}));
  // Empty: shapes as JAX's rules; qr's q is the identity's leading columns, p zero.
  auto [h0, t0] = ll::geqrf(numpy::zeros({3, 0}, DType::kFloat32));
  EXPECT_EQ(h0.shape(), (Shape{3, 0}));
  EXPECT_EQ(t0.shape(), (Shape{0}));
  std::vector<Array> g =
      ll::geqp3(numpy::zeros({2, 0, 4}, DType::kFloat64), numpy::zeros({2, 4}, DType::kInt32));
  EXPECT_EQ(g[0].shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(g[1].shape(), (Shape{2, 4}));
  EXPECT_EQ(g[2].shape(), (Shape{2, 0}));
  EXPECT_EQ(to_doubles(g[1]), (std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(to_doubles(ll::householder_product(numpy::zeros({4, 2}, DType::kFloat64),
                                               numpy::zeros({0}, DType::kFloat64))),
            (std::vector<double>{1, 0, 0, 1, 0, 0, 0, 0}));
  std::vector<Array> qrp = ll::qr(numpy::zeros({0, 3}, DType::kFloat32), true, true);
  EXPECT_EQ(qrp[0].shape(), (Shape{0, 0}));
  EXPECT_EQ(qrp[1].shape(), (Shape{0, 3}));
  EXPECT_EQ(to_doubles(qrp[2]), (std::vector<double>{0, 0, 0}));
  std::vector<Array> raw = linalg::qr(numpy::zeros({4, 0}, DType::kFloat32), "raw");
  EXPECT_EQ(raw[0].shape(), (Shape{0, 4}));
  EXPECT_EQ(raw[1].shape(), (Shape{0}));
}

// ---------------------------------------------------------------- derivatives

TEST(LinalgQrRaw, RawPrimitivesHaveNoDerivativeAsInJax) {
  testing::X64Scope x64;
  Array x = random_array({4, 3}, DType::kFloat64);
  Array t = random_array({3}, DType::kFloat64);
  Array j = numpy::zeros({3}, DType::kInt32);
  EXPECT_ERROR(NotImplementedError,
               grad([](const Array& a) { return numpy::sum(ll::geqrf(a).first); })(x),
               "Differentiation rule for 'geqrf' not implemented");
  EXPECT_ERROR(NotImplementedError,
               grad([&](const Array& a) { return numpy::sum(ll::geqp3(a, j)[0]); })(x),
               "Differentiation rule for 'geqp3' not implemented");
  EXPECT_ERROR(NotImplementedError,
               grad([&](const Array& a) { return numpy::sum(ll::householder_product(a, t)); })(x),
               "Differentiation rule for 'householder_product' not implemented");
  EXPECT_ERROR(NotImplementedError,
               grad([&](const Array& u) { return numpy::sum(ll::householder_product(x, u)); })(t),
               "Differentiation rule for 'householder_product' not implemented");
  // Without a tangent the primitives run under the transformation (only the primal is needed).
  auto [y, yt] = jvp([&](const Array& a) { return lax::add(a, ll::geqrf(x).first); },
                     std::make_tuple(x), std::make_tuple(x));
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_EQ(testing::compare(to_doubles(yt), to_doubles(x), 0, 0), "");
}

// Pivoted qr differentiates through the permuted matrix (as JAX's rule): on inputs whose
// column norms are far apart the permutation is locally constant, so central differences of
// the full function (permutation included) are the reference.
TEST(LinalgQrRaw, PivotedQrGradientMatchesFiniteDifferences) {
  testing::X64Scope x64;
  for (Dims d : std::vector<Dims>{{5, 3}, {4, 4}, {3, 1}}) {
    Array x = random_array({2, d.m, d.n}, DType::kFloat64);
    std::vector<double> sc(static_cast<size_t>(d.n));
    for (int64_t j = 0; j < d.n; ++j) sc[j] = std::pow(4.0, static_cast<double>((j * 2) % d.n));
    x = numpy::multiply(x, numpy::array(sc, {d.n}));
    Array cq = random_array({2, d.m, d.n}, DType::kFloat64);
    Array cr = random_array({2, d.n, d.n}, DType::kFloat64);
    auto f = [&](const Array& a) {
      std::vector<Array> qrp = ll::qr(a, true, false);
      // Sign-normalized (R's diagonal positive), so the function is smooth.
      Array s = lax::sign(numpy::diagonal(qrp[1], 0, -2, -1));
      Array q = lax::mul(qrp[0], numpy::expand_dims(s, -2));
      Array r = lax::mul(qrp[1], numpy::expand_dims(s, -1));
      return lax::add(numpy::sum(lax::mul(q, cq)), numpy::sum(lax::mul(r, cr)));
    };
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
      EXPECT_NEAR(g[i], fd, 1e-5 * std::max(1.0, std::abs(fd)))
          << d.m << "x" << d.n << " element " << i;
    }
    // The permutation's tangent is float0.
    auto [po, to] = jvp([](const Array& a) { return ll::qr(a, true, false)[2]; },
                        std::make_tuple(x), std::make_tuple(x));
    EXPECT_EQ(to.dtype(), DType::kFloat0);
  }
  Array wide = random_array({2, 4}, DType::kFloat64);
  EXPECT_ERROR(NotImplementedError,
               grad([](const Array& a) { return numpy::sum(ll::qr(a, true, false)[1]); })(wide),
               "Unimplemented case of QR decomposition derivative");
}

// ---------------------------------------------------------------- vmap, jit, threads

TEST(LinalgQrRaw, VmapMatchesALoopAndJitMatchesEager) {
  Array x = random_array({5, 4, 3}, DType::kFloat32);  // vmapped over axis 1 (size 4)
  Array t = random_array({4, 2}, DType::kFloat32, -1.0, 1.0);
  Array j = numpy::zeros({3}, DType::kInt32);  // unbatched
  using F2 = std::function<Array(const Array&, const Array&)>;
  std::vector<F2> fs = {
      [](const Array& a, const Array&) { return ll::geqrf(a).first; },
      [](const Array& a, const Array&) { return ll::geqrf(a).second; },
      [&](const Array& a, const Array&) { return ll::geqp3(a, j)[0]; },
      [&](const Array& a, const Array&) { return ll::geqp3(a, j)[1]; },
      [](const Array& a, const Array& u) { return ll::householder_product(a, u); },
      [](const Array& a, const Array&) { return ll::qr(a, true, false)[1]; },
      [](const Array& a, const Array&) { return ll::qr(a, true, true)[0]; },
      [](const Array& a, const Array&) { return ll::qr(a, true, true)[2]; },
      [](const Array& a, const Array&) { return linalg::qr(a, "raw")[0]; },
      [](const Array& a, const Array&) { return linalg::scipy::qr(a, "raw", true)[2]; },
  };
  for (size_t i = 0; i < fs.size(); ++i) {
    F2 f = fs[i];
    std::vector<Array> loop;
    for (int64_t b = 0; b < 4; ++b)
      loop.push_back(f(lax::index_in_dim(x, b, 1, false), lax::index_in_dim(t, b, 0, false)));
    Array v = vmap(f, {1, 0})(x, t);
    EXPECT_EQ(testing::compare(to_doubles(v), to_doubles(numpy::stack(loop)), 1e-5, 1e-5), "")
        << "function " << i;
    Array xb = lax::index_in_dim(x, 0, 1, false), tb = lax::index_in_dim(t, 0, 0, false);
    EXPECT_EQ(testing::compare(to_doubles(jit(f)(xb, tb)), to_doubles(f(xb, tb)), 0, 0), "")
        << "function " << i;
  }
  // geqp3 with jpvt batched and a not (a broadcast inside the rule).
  Array a = random_array({4, 3}, DType::kFloat64);
  Array jp = numpy::array(std::vector<int32_t>{0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0}, {4, 3});
  auto piv = [&](const Array& jj) { return ll::geqp3(a, jj)[1]; };
  std::vector<Array> loop;
  for (int64_t b = 0; b < 4; ++b) loop.push_back(piv(lax::index_in_dim(jp, b, 0, false)));
  EXPECT_EQ(to_doubles(vmap(piv)(jp)), to_doubles(numpy::stack(loop)));
}

TEST(LinalgQrRaw, BatchedResultsDoNotDependOnTheThreadCount) {
  Array x = random_array({9, 6, 5}, DType::kFloat64);
  Array j = numpy::zeros({9, 5}, DType::kInt32);
  auto run = [&] {
    std::vector<double> all;
    auto [h, taus] = ll::geqrf(x);
    std::vector<Array> g = ll::geqp3(x, j);
    for (const Array& a :
         {h, taus, g[0], g[1], g[2], ll::householder_product(h, taus), ll::qr(x, true, false)[0]}) {
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
}

// ---------------------------------------------------------------- errors

TEST(LinalgQrRaw, ErrorsNameTheFunctionAndTheFix) {
  testing::X64Scope x64;  // float64 taus against float32 a
  Array v = numpy::zeros({3}, DType::kFloat32);
  Array m = numpy::zeros({4, 3}, DType::kFloat32);
  EXPECT_ERROR(ValueError, ll::geqrf(v), "Argument to QR decomposition must have ndims >= 2");
  EXPECT_ERROR(TypeError, ll::geqrf(numpy::zeros({2, 2}, DType::kInt32)), "complex64");
  EXPECT_ERROR(ValueError, ll::geqp3(v, numpy::zeros({3}, DType::kInt32)),
               "Argument to column-pivoted QR decomposition must have ndims >= 2");
  EXPECT_ERROR(ValueError, ll::geqp3(m, numpy::zeros({4}, DType::kInt32)),
               "Type mismatch for pivoted QR decomposition");
  EXPECT_ERROR(ValueError, ll::geqp3(m, numpy::zeros({2, 3}, DType::kInt32)),
               "Type mismatch for pivoted QR decomposition");
  EXPECT_ERROR(TypeError, ll::geqp3(m, numpy::zeros({3}, DType::kFloat32)), "int32");
  EXPECT_ERROR(ValueError, ll::householder_product(v, v),
               "Argument to Householder product must have ndims >= 2");
  EXPECT_ERROR(ValueError, ll::householder_product(m, numpy::zeros({4}, DType::kFloat32)),
               "Type mismatch for Householder product");
  EXPECT_ERROR(ValueError, ll::householder_product(m, numpy::zeros({3}, DType::kFloat64)),
               "Type mismatch for Householder product");
  EXPECT_ERROR(ValueError, ll::householder_product(m, numpy::zeros({2, 3}, DType::kFloat32)),
               "Type mismatch for Householder product");
  EXPECT_ERROR(ValueError,
               ll::householder_product(numpy::zeros({3, 4}, DType::kFloat32),
                                       numpy::zeros({3}, DType::kFloat32)),
               "at least as many rows as columns");
  EXPECT_ERROR(ValueError, ll::qr(v, true, false), "ndims >= 2");
  EXPECT_ERROR(ValueError, linalg::qr(m, "economic"), "Unsupported QR decomposition mode");
  EXPECT_ERROR(ValueError, linalg::scipy::qr(m, "reduced", true),
               "Unsupported QR decomposition mode");
}

}  // namespace
}  // namespace tessera
