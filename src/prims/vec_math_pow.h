// Vectorizable float32 pow for the eager kernel of lax.pow (float32 and, through float32, the
// 16-bit floats), in vec_math.h's style: branch-free scalar code, explicit fmas, selects as bit
// blends. compiler/math_expand.cpp writes the same operations as a kernel-IR expansion
// (expand_pow_f32), so a fused kernel computes these bits (tests/cpp/test_math_expand.cpp).
//
// |x|^y = 2^(y * log2|x|), both steps in double: log2 of |x| = m * 2^e (m in [sqrt(1/2),
// sqrt(2))) by the atanh series 2*(s + s^3/3 + ... + s^21/21), s = (m - 1)/(m + 1), |s| <= 0.172
// (truncation below 1e-17); 2^t = 2^n * e^(f ln2) with n = round(t), |f| <= 1/2, by its Taylor
// series to degree 13 (truncation below 1e-17). The double result is within ~1e-15 relative of
// |x|^y, so its single rounding to float32 is the correctly rounded result except where |x|^y
// lies within that of a float32 rounding boundary: within 1 ulp everywhere (checked against
// float64 pow in test_elementwise_edge_cases.cpp / test_math_expand.cpp). C99's special cases
// (Annex F, as powf): pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN, NaN otherwise propagated,
// a negative base with a non-integer exponent NaN, signed zeros and infinities of zero and
// infinite bases keeping the base's sign for odd integer exponents, pow(-1, +-inf) = 1, and
// |x| < 1 or > 1 against an infinite exponent.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "prims/vec_math.h"
#include "prims/vec_math_extra.h"

namespace tessera::kernels::vmath {

// Inlined into every loop that calls them (g++ otherwise keeps pow out of line, and a call per
// element does not vectorize).
#define TESSERA_VMATH_INLINE inline __attribute__((always_inline))

TESSERA_VMATH_INLINE double select_d(bool c, double a, double b) {
  const uint64_t m = 0 - static_cast<uint64_t>(c);
  return std::bit_cast<double>((std::bit_cast<uint64_t>(a) & m) |
                               (std::bit_cast<uint64_t>(b) & ~m));
}

// log2(a) for a finite a > 0 (a double holding a float32 value, so normal in double).
TESSERA_VMATH_INLINE double log2_pos(double a) {
  const uint64_t bits = std::bit_cast<uint64_t>(a);
  const uint64_t mbits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  const double m1 = std::bit_cast<double>(mbits);  // [1, 2)
  const bool big = m1 > 1.4142135623730951;
  const double m = select_d(big, m1 * 0.5, m1);
  // The exponent field k as a double without an int64 -> double conversion (none in AVX2):
  // the bits of 2^52 + k, minus 2^52 (and the bias).
  const double k = std::bit_cast<double>((bits >> 52) | 0x4330000000000000ull);
  const double e = (k - 4503599627371519.0) + select_d(big, 1.0, 0.0);  // 2^52 + 1023
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  double p = 1.0 / 21;
  p = std::fma(p, z, 1.0 / 19);
  p = std::fma(p, z, 1.0 / 17);
  p = std::fma(p, z, 1.0 / 15);
  p = std::fma(p, z, 1.0 / 13);
  p = std::fma(p, z, 1.0 / 11);
  p = std::fma(p, z, 1.0 / 9);
  p = std::fma(p, z, 1.0 / 7);
  p = std::fma(p, z, 1.0 / 5);
  p = std::fma(p, z, 1.0 / 3);
  p = std::fma(p, z, 1.0);
  constexpr double k2OverLn2 = 2.8853900817779268;  // 2 / ln 2
  return std::fma(s * p, k2OverLn2, e);
}

// 2^t for t in [-160, 130] (float32's range with room: the caller clamps).
TESSERA_VMATH_INLINE double exp2_mid(double t) {
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double r = t + kShift;
  const double n = r - kShift;
  const double z = (t - n) * 0.69314718055994531;  // |z| <= ln2 / 2
  double p = 1.0 / 6227020800.0;                   // 1/13!
  p = std::fma(p, z, 1.0 / 479001600.0);
  p = std::fma(p, z, 1.0 / 39916800.0);
  p = std::fma(p, z, 1.0 / 3628800.0);
  p = std::fma(p, z, 1.0 / 362880.0);
  p = std::fma(p, z, 1.0 / 40320.0);
  p = std::fma(p, z, 1.0 / 5040.0);
  p = std::fma(p, z, 1.0 / 720.0);
  p = std::fma(p, z, 1.0 / 120.0);
  p = std::fma(p, z, 1.0 / 24.0);
  p = std::fma(p, z, 1.0 / 6.0);
  p = std::fma(p, z, 0.5);
  p = std::fma(p, z, 1.0);
  p = std::fma(p, z, 1.0);
  // 2^n as a double: n + 1023 in the exponent field (n in [-160, 130]).
  const uint64_t nb = std::bit_cast<uint64_t>(r) - std::bit_cast<uint64_t>(kShift);
  const double scale = std::bit_cast<double>((nb + 1023) << 52);
  return p * scale;
}

TESSERA_VMATH_INLINE float pow(float x, float y) {
  const float ax = std::fabs(x), ay = std::fabs(y);
  const bool y_int = floor(y) == y;  // +-inf counts as an (even) integer
  const float half = y * 0.5f;
  const bool y_odd = y_int & (floor(half) != half);
  const bool x_finite_nz = (ax > 0.0f) & (ax < INFINITY);
  const bool y_finite = ay < INFINITY;
  // The general case on sanitized operands (other lanes take a special value below).
  const double a = static_cast<double>(select(x_finite_nz, ax, 1.0f));
  const double yd = static_cast<double>(select(y_finite, y, 0.0f));
  double t = yd * log2_pos(a);
  t = select_d(t > 130.0, 130.0, t);
  t = select_d(t < -160.0, -160.0, t);
  float mag = static_cast<float>(exp2_mid(t));
  // A zero or infinite base: 0 or inf by the exponent's sign.
  const bool big_base = ax == INFINITY;
  mag = select((ax == 0.0f) | big_base, select((y > 0.0f) == big_base, INFINITY, 0.0f), mag);
  // The sign of a negative base (-0 included) to an odd integer power.
  const bool neg = (float_to_bits(x) >> 31) & y_odd;
  float r = select(neg, -mag, mag);
  // An infinite exponent: 1 at |x| == 1, else 0 or inf by |x| < 1 against the exponent's sign.
  r = select(ay == INFINITY,
             select(ax == 1.0f, 1.0f, select((ax < 1.0f) == (y < 0.0f), INFINITY, 0.0f)), r);
  // A negative finite base to a finite non-integer power.
  r = select(x_finite_nz & (x < 0.0f) & !y_int, NAN, r);
  r = select((x != x) | (y != y), NAN, r);
  r = select((y == 0.0f) | (x == 1.0f), 1.0f, r);
  return r;
}

#undef TESSERA_VMATH_INLINE

}  // namespace tessera::kernels::vmath
