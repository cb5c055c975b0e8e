// tessera::numpy ufuncs beyond the arithmetic core of numpy.h: rounding, exponents and logs,
// trigonometric and hyperbolic functions, division variants, floating-point classification,
// bitwise and logical ops — jax.numpy's semantics (promotion with weak C++ scalars, NumPy
// broadcasting; integer inputs of the transcendental ones promote to float). Included by
// tessera/numpy.h.
#pragma once

#include <utility>

#include "tessera/numpy.h"

namespace tessera::numpy {

// ---- absolute value, sign, rounding ----
Array abs(const ArrayLike& x);  // unsigned and bool: unchanged
Array absolute(const ArrayLike& x);
Array fabs(const ArrayLike& x);  // always floating
Array sign(const ArrayLike& x);
Array floor(const ArrayLike& x);  // integers and bool: unchanged, as jnp
Array ceil(const ArrayLike& x);
Array trunc(const ArrayLike& x);
Array fix(const ArrayLike& x);
Array rint(const ArrayLike& x);                         // to nearest even
Array round(const ArrayLike& x, int64_t decimals = 0);  // to nearest even, as NumPy
Array around(const ArrayLike& x, int64_t decimals = 0);

// ---- exponents and logarithms ----
Array exp2(const ArrayLike& x);
Array expm1(const ArrayLike& x);
Array log1p(const ArrayLike& x);
Array log2(const ArrayLike& x);
Array log10(const ArrayLike& x);
Array logaddexp(const ArrayLike& x, const ArrayLike& y);   // log(e^x + e^y), stable
Array logaddexp2(const ArrayLike& x, const ArrayLike& y);  // log2(2^x + 2^y), stable
Array cbrt(const ArrayLike& x);
Array reciprocal(const ArrayLike& x);
Array float_power(const ArrayLike& x, const ArrayLike& y);

// ---- trigonometric and hyperbolic ----
Array tan(const ArrayLike& x);
Array arcsin(const ArrayLike& x);
Array arccos(const ArrayLike& x);
Array arctan(const ArrayLike& x);
Array arctan2(const ArrayLike& y, const ArrayLike& x);  // NumPy's order: angle of (x, y)
Array sinh(const ArrayLike& x);
Array cosh(const ArrayLike& x);
Array arcsinh(const ArrayLike& x);
Array arccosh(const ArrayLike& x);
Array arctanh(const ArrayLike& x);
Array hypot(const ArrayLike& x, const ArrayLike& y);
Array deg2rad(const ArrayLike& x);
Array rad2deg(const ArrayLike& x);
Array degrees(const ArrayLike& x);
Array radians(const ArrayLike& x);
Array sinc(const ArrayLike& x);  // sin(pi x) / (pi x), 1 at 0 (derivative 0 there)

// ---- division variants ----
Array floor_divide(const ArrayLike& x, const ArrayLike& y);
Array remainder(const ArrayLike& x, const ArrayLike& y);  // sign of the divisor (Python's %)
Array mod(const ArrayLike& x, const ArrayLike& y);
Array fmod(const ArrayLike& x, const ArrayLike& y);  // sign of the dividend (C's fmod)
std::pair<Array, Array> divmod(const ArrayLike& x, const ArrayLike& y);
Array heaviside(const ArrayLike& x, const ArrayLike& h0);

// ---- floating-point classification and bits ----
Array isfinite(const ArrayLike& x);
Array isinf(const ArrayLike& x);
Array isnan(const ArrayLike& x);
Array isposinf(const ArrayLike& x);
Array isneginf(const ArrayLike& x);
Array signbit(const ArrayLike& x);  // true for -0.0 and negative NaNs, as NumPy
Array copysign(const ArrayLike& x, const ArrayLike& y);
Array nextafter(const ArrayLike& x, const ArrayLike& y);

// ---- bitwise and logical ----
Array bitwise_and(const ArrayLike& x, const ArrayLike& y);
Array bitwise_or(const ArrayLike& x, const ArrayLike& y);
Array bitwise_xor(const ArrayLike& x, const ArrayLike& y);
Array bitwise_not(const ArrayLike& x);
Array invert(const ArrayLike& x);
Array left_shift(const ArrayLike& x, const ArrayLike& y);
Array right_shift(const ArrayLike& x, const ArrayLike& y);  // arithmetic for signed types
Array logical_and(const ArrayLike& x, const ArrayLike& y);
Array logical_or(const ArrayLike& x, const ArrayLike& y);
Array logical_xor(const ArrayLike& x, const ArrayLike& y);
Array logical_not(const ArrayLike& x);

// Operators with NumPy semantics (C++ scalars are weak): %, &, |, ^, ~, <<, >>, !.
Array operator%(const ArrayLike& x, const ArrayLike& y);
Array operator&(const ArrayLike& x, const ArrayLike& y);
Array operator|(const ArrayLike& x, const ArrayLike& y);
Array operator^(const ArrayLike& x, const ArrayLike& y);
Array operator~(const Array& x);
Array operator<<(const Array& x, const ArrayLike& y);
Array operator>>(const Array& x, const ArrayLike& y);
Array operator!(const Array& x);

}  // namespace tessera::numpy

namespace tessera {
using numpy::operator%;
using numpy::operator&;
using numpy::operator|;
using numpy::operator^;
using numpy::operator~;
using numpy::operator<<;
using numpy::operator>>;
using numpy::operator!;
}  // namespace tessera
