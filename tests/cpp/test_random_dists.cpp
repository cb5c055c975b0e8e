// tessera::random's distributions of random_dists.h (gamma and its family, poisson, binomial,
// geometric, the closed forms, multivariate_normal, orthogonal).
//
// References, all independent of src/: the regularized incomplete gamma and beta functions
// written here in double (Numerical Recipes' series and continued fractions) and closed-form
// CDFs/PMFs for Kolmogorov-Smirnov and chi-square tests with FIXED keys and bounds at p < 1e-6
// (they cannot flake: the keys are fixed); sample moments within 6 standard errors; gamma's
// derivative in `a` against the implicit derivative -dF/da / dF/dx of that incomplete gamma,
// dF/da by float64 central differences; vmap over keys against the per-key loop; jit against
// eager (bitwise); and a table of samples produced by the Python implementation
// (tessera/_src/random_dists.py at commit bda946f, before the port) for one fixed key per
// function, compared bit for bit: it pins the C++ port as the same algorithm, key use and
// float operations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "tessera/config.h"
#include "tessera/jit.h"
#include "tessera/lax.h"
#include "tessera/linalg_solve.h"
#include "tessera/random.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace rnd = tessera::random;
namespace tnp = tessera::numpy;
using testing::to_doubles;

constexpr double kPi = std::numbers::pi;

struct X64 {
  explicit X64(bool on) : saved(x64_enabled()) { set_x64_enabled(on); }
  ~X64() { set_x64_enabled(saved); }
  X64(const X64&) = delete;
  X64& operator=(const X64&) = delete;
  bool saved;
};

Array key_of(int64_t i) { return rnd::fold_in(rnd::key(20241204), i); }

Array f32s(const std::vector<double>& v) {
  return tnp::array(v, Shape{static_cast<int64_t>(v.size())}, DType::kFloat32);
}

// ---------------------------------------------------------------- references (double)

// P(a, x): the regularized lower incomplete gamma (series below a + 1, Lentz's continued
// fraction for Q above).
double gammp(double a, double x) {
  if (x <= 0) return 0.0;
  const double lg = std::lgamma(a);
  if (x < a + 1) {
    double ap = a, sum = 1.0 / a, del = sum;
    for (int n = 0; n < 100000; ++n) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (std::abs(del) < std::abs(sum) * 1e-16) break;
    }
    return sum * std::exp(-x + a * std::log(x) - lg);
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-16) break;
  }
  return 1 - std::exp(-x + a * std::log(x) - lg) * h;
}

// I_x(a, b): the regularized incomplete beta (the continued fraction on the side where it
// converges).
double betacf(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m < 100000; ++m) {
    const double m2 = 2 * m;
    double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-16) break;
  }
  return h;
}
double betai(double a, double b, double x) {
  if (x <= 0) return 0.0;
  if (x >= 1) return 1.0;
  const double bt = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                             a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a;
  return 1 - bt * betacf(b, a, 1 - x) / b;
}

double norm_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double t_cdf(double x, double df) {
  const double ib = 0.5 * betai(df / 2, 0.5, df / (df + x * x));
  return x > 0 ? 1 - ib : ib;
}

double ks_statistic(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}
// The KS statistic's 1 - 1e-6 quantile (Dvoretzky-Kiefer-Wolfowitz-Massart).
double ks_bound(size_t n) {
  return std::sqrt(-std::log(1e-6 / 2) / 2) / std::sqrt(static_cast<double>(n));
}
double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}
double variance(const std::vector<double>& x) {
  const double m = mean(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return s / static_cast<double>(x.size());
}

// Chi-square of integer samples against pmf over bins with expected count >= 20 (both tails
// lumped into the end bins), below the chi2(dof) 1 - 1e-6 quantile (Wilson-Hilferty with
// z = 4.75).
void check_discrete(const std::vector<double>& x, const std::function<double(int64_t)>& pmf,
                    const std::string& what) {
  const double n = static_cast<double>(x.size());
  int64_t lo = 0;
  double cum = 0;
  while (n * (cum + pmf(lo)) < 20) cum += pmf(lo++);
  std::vector<double> expected, observed;
  expected.push_back(n * (cum + pmf(lo)));
  int64_t hi = lo;
  for (;;) {
    const double p = pmf(hi + 1);
    double tail = 1;
    for (double e : expected) tail -= e / n;
    if (n * p < 20 || n * (tail - p) < 20) break;
    expected.push_back(n * p);
    ++hi;
  }
  double used = 0;
  for (double e : expected) used += e;
  expected.push_back(n - used);  // the upper tail
  observed.assign(expected.size(), 0.0);
  for (double v : x) {
    ASSERT_EQ(v, std::round(v)) << what;
    const int64_t k = static_cast<int64_t>(v);
    const size_t bin = k <= lo ? 0 : k > hi ? expected.size() - 1 : static_cast<size_t>(k - lo);
    observed[bin] += 1;
  }
  double chi2 = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    chi2 += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  const double dof = static_cast<double>(expected.size() - 1);
  const double z = 4.75, c = 2 / (9 * dof);
  const double q = dof * std::pow(1 - c + z * std::sqrt(c), 3);
  EXPECT_LT(chi2, q) << what << " dof " << dof;
}

double log_factorial(int64_t k) { return std::lgamma(static_cast<double>(k) + 1); }

// ---------------------------------------------------------------- the Python pins

struct Pin {
  const char* name;
  Shape shape;
  DType dtype;
  std::vector<uint32_t> words;  // float32 bits or int32 values
};

// Generated from the Python implementation before the port (see the file comment): each row
// is what tessera.random.<name>(fold_in(key(20241204), i), ...) returned, as in pinned_draw.
const std::vector<Pin>& pins() {
  static const std::vector<Pin> p = {
      {"gamma",
       {6},
       DType::kFloat32,
       {0x3750b88fu, 0x3f0aa946u, 0x40414e8eu, 0x40c6ab1au, 0x32086d67u, 0x4155319eu}},
      {"loggamma",
       {6},
       DType::kFloat32,
       {0xbe867160u, 0xbf2774b5u, 0x3f5e29dau, 0x4002c472u, 0xc1d63482u, 0x40211c3au}},
      {"beta", {3}, DType::kFloat32, {0x3f7320e8u, 0x3ddbc57fu, 0x3f1db6e9u}},
      {"dirichlet",
       {2, 4},
       DType::kFloat32,
       {0x3daeac01u, 0x3d85197bu, 0x3ef3effbu, 0x3ebf1ea6u, 0x3b9d9905u, 0x3dcd73f7u, 0x3f18e565u,
        0x3e9861d2u}},
      {"chisquare", {4}, DType::kFloat32, {0x3e8a3bdau, 0x3d4145f2u, 0x40a959c3u, 0x41285a49u}},
      {"t", {3}, DType::kFloat32, {0x4048af98u, 0x4005a221u, 0x3e3d7da7u}},
      {"f", {2}, DType::kFloat32, {0x40a3f78bu, 0x3eb611ecu}},
      {"generalized_normal",
       {5},
       DType::kFloat32,
       {0x3faff1cau, 0xbf68a8a1u, 0x3ea2e018u, 0x3f1b6451u, 0xbe00e68bu}},
      {"ball",
       {2, 3},
       DType::kFloat32,
       {0x3d9fedc4u, 0xbe996f27u, 0xbf5aa591u, 0x3f09e9c6u, 0xbdb3815du, 0x3f1c4e95u}},
      {"poisson",
       {6},
       DType::kInt32,
       {0x00000000u, 0x00000006u, 0x00000007u, 0x0000000cu, 0x00000040u, 0x000003e4u}},
      {"binomial", {4}, DType::kFloat32, {0x00000000u, 0x41400000u, 0x41a80000u, 0x44638000u}},
      {"lognormal", {4}, DType::kFloat32, {0x3fbc6f3du, 0x3f1c3647u, 0x3ed0155eu, 0x3f811920u}},
      {"pareto", {3}, DType::kFloat32, {0x400eb215u, 0x3fd7c891u, 0x3f95a082u}},
      {"maxwell", {4}, DType::kFloat32, {0x3fc96f24u, 0x3f877c86u, 0x3f453eefu, 0x3f8680e0u}},
      {"double_sided_maxwell",
       {4},
       DType::kFloat32,
       {0x3fb9cc09u, 0x40275f6eu, 0x401151d7u, 0x40367a26u}},
      {"geometric", {3}, DType::kInt32, {0x00000003u, 0x00000001u, 0x00000001u}},
      {"triangular",
       {5},
       DType::kFloat32,
       {0x3f343078u, 0x3eab98c0u, 0x3e88bcefu, 0x3e77f70cu, 0x3e0e4f4bu}},
      {"wald", {3}, DType::kFloat32, {0x3f5a835bu, 0x4107ba1du, 0x40d79e5eu}},
      {"mvn_cholesky",
       {2, 3},
       DType::kFloat32,
       {0x3e95efdcu, 0x3e3d15b8u, 0x3f81e339u, 0x3f5ccb2fu, 0x3f835756u, 0xbe759028u}},
      {"mvn_eigh",
       {2, 3},
       DType::kFloat32,
       {0x3e2d8df0u, 0x3d99e410u, 0x3f99eb9bu, 0x40163beeu, 0x3fb526f4u, 0x40147eecu}},
      {"mvn_svd",
       {2, 3},
       DType::kFloat32,
       {0x4010d571u, 0xbfd7dcceu, 0xbea0191eu, 0x3fe294ccu, 0xbfc18ce0u, 0xbfee0b8cu}},
      {"orthogonal",
       {2, 3, 3},
       DType::kFloat32,
       {0xbe3796e0u, 0x3f6f1b07u, 0xbe9e36eeu, 0xbe86a70cu, 0x3e83abaau, 0x3f6e0d64u, 0x3f72afadu,
        0x3e7defddu, 0x3e4c51b0u, 0x3eb8da24u, 0x3f1987f5u, 0x3f36d0ddu, 0xbe882ba0u, 0xbf2af1f4u,
        0x3f31fbd0u, 0xbf64d180u, 0x3ee1c2c1u, 0x3da714a9u}},
      {"gamma_grad", {4}, DType::kFloat32, {0x3d977f17u, 0x3fd1702du, 0x3f1abd10u, 0x3f7241a9u}},
      {"loggamma_grad", {4}, DType::kFloat32, {0x4100d239u, 0x3f79d4cbu, 0x3eabd0e6u, 0x3e019eddu}},
  };
  return p;
}

Array pinned_draw(const std::string& name) {
  const Array a6 = f32s({0.3, 1.0, 2.5, 7.0, 0.05, 15.0});
  const Array cov = tnp::array({{2.0, 0.5, 0.1}, {0.5, 1.0, 0.3}, {0.1, 0.3, 0.8}});
  const Array mu = f32s({1.0, -1.0, 0.5});
  if (name == "gamma") return rnd::gamma(key_of(1), a6);
  if (name == "loggamma") return rnd::loggamma(key_of(2), a6);
  if (name == "beta") return rnd::beta(key_of(3), f32s({0.5, 2.0, 3.0}), f32s({0.7, 1.5, 4.0}));
  if (name == "dirichlet") return rnd::dirichlet(key_of(4), f32s({0.5, 1.0, 2.0, 3.0}), Shape{2});
  if (name == "chisquare") return rnd::chisquare(key_of(5), f32s({1.0, 2.0, 5.0, 10.0}));
  if (name == "t") return rnd::t(key_of(6), f32s({1.0, 3.0, 10.0}), {3});
  if (name == "f") return rnd::f(key_of(7), f32s({2.0, 5.0}), f32s({3.0, 8.0}));
  if (name == "generalized_normal") return rnd::generalized_normal(key_of(8), 1.5, {5});
  if (name == "ball") return rnd::ball(key_of(9), 3, 2, {2});
  if (name == "poisson") return rnd::poisson(key_of(10), f32s({0.5, 3.0, 9.5, 12.0, 50.0, 1000.0}));
  if (name == "binomial")
    return rnd::binomial(key_of(11), f32s({5.0, 20.0, 100.0, 1000.0}), f32s({0.3, 0.6, 0.2, 0.9}));
  if (name == "lognormal") return rnd::lognormal(key_of(12), 0.5, Shape{4});
  if (name == "pareto") return rnd::pareto(key_of(13), f32s({1.0, 2.0, 3.0}));
  if (name == "maxwell") return rnd::maxwell(key_of(14), {4});
  if (name == "double_sided_maxwell") return rnd::double_sided_maxwell(key_of(15), 1.0, 2.0, {4});
  if (name == "geometric") return rnd::geometric(key_of(16), f32s({0.1, 0.5, 0.9}));
  if (name == "triangular") return rnd::triangular(key_of(17), 0.0, 0.3, 1.0, Shape{5});
  if (name == "wald") return rnd::wald(key_of(18), f32s({0.5, 1.0, 3.0}));
  if (name == "mvn_cholesky")
    return rnd::multivariate_normal(key_of(19), mu, cov, Shape{2}, std::nullopt, "cholesky");
  if (name == "mvn_eigh")
    return rnd::multivariate_normal(key_of(19), mu, cov, Shape{2}, std::nullopt, "eigh");
  if (name == "mvn_svd")
    return rnd::multivariate_normal(key_of(19), mu, cov, Shape{2}, std::nullopt, "svd");
  if (name == "orthogonal") return rnd::orthogonal(key_of(20), 3, {2});
  const Array a4 = f32s({0.3, 1.0, 2.5, 7.0});
  if (name == "gamma_grad")
    return grad([](const Array& a) { return tnp::sum(rnd::gamma(key_of(21), a)); })(a4);
  if (name == "loggamma_grad")
    return grad([](const Array& a) { return tnp::sum(rnd::loggamma(key_of(22), a)); })(a4);
  throw std::runtime_error("no pinned draw " + name);
}

std::vector<uint32_t> words_of(const Array& a) {
  std::vector<uint32_t> w(static_cast<size_t>(a.size()));
  Array c = tnp::asarray(a);
  std::memcpy(w.data(), c.raw_data(), w.size() * 4);
  return w;
}

TEST(RandomDists, SameSamplesAsThePythonImplementation) {
  ASSERT_FALSE(pins().empty());
  for (const Pin& p : pins()) {
    const Array got = pinned_draw(p.name);
    ASSERT_EQ(got.shape(), p.shape) << p.name;
    ASSERT_EQ(got.dtype(), p.dtype) << p.name;
    EXPECT_EQ(words_of(got), p.words) << p.name;
  }
}

// ---------------------------------------------------------------- statistics

// 2^17 draws: the KS bound at p < 1e-6 is ~0.0075 (the Python tests draw 2^18 and check that
// 2% errors are caught).
constexpr int64_t kN = 1 << 17;

TEST(RandomDists, GammaFamilyKolmogorovSmirnov) {
  for (double a : {0.05, 0.3, 1.0, 2.5, 9.0}) {
    const std::vector<double> x = to_doubles(rnd::gamma(key_of(100), a, Shape{kN}));
    for (double v : x) ASSERT_GE(v, 0.0) << a;
    EXPECT_LT(ks_statistic(x, [a](double v) { return gammp(a, v); }), ks_bound(x.size()))
        << "gamma a=" << a;
    if (a >= 1) {
      EXPECT_NEAR(mean(x), a, 6 * std::sqrt(a / kN)) << a;
      EXPECT_NEAR(variance(x), a, 6 * a * std::sqrt((6 / a + 2) / kN)) << a;
    }
    // loggamma: exp of it is Gamma(a); its CDF at y is P(a, e^y).
    const std::vector<double> y = to_doubles(rnd::loggamma(key_of(101), a, Shape{kN}));
    EXPECT_LT(ks_statistic(y, [a](double v) { return gammp(a, std::exp(v)); }), ks_bound(y.size()))
        << "loggamma a=" << a;
  }
  const std::vector<double> c = to_doubles(rnd::chisquare(key_of(102), 3.0, Shape{kN}));
  EXPECT_LT(ks_statistic(c, [](double v) { return gammp(1.5, v / 2); }), ks_bound(kN));
  for (auto [a, b] : {std::pair{0.5, 0.7}, {2.0, 5.0}, {8.0, 3.0}}) {
    const std::vector<double> x = to_doubles(rnd::beta(key_of(103), a, b, Shape{kN}));
    EXPECT_LT(ks_statistic(x, [a, b](double v) { return betai(a, b, v); }), ks_bound(kN))
        << "beta " << a << " " << b;
  }
  for (double df : {1.0, 4.0, 30.0}) {
    const std::vector<double> x = to_doubles(rnd::t(key_of(104), df, {kN}));
    EXPECT_LT(ks_statistic(x, [df](double v) { return t_cdf(v, df); }), ks_bound(kN)) << df;
  }
  // F(d1, d2): I_{d1 x / (d1 x + d2)}(d1 / 2, d2 / 2).
  const std::vector<double> fx = to_doubles(rnd::f(key_of(105), 4.0, 7.0, Shape{kN}));
  EXPECT_LT(ks_statistic(fx, [](double v) { return betai(2.0, 3.5, 4 * v / (4 * v + 7)); }),
            ks_bound(kN));
  // generalized_normal(p): |x|^p ~ Gamma(1/p), symmetric: F(x) = 1/2 + sign(x) P(1/p, |x|^p)/2.
  for (double p : {0.7, 1.0, 2.0, 4.0}) {
    const std::vector<double> x = to_doubles(rnd::generalized_normal(key_of(106), p, {kN}));
    auto cdf = [p](double v) {
      const double g = 0.5 * gammp(1 / p, std::pow(std::abs(v), p));
      return v < 0 ? 0.5 - g : 0.5 + g;
    };
    EXPECT_LT(ks_statistic(x, cdf), ks_bound(kN)) << "generalized_normal " << p;
  }
}

TEST(RandomDists, DirichletAndBall) {
  const std::vector<double> alpha = {0.5, 1.5, 3.0};
  const Array x = rnd::dirichlet(key_of(110), f32s(alpha), Shape{kN});
  ASSERT_EQ(x.shape(), (Shape{kN, 3}));
  const std::vector<double> v = to_doubles(x);
  const double a0 = alpha[0] + alpha[1] + alpha[2];
  for (int64_t i = 0; i < kN; ++i)
    ASSERT_NEAR(v[3 * i] + v[3 * i + 1] + v[3 * i + 2], 1.0, 1e-5) << i;
  // Each marginal is Beta(alpha_j, a0 - alpha_j).
  for (int j = 0; j < 3; ++j) {
    std::vector<double> m(kN);
    for (int64_t i = 0; i < kN; ++i) m[i] = v[3 * i + j];
    const double a = alpha[j], b = a0 - a;
    EXPECT_LT(ks_statistic(m, [a, b](double t) { return betai(a, b, t); }), ks_bound(kN)) << j;
  }
  // ball(d, p): inside the unit ball; the radius r has CDF r^d (uniform in the ball).
  for (auto [d, p] : {std::pair{3, 2.0}, {2, 1.0}, {4, 3.0}}) {
    const Array b = rnd::ball(key_of(111), d, p, {kN});
    ASSERT_EQ(b.shape(), (Shape{kN, d}));
    const std::vector<double> w = to_doubles(b);
    std::vector<double> r(kN);
    for (int64_t i = 0; i < kN; ++i) {
      double s = 0;
      for (int j = 0; j < d; ++j) s += std::pow(std::abs(w[i * d + j]), p);
      r[i] = std::pow(s, 1 / p);
    }
    EXPECT_LT(ks_statistic(r, [d](double t) { return std::pow(std::clamp(t, 0.0, 1.0), d); }),
              ks_bound(kN))
        << "ball " << d << " " << p;
  }
}

TEST(RandomDists, CountsChiSquare) {
  for (double lam : {0.0, 0.7, 4.0, 9.99, 10.0, 37.5, 400.0}) {
    const std::vector<double> x = to_doubles(rnd::poisson(key_of(120), lam, Shape{kN}));
    if (lam == 0) {
      for (double v : x) ASSERT_EQ(v, 0.0);
      continue;
    }
    check_discrete(
        x,
        [lam](int64_t k) {
          return std::exp(-lam + static_cast<double>(k) * std::log(lam) - log_factorial(k));
        },
        "poisson " + std::to_string(lam));
  }
  for (auto [n, p] :
       {std::pair{10.0, 0.3}, {25.0, 0.8}, {60.0, 0.5}, {1000.0, 0.03}, {2000.0, 0.93}}) {
    const std::vector<double> x = to_doubles(rnd::binomial(key_of(121), n, p, Shape{kN}));
    const int64_t ni = static_cast<int64_t>(n);
    check_discrete(
        x,
        [ni, p](int64_t k) {
          if (k < 0 || k > ni) return 0.0;
          return std::exp(log_factorial(ni) - log_factorial(k) - log_factorial(ni - k) +
                          static_cast<double>(k) * std::log(p) +
                          static_cast<double>(ni - k) * std::log1p(-p));
        },
        "binomial " + std::to_string(n) + " " + std::to_string(p));
  }
  for (double p : {0.05, 0.5, 0.9}) {
    const std::vector<double> x = to_doubles(rnd::geometric(key_of(122), p, Shape{kN}));
    check_discrete(
        x, [p](int64_t k) { return k < 1 ? 0.0 : std::pow(1 - p, static_cast<double>(k - 1)) * p; },
        "geometric " + std::to_string(p));
  }
}

TEST(RandomDists, ClosedFormsKolmogorovSmirnov) {
  struct Case {
    const char* name;
    std::function<Array(const Array&)> draw;
    std::function<double(double)> cdf;
  };
  const double mu = 1.7;
  const std::vector<Case> cases = {
      {"lognormal", [](const Array& k) { return rnd::lognormal(k, 0.6, Shape{kN}); },
       [](double x) { return x <= 0 ? 0.0 : norm_cdf(std::log(x) / 0.6); }},
      {"pareto", [](const Array& k) { return rnd::pareto(k, 2.5, Shape{kN}); },
       [](double x) { return x < 1 ? 0.0 : 1 - std::pow(x, -2.5); }},
      {"maxwell", [](const Array& k) { return rnd::maxwell(k, {kN}); },
       [](double x) {
         return x <= 0
                    ? 0.0
                    : std::erf(x / std::sqrt(2.0)) - std::sqrt(2 / kPi) * x * std::exp(-x * x / 2);
       }},
      {"double_sided_maxwell",
       [](const Array& k) { return rnd::double_sided_maxwell(k, 1.0, 2.0, {kN}); },
       [](double x) {
         const double z = std::abs(x - 1.0) / 2.0;
         const double m =
             std::erf(z / std::sqrt(2.0)) - std::sqrt(2 / kPi) * z * std::exp(-z * z / 2);
         return x < 1.0 ? 0.5 - m / 2 : 0.5 + m / 2;
       }},
      {"triangular", [](const Array& k) { return rnd::triangular(k, -1.0, 0.5, 2.0, Shape{kN}); },
       [](double x) {
         if (x <= -1) return 0.0;
         if (x >= 2) return 1.0;
         if (x <= 0.5) return (x + 1) * (x + 1) / (3 * 1.5);
         return 1 - (2 - x) * (2 - x) / (3 * 1.5);
       }},
      {"wald", [mu](const Array& k) { return rnd::wald(k, mu, Shape{kN}); },
       [mu](double x) {
         if (x <= 0) return 0.0;
         const double s = std::sqrt(1 / x);
         return norm_cdf(s * (x / mu - 1)) + std::exp(2 / mu) * norm_cdf(-s * (x / mu + 1));
       }},
  };
  for (const Case& c : cases) {
    const std::vector<double> x = to_doubles(c.draw(key_of(130)));
    ASSERT_EQ(x.size(), static_cast<size_t>(kN)) << c.name;
    EXPECT_LT(ks_statistic(x, c.cdf), ks_bound(kN)) << c.name;
  }
}

TEST(RandomDists, MultivariateNormalAndOrthogonal) {
  const Array cov = tnp::array({{2.0, 0.6, -0.3}, {0.6, 1.0, 0.2}, {-0.3, 0.2, 0.5}});
  const std::vector<double> c = to_doubles(cov);
  const std::vector<double> m = {1.0, -2.0, 0.5};
  for (const char* method : {"cholesky", "eigh", "svd"}) {
    const Array x =
        rnd::multivariate_normal(key_of(140), f32s(m), cov, Shape{kN}, std::nullopt, method);
    ASSERT_EQ(x.shape(), (Shape{kN, 3}));
    const std::vector<double> v = to_doubles(x);
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int64_t r = 0; r < kN; ++r) s += v[3 * r + i];
      EXPECT_NEAR(s / kN, m[i], 6 * std::sqrt(c[4 * i] / kN)) << method << i;
      for (int j = 0; j < 3; ++j) {
        double cij = 0;
        for (int64_t r = 0; r < kN; ++r) cij += (v[3 * r + i] - m[i]) * (v[3 * r + j] - m[j]);
        cij /= kN;
        // Var((x_i - m_i)(x_j - m_j)) = c_ii c_jj + c_ij^2.
        EXPECT_NEAR(cij, c[3 * i + j],
                    6 * std::sqrt((c[4 * i] * c[4 * j] + c[3 * i + j] * c[3 * i + j]) / kN))
            << method << i << j;
      }
      // Each coordinate is normal.
      std::vector<double> xi(kN);
      for (int64_t r = 0; r < kN; ++r) xi[r] = v[3 * r + i];
      const double sd = std::sqrt(c[4 * i]), mi = m[i];
      EXPECT_LT(ks_statistic(xi, [sd, mi](double t) { return norm_cdf((t - mi) / sd); }),
                ks_bound(kN))
          << method << i;
    }
  }
  // orthogonal: QᵀQ = I; Haar: the first column is uniform on the sphere S^2, so its first
  // coordinate is uniform on [-1, 1] (Archimedes).
  const Array q = rnd::orthogonal(key_of(141), 3, {kN / 4});
  ASSERT_EQ(q.shape(), (Shape{kN / 4, 3, 3}));
  const Array qtq = tnp::matmul(tnp::transpose(q, std::vector<int64_t>{0, 2, 1}), q);
  const std::vector<double> e = to_doubles(qtq - tnp::eye(3));
  for (double d : e) ASSERT_NEAR(d, 0.0, 1e-5);
  const std::vector<double> qv = to_doubles(q);
  std::vector<double> t(kN / 4);
  for (size_t i = 0; i < t.size(); ++i) t[i] = qv[9 * i];
  EXPECT_LT(ks_statistic(t, [](double s) { return std::clamp((s + 1) / 2, 0.0, 1.0); }),
            ks_bound(t.size()));
}

// Fresh parameters (drawn from the printed test seed) with fixed keys: the same CDF/PMF checks.
TEST(RandomDists, FreshParameters) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto draw = [&](double lo, double hi) {
    return static_cast<double>(static_cast<float>(lo + (hi - lo) * unit(testing::rng())));
  };
  constexpr int64_t n = 1 << 13;
  for (int rep = 0; rep < 3; ++rep) {
    const double a = draw(0.1, 12.0), b = draw(0.1, 12.0);
    const std::vector<double> g = to_doubles(rnd::gamma(key_of(160 + rep), a, Shape{n}));
    EXPECT_LT(ks_statistic(g, [a](double v) { return gammp(a, v); }), ks_bound(n))
        << "gamma a=" << a;
    const std::vector<double> x = to_doubles(rnd::beta(key_of(170 + rep), a, b, Shape{n}));
    EXPECT_LT(ks_statistic(x, [a, b](double v) { return betai(a, b, v); }), ks_bound(n))
        << "beta " << a << " " << b;
    const double lam = draw(0.2, 60.0);
    check_discrete(
        to_doubles(rnd::poisson(key_of(180 + rep), lam, Shape{n})),
        [lam](int64_t k) {
          return std::exp(-lam + static_cast<double>(k) * std::log(lam) - log_factorial(k));
        },
        "poisson " + std::to_string(lam));
    const int64_t cnt = 1 + static_cast<int64_t>(draw(0.0, 300.0));
    const double p = draw(0.02, 0.98);
    check_discrete(
        to_doubles(rnd::binomial(key_of(190 + rep), static_cast<double>(cnt), p, Shape{n})),
        [cnt, p](int64_t k) {
          if (k < 0 || k > cnt) return 0.0;
          return std::exp(log_factorial(cnt) - log_factorial(k) - log_factorial(cnt - k) +
                          static_cast<double>(k) * std::log(p) +
                          static_cast<double>(cnt - k) * std::log1p(-p));
        },
        "binomial " + std::to_string(cnt) + " " + std::to_string(p));
  }
}

// ---------------------------------------------------------------- gradients

// d sample / d a = -(dP/da) / (dP/dx) at the sample: the implicit reparameterization.
TEST(RandomDists, GammaGradientIsTheImplicitDerivative) {
  const std::vector<double> as = {0.2, 0.6, 1.0, 1.7, 4.0, 12.0};
  const Array a = f32s(as);
  const Array k = key_of(150);
  const std::vector<double> x = to_doubles(rnd::gamma(k, a));
  const std::vector<double> g =
      to_doubles(grad([&](const Array& al) { return tnp::sum(rnd::gamma(k, al)); })(a));
  const std::vector<double> lg =
      to_doubles(grad([&](const Array& al) { return tnp::sum(rnd::loggamma(k, al)); })(a));
  const std::vector<double> lx = to_doubles(rnd::loggamma(k, a));
  for (size_t i = 0; i < as.size(); ++i) {
    auto implicit = [&](double av, double xv) {
      const double h = 1e-5 * std::max(1.0, av);
      const double dpda = (gammp(av + h, xv) - gammp(av - h, xv)) / (2 * h);
      const double dpdx = std::exp(-xv + (av - 1) * std::log(xv) - std::lgamma(av));
      return -dpda / dpdx;
    };
    const double av = static_cast<double>(static_cast<float>(as[i]));
    const double want = implicit(av, x[i]);
    EXPECT_NEAR(g[i], want, 2e-3 * std::abs(want) + 1e-6) << "gamma a=" << as[i];
    // loggamma: d log x / d a = (dx/da) / x.
    const double xl = std::exp(lx[i]);
    const double want_l = implicit(av, xl) / xl;
    EXPECT_NEAR(lg[i], want_l, 2e-3 * std::abs(want_l) + 1e-6) << "loggamma a=" << as[i];
  }
}

// The gradient composes with jit (same bits as eager) and vmap over keys (the per-key loop).
TEST(RandomDists, GammaGradientUnderJitAndVmap) {
  const Array a = f32s({0.3, 1.5, 6.0});
  auto g = [](const Array& k, const Array& al) {
    return grad([&k](const Array& x) { return tnp::sum(rnd::gamma(k, x)); })(al);
  };
  const Array k = key_of(155);
  EXPECT_EQ(to_doubles(jit(g)(k, a)), to_doubles(g(k, a)));
  const Array keys = rnd::split(k, 3);
  const Array got = vmap(g, {0, std::nullopt})(keys, a);
  std::vector<Array> loop;
  for (int i = 0; i < 3; ++i) loop.push_back(g(lax::index_in_dim(keys, i, 0, false), a));
  EXPECT_EQ(to_doubles(got), to_doubles(tnp::stack(loop)));
  // beta's gradient flows through loggamma's rule: a sample grows with a (quantiles do).
  const Array gb = grad([&k](const Array& x) { return tnp::sum(rnd::beta(k, x, 2.0)); })(a);
  for (double v : to_doubles(gb)) EXPECT_TRUE(std::isfinite(v) && v > 0.0) << v;
}

// ---------------------------------------------------------------- transformations

std::vector<std::pair<std::string, std::function<Array(const Array&)>>> draws() {
  return {
      {"gamma",
       [](const Array& k) {
         return rnd::gamma(k, f32s({0.4, 3.0}), Shape{3, 2});
       }},
      {"beta", [](const Array& k) { return rnd::beta(k, 0.5, 2.0, Shape{4}); }},
      {"dirichlet",
       [](const Array& k) {
         return rnd::dirichlet(k, f32s({1.0, 2.0}));
       }},
      {"t", [](const Array& k) { return rnd::t(k, 3.0, {3}); }},
      {"poisson",
       [](const Array& k) {
         return rnd::poisson(k, f32s({2.0, 30.0}));
       }},
      {"binomial",
       [](const Array& k) {
         return rnd::binomial(k, 50.0, f32s({0.1, 0.7}));
       }},
      {"geometric", [](const Array& k) { return rnd::geometric(k, 0.3, Shape{3}); }},
      {"ball", [](const Array& k) { return rnd::ball(k, 3, 2, {2}); }},
      {"wald", [](const Array& k) { return rnd::wald(k, 2.0, Shape{3}); }},
      {"mvn",
       [](const Array& k) {
         return rnd::multivariate_normal(k, f32s({0.0, 1.0}), tnp::array({{1.0, 0.2}, {0.2, 2.0}}),
                                         Shape{3});
       }},
      {"orthogonal", [](const Array& k) { return rnd::orthogonal(k, 3); }},
  };
}

TEST(RandomDists, VmapOverKeysEqualsTheLoop) {
  const Array keys = rnd::split(rnd::key(7), 3);
  for (const auto& [name, f] : draws()) {
    const Array got = vmap(f)(keys);
    std::vector<Array> loop;
    for (int i = 0; i < 3; ++i) loop.push_back(f(lax::index_in_dim(keys, i, 0, false)));
    EXPECT_EQ(to_doubles(got), to_doubles(tnp::stack(loop))) << name;
    // Raw keys give the same samples.
    EXPECT_EQ(to_doubles(vmap(f)(rnd::key_data(keys))), to_doubles(got)) << name;
  }
}

TEST(RandomDists, JitEqualsEagerBitwise) {
  const Array k = rnd::key(11);
  for (const auto& [name, f] : draws()) {
    auto jf = jit(f);
    const std::vector<double> a = to_doubles(jf(k)), b = to_doubles(f(k));
    ASSERT_EQ(a.size(), b.size()) << name;
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_TRUE(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) << name << " " << i;
  }
}

// ---------------------------------------------------------------- shapes, dtypes, errors

TEST(RandomDists, ShapesDtypesAndSpecialValues) {
  const Array k = rnd::key(3);
  EXPECT_EQ(rnd::gamma(k, f32s({1.0, 2.0})).shape(), (Shape{2}));
  EXPECT_EQ(rnd::gamma(k, 2.0, Shape{2, 3}).shape(), (Shape{2, 3}));
  EXPECT_EQ(rnd::gamma(k, 2.0, Shape{0}).shape(), (Shape{0}));
  EXPECT_EQ(rnd::gamma(k, 2.0).dtype(), DType::kFloat32);
  EXPECT_EQ(rnd::gamma(k, 2.0, Shape{2}, DType::kFloat16).dtype(), DType::kFloat16);
  EXPECT_EQ(rnd::poisson(k, 3.0).dtype(), DType::kInt32);
  EXPECT_EQ(rnd::poisson(k, 3.0, Shape{2}, DType::kInt16).dtype(), DType::kInt16);
  EXPECT_EQ(rnd::geometric(k, 0.5, Shape{2}, DType::kUInt8).dtype(), DType::kUInt8);
  EXPECT_EQ(rnd::binomial(k, 5.0, 0.5).dtype(), DType::kFloat32);
  EXPECT_EQ(rnd::dirichlet(k, tnp::ones({2, 4})).shape(), (Shape{2, 4}));
  EXPECT_EQ(rnd::dirichlet(k, tnp::ones({4}), Shape{5}).shape(), (Shape{5, 4}));
  EXPECT_EQ(rnd::ball(k, 4, 2, {3}).shape(), (Shape{3, 4}));
  EXPECT_EQ(rnd::double_sided_maxwell(k, f32s({0.0, 1.0}), 1.0).shape(), (Shape{2, 2}));
  EXPECT_EQ(rnd::double_sided_maxwell(k, 0.0, 1.0, {3}).shape(), (Shape{3}));
  EXPECT_EQ(rnd::multivariate_normal(k, tnp::zeros({2}), tnp::eye(2)).shape(), (Shape{2}));
  EXPECT_EQ(rnd::orthogonal(k, 4, {2, 3}).shape(), (Shape{2, 3, 4, 4}));
  {
    X64 on(true);
    EXPECT_EQ(rnd::gamma(k, 2.0).dtype(), DType::kFloat64);
    EXPECT_EQ(rnd::poisson(k, 2.0).dtype(), DType::kInt64);
    const std::vector<double> x = to_doubles(rnd::gamma(k, 2.5, Shape{kN / 4}, DType::kFloat64));
    EXPECT_LT(ks_statistic(x, [](double v) { return gammp(2.5, v); }), ks_bound(x.size()));
  }
  // JAX's older counter layout (jax_threefry_partitionable=False): other samples, same law.
  {
    const std::vector<double> part = to_doubles(rnd::gamma(k, 2.5, Shape{kN / 4}));
    config::ScopedFlag flag("jax_threefry_partitionable", false);
    const std::vector<double> x = to_doubles(rnd::gamma(k, 2.5, Shape{kN / 4}));
    EXPECT_NE(x, part);
    EXPECT_LT(ks_statistic(x, [](double v) { return gammp(2.5, v); }), ks_bound(x.size()));
    check_discrete(
        to_doubles(rnd::poisson(k, 20.0, Shape{kN / 4})),
        [](int64_t j) {
          return std::exp(-20.0 + static_cast<double>(j) * std::log(20.0) - log_factorial(j));
        },
        "poisson, partitionable=False");
  }
  // binomial's special values: nan for p < 0, nan p and negative n; inf for infinite n; 0/n at
  // p = 0/1.
  const std::vector<double> b = to_doubles(rnd::binomial(
      k, f32s({5.0, 5.0, -1.0, INFINITY, 7.0, 7.0}), f32s({-0.1, NAN, 0.5, 0.5, 0.0, 1.0})));
  EXPECT_TRUE(std::isnan(b[0]) && std::isnan(b[1]) && std::isnan(b[2]));
  EXPECT_EQ(b[3], INFINITY);
  EXPECT_EQ(b[4], 0.0);
  EXPECT_EQ(b[5], 7.0);
  // Samples stay in their supports.
  for (double v : to_doubles(rnd::beta(k, 0.01, 0.01, Shape{256}))) ASSERT_TRUE(v >= 0 && v <= 1);
  for (double v : to_doubles(rnd::pareto(k, 3.0, Shape{256}))) ASSERT_GE(v, 1.0);
}

TEST(RandomDists, ErrorsAreJaxs) {
  const Array k = rnd::key(0);
  EXPECT_ERROR(ValueError, rnd::gamma(k, 1.0, Shape{2}, DType::kInt32),
               "dtype argument to `gamma` must be a float dtype, got int32");
  EXPECT_ERROR(ValueError, rnd::loggamma(k, 1.0, Shape{2}, DType::kInt32),
               "dtype argument to `gamma` must be a float dtype");
  EXPECT_ERROR(ValueError, rnd::poisson(k, 1.0, Shape{2}, DType::kFloat32),
               "dtype argument to `poisson` must be an int dtype, got float32");
  EXPECT_ERROR(ValueError, rnd::lognormal(k, 1.0, Shape{2}, DType::kInt32),
               "must be a float or complex dtype");
  EXPECT_ERROR(ValueError, rnd::gamma(k, f32s({1.0, 2.0}), Shape{3}),
               "Incompatible shapes for broadcasting: shapes=[(3,), (2,)]");
  EXPECT_ERROR(ValueError, rnd::gamma(k, f32s({1.0, 2.0}), Shape{}),
               "gamma parameter shapes must be broadcast-compatible with shape argument, and the "
               "result of broadcasting the shapes must equal the shape argument, but got result "
               "(2,) for shape argument ().");
  EXPECT_ERROR(ValueError, rnd::beta(k, f32s({1.0, 2.0}), f32s({1.0, 2.0, 3.0})),
               "Incompatible shapes for broadcasting");
  EXPECT_ERROR(TypeError, rnd::gamma(rnd::split(k, 2), 1.0),
               "gamma accepts a single key, but was given a key array of shape (2,) != (). Use "
               "jax.vmap for batching.");
  EXPECT_ERROR(TypeError, rnd::poisson(tnp::zeros({2}), 1.0), "unexpected PRNG key type");
  EXPECT_ERROR(ValueError, rnd::dirichlet(k, 1.0), "dirichlet requires alpha.ndim >= 1");
  EXPECT_ERROR(
      ValueError,
      rnd::multivariate_normal(k, tnp::zeros({2}), tnp::eye(2), std::nullopt, std::nullopt, "lu"),
      "method must be one of {'svd', 'eigh', 'cholesky'}");
  EXPECT_ERROR(ValueError, rnd::multivariate_normal(k, tnp::zeros({2}), tnp::eye(3)),
               "multivariate_normal requires cov.shape == (..., n, n) for n=2, but got cov.shape "
               "== (3, 3).");
  EXPECT_ERROR(ValueError, rnd::multivariate_normal(k, 1.0, tnp::eye(3)),
               "multivariate_normal requires mean.ndim >= 1, got mean.ndim == 0");
  EXPECT_ERROR(NotImplementedError, rnd::orthogonal(k, 3, {}, std::nullopt, 2),
               "m != n (semi-orthogonal matrices)");
}

}  // namespace
}  // namespace tessera
