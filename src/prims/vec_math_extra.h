// More vectorizable float32 math for the eager kernels of arithmetic_unary.cpp (rounding),
// transcendental.cpp (exp2, expm1, log1p, sinh, cosh, tan, asinh, acosh, atanh, rsqrt) and
// binary_math.cpp (nextafter).
//
// Same style as vec_math.h (branch-free scalar code that g++ auto-vectorizes in plain loops,
// explicit fmas, selects as bit blends), built on its exp, log and sin/cos. Accuracy, checked
// against float64 libm by a dense sweep in tests/cpp/test_elementwise_edge_cases.cpp: rounding and
// nextafter exact, rsqrt correctly rounded; exp2 within 1 ulp; log1p, cosh, asinh, acosh within
// 3; expm1, sinh, atanh within 4; tan within 4.5; IEEE results at +-0, +-inf and NaN.
// Polynomials are Taylor series (exact coefficients rounded to float) on ranges small enough that
// the truncation error is far below an ulp.
#pragma once

#include <cmath>
#include <cstdint>

#include "prims/vec_math.h"

namespace tessera::kernels::vmath {

inline constexpr float kTwo23 = 8388608.0f;  // 2^23: floats at or above it are integers

// Round half to even (TO_NEAREST_EVEN): adding and subtracting 2^23 rounds |x| < 2^23 to an
// integer in the default rounding mode; larger values, inf and NaN are returned as they are.
inline float round_even(float x) {
  const float a = std::fabs(x);
  const float r = (a + kTwo23) - kTwo23;
  return select(a < kTwo23, std::copysign(r, x), x);
}

// floor, ceil and trunc from round_even: one correction step, and the sign of x for zeros
// (std::floor and friends do not vectorize here: g++ needs -fno-trapping-math for vroundps).
inline float floor(float x) {
  const float r = round_even(x);
  return std::copysign(select(r > x, r - 1.0f, r), x);
}
inline float ceil(float x) {
  const float r = round_even(x);
  return std::copysign(select(r < x, r + 1.0f, r), x);
}
inline float trunc(float x) {
  const float a = std::fabs(x);
  const float r = round_even(a);
  return std::copysign(select(r > a, r - 1.0f, r), x);
}

// Round half away from zero (lax.round's AWAY_FROM_ZERO). x - trunc(x) is exact.
inline float round_away(float x) {
  const float t = trunc(x);
  const float d = x - t;
  return select(std::fabs(d) >= 0.5f, t + std::copysign(1.0f, x), t);
}

// 2^x: x = n + r with n = round(x) and |r| <= 1/2 (exact), 2^r by its Taylor series in r*ln2
// (degree 7: truncation < 1e-8 relative), then scaled by 2^n in two steps as exp does.
inline float exp2(float x) {
  constexpr float kShift = 12582912.0f;  // 1.5*2^23
  float xc = select(x > 128.5f, 128.5f, x);
  xc = select(xc < -152.0f, -152.0f, xc);
  const float t = xc + kShift;
  const int32_t n = static_cast<int32_t>(float_to_bits(t) - float_to_bits(kShift));
  const float r = xc - (t - kShift);
  float p = 1.5252733804059838e-05f;
  p = std::fma(p, r, 1.5403530393381606e-04f);
  p = std::fma(p, r, 1.3333558146428441e-03f);
  p = std::fma(p, r, 9.618129107628477e-03f);
  p = std::fma(p, r, 5.5504108664821576e-02f);
  p = std::fma(p, r, 2.402265069591007e-01f);
  p = std::fma(p, r, 6.931471805599453e-01f);
  p = std::fma(p, r, 1.0f);
  const int32_t n1 = n >> 1;  // n in [-152, 129]: both halves are normal powers of two
  const int32_t n2 = n - n1;
  const float s1 = bits_to_float(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = bits_to_float(static_cast<uint32_t>(n2 + 127) << 23);
  const float y = p * s1 * s2;
  return select(x != x, x, y);
}

// e^x - 1: the Taylor series x + x^2/2 + ... + x^10/10! for |x| < 0.35 (no cancellation), and
// exp(x) - 1 above (exp(x) is then >= 1.41 or <= 0.71, so the subtraction loses < 2 bits).
inline float expm1(float x) {
  float q = 2.755731922398589e-07f;
  q = std::fma(q, x, 2.7557319223985893e-06f);
  q = std::fma(q, x, 2.48015873015873e-05f);
  q = std::fma(q, x, 1.984126984126984e-04f);
  q = std::fma(q, x, 1.388888888888889e-03f);
  q = std::fma(q, x, 8.333333333333333e-03f);
  q = std::fma(q, x, 4.1666666666666664e-02f);
  q = std::fma(q, x, 1.6666666666666666e-01f);
  q = std::fma(q, x, 0.5f);
  const float small = std::fma(x * x, q, x);
  const float large = exp(x) - 1.0f;
  const float y = select(std::fabs(x) < 0.35f, small, large);
  return select(x == 0.0f, x, y);  // expm1(-0) == -0
}

// log(1 + x) by Goldberg's correction: with u = 1 + x rounded, log(u) * x / (u - 1) is within a
// few ulp of log1p(x) (x itself where u == 1).
inline float log1p(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  const float y = select(d == 0.0f, x, log(u) * (x / d));
  return select(x == INFINITY, x, y);
}

// sinh via expm1 of |x|: (E + E/(E+1))/2 with E = e^|x| - 1 has no cancellation near 0; above
// 88 (where e^|x| is near overflow) (h/2)*h with h = e^(|x|/2).
inline float sinh(float x) {
  const float a = std::fabs(x);
  const float e = expm1(a);
  const float mid = 0.5f * (e + e / (e + 1.0f));
  const float h = exp(0.5f * a);
  const float big = (0.5f * h) * h;
  return std::copysign(select(a < 88.0f, mid, big), x);
}

inline float cosh(float x) {
  const float a = std::fabs(x);
  const float e = exp(a);
  const float mid = 0.5f * e + 0.5f / e;
  const float h = exp(0.5f * a);
  const float big = (0.5f * h) * h;
  return select(a < 88.0f, mid, big);  // NaN: a < 88 is false and big is NaN
}

// tan = sin / cos over n floats (each within 4 ulp), libm (in double) beyond kTrigMax.
inline void tan_n(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sincos_reduced<false>(x[i]) / sincos_reduced<true>(x[i]);
  for (int64_t i = 0; i < n; ++i) {
    if (!(std::fabs(x[i]) <= kTrigMax))
      y[i] = static_cast<float>(std::tan(static_cast<double>(x[i])));
  }
}

inline constexpr float kLn2f = 0.693147180559945309f;

// asinh(|x|) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) below 2^12, log(a) + ln2 above (where the
// neglected 1/(4a^2) is below 2^-26); odd.
inline float asinh(float x) {
  const float a = std::fabs(x);
  const float a2 = a * a;
  const float mid = log1p(a + a2 / (1.0f + std::sqrt(1.0f + a2)));
  const float big = log(a) + kLn2f;
  return std::copysign(select(a < 4096.0f, mid, big), x);
}

// acosh(x) = log1p(t + sqrt(2t + t^2)) with t = x - 1 (exact near 1) below 2^12, log(x) + ln2
// above; NaN below 1.
inline float acosh(float x) {
  const float t = x - 1.0f;
  const float mid = log1p(t + std::sqrt(std::fma(t, t, 2.0f * t)));
  const float big = log(x) + kLn2f;
  const float y = select(x < 4096.0f, mid, big);
  return select(x < 1.0f, NAN, y);
}

// atanh(x) = log1p(2a / (1 - a)) / 2 with a = |x| (1 - a is exact near 1); +-1 gives +-inf and
// |x| > 1 NaN (log1p of a value below -1); odd.
inline float atanh(float x) {
  const float a = std::fabs(x);
  const float y = 0.5f * log1p((2.0f * a) / (1.0f - a));
  return std::copysign(y, x);
}

// 1/sqrt(x) in double, rounded once (vectorizes where sqrt does, with -fno-math-errno).
inline float rsqrt(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }

// The next float after x toward y, on the bits: NaN if either is NaN, y when x == y (so
// nextafter(-0, +0) == +0), the smallest subnormal with y's sign from a zero, and one step of
// the sign-magnitude bits otherwise. The same rule for every binary float format: U holds its
// bits, F is a type in which its values compare exactly (float for 16-bit floats).
template <class U, class F>
inline U nextafter_bits(U ux, U uy, F x, F y) {
  constexpr U kSign = static_cast<U>(U(1) << (sizeof(U) * 8 - 1));
  const bool nan = (x != x) || (y != y);
  const bool up = (x < y) == (x > F(0));  // away from zero
  const U step = static_cast<U>(up ? ux + U(1) : ux - U(1));
  const U from_zero = static_cast<U>((uy & kSign) | U(1));
  U r = x == F(0) ? from_zero : step;
  r = x == y ? uy : r;
  return nan ? static_cast<U>(ux | uy) : r;  // or-ing a NaN's bits with anything gives a NaN
}

}  // namespace tessera::kernels::vmath
