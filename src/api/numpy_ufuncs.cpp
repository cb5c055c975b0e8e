// tessera::numpy ufuncs beyond numpy_math.cpp's arithmetic core (numpy_ufuncs.h): each promotes
// as jax.numpy does (numpy_internal.h's binary / binary_inexact / unary_inexact patterns) and
// composes lax ops, following jnp's definitions (e.g. remainder = rem fixed up to the divisor's
// sign, logaddexp = max + log1p(exp(-|x - y|)), signbit from the bits).
#include <cmath>
#include <numbers>
#include <string>

#include "api/numpy_internal.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

using namespace detail;

namespace {

Array c(double v, const Array& like) { return constant(v, TypedDType{like.dtype(), false}); }

// 16-bit floats computed in float32 and rounded once (more accurate than computing in 16 bits;
// used by composites that cancel: logaddexp, sinc, hypot).
Array up(const Array& x) {
  return x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16
             ? lax::convert_element_type(x, DType::kFloat32)
             : x;
}
Array down(const Array& r, DType d) { return r.dtype() == d ? r : lax::convert_element_type(r, d); }

// jnp's pattern for functions that leave integers and bools alone (floor, ceil, trunc, ...).
bool is_int_or_bool(const Array& x) { return is_integer(x.dtype()) || is_bool(x.dtype()); }

Array promote1_numeric(const char* op, const Array& x) {
  check_defined(op, x);
  if (is_extended(x.dtype()))
    throw TypeError(op_message(op, "does not accept dtype " + dtype_str(x.dtype())));
  return x;
}

Array to_bool(const char* op, const Array& x) {
  check_defined(op, x);
  if (is_bool(x.dtype())) return x;
  return lax::ne(x, c(0.0, x));
}

// select_n with its operands broadcast to one shape (constants are rank 0).
Array sel(const Array& pred, std::vector<Array> cases) {
  Shape s = pred.shape();
  for (const Array& c : cases) s = broadcast_shape("select", s, c.shape());
  for (Array& c : cases) c = broadcast_to_shape(c, s);
  return lax::select_n(pred.ndim() == 0 ? pred : broadcast_to_shape(pred, s), cases);
}

void check_integer_or_bool(const char* op, const Array& x, bool allow_bool = true) {
  if (is_integer(x.dtype()) || (allow_bool && is_bool(x.dtype()))) return;
  throw TypeError(op_message(op, std::string("only accepts ") +
                                     (allow_bool ? "integer and bool" : "integer") +
                                     " inputs, got " + x.aval().str()));
}

}  // namespace

// ---------------------------------------------------------------- abs, sign, rounding

Array abs(const ArrayLike& xl) {
  const Array x = promote1_numeric("abs", xl.array());
  if (is_unsigned_integer(x.dtype()) || is_bool(x.dtype())) return x;
  return lax::abs(x);
}
Array absolute(const ArrayLike& x) { return abs(x); }
Array fabs(const ArrayLike& x) { return unary_inexact("fabs", x, lax::abs); }

Array sign(const ArrayLike& xl) { return lax::sign(promote1_numeric("sign", xl.array())); }

Array floor(const ArrayLike& xl) {
  const Array x = promote1_numeric("floor", xl.array());
  return is_int_or_bool(x) ? x : lax::floor(x);
}
Array ceil(const ArrayLike& xl) {
  const Array x = promote1_numeric("ceil", xl.array());
  return is_int_or_bool(x) ? x : lax::ceil(x);
}
Array trunc(const ArrayLike& xl) {
  const Array x = promote1_numeric("trunc", xl.array());
  if (is_int_or_bool(x)) return x;
  // Rounding toward zero: ceil below 0, floor above.
  return sel(lax::lt(x, c(0.0, x)), {lax::floor(x), lax::ceil(x)});
}
Array fix(const ArrayLike& x) { return trunc(x); }
Array rint(const ArrayLike& xl) {
  const Array x = promote1_numeric("rint", xl.array());
  if (is_int_or_bool(x)) return lax::convert_element_type(x, to_inexact(x.dtype()));
  return lax::round(x, lax::RoundingMethod::kToNearestEven);
}

Array round(const ArrayLike& xl, int64_t decimals) {
  const Array x = promote1_numeric("round", xl.array());
  if (is_bool(x.dtype()))
    throw TypeError(op_message("round", "does not accept dtype bool; convert to a number"));
  if (is_integer(x.dtype())) {
    if (decimals >= 0) return x;
    // A multiple of p = 10^-decimals, half to even, in exact integer arithmetic.
    double pd = std::pow(10.0, static_cast<double>(-decimals));
    const IInfo info = iinfo(x.dtype());
    if (pd > static_cast<double>(info.max)) return lax::mul(x, c(0.0, x));
    const Array p = c(pd, x);
    const Array q = floor_divide(x, p);
    const Array r = lax::sub(x, lax::mul(q, p));  // 0 <= r < p
    const Array half_up = lax::gt(r, lax::sub(p, r));
    const Array tie = lax::eq(r, lax::sub(p, r));
    const Array odd = lax::ne(lax::rem(q, c(2.0, q)), c(0.0, q));
    const Array bump = lax::bitwise_or(half_up, lax::bitwise_and(tie, odd));
    return lax::mul(sel(bump, {q, lax::add(q, c(1.0, q))}), p);
  }
  const auto rnd = [&](const Array& v) {
    if (decimals == 0) return lax::round(v, lax::RoundingMethod::kToNearestEven);
    // As jnp: x * 10^d rounded, then / 10^d (16-bit floats scale in float32 to avoid overflow).
    // As jnp (and NumPy's float64 path): x * 10^d, rounded to even, / 10^d; where x * 10^d
    // overflows the result is inf.
    const Array f = c(std::pow(10.0, static_cast<double>(decimals)), v);
    return lax::div(lax::round(lax::mul(v, f), lax::RoundingMethod::kToNearestEven), f);
  };
  if (x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16)
    return lax::convert_element_type(rnd(lax::convert_element_type(x, DType::kFloat32)), x.dtype());
  return rnd(x);
}
Array around(const ArrayLike& x, int64_t decimals) { return round(x, decimals); }

// ---------------------------------------------------------------- exponents and logs

Array exp2(const ArrayLike& x) { return unary_inexact("exp2", x, lax::exp2); }
Array expm1(const ArrayLike& x) { return unary_inexact("expm1", x, lax::expm1); }
Array log1p(const ArrayLike& x) { return unary_inexact("log1p", x, lax::log1p); }
Array log2(const ArrayLike& x) {
  return unary_inexact("log2", x,
                       [](const Array& v) { return lax::div(lax::log(v), lax::log(c(2.0, v))); });
}
Array log10(const ArrayLike& x) {
  return unary_inexact("log10", x,
                       [](const Array& v) { return lax::div(lax::log(v), lax::log(c(10.0, v))); });
}
Array cbrt(const ArrayLike& x) { return unary_inexact("cbrt", x, lax::cbrt); }
Array reciprocal(const ArrayLike& x) { return unary_inexact("reciprocal", x, lax::reciprocal); }
Array float_power(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("float_power", x, y, lax::pow);
}

namespace {
// max(x, y) + log(1 + b^(min - max)) with NaN where x - y is NaN (inf - inf: x + y then), as
// jnp. min - max (not -|x - y|) makes the derivative split 1/2, 1/2 at x == y through max/min's
// tie rule, as jnp's custom JVP does.
Array logaddexp_impl(const Array& x, const Array& y, bool base2) {
  const Array amax = lax::max(x, y);
  const Array delta = lax::sub(x, y);
  const Array isnan = lax::ne(delta, delta);
  const Array neg_gap = sel(isnan, {lax::sub(lax::min(x, y), amax), c(0.0, delta)});
  Array tail;
  if (base2) {
    const Array ln2 = c(std::numbers::ln2, x);
    tail = lax::div(lax::log1p(lax::exp2(neg_gap)), ln2);
  } else {
    tail = lax::log1p(lax::exp(neg_gap));
  }
  return sel(isnan, {lax::add(amax, tail), lax::add(x, y)});
}
}  // namespace

Array logaddexp(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("logaddexp", x, y, [](const Array& a, const Array& b) {
    return down(logaddexp_impl(up(a), up(b), false), a.dtype());
  });
}
Array logaddexp2(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("logaddexp2", x, y, [](const Array& a, const Array& b) {
    return down(logaddexp_impl(up(a), up(b), true), a.dtype());
  });
}

// ---------------------------------------------------------------- trigonometric

Array tan(const ArrayLike& x) { return unary_inexact("tan", x, lax::tan); }
Array arcsin(const ArrayLike& x) { return unary_inexact("arcsin", x, lax::asin); }
Array arccos(const ArrayLike& x) { return unary_inexact("arccos", x, lax::acos); }
Array arctan(const ArrayLike& x) { return unary_inexact("arctan", x, lax::atan); }
Array arctan2(const ArrayLike& y, const ArrayLike& x) {
  return binary_inexact("arctan2", y, x, lax::atan2);
}
Array sinh(const ArrayLike& x) { return unary_inexact("sinh", x, lax::sinh); }
Array cosh(const ArrayLike& x) { return unary_inexact("cosh", x, lax::cosh); }
Array arcsinh(const ArrayLike& x) { return unary_inexact("arcsinh", x, lax::asinh); }
Array arccosh(const ArrayLike& x) { return unary_inexact("arccosh", x, lax::acosh); }
Array arctanh(const ArrayLike& x) { return unary_inexact("arctanh", x, lax::atanh); }

Array hypot(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("hypot", x, y, [](const Array& a0, const Array& b0) {
    // As jnp: big * sqrt(1 + (small/big)^2), 0 when both are 0, inf when either is inf.
    Array a = lax::abs(up(a0)), b = lax::abs(up(b0));
    const Array inf = c(INFINITY, a);
    const Array any_inf = lax::bitwise_or(lax::eq(a, inf), lax::eq(b, inf));
    const Array big = lax::max(a, b), small = lax::min(a, b);
    const Array zero = lax::eq(big, c(0.0, big));
    const Array safe_big = sel(zero, {big, c(1.0, big)});
    const Array r = lax::div(small, safe_big);
    Array h = lax::mul(big, lax::sqrt(lax::add(c(1.0, r), lax::mul(r, r))));
    h = sel(zero, {h, big});
    return down(sel(any_inf, {h, inf}), a0.dtype());
  });
}

Array deg2rad(const ArrayLike& x) {
  return unary_inexact("deg2rad", x,
                       [](const Array& v) { return lax::mul(v, c(std::numbers::pi / 180.0, v)); });
}
Array rad2deg(const ArrayLike& x) {
  return unary_inexact("rad2deg", x,
                       [](const Array& v) { return lax::mul(v, c(180.0 / std::numbers::pi, v)); });
}
Array degrees(const ArrayLike& x) { return rad2deg(x); }
Array radians(const ArrayLike& x) { return deg2rad(x); }

Array sinc(const ArrayLike& x) {
  return unary_inexact("sinc", x, [](const Array& v0) {
    const Array v = up(v0);
    // The double-where keeps the derivative finite (0) at x == 0.
    const Array zero = lax::eq(v, c(0.0, v));
    const Array safe = sel(zero, {v, c(1.0, v)});
    const Array px = lax::mul(safe, c(std::numbers::pi, v));
    return down(sel(zero, {lax::div(lax::sin(px), px), c(1.0, v)}), v0.dtype());
  });
}

// ---------------------------------------------------------------- division variants

namespace {

// jnp's _float_divmod: div rounded from (x - mod) / y with mod fixed to the divisor's sign.
std::pair<Array, Array> float_divmod(const Array& x, const Array& y) {
  Array m = lax::rem(x, y);
  Array d = lax::div(lax::sub(x, m), y);
  const Array fix = lax::bitwise_and(lax::ne(m, c(0.0, m)), lax::ne(lax::sign(y), lax::sign(m)));
  m = sel(fix, {m, lax::add(m, y)});
  d = sel(fix, {d, lax::sub(d, c(1.0, d))});
  return {lax::round(d, lax::RoundingMethod::kAwayFromZero), m};
}

Array int_floor_divide(const Array& x, const Array& y) {
  if (is_unsigned_integer(x.dtype())) return lax::div(x, y);
  // JAX's: the truncated quotient minus one where the signs differ (lax.sign: a zero divisor's
  // sign 0 differs from any nonzero x's) and the division is inexact. With lax.div's x / 0 = -1
  // and x % 0 = x this makes x // 0 = -2 for x != 0, as JAX.
  const Array zero = c(0.0, x);
  const Array q = lax::div(x, y);
  const Array r = lax::rem(x, y);
  const Array fix = lax::bitwise_and(lax::ne(r, zero), lax::ne(lax::sign(x), lax::sign(y)));
  return sel(fix, {q, lax::sub(q, c(1.0, q))});
}

// An integer divisor with zeros replaced by ones (JAX's remainder and fmod: x % 0 == 0).
Array nonzero_divisor(const Array& y) { return sel(lax::eq(y, c(0.0, y)), {y, c(1.0, y)}); }

Array int_remainder(const Array& x, const Array& y0) {
  const Array y = nonzero_divisor(y0);
  const Array r = lax::rem(x, y);
  if (is_unsigned_integer(x.dtype())) return r;
  const Array zero = c(0.0, x);
  const Array fix = lax::bitwise_and(lax::ne(r, zero), lax::ne(lax::lt(r, zero), lax::lt(y, zero)));
  return sel(fix, {r, lax::add(r, y)});
}

Array bool_to_int8_if(const Array& x) {
  return is_bool(x.dtype()) ? lax::convert_element_type(x, DType::kInt8) : x;
}

}  // namespace

Array floor_divide(const ArrayLike& x, const ArrayLike& y) {
  return binary("floor_divide", x, y, [](const Array& a, const Array& b) {
    if (is_bool(a.dtype()))
      return lax::convert_element_type(int_floor_divide(bool_to_int8_if(a), bool_to_int8_if(b)),
                                       DType::kBool);
    if (is_integer(a.dtype())) return int_floor_divide(a, b);
    return float_divmod(a, b).first;
  });
}

Array remainder(const ArrayLike& x, const ArrayLike& y) {
  return binary("remainder", x, y, [](const Array& a, const Array& b) {
    if (is_bool(a.dtype()))
      throw TypeError(op_message("remainder", "does not accept bool inputs; convert to int"));
    if (is_integer(a.dtype())) return int_remainder(a, b);
    return float_divmod(a, b).second;
  });
}
Array mod(const ArrayLike& x, const ArrayLike& y) { return remainder(x, y); }

Array fmod(const ArrayLike& x, const ArrayLike& y) {
  return binary("fmod", x, y, [](const Array& a, const Array& b) {
    if (is_bool(a.dtype()))
      throw TypeError(op_message("fmod", "does not accept bool inputs; convert to int"));
    return lax::rem(a, is_integer(b.dtype()) ? nonzero_divisor(b) : b);
  });
}

std::pair<Array, Array> divmod(const ArrayLike& x, const ArrayLike& y) {
  return {floor_divide(x, y), remainder(x, y)};
}

Array heaviside(const ArrayLike& x, const ArrayLike& h0) {
  return binary_inexact("heaviside", x, h0, [](const Array& a, const Array& h) {
    const Array zero = c(0.0, a);
    const Shape s = broadcast_shape("heaviside", a.shape(), h.shape());
    const Array ab = broadcast_to_shape(a, s), hb = broadcast_to_shape(h, s);
    // jnp: where(x < 0, 0, where(x > 0, 1, h0)), so NaN gives h0 (NumPy gives NaN).
    const Array inner = sel(lax::gt(ab, zero), {hb, c(1.0, ab)});
    return sel(lax::lt(ab, zero), {inner, zero});
  });
}

// ---------------------------------------------------------------- classification

Array isfinite(const ArrayLike& xl) {
  const Array x = promote1_numeric("isfinite", xl.array());
  if (is_floating(x.dtype())) return lax::is_finite(x);
  return lax::broadcast_in_dim(numpy::scalar(1.0, DType::kBool), x.shape(), {});
}
Array isinf(const ArrayLike& xl) {
  const Array x = promote1_numeric("isinf", xl.array());
  if (is_floating(x.dtype())) return lax::eq(lax::abs(x), c(INFINITY, x));
  return lax::broadcast_in_dim(numpy::scalar(0.0, DType::kBool), x.shape(), {});
}
Array isposinf(const ArrayLike& xl) {
  const Array x = promote1_numeric("isposinf", xl.array());
  if (is_floating(x.dtype())) return lax::eq(x, c(INFINITY, x));
  return lax::broadcast_in_dim(numpy::scalar(0.0, DType::kBool), x.shape(), {});
}
Array isneginf(const ArrayLike& xl) {
  const Array x = promote1_numeric("isneginf", xl.array());
  if (is_floating(x.dtype())) return lax::eq(x, c(-INFINITY, x));
  return lax::broadcast_in_dim(numpy::scalar(0.0, DType::kBool), x.shape(), {});
}
Array isnan(const ArrayLike& xl) {
  const Array x = promote1_numeric("isnan", xl.array());
  if (is_floating(x.dtype())) return lax::ne(x, x);
  return lax::broadcast_in_dim(numpy::scalar(0.0, DType::kBool), x.shape(), {});
}

Array signbit(const ArrayLike& xl) {
  const Array x = promote1_numeric("signbit", xl.array());
  if (is_bool(x.dtype()) || is_unsigned_integer(x.dtype()))
    return lax::broadcast_in_dim(numpy::scalar(0.0, DType::kBool), x.shape(), {});
  if (is_integer(x.dtype())) return lax::lt(x, c(0.0, x));
  // The sign bit itself: -0.0 and negative NaNs count as negative.
  DType bits = DType::kInt32;
  switch (itemsize(x.dtype())) {
    case 2:
      bits = DType::kInt16;
      break;
    case 8:
      bits = DType::kInt64;
      break;
    default:
      break;
  }
  const Array b = lax::bitcast_convert_type(x, bits);
  return lax::lt(b, c(0.0, b));
}

Array copysign(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("copysign", x, y, [](const Array& a, const Array& b) {
    const Array mag = lax::abs(a);
    const Array neg = signbit(b);
    const auto [m, n] = align_ranks("copysign", mag, neg);
    Shape s = broadcast_shape("copysign", a.shape(), b.shape());
    return sel(broadcast_to_shape(n, s),
               {broadcast_to_shape(m, s), broadcast_to_shape(lax::neg(m), s)});
  });
}

Array nextafter(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("nextafter", x, y, lax::nextafter);
}

// ---------------------------------------------------------------- bitwise and logical

Array bitwise_and(const ArrayLike& x, const ArrayLike& y) {
  return binary("bitwise_and", x, y, [](const Array& a, const Array& b) {
    check_integer_or_bool("bitwise_and", a);
    return lax::bitwise_and(a, b);
  });
}
Array bitwise_or(const ArrayLike& x, const ArrayLike& y) {
  return binary("bitwise_or", x, y, [](const Array& a, const Array& b) {
    check_integer_or_bool("bitwise_or", a);
    return lax::bitwise_or(a, b);
  });
}
Array bitwise_xor(const ArrayLike& x, const ArrayLike& y) {
  return binary("bitwise_xor", x, y, [](const Array& a, const Array& b) {
    check_integer_or_bool("bitwise_xor", a);
    return lax::bitwise_xor(a, b);
  });
}
Array bitwise_not(const ArrayLike& xl) {
  const Array x = promote1_numeric("bitwise_not", xl.array());
  check_integer_or_bool("bitwise_not", x);
  return lax::bitwise_not(x);
}
Array invert(const ArrayLike& x) { return bitwise_not(x); }
Array left_shift(const ArrayLike& x, const ArrayLike& y) {
  return binary("left_shift", x, y, [](const Array& a, const Array& b) {
    check_integer_or_bool("left_shift", a, false);
    return lax::shift_left(a, b);
  });
}
Array right_shift(const ArrayLike& x, const ArrayLike& y) {
  return binary("right_shift", x, y, [](const Array& a, const Array& b) {
    check_integer_or_bool("right_shift", a, false);
    return is_unsigned_integer(a.dtype()) ? lax::shift_right_logical(a, b)
                                          : lax::shift_right_arithmetic(a, b);
  });
}

Array logical_and(const ArrayLike& x, const ArrayLike& y) {
  return binary("logical_and", to_bool("logical_and", x.array()), to_bool("logical_and", y.array()),
                lax::bitwise_and);
}
Array logical_or(const ArrayLike& x, const ArrayLike& y) {
  return binary("logical_or", to_bool("logical_or", x.array()), to_bool("logical_or", y.array()),
                lax::bitwise_or);
}
Array logical_xor(const ArrayLike& x, const ArrayLike& y) {
  return binary("logical_xor", to_bool("logical_xor", x.array()), to_bool("logical_xor", y.array()),
                lax::bitwise_xor);
}
Array logical_not(const ArrayLike& x) {
  return lax::bitwise_not(to_bool("logical_not", x.array()));
}

Array operator%(const ArrayLike& x, const ArrayLike& y) { return remainder(x, y); }
Array operator&(const ArrayLike& x, const ArrayLike& y) { return bitwise_and(x, y); }
Array operator|(const ArrayLike& x, const ArrayLike& y) { return bitwise_or(x, y); }
Array operator^(const ArrayLike& x, const ArrayLike& y) { return bitwise_xor(x, y); }
Array operator~(const Array& x) { return bitwise_not(x); }
Array operator<<(const Array& x, const ArrayLike& y) { return left_shift(x, y); }
Array operator>>(const Array& x, const ArrayLike& y) { return right_shift(x, y); }
Array operator!(const Array& x) { return logical_not(x); }

}  // namespace tessera::numpy
