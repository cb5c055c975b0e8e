// tessera::scipy::stats — jax.scipy.stats: one nested namespace per distribution, with the
// functions JAX has for it (src/api/scipy_stats_continuous.cpp, scipy_stats_discrete.cpp,
// scipy_stats_multivariate.cpp), plus mode, rankdata, sem and the gaussian_kde kernels
// (src/api/scipy_stats_summary.cpp).
//
//   namespace st = tessera::scipy::stats;
//   Array lp = st::norm::logpdf(x);                 // loc = 0, scale = 1
//   Array c = st::gamma::cdf(x, 2.5, 0.0, 3.0);     // x, a, loc, scale
//   Array p = st::poisson::pmf(k, mu);
//
// Every function is a composition of jnp/lax ops and tessera::scipy::special functions, as
// JAX's jax/_src/scipy/stats modules are, so jit, vmap and grad work through it. Arguments are
// promoted as JAX's promote_args_inexact (integers and bool become the default float; C++
// scalars are weakly typed, so `loc = 0` keeps x's float dtype) and broadcast with NumPy's rule.
// Values outside the support are JAX's: -inf log-density/log-mass, 0 density/mass, and NaN
// exactly where JAX gives NaN (e.g. beta with a, b or scale <= 0, ppf with q outside [0, 1]).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy.h"
#include "tessera/numpy_reductions.h"

namespace tessera::scipy::stats {

using numpy::ArrayLike;

// The continuous location-scale families: f(x, loc = 0, scale = 1).
#define TESSERA_STATS_LOC_SCALE(fn) \
  Array fn(const ArrayLike& x, const ArrayLike& loc = 0, const ArrayLike& scale = 1)

namespace norm {
TESSERA_STATS_LOC_SCALE(logpdf);
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(cdf);     // ndtr(z)
TESSERA_STATS_LOC_SCALE(logcdf);  // log_ndtr(z)
TESSERA_STATS_LOC_SCALE(sf);      // ndtr(-z): the upper tail keeps its precision
TESSERA_STATS_LOC_SCALE(logsf);
TESSERA_STATS_LOC_SCALE(ppf);  // q -> loc + scale ndtri(q)
TESSERA_STATS_LOC_SCALE(isf);  // q -> loc - scale ndtri(q)
}  // namespace norm

namespace logistic {
TESSERA_STATS_LOC_SCALE(logpdf);
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(cdf);  // expit(z)
TESSERA_STATS_LOC_SCALE(logcdf);
TESSERA_STATS_LOC_SCALE(sf);
TESSERA_STATS_LOC_SCALE(logsf);
TESSERA_STATS_LOC_SCALE(ppf);  // loc + scale logit(q)
TESSERA_STATS_LOC_SCALE(isf);
}  // namespace logistic

namespace cauchy {
TESSERA_STATS_LOC_SCALE(logpdf);
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(cdf);
TESSERA_STATS_LOC_SCALE(logcdf);
TESSERA_STATS_LOC_SCALE(sf);
TESSERA_STATS_LOC_SCALE(logsf);
TESSERA_STATS_LOC_SCALE(ppf);
TESSERA_STATS_LOC_SCALE(isf);
}  // namespace cauchy

namespace expon {
TESSERA_STATS_LOC_SCALE(logpdf);  // -inf below loc
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(cdf);
TESSERA_STATS_LOC_SCALE(logcdf);
TESSERA_STATS_LOC_SCALE(sf);
TESSERA_STATS_LOC_SCALE(logsf);
TESSERA_STATS_LOC_SCALE(ppf);  // NaN outside [0, 1]
}  // namespace expon

namespace laplace {
TESSERA_STATS_LOC_SCALE(logpdf);
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(cdf);
}  // namespace laplace

namespace uniform {
TESSERA_STATS_LOC_SCALE(logpdf);  // -log(scale) on [loc, loc + scale], -inf outside
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(cdf);  // NaN for NaN x
TESSERA_STATS_LOC_SCALE(ppf);  // NaN outside [0, 1]
}  // namespace uniform

namespace gumbel_l {
TESSERA_STATS_LOC_SCALE(logpdf);
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(logcdf);
TESSERA_STATS_LOC_SCALE(cdf);
TESSERA_STATS_LOC_SCALE(logsf);
TESSERA_STATS_LOC_SCALE(sf);
TESSERA_STATS_LOC_SCALE(ppf);  // NaN outside [0, 1]
}  // namespace gumbel_l

namespace gumbel_r {
TESSERA_STATS_LOC_SCALE(logpdf);
TESSERA_STATS_LOC_SCALE(pdf);
TESSERA_STATS_LOC_SCALE(logcdf);
TESSERA_STATS_LOC_SCALE(cdf);
TESSERA_STATS_LOC_SCALE(logsf);
TESSERA_STATS_LOC_SCALE(sf);
TESSERA_STATS_LOC_SCALE(ppf);  // NaN outside [0, 1]
}  // namespace gumbel_r

#undef TESSERA_STATS_LOC_SCALE

// Families with one shape parameter: f(x, shape, loc = 0, scale = 1).
#define TESSERA_STATS_SHAPE1(fn, s)                                          \
  Array fn(const ArrayLike& x, const ArrayLike& s, const ArrayLike& loc = 0, \
           const ArrayLike& scale = 1)

namespace gamma {
TESSERA_STATS_SHAPE1(logpdf, a);  // -inf below loc
TESSERA_STATS_SHAPE1(pdf, a);
TESSERA_STATS_SHAPE1(cdf, a);  // gammainc(a, max(y, 0))
TESSERA_STATS_SHAPE1(logcdf, a);
TESSERA_STATS_SHAPE1(sf, a);  // gammaincc(a, max(y, 0))
TESSERA_STATS_SHAPE1(logsf, a);
}  // namespace gamma

namespace chi2 {
TESSERA_STATS_SHAPE1(logpdf, df);  // -inf below loc
TESSERA_STATS_SHAPE1(pdf, df);
TESSERA_STATS_SHAPE1(cdf, df);
TESSERA_STATS_SHAPE1(logcdf, df);
TESSERA_STATS_SHAPE1(sf, df);
TESSERA_STATS_SHAPE1(logsf, df);
}  // namespace chi2

namespace t {
TESSERA_STATS_SHAPE1(logpdf, df);
TESSERA_STATS_SHAPE1(pdf, df);
}  // namespace t

namespace pareto {
TESSERA_STATS_SHAPE1(logpdf, b);  // -inf below loc + scale
TESSERA_STATS_SHAPE1(pdf, b);
TESSERA_STATS_SHAPE1(logcdf, b);
TESSERA_STATS_SHAPE1(cdf, b);
TESSERA_STATS_SHAPE1(logsf, b);
TESSERA_STATS_SHAPE1(sf, b);
TESSERA_STATS_SHAPE1(ppf, b);  // NaN outside [0, 1]
}  // namespace pareto

#undef TESSERA_STATS_SHAPE1

// Families with two shape parameters: f(x, a, b, loc = 0, scale = 1).
#define TESSERA_STATS_SHAPE2(fn)                                                                 \
  Array fn(const ArrayLike& x, const ArrayLike& a, const ArrayLike& b, const ArrayLike& loc = 0, \
           const ArrayLike& scale = 1)

namespace beta {
TESSERA_STATS_SHAPE2(logpdf);  // -inf outside [loc, loc + scale]; NaN for a, b, scale <= 0
TESSERA_STATS_SHAPE2(pdf);
TESSERA_STATS_SHAPE2(cdf);  // betainc(a, b, clip(y, 0, 1))
TESSERA_STATS_SHAPE2(logcdf);
TESSERA_STATS_SHAPE2(sf);  // betainc(b, a, 1 - clip(y, 0, 1))
TESSERA_STATS_SHAPE2(logsf);
}  // namespace beta

// The normal distribution truncated to [a, b] (standardized bounds: the support is
// [loc + a scale, loc + b scale]).
namespace truncnorm {
TESSERA_STATS_SHAPE2(logpdf);  // -inf outside [a, b]
TESSERA_STATS_SHAPE2(pdf);
TESSERA_STATS_SHAPE2(logcdf);  // -inf below a, 0 above b
TESSERA_STATS_SHAPE2(cdf);
TESSERA_STATS_SHAPE2(logsf);
TESSERA_STATS_SHAPE2(sf);
}  // namespace truncnorm

#undef TESSERA_STATS_SHAPE2

// Standardized families without loc/scale.
namespace gennorm {
Array logpdf(const ArrayLike& x, const ArrayLike& beta);
Array pdf(const ArrayLike& x, const ArrayLike& beta);
Array cdf(const ArrayLike& x, const ArrayLike& beta);
}  // namespace gennorm

namespace vonmises {
Array logpdf(const ArrayLike& x, const ArrayLike& kappa);  // NaN for kappa <= 0
Array pdf(const ArrayLike& x, const ArrayLike& kappa);
}  // namespace vonmises

namespace wrapcauchy {
Array logpdf(const ArrayLike& x, const ArrayLike& c);  // -inf outside [0, 2 pi]; NaN unless 0<c<1
Array pdf(const ArrayLike& x, const ArrayLike& c);
}  // namespace wrapcauchy

// ---- discrete distributions (src/api/scipy_stats_discrete.cpp) ----

namespace bernoulli {
Array logpmf(const ArrayLike& k, const ArrayLike& p, const ArrayLike& loc = 0);
Array pmf(const ArrayLike& k, const ArrayLike& p, const ArrayLike& loc = 0);
Array cdf(const ArrayLike& k, const ArrayLike& p);  // NaN for NaN or p outside [0, 1]
Array ppf(const ArrayLike& q, const ArrayLike& p);  // NaN for q or p outside [0, 1]
}  // namespace bernoulli

namespace poisson {
Array logpmf(const ArrayLike& k, const ArrayLike& mu, const ArrayLike& loc = 0);
Array pmf(const ArrayLike& k, const ArrayLike& mu, const ArrayLike& loc = 0);
Array cdf(const ArrayLike& k, const ArrayLike& mu, const ArrayLike& loc = 0);
// The Shannon entropy -sum_k p(k) log p(k), JAX's regimes: the sum over k < ceil(mu + 20)
// (mu < 10) or k < ceil(mu + 10 sqrt(mu) + 20) (mu < 100), else 0.5 log(2 pi e mu) - 1/(12 mu);
// 0 at mu = 0, NaN for mu < 0. loc does not change it (it only broadcasts).
Array entropy(const ArrayLike& mu, const ArrayLike& loc = 0);
}  // namespace poisson

namespace geom {
Array logpmf(const ArrayLike& k, const ArrayLike& p, const ArrayLike& loc = 0);
Array pmf(const ArrayLike& k, const ArrayLike& p, const ArrayLike& loc = 0);
}  // namespace geom

namespace binom {
Array logpmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& p, const ArrayLike& loc = 0);
Array pmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& p, const ArrayLike& loc = 0);
}  // namespace binom

namespace nbinom {
Array logpmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& p, const ArrayLike& loc = 0);
Array pmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& p, const ArrayLike& loc = 0);
}  // namespace nbinom

namespace betabinom {
// -inf outside [loc, loc + n]; NaN for n < 0, a <= 0 or b <= 0.
Array logpmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& a, const ArrayLike& b,
             const ArrayLike& loc = 0);
Array pmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& a, const ArrayLike& b,
          const ArrayLike& loc = 0);
}  // namespace betabinom

// ---- multivariate distributions (src/api/scipy_stats_multivariate.cpp) ----

namespace multivariate_normal {
// log N(x; mean, cov). A rank-0 mean is a univariate normal with variance cov; a rank-0 cov
// with a vector mean is cov times the identity; otherwise cov [..., n, n] is factored
// (lax::linalg::cholesky) and x - mean solved against the factor. Batch dims broadcast.
// ValueError for a cov whose trailing dims are not (n, n).
Array logpdf(const ArrayLike& x, const ArrayLike& mean, const ArrayLike& cov);
Array pdf(const ArrayLike& x, const ArrayLike& mean, const ArrayLike& cov);
}  // namespace multivariate_normal

namespace dirichlet {
// x's first axis holds the K components (or K - 1, the last then being 1 - sum); further axes
// are a batch. alpha must be one-dimensional (ValueError otherwise). -inf off the simplex.
Array logpdf(const ArrayLike& x, const ArrayLike& alpha);
Array pdf(const ArrayLike& x, const ArrayLike& alpha);
}  // namespace dirichlet

namespace multinomial {
// x (counts on the last axis) and n must be integers (ValueError otherwise, as JAX); -inf
// where the counts do not sum to n.
Array logpmf(const ArrayLike& x, const ArrayLike& n, const ArrayLike& p);
Array pmf(const ArrayLike& x, const ArrayLike& n, const ArrayLike& p);
}  // namespace multinomial

// ---- summary statistics (src/api/scipy_stats_summary.cpp) ----

// (mode, count) along axis (none: flattened): the most frequent value (the smallest on ties,
// as SciPy) and its count (int32). A slice holding NaN has mode NaN. nan_policy "propagate"
// only (NotImplementedError for "omit"/"raise", ValueError for others, as JAX).
std::pair<Array, Array> mode(const ArrayLike& a, std::optional<int64_t> axis = 0,
                             const std::string& nan_policy = "propagate", bool keepdims = false);

// The 1-based ranks along axis (none: of the flattened array). method: "average" (float),
// "min", "max", "dense", "ordinal". ValueError for an unknown method.
Array rankdata(const ArrayLike& a, const std::string& method = "average",
               std::optional<int64_t> axis = std::nullopt,
               const std::string& nan_policy = "propagate");

// std(a, ddof) / sqrt(n) along axis (none: flattened); nan_policy "omit" ignores NaNs.
Array sem(const ArrayLike& a, std::optional<int64_t> axis = 0, int64_t ddof = 1,
          const std::string& nan_policy = "propagate", bool keepdims = false);

// ---- gaussian_kde (src/api/scipy_stats_summary.cpp) ----
// jax.scipy.stats.gaussian_kde's state: a kernel density estimate with a Gaussian kernel whose
// covariance is the (weighted) data covariance times factor^2. The fields are arrays, so the
// estimate is a pytree (Python's gaussian_kde class is a pytree over these fields).
struct GaussianKDE {
  Array dataset;     // (d, n)
  Array weights;     // (n,), summing to 1
  Array neff;        // 1 / sum(weights^2)
  Array covariance;  // (d, d): data covariance * factor^2
  Array inv_cov;     // (d, d)

  // bw_method: "scott" (default), "silverman", or a factor. dataset (d, n) or (n,) with more
  // than one element; integer data become floating. weights (n,) are normalized.
  static GaussianKDE make(const ArrayLike& dataset,
                          const std::variant<std::string, double, Array>& bw_method = "scott",
                          const std::optional<ArrayLike>& weights = std::nullopt);
  int64_t d() const { return dataset.shape()[0]; }
  int64_t n() const { return dataset.shape()[1]; }
  Array factor() const;
  Array logpdf(const ArrayLike& points) const;    // the log density at points' columns (d, m)
  Array evaluate(const ArrayLike& points) const;  // exp(logpdf)
  Array integrate_gaussian(const ArrayLike& mean, const ArrayLike& cov) const;
  Array integrate_box_1d(const ArrayLike& low, const ArrayLike& high) const;  // d == 1 only
  Array integrate_kde(const GaussianKDE& other) const;
  // Samples (d, *shape): a data point chosen by weight plus kernel noise.
  Array resample(const Array& key, const Shape& shape = {}) const;
};

}  // namespace tessera::scipy::stats
