// Vectorizable float32 math for the eager kernels (exp, log, tanh, logistic, sin, cos, sqrt)
// and block conversions between 16-bit floats and float32.
//
// Each function is branch-free scalar code (fma, bit casts, selects) that g++ auto-vectorizes
// when called in a simple loop over raw pointers; std::expf/tanhf per element do not. Accuracy
// (checked by a dense sweep in tests/cpp/test_elementwise.cpp): within 2 ulp for exp and log,
// within 4 ulp for tanh, logistic, sin and cos, with IEEE results at +-0, +-inf and NaN. Polynomial
// coefficients are our own weighted least-squares (Lawson) fits over the reduced ranges. Every
// product that feeds a sum is an explicit std::fma: g++ contracts a*b+c in C++ wherever the
// target has fma, and explicit fmas keep the results bitwise equal across builds and clones.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#ifdef __AVX__
#include <immintrin.h>
#endif

#include "prims/kernel_util.h"

// Marks the float32 array loops of the elementwise kernels, which are compute-bound: they are
// also compiled for x86-64-v4 (AVX-512) and picked at load time where the CPU has it (about 2x
// on Zen 4); x86-64-v3 stays the floor. Both clones compute the same IEEE operations (explicit
// fma, no contraction): same bits.
#if defined(__x86_64__) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#define TESSERA_AVX512_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define TESSERA_AVX512_CLONES
#endif

namespace tessera::kernels::vmath {

inline float bits_to_float(uint32_t u) { return std::bit_cast<float>(u); }
inline uint32_t float_to_bits(float f) { return std::bit_cast<uint32_t>(f); }
// c ? a : b as a bitwise blend. A plain ?: lets g++ sink the computation of a or b into a
// branch, which it then cannot if-convert (floating ops may trap), and the loop stays scalar.
inline float select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return bits_to_float((float_to_bits(a) & m) | (float_to_bits(b) & ~m));
}

// e^x. x = n*ln2 + r with |r| <= ln2/2; e^r = 1 + r + r^2*Q(r); the result is scaled by 2^n in
// two steps so that subnormal results round once.
inline float exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // 16 significant bits: n*kLn2Hi is exact
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  constexpr float kShift = 12582912.0f;  // 1.5*2^23: adding it rounds to an integer
  float xc = select(x > 88.8f, 88.8f, x);
  xc = select(xc < -104.0f, -104.0f, xc);
  const float t = std::fma(xc, kLog2e, kShift);
  const int32_t n = static_cast<int32_t>(float_to_bits(t) - float_to_bits(kShift));
  const float nf = t - kShift;
  float r = std::fma(-nf, kLn2Hi, xc);
  r = std::fma(-nf, kLn2Lo, r);
  float q = 0.0013813135f;
  q = std::fma(q, r, 0.00836942f);
  q = std::fma(q, r, 0.041668456f);
  q = std::fma(q, r, 0.16666515f);
  q = std::fma(q, r, 0.49999994f);
  const float p = std::fma(q, r * r, r) + 1.0f;
  const int32_t n1 = n >> 1;  // n in [-150, 128]: both halves are normal powers of two
  const int32_t n2 = n - n1;
  const float s1 = bits_to_float(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = bits_to_float(static_cast<uint32_t>(n2 + 127) << 23);
  const float y = p * s1 * s2;
  return select(x != x, x, y);
}

// log(x). x = 2^e * m with m in [sqrt(1/2), sqrt(2)); f = m - 1, s = f/(2+f),
// log(m) = f - s*(f - R(s^2)) (the atanh series), then + e*ln2 in two parts.
inline float log(float x) {
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  const bool sub = x < 1.17549435e-38f;             // subnormal (or <= 0, handled at the end)
  const float xs = select(sub, x * 8388608.0f, x);  // * 2^23
  const uint32_t u = float_to_bits(xs);
  // Shift the mantissa range so that m lands in [sqrt(1/2), sqrt(2)).
  const uint32_t v = u + (0x3f800000u - 0x3f3504f3u);
  const int32_t e = static_cast<int32_t>(v >> 23) - 127 - (sub ? 23 : 0);
  const float m = bits_to_float((v & 0x007fffffu) + 0x3f3504f3u);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float rz = 0.23596343f;
  rz = std::fma(rz, z, 0.28536603f);
  rz = std::fma(rz, z, 0.40000346f);
  rz = std::fma(rz, z, 0.6666666f);
  // lm = f - s*(f - rz*z), with explicit fmas (g++ contracts C++ expressions where the target
  // has fma, so written-out products would round differently on different builds).
  const float lm = std::fma(-s, std::fma(-rz, z, f), f);
  const float ef = static_cast<float>(e);
  const float y = std::fma(ef, kLn2Hi, std::fma(ef, kLn2Lo, lm));
  float out = select(x == 0.0f, -INFINITY, y);
  out = select(x < 0.0f, NAN, out);
  out = select(x == INFINITY, INFINITY, out);
  return select(x != x, x, out);
}

// tanh(x): an odd polynomial for |x| < 0.625, (1 - t)/(1 + t) with t = e^(-2|x|) above.
inline float tanh(float x) {
  const float a = std::fabs(x);
  const float z = a * a;
  float p = -0.005693484f;
  p = std::fma(p, z, 0.020630376f);
  p = std::fma(p, z, -0.053737603f);
  p = std::fma(p, z, 0.13331425f);
  p = std::fma(p, z, -0.3333328f);
  const float small = std::fma(p * z, a, a);
  const float t = exp(-2.0f * a);
  const float large = (1.0f - t) / (1.0f + t);
  const float y = select(a < 0.625f, small, large);
  return select(x != x, x, std::copysign(y, x));
}

// 1/(1+e^-x) without overflow: with t = e^-|x|, 1/(1+t) for x >= 0 and t/(1+t) below.
inline float logistic(float x) {
  const float t = exp(-std::fabs(x));
  const float y = select(x >= 0.0f, 1.0f, t) / (1.0f + t);
  return select(x != x, x, y);
}

// sin (kCos false) or cos of x for |x| <= kTrigMax: x = n*pi/2 + r with |r| <= pi/4 (pi/2 in
// three parts; with fma the first step is exact), odd/even polynomials for sin r and cos r,
// and the quadrant n mod 4 picks one and its sign.
inline constexpr float kTrigMax = 131072.0f;
template <bool kCos>
inline float sincos_reduced(float x) {
  constexpr float k2OverPi = 0.636619772367581343f;
  constexpr float kShift = 12582912.0f;
  constexpr float kPio2a = 1.570796371e+00f;
  constexpr float kPio2b = -4.371138829e-08f;
  constexpr float kPio2c = -1.715124510e-15f;
  const float xc = select(std::fabs(x) <= kTrigMax, x, 0.0f);  // the caller redoes the others
  const float t = std::fma(xc, k2OverPi, kShift);
  const uint32_t q = float_to_bits(t) - float_to_bits(kShift);  // n mod 2^32
  const float nf = t - kShift;
  float r = std::fma(-nf, kPio2a, xc);
  r = std::fma(-nf, kPio2b, r);
  r = std::fma(-nf, kPio2c, r);
  const float z = r * r;
  float ps = 2.716809831e-06f;
  ps = std::fma(ps, z, -1.983917609e-04f);
  ps = std::fma(ps, z, 8.333329111e-03f);
  ps = std::fma(ps, z, -1.666666716e-01f);
  const float sn = std::fma(ps * z, r, r);
  float pc = -2.719629890e-07f;
  pc = std::fma(pc, z, 2.479935029e-05f);
  pc = std::fma(pc, z, -1.388888340e-03f);
  pc = std::fma(pc, z, 4.166666791e-02f);
  const float cs = std::fma(pc * z, z, std::fma(-0.5f, z, 1.0f));
  const uint32_t k = kCos ? q + 1 : q;
  const float v = select((k & 1u) != 0, cs, sn);
  const float y = bits_to_float(float_to_bits(v) ^ ((k & 2u) << 30));
  return kCos ? y : select(x == 0.0f, x, y);  // sin(-0) == -0 (the reduction loses the sign)
}
// sin/cos over n floats: the vectorized pass, then libm for |x| > kTrigMax, inf and NaN.
template <bool kCos>
inline void sincos_n(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sincos_reduced<kCos>(x[i]);
  for (int64_t i = 0; i < n; ++i) {
    if (!(std::fabs(x[i]) <= kTrigMax)) y[i] = kCos ? std::cos(x[i]) : std::sin(x[i]);
  }
}

// sqrt over n floats/doubles. std::sqrt does not vectorize under -fmath-errno (g++ keeps a
// libm call for negative inputs), so use the instruction directly where we have it.
inline void sqrt_n(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef __AVX__
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x[i])));
#endif
  for (; i < n; ++i) y[i] = std::sqrt(x[i]);
}
inline void sqrt_n(const double* x, double* y, int64_t n) {
  int64_t i = 0;
#ifdef __AVX__
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _mm256_sqrt_pd(_mm256_loadu_pd(x + i)));
#endif
  for (; i < n; ++i) y[i] = std::sqrt(x[i]);
}

// ---- 16-bit floats <-> float32 over blocks (the same rounding as kernel_util's load/store:
// round to nearest even, NaNs kept quiet). ----
inline void to_float_n(const float16_t* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= n; i += 8) {
    __m128i h;
    std::memcpy(&h, x + i, sizeof(h));
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) y[i] = load(x[i]);
}
inline void from_float_n(const float* x, float16_t* y, int64_t n) {
  int64_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    std::memcpy(y + i, &h, sizeof(h));
  }
#endif
  for (; i < n; ++i) y[i] = store<float16_t>(x[i]);
}
inline void to_float_n(const bfloat16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = bits_to_float(static_cast<uint32_t>(x[i].bits) << 16);
}
inline void from_float_n(const float* x, bfloat16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = float_to_bits(x[i]);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t nan = (u >> 16) | 0x0040u;
    y[i].bits = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

}  // namespace tessera::kernels::vmath
