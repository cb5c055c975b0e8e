// jax.random's distributions built on gamma, rejection loops and linear algebra (JAX's
// jax/_src/random.py algorithms, step by step: the same key splits in the same order, the same
// uniform/normal/exponential draws and the same float operations; src/api/random_dists.cpp,
// random_discrete.cpp). Included from tessera/random.h.
//
//   Array key = tessera::random::key(0);
//   Array g = tessera::random::gamma(key, tnp::array({0.5, 2.0}));       // f32[2]
//   Array k = tessera::random::poisson(key, 3.0, Shape{4});                // i32[4]
//
// Conventions (as random.h): a single key (typed key<fry>[] or raw uint32[2]; raw keys are
// wrapped), `shape` nullopt = the parameters' broadcast shape, otherwise the parameters must
// broadcast to exactly `shape` (JAX's ValueError), `dtype` nullopt = float32 (float64 with x64)
// or int32 (int64) for the integer-valued ones; a non-float (non-int) dtype raises JAX's
// ValueError. Parameters are converted to `dtype` before use (C++ scalars are weak).
//
// Bits: samples that use only uniform/bits/split and correctly rounded arithmetic are JAX's
// bit for bit (triangular); the others follow JAX's algorithm and key use exactly but go
// through normal (within an ulp or two of JAX's), Tessera's log/exp/pow/lgamma kernels or a
// rejection test that can flip on a last-bit difference, so they equal JAX's in distribution.
#pragma once

#include <optional>
#include <string>

#include "tessera/array.h"
#include "tessera/numpy.h"

namespace tessera::random {

using numpy::ArrayLike;

// ---- gamma and what builds on it ----
// Standard Gamma(a) (density x^(a-1) e^-x / Gamma(a)): Marsaglia-Tsang with JAX's boost for
// a < 1 (Gamma(a + 1) * U^(1/a)); one key per element (split(key, prod(shape))) and one
// rejection while_loop per element under vmap. Differentiable in `a`: the implicit
// reparameterization gradient (lax::random_gamma_grad) through a custom JVP.
Array gamma(const Array& key, const ArrayLike& a, std::optional<Shape> shape = std::nullopt,
            std::optional<DType> dtype = std::nullopt);
// log of Gamma(a) samples, accurate for small a (the boost applied in log space).
Array loggamma(const Array& key, const ArrayLike& a, std::optional<Shape> shape = std::nullopt,
               std::optional<DType> dtype = std::nullopt);
// Beta(a, b) from two loggamma draws (keys split(key)), scaled by the larger log.
Array beta(const Array& key, const ArrayLike& a, const ArrayLike& b,
           std::optional<Shape> shape = std::nullopt, std::optional<DType> dtype = std::nullopt);
// alpha has shape (..., n); the result shape + (n,) (shape defaults to alpha.shape[:-1]).
Array dirichlet(const Array& key, const ArrayLike& alpha, std::optional<Shape> shape = std::nullopt,
                std::optional<DType> dtype = std::nullopt);
// 2 * exp(loggamma(df / 2)).
Array chisquare(const Array& key, const ArrayLike& df, std::optional<Shape> shape = std::nullopt,
                std::optional<DType> dtype = std::nullopt);
// Student's t: normal * sqrt((df/2) / gamma(df/2)). As JAX, shape defaults to ().
Array t(const Array& key, const ArrayLike& df, const Shape& shape = {},
        std::optional<DType> dtype = std::nullopt);
// F(dfnum, dfden): ratio of scaled chisquares (keys split(key): denominator's first).
Array f(const Array& key, const ArrayLike& dfnum, const ArrayLike& dfden,
        std::optional<Shape> shape = std::nullopt, std::optional<DType> dtype = std::nullopt);
// Density proportional to exp(-|x|^p): rademacher * gamma(1/p)^(1/p). p is a scalar (JAX's
// `p: float`; a C++ int is a weak int, as a Python int).
Array generalized_normal(const Array& key, const ArrayLike& p, const Shape& shape = {},
                         std::optional<DType> dtype = std::nullopt);
// Uniform in the unit Lp ball of dimension d, shape shape + (d,).
Array ball(const Array& key, int64_t d, const ArrayLike& p = 2, const Shape& shape = {},
           std::optional<DType> dtype = std::nullopt);

// ---- counts ----
// Poisson(lam) (lam computed in float32, as JAX): Knuth's method for lam < 10, Hormann's
// transformed rejection otherwise; lam == 0 gives 0. Integer dtype (default int32).
Array poisson(const Array& key, const ArrayLike& lam, std::optional<Shape> shape = std::nullopt,
              std::optional<DType> dtype = std::nullopt);
// Binomial(n, p) counts as floats (JAX's dtype): inversion for n min(p, 1-p) <= 10, BTRS
// otherwise; NaN for invalid p or n, inf for infinite n.
Array binomial(const Array& key, const ArrayLike& n, const ArrayLike& p,
               std::optional<Shape> shape = std::nullopt,
               std::optional<DType> dtype = std::nullopt);
// Trials up to the first success: floor(log(u) / log1p(-p)) + 1, integer dtype.
Array geometric(const Array& key, const ArrayLike& p, std::optional<Shape> shape = std::nullopt,
                std::optional<DType> dtype = std::nullopt);

// ---- closed forms ----
Array lognormal(const Array& key, const ArrayLike& sigma = 1.0,
                std::optional<Shape> shape = std::nullopt,
                std::optional<DType> dtype = std::nullopt);
Array pareto(const Array& key, const ArrayLike& b, std::optional<Shape> shape = std::nullopt,
             std::optional<DType> dtype = std::nullopt);
Array maxwell(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);
// sign * maxwell * scale + loc; the result shape is shape + broadcast(loc, scale).shape, an
// empty `shape` first replaced by the parameters' shape (JAX's rule).
Array double_sided_maxwell(const Array& key, const ArrayLike& loc, const ArrayLike& scale,
                           const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);
Array triangular(const Array& key, const ArrayLike& left, const ArrayLike& mode,
                 const ArrayLike& right, std::optional<Shape> shape = std::nullopt,
                 std::optional<DType> dtype = std::nullopt);
// The inverse Gaussian with unit shape parameter (Michael, Schucany and Haas).
Array wald(const Array& key, const ArrayLike& mean, std::optional<Shape> shape = std::nullopt,
           std::optional<DType> dtype = std::nullopt);

// ---- linear algebra ----
// mean + A z, A A^T = cov: method "cholesky" (the factor), "eigh" (V sqrt(W)) or "svd"
// (U sqrt(S)). dtype nullopt: mean's float dtype, else the default float.
Array multivariate_normal(const Array& key, const ArrayLike& mean, const ArrayLike& cov,
                          std::optional<Shape> shape = std::nullopt,
                          std::optional<DType> dtype = std::nullopt,
                          const std::string& method = "cholesky");
// Haar-distributed orthogonal matrices of shape shape + (n, n): the sign-corrected Q of a
// standard normal matrix's QR. m (semi-orthogonal n x m) must be absent or equal n.
Array orthogonal(const Array& key, int64_t n, const Shape& shape = {},
                 std::optional<DType> dtype = std::nullopt,
                 std::optional<int64_t> m = std::nullopt);

}  // namespace tessera::random
