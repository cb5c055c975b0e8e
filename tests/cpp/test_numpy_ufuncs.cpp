// tessera::numpy's ufuncs of numpy_ufuncs.h against NumPy (tests/oracle/oracle_npmanip.py's
// "np.ufunc": jnp's promotion, then NumPy in float64 rounded once, or in the integer dtype), on
// fresh random inputs with NumPy broadcasting, rank 0, zero-size dims, NaN/inf and C++ scalar
// operands; plus the edge semantics NumPy and JAX share (signbit of -0.0, remainder's sign,
// floor_divide by negative numbers) and derivatives at the special points.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

using namespace tessera;
using namespace tessera::testing;
namespace tnp = tessera::numpy;

namespace {

using U = Array (*)(const tnp::ArrayLike&);
using B = Array (*)(const tnp::ArrayLike&, const tnp::ArrayLike&);

struct UCase {
  const char* np;  // NumPy's name
  U fn;
  bool inexact;
  bool bool_out = false;
  bool int_ok = true;
  double lo = -3, hi = 3;
};
struct BCase {
  const char* np;
  B fn;
  bool inexact;
  bool int_ok = true;
  bool nonzero_rhs = false;
  bool bool_ok = false;
};

std::string ufunc_params(const char* np, bool inexact, bool bool_out, bool int_ok) {
  return "{\"fn\": " + json_str(np) + ", \"inexact\": " + json_bool(inexact) +
         ", \"bool_out\": " + json_bool(bool_out) + ", \"int_ok\": " + json_bool(int_ok) + "}";
}

TEST(NumpyUfuncs, UnaryVsNumpy) {
  TESSERA_REQUIRE_ORACLE();
  const std::vector<UCase> cases = {
      {"abs", tnp::abs, false},
      {"fabs", tnp::fabs, true},
      {"sign", tnp::sign, false},
      {"floor", tnp::floor, false},
      {"ceil", tnp::ceil, false},
      {"trunc", tnp::trunc, false},
      {"rint", tnp::rint, true},
      {"exp2", tnp::exp2, true},
      {"expm1", tnp::expm1, true},
      {"log1p", tnp::log1p, true, false, true, -0.9, 3},
      {"log2", tnp::log2, true, false, true, 0.1, 5},
      {"log10", tnp::log10, true, false, true, 0.1, 5},
      {"cbrt", tnp::cbrt, true},
      {"tan", tnp::tan, true, false, true, -1.4, 1.4},
      {"arcsin", tnp::arcsin, true, false, true, -1, 1},
      {"arccos", tnp::arccos, true, false, true, -1, 1},
      {"arctan", tnp::arctan, true},
      {"sinh", tnp::sinh, true},
      {"cosh", tnp::cosh, true},
      {"arcsinh", tnp::arcsinh, true},
      {"arccosh", tnp::arccosh, true, false, true, 1, 5},
      {"arctanh", tnp::arctanh, true, false, true, -0.99, 0.99},
      {"deg2rad", tnp::deg2rad, true},
      {"rad2deg", tnp::rad2deg, true},
      {"sinc", tnp::sinc, true, false, true, -3, 3},
      {"reciprocal", tnp::reciprocal, true, false, false},
      {"isfinite", tnp::isfinite, false, true},
      {"isinf", tnp::isinf, false, true},
      {"isnan", tnp::isnan, false, true},
      {"signbit", tnp::signbit, false, true},
      {"isposinf", tnp::isposinf, false, true},
      {"isneginf", tnp::isneginf, false, true},
      {"invert", tnp::invert, false},
      {"logical_not", tnp::logical_not, false, true},
  };
  OracleBatch b("np.ufunc unary", 3.0, 2000);
  const std::vector<DType> dts = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                  DType::kInt32,   DType::kUInt8,   DType::kBool};
  for (const UCase& c : cases) {
    for (DType d : dts) {
      const std::string np = c.np;
      const bool bitwise = np == "invert" || np == "logical_not";
      if (is_floating(d) && np == "invert") continue;
      if (d == DType::kBool && !bitwise && !c.bool_out && np != "abs" && np != "floor" &&
          np != "ceil" && np != "trunc")
        continue;
      if (!is_floating(d) && !c.int_ok) continue;
      ValueOpts vo;
      vo.lo = c.lo;
      vo.hi = c.hi;
      vo.int_lo = static_cast<int64_t>(std::max(c.lo, is_unsigned_integer(d) ? 0.0 : -50.0));
      vo.int_hi = static_cast<int64_t>(std::max(c.hi, 1.0));
      vo.int_full_range = bitwise;
      // sinc of huge floats: pi * x overflows in the dtype (NaN, as in JAX); NumPy's float64
      // reference stays finite.
      vo.extremes = np != "sinc";
      for (Shape s : {Shape{3, 4}, Shape{}, Shape{0, 2}}) {
        Array x = oracle_array(s, d, vo);
        b.add(np, "np.ufunc", ufunc_params(c.np, c.inexact, c.bool_out, c.int_ok), {x},
              [&c, x] { return c.fn(x); });
      }
    }
  }
  b.run();
}

TEST(NumpyUfuncs, BinaryVsNumpy) {
  TESSERA_REQUIRE_ORACLE();
  const std::vector<BCase> cases = {
      {"arctan2", tnp::arctan2, true},
      {"hypot", tnp::hypot, true},
      {"logaddexp", tnp::logaddexp, true},
      {"logaddexp2", tnp::logaddexp2, true},
      {"float_power", tnp::float_power, true, false},
      {"copysign", tnp::copysign, true},
      {"nextafter", tnp::nextafter, true, false},
      {"heaviside", tnp::heaviside, true},
      {"remainder", tnp::remainder, false, true, true},
      {"fmod", tnp::fmod, false, true, true},
      // Float division by zero: JAX's floor_divide gives NaN where NumPy gives inf (jnp's
      // _float_divmod goes through rem), so the divisors are nonzero here.
      {"floor_divide", tnp::floor_divide, false, true, true},
      {"bitwise_and", tnp::bitwise_and, false, true, false, true},
      {"bitwise_or", tnp::bitwise_or, false, true, false, true},
      {"bitwise_xor", tnp::bitwise_xor, false, true, false, true},
      {"left_shift", tnp::left_shift, false, true},
      {"right_shift", tnp::right_shift, false, true},
      {"logical_and", tnp::logical_and, false, true, false, true},
      {"logical_or", tnp::logical_or, false, true, false, true},
      {"logical_xor", tnp::logical_xor, false, true, false, true},
  };
  OracleBatch b("np.ufunc binary", 3.0, 2000);
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {3, 4}}, {{3, 1}, {4}}, {{}, {2, 3}}, {{0, 3}, {3}}, {{2, 1, 3}, {4, 1}}};
  for (const BCase& c : cases) {
    const std::string np = c.np;
    const bool bits = np.find("bitwise") == 0 || np.find("logical") == 0;
    const bool shifts = np.find("shift") != std::string::npos;
    for (DType d : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kUInt8, DType::kBool}) {
      if ((bits || shifts) && is_floating(d)) continue;
      if (d == DType::kBool && !c.bool_ok) continue;
      if (!is_floating(d) && !c.int_ok) continue;
      if (!c.inexact && !bits && !shifts && np != "remainder" && np != "fmod" &&
          np != "floor_divide" && !is_floating(d))
        continue;
      for (const auto& [sa, sb] : shapes) {
        ValueOpts vo;
        vo.int_full_range = bits;
        // heaviside(NaN, h) is h in jnp (NaN in NumPy): no NaN in x there.
        vo.nan_inf = np != "heaviside";
        // Shifts: amounts in [0, width) (NumPy's behaviour beyond that is platform-defined).
        ValueOpts vb = vo;
        if (shifts) {
          vb.int_lo = 0;
          vb.int_hi = static_cast<int64_t>(itemsize(d) * 8 - 1);
          vb.special_rate = 0;
          vo.int_full_range = false;
        }
        Array x = oracle_array(sa, d, vo);
        Array y = oracle_array(sb, d, vb);
        if (c.nonzero_rhs) y = tnp::where(tnp::equal(y, 0), tnp::astype(tnp::ones_like(y), d), y);
        const bool bool_out = np.find("logical") == 0;
        std::string prm = ufunc_params(c.np, c.inexact, bool_out, c.int_ok);
        // nextafter is computed by NumPy in the dtype itself (a float64 step is not a float32
        // step); bfloat16 has no NumPy dtype.
        if (np == "nextafter") {
          if (d == DType::kBFloat16) continue;
          prm.back() = ',';
          prm += " \"native\": true}";
        }
        b.add(np, "np.ufunc", prm, {x, y}, [&c, x, y] { return c.fn(x, y); });
      }
    }
  }
  // Weak C++ scalar operands keep the array's dtype.
  Array f16 = oracle_array({4}, DType::kFloat16);
  b.add("hypot weak", "np.ufunc", ufunc_params("hypot", true, false, true),
        {f16, tnp::weak_scalar(2.0)}, [&] { return tnp::hypot(f16, 2.0); });
  b.run();
}

TEST(NumpyUfuncs, RoundDecimals) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.round");
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kInt32}) {
    X64Scope x64(d == DType::kFloat64);
    for (int dec : {-2, -1, 0, 1, 3}) {
      // No extremes: x * 10^d overflows to inf in the dtype (jnp), where NumPy's float64
      // reference of a float32 input stays finite.
      ValueOpts vo{.lo = -500,
                   .hi = 500,
                   .extremes = false,
                   .int_full_range = false,
                   .int_lo = -5000,
                   .int_hi = 5000};
      Array x = oracle_array({5, 3}, d, vo);
      // The reference rounds in the input's dtype, as jnp.round does (x * 10^d, rint, / 10^d
      // in float32 for float32): a float64 reference disagrees where the float32 product lands
      // on a half (88.5045f * 1000 = 88504.5f -> 88.504; in float64 88504.5013 -> 88.505).
      b.add(
          "round", "np.manip",
          "{\"fn\": \"round\", \"kwargs\": {\"decimals\": " + json_int(dec) + "}, \"list\": false}",
          {x}, [x, dec] { return tnp::round(x, dec); });
    }
  }
  b.run();
}

TEST(NumpyUfuncs, EdgeSemantics) {
  const Array z = tnp::array({-0.0, 0.0, -1.5, 2.0});
  EXPECT_EQ(to_doubles(tnp::signbit(z)), (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(to_doubles(tnp::remainder(tnp::array({-7, 7, -7, 7}, DType::kInt32),
                                      tnp::array({3, -3, -3, 3}, DType::kInt32))),
            (std::vector<double>{2, -2, -1, 1}));
  EXPECT_EQ(to_doubles(tnp::floor_divide(tnp::array({-7, 7, -7, 7}, DType::kInt32),
                                         tnp::array({3, -3, -3, 3}, DType::kInt32))),
            (std::vector<double>{-3, -3, 2, 2}));
  EXPECT_EQ(to_doubles(tnp::remainder(tnp::array({-7.5, 7.5}), tnp::array({2.0, -2.0}))),
            (std::vector<double>{0.5, -0.5}));
  // rint / round: halves to even.
  EXPECT_EQ(to_doubles(tnp::rint(tnp::array({0.5, 1.5, 2.5, -0.5, -2.5}))),
            (std::vector<double>{0, 2, 2, -0.0, -2}));
  // logaddexp at infinities and with NaN.
  auto la = to_doubles(tnp::logaddexp(tnp::array({-INFINITY, INFINITY, NAN, 1.0}),
                                      tnp::array({-INFINITY, INFINITY, 0.0, 1.0})));
  EXPECT_EQ(la[0], -INFINITY);
  EXPECT_EQ(la[1], INFINITY);
  EXPECT_TRUE(std::isnan(la[2]));
  EXPECT_NEAR(la[3], 1.0 + std::log(2.0), 1e-6);
  // Operators.
  Array i = tnp::array({5, -3}, DType::kInt32);
  EXPECT_EQ(to_doubles(i % 3), (std::vector<double>{2, 0}));
  EXPECT_EQ(to_doubles(i & 6), (std::vector<double>{4, 4}));
  EXPECT_EQ(to_doubles(i >> 1), (std::vector<double>{2, -2}));
  EXPECT_EQ(to_doubles(~i), (std::vector<double>{-6, 2}));
  EXPECT_EQ(to_doubles(tnp::heaviside(tnp::array({-1.0, 0.0, 2.0, NAN}), 0.5)),
            (std::vector<double>{0, 0.5, 1, 0.5}));
  EXPECT_ERROR(TypeError, tnp::bitwise_and(tnp::array({1.0}), tnp::array({2.0})),
               "only accepts integer and bool inputs");
}

TEST(NumpyUfuncs, DerivativesAtSpecialPoints) {
  // sinc is smooth at 0 (derivative 0); logaddexp splits equally at x == y.
  auto dsinc = grad([](const Array& x) { return tnp::sinc(x); })(tnp::scalar(0.0, DType::kFloat32));
  EXPECT_EQ(dsinc.item_double(), 0.0);
  auto [gx, gy] =
      grad([](const Array& x, const Array& y) { return tnp::logaddexp(x, y); }, argnums<0, 1>)(
          tnp::scalar(1.0, DType::kFloat32), tnp::scalar(1.0, DType::kFloat32));
  EXPECT_NEAR(gx.item_double(), 0.5, 1e-6);
  EXPECT_NEAR(gy.item_double(), 0.5, 1e-6);
  // hypot's gradient at (3, 4) is (3/5, 4/5).
  auto [hx, hy] =
      grad([](const Array& x, const Array& y) { return tnp::hypot(x, y); }, argnums<0, 1>)(
          tnp::scalar(3.0, DType::kFloat32), tnp::scalar(4.0, DType::kFloat32));
  EXPECT_NEAR(hx.item_double(), 0.6, 1e-6);
  EXPECT_NEAR(hy.item_double(), 0.8, 1e-6);
}

}  // namespace
