// tessera::scipy::special — jax.scipy.special (src/api/scipy_special*.cpp): composites of the
// lax primitives (lgamma, digamma, igamma, betainc, erf, erf_inv, bessel_i0e, ...) and jnp ops,
// so jit, vmap and grad work through them. tessera.scipy.special (Python) calls these.
//
//   namespace sps = tessera::scipy::special;
//   Array h = sps::xlogy(p, q);                          // 0 where p == 0, even at q == 0
//   Array l = sps::log_ndtr(x);                          // accurate far into both tails
//   Array s = sps::logsumexp(a, {.axis = 1, .b = w});    // jax.nn's options struct
//
// Arguments are promoted as JAX's promote_args_inexact: bool and integers become the default
// float (float32; float64 under x64), floats keep their dtype, C++ scalars are weak. ndtr, ndtri
// and log_ndtr take float32 or float64 only (TypeError otherwise), as JAX's.
//
// Custom derivatives are JAX's (custom_jvp, tessera/custom_derivatives.h): xlogy, xlog1py and
// the x log x inside entr / rel_entr (finite at x = 0), logit (1 / (x (1 - x))), log_ndtr
// (exp(log phi(x) - log_ndtr(x)), stable in the lower tail), and logsumexp / softmax through
// tessera::nn. Everything else differentiates through its composition.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "tessera/array.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/numpy_reductions.h"

namespace tessera::scipy::special {

using numpy::ArrayLike;
using numpy::AxisArg;

// ---- gamma and beta functions (src/api/scipy_special.cpp) ----
Array gammaln(const ArrayLike& x);   // log|Gamma(x)| (lax.lgamma)
Array gammasgn(const ArrayLike& x);  // sign of Gamma(x): ±1 at ±0, NaN at poles, -inf and NaN
Array gamma(const ArrayLike& x);     // gammasgn(x) exp(gammaln(x)): ±inf at ±0, NaN at poles
// log|B(a, b)|; arguments >= 8 go through Stirling's series so that large ones keep accuracy.
Array betaln(const ArrayLike& a, const ArrayLike& b);
Array beta(const ArrayLike& a, const ArrayLike& b);  // B(a, b) with its sign
// The regularized incomplete beta function I_x(a, b).
Array betainc(const ArrayLike& a, const ArrayLike& b, const ArrayLike& x);
Array gammainc(const ArrayLike& a, const ArrayLike& x);   // P(a, x) (lax.igamma)
Array gammaincc(const ArrayLike& a, const ArrayLike& x);  // Q(a, x) = 1 - P(a, x)
// n! = Gamma(n + 1) as a float, 0 for n < 0. exact = true raises NotImplementedError (as JAX).
Array factorial(const ArrayLike& n, bool exact = false);
Array poch(const ArrayLike& z, const ArrayLike& m);  // Gamma(z + m) / Gamma(z); 1 where m == 0
// log of the multivariate gamma function of dimension d:
// d (d - 1) / 4 log(pi) + sum_{j < d} gammaln(a - j / 2) (no terms for d <= 0).
Array multigammaln(const ArrayLike& a, int64_t d);
Array digamma(const ArrayLike& x);  // psi(x)
// The n-th derivative of digamma; n must have an integer dtype (TypeError otherwise, as JAX).
Array polygamma(const ArrayLike& n, const ArrayLike& x);
// The Hurwitz zeta function sum_k (k + q)^-x (JAX has no Riemann zeta: q is required).
Array zeta(const ArrayLike& x, const ArrayLike& q);

// ---- error function and the normal distribution ----
Array erf(const ArrayLike& x);
Array erfc(const ArrayLike& x);
Array erfinv(const ArrayLike& x);
Array ndtr(const ArrayLike& x);   // standard normal CDF; float32/float64 only
Array ndtri(const ArrayLike& p);  // its inverse (Cephes' rational approximations); -inf/inf at 0/1
// log(ndtr(x)), accurate in both tails: the asymptotic series of series_order terms below -10
// (float32) / -20 (float64). series_order must be in [0, 30] (ValueError otherwise).
Array log_ndtr(const ArrayLike& x, int series_order = 3);

// ---- modified Bessel functions ----
Array i0(const ArrayLike& x);   // I0(x) = exp(|x|) i0e(x)
Array i0e(const ArrayLike& x);  // exp(-|x|) I0(x)
Array i1(const ArrayLike& x);
Array i1e(const ArrayLike& x);

// ---- logistic functions and normalizers ----
Array logit(const ArrayLike& x);  // log(x / (1 - x)); custom JVP 1 / (x (1 - x))
Array expit(const ArrayLike& x);  // 1 / (1 + e^-x)
// jax.scipy.special.logsumexp: axis / b / keepdims / where in the options struct (jax.nn's);
// return_sign=True is logsumexp_with_sign.
using LogsumexpOptions = nn::LogsumexpOptions;
Array logsumexp(const ArrayLike& a, const LogsumexpOptions& o = {});
std::pair<Array, Array> logsumexp_with_sign(const ArrayLike& a, const LogsumexpOptions& o = {});
// SciPy's defaults: every axis when axis is none.
Array softmax(const ArrayLike& x, const AxisArg& axis = {});
Array log_softmax(const ArrayLike& x, const AxisArg& axis = {});

// ---- information theory ----
Array xlogy(const ArrayLike& x, const ArrayLike& y);     // x log y, 0 where x == 0
Array xlog1py(const ArrayLike& x, const ArrayLike& y);   // x log1p y, 0 where x == 0
Array entr(const ArrayLike& x);                          // -x log x; 0 at 0; -inf for x < 0
Array rel_entr(const ArrayLike& p, const ArrayLike& q);  // p log(p / q); 0 at p == 0; else inf
Array kl_div(const ArrayLike& p, const ArrayLike& q);    // rel_entr(p, q) - p + q

// ---- Bernoulli numbers ----
// B_0 .. B_n (B_1 = -1/2) as a host array of the default float dtype; +-inf where |B_k|
// exceeds the double range (k >= 260). ValueError for n < 0.
Array bernoulli(int64_t n);

// ---- exponential integrals and Spence's function (src/api/scipy_special_expint.cpp) ----
// E1(x) = int_1^inf e^(-x t) / t dt for x > 0; inf at 0, NaN for x < 0. d/dx: -e^-x / x.
Array exp1(const ArrayLike& x);
// Ei(x) = -PV int_{-x}^inf e^-t / t dt (-E1(-x) for x < 0); -inf at 0. d/dx: e^x / x.
Array expi(const ArrayLike& x);
// E_n(x) = int_1^inf e^(-x t) / t^n dt for integer n >= 0, x >= 0 (NaN otherwise).
// d/dx: -E_{n-1}(x); n is not differentiated.
Array expn(const ArrayLike& n, const ArrayLike& x);
// Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN for x < 0).
Array spence(const ArrayLike& x);

// ---- hypergeometric functions (src/api/scipy_special_hyp.cpp) ----
// Kummer's 1F1(a; b; x), JAX's conventions: 1 for a = 0, e^x for a = b, inf for b = 0.
// Differentiable in a, b and x.
Array hyp1f1(const ArrayLike& a, const ArrayLike& b, const ArrayLike& x);
// Gauss's 2F1(a, b; c; x) for real x <= 1 (inf for x > 1 and at the poles of c; Gauss's sum at
// x = 1). Differentiable in x (the tangents of a, b and c are ignored, as JAX's).
Array hyp2f1(const ArrayLike& a, const ArrayLike& b, const ArrayLike& c, const ArrayLike& x);

// ---- Legendre functions and Fresnel integrals (src/api/scipy_special_legendre.cpp) ----
// P_l^k(z) for k <= m, l <= n as an (m+1, n+1, len(z)) array (0 for k > l; SciPy's
// Condon-Shortley phase); is_normalized: sqrt((2l+1)/(4 pi) (l-k)!/(l+k)!) P_l^k. z is a 1-D
// float32/float64 array (TypeError / ValueError otherwise); ValueError when n < m.
Array lpmn_values(int64_t m, int64_t n, const ArrayLike& z, bool is_normalized);
// (P, dP/dz), each (m+1, n+1, len(z)), for |z| < 1.
std::pair<Array, Array> lpmn(int64_t m, int64_t n, const ArrayLike& z);
// (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt; d/dx: (sin, cos)(pi x^2 / 2).
std::pair<Array, Array> fresnel(const ArrayLike& x);
// jax.scipy.special's spherical harmonics return complex64/complex128 values, which Tessera
// does not have: both raise NotImplementedError naming the missing dtypes.
Array sph_harm(const ArrayLike& m, const ArrayLike& n, const ArrayLike& theta, const ArrayLike& phi,
               std::optional<int64_t> n_max = std::nullopt);
Array sph_harm_y(const ArrayLike& n, const ArrayLike& m, const ArrayLike& theta,
                 const ArrayLike& phi, int diff_n = 0, std::optional<int64_t> n_max = std::nullopt);

}  // namespace tessera::scipy::special
