// tessera::scipy::stats (include/tessera/scipy_stats.h) against SciPy through the test oracle
// (tests/oracle/oracle_scipy_stats.py): every distribution function on fresh random inputs
// (random broadcasting shapes, valid parameters, x also outside the support) in float32 and
// float64; mode, rankdata, sem and gaussian_kde.logpdf; JAX's values outside the support and
// for invalid parameters (hand-derived: -inf, 0, NaN where JAX's modules give them), far tails,
// dtype promotion and error messages; gradients of log-densities in x and the parameters
// against float64 central differences; vmap against a loop and jit against eager for a sample.
// The seed is printed (TESSERA_TEST_SEED reproduces a run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "tessera/scipy_stats.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

using namespace tessera;
using namespace tessera::testing;
namespace tnp = tessera::numpy;
namespace st = tessera::scipy::stats;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");
constexpr double kPi = std::numbers::pi;
constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64, kI32 = DType::kInt32;

using V = std::vector<Array>;
using Fn = std::function<Array(const V&)>;

double uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng());
}

// An argument's random values: uniform in [lo, hi], rounded to integers when `integer`.
struct Range {
  double lo, hi;
  bool integer = false;
};

Array values(const Shape& s, DType dt, const Range& r) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = r.integer ? std::round(uniform(r.lo, r.hi)) : uniform(r.lo, r.hi);
  return host_array(v, s, dt);
}

struct Case {
  std::string dist, fn;
  Fn f;
  std::vector<Range> ranges;
};

#define F2(D, F) [](const V& a) { return st::D::F(a[0], a[1]); }
#define F3(D, F) [](const V& a) { return st::D::F(a[0], a[1], a[2]); }
#define F4(D, F) [](const V& a) { return st::D::F(a[0], a[1], a[2], a[3]); }
#define F5(D, F) [](const V& a) { return st::D::F(a[0], a[1], a[2], a[3], a[4]); }

const Range kLoc{-1, 1}, kScale{0.5, 2}, kQ{0.002, 0.998}, kIntLoc{-1, 2, true};

std::vector<Case> univariate_cases() {
  std::vector<Case> c;
  const Range x{-4, 4};
  for (const char* fn : {"logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"}) {
    const std::string f = fn;
    const bool q = f == "ppf" || f == "isf";
    const std::vector<Range> r{q ? kQ : x, kLoc, kScale};
    // norm, logistic, cauchy share the function list
    const std::map<std::string, Fn> norm = {
        {"logpdf", F3(norm, logpdf)}, {"pdf", F3(norm, pdf)}, {"cdf", F3(norm, cdf)},
        {"logcdf", F3(norm, logcdf)}, {"sf", F3(norm, sf)},   {"logsf", F3(norm, logsf)},
        {"ppf", F3(norm, ppf)},       {"isf", F3(norm, isf)}};
    const std::map<std::string, Fn> logistic = {
        {"logpdf", F3(logistic, logpdf)}, {"pdf", F3(logistic, pdf)},
        {"cdf", F3(logistic, cdf)},       {"logcdf", F3(logistic, logcdf)},
        {"sf", F3(logistic, sf)},         {"logsf", F3(logistic, logsf)},
        {"ppf", F3(logistic, ppf)},       {"isf", F3(logistic, isf)}};
    const std::map<std::string, Fn> cauchy = {
        {"logpdf", F3(cauchy, logpdf)}, {"pdf", F3(cauchy, pdf)}, {"cdf", F3(cauchy, cdf)},
        {"logcdf", F3(cauchy, logcdf)}, {"sf", F3(cauchy, sf)},   {"logsf", F3(cauchy, logsf)},
        {"ppf", F3(cauchy, ppf)},       {"isf", F3(cauchy, isf)}};
    c.push_back({"norm", f, norm.at(f), r});
    c.push_back({"logistic", f, logistic.at(f), r});
    c.push_back({"cauchy", f, cauchy.at(f), r});
  }
  const Range xe{-1, 6};
  c.push_back({"expon", "logpdf", F3(expon, logpdf), {xe, kLoc, kScale}});
  c.push_back({"expon", "pdf", F3(expon, pdf), {xe, kLoc, kScale}});
  c.push_back({"expon", "cdf", F3(expon, cdf), {xe, kLoc, kScale}});
  c.push_back({"expon", "logcdf", F3(expon, logcdf), {xe, kLoc, kScale}});
  c.push_back({"expon", "sf", F3(expon, sf), {xe, kLoc, kScale}});
  c.push_back({"expon", "logsf", F3(expon, logsf), {xe, kLoc, kScale}});
  c.push_back({"expon", "ppf", F3(expon, ppf), {kQ, kLoc, kScale}});
  c.push_back({"laplace", "logpdf", F3(laplace, logpdf), {x, kLoc, kScale}});
  c.push_back({"laplace", "pdf", F3(laplace, pdf), {x, kLoc, kScale}});
  c.push_back({"laplace", "cdf", F3(laplace, cdf), {x, kLoc, kScale}});
  const Range xu{-2, 3};
  c.push_back({"uniform", "logpdf", F3(uniform, logpdf), {xu, kLoc, kScale}});
  c.push_back({"uniform", "pdf", F3(uniform, pdf), {xu, kLoc, kScale}});
  c.push_back({"uniform", "cdf", F3(uniform, cdf), {xu, kLoc, kScale}});
  c.push_back({"uniform", "ppf", F3(uniform, ppf), {kQ, kLoc, kScale}});
  const Range xg{-3, 3};
  c.push_back({"gumbel_l", "logpdf", F3(gumbel_l, logpdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_l", "pdf", F3(gumbel_l, pdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_l", "logcdf", F3(gumbel_l, logcdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_l", "cdf", F3(gumbel_l, cdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_l", "logsf", F3(gumbel_l, logsf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_l", "sf", F3(gumbel_l, sf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_l", "ppf", F3(gumbel_l, ppf), {kQ, kLoc, kScale}});
  c.push_back({"gumbel_r", "logpdf", F3(gumbel_r, logpdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_r", "pdf", F3(gumbel_r, pdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_r", "logcdf", F3(gumbel_r, logcdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_r", "cdf", F3(gumbel_r, cdf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_r", "logsf", F3(gumbel_r, logsf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_r", "sf", F3(gumbel_r, sf), {xg, kLoc, kScale}});
  c.push_back({"gumbel_r", "ppf", F3(gumbel_r, ppf), {kQ, kLoc, kScale}});
  // one shape parameter
  const Range xpos{-0.5, 8}, a{0.5, 5}, sloc{-0.5, 0.5};
  c.push_back({"gamma", "logpdf", F4(gamma, logpdf), {xpos, a, sloc, kScale}});
  c.push_back({"gamma", "pdf", F4(gamma, pdf), {xpos, a, sloc, kScale}});
  c.push_back({"gamma", "cdf", F4(gamma, cdf), {xpos, a, sloc, kScale}});
  c.push_back({"gamma", "logcdf", F4(gamma, logcdf), {xpos, a, sloc, kScale}});
  c.push_back({"gamma", "sf", F4(gamma, sf), {xpos, a, sloc, kScale}});
  c.push_back({"gamma", "logsf", F4(gamma, logsf), {xpos, a, sloc, kScale}});
  const Range df{1, 8};
  c.push_back({"chi2", "logpdf", F4(chi2, logpdf), {xpos, df, sloc, kScale}});
  c.push_back({"chi2", "pdf", F4(chi2, pdf), {xpos, df, sloc, kScale}});
  c.push_back({"chi2", "cdf", F4(chi2, cdf), {xpos, df, sloc, kScale}});
  c.push_back({"chi2", "logcdf", F4(chi2, logcdf), {xpos, df, sloc, kScale}});
  c.push_back({"chi2", "sf", F4(chi2, sf), {xpos, df, sloc, kScale}});
  c.push_back({"chi2", "logsf", F4(chi2, logsf), {xpos, df, sloc, kScale}});
  const Range tdf{0.5, 20};
  c.push_back({"t", "logpdf", F4(t, logpdf), {{-5, 5}, tdf, kLoc, kScale}});
  c.push_back({"t", "pdf", F4(t, pdf), {{-5, 5}, tdf, kLoc, kScale}});
  const Range xp{0.3, 6}, b{0.5, 4}, ploc{-0.3, 0.3}, pscale{0.5, 1.5};
  c.push_back({"pareto", "logpdf", F4(pareto, logpdf), {xp, b, ploc, pscale}});
  c.push_back({"pareto", "pdf", F4(pareto, pdf), {xp, b, ploc, pscale}});
  c.push_back({"pareto", "logcdf", F4(pareto, logcdf), {xp, b, ploc, pscale}});
  c.push_back({"pareto", "cdf", F4(pareto, cdf), {xp, b, ploc, pscale}});
  c.push_back({"pareto", "logsf", F4(pareto, logsf), {xp, b, ploc, pscale}});
  c.push_back({"pareto", "sf", F4(pareto, sf), {xp, b, ploc, pscale}});
  c.push_back({"pareto", "ppf", F4(pareto, ppf), {kQ, b, ploc, pscale}});
  // two shape parameters
  const Range xb{-0.2, 1.2}, ab{0.5, 5}, bloc{-0.1, 0.1}, bscale{0.8, 1.2};
  c.push_back({"beta", "logpdf", F5(beta, logpdf), {xb, ab, ab, bloc, bscale}});
  c.push_back({"beta", "pdf", F5(beta, pdf), {xb, ab, ab, bloc, bscale}});
  c.push_back({"beta", "cdf", F5(beta, cdf), {xb, ab, ab, bloc, bscale}});
  c.push_back({"beta", "logcdf", F5(beta, logcdf), {xb, ab, ab, bloc, bscale}});
  c.push_back({"beta", "sf", F5(beta, sf), {xb, ab, ab, bloc, bscale}});
  c.push_back({"beta", "logsf", F5(beta, logsf), {xb, ab, ab, bloc, bscale}});
  // truncnorm: bounds straddling 0, both left, both right
  for (const auto& [lo, hi] : std::vector<std::pair<Range, Range>>{
           {{-3, -0.5}, {0.3, 2.5}}, {{-4, -2.5}, {-2, -0.5}}, {{0.5, 1.5}, {2, 4}}}) {
    const Range xt{-4, 4};
    c.push_back({"truncnorm", "logpdf", F5(truncnorm, logpdf), {xt, lo, hi, kLoc, kScale}});
    c.push_back({"truncnorm", "pdf", F5(truncnorm, pdf), {xt, lo, hi, kLoc, kScale}});
    c.push_back({"truncnorm", "logcdf", F5(truncnorm, logcdf), {xt, lo, hi, kLoc, kScale}});
    c.push_back({"truncnorm", "cdf", F5(truncnorm, cdf), {xt, lo, hi, kLoc, kScale}});
    c.push_back({"truncnorm", "logsf", F5(truncnorm, logsf), {xt, lo, hi, kLoc, kScale}});
    c.push_back({"truncnorm", "sf", F5(truncnorm, sf), {xt, lo, hi, kLoc, kScale}});
  }
  // standardized families
  c.push_back({"gennorm", "logpdf", F2(gennorm, logpdf), {{-3, 3}, {0.5, 4}}});
  c.push_back({"gennorm", "pdf", F2(gennorm, pdf), {{-3, 3}, {0.5, 4}}});
  c.push_back({"gennorm", "cdf", F2(gennorm, cdf), {{-3, 3}, {0.5, 4}}});
  c.push_back({"vonmises", "logpdf", F2(vonmises, logpdf), {{-kPi, kPi}, {0.1, 20}}});
  c.push_back({"vonmises", "pdf", F2(vonmises, pdf), {{-kPi, kPi}, {0.1, 20}}});
  c.push_back({"wrapcauchy", "logpdf", F2(wrapcauchy, logpdf), {{-0.5, 6.8}, {0.05, 0.95}}});
  c.push_back({"wrapcauchy", "pdf", F2(wrapcauchy, pdf), {{-0.5, 6.8}, {0.05, 0.95}}});
  // discrete (integer counts, as SciPy defines them)
  const Range p{0.05, 0.95};
  c.push_back({"bernoulli", "logpmf", F3(bernoulli, logpmf), {{-2, 3, true}, p, kIntLoc}});
  c.push_back({"bernoulli", "pmf", F3(bernoulli, pmf), {{-2, 3, true}, p, kIntLoc}});
  c.push_back({"bernoulli", "cdf", F2(bernoulli, cdf), {{-1, 2}, p}});
  c.push_back({"bernoulli", "ppf", F2(bernoulli, ppf), {kQ, p}});
  const Range k{-2, 15, true}, mu{0.5, 10};
  c.push_back({"poisson", "logpmf", F3(poisson, logpmf), {k, mu, kIntLoc}});
  c.push_back({"poisson", "pmf", F3(poisson, pmf), {k, mu, kIntLoc}});
  c.push_back({"poisson", "cdf", F3(poisson, cdf), {{-2, 15}, mu, kIntLoc}});
  c.push_back({"poisson", "entropy", F2(poisson, entropy), {{0.05, 150}, kIntLoc}});
  c.push_back({"geom", "logpmf", F3(geom, logpmf), {{-1, 10, true}, p, kIntLoc}});
  c.push_back({"geom", "pmf", F3(geom, pmf), {{-1, 10, true}, p, kIntLoc}});
  const Range kb{-1, 12, true}, n{1, 10, true};
  c.push_back({"binom", "logpmf", F4(binom, logpmf), {kb, n, p, kIntLoc}});
  c.push_back({"binom", "pmf", F4(binom, pmf), {kb, n, p, kIntLoc}});
  c.push_back(
      {"nbinom", "logpmf", F4(nbinom, logpmf), {{-1, 15, true}, {0.5, 5}, {0.1, 0.9}, kIntLoc}});
  c.push_back({"nbinom", "pmf", F4(nbinom, pmf), {{-1, 15, true}, {0.5, 5}, {0.1, 0.9}, kIntLoc}});
  c.push_back({"betabinom", "logpmf", F5(betabinom, logpmf), {kb, n, ab, ab, kIntLoc}});
  c.push_back({"betabinom", "pmf", F5(betabinom, pmf), {kb, n, ab, ab, kIntLoc}});
  return c;
}

// Runs every univariate case on random broadcasting shapes in dt (float64 under x64).
void add_univariate(OracleBatch& b, DType dt, int reps) {
  for (const Case& c : univariate_cases()) {
    for (int r = 0; r < reps; ++r) {
      const Shape xs = random_shape(0, 3, 4);
      V args;
      for (size_t i = 0; i < c.ranges.size(); ++i) {
        args.push_back(values(i == 0 ? xs : numpy_partner_shape(xs), dt, c.ranges[i]));
      }
      b.add(c.dist + "." + c.fn + " " + describe(args[0]), "scipy.stats." + c.dist + "." + c.fn,
            "{}", args, [&] { return c.f(args); });
    }
  }
}

}  // namespace

TEST(ScipyStats, UnivariateAgainstSciPyFloat32) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("scipy.stats univariate f32");
  add_univariate(b, kF32, 2);
  EXPECT_EQ(b.run().mismatches, 0);
}

TEST(ScipyStats, UnivariateAgainstSciPyFloat64) {
  TESSERA_REQUIRE_ORACLE();
  X64Scope x64;
  OracleBatch b("scipy.stats univariate f64");
  add_univariate(b, kF64, 2);
  EXPECT_EQ(b.run().mismatches, 0);
}

// Integer and weak arguments promote as promote_args_inexact; far tails keep their precision.
TEST(ScipyStats, PromotionAndTailsAgainstSciPy) {
  TESSERA_REQUIRE_ORACLE();
  for (bool x64 : {false, true}) {
    X64Scope scope(x64);
    const DType fdt = x64 ? kF64 : kF32;
    OracleBatch b(std::string("scipy.stats promotion/tails") + (x64 ? " x64" : ""));
    const Array ki = host_array({0, 1, 2, 5, 9}, {5}, kI32);
    const Array muf = values({5}, kF32, {0.5, 6});
    b.add("poisson.logpmf int32 k", "scipy.stats.poisson.logpmf", "{}", {ki, muf},
          [&] { return st::poisson::logpmf(ki, muf); });
    b.add("norm.logpdf int32 x", "scipy.stats.norm.logpdf", "{}", {ki},
          [&] { return st::norm::logpdf(ki); });
    const Array xs = values({6}, fdt, {-3, 3});
    b.add("norm.cdf x f", "scipy.stats.norm.cdf", "{}", {xs}, [&] { return st::norm::cdf(xs); });
    // poisson.entropy in each of JAX's regimes (and at their borders)
    const Array mus = host_array({0.3, 2, 9.5, 10, 10.5, 50, 99, 100, 101, 300}, {10}, fdt);
    b.add("poisson.entropy regimes", "scipy.stats.poisson.entropy", "{}", {mus},
          [&] { return st::poisson::entropy(mus); });
    // far tails
    const Array tail = host_array({-30, -20, -10, 10, 20, 30}, {6}, fdt);
    b.add("norm.logcdf tails", "scipy.stats.norm.logcdf", "{}", {tail},
          [&] { return st::norm::logcdf(tail); });
    b.add("norm.logsf tails", "scipy.stats.norm.logsf", "{}", {tail},
          [&] { return st::norm::logsf(tail); });
    b.add("logistic.logcdf tails", "scipy.stats.logistic.logcdf", "{}", {tail},
          [&] { return st::logistic::logcdf(tail); });
    const Array tx = host_array({8.5, 10.2, 30.5}, {3}, fdt);
    const Array ta = host_array({8, 10, 30}, {3}, fdt);
    const Array tb = host_array({9, 11, 31}, {3}, fdt);
    for (const char* fn : {"logpdf", "logcdf", "logsf"}) {
      const std::string f = fn;
      b.add("truncnorm far " + f, "scipy.stats.truncnorm." + f, "{}", {tx, ta, tb}, [&] {
        return f == "logpdf"   ? st::truncnorm::logpdf(tx, ta, tb)
               : f == "logcdf" ? st::truncnorm::logcdf(tx, ta, tb)
                               : st::truncnorm::logsf(tx, ta, tb);
      });
      const Array nx = -tx, na = -tb, nb = -ta;
      b.add("truncnorm far left " + f, "scipy.stats.truncnorm." + f, "{}", {nx, na, nb}, [&] {
        return f == "logpdf"   ? st::truncnorm::logpdf(nx, na, nb)
               : f == "logcdf" ? st::truncnorm::logcdf(nx, na, nb)
                               : st::truncnorm::logsf(nx, na, nb);
      });
    }
    EXPECT_EQ(b.run().mismatches, 0);
  }
}

TEST(ScipyStats, MultivariateAgainstSciPy) {
  TESSERA_REQUIRE_ORACLE();
  for (bool x64 : {false, true}) {
    X64Scope scope(x64);
    const DType dt = x64 ? kF64 : kF32;
    OracleBatch b(std::string("scipy.stats multivariate") + (x64 ? " x64" : ""));
    for (int rep = 0; rep < 3; ++rep) {
      const int64_t n = 1 + rep;
      // an SPD covariance A A^T + n I
      const Array a = values({n, n}, kF64, {-1, 1});
      const Array cov = tnp::astype(
          tnp::matmul(a, tnp::transpose(a)) + tnp::eye(n, std::nullopt, 0, kF64) * 0.5, dt);
      const Array mean = values({n}, dt, {-1, 1});
      const Array x = values({4, n}, dt, {-2, 2});
      b.add("mvn.logpdf n=" + std::to_string(n), "scipy.stats.multivariate_normal.logpdf", "{}",
            {x, mean, cov}, [&] { return st::multivariate_normal::logpdf(x, mean, cov); });
      b.add("mvn.pdf n=" + std::to_string(n), "scipy.stats.multivariate_normal.pdf", "{}",
            {x, mean, cov}, [&] { return st::multivariate_normal::pdf(x, mean, cov); });
      // dirichlet: points on the simplex (K components, or K - 1), batch of 3
      const int64_t kk = 2 + rep;
      const Array g = tnp::exp(values({kk, 3}, kF64, {-1, 1}));
      const Array xsimplex = tnp::astype(g / tnp::sum(g, 0, true), dt);
      const Array alpha = values({kk}, dt, {0.5, 4});
      b.add("dirichlet.logpdf K=" + std::to_string(kk), "scipy.stats.dirichlet.logpdf", "{}",
            {xsimplex, alpha}, [&] { return st::dirichlet::logpdf(xsimplex, alpha); });
      const Array xdrop = lax::slice_in_dim(xsimplex, 0, kk - 1, 1, 0);
      b.add("dirichlet.pdf K-1", "scipy.stats.dirichlet.pdf", "{}", {xdrop, alpha},
            [&] { return st::dirichlet::pdf(xdrop, alpha); });
      // multinomial: counts of 3 categories in a batch of 4 with n their sum (one row off).
      // n >= 1: SciPy calls n = 0 invalid (NaN) where JAX's formula gives logpmf 0 (pinned in
      // MultinomialOfZeroTrials).
      std::vector<double> counts;
      std::vector<double> ns;
      for (int r = 0; r < 4; ++r) {
        double s = 0;
        for (int j = 0; j < 3; ++j) {
          counts.push_back(std::round(uniform(0, 6)));
          s += counts.back();
        }
        if (s == 0) {
          counts.back() = 1;
          s = 1;
        }
        ns.push_back(r == 3 ? s + 1 : s);
      }
      const Array xc = host_array(counts, {4, 3}, kI32);
      const Array nc = host_array(ns, {4}, kI32);
      const Array pr = tnp::astype(host_array({0.2, 0.3, 0.5}, {3}, kF64), dt);
      b.add("multinomial.logpmf", "scipy.stats.multinomial.logpmf", "{}", {xc, nc, pr},
            [&] { return st::multinomial::logpmf(xc, nc, pr); });
      b.add("multinomial.pmf", "scipy.stats.multinomial.pmf", "{}", {xc, nc, pr},
            [&] { return st::multinomial::pmf(xc, nc, pr); });
    }
    EXPECT_EQ(b.run().mismatches, 0);
  }
}

TEST(ScipyStats, SummaryAndKdeAgainstSciPy) {
  TESSERA_REQUIRE_ORACLE();
  for (bool x64 : {false, true}) {
    X64Scope scope(x64);
    const DType dt = x64 ? kF64 : kF32;
    OracleBatch b(std::string("scipy.stats summary/kde") + (x64 ? " x64" : ""));
    // few distinct values, so that ties occur
    const Array a = values({4, 6}, dt, {0, 3, true});
    const Array ai = values({5, 3}, kI32, {-2, 2, true});
    for (int64_t axis : {0, 1}) {
      const std::string p = json_obj({{"axis", json_int(axis)}});
      b.add("mode.value axis " + std::to_string(axis), "scipy.stats.mode.value", p, {a},
            [&] { return st::mode(a, axis).first; });
      b.add("mode.count axis " + std::to_string(axis), "scipy.stats.mode.count", p, {a},
            [&] { return st::mode(a, axis).second; });
      b.add("mode.value int", "scipy.stats.mode.value", p, {ai},
            [&] { return st::mode(ai, axis).first; });
      b.add("sem axis " + std::to_string(axis), "scipy.stats.sem", p, {a},
            [&] { return st::sem(a, axis); });
      for (const char* m : {"average", "min", "max", "dense", "ordinal"}) {
        const std::string pm = json_obj({{"axis", json_int(axis)}, {"method", json_str(m)}});
        b.add(std::string("rankdata ") + m, "scipy.stats.rankdata", pm, {a},
              [&] { return st::rankdata(a, m, axis); });
      }
    }
    b.add("rankdata flat", "scipy.stats.rankdata", json_obj({{"method", json_str("average")}}), {a},
          [&] { return st::rankdata(a); });
    b.add("sem ddof 0", "scipy.stats.sem", json_obj({{"axis", json_int(1)}, {"ddof", json_int(0)}}),
          {a}, [&] { return st::sem(a, 1, 0); });
    for (int64_t d : {1, 2}) {
      const Array data = values({d, 30}, dt, {-2, 2});
      const Array w = values({30}, dt, {0.2, 1});
      const Array pts = values({d, 7}, dt, {-3, 3});
      for (const char* bw : {"scott", "silverman"}) {
        const std::string p = json_obj({{"bw", json_str(bw)}});
        b.add(std::string("kde.logpdf ") + bw, "scipy.stats.gaussian_kde.logpdf", p, {data, w, pts},
              [&] { return st::GaussianKDE::make(data, bw, w).logpdf(pts); });
      }
      b.add("kde.logpdf bw 0.4", "scipy.stats.gaussian_kde.logpdf",
            json_obj({{"bw", json_num(0.4)}}), {data, w, pts},
            [&] { return st::GaussianKDE::make(data, 0.4, w).logpdf(pts); });
    }
    EXPECT_EQ(b.run().mismatches, 0);
  }
}

namespace {
// Expects every element of got to equal want (NaN equal to NaN, exact for infinities).
void expect_all(const Array& got, double want, const std::string& what, DType dt) {
  EXPECT_EQ(got.dtype(), dt) << what;
  for (double g : to_doubles(got)) {
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(g)) << what << ": got " << g << ", want NaN";
    } else if (std::isinf(want)) {
      EXPECT_EQ(g, want) << what;
    } else {
      EXPECT_NEAR(g, want, 1e-6 * (1 + std::abs(want))) << what;
    }
  }
}
}  // namespace

// JAX's values outside the support and for invalid parameters (SciPy gives NaN in many of
// these places; JAX's modules give the values below).
TEST(ScipyStats, OutOfSupportAndInvalidParameters) {
  for (bool x64 : {false, true}) {
    X64Scope scope(x64);
    const DType dt = x64 ? kF64 : kF32;
    auto s = [&](double v) { return tnp::full({2}, v, dt); };
    struct Check {
      const char* what;
      std::function<Array()> f;
      double want;
    };
    const std::vector<Check> checks = {
        {"gamma.logpdf x<loc", [&] { return st::gamma::logpdf(s(-1), s(2)); }, -kInf},
        {"gamma.pdf x<loc", [&] { return st::gamma::pdf(s(-1), s(2)); }, 0},
        {"gamma.cdf x<loc", [&] { return st::gamma::cdf(s(-1), s(2)); }, 0},
        {"gamma.sf x<loc", [&] { return st::gamma::sf(s(-1), s(2)); }, 1},
        {"chi2.logpdf x<loc", [&] { return st::chi2::logpdf(s(-1), s(3)); }, -kInf},
        {"expon.logpdf x<loc", [&] { return st::expon::logpdf(s(-0.5)); }, -kInf},
        {"expon.cdf x<loc", [&] { return st::expon::cdf(s(-1)); }, 0},
        {"expon.logcdf x<loc", [&] { return st::expon::logcdf(s(-1)); }, -kInf},
        {"expon.sf x<loc", [&] { return st::expon::sf(s(-1)); }, 1},
        {"expon.logsf x<loc", [&] { return st::expon::logsf(s(-1)); }, 0},
        {"expon.ppf q>1", [&] { return st::expon::ppf(s(1.5)); }, kNaN},
        {"expon.ppf q<0", [&] { return st::expon::ppf(s(-0.1)); }, kNaN},
        {"expon.ppf q=1", [&] { return st::expon::ppf(s(1)); }, kInf},
        {"uniform.logpdf outside", [&] { return st::uniform::logpdf(s(2)); }, -kInf},
        {"uniform.pdf inside", [&] { return st::uniform::pdf(s(0.5), s(0), s(4)); }, 0.25},
        {"uniform.cdf nan", [&] { return st::uniform::cdf(s(kNaN)); }, kNaN},
        {"uniform.cdf above", [&] { return st::uniform::cdf(s(3)); }, 1},
        {"uniform.ppf q>1", [&] { return st::uniform::ppf(s(1.2)); }, kNaN},
        {"beta.logpdf a<=0", [&] { return st::beta::logpdf(s(0.5), s(-1), s(2)); }, kNaN},
        {"beta.logpdf b=0", [&] { return st::beta::logpdf(s(0.5), s(2), s(0)); }, kNaN},
        {"beta.logpdf scale<=0", [&] { return st::beta::logpdf(s(0.5), s(2), s(2), s(0), s(-1)); },
         kNaN},
        {"beta.logpdf x>1", [&] { return st::beta::logpdf(s(1.5), s(2), s(2)); }, -kInf},
        {"beta.cdf x>1", [&] { return st::beta::cdf(s(1.5), s(2), s(3)); }, 1},
        {"beta.sf x<0", [&] { return st::beta::sf(s(-1), s(2), s(3)); }, 1},
        {"betabinom n<0", [&] { return st::betabinom::logpmf(s(0), s(-1), s(2), s(2)); }, kNaN},
        {"betabinom a<=0", [&] { return st::betabinom::logpmf(s(1), s(3), s(0), s(2)); }, kNaN},
        {"betabinom k>n", [&] { return st::betabinom::logpmf(s(4), s(3), s(2), s(2)); }, -kInf},
        {"bernoulli.cdf p>1", [&] { return st::bernoulli::cdf(s(0.5), s(1.5)); }, kNaN},
        {"bernoulli.cdf nan k", [&] { return st::bernoulli::cdf(s(kNaN), s(0.3)); }, kNaN},
        {"bernoulli.cdf k<0", [&] { return st::bernoulli::cdf(s(-1), s(0.3)); }, 0},
        {"bernoulli.cdf 0<=k<1", [&] { return st::bernoulli::cdf(s(0.5), s(0.3)); }, 0.7},
        {"bernoulli.cdf k>=1", [&] { return st::bernoulli::cdf(s(2), s(0.3)); }, 1},
        {"bernoulli.ppf q<=1-p", [&] { return st::bernoulli::ppf(s(0.2), s(0.3)); }, 0},
        {"bernoulli.ppf q=0", [&] { return st::bernoulli::ppf(s(0), s(0.3)); }, 0},
        {"bernoulli.ppf q>1-p", [&] { return st::bernoulli::ppf(s(0.8), s(0.3)); }, 1},
        {"bernoulli.ppf q>1", [&] { return st::bernoulli::ppf(s(1.5), s(0.3)); }, kNaN},
        {"bernoulli.logpmf k=2", [&] { return st::bernoulli::logpmf(s(2), s(0.3)); }, -kInf},
        {"bernoulli.pmf p=1 k=1", [&] { return st::bernoulli::pmf(s(1), s(1)); }, 1},
        {"poisson.logpmf non-integer", [&] { return st::poisson::logpmf(s(1.5), s(2)); }, -kInf},
        {"poisson.logpmf k<loc", [&] { return st::poisson::logpmf(s(-1), s(2)); }, -kInf},
        {"poisson.pmf k=0 mu=0", [&] { return st::poisson::pmf(s(0), s(0)); }, 1},
        {"poisson.cdf k<loc", [&] { return st::poisson::cdf(s(-1), s(2)); }, 0},
        {"poisson.entropy mu=0", [&] { return st::poisson::entropy(s(0)); }, 0},
        {"poisson.entropy mu<0", [&] { return st::poisson::entropy(s(-1)); }, kNaN},
        {"pareto.logpdf below", [&] { return st::pareto::logpdf(s(0.5), s(2)); }, -kInf},
        {"pareto.cdf below", [&] { return st::pareto::cdf(s(0.5), s(2)); }, 0},
        {"pareto.logcdf below", [&] { return st::pareto::logcdf(s(0.5), s(2)); }, -kInf},
        {"pareto.logsf below", [&] { return st::pareto::logsf(s(0.5), s(2)); }, 0},
        {"pareto.ppf q>1", [&] { return st::pareto::ppf(s(1.2), s(2)); }, kNaN},
        {"vonmises kappa<0", [&] { return st::vonmises::logpdf(s(0.3), s(-1)); }, kNaN},
        {"vonmises kappa=0", [&] { return st::vonmises::logpdf(s(0.3), s(0)); }, kNaN},
        {"vonmises large kappa", [&] { return st::vonmises::pdf(s(0), s(1e4)); },
         std::sqrt(1e4 / (2 * kPi)) * (1 - 1 / 8e4)},
        {"wrapcauchy c>=1", [&] { return st::wrapcauchy::logpdf(s(1), s(1.2)); }, kNaN},
        {"wrapcauchy x<0", [&] { return st::wrapcauchy::logpdf(s(-0.1), s(0.5)); }, -kInf},
        {"wrapcauchy x>2pi", [&] { return st::wrapcauchy::logpdf(s(7), s(0.5)); }, -kInf},
        {"truncnorm outside", [&] { return st::truncnorm::logpdf(s(3), s(-1), s(1)); }, -kInf},
        {"truncnorm.logcdf below", [&] { return st::truncnorm::logcdf(s(-2), s(-1), s(1)); },
         -kInf},
        {"truncnorm.logcdf above", [&] { return st::truncnorm::logcdf(s(2), s(-1), s(1)); }, 0},
        {"truncnorm.cdf above", [&] { return st::truncnorm::cdf(s(2), s(-1), s(1)); }, 1},
        {"truncnorm.sf below", [&] { return st::truncnorm::sf(s(-2), s(-1), s(1)); }, 1},
        {"geom.logpmf k<=loc", [&] { return st::geom::logpmf(s(0), s(0.5)); }, -kInf},
        {"binom.logpmf k>n", [&] { return st::binom::logpmf(s(11), s(10), s(0.3)); }, -kInf},
        {"binom.logpmf k<0", [&] { return st::binom::logpmf(s(-1), s(10), s(0.3)); }, -kInf},
        {"binom.pmf p=0 k=0", [&] { return st::binom::pmf(s(0), s(5), s(0)); }, 1},
        {"nbinom.logpmf k<loc", [&] { return st::nbinom::logpmf(s(-1), s(3), s(0.4)); }, -kInf},
        {"gumbel_l.ppf q>1", [&] { return st::gumbel_l::ppf(s(1.5)); }, kNaN},
        {"gumbel_r.ppf q<0", [&] { return st::gumbel_r::ppf(s(-0.1)); }, kNaN},
        {"norm.ppf 0", [&] { return st::norm::ppf(s(0)); }, -kInf},
        {"norm.ppf 1", [&] { return st::norm::ppf(s(1)); }, kInf},
        {"norm.ppf q>1", [&] { return st::norm::ppf(s(1.5)); }, kNaN},
        {"norm.logpdf inf", [&] { return st::norm::logpdf(s(kInf)); }, -kInf},
        {"laplace.cdf -inf", [&] { return st::laplace::cdf(s(-kInf)); }, 0},
        {"cauchy.cdf inf", [&] { return st::cauchy::cdf(s(kInf)); }, 1},
        {"logistic.ppf q>1", [&] { return st::logistic::ppf(s(1.5)); }, kNaN},
        {"dirichlet off simplex",
         [&] {
           return st::dirichlet::logpdf(tnp::full({3, 2}, 0.5, dt), tnp::full({3}, 2.0, dt));
         },
         -kInf},
        {"dirichlet component <= 0",
         [&] {
           return st::dirichlet::logpdf(tnp::astype(host_array({-0.2, 1.2}, {2}, kF64), dt),
                                        tnp::full({2}, 2.0, dt));
         },
         -kInf},
    };
    for (const auto& c : checks) {
      try {
        expect_all(c.f(), c.want, std::string(c.what) + (x64 ? " f64" : " f32"), dt);
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.what << " threw " << e.what();
      }
    }
  }
}

TEST(ScipyStats, DtypesAndBroadcasting) {
  // integers and bool promote to the default float; weak scalars keep the array's dtype
  EXPECT_EQ(st::norm::logpdf(tnp::array({1, 2}, kI32)).dtype(), kF32);
  EXPECT_EQ(st::norm::logpdf(tnp::array({1.0}, kF32), 0, 1).dtype(), kF32);
  EXPECT_EQ(st::norm::logpdf(1.0).dtype(), kF32);
  EXPECT_EQ(st::poisson::logpmf(tnp::array({1, 2}, kI32), 2).dtype(), kF32);
  {
    X64Scope x64;
    EXPECT_EQ(st::norm::logpdf(tnp::array({1.0}, kF32), 0.5, 2).dtype(), kF32);
    EXPECT_EQ(st::norm::logpdf(tnp::array({1.0}, kF32), tnp::array({1.0}, kF64)).dtype(), kF64);
    EXPECT_EQ(st::gamma::cdf(2.0, 3.0).dtype(), kF64);
  }
  const Array x = values({3, 1}, kF32, {-1, 1});
  const Array loc = values({4}, kF32, {-1, 1});
  EXPECT_EQ(st::norm::cdf(x, loc).shape(), (Shape{3, 4}));
  EXPECT_EQ(st::beta::logpdf(x, 2.0, tnp::full({1, 4}, 3.0, kF32)).shape(), (Shape{3, 4}));
  EXPECT_ANY_THROW(st::norm::logpdf(tnp::zeros({3}), tnp::zeros({4})));
  // mvn batch broadcasting: x [2, 3, n] against cov [3, n, n]
  const Array cov = tnp::broadcast_to(tnp::eye(2, std::nullopt, 0, kF32), {3, 2, 2});
  const Array xs = values({2, 3, 2}, kF32, {-1, 1});
  const Array lp = st::multivariate_normal::logpdf(xs, tnp::zeros({2}), cov);
  EXPECT_EQ(lp.shape(), (Shape{2, 3}));
  EXPECT_EQ(compare(to_doubles(lp), to_doubles(tnp::sum(st::norm::logpdf(xs), -1)), 1e-5, 1e-5),
            "");
  // a rank-0 cov is cov times the identity; a rank-0 mean a univariate normal
  EXPECT_EQ(compare(to_doubles(st::multivariate_normal::logpdf(xs, tnp::zeros({2}), 4.0)),
                    to_doubles(tnp::sum(st::norm::logpdf(xs, 0, 2), -1)), 1e-5, 1e-5),
            "");
  EXPECT_EQ(compare(to_doubles(st::multivariate_normal::logpdf(xs, 0.0, 4.0)),
                    to_doubles(st::norm::logpdf(xs, 0, 2)), 1e-5, 1e-5),
            "");
}

TEST(ScipyStats, Errors) {
  EXPECT_ERROR(ValueError, st::dirichlet::logpdf(tnp::full({2}, 0.5), tnp::ones({2, 2})),
               "must be one-dimensional");
  EXPECT_ERROR(ValueError, st::dirichlet::logpdf(tnp::full({5}, 0.2), tnp::ones({3})),
               "one entry fewer");
  EXPECT_ERROR(ValueError, st::multinomial::logpmf(tnp::ones({3}), 3, tnp::full({3}, 1.0 / 3)),
               "must be of integer type");
  EXPECT_ERROR(ValueError,
               st::multivariate_normal::logpdf(tnp::zeros({3}), tnp::zeros({3}), tnp::eye(2)),
               "incompatible shapes");
  EXPECT_ERROR(NotImplementedError, st::mode(tnp::ones({3}), 0, "omit"), "nan_policy");
  EXPECT_ERROR(ValueError, st::mode(tnp::ones({3}), 0, "bogus"), "nan_policy");
  EXPECT_ERROR(ValueError, st::mode(tnp::ones({0})), "empty");
  EXPECT_ERROR(ValueError, st::rankdata(tnp::ones({3}), "bogus"), "unknown method");
  EXPECT_ERROR(NotImplementedError, st::sem(tnp::ones({3}), 0, 1, "raise"), "nan_policy");
  EXPECT_ERROR(ValueError, st::GaussianKDE::make(tnp::ones({1})), "multiple elements");
  EXPECT_ERROR(ValueError, st::GaussianKDE::make(values({1, 5}, kF32, {0, 1}), "bogus"),
               "bw_method");
  EXPECT_ERROR(ValueError,
               st::GaussianKDE::make(values({1, 5}, kF32, {0, 1}), "scott", tnp::ones({4})),
               "length n");
  EXPECT_ERROR(ValueError,
               st::GaussianKDE::make(values({2, 5}, kF32, {0, 1})).integrate_box_1d(0, 1),
               "only handles 1D");
}

// poisson.entropy at large mu (SciPy 1.10's own sum loses digits there) against a direct sum
// of -p log p in double over mu +- 20 sqrt(mu).
TEST(ScipyStats, PoissonEntropyLargeMu) {
  X64Scope x64;
  for (double mu : {500.0, 1e4, 1e6}) {
    double h = 0;
    const double w = 20 * std::sqrt(mu);
    for (double k = std::max(0.0, std::floor(mu - w)); k <= mu + w; ++k) {
      const double lp = k * std::log(mu) - mu - std::lgamma(k + 1);
      h -= std::exp(lp) * lp;
    }
    EXPECT_NEAR(to_doubles(st::poisson::entropy(mu))[0], h, 1e-7 * h) << "mu " << mu;
  }
}

// mode with NaN, keepdims; sem with NaNs omitted; KDE integrals against direct sums.
TEST(ScipyStats, SummaryDetails) {
  const Array a = host_array({1, 2, 2, kNaN, 3, 3, 3, 1}, {2, 4}, kF32);
  const auto [m, c] = st::mode(a, 1, "propagate", true);
  EXPECT_EQ(m.shape(), (Shape{2, 1}));
  const std::vector<double> mv = to_doubles(m);
  EXPECT_TRUE(std::isnan(mv[0]));
  EXPECT_EQ(mv[1], 3);
  EXPECT_EQ(to_doubles(c)[1], 3);
  EXPECT_EQ(c.dtype(), kI32);
  // ties: the smallest value
  EXPECT_EQ(to_doubles(st::mode(host_array({3, 1, 3, 1, 2}, {5}, kF32)).first)[0], 1);
  const Array s = st::sem(a, 1, 1, "omit");
  // row 0: {1, 2, 2}: std (ddof 1) = sqrt(1/3), n = 3
  EXPECT_NEAR(to_doubles(s)[0], std::sqrt(1.0 / 3) / std::sqrt(3.0), 1e-6);
  // KDE integrals against sums over the data
  X64Scope x64;
  const Array data = values({1, 20}, kF64, {-1, 1});
  const st::GaussianKDE k = st::GaussianKDE::make(data);
  const double var = to_doubles(k.covariance)[0];
  const std::vector<double> dv = to_doubles(data);
  double box = 0, gauss = 0, self = 0;
  for (double xi : dv) {
    box +=
        (std::erfc(-(1 - xi) / std::sqrt(2 * var)) - std::erfc(-(-0.5 - xi) / std::sqrt(2 * var))) /
        2 / 20;
    const double v2 = var + 0.3;
    gauss += std::exp(-0.5 * (0.2 - xi) * (0.2 - xi) / v2) / std::sqrt(2 * kPi * v2) / 20;
    for (double xj : dv) {
      self += std::exp(-0.5 * (xi - xj) * (xi - xj) / (2 * var)) / std::sqrt(4 * kPi * var) / 400;
    }
  }
  EXPECT_NEAR(to_doubles(k.integrate_box_1d(-0.5, 1.0))[0], box, 1e-10);
  EXPECT_NEAR(to_doubles(k.integrate_gaussian(tnp::array({0.2}, kF64), tnp::array({0.3}, kF64)))[0],
              gauss, 1e-10);
  EXPECT_NEAR(to_doubles(k.integrate_kde(k))[0], self, 1e-10);
  // the factor is Scott's n^(-1/5)
  EXPECT_NEAR(to_doubles(k.factor())[0], std::pow(20.0, -0.2), 1e-12);
  // resample: shape (d, *shape), values near the data
  const Array smp = k.resample(random::PRNGKey(3), {50});
  EXPECT_EQ(smp.shape(), (Shape{1, 50}));
  for (double v : to_doubles(smp)) EXPECT_LT(std::abs(v), 1 + 8 * std::sqrt(var));
}

namespace {
// d/d(arg i) of sum(f(args)) against float64 central differences.
void check_grad(const std::string& name, const Fn& f, const V& args, size_t i) {
  const Array g = grad([&](const Array& v) {
    V a = args;
    a[i] = v;
    return tnp::sum(f(a));
  })(args[i]);
  const std::vector<double> base = to_doubles(args[i]);
  std::vector<double> fd(base.size());
  const double h = 1e-6;
  for (size_t j = 0; j < base.size(); ++j) {
    std::vector<double> up = base, dn = base;
    up[j] += h;
    dn[j] -= h;
    V au = args, ad = args;
    au[i] = host_array(up, args[i].shape(), kF64);
    ad[i] = host_array(dn, args[i].shape(), kF64);
    fd[j] = (to_doubles(tnp::sum(f(au)))[0] - to_doubles(tnp::sum(f(ad)))[0]) / (2 * h);
  }
  EXPECT_EQ(compare(to_doubles(g), fd, 1e-5, 1e-6), "") << name << " d/darg" << i;
}
}  // namespace

TEST(ScipyStats, GradientsAgainstFiniteDifferences) {
  X64Scope x64;
  struct G {
    std::string name;
    Fn f;
    std::vector<Range> ranges;
  };
  const std::vector<G> gs = {
      {"norm.logpdf", F3(norm, logpdf), {{-3, 3}, kLoc, kScale}},
      {"norm.logcdf", F3(norm, logcdf), {{-3, 3}, kLoc, kScale}},
      {"logistic.logpdf", F3(logistic, logpdf), {{-3, 3}, kLoc, kScale}},
      {"cauchy.logpdf", F3(cauchy, logpdf), {{-3, 3}, kLoc, kScale}},
      {"laplace.logpdf", F3(laplace, logpdf), {{1.5, 3}, kLoc, kScale}},
      {"gumbel_r.logpdf", F3(gumbel_r, logpdf), {{-2, 2}, kLoc, kScale}},
      {"expon.logpdf", F3(expon, logpdf), {{1.5, 4}, kLoc, kScale}},
      {"gamma.logpdf", F4(gamma, logpdf), {{1, 5}, {0.5, 4}, {-0.5, 0.5}, kScale}},
      {"chi2.logpdf", F4(chi2, logpdf), {{1, 5}, {1, 6}, {-0.5, 0.5}, kScale}},
      {"t.logpdf", F4(t, logpdf), {{-3, 3}, {1, 10}, kLoc, kScale}},
      {"pareto.logpdf", F4(pareto, logpdf), {{2, 5}, {0.5, 3}, {-0.3, 0.3}, {0.5, 1.2}}},
      {"beta.logpdf", F5(beta, logpdf), {{0.2, 0.8}, {0.5, 4}, {0.5, 4}, {-0.1, 0.1}, {1, 1.2}}},
      {"truncnorm.logpdf",
       F5(truncnorm, logpdf),
       {{-0.5, 0.5}, {-3, -1}, {1, 3}, {-0.2, 0.2}, kScale}},
      {"gennorm.logpdf", F2(gennorm, logpdf), {{0.3, 2}, {1, 3}}},
      {"vonmises.logpdf", F2(vonmises, logpdf), {{-2, 2}, {0.5, 5}}},
      {"wrapcauchy.logpdf", F2(wrapcauchy, logpdf), {{0.5, 5}, {0.1, 0.8}}},
      {"poisson.logpmf", F3(poisson, logpmf), {{0, 8, true}, {0.5, 6}, {0, 0, true}}},
      {"binom.logpmf", F4(binom, logpmf), {{0, 5, true}, {5, 8, true}, {0.1, 0.9}, {0, 0, true}}},
      {"nbinom.logpmf", F4(nbinom, logpmf), {{0, 5, true}, {1, 4}, {0.1, 0.9}, {0, 0, true}}},
      {"betabinom.logpmf",
       F5(betabinom, logpmf),
       {{0, 5, true}, {5, 8, true}, {0.5, 3}, {0.5, 3}, {0, 0, true}}},
  };
  for (const G& g : gs) {
    V args;
    for (const Range& r : g.ranges) args.push_back(values({3}, kF64, r));
    for (size_t i = 0; i < args.size(); ++i) {
      if (g.ranges[i].integer) continue;  // counts and loc of the discrete laws
      try {
        check_grad(g.name, g.f, args, i);
      } catch (const std::exception& e) {
        ADD_FAILURE() << g.name << " arg " << i << " threw " << e.what();
      }
    }
  }
  // multivariate_normal in x, mean and cov; dirichlet in alpha
  const Array x = values({2, 3}, kF64, {-1, 1});
  const Array mean = values({3}, kF64, {-1, 1});
  const Array a = values({3, 3}, kF64, {-1, 1});
  const Array cov = tnp::matmul(a, tnp::transpose(a)) + tnp::eye(3, std::nullopt, 0, kF64);
  const Fn mvn = F3(multivariate_normal, logpdf);
  for (size_t i = 0; i < 2; ++i) check_grad("mvn.logpdf", mvn, {x, mean, cov}, i);
  // in cov along symmetric directions: the gradient's symmetric part
  const Array gc = grad([&](const Array& c) {
    return tnp::sum(st::multivariate_normal::logpdf(x, mean, (c + tnp::transpose(c)) / 2));
  })(cov);
  const Array e = host_array({0, 1, 0, 1, 0, 0, 0, 0, 0}, {3, 3}, kF64);
  const double h = 1e-6;
  const double fd =
      (to_doubles(tnp::sum(st::multivariate_normal::logpdf(x, mean, cov + e * h)))[0] -
       to_doubles(tnp::sum(st::multivariate_normal::logpdf(x, mean, cov - e * h)))[0]) /
      (2 * h);
  EXPECT_NEAR(to_doubles(tnp::sum(gc * e))[0], fd, 1e-5 * (1 + std::abs(fd)));
  const Array g = tnp::exp(values({3, 2}, kF64, {-1, 1}));
  const Array xs = g / tnp::sum(g, 0, true);
  check_grad("dirichlet.logpdf", F2(dirichlet, logpdf), {xs, values({3}, kF64, {0.5, 4})}, 1);
}

TEST(ScipyStats, VmapMatchesLoopAndJitMatchesEager) {
  struct T {
    std::string name;
    std::function<Array(const Array&, const Array&)> f;
    Range x, p;
  };
  const std::vector<T> ts = {
      {"norm.logpdf",
       [](const Array& x, const Array& p) { return st::norm::logpdf(x, 0, p); },
       {-3, 3},
       kScale},
      {"gamma.cdf",
       [](const Array& x, const Array& p) { return st::gamma::cdf(x, p); },
       {0, 5},
       {0.5, 4}},
      {"beta.logpdf",
       [](const Array& x, const Array& p) { return st::beta::logpdf(x, p, 2.0); },
       {0.1, 0.9},
       {0.5, 4}},
      {"poisson.logpmf",
       [](const Array& x, const Array& p) { return st::poisson::logpmf(x, p); },
       {0, 8, true},
       {0.5, 6}},
      {"truncnorm.logcdf",
       [](const Array& x, const Array& p) { return st::truncnorm::logcdf(x, -p, p); },
       {-2, 2},
       {0.5, 3}},
      {"t.pdf", [](const Array& x, const Array& p) { return st::t::pdf(x, p); }, {-3, 3}, {1, 8}},
      {"mvn.logpdf",
       [](const Array& x, const Array& p) {
         return st::multivariate_normal::logpdf(x, tnp::zeros({4}), tnp::eye(4) * p);
       },
       {-1, 1},
       {0.5, 2}},
  };
  for (const T& t : ts) {
    const Array xb = values({5, 4}, kF32, t.x);
    const Array pb = values({5}, kF32, t.p);
    const Array batched = vmap(t.f)(xb, pb);
    std::vector<double> loop;
    for (int64_t i = 0; i < 5; ++i) {
      for (double v : to_doubles(t.f(xb[i], pb[i]))) loop.push_back(v);
    }
    EXPECT_EQ(compare(to_doubles(batched), loop, 1e-5, 1e-6), "") << t.name << " vmap";
    EXPECT_EQ(
        compare(to_doubles(jit(t.f)(xb[2], pb[2])), to_doubles(t.f(xb[2], pb[2])), 1e-5, 1e-6), "")
        << t.name << " jit";
  }
  // a KDE under jit: the fields are arrays
  const Array data = values({1, 10}, kF32, {-1, 1});
  const auto kde_lp = [](const Array& d, const Array& pts) {
    return st::GaussianKDE::make(d).logpdf(pts);
  };
  const Array pts = values({1, 4}, kF32, {-1, 1});
  EXPECT_EQ(compare(to_doubles(jit(kde_lp)(data, pts)), to_doubles(kde_lp(data, pts)), 1e-5, 1e-6),
            "");
}

// JAX's multinomial at n = 0 (SciPy 1.10 answers NaN there): the formula's value, log 1 = 0,
// when the counts are all zero, -inf otherwise.
TEST(ScipyStats, MultinomialOfZeroTrials) {
  const Array p = host_array({0.2, 0.3, 0.5}, {3}, kF32);
  const Array zeros = host_array({0, 0, 0}, {3}, kI32);
  const Array one = host_array({0, 1, 0}, {3}, kI32);
  EXPECT_EQ(to_doubles(st::multinomial::logpmf(zeros, 0, p)), std::vector<double>{0.0});
  EXPECT_EQ(to_doubles(st::multinomial::pmf(zeros, 0, p)), std::vector<double>{1.0});
  EXPECT_EQ(to_doubles(st::multinomial::logpmf(one, 0, p)),
            std::vector<double>{-std::numeric_limits<double>::infinity()});
}
