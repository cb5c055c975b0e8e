// tessera::nn (include/tessera/nn.h) against references written here in double: every
// activation on fresh random inputs (moderate and large magnitudes, 0 exactly, ±0, ±inf, NaN)
// in float32, float64, float16 and bfloat16; dtypes of integer inputs; gradients against
// central differences of the references in float64 (away from kinks) and JAX's pinned custom
// values at the kinks; softmax / log_softmax / logsumexp / standardize / glu / one_hot forward
// and directional derivatives, masks, stability at large and infinite inputs; vmap against a
// loop and jit against eager. The seed is printed (TESSERA_TEST_SEED reproduces a run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "tessera/nn.h"
#include "tessera/numpy_manip.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

using namespace tessera;
using namespace tessera::testing;
namespace tnp = tessera::numpy;
namespace tnn = tessera::nn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");
constexpr DType kF16 = DType::kFloat16, kBF16 = DType::kBFloat16, kF32 = DType::kFloat32,
                kF64 = DType::kFloat64, kI32 = DType::kInt32;

double uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng());
}
int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

// NaN-propagating max/min (jnp.maximum / jnp.minimum).
double nmax(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b); }
double nmin(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b); }

double eps_of(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 9.77e-4;
    case DType::kBFloat16:
      return 7.82e-3;
    case DType::kFloat32:
      return 1.19e-7;
    default:
      return 2.22e-16;
  }
}

// ---------------------------------------------------------------- the activation table

double ref_sigmoid(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}
double ref_softplus(double x) {
  if (std::isnan(x)) return kNaN;
  return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
}
double ref_elu(double x, double alpha) { return x > 0 ? x : alpha * std::expm1(x); }
double ref_relu6(double x) { return nmin(nmax(x, 0), 6); }

struct Act {
  const char* name;
  std::function<Array(const Array&)> f;
  std::function<double(double)> ref;
  std::vector<double> kinks;  // points where the derivative jumps (skipped by the FD check)
  bool keeps_int;             // integer inputs keep their dtype (relu, hard_tanh)
  bool cancels;               // absolute error ~ eps * |x| (a difference of nearly equal terms)
  double cond = 1;            // extra relative-error factor (ill-conditioned tails)
};

const std::vector<Act>& acts() {
  static const double kSelAlpha = 1.6732632423543772848170429916717;
  static const double kSelScale = 1.0507009873554804934193349852946;
  static const std::vector<Act> v = {
      {"relu",
       [](const Array& x) { return tnn::relu(x); },
       [](double x) { return nmax(x, 0); },
       {0},
       true,
       false},
      {"relu6", [](const Array& x) { return tnn::relu6(x); }, ref_relu6, {0, 6}, false, false},
      {"gelu",
       [](const Array& x) { return tnn::gelu(x); },
       [](double x) {
         const double c = std::sqrt(2 / std::numbers::pi);
         return x * 0.5 * (1 + std::tanh(c * (x + 0.044715 * x * x * x)));
       },
       {},
       false,
       true},
      {"gelu_exact",
       [](const Array& x) { return tnn::gelu(x, false); },
       [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); },
       {},
       false,
       true,
       200},
      {"sigmoid",
       [](const Array& x) { return tnn::sigmoid(x); },
       ref_sigmoid,
       {},
       false,
       false,
       20},
      {"silu",
       [](const Array& x) { return tnn::silu(x); },
       [](double x) { return x * ref_sigmoid(x); },
       {},
       false,
       false,
       20},
      {"swish",
       [](const Array& x) { return tnn::swish(x); },
       [](double x) { return x * ref_sigmoid(x); },
       {},
       false,
       false,
       20},
      {"log_sigmoid",
       [](const Array& x) { return tnn::log_sigmoid(x); },
       [](double x) { return -ref_softplus(-x); },
       {},
       false,
       false,
       20},
      {"softplus",
       [](const Array& x) { return tnn::softplus(x); },
       ref_softplus,
       {},
       false,
       false,
       20},
      {"soft_sign",
       [](const Array& x) { return tnn::soft_sign(x); },
       [](double x) { return x / (std::abs(x) + 1); },
       {0},
       false,
       false},
      {"elu",
       [](const Array& x) { return tnn::elu(x); },
       [](double x) { return ref_elu(x, 1); },
       {0},
       false,
       false},
      {"elu_alpha",
       [](const Array& x) { return tnn::elu(x, 0.5); },
       [](double x) { return ref_elu(x, 0.5); },
       {0},
       false,
       false},
      {"celu",
       [](const Array& x) { return tnn::celu(x, 1.5); },
       [](double x) { return nmax(x, 0) + 1.5 * std::expm1(nmin(x, 0) / 1.5); },
       {0},
       false,
       false},
      {"selu",
       [](const Array& x) { return tnn::selu(x); },
       [](double x) { return kSelScale * ref_elu(x, kSelAlpha); },
       {0},
       false,
       false},
      {"leaky_relu",
       [](const Array& x) { return tnn::leaky_relu(x); },
       [](double x) { return x >= 0 ? x : 0.01 * x; },
       {0},
       false,
       false},
      {"leaky_relu_slope",
       [](const Array& x) { return tnn::leaky_relu(x, 0.2); },
       [](double x) { return x >= 0 ? x : 0.2 * x; },
       {0},
       false,
       false},
      {"hard_tanh",
       [](const Array& x) { return tnn::hard_tanh(x); },
       [](double x) { return x > 1 ? 1 : (x < -1 ? -1 : x); },
       {-1, 1},
       true,
       false},
      {"hard_sigmoid",
       [](const Array& x) { return tnn::hard_sigmoid(x); },
       [](double x) { return ref_relu6(x + 3) / 6; },
       {-3, 3},
       false,
       true},
      {"hard_silu",
       [](const Array& x) { return tnn::hard_silu(x); },
       [](double x) { return x * ref_relu6(x + 3) / 6; },
       {-3, 3},
       false,
       true},
      {"hard_swish",
       [](const Array& x) { return tnn::hard_swish(x); },
       [](double x) { return x * ref_relu6(x + 3) / 6; },
       {-3, 3},
       false,
       true},
      {"squareplus",
       [](const Array& x) { return tnn::squareplus(x); },
       [](double x) { return (x + std::sqrt(x * x + 4)) / 2; },
       {},
       false,
       true},
      {"squareplus_b",
       [](const Array& x) { return tnn::squareplus(x, 0.25); },
       [](double x) { return (x + std::sqrt(x * x + 0.25)) / 2; },
       {},
       false,
       true},
      {"mish",
       [](const Array& x) { return tnn::mish(x); },
       [](double x) { return x * std::tanh(ref_softplus(x)); },
       {},
       false,
       false,
       20},
      {"sparse_plus",
       [](const Array& x) { return tnn::sparse_plus(x); },
       [](double x) {
         if (std::isnan(x)) return kNaN;
         return x <= -1 ? 0.0 : (x >= 1 ? x : (x + 1) * (x + 1) / 4);
       },
       {-1, 1},
       false,
       true},
      {"sparse_sigmoid",
       [](const Array& x) { return tnn::sparse_sigmoid(x); },
       [](double x) { return 0.5 * nmin(nmax(x + 1, 0), 2); },
       {-1, 1},
       false,
       true},
      {"tanh",
       [](const Array& x) { return tnn::tanh(x); },
       [](double x) { return std::tanh(x); },
       {},
       false,
       false,
       20},
      {"identity",
       [](const Array& x) { return tnn::identity(x); },
       [](double x) { return x; },
       {},
       true,
       false},
  };
  return v;
}

// Values with every kind of input: moderate, kinks exactly, ±0, ±inf, NaN, and (for 32/64-bit
// floats) large magnitudes where a naive exp overflows.
std::vector<double> draw_values(int64_t n, DType d) {
  const bool wide = d == kF32 || d == kF64;
  const std::vector<double> specials = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 3.0, -3.0, 6.0};
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    const double u = uniform(0, 1);
    if (u < 0.15) {
      x = specials[static_cast<size_t>(uniform_int(0, static_cast<int>(specials.size()) - 1))];
    } else if (u < 0.3 && wide) {
      x = (uniform(0, 1) < 0.5 ? -1 : 1) * std::exp(uniform(std::log(20.0), std::log(1e4)));
    } else {
      x = uniform(-8, 8);
    }
  }
  return v;
}

// |got - want| <= rtol |want| + atol, NaNs and infinities equal exactly; "" when close.
std::string check_close(const std::string& what, const std::vector<double>& xs,
                        const std::vector<double>& got, const std::vector<double>& want,
                        double rtol, const std::function<double(double)>& atol) {
  if (got.size() != want.size()) return what + ": size " + std::to_string(got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool ok = std::isnan(w)   ? std::isnan(g)
                    : std::isinf(w) ? g == w
                                    : std::abs(g - w) <= rtol * std::abs(w) + atol(xs[i]);
    if (!ok)
      return what + " at x=" + std::to_string(xs[i]) + " (index " + std::to_string(i) + "): got " +
             std::to_string(g) + " want " + std::to_string(w);
  }
  return "";
}

TEST(NnActivations, ForwardAgainstDoubleReferences) {
  X64Scope x64;  // float64 inputs stay float64
  for (const Act& act : acts()) {
    for (DType d : {kF32, kF64, kF16, kBF16}) {
      const std::vector<double> vals = draw_values(257, d);
      const Array x = tnp::array(vals, {257}, d);
      const std::vector<double> xs = to_doubles(x);  // the values after rounding to d
      const Array y = act.f(x);
      EXPECT_EQ(y.dtype(), d) << act.name;
      std::vector<double> want(xs.size());
      std::transform(xs.begin(), xs.end(), want.begin(), act.ref);
      const double eps = eps_of(d);
      const bool narrow = d == kF16 || d == kBF16;
      // 16-bit floats round after every op (as XLA computes them): a few ulps per op.
      const double rtol = (narrow ? 8 : 16) * eps * act.cond;
      // Results below the smallest normal number round to subnormals or 0.
      const double tiny = d == kF16 ? 1e-4 : (d == kF64 ? 1e-300 : 1e-37);
      const auto atol = [&](double xv) {
        return act.cancels ? 8 * eps * (1 + std::abs(xv)) : tiny;
      };
      const std::string err = check_close(std::string(act.name) + "/" + std::string(dtype_name(d)),
                                          xs, to_doubles(y), want, rtol, atol);
      EXPECT_EQ(err, "");
    }
  }
}

TEST(NnActivations, IntegerInputsPromoteAsJax) {
  const Array xi = tnp::array(std::vector<int32_t>{-7, -1, 0, 1, 2, 5, 6, 9}, {8});
  for (const Act& act : acts()) {
    const Array y = act.f(xi);
    EXPECT_EQ(y.dtype(), act.keeps_int ? kI32 : kF32) << act.name;
    std::vector<double> want;
    for (double x : to_doubles(xi)) want.push_back(act.ref(x));
    EXPECT_EQ(check_close(act.name, to_doubles(xi), to_doubles(y), want, 1e-6,
                          [](double x) { return 1e-6 * (1 + std::abs(x)); }),
              "");
  }
  // A weak C++ scalar stays the default float; an int scalar to relu stays int.
  EXPECT_EQ(tnn::sigmoid(2).dtype(), kF32);
  EXPECT_EQ(tnn::relu(2).dtype(), kI32);
  EXPECT_EQ(tnn::gelu(tnp::array({1.0}, kF16)).dtype(), kF16);
}

// Derivatives of every activation against central differences of the double reference, in
// float64, at random points at least 1e-3 away from the kinks.
TEST(NnActivations, GradientsAgainstFiniteDifferences) {
  X64Scope x64;
  for (const Act& act : acts()) {
    std::vector<double> xs;
    while (xs.size() < 64) {
      const double x = uniform(0, 1) < 0.2 ? uniform(-30, 30) : uniform(-7, 7);
      bool near_kink = false;
      for (double k : act.kinks) near_kink = near_kink || std::abs(x - k) < 1e-3;
      if (!near_kink) xs.push_back(x);
    }
    const Array x = tnp::array(xs, {64}, kF64);
    const Array g = grad([&](const Array& v) { return tnp::sum(act.f(v)); })(x);
    ASSERT_EQ(g.dtype(), kF64);
    std::vector<double> fd;
    const double h = 1e-6;
    for (double xv : xs) fd.push_back((act.ref(xv + h) - act.ref(xv - h)) / (2 * h));
    EXPECT_EQ(check_close(std::string(act.name) + " grad", xs, to_doubles(g), fd, 1e-6,
                          [](double) { return 1e-7; }),
              "");
  }
}

// JAX's custom JVPs: relu'(0) = 0; relu6'(0) = relu6'(6) = 0; hence hard_sigmoid'(±3) = 0.
TEST(NnActivations, PinnedDerivativesAtKinks) {
  const auto d = [](const std::function<Array(const Array&)>& f, double x) {
    return grad([&](const Array& v) { return tnp::sum(f(v)); })(tnp::array({x})).item<float>();
  };
  EXPECT_EQ(d(tnn::relu, 0.0), 0.0f);
  EXPECT_EQ(d(tnn::relu, -0.0), 0.0f);
  EXPECT_EQ(d(tnn::relu, 1e-30), 1.0f);
  EXPECT_EQ(d(tnn::relu, -2.0), 0.0f);
  EXPECT_EQ(d(tnn::relu6, 0.0), 0.0f);
  EXPECT_EQ(d(tnn::relu6, 6.0), 0.0f);
  EXPECT_EQ(d(tnn::relu6, 5.999f), 1.0f);
  EXPECT_EQ(d(tnn::relu6, 3.0), 1.0f);
  EXPECT_EQ(d(tnn::relu6, 7.0), 0.0f);
  EXPECT_EQ(d(tnn::hard_sigmoid, 3.0), 0.0f);
  EXPECT_EQ(d(tnn::hard_sigmoid, -3.0), 0.0f);
  EXPECT_FLOAT_EQ(d(tnn::hard_sigmoid, 0.5), 1.0f / 6);
  EXPECT_EQ(d(tnn::hard_silu, -3.0), 0.0f);  // hard_sigmoid(-3) + (-3) * 0
  EXPECT_EQ(d(tnn::hard_silu, 3.0), 1.0f);   // hard_sigmoid(3) + 3 * 0
  // Forward mode and NaN: relu's tangent at NaN is 0 (x > 0 is false), as JAX's select.
  auto [y, t] = jvp([](const Array& v) { return tnn::relu(v); },
                    std::make_tuple(tnp::array({0.0, std::nan(""), 2.0, -1.0})),
                    std::make_tuple(tnp::array({5.0, 5.0, 5.0, 5.0})));
  EXPECT_EQ(to_doubles(t), (std::vector<double>{0, 0, 5, 0}));
  // Second derivatives through the rule: relu'' = 0 everywhere.
  const Array x = tnp::array({-1.0, 0.0, 2.0});
  const Array g2 = grad([](const Array& v) {
    return tnp::sum(grad([](const Array& w) { return tnp::sum(tnn::relu(w) * w); })(v));
  })(x);
  EXPECT_EQ(to_doubles(g2), (std::vector<double>{0, 0, 2}));  // d/dx (relu'(x) x + relu(x))
}

// ---------------------------------------------------------------- softmax family references

// Rows of a [rows, n] matrix (the reduced axis last).
using Rows = std::vector<std::vector<double>>;
Rows rows_of(const std::vector<double>& v, int64_t rows, int64_t n) {
  Rows r(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i)
    r[static_cast<size_t>(i)].assign(v.begin() + i * n, v.begin() + (i + 1) * n);
  return r;
}

// log(sum(exp(x_j))) over the entries with mask true, in double with the max subtracted.
double ref_lse(const std::vector<double>& x, const std::vector<bool>& m) {
  double mx = -kInf;
  for (size_t j = 0; j < x.size(); ++j)
    if (m[j]) mx = std::isnan(x[j]) || std::isnan(mx) ? kNaN : std::max(mx, x[j]);
  if (std::isnan(mx)) return kNaN;
  const double shift = std::isfinite(mx) ? mx : 0.0;
  double s = 0;
  for (size_t j = 0; j < x.size(); ++j)
    if (m[j]) s += std::exp(x[j] - shift);
  return std::log(s) + shift;
}

std::vector<double> draw_logits(int64_t n, double scale, double p_special) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    x = uniform(-scale, scale);
    if (uniform(0, 1) < p_special) x = -kInf;
  }
  return v;
}

TEST(NnSoftmax, ForwardMatchesReferenceWithMasksAndLargeInputs) {
  for (double scale : {3.0, 1e4}) {
    const int64_t rows = 6, n = 9;
    std::vector<double> xv = draw_logits(rows * n, scale, 0.1);
    for (int64_t j = 0; j < n; ++j) xv[static_cast<size_t>(n + j)] = -kInf;  // row 1: all -inf
    xv[static_cast<size_t>(2 * n + 3)] = kInf;                               // row 2: a +inf
    std::vector<bool> mask(static_cast<size_t>(rows * n));
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = uniform(0, 1) < 0.7;
    for (int64_t j = 0; j < n; ++j) mask[static_cast<size_t>(3 * n + j)] = false;  // row 3
    const Array x = tnp::array(xv, {rows, n}, kF32);
    const Array m = tnp::array(mask, {rows, n});
    const std::vector<double> xs = to_doubles(x);
    for (bool masked : {false, true}) {
      const Array sm = masked ? tnn::softmax(x, -1, m) : tnn::softmax(x);
      const Array lsm = masked ? tnn::log_softmax(x, -1, m) : tnn::log_softmax(x);
      const Array lse =
          masked ? tnn::logsumexp(x, {.axis = -1, .where = m}) : tnn::logsumexp(x, {.axis = 1});
      ASSERT_EQ(sm.dtype(), kF32);
      std::vector<double> want_sm, want_lsm, want_lse;
      const Rows r = rows_of(xs, rows, n);
      for (int64_t i = 0; i < rows; ++i) {
        std::vector<bool> mi(static_cast<size_t>(n), true);
        if (masked)
          for (int64_t j = 0; j < n; ++j)
            mi[static_cast<size_t>(j)] = mask[static_cast<size_t>(i * n + j)];
        const double l = ref_lse(r[static_cast<size_t>(i)], mi);
        want_lse.push_back(l);
        for (int64_t j = 0; j < n; ++j) {
          const double xij = r[static_cast<size_t>(i)][static_cast<size_t>(j)];
          const bool in = mi[static_cast<size_t>(j)];
          // JAX: x - max, then exp / sum; -inf - -inf and inf - inf are NaN.
          double mx = -kInf;
          for (int64_t k = 0; k < n; ++k)
            if (mi[static_cast<size_t>(k)])
              mx = std::max(mx, r[static_cast<size_t>(i)][static_cast<size_t>(k)]);
          double s = 0;
          for (int64_t k = 0; k < n; ++k)
            if (mi[static_cast<size_t>(k)])
              s += std::exp(r[static_cast<size_t>(i)][static_cast<size_t>(k)] - mx);
          want_sm.push_back(in ? std::exp(xij - mx) / s : 0.0);
          const double shifted = xij - mx;
          want_lsm.push_back(in ? shifted - std::log(s) : -kInf);
        }
      }
      const auto atol = [](double) { return 1e-6; };
      const std::vector<double> xx = xs;
      EXPECT_EQ(check_close("softmax", xx, to_doubles(sm), want_sm, 1e-5, atol), "");
      std::vector<double> lx(want_lse.size(), 0.0);
      EXPECT_EQ(check_close("logsumexp", lx, to_doubles(lse), want_lse, 1e-6, atol), "");
      EXPECT_EQ(check_close("log_softmax", xx, to_doubles(lsm), want_lsm, 1e-6,
                            [&](double) { return 1e-6 * (1 + scale); }),
                "");
    }
  }
  // JAX's special cases, spelled out: an all -inf row gives NaN (softmax, log_softmax) and
  // -inf (logsumexp); a +inf entry gives NaN and +inf; a fully masked row gives 0 / -inf.
  const Array row = tnp::array({-kInf, -kInf, -kInf});
  EXPECT_TRUE(std::isnan(to_doubles(tnn::log_softmax(row))[0]));
  EXPECT_TRUE(std::isnan(to_doubles(tnn::softmax(row))[0]));
  EXPECT_EQ(tnn::logsumexp(row).item<float>(), -INFINITY);
  EXPECT_EQ(tnn::logsumexp(tnp::array({1.0, kInf})).item<float>(), INFINITY);
  EXPECT_TRUE(std::isnan(tnn::logsumexp(tnp::array({1.0, kNaN})).item<float>()));
  const Array none = tnp::array(std::vector<bool>{false, false, false}, {3});
  EXPECT_EQ(to_doubles(tnn::softmax(tnp::array({1.0, 2.0, 3.0}), -1, none)),
            (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(to_doubles(tnn::log_softmax(tnp::array({1.0, 2.0, 3.0}), -1, none)),
            (std::vector<double>{-kInf, -kInf, -kInf}));
}

TEST(NnSoftmax, AxesKeepdimsDtypes) {
  const Array x = random_array({2, 3, 4}, kF32, -3, 3);
  const std::vector<double> xs = to_doubles(x);
  // axis (0, 2): every (j) column of the middle axis sums to 1.
  const Array sm = tnn::softmax(x, {0, 2});
  const Array total = tnp::sum(sm, {.axis = {0, 2}});
  EXPECT_EQ(compare(to_doubles(total), std::vector<double>(3, 1.0), 1e-6, 1e-6), "");
  // axis none: the whole array.
  EXPECT_NEAR(tnp::sum(tnn::softmax(x, std::nullopt)).item<float>(), 1.0f, 1e-5f);
  // logsumexp over (0, 2) with keepdims against a loop.
  const Array lse = tnn::logsumexp(x, {.axis = {0, 2}, .keepdims = true});
  ASSERT_EQ(lse.shape(), (Shape{1, 3, 1}));
  for (int j = 0; j < 3; ++j) {
    std::vector<double> sl;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) sl.push_back(xs[static_cast<size_t>(i * 12 + j * 4 + k)]);
    EXPECT_NEAR(to_doubles(lse)[static_cast<size_t>(j)], ref_lse(sl, std::vector<bool>(8, true)),
                1e-5);
  }
  // all axes (none): a scalar.
  EXPECT_EQ(tnn::logsumexp(x).ndim(), 0);
  // Integer inputs promote; 16-bit floats keep their dtype.
  EXPECT_EQ(tnn::softmax(tnp::array(std::vector<int32_t>{1, 2, 3}, {3})).dtype(), kF32);
  EXPECT_EQ(tnn::log_softmax(tnp::astype(x, kBF16)).dtype(), kBF16);
  EXPECT_EQ(tnn::logsumexp(tnp::astype(x, kF16)).dtype(), kF16);
  EXPECT_EQ(compare(to_doubles(tnn::softmax(tnp::astype(x, kBF16))), to_doubles(tnn::softmax(x)),
                    2e-2, 4e-3),
            "");
}

TEST(NnLogsumexp, ScaleFactorsAndSign) {
  X64Scope x64;
  const int64_t rows = 5, n = 7;
  const Array a = random_array({rows, n}, kF64, -4, 4);
  const Array b = random_array({rows, n}, kF64, -1, 2);
  const std::vector<double> av = to_doubles(a), bv = to_doubles(b);
  const Array out = tnn::logsumexp(a, {.axis = 1, .b = b});
  const auto [mag, sign] = tnn::logsumexp_with_sign(a, {.axis = 1, .b = b});
  for (int64_t i = 0; i < rows; ++i) {
    double s = 0, s_abs = 0;  // the sum and the sum of |terms| (its condition number)
    for (int64_t j = 0; j < n; ++j) {
      const double term =
          bv[static_cast<size_t>(i * n + j)] * std::exp(av[static_cast<size_t>(i * n + j)]);
      s += term;
      s_abs += std::abs(term);
    }
    const double tol = 1e-12 + 1e-14 * s_abs / std::abs(s);
    const double got = to_doubles(out)[static_cast<size_t>(i)];
    if (s < 0) {
      EXPECT_TRUE(std::isnan(got)) << i;
    } else {
      EXPECT_NEAR(got, std::log(s), tol);
    }
    EXPECT_NEAR(to_doubles(mag)[static_cast<size_t>(i)], std::log(std::abs(s)), tol);
    EXPECT_EQ(to_doubles(sign)[static_cast<size_t>(i)], s > 0 ? 1.0 : -1.0);
  }
  // b == 0 excludes an entry even when it is +inf (JAX's where(b != 0, a, -inf)).
  const Array a2 = tnp::array({1.0, kInf, 2.0});
  const Array b2 = tnp::array({1.0, 0.0, 1.0});
  EXPECT_NEAR(tnn::logsumexp(a2, {.b = b2}).item<double>(), std::log(std::exp(1.0) + std::exp(2.0)),
              1e-12);
  // A scalar b broadcasts: log(2 sum(exp(a))) = log 2 + logsumexp(a).
  EXPECT_NEAR(tnn::logsumexp(a, {.b = 2.0}).item<double>(),
              std::log(2.0) + tnn::logsumexp(a).item<double>(), 1e-12);
}

// Directional derivatives of the reductions against central differences in float64: the JVP
// (forward) and the VJP (grad of <w, f>) agree with (f(x + h v) - f(x - h v)) / 2h.
void check_directional(const std::string& what, const std::function<Array(const Array&)>& f,
                       const Array& x, double tol = 1e-6) {
  const Array v = random_array(x.shape(), kF64, -1, 1);
  const double h = 1e-6;
  const std::vector<double> fp = to_doubles(f(x + h * v)), fm = to_doubles(f(x - h * v));
  std::vector<double> fd(fp.size());
  for (size_t i = 0; i < fd.size(); ++i) fd[i] = (fp[i] - fm[i]) / (2 * h);
  auto [y, t] = jvp(f, std::make_tuple(x), std::make_tuple(v));
  EXPECT_EQ(compare(to_doubles(t), fd, tol, tol), "") << what << " jvp";
  const Array w = random_array(y.shape(), kF64, -1, 1);
  const Array g = grad([&](const Array& u) { return tnp::sum(f(u) * w); })(x);
  double lhs = 0, rhs = 0;
  const std::vector<double> gv = to_doubles(g), vv = to_doubles(v), wv = to_doubles(w);
  for (size_t i = 0; i < gv.size(); ++i) lhs += gv[i] * vv[i];
  for (size_t i = 0; i < wv.size(); ++i) rhs += wv[i] * fd[i];
  EXPECT_NEAR(lhs, rhs, tol * (1 + std::abs(rhs))) << what << " vjp";
}

TEST(NnSoftmax, DerivativesAgainstFiniteDifferences) {
  X64Scope x64;
  const Array x = random_array({3, 5}, kF64, -3, 3);
  const Array m = tnp::array(std::vector<bool>{true, false, true, true, false, true, true, true,
                                               true, true, false, true, false, true, true},
                             {3, 5});
  check_directional(
      "softmax", [](const Array& u) { return tnn::softmax(u); }, x);
  check_directional(
      "softmax axis 0", [](const Array& u) { return tnn::softmax(u, 0); }, x);
  check_directional(
      "softmax where", [&](const Array& u) { return tnn::softmax(u, -1, m); }, x);
  check_directional(
      "log_softmax", [](const Array& u) { return tnn::log_softmax(u); }, x);
  check_directional(
      "log_softmax where",
      [&](const Array& u) { return tnp::where(m, tnn::log_softmax(u, -1, m), 0.0); }, x);
  check_directional(
      "logsumexp", [](const Array& u) { return tnn::logsumexp(u, {.axis = 1}); }, x);
  check_directional(
      "logsumexp all", [](const Array& u) { return tnn::logsumexp(u); }, x);
  check_directional(
      "logsumexp where keepdims",
      [&](const Array& u) { return tnn::logsumexp(u, {.axis = 0, .keepdims = true, .where = m}); },
      x);
  const Array b = random_array({3, 5}, kF64, 0.5, 2);
  check_directional(
      "logsumexp b (d/da)", [&](const Array& u) { return tnn::logsumexp(u, {.axis = 1, .b = b}); },
      x);
  check_directional(
      "logsumexp b (d/db)", [&](const Array& u) { return tnn::logsumexp(x, {.axis = 1, .b = u}); },
      b);
  // A negative sum with return_sign: d log|s| = ds / s (the sign included).
  const Array bn = tnp::array({{-1.0, -2.0, 0.5}, {1.0, 1.5, -0.2}}, kF64);
  const Array an = tnp::array({{0.3, -0.1, 0.2}, {0.1, 0.4, -1.0}}, kF64);
  check_directional(
      "logsumexp sign",
      [&](const Array& u) { return tnn::logsumexp_with_sign(u, {.axis = 1, .b = bn}).first; }, an);
  check_directional(
      "standardize", [](const Array& u) { return tnn::standardize(u); }, x, 1e-5);
  check_directional(
      "standardize where", [&](const Array& u) { return tnn::standardize(u, -1, {}, {}, 1e-5, m); },
      x, 1e-5);
  check_directional(
      "glu", [](const Array& u) { return tnn::glu(u, 0); }, random_array({4, 3}, kF64, -3, 3));
  // Second order through softmax's custom rule (its rule calls the custom function again).
  check_directional(
      "grad softmax",
      [](const Array& u) {
        return grad([](const Array& z) { return tnp::sum(tnn::softmax(z) * tnp::arange(5.0)); })(u);
      },
      x, 1e-5);
}

// The stable backward: gradients at huge logits are finite and equal y * (t - sum(y t)),
// -inf entries get gradient 0, and masked entries too.
TEST(NnSoftmax, StableBackwardAtLargeAndInfiniteInputs) {
  const Array x = tnp::array({{1e4, 1e4 - 1, -kInf, 1e4 - 3}, {-5e3, -5e3 + 2, -5e3 + 1, -kInf}});
  const Array t = tnp::array({{0.5, -1.0, 2.0, 3.0}, {1.0, 0.0, -2.0, 4.0}});
  auto [y, dy] =
      jvp([](const Array& u) { return tnn::softmax(u); }, std::make_tuple(x), std::make_tuple(t));
  auto [ly, dly] = jvp([](const Array& u) { return tnn::log_softmax(u); }, std::make_tuple(x),
                       std::make_tuple(t));
  auto [lse, dlse] = jvp([](const Array& u) { return tnn::logsumexp(u, {.axis = 1}); },
                         std::make_tuple(x), std::make_tuple(t));
  const std::vector<double> xs = to_doubles(x), ts = to_doubles(t);
  std::vector<double> want_dy, want_dly, want_dlse;
  for (int i = 0; i < 2; ++i) {
    double mx = -kInf, s = 0;
    for (int j = 0; j < 4; ++j) mx = std::max(mx, xs[static_cast<size_t>(i * 4 + j)]);
    for (int j = 0; j < 4; ++j) s += std::exp(xs[static_cast<size_t>(i * 4 + j)] - mx);
    double yt = 0;
    std::vector<double> yi(4);
    for (int j = 0; j < 4; ++j) {
      yi[static_cast<size_t>(j)] = std::exp(xs[static_cast<size_t>(i * 4 + j)] - mx) / s;
      yt += yi[static_cast<size_t>(j)] * ts[static_cast<size_t>(i * 4 + j)];
    }
    for (int j = 0; j < 4; ++j) {
      want_dy.push_back(yi[static_cast<size_t>(j)] * (ts[static_cast<size_t>(i * 4 + j)] - yt));
      // log_softmax at a -inf entry: t - yt (its value stays -inf, its tangent finite).
      want_dly.push_back(ts[static_cast<size_t>(i * 4 + j)] - yt);
    }
    want_dlse.push_back(yt);
  }
  EXPECT_EQ(compare(to_doubles(dy), want_dy, 1e-5, 1e-6), "");
  EXPECT_EQ(compare(to_doubles(dly), want_dly, 1e-5, 1e-6), "");
  EXPECT_EQ(compare(to_doubles(dlse), want_dlse, 1e-5, 1e-6), "");
  // Reverse mode too (grad of a weighted sum is finite everywhere).
  const Array g = grad([](const Array& u) {
    return tnp::sum(tnn::softmax(u) * tnp::arange(4.0)) + tnp::sum(tnn::logsumexp(u, {.axis = 1}));
  })(x);
  for (double v : to_doubles(g)) EXPECT_TRUE(std::isfinite(v)) << v;
}

TEST(NnStandardize, ForwardAgainstReference) {
  const int64_t rows = 4, n = 6;
  const Array x = random_array({rows, n}, kF32, -5, 5);
  std::vector<bool> mask(static_cast<size_t>(rows * n));
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = i % static_cast<size_t>(n) == 0 || uniform(0, 1) < 0.6;
  const Array m = tnp::array(mask, {rows, n});
  const std::vector<double> xs = to_doubles(x);
  for (bool masked : {false, true}) {
    const Array y = masked ? tnn::standardize(x, -1, {}, {}, 1e-5, m) : tnn::standardize(x);
    std::vector<double> want;
    for (int64_t i = 0; i < rows; ++i) {
      double s = 0, s2 = 0, c = 0;
      for (int64_t j = 0; j < n; ++j) {
        const size_t k = static_cast<size_t>(i * n + j);
        if (masked && !mask[k]) continue;
        s += xs[k];
        s2 += xs[k] * xs[k];
        c += 1;
      }
      const double mean = s / c, var = s2 / c - mean * mean;
      for (int64_t j = 0; j < n; ++j)
        want.push_back((xs[static_cast<size_t>(i * n + j)] - mean) / std::sqrt(var + 1e-5));
    }
    EXPECT_EQ(compare(to_doubles(y), want, 1e-4, 1e-4), "") << masked;
  }
  // Given mean and variance (broadcast), axis 0, and an integer input.
  const Array mu = tnp::array({0.5}), var = tnp::array({4.0});
  std::vector<double> want;
  for (double v : xs) want.push_back((v - 0.5) / std::sqrt(4.0 + 1e-5));
  EXPECT_EQ(compare(to_doubles(tnn::standardize(x, 0, mu, var)), want, 1e-6, 1e-6), "");
  EXPECT_EQ(tnn::standardize(tnp::array(std::vector<int32_t>{1, 2, 3}, {3})).dtype(), kF32);
  EXPECT_EQ(tnn::standardize(tnp::astype(x, kBF16)).dtype(), kBF16);
}

TEST(NnGlu, ForwardAndErrors) {
  const Array x = random_array({3, 4, 2}, kF32, -4, 4);
  const std::vector<double> xs = to_doubles(x);
  const Array y = tnn::glu(x, 1);
  ASSERT_EQ(y.shape(), (Shape{3, 2, 2}));
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k)
        want.push_back(xs[static_cast<size_t>(i * 8 + j * 2 + k)] *
                       ref_sigmoid(xs[static_cast<size_t>(i * 8 + (j + 2) * 2 + k)]));
  EXPECT_EQ(compare(to_doubles(y), want, 1e-6, 1e-6), "");
  EXPECT_EQ(tnn::glu(x).shape(), (Shape{3, 4, 1}));
  EXPECT_ERROR(ValueError, tnn::glu(x, 0), "[glu] axis size must be divisible by 2");
  EXPECT_ERROR(IndexError, tnn::glu(x, 3), "axis");
  EXPECT_ERROR(ValueError, tnn::glu(tnp::asarray(1.0)), "[glu] x must have at least one dimension");
}

TEST(NnOneHot, LabelsAxesDtypesAndOutOfRange) {
  for (int64_t axis : {-1, 0, 1, -2}) {
    const int64_t nc = uniform_int(1, 6);
    const Shape s{3, 4};
    std::vector<int32_t> labels(12);
    for (int32_t& l : labels) l = uniform_int(-2, static_cast<int>(nc) + 1);  // some out of range
    const Array x = tnp::array(labels, s);
    const Array y = tnn::one_hot(x, nc, std::nullopt, axis);
    EXPECT_EQ(y.dtype(), kF32);
    const int64_t pos = axis < 0 ? axis + 3 : axis;
    Shape want_shape = s;
    want_shape.insert(want_shape.begin() + pos, nc);
    ASSERT_EQ(y.shape(), want_shape);
    const std::vector<double> yv = to_doubles(y);
    // Every output element by its multi-index: (i, j, k) with the class at position pos.
    for (int64_t a = 0; a < want_shape[0]; ++a)
      for (int64_t b = 0; b < want_shape[1]; ++b)
        for (int64_t c = 0; c < want_shape[2]; ++c) {
          const int64_t idx[3] = {a, b, c};
          int64_t cls = idx[pos], rest[2], r = 0;
          for (int64_t d = 0; d < 3; ++d)
            if (d != pos) rest[r++] = idx[d];
          const int32_t label = labels[static_cast<size_t>(rest[0] * 4 + rest[1])];
          const double got = yv[static_cast<size_t>((a * want_shape[1] + b) * want_shape[2] + c)];
          EXPECT_EQ(got, label == cls ? 1.0 : 0.0) << "label " << label << " class " << cls;
        }
  }
  // dtype, rank 0, x64's default float64, float labels (JAX compares them as values).
  EXPECT_EQ(tnn::one_hot(tnp::array(std::vector<int32_t>{2}, {1}), 3, kI32).dtype(), kI32);
  EXPECT_EQ(to_doubles(tnn::one_hot(2, 4)), (std::vector<double>{0, 0, 1, 0}));
  EXPECT_EQ(to_doubles(tnn::one_hot(tnp::array({1.0, 2.5}), 3)),
            (std::vector<double>{0, 1, 0, 0, 0, 0}));
  {
    X64Scope x64;
    EXPECT_EQ(tnn::one_hot(tnp::array(std::vector<int32_t>{0, 1}, {2}), 2).dtype(), kF64);
  }
  EXPECT_EQ(tnn::one_hot(tnp::array(std::vector<int32_t>{0, 1}, {2}), 0).shape(), (Shape{2, 0}));
  EXPECT_ERROR(ValueError, tnn::one_hot(1, -1), "[one_hot] num_classes must be non-negative");
  EXPECT_ERROR(TypeError, tnn::one_hot(tnp::array(std::vector<bool>{true}, {1}), 2),
               "[one_hot] x must be an array of integer class labels");
  EXPECT_ERROR(IndexError,
               tnn::one_hot(tnp::array(std::vector<int32_t>{0, 1}, {2}), 2, std::nullopt, 2),
               "axis");
}

// vmap over a leading batch axis equals a loop over its slices, for every function.
TEST(NnTransforms, VmapMatchesLoopAndJitMatchesEager) {
  const Array xb = random_array({4, 3, 6}, kF32, -4, 4);
  const Array mb = tnp::greater(random_array({4, 3, 6}, kF32, 0, 1), 0.3);
  const Array labels =
      tnp::array(std::vector<int32_t>{0, 3, -1, 2, 7, 1, 1, 0, 2, 3, 4, 5}, {4, 3});
  std::vector<std::pair<std::string, std::function<Array(const Array&, const Array&)>>> fns = {
      {"softmax", [](const Array& x, const Array&) { return tnn::softmax(x); }},
      {"softmax axis 0 where",
       [](const Array& x, const Array& m) { return tnn::softmax(x, 0, m); }},
      {"log_softmax where",
       [](const Array& x, const Array& m) { return tnn::log_softmax(x, -1, m); }},
      {"logsumexp", [](const Array& x, const Array&) { return tnn::logsumexp(x, {.axis = 1}); }},
      {"logsumexp where b",
       [](const Array& x, const Array& m) {
         return tnn::logsumexp(x, {.axis = -1, .b = 0.5 * m + 0.25, .where = m});
       }},
      {"standardize where",
       [](const Array& x, const Array& m) { return tnn::standardize(x, -1, {}, {}, 1e-5, m); }},
      {"glu", [](const Array& x, const Array&) { return tnn::glu(x); }},
  };
  for (const Act& act : acts())
    fns.push_back({act.name, [&act](const Array& x, const Array&) { return act.f(x); }});
  for (const auto& [name, f] : fns) {
    const Array batched = vmap(f)(xb, mb);
    const Array jitted = jit(f)(xb[0], mb[0]);
    EXPECT_EQ(compare(to_doubles(jitted), to_doubles(f(xb[0], mb[0])), 1e-6, 1e-6), "")
        << name << " jit";
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(compare(to_doubles(batched[i]), to_doubles(f(xb[i], mb[i])), 1e-6, 1e-6), "")
          << name << " vmap " << i;
    // Gradients compose with both.
    // Non-finite outputs (log_softmax's masked -inf) are excluded from the loss.
    const auto loss = [&f](const Array& x, const Array& m) {
      const Array y = f(x, m);
      const Array yc = tnp::where(tnp::isfinite(y), y, 0.0);
      return tnp::sum(yc * yc) + tnp::sum(yc);
    };
    const Array g = grad(loss)(xb[1], mb[1]);
    EXPECT_EQ(compare(to_doubles(jit(grad(loss))(xb[1], mb[1])), to_doubles(g), 1e-5, 1e-5), "")
        << name << " jit(grad)";
    EXPECT_EQ(compare(to_doubles(vmap(grad(loss))(xb, mb)[1]), to_doubles(g), 1e-5, 1e-5), "")
        << name << " vmap(grad)";
  }
  const Array oh = vmap([](const Array& l) { return tnn::one_hot(l, 5, std::nullopt, 0); })(labels);
  ASSERT_EQ(oh.shape(), (Shape{4, 5, 3}));
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(to_doubles(oh[i]), to_doubles(tnn::one_hot(labels[i], 5, std::nullopt, 0)));
  EXPECT_EQ(to_doubles(jit([](const Array& l) { return tnn::one_hot(l, 5); })(labels)),
            to_doubles(tnn::one_hot(labels, 5)));
}

// The staged program carries softmax's and relu's rules as custom_jvp_call equations.
TEST(NnTransforms, JaxprShowsCustomJvp) {
  const std::string text = tessera::to_string(
      make_jaxpr([](const Array& x) { return tnn::softmax(tnn::relu(x)); })(tnp::zeros({2, 3})));
  EXPECT_NE(text.find("custom_jvp_call"), std::string::npos) << text;
}

TEST(NnErrors, BadArgumentsNameTheFunction) {
  EXPECT_ERROR(ValueError, tnn::relu(Array()), "[relu]");
  EXPECT_ERROR(ValueError, tnn::softmax(Array()), "[softmax]");
  EXPECT_ERROR(IndexError, tnn::softmax(tnp::zeros({2, 3}), 2), "axis");
  EXPECT_ERROR(IndexError, tnn::logsumexp(tnp::zeros({2, 3}), {.axis = -3}), "axis");
  EXPECT_ERROR(ValueError, tnn::logsumexp(tnp::zeros({2, 3}), {.b = tnp::zeros({4})}),
               "[logsumexp]");
}

}  // namespace
