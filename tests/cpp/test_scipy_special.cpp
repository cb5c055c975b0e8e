// tessera::scipy::special (src/api/scipy_special*.cpp) against SciPy 1.10 through the oracle
// (tests/oracle/oracle_scipy_special.py, which restates JAX's conventions where they differ from
// SciPy's): every function on fresh random inputs in float32 and float64, extreme inputs (+-1e30,
// +-inf, NaN, the singular points), gradients against float64 central differences for every
// differentiable function, vmap and jit of a sample, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace sps = tessera::scipy::special;
namespace tnp = tessera::numpy;
using testing::compare;
using testing::host_array;
using testing::json_obj;
using testing::OracleBatch;
using testing::rng;
using testing::to_doubles;
using testing::X64Scope;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64;

using Fn = std::function<Array(const std::vector<Array>&)>;

struct Domain {
  double lo, hi;
  bool integer = false;  // round the values (orders and degrees)
};

// One function: its oracle name, the domain of each argument, the call, the arguments that
// are differentiable (for the gradient test), and the extreme values it is checked at.
struct Case {
  std::string name;
  std::vector<Domain> dom;
  Fn f;
  std::vector<int> diff_args;
  std::vector<double> extremes;
  std::string params = "{}";
};

const std::vector<double> kExtremes = {1e30, -1e30, kInf, -kInf, kNaN, 0.0,  -0.0,
                                       1.0,  -1.0,  0.5,  1e-30, -2.0, -2.5, 40.0};

std::vector<Case> cases() {
  auto u = [](auto f) { return [f](const std::vector<Array>& a) { return f(a[0]); }; };
  auto b = [](auto f) { return [f](const std::vector<Array>& a) { return f(a[0], a[1]); }; };
  const std::vector<double> none;
  return {
      {"gammaln", {{-10, 30}}, u(sps::gammaln), {0}, kExtremes},
      {"gammasgn", {{-10, 10}}, u(sps::gammasgn), {}, kExtremes},
      {"gamma", {{-6, 20}}, u(sps::gamma), {0}, kExtremes},
      {"digamma", {{-6, 30}}, u(sps::digamma), {0}, kExtremes},
      {"betaln", {{0.05, 40}, {0.05, 40}}, b(sps::betaln), {0, 1}, none},
      {"beta", {{0.1, 15}, {0.1, 15}}, b(sps::beta), {0, 1}, none},
      {"betainc",
       {{0.2, 8}, {0.2, 8}, {0, 1}},
       [](const std::vector<Array>& a) { return sps::betainc(a[0], a[1], a[2]); },
       {2},
       none},
      {"gammainc", {{0.1, 20}, {0, 30}}, b(sps::gammainc), {1}, none},
      {"gammaincc", {{0.1, 20}, {0, 30}}, b(sps::gammaincc), {1}, none},
      {"factorial", {{-3, 30}}, u([](const Array& x) { return sps::factorial(x); }), {0}, none},
      {"poch", {{0.2, 10}, {-3, 6}}, b(sps::poch), {0, 1}, none},
      {"multigammaln",
       {{1.6, 20}},
       u([](const Array& x) { return sps::multigammaln(x, 3); }),
       {0},
       none,
       "{\"d\": 3}"},
      {"polygamma", {{0, 4, true}, {0.2, 20}}, b(sps::polygamma), {1}, none},
      {"zeta", {{1.1, 12}, {0.2, 20}}, b(sps::zeta), {1}, none},
      {"erf", {{-4, 4}}, u(sps::erf), {0}, kExtremes},
      {"erfc", {{-4, 9}}, u(sps::erfc), {0}, kExtremes},
      {"erfinv", {{-0.999, 0.999}}, u(sps::erfinv), {0}, kExtremes},
      {"ndtr", {{-12, 8}}, u(sps::ndtr), {0}, kExtremes},
      {"ndtri", {{0.0001, 0.9999}}, u(sps::ndtri), {0}, kExtremes},
      {"log_ndtr", {{-40, 10}}, u([](const Array& x) { return sps::log_ndtr(x); }), {0}, kExtremes},
      {"i0", {{-40, 40}}, u(sps::i0), {0}, kExtremes},
      {"i0e", {{-40, 40}}, u(sps::i0e), {0}, kExtremes},
      {"i1", {{-40, 40}}, u(sps::i1), {0}, kExtremes},
      {"i1e", {{-40, 40}}, u(sps::i1e), {0}, kExtremes},
      {"logit", {{0.001, 0.999}}, u(sps::logit), {0}, kExtremes},
      {"expit", {{-30, 30}}, u(sps::expit), {0}, kExtremes},
      {"xlogy", {{-3, 3}, {0.01, 5}}, b(sps::xlogy), {0, 1}, none},
      {"xlog1py", {{-3, 3}, {-0.9, 5}}, b(sps::xlog1py), {0, 1}, none},
      {"entr", {{0.001, 5}}, u(sps::entr), {0}, kExtremes},
      {"rel_entr", {{0.01, 5}, {0.01, 5}}, b(sps::rel_entr), {0, 1}, none},
      {"kl_div", {{0.01, 5}, {0.01, 5}}, b(sps::kl_div), {0, 1}, none},
      {"exp1", {{0.01, 60}}, u(sps::exp1), {0}, kExtremes},
      {"expi", {{-30, 60}}, u(sps::expi), {0}, kExtremes},
      {"expn", {{0, 6, true}, {0.05, 30}}, b(sps::expn), {1}, none},
      {"spence", {{0, 12}}, u(sps::spence), {0}, kExtremes},
      {"hyp1f1",
       {{-2.5, 2.5}, {0.5, 5}, {-15, 15}},
       [](const std::vector<Array>& a) { return sps::hyp1f1(a[0], a[1], a[2]); },
       {0, 1, 2},
       none},
      {"hyp2f1",
       {{-2.5, 2.5}, {-2.5, 2.5}, {0.5, 5}, {-0.9, 0.9}},
       [](const std::vector<Array>& a) { return sps::hyp2f1(a[0], a[1], a[2], a[3]); },
       {3},
       none},
      {"fresnel_s",
       {{-25, 25}},
       u([](const Array& x) { return sps::fresnel(x).first; }),
       {0},
       kExtremes},
      {"fresnel_c",
       {{-25, 25}},
       u([](const Array& x) { return sps::fresnel(x).second; }),
       {0},
       kExtremes},
  };
}

std::vector<double> draw(const Domain& d, int64_t n) {
  std::uniform_real_distribution<double> dist(d.lo, d.hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = d.integer ? std::round(dist(rng())) : dist(rng());
  return v;
}

Shape random_small_shape() {
  std::uniform_int_distribution<int> rank(0, 2), dim(1, 6);
  Shape s(static_cast<size_t>(rank(rng())));
  for (int64_t& e : s) e = dim(rng());
  return s;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

// The integer-valued orders go in as int32 (polygamma requires an integer dtype).
Array arg_array(const Case& c, size_t i, const std::vector<double>& v, const Shape& s, DType dt) {
  return host_array(v, s, c.dom[i].integer && c.name == "polygamma" ? DType::kInt32 : dt);
}

void add_random(OracleBatch& batch, const Case& c, DType dt, const std::string& tag) {
  const Shape s = random_small_shape();
  std::vector<Array> ins;
  for (size_t i = 0; i < c.dom.size(); ++i)
    ins.push_back(arg_array(c, i, draw(c.dom[i], numel(s)), s, dt));
  batch.add(c.name + " " + tag, "sps." + c.name, c.params, ins, [&] { return c.f(ins); });
}

TEST(ScipySpecial, MatchesScipyOnRandomInputs) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch batch("scipy.special", 3.0, 250);
  const std::vector<Case> all = cases();
  for (const Case& c : all) {
    add_random(batch, c, kF32, "f32");
    X64Scope x64;
    add_random(batch, c, kF64, "f64");
  }
  std::uniform_int_distribution<size_t> pick(0, all.size() - 1);
  while (batch.time_left()) {
    const Case& c = all[pick(rng())];
    if (rng()() % 2) {
      X64Scope x64;
      add_random(batch, c, kF64, "random f64");
    } else {
      add_random(batch, c, kF32, "random f32");
    }
  }
  const auto summary = batch.run();
  EXPECT_EQ(summary.mismatches, 0);
  EXPECT_GE(summary.compared, static_cast<int>(2 * all.size()));
}

// +-1e30, +-inf, NaN, 0, -0 and the singular points (poles, the ends of the domains), alone
// for unary functions and paired with ordinary values for the others.
TEST(ScipySpecial, ExtremeInputs) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch batch("scipy.special extremes", 10.0, 0);
  const std::vector<Case> all = cases();
  for (DType dt : {kF32, kF64}) {
    X64Scope x64(dt == kF64);
    const std::string tag = dt == kF64 ? " f64" : " f32";
    for (const Case& c : all) {
      if (!c.extremes.empty()) {
        std::vector<double> v = c.extremes;
        for (double e : {-1.0, -3.0, 1.0 - 1e-7, 1e-300}) v.push_back(e);  // poles, edges
        const Array x = host_array(v, {static_cast<int64_t>(v.size())}, dt);
        batch.add(c.name + " extremes" + tag, "sps." + c.name, c.params, {x},
                  [&] { return c.f({x}); });
      }
    }
    // Two-argument functions: each argument at the extremes, the others ordinary.
    const std::vector<double> ext = {1e30, kInf, 0.0, kNaN, 1e-30};
    for (const char* name :
         {"xlogy", "xlog1py", "rel_entr", "kl_div", "betaln", "gammainc", "gammaincc", "zeta"}) {
      for (const Case& c : all) {
        if (c.name != name) continue;
        for (size_t pos = 0; pos < 2; ++pos) {
          std::vector<double> a = draw(c.dom[0], 5), bv = draw(c.dom[1], 5);
          (pos == 0 ? a : bv) = ext;
          if (pos == 1 && std::string(name) != "zeta") a[0] = 0.0;  // x == 0 with y extreme
          const Array x = host_array(a, {5}, dt), y = host_array(bv, {5}, dt);
          batch.add(c.name + " extremes arg" + std::to_string(pos) + tag, "sps." + c.name, c.params,
                    {x, y}, [&] {
                      return c.f({x, y});
                    });
        }
      }
    }
  }
  EXPECT_EQ(batch.run().mismatches, 0);
}

TEST(ScipySpecial, StructuredFunctionsMatchScipy) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch batch("scipy.special structured", 10.0, 0);
  for (DType dt : {kF32, kF64}) {
    X64Scope x64(dt == kF64);
    const std::string tag = dt == kF64 ? " f64" : " f32";
    std::normal_distribution<double> nd(0, 3);
    std::vector<double> v(12);
    for (double& e : v) e = nd(rng());
    const Array a = host_array(v, {3, 4}, dt);
    std::vector<double> w(12);
    for (double& e : w) e = std::abs(nd(rng())) + 0.1;
    const Array bw = host_array(w, {3, 4}, dt);
    batch.add("logsumexp all" + tag, "sps.logsumexp", "{}", {a}, [&] { return sps::logsumexp(a); });
    batch.add("logsumexp axis 1 b" + tag, "sps.logsumexp", json_obj({{"axis", "1"}, {"b", "true"}}),
              {a, bw}, [&] { return sps::logsumexp(a, {.axis = 1, .b = bw}); });
    // Signed scale factors with return_sign, and JAX's where mask (SciPy: b = 0 there).
    std::vector<double> sw(12);
    for (double& e : sw) e = nd(rng());
    const Array bs = host_array(sw, {3, 4}, dt);
    for (int which : {0, 1})
      batch.add("logsumexp return_sign " + std::to_string(which) + tag, "sps.logsumexp",
                json_obj({{"axis", "1"}, {"b", "true"}, {"sign", std::to_string(which)}}), {a, bs},
                [&] {
                  auto r = sps::logsumexp_with_sign(a, {.axis = 1, .b = bs});
                  return which == 0 ? r.first : r.second;
                });
    const Array mask = host_array({1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1}, {3, 4}, DType::kBool);
    batch.add("logsumexp where" + tag, "sps.logsumexp",
              json_obj({{"axis", "0"}, {"where", "true"}}), {a, mask},
              [&] { return sps::logsumexp(a, {.axis = 0, .where = mask}); });
    batch.add("logsumexp keepdims" + tag, "sps.logsumexp",
              json_obj({{"axis", "0"}, {"keepdims", "true"}}), {a},
              [&] { return sps::logsumexp(a, {.axis = 0, .keepdims = true}); });
    batch.add("softmax all" + tag, "sps.softmax", "{}", {a}, [&] { return sps::softmax(a); });
    batch.add("softmax axis 0" + tag, "sps.softmax", json_obj({{"axis", "0"}}), {a},
              [&] { return sps::softmax(a, 0); });
    batch.add("log_softmax all" + tag, "sps.log_softmax", "{}", {a},
              [&] { return sps::log_softmax(a); });
    batch.add("log_softmax axis 1" + tag, "sps.log_softmax", json_obj({{"axis", "1"}}), {a},
              [&] { return sps::log_softmax(a, 1); });
    std::uniform_real_distribution<double> zd(-0.98, 0.98);
    std::vector<double> zv(7);
    for (double& e : zv) e = zd(rng());
    const Array z = host_array(zv, {7}, dt);
    for (bool normalized : {false, true})
      batch.add("lpmn_values" + tag, "sps.lpmn_values",
                json_obj({{"m", "3"}, {"n", "5"}, {"normalized", normalized ? "true" : "false"}}),
                {z}, [&] { return sps::lpmn_values(3, 5, z, normalized); });
    batch.add("lpmn values" + tag, "sps.lpmn_values",
              json_obj({{"m", "2"}, {"n", "4"}, {"normalized", "false"}}), {z},
              [&] { return sps::lpmn(2, 4, z).first; });
    batch.add("lpmn derivatives" + tag, "sps.lpmn_d",
              json_obj({{"m", "2"}, {"n", "4"}, {"normalized", "false"}}), {z},
              [&] { return sps::lpmn(2, 4, z).second; });
    for (int n : {0, 1, 2, 7, 20, 40, 61, 300})
      batch.add("bernoulli " + std::to_string(n) + tag, "sps.bernoulli",
                json_obj({{"n", std::to_string(n)}}), {}, [&] { return sps::bernoulli(n); });
  }
  EXPECT_EQ(batch.run().mismatches, 0);
}

// d/dx_i sum f(x) against central differences of f in float64 at random interior points.
TEST(ScipySpecial, GradientsMatchFiniteDifferences) {
  X64Scope x64;
  for (const Case& c : cases()) {
    for (int arg : c.diff_args) {
      std::vector<std::vector<double>> vals;
      for (const Domain& d : c.dom) {
        // Keep clear of the domain's ends (finite differences need room on both sides).
        const double pad = 0.05 * (d.hi - d.lo);
        vals.push_back(draw({d.lo + pad, d.hi - pad, d.integer}, 6));
      }
      std::vector<Array> ins;
      for (size_t i = 0; i < vals.size(); ++i) ins.push_back(arg_array(c, i, vals[i], {6}, kF64));
      const Array g = grad([&](const Array& x) {
        std::vector<Array> a = ins;
        a[static_cast<size_t>(arg)] = x;
        return tnp::sum(c.f(a));
      })(ins[static_cast<size_t>(arg)]);
      std::vector<double> fd(6);
      for (size_t k = 0; k < 6; ++k) {
        const double x0 = vals[static_cast<size_t>(arg)][k];
        const double h = 1e-6 * std::max(1.0, std::abs(x0));
        auto at = [&](double xv) {
          std::vector<Array> a;
          for (size_t i = 0; i < vals.size(); ++i) {
            std::vector<double> one = {vals[i][k]};
            if (static_cast<int>(i) == arg) one[0] = xv;
            a.push_back(arg_array(c, i, one, {}, kF64));
          }
          return c.f(a).item<double>();
        };
        fd[k] = (at(x0 + h) - at(x0 - h)) / (2 * h);
      }
      EXPECT_EQ(compare(to_doubles(g), fd, 2e-5, 1e-7), "")
          << c.name << " d/darg" << arg << " at " << testing::describe(ins[0]);
    }
  }
}

// The normalizers (not elementwise): the directional derivative grad(sum(sin(3 f(x)))) . v
// against central differences along v, in float64.
TEST(ScipySpecial, NormalizerGradientsMatchFiniteDifferences) {
  X64Scope x64;
  const Array x = host_array(draw({-3, 3}, 12), {3, 4}, kF64);
  const Array v = host_array(draw({-1, 1}, 12), {3, 4}, kF64);
  const Array bw = host_array(draw({0.2, 2}, 12), {3, 4}, kF64);
  const std::vector<std::pair<std::string, std::function<Array(const Array&)>>> fns = {
      {"logsumexp", [&](const Array& a) { return sps::logsumexp(a, {.axis = 1, .b = bw}); }},
      {"logsumexp all", [](const Array& a) { return sps::logsumexp(a); }},
      {"softmax", [](const Array& a) { return sps::softmax(a, 0); }},
      {"softmax all", [](const Array& a) { return sps::softmax(a); }},
      {"log_softmax", [](const Array& a) { return sps::log_softmax(a, 1); }},
  };
  for (const auto& [name, f] : fns) {
    // A smooth scalar functional of the output, whatever its shape.
    auto loss = [&](const Array& a) { return tnp::sum(tnp::sin(3.0 * f(a))); };
    const double g = tnp::sum(grad(loss)(x) * v).item<double>();
    const double h = 1e-6;
    const double fd = (loss(x + h * v).item<double>() - loss(x - h * v).item<double>()) / (2 * h);
    EXPECT_NEAR(g, fd, 1e-6 * std::max(1.0, std::abs(fd))) << name;
  }
}

// JAX's custom JVPs at the points plain autodiff gets wrong.
TEST(ScipySpecial, CustomJvpsAtTheirSingularPoints) {
  X64Scope x64;
  // xlogy / xlog1py: d/dx at x = 0 is log(y) (finite), d/dy at x = 0 is 0, even at y = 0.
  const Array y = tnp::array({2.0, 0.5});
  const Array gx =
      grad([&](const Array& x) { return tnp::sum(sps::xlogy(x, y)); })(tnp::zeros({2}, kF64));
  EXPECT_EQ(compare(to_doubles(gx), {std::log(2.0), std::log(0.5)}, 1e-15, 0), "");
  const Array g1p =
      grad([&](const Array& x) { return tnp::sum(sps::xlog1py(x, y)); })(tnp::zeros({2}, kF64));
  EXPECT_EQ(compare(to_doubles(g1p), {std::log1p(2.0), std::log1p(0.5)}, 1e-15, 0), "");
  // entr: d/dx -x log x = -(log x + 1): +inf at 0 (JAX's _xlogx rule).
  const Array ge =
      grad([](const Array& x) { return tnp::sum(sps::entr(x)); })(tnp::array({0.0, 1.0}, kF64));
  EXPECT_EQ(to_doubles(ge)[0], kInf);
  EXPECT_DOUBLE_EQ(to_doubles(ge)[1], -1.0);
  // log_ndtr far in the lower tail: the derivative ~ -x, where 1/ndtr * phi would be 0/0.
  const Array gl = grad([](const Array& x) { return tnp::sum(sps::log_ndtr(x)); })(
      tnp::array({-40.0, -200.0}, kF64));
  // phi(x) / Phi(x) = t / (1 - 1/t^2 + 3/t^4 - 15/t^6 + ...) for t = -x (Mills' ratio).
  auto mills = [](double t) {
    const double r = 1 / (t * t);
    return t / (1 - r + 3 * r * r - 15 * r * r * r + 105 * r * r * r * r);
  };
  EXPECT_EQ(compare(to_doubles(gl), {mills(40.0), mills(200.0)}, 1e-10, 0), "");
  // logit: 1 / (x (1 - x)).
  const Array gt =
      grad([](const Array& x) { return tnp::sum(sps::logit(x)); })(tnp::array({0.25}, kF64));
  EXPECT_DOUBLE_EQ(to_doubles(gt)[0], 1 / (0.25 * 0.75));
  // Second derivatives go through the rules again: d2/dx2 xlogy(x, y) in y is -x / y^2.
  const Array h = grad([](const Array& v) {
    return tnp::sum(grad([](const Array& w) { return tnp::sum(sps::xlogy(3.0, w)); })(v));
  })(tnp::array({2.0}, kF64));
  EXPECT_DOUBLE_EQ(to_doubles(h)[0], -3.0 / 4.0);
}

// vmap and jit of a sample give the eager values.
TEST(ScipySpecial, VmapAndJitAgreeWithEager) {
  for (DType dt : {kF32, kF64}) {
    X64Scope x64(dt == kF64);
    const double tol = dt == kF64 ? 1e-13 : 2e-6;
    const Array x = host_array(draw({0.1, 5}, 12), {3, 4}, dt);
    const Array y = host_array(draw({0.1, 5}, 12), {3, 4}, dt);
    const std::vector<std::pair<std::string, std::function<Array(const Array&, const Array&)>>>
        fns = {
            {"xlogy", [](const Array& a, const Array& b) { return sps::xlogy(a, b); }},
            {"betaln", [](const Array& a, const Array& b) { return sps::betaln(a, b); }},
            {"log_ndtr", [](const Array& a, const Array& b) { return sps::log_ndtr(a - b); }},
            {"expi", [](const Array& a, const Array& b) { return sps::expi(a * b); }},
            {"hyp1f1", [](const Array& a, const Array& b) { return sps::hyp1f1(a, b, a - b); }},
            {"spence", [](const Array& a, const Array& b) { return sps::spence(a + b); }},
            {"logsumexp",
             [](const Array& a, const Array& b) { return sps::logsumexp(a, {.b = b}); }},
        };
    for (const auto& [name, f] : fns) {
      std::vector<double> want;
      for (int64_t i = 0; i < 3; ++i) {
        const std::vector<double> r = to_doubles(f(x[i], y[i]));
        want.insert(want.end(), r.begin(), r.end());
      }
      EXPECT_EQ(compare(to_doubles(vmap(f)(x, y)), want, tol, tol), "") << name << " vmap";
      EXPECT_EQ(compare(to_doubles(jit(f)(x, y)), to_doubles(f(x, y)), tol, tol), "")
          << name << " jit";
    }
  }
}

TEST(ScipySpecial, Errors) {
  const Array i = tnp::array(std::vector<int32_t>{1, 2}, {2});
  EXPECT_ERROR(TypeError, sps::ndtr(i), "x.dtype=int32 is not supported");
  EXPECT_ERROR(TypeError, sps::ndtri(i), "ndtri");
  EXPECT_ERROR(TypeError, sps::log_ndtr(i), "log_ndtr");
  EXPECT_ERROR(ValueError, sps::log_ndtr(tnp::array({1.0}), 31), "series_order must be <= 30");
  EXPECT_ERROR(ValueError, sps::log_ndtr(tnp::array({1.0}), -1), "non-negative");
  EXPECT_ERROR(TypeError, sps::polygamma(tnp::array({1.0}), tnp::array({1.0})),
               "n must be an integer array");
  EXPECT_ERROR(NotImplementedError, sps::factorial(3, true), "exact=True");
  EXPECT_ERROR(ValueError, sps::bernoulli(-1), "non-negative");
  EXPECT_ERROR(ValueError, sps::lpmn(3, 2, tnp::array({0.5})),
               "Degree 2 must be greater than or equal to order 3");
  EXPECT_ERROR(ValueError, sps::lpmn_values(1, 2, tnp::zeros({1, 1}), false),
               "z must be a 1D array");
  EXPECT_ERROR(TypeError, sps::lpmn(1, 2, i), "is not supported");
  EXPECT_ERROR(NotImplementedError, sps::sph_harm(1, 2, 0.5, 0.5), "complex64/complex128");
  EXPECT_ERROR(NotImplementedError, sps::sph_harm_y(2, 1, 0.5, 0.5), "complex64/complex128");
  EXPECT_ERROR(ValueError, sps::xlogy(tnp::zeros({3}), tnp::zeros({4})), "broadcast");
}

// Arguments broadcast as NumPy's (lax's betainc/igamma/zeta/polygamma need one shape).
TEST(ScipySpecial, Broadcasting) {
  const Array col = tnp::full({2, 1}, 2.0), row = tnp::full({3}, 0.3);
  for (const Array& r : {sps::betainc(col, 3.0, row), sps::gammainc(col, row),
                         sps::gammaincc(col, row), sps::zeta(col, row + 1.0),
                         sps::polygamma(tnp::array(std::vector<int32_t>{1, 2}, {2, 1}), row),
                         sps::xlogy(col, row), sps::expn(col, row), sps::hyp1f1(col, 1.0, row)})
    EXPECT_EQ(r.shape(), (Shape{2, 3}));
  const std::vector<double> full =
      to_doubles(sps::betainc(tnp::full({2, 3}, 2.0), 3.0, tnp::full({2, 3}, 0.3)));
  EXPECT_EQ(compare(to_doubles(sps::betainc(col, 3.0, row)), full, 0, 0), "");
}

// Integers and bools promote to the default float (promote_args_inexact); floats keep theirs.
TEST(ScipySpecial, Promotion) {
  const Array i = tnp::array(std::vector<int32_t>{1, 2}, {2});
  EXPECT_EQ(sps::gammaln(i).dtype(), kF32);
  EXPECT_EQ(sps::xlogy(i, 2.0).dtype(), kF32);
  EXPECT_EQ(sps::expi(tnp::array({1.0}, DType::kFloat16)).dtype(), DType::kFloat16);
  X64Scope x64;
  EXPECT_EQ(sps::betaln(tnp::array({1.0}, kF32), 2.0).dtype(), kF32);
  EXPECT_EQ(sps::betaln(tnp::array({1.0}, kF64), 2.0).dtype(), kF64);
  EXPECT_EQ(sps::bernoulli(3).dtype(), kF64);
}

}  // namespace
}  // namespace tessera
