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

}  // namespace tessera::scipy::special
