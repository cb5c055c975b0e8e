// Sweep rows of the math primitives (arithmetic_unary.cpp, transcendental.cpp, binary_math.cpp):
// forward against the NumPy oracle (tests/oracle/oracle_math.py), derivatives, vmap. Operands are
// drawn inside each function's domain and away from its kinks (abs at 0, rem where x/y is an
// integer, clamp at its bounds).
#include <cmath>
#include <limits>

#include "util/sweep_rows.h"
#include "util/test_util.h"

namespace tessera::sweep {

namespace {

constexpr DType kI8 = DType::kInt8, kI32 = DType::kInt32, kI64 = DType::kInt64, kU8 = DType::kUInt8,
                kU32 = DType::kUInt32;

Row unary(std::string name, Array (*op)(const Array&), std::vector<DType> dts, Operand a = any()) {
  Row r;
  r.prim = name;
  r.oracle_op = "lax." + name;
  r.name = std::move(name);
  r.family = "math";
  r.fn = [op](const Args& x) { return op(x[0]); };
  r.operands = {a};
  r.shapes = kUnaryShapes;
  r.dtypes = std::move(dts);
  return r;
}

Row binary(std::string name, Array (*op)(const Array&, const Array&), std::vector<DType> dts,
           Operand a, Operand b) {
  Row r;
  r.prim = name;
  r.oracle_op = "lax." + name;
  r.name = std::move(name);
  r.family = "math";
  r.fn = [op](const Args& x) { return op(x[0], x[1]); };
  r.operands = {a, b};
  r.shapes = kBinaryShapes;
  r.dtypes = std::move(dts);
  return r;
}

Operand ints(Operand o, int64_t lo, int64_t hi) {
  o.int_lo = lo, o.int_hi = hi;
  return o;
}

double min_abs(const Array& x) {
  double m = std::numeric_limits<double>::infinity();
  for (double v : testing::to_doubles(x)) m = std::min(m, std::fabs(v));
  return m;
}

Row round_row(std::string name, lax::RoundingMethod m) {
  Row r = unary("round", nullptr, floats(), any(-3.0, 3.0));
  r.name = std::move(name);
  r.fn = [m](const Args& x) { return lax::round(x[0], m); };
  r.oracle_params = "{\"rounding_method\": " + std::to_string(static_cast<int64_t>(m)) + "}";
  r.deriv = Deriv::kZeroTangent;
  return r;
}

}  // namespace

std::vector<Row> rows_math() {
  std::vector<Row> t;
  const std::vector<DType> fl = floats();
  // -- integers and floats
  {
    Row r = unary("abs", lax::abs, numbers());
    r.kink = [](const Args& x) { return min_abs(x[0]); };  // |x| at 0
    t.push_back(r);
  }
  {
    Row r = unary("sign", lax::sign, numbers(), ints(any(), -3, 3));
    r.deriv = Deriv::kZeroTangent;
    t.push_back(r);
  }
  t.push_back(unary("square", lax::square, numbers()));
  // -- rounding (piecewise constant: zero tangents). 16-bit draws hit exact halves often.
  for (bool is_floor : {true, false}) {
    Row r =
        unary(is_floor ? "floor" : "ceil", is_floor ? lax::floor : lax::ceil, fl, any(-3.0, 3.0));
    r.deriv = Deriv::kZeroTangent;
    t.push_back(r);
  }
  t.push_back(round_row("round_away_from_zero", lax::RoundingMethod::kAwayFromZero));
  t.push_back(round_row("round_to_nearest_even", lax::RoundingMethod::kToNearestEven));
  {
    Row r = unary("is_finite", lax::is_finite, fl);
    r.deriv = Deriv::kZeroTangent;
    t.push_back(r);
  }
  // -- transcendental, floating only, inside each domain
  t.push_back(unary("exp2", lax::exp2, fl, any(-3.0, 3.0)));
  t.push_back(unary("expm1", lax::expm1, fl, any(-2.0, 2.0)));
  t.push_back(unary("log1p", lax::log1p, fl, any(-0.9, 2.0)));
  t.push_back(unary("rsqrt", lax::rsqrt, fl, positive(0.25, 4.0)));
  t.push_back(unary("cbrt", lax::cbrt, fl, nonzero(0.2, 3.0)));  // cbrt' is infinite at 0
  t.push_back(unary("tan", lax::tan, fl, any(-1.2, 1.2)));
  t.push_back(unary("asin", lax::asin, fl, any(-0.9, 0.9)));
  t.push_back(unary("acos", lax::acos, fl, any(-0.9, 0.9)));
  t.push_back(unary("atan", lax::atan, fl, any(-3.0, 3.0)));
  t.push_back(unary("sinh", lax::sinh, fl, any(-3.0, 3.0)));
  t.push_back(unary("cosh", lax::cosh, fl, any(-3.0, 3.0)));
  t.push_back(unary("asinh", lax::asinh, fl, any(-3.0, 3.0)));
  t.push_back(unary("acosh", lax::acosh, fl, positive(1.1, 4.0)));
  t.push_back(unary("atanh", lax::atanh, fl, any(-0.9, 0.9)));
  // -- binary
  // atan2(x, y): x away from 0 keeps the draws off the branch cut (y < 0, x = 0).
  t.push_back(binary("atan2", lax::atan2, fl, nonzero(0.3, 2.0), any()));
  {
    // nextafter: derivative 1 in x, 0 in y (our rule; JAX has none).
    t.push_back(binary("nextafter", lax::nextafter, fl, any(), any()));
  }
  {
    // rem: kinks where x/y is an integer (the result jumps by |y| or touches 0).
    Row r = binary("rem", lax::rem, numbers(), any(-4.0, 4.0), nonzero(0.5, 2.0));
    r.kink = [](const Args& x) {
      Array rr = lax::rem(x[0], x[1]);
      return std::min(min_abs(rr), min_abs(lax::sub(lax::abs(x[1]), lax::abs(rr))));
    };
    t.push_back(r);
    // Integers with zero divisors (x % 0 == x) and negative operands, as XLA.
    r = binary("rem", lax::rem, {kI8, kI32, kI64, kU8, kU32}, ints(any(), -128, 127),
               ints(any(), -3, 3));
    r.name = "rem_int_zero_divisor";
    r.kink = nullptr;
    r.deriv = Deriv::kNone;  // integer-only: nothing to differentiate
    t.push_back(r);
  }
  // -- clamp(min, x, max): bounds rank 0 or x's shape; x drawn across both bounds.
  {
    Row r;
    r.name = r.prim = "clamp";
    r.family = "math";
    r.fn = [](const Args& x) { return lax::clamp(x[0], x[1], x[2]); };
    r.operands = {ints(any(-1.5, -0.3), -30, -5), ints(any(-2.5, 2.5), -50, 50),
                  ints(any(0.3, 1.5), 5, 30)};
    r.shapes = {
        {{}, {3, 4}, {}}, {{3, 4}, {3, 4}, {3, 4}}, {{}, {3, 4}, {3, 4}}, {{3, 4}, {3, 4}, {}},
        {{}, {}, {}},     {{}, {0, 3}, {0, 3}},     {{}, {2, 1, 3}, {}},  {{5}, {5}, {5}}};
    r.dtypes = all_types();
    r.oracle_op = "lax.clamp";
    r.kink = [](const Args& x) {
      return std::min(min_abs_diff(x[0], x[1]), min_abs_diff(x[1], x[2]));
    };
    r.min_kink = 1e-3;
    t.push_back(r);
  }
  return t;
}

}  // namespace tessera::sweep
