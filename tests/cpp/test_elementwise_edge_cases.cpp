// Edge cases of the elementwise math primitives (arithmetic_unary.cpp, transcendental.cpp and
// binary_math.cpp) that the sweep's random draws do not reach: the float32 kernels'
// accuracy over dense input sets against float64 libm (in ulps), NaN/inf/+-0 as C99 Annex F
// and NumPy define them (XLA's sign and round keep the sign of zero), both rounding methods at
// exact halves, XLA's integer semantics for abs/sign/rem, nextafter in each float format,
// clamp's errors and NaN propagation, dtype errors, the JVPs at non-differentiable points as
// JAX defines them, and the printed jaxpr of round.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "prims/prims.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::rng;
using testing::to_doubles;
using testing::X64Scope;

constexpr DType kF16 = DType::kFloat16, kBF16 = DType::kBFloat16, kF32 = DType::kFloat32,
                kF64 = DType::kFloat64;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Array from_doubles(const std::vector<double>& v, DType d, Shape shape = {}) {
  if (shape.empty() && v.size() != 1) shape = {static_cast<int64_t>(v.size())};
  Array a = empty_array(Aval{shape, d, false}, "test");
  auto* p = static_cast<char*>(a.buffer()->data());
  for (size_t i = 0; i < v.size(); ++i) store_from_double(d, p + i * itemsize(d), v[i]);
  return a;
}
Array f32s(const std::vector<float>& v) {
  return numpy::array(v, Shape{static_cast<int64_t>(v.size())});
}
std::vector<float> floats_of(const Array& a) {
  std::vector<float> out(static_cast<size_t>(a.size()));
  std::memcpy(out.data(), a.raw_data(), out.size() * sizeof(float));
  return out;
}
Array f32(float v) { return from_doubles({v}, DType::kFloat32); }  // rank 0
double scalar(const Array& a) { return to_doubles(a).at(0); }

// Same value, NaN == NaN, and the same sign for zeros.
bool same_value(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

// ---------------------------------------------------------------- float32 accuracy

// |got - want| in units of the float32 ulp at want (want: the float64 libm value).
double ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : kInf;
  if (std::isinf(want) || std::isinf(got))
    return static_cast<double>(got) == want ? 0.0 : (std::fabs(want) > 3.4e38 ? 0.5 : kInf);
  const float wf = static_cast<float>(want);
  const int e = std::isinf(wf) ? 128 : std::max(std::ilogb(wf == 0.0f ? 1e-45f : wf), -126);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, e - 23);
}

struct Accuracy {
  const char* name;
  Array (*op)(const Array&);
  double (*ref)(double);
  std::function<std::vector<float>()> inputs;
  double max_ulps;
};

// Log-spaced magnitudes from 2^lo to 2^hi (n per binade), both signs if `both`.
std::vector<float> log_spaced(int lo, int hi, int n, bool both) {
  std::vector<float> v;
  for (int e = lo; e < hi; ++e) {
    for (int k = 0; k < n; ++k) {
      const float x = std::ldexp(1.0f + static_cast<float>(k) / static_cast<float>(n), e);
      v.push_back(x);
      if (both) v.push_back(-x);
    }
  }
  return v;
}
std::vector<float> uniform(double lo, double hi, int n) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(u(rng())));
  return v;
}
std::vector<float> concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ElementwiseMath, Float32KernelsWithinTheirUlpBoundsOfLibm) {
  register_all();
  const std::vector<Accuracy> cases = {
      {"exp2", lax::exp2, [](double x) { return std::exp2(x); },
       [] { return concat(uniform(-155, 130, 200000), log_spaced(-40, 3, 64, true)); }, 1},

      {"expm1", lax::expm1, [](double x) { return std::expm1(x); },
       [] { return concat(uniform(-95, 92, 200000), log_spaced(-140, 3, 256, true)); }, 4},

      {"log1p", lax::log1p, [](double x) { return std::log1p(x); },
       [] {
         return concat(concat(uniform(-1, 4, 200000), log_spaced(-140, 128, 64, false)),
                       log_spaced(-140, 0, 64, true));
       },
       3},

      {"sinh", lax::sinh, [](double x) { return std::sinh(x); },
       [] { return concat(uniform(-92, 92, 200000), log_spaced(-140, 4, 128, true)); }, 4},

      {"cosh", lax::cosh, [](double x) { return std::cosh(x); },
       [] { return concat(uniform(-92, 92, 200000), log_spaced(-140, 4, 128, true)); }, 3},

      {"tan", lax::tan, [](double x) { return std::tan(x); },
       [] { return concat(uniform(-200, 200, 200000), uniform(-2e5, 2e5, 20000)); }, 4.5},

      {"asinh", lax::asinh, [](double x) { return std::asinh(x); },
       [] { return log_spaced(-140, 128, 512, true); }, 3},

      {"acosh", lax::acosh, [](double x) { return std::acosh(x); },
       [] {
         std::vector<float> v = log_spaced(0, 128, 512, false);
         for (int k = 1; k < 24; ++k) v.push_back(1.0f + std::ldexp(1.0f, -k));
         return concat(v, uniform(1, 3, 50000));
       },
       3},

      {"atanh", lax::atanh, [](double x) { return std::atanh(x); },
       [] {
         std::vector<float> v = concat(uniform(-1, 1, 200000), log_spaced(-140, 0, 256, true));
         for (int k = 1; k < 24; ++k) v.push_back(1.0f - std::ldexp(1.0f, -k));
         return v;
       },
       4},

      {"rsqrt", lax::rsqrt, [](double x) { return 1.0 / std::sqrt(x); },
       [] { return log_spaced(-149, 128, 256, false); }, 0.5},
  };
  for (const Accuracy& c : cases) {
    const std::vector<float> xs = c.inputs();
    const std::vector<float> ys = floats_of(c.op(f32s(xs)));
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double u = ulps(ys[i], c.ref(static_cast<double>(xs[i])));
      if (u > worst) worst = u, at = i;
    }
    std::cout << "[accuracy] " << c.name << ": max " << worst << " ulp over " << xs.size()
              << " inputs\n";
    EXPECT_LE(worst, c.max_ulps) << c.name << " at x = " << xs[at] << " (got " << ys[at]
                                 << ", libm " << c.ref(static_cast<double>(xs[at])) << ")";
  }
}

// floor/ceil/round are exact: the float32 kernels (bit tricks) against libm on every kind of
// input, including the binade edges near 2^23 where the trick changes.
TEST(ElementwiseMath, Float32RoundingIsExact) {
  std::vector<float> xs = concat(uniform(-10, 10, 100000), log_spaced(-149, 128, 64, true));
  for (float b : {8388607.5f, 8388608.0f, 8388609.0f, 4194303.5f, 0.49999997f, 0.5f, 1.5f, 2.5f})
    for (float s : {1.0f, -1.0f}) xs.push_back(s * b);
  const Array x = f32s(xs);
  const std::vector<float> fl = floats_of(lax::floor(x)), ce = floats_of(lax::ceil(x)),
                           ra = floats_of(lax::round(x)),
                           re = floats_of(lax::round(x, lax::RoundingMethod::kToNearestEven));
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    ASSERT_TRUE(same_value(fl[i], std::floor(v))) << "floor(" << xs[i] << ") = " << fl[i];
    ASSERT_TRUE(same_value(ce[i], std::ceil(v))) << "ceil(" << xs[i] << ") = " << ce[i];
    ASSERT_TRUE(same_value(ra[i], std::round(v))) << "round(" << xs[i] << ") = " << ra[i];
    ASSERT_TRUE(same_value(re[i], std::nearbyint(v))) << "rint(" << xs[i] << ") = " << re[i];
  }
}

// ---------------------------------------------------------------- special values

using UnaryOp = Array (*)(const Array&);

// Every floating unary op at NaN, +-inf, +-0 and a few domain edges, in every float dtype,
// against C99 Annex F's values (what libm and NumPy return), computed here in double.
TEST(ElementwiseMath, SpecialValuesMatchLibm) {
  X64Scope x64;
  const std::vector<double> xs = {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5};
  struct Case {
    const char* name;
    UnaryOp op;
    double (*ref)(double);
  };
  const std::vector<Case> cases = {
      {"floor", lax::floor, [](double v) { return std::floor(v); }},
      {"ceil", lax::ceil, [](double v) { return std::ceil(v); }},
      {"round", [](const Array& a) { return lax::round(a); },
       [](double v) { return std::round(v); }},
      {"exp2", lax::exp2, [](double v) { return std::exp2(v); }},
      {"expm1", lax::expm1, [](double v) { return std::expm1(v); }},
      {"log1p", lax::log1p, [](double v) { return std::log1p(v); }},
      {"rsqrt", lax::rsqrt, [](double v) { return 1.0 / std::sqrt(v); }},
      {"cbrt", lax::cbrt, [](double v) { return std::cbrt(v); }},
      {"tan", lax::tan, [](double v) { return std::tan(v); }},
      {"asin", lax::asin, [](double v) { return std::asin(v); }},
      {"acos", lax::acos, [](double v) { return std::acos(v); }},
      {"atan", lax::atan, [](double v) { return std::atan(v); }},
      {"sinh", lax::sinh, [](double v) { return std::sinh(v); }},
      {"cosh", lax::cosh, [](double v) { return std::cosh(v); }},
      {"asinh", lax::asinh, [](double v) { return std::asinh(v); }},
      {"acosh", lax::acosh, [](double v) { return std::acosh(v); }},
      {"atanh", lax::atanh, [](double v) { return std::atanh(v); }},
      {"abs", lax::abs, [](double v) { return std::fabs(v); }},
      {"square", lax::square, [](double v) { return v * v; }},
      // XLA's sign: the zero's own sign, NaN stays NaN (np.sign(-0.0) is +0).
      {"sign", lax::sign, [](double v) { return v == 0 || v != v ? v : std::copysign(1.0, v); }},
  };
  for (DType d : {kF16, kBF16, kF32, kF64}) {
    for (const Case& c : cases) {
      const std::vector<double> got = to_doubles(c.op(from_doubles(xs, d)));
      for (size_t i = 0; i < xs.size(); ++i) {
        double want = c.ref(xs[i]);
        want = load_as_double(d, [&] {  // rounded to the dtype
          static thread_local unsigned char b[8];
          store_from_double(d, b, want);
          return b;
        }());
        // Finite non-trivial values (e.g. tan(1)) are within the dtype's tolerance.
        const bool close = std::isfinite(want) && want != 0 &&
                           std::fabs(got[i] - want) <= 8 * finfo(d).eps * std::fabs(want);
        EXPECT_TRUE(same_value(got[i], want) || close)
            << c.name << "(" << xs[i] << ") in " << dtype_name(d) << " = " << got[i]
            << ", expected " << want;
      }
    }
  }
  // is_finite: bool, false exactly for NaN and +-inf.
  for (DType d : {kF16, kBF16, kF32, kF64}) {
    Array f = lax::is_finite(from_doubles(xs, d));
    EXPECT_EQ(f.dtype(), DType::kBool);
    const std::vector<double> got = to_doubles(f);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i] != 0, std::isfinite(xs[i])) << xs[i];
  }
}

// Out of the domains: NaN (acosh below 1, atanh beyond +-1, asin/acos beyond +-1, log1p below
// -1, rsqrt of negatives) and the poles (atanh(+-1) = +-inf, log1p(-1) = -inf, rsqrt(-0) = -inf).
TEST(ElementwiseMath, DomainEdges) {
  for (DType d : {kF16, kBF16, kF32}) {
    auto at = [&](UnaryOp op, double v) { return scalar(op(from_doubles({v}, d))); };
    EXPECT_TRUE(std::isnan(at(lax::acosh, 0.5)));
    EXPECT_TRUE(std::isnan(at(lax::atanh, 1.5)));
    EXPECT_TRUE(std::isnan(at(lax::asin, -1.5)));
    EXPECT_TRUE(std::isnan(at(lax::acos, 1.5)));
    EXPECT_TRUE(std::isnan(at(lax::log1p, -1.5)));
    EXPECT_TRUE(std::isnan(at(lax::rsqrt, -1.0)));
    EXPECT_EQ(at(lax::atanh, 1.0), kInf);
    EXPECT_EQ(at(lax::atanh, -1.0), -kInf);
    EXPECT_EQ(at(lax::log1p, -1.0), -kInf);
    EXPECT_EQ(at(lax::rsqrt, -0.0), -kInf);
    EXPECT_EQ(at(lax::rsqrt, 0.0), kInf);
    EXPECT_EQ(at(lax::acosh, 1.0), 0.0);
  }
  // Overflow at the float32 edges: exp2(128) = inf, cosh/sinh beyond ~89.4 = +-inf, and the
  // large-argument branches just below are finite and accurate.
  EXPECT_EQ(scalar(lax::exp2(f32s({128.0f}))), kInf);
  EXPECT_EQ(scalar(lax::exp2(f32s({-150.0f}))), 0.0);
  EXPECT_EQ(scalar(lax::exp2(f32s({-149.0f}))), std::ldexp(1.0, -149));
  EXPECT_EQ(scalar(lax::sinh(f32s({-90.0f}))), -kInf);
  EXPECT_EQ(scalar(lax::cosh(f32s({90.0f}))), kInf);
  EXPECT_NEAR(scalar(lax::cosh(f32s({89.0f}))) / std::cosh(89.0), 1.0, 1e-6);
}

// ---------------------------------------------------------------- round

TEST(ElementwiseMath, RoundAtExactHalvesBothMethods) {
  X64Scope x64;
  // JAX's documented example: lax.round([-1.5, -1, -0.5, 0, 0.5, 1, 1.5]).
  const std::vector<double> xs = {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.5, -2.5, 3.5, -0.0};
  const std::vector<double> away = {-2, -1, -1, 0, 1, 1, 2, 3, -3, 4, -0.0};
  const std::vector<double> even = {-2, -1, -0.0, 0, 0, 1, 2, 2, -2, 4, -0.0};
  for (DType d : {kF16, kBF16, kF32, kF64}) {
    const Array x = from_doubles(xs, d);
    const std::vector<double> a = to_doubles(lax::round(x, lax::RoundingMethod::kAwayFromZero));
    const std::vector<double> e = to_doubles(lax::round(x, lax::RoundingMethod::kToNearestEven));
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_TRUE(same_value(a[i], away[i])) << dtype_name(d) << " away " << xs[i] << " " << a[i];
      EXPECT_TRUE(same_value(e[i], even[i])) << dtype_name(d) << " even " << xs[i] << " " << e[i];
    }
  }
  // The largest float below 0.5 rounds to 0 (floor(x + 0.5) would give 1).
  EXPECT_EQ(scalar(lax::round(f32s({0.49999997f}))), 0.0);
  EXPECT_ERROR(ValueError,
               (void)bind1(prims::round, {f32s({1.0f})}, Params{{"rounding_method", int64_t{2}}}),
               "rounding_method must be 0");
}

TEST(ElementwiseMath, RoundJaxprShowsTheNumericMethod) {
  // JAX's RoundingMethod is an IntEnum; we print its numeric value, as JAX's jaxprs did.
  auto f = [](const Array& x) { return lax::round(x, lax::RoundingMethod::kToNearestEven); };
  EXPECT_EQ(to_string(make_jaxpr(f)(ShapeDtypeStruct{{3}, kF32})),
            "{ lambda ; a:f32[3]. let b:f32[3] = round[rounding_method=1] a in (b,) }");
  auto g = [](const Array& x) { return lax::round(x); };
  EXPECT_EQ(to_string(make_jaxpr(g)(ShapeDtypeStruct{{}, kF32})),
            "{ lambda ; a:f32[]. let b:f32[] = round[rounding_method=0] a in (b,) }");
}

// ---------------------------------------------------------------- integers

template <class T>
Array ints_of(const std::vector<T>& v) {
  const DType d = dtype_of<T>::value;
  return array_from_host(Aval{{static_cast<int64_t>(v.size())}, d, false}, v.data());
}
template <class T>
std::vector<T> values_of(const Array& a) {
  std::vector<T> out(static_cast<size_t>(a.size()));
  std::memcpy(out.data(), a.raw_data(), out.size() * sizeof(T));
  return out;
}

template <class T>
void check_signed_edges() {
  using L = std::numeric_limits<T>;
  const std::vector<T> x = {L::min(), L::min(), L::max(), T(-7), T(7), T(-7), T(7), T(5), T(0)};
  const std::vector<T> y = {T(-1), T(0), T(0), T(3), T(-3), T(-3), T(3), T(5), T(-2)};
  // XLA: x % 0 == x, INT_MIN % -1 == 0, the dividend's sign (C's %).
  const std::vector<T> rem = {T(0), L::min(), L::max(), T(-1), T(1), T(-1), T(1), T(0), T(0)};
  EXPECT_EQ(values_of<T>(lax::rem(ints_of(x), ints_of(y))), rem);
  // abs wraps at INT_MIN; sign is -1/0/1.
  const std::vector<T> a = {L::min(), T(-1), T(0), T(1), L::max()};
  EXPECT_EQ(values_of<T>(lax::abs(ints_of(a))), (std::vector<T>{L::min(), 1, 0, 1, L::max()}));
  EXPECT_EQ(values_of<T>(lax::sign(ints_of(a))), (std::vector<T>{-1, -1, 0, 1, 1}));
  // square wraps modulo 2^bits.
  const T big = static_cast<T>(T(1) << (sizeof(T) * 4));  // 2^(bits/2): its square wraps to 0
  EXPECT_EQ(values_of<T>(lax::square(ints_of(std::vector<T>{big, T(-3)}))), (std::vector<T>{0, 9}));
}

template <class T>
void check_unsigned_edges() {
  using L = std::numeric_limits<T>;
  const std::vector<T> x = {T(7), L::max(), T(0), T(9)};
  const std::vector<T> y = {T(0), T(10), T(3), T(9)};
  EXPECT_EQ(values_of<T>(lax::rem(ints_of(x), ints_of(y))),
            (std::vector<T>{7, static_cast<T>(L::max() % 10), 0, 0}));
  EXPECT_EQ(values_of<T>(lax::sign(ints_of(x))), (std::vector<T>{1, 1, 0, 1}));
  EXPECT_EQ(values_of<T>(lax::abs(ints_of(x))), x);  // the identity
}

TEST(ElementwiseMath, IntegerSemanticsAreXlas) {
  X64Scope x64;
  check_signed_edges<int8_t>();
  check_signed_edges<int16_t>();
  check_signed_edges<int32_t>();
  check_signed_edges<int64_t>();
  check_unsigned_edges<uint8_t>();
  check_unsigned_edges<uint32_t>();
  check_unsigned_edges<uint64_t>();
}

TEST(ElementwiseMath, FloatRemIsFmod) {
  X64Scope x64;
  const std::vector<double> x = {5.5, -5.5, 5.5, -0.0, 0.0, kInf, 3.0, kNaN, 1e300, -7.0};
  const std::vector<double> y = {2.0, 2.0, -2.0, 3.0, -3.0, 2.0, kInf, 1.0, 3.0, 0.0};
  for (DType d : {kF16, kBF16, kF32, kF64}) {
    const Array xa = from_doubles(x, d), ya = from_doubles(y, d);
    const std::vector<double> got = to_doubles(lax::rem(xa, ya));
    const std::vector<double> xv = to_doubles(xa), yv = to_doubles(ya);
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::fmod(xv[i], yv[i]);  // exact, so exact in every dtype
      EXPECT_TRUE(same_value(got[i], want))
          << dtype_name(d) << " rem(" << xv[i] << ", " << yv[i] << ") = " << got[i];
    }
  }
}

// ---------------------------------------------------------------- nextafter

TEST(ElementwiseMath, NextafterStepsInTheOperandsOwnFormat) {
  X64Scope x64;
  const std::vector<double> x = {1.0, 1.0, -1.0, 0.0, -0.0, 0.0, 2.0, kNaN, 1.0, kInf, 65504};
  const std::vector<double> y = {2.0, 0.0, 0.0, 1.0, -1.0, -0.0, 2.0, 1.0, kNaN, 0.0, kInf};
  // float32 and float64 against libm's nextafter.
  {
    std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
    const std::vector<float> got = floats_of(lax::nextafter(f32s(xf), f32s(yf)));
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_TRUE(same_value(got[i], std::nextafter(xf[i], yf[i]))) << xf[i] << " -> " << yf[i];
    const std::vector<double> g64 =
        to_doubles(lax::nextafter(from_doubles(x, kF64), from_doubles(y, kF64)));
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_TRUE(same_value(g64[i], std::nextafter(x[i], y[i]))) << x[i] << " -> " << y[i];
  }
  // 16-bit floats: one step of their own bits (10 and 7 mantissa bits).
  for (DType d : {kF16, kBF16}) {
    const int mant = d == kF16 ? 10 : 7;
    const std::vector<double> got =
        to_doubles(lax::nextafter(from_doubles(x, d), from_doubles(y, d)));
    const double tiny = d == kF16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -133);
    EXPECT_EQ(got[0], 1.0 + std::ldexp(1.0, -mant)) << dtype_name(d);
    EXPECT_EQ(got[1], 1.0 - std::ldexp(1.0, -mant - 1)) << dtype_name(d);
    EXPECT_EQ(got[2], -1.0 + std::ldexp(1.0, -mant - 1)) << dtype_name(d);
    EXPECT_EQ(got[3], tiny) << dtype_name(d);
    EXPECT_EQ(got[4], -tiny) << dtype_name(d);
    EXPECT_TRUE(same_value(got[5], -0.0)) << dtype_name(d);  // x == y gives y
    EXPECT_EQ(got[6], 2.0);
    EXPECT_TRUE(std::isnan(got[7]) && std::isnan(got[8]));
    EXPECT_EQ(got[9], d == kF16 ? 65504.0 : std::ldexp(2.0 - std::ldexp(1.0, -7), 127));
  }
  EXPECT_EQ(to_doubles(lax::nextafter(from_doubles({65504}, kF16), from_doubles({kInf}, kF16)))[0],
            kInf);
}

// ---------------------------------------------------------------- clamp

TEST(ElementwiseMath, ClampShapesDtypesAndNaN) {
  const Array x = f32s({-3.0f, 0.5f, 3.0f, NAN});
  EXPECT_EQ(to_doubles(lax::clamp(f32(-1.0f), x, f32(1.0f)))[2], 1.0);
  const std::vector<double> got =
      to_doubles(lax::clamp(f32s({-1, -1, -1, -1}), x, f32s({1, 0, 2, 1})));
  EXPECT_EQ(got[0], -1.0);
  EXPECT_EQ(got[1], 0.0);
  EXPECT_EQ(got[2], 2.0);
  EXPECT_TRUE(std::isnan(got[3]));  // NaN propagates, as XLA's min/max
  // A NaN bound propagates too.
  EXPECT_TRUE(std::isnan(scalar(lax::clamp(f32(NAN), f32(0.0f), f32(1.0f)))));
  // Bounds must be rank 0 or x's shape: no size-1 broadcasting.
  EXPECT_ERROR(TypeError, lax::clamp(f32s({0.0f, 1.0f}), f32s({1, 2, 3}), f32(2.0f)),
               "[clamp] requires min.shape == operand.shape or min.shape == (), got min f32[2] "
               "and operand f32[3]");
  EXPECT_ERROR(TypeError, lax::clamp(f32(0.0f), f32s({1, 2, 3}), f32s({2.0f})),
               "max.shape == operand.shape");
  EXPECT_ERROR(TypeError, lax::clamp(numpy::scalar(0, DType::kInt32), f32s({1, 2, 3}), f32(2.0f)),
               "[clamp]");
  // bool is accepted (as JAX): clamp(False, x, True) is x.
  const Array b = numpy::array(std::vector<bool>{true, false}, Shape{2});
  EXPECT_EQ(
      to_doubles(lax::clamp(numpy::scalar(0, DType::kBool), b, numpy::scalar(1, DType::kBool))),
      (std::vector<double>{1, 0}));
}

// ---------------------------------------------------------------- dtype errors

TEST(ElementwiseMath, DtypeErrorsNameTheOpAndTheFix) {
  const Array i = numpy::array(std::vector<int32_t>{1, 2}, Shape{2});
  const Array b = numpy::array(std::vector<bool>{true, false}, Shape{2});
  for (UnaryOp op : {lax::floor, lax::ceil, lax::exp2, lax::expm1, lax::log1p, lax::rsqrt,
                     lax::cbrt, lax::tan, lax::asin, lax::acos, lax::atan, lax::sinh, lax::cosh,
                     lax::asinh, lax::acosh, lax::atanh, lax::is_finite}) {
    EXPECT_ERROR(TypeError, op(i), "requires a floating dtype, got i32[2]");
  }
  EXPECT_ERROR(TypeError, lax::round(i), "[round] requires a floating dtype");
  for (UnaryOp op : {lax::abs, lax::sign, lax::square})
    EXPECT_ERROR(TypeError, op(b), "does not accept dtype bool");
  EXPECT_ERROR(TypeError, lax::rem(b, b), "[rem] does not accept dtype bool");
  EXPECT_ERROR(TypeError, lax::nextafter(i, i), "[nextafter] requires floating operands");
  EXPECT_ERROR(TypeError, lax::atan2(i, i), "[atan2] requires floating operands");
  EXPECT_ERROR(TypeError, lax::atan2(f32s({1.0f}), from_doubles({1.0}, kF16)), "[atan2]");
  EXPECT_ERROR(TypeError, lax::rem(f32s({1, 2, 3}), f32s({1, 2})), "[rem]");
}

// ---------------------------------------------------------------- derivatives at kinks

TEST(ElementwiseMath, AbsDerivativeAtZeroIsJaxs) {
  // JAX's rule is select(x >= 0, t, -t): the derivative at +-0 is 1 (jax.grad(jnp.abs)(0.) == 1).
  auto f = [](const Array& x) { return lax::abs(x); };
  EXPECT_EQ(scalar(grad(f)(f32(0.0f))), 1.0);
  EXPECT_EQ(scalar(grad(f)(f32(-0.0f))), 1.0);
  EXPECT_EQ(scalar(grad(f)(f32(-2.0f))), -1.0);
  EXPECT_EQ(scalar(grad(f)(f32(3.0f))), 1.0);
}

TEST(ElementwiseMath, PiecewiseConstantOpsHaveZeroTangents) {
  const Array x = f32s({-1.5f, 0.25f, 2.5f});
  const Array v = f32s({1.0f, 1.0f, 1.0f});
  for (UnaryOp op :
       {lax::floor, lax::ceil, lax::sign, +[](const Array& a) { return lax::round(a); }}) {
    auto [y, t] = jvp([op](const Array& a) { return op(a); }, std::tuple{x}, std::tuple{v});
    EXPECT_EQ(to_doubles(t), (std::vector<double>{0, 0, 0}));
  }
  auto [y, t] = jvp([](const Array& a) { return lax::is_finite(a); }, std::tuple{x}, std::tuple{v});
  EXPECT_EQ(t.dtype(), DType::kFloat0);
}

// clamp: JAX's select rule. At x == lo or x == hi no operand gets the tangent; strictly inside
// x gets it; below lo, lo gets it; above hi, hi gets it.
TEST(ElementwiseMath, ClampGradientsAtAndAroundTheBounds) {
  auto f = [](const Array& lo, const Array& x, const Array& hi) { return lax::clamp(lo, x, hi); };
  auto g = [&](float lo, float x, float hi) {
    auto gs = grad(f, argnums<0, 1, 2>)(f32(lo), f32(x), f32(hi));
    return std::vector<double>{scalar(std::get<0>(gs)), scalar(std::get<1>(gs)),
                               scalar(std::get<2>(gs))};
  };
  EXPECT_EQ(g(-1, -1, 1), (std::vector<double>{0, 0, 0}));  // x == lo
  EXPECT_EQ(g(-1, 1, 1), (std::vector<double>{0, 0, 0}));   // x == hi
  EXPECT_EQ(g(-1, 0.5, 1), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(g(-1, -2, 1), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(g(-1, 2, 1), (std::vector<double>{0, 0, 1}));
  // Array x with rank-0 bounds: the bounds' gradients sum over the elements they bound.
  auto h = [](const Array& lo, const Array& x) { return numpy::sum(lax::clamp(lo, x, f32(1.0f))); };
  auto [glo, gx] = grad(h, argnums<0, 1>)(f32(0.0f), f32s({-1, -2, 0, 0.5f, 3}));
  EXPECT_EQ(scalar(glo), 2.0);
  EXPECT_EQ(to_doubles(gx), (std::vector<double>{0, 0, 0, 1, 0}));
}

TEST(ElementwiseMath, RemAndNextafterDerivatives) {
  X64Scope x64;
  // d rem(x, y)/dy = -trunc(x/y) (JAX's -sign(x/y) * floor(|x/y|)).
  auto r = [](const Array& x, const Array& y) { return numpy::sum(lax::rem(x, y)); };
  const Array x = from_doubles({7.5, -7.5, 1.0}, kF64), y = from_doubles({2.0, 2.0, -0.75}, kF64);
  auto [gx, gy] = grad(r, argnums<0, 1>)(x, y);
  EXPECT_EQ(to_doubles(gx), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(to_doubles(gy), (std::vector<double>{-3, 3, 1}));
  // nextafter: our rule (JAX has none): 1 in x, 0 in y.
  auto n = [](const Array& a, const Array& b) { return numpy::sum(lax::nextafter(a, b)); };
  auto [nx, ny] = grad(n, argnums<0, 1>)(x, y);
  EXPECT_EQ(to_doubles(nx), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(to_doubles(ny), (std::vector<double>{0, 0, 0}));
}

}  // namespace
}  // namespace tessera
