// Vectorizable float32 erf and erf_inv for the eager kernels of special.cpp (float32 and, through
// float32, the 16-bit floats), in vec_math.h's style: branch-free scalar code that g++
// auto-vectorizes, explicit fmas, selects as bit blends. compiler/math_expand.cpp writes the same
// operations as kernel-IR expansions (expand_erf_f32, expand_erf_inv_f32), so a fused kernel
// computes these bits; tests/cpp/test_math_expand.cpp checks that bit for bit.
//
// erf: |x| < 1: erf = x + x * R(x^2) (erf(x)/x - 1 is small, so the last fma rounds once on a
// value dominated by x); 1 <= |x| < 4: erf = 1 - e^(-x^2) * Q(1/x), Q ~ erfc(x) e^(x^2) (smooth
// and slowly varying); |x| is clamped to 4, where erf rounds to 1. R and Q are our own
// least-squares fits on Chebyshev nodes (degree 6 in x^2, 9 in 1/x; truncation 1e-9 and 2e-8
// relative). Within 1.5 ulp of float64 erf over all of float32 (test_special.cpp's sweep).
//
// erf_inv: the single-precision approximation of M. Giles, "Approximating the erfinv function"
// (GPU Computing Gems, 2011), in the form XLA evaluates it for jax.lax.erf_inv at float32:
// w = -log1p(-x*x); w < 5: p(w - 2.5), else p(sqrt(w) - 3), each a degree-8 polynomial evaluated
// as c + p*w with separate multiply and add (XLA's CPU code does not contract them), result p*x;
// +-inf at x = +-1, NaN beyond. With our log1p instead of XLA's the results can differ from
// jax's in the last bits (test_random.cpp bounds and reports the distance). A few ulp from float64
// erf_inv.
#pragma once

#include <cmath>

#include "prims/vec_math.h"
#include "prims/vec_math_extra.h"

namespace tessera::kernels::vmath {

inline float erf(float x) {
  const float a = select(std::fabs(x) < 4.0f, std::fabs(x), 4.0f);  // NaN -> 4, restored below
  const float t = a * a;
  float r = 7.84726144e-05f;
  r = std::fma(r, t, -0.000800819194f);
  r = std::fma(r, t, 0.00518809957f);
  r = std::fma(r, t, -0.0268536918f);
  r = std::fma(r, t, 0.112835824f);
  r = std::fma(r, t, -0.37612626f);
  r = std::fma(r, t, 0.128379166f);
  const float small = std::fma(a, r, a);
  const float s = 1.0f / a;
  float q = 0.0320644677f;
  q = std::fma(q, s, -0.187188193f);
  q = std::fma(q, s, 0.456198782f);
  q = std::fma(q, s, -0.561485052f);
  q = std::fma(q, s, 0.259312123f);
  q = std::fma(q, s, 0.21877262f);
  q = std::fma(q, s, -0.371695876f);
  q = std::fma(q, s, 0.0196043495f);
  q = std::fma(q, s, 0.561885655f);
  q = std::fma(q, s, 0.000114671398f);
  const float large = 1.0f - exp(-t) * q;
  const float y = select(a < 1.0f, small, large);
  return select(x != x, x, std::copysign(y, x));
}

inline float erf_inv(float x) {
  const float w0 = -log1p(-x * x);
  const bool lt = w0 < 5.0f;
  const float w = select(lt, w0 - 2.5f, std::sqrt(w0) - 3.0f);
  float p = select(lt, 2.81022636e-08f, -0.000200214257f);
  p = select(lt, 3.43273939e-07f, 0.000100950558f) + p * w;
  p = select(lt, -3.5233877e-06f, 0.00134934322f) + p * w;
  p = select(lt, -4.39150654e-06f, -0.00367342844f) + p * w;
  p = select(lt, 0.00021858087f, 0.00573950773f) + p * w;
  p = select(lt, -0.00125372503f, -0.0076224613f) + p * w;
  p = select(lt, -0.00417768164f, 0.00943887047f) + p * w;
  p = select(lt, 0.246640727f, 1.00167406f) + p * w;
  p = select(lt, 1.50140941f, 2.83297682f) + p * w;
  const float y = p * x;
  return select(std::fabs(x) == 1.0f, x * INFINITY, y);
}

}  // namespace tessera::kernels::vmath
