// tessera::lax elementwise math, special functions and bitwise ops: each binds its primitive
// (rules in src/prims/elementwise_math.cpp, special.cpp, bitwise.cpp).
#include "prims/prims.h"
#include "tessera/lax.h"

namespace tessera::lax {

Array abs(const Array& x) { return bind1(prims::abs, {x}); }
Array sign(const Array& x) { return bind1(prims::sign, {x}); }
Array floor(const Array& x) { return bind1(prims::floor, {x}); }
Array ceil(const Array& x) { return bind1(prims::ceil, {x}); }
Array round(const Array& x, RoundingMethod method) {
  return bind1(prims::round, {x}, Params{{"rounding_method", static_cast<int64_t>(method)}});
}
Array exp2(const Array& x) { return bind1(prims::exp2, {x}); }
Array expm1(const Array& x) { return bind1(prims::expm1, {x}); }
Array log1p(const Array& x) { return bind1(prims::log1p, {x}); }
Array rsqrt(const Array& x) { return bind1(prims::rsqrt, {x}); }
Array cbrt(const Array& x) { return bind1(prims::cbrt, {x}); }
Array tan(const Array& x) { return bind1(prims::tan, {x}); }
Array asin(const Array& x) { return bind1(prims::asin, {x}); }
Array acos(const Array& x) { return bind1(prims::acos, {x}); }
Array atan(const Array& x) { return bind1(prims::atan, {x}); }
Array atan2(const Array& x, const Array& y) { return bind1(prims::atan2, {x, y}); }
Array sinh(const Array& x) { return bind1(prims::sinh, {x}); }
Array cosh(const Array& x) { return bind1(prims::cosh, {x}); }
Array asinh(const Array& x) { return bind1(prims::asinh, {x}); }
Array acosh(const Array& x) { return bind1(prims::acosh, {x}); }
Array atanh(const Array& x) { return bind1(prims::atanh, {x}); }
Array is_finite(const Array& x) { return bind1(prims::is_finite, {x}); }
Array nextafter(const Array& x, const Array& y) { return bind1(prims::nextafter, {x, y}); }
Array rem(const Array& x, const Array& y) { return bind1(prims::rem, {x, y}); }
Array square(const Array& x) { return bind1(prims::square, {x}); }
Array reciprocal(const Array& x) { return integer_pow(x, -1); }
Array clamp(const Array& min, const Array& x, const Array& max) {
  return bind1(prims::clamp, {min, x, max});
}

Array erf(const Array& x) { return bind1(prims::erf, {x}); }
Array erfc(const Array& x) { return bind1(prims::erfc, {x}); }
Array erf_inv(const Array& x) { return bind1(prims::erf_inv, {x}); }
Array lgamma(const Array& x) { return bind1(prims::lgamma, {x}); }
Array digamma(const Array& x) { return bind1(prims::digamma, {x}); }
Array polygamma(const Array& m, const Array& x) { return bind1(prims::polygamma, {m, x}); }
Array zeta(const Array& x, const Array& q) { return bind1(prims::zeta, {x, q}); }
Array igamma(const Array& a, const Array& x) { return bind1(prims::igamma, {a, x}); }
Array igammac(const Array& a, const Array& x) { return bind1(prims::igammac, {a, x}); }
Array igamma_grad_a(const Array& a, const Array& x) { return bind1(prims::igamma_grad_a, {a, x}); }
Array random_gamma_grad(const Array& a, const Array& x) {
  return bind1(prims::random_gamma_grad, {a, x});
}
Array bessel_i0e(const Array& x) { return bind1(prims::bessel_i0e, {x}); }
Array bessel_i1e(const Array& x) { return bind1(prims::bessel_i1e, {x}); }
Array betainc(const Array& a, const Array& b, const Array& x) {
  return bind1(prims::regularized_incomplete_beta, {a, b, x});
}

Array bitwise_not(const Array& x) { return bind1(prims::not_, {x}); }
Array bitwise_and(const Array& x, const Array& y) { return bind1(prims::and_, {x, y}); }
Array bitwise_or(const Array& x, const Array& y) { return bind1(prims::or_, {x, y}); }
Array bitwise_xor(const Array& x, const Array& y) { return bind1(prims::xor_, {x, y}); }
Array shift_left(const Array& x, const Array& y) { return bind1(prims::shift_left, {x, y}); }
Array shift_right_logical(const Array& x, const Array& y) {
  return bind1(prims::shift_right_logical, {x, y});
}
Array shift_right_arithmetic(const Array& x, const Array& y) {
  return bind1(prims::shift_right_arithmetic, {x, y});
}
Array population_count(const Array& x) { return bind1(prims::population_count, {x}); }
Array clz(const Array& x) { return bind1(prims::clz, {x}); }
Array bitcast_convert_type(const Array& x, DType new_dtype) {
  return bind1(prims::bitcast_convert_type, {x},
               Params{{"new_dtype", canonicalize_dtype(new_dtype)}});
}
Array reduce_precision(const Array& x, int64_t exponent_bits, int64_t mantissa_bits) {
  return bind1(prims::reduce_precision, {x},
               Params{{"exponent_bits", exponent_bits}, {"mantissa_bits", mantissa_bits}});
}

}  // namespace tessera::lax
