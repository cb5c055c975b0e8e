// jax.scipy.stats's discrete distributions (tessera/scipy_stats.h): bernoulli, poisson, geom,
// binom, nbinom, betabinom, each the composition its jax/_src/scipy/stats module uses, with
// JAX's -inf log-mass outside the support and NaN for invalid parameters where JAX has it.
#include <cmath>

#include "api/scipy_stats_internal.h"
#include "tessera/numpy.h"
#include "tessera/scipy_special.h"
#include "tessera/scipy_stats.h"

namespace tessera::scipy::stats {

namespace {
namespace tnp = tessera::numpy;
namespace sp = tessera::scipy::special;
using detail::cst;
using detail::kInf;
using detail::kNaN;
using detail::promote;
}  // namespace

// ---------------------------------------------------------------- bernoulli
namespace bernoulli {
Array logpmf(const ArrayLike& k_, const ArrayLike& p_, const ArrayLike& loc_) {
  // k log p + (1 - k) log(1 - p) on {loc, loc + 1}
  auto [k, p, loc] = promote("bernoulli.logpmf", k_, p_, loc_);
  const Array x = k - loc;
  const Array log_probs = sp::xlogy(x, p) + sp::xlog1py(1.0 - x, -p);
  return tnp::where((x < 0) | (x > 1), cst(k, -kInf), log_probs);
}
Array pmf(const ArrayLike& k, const ArrayLike& p, const ArrayLike& loc) {
  return tnp::exp(logpmf(k, p, loc));
}
Array cdf(const ArrayLike& k_, const ArrayLike& p_) {
  // 0 for k < 0, 1 - p for 0 <= k < 1, 1 for k >= 1
  auto [k, p] = promote("bernoulli.cdf", k_, p_);
  const Array invalid = tnp::isnan(k) | tnp::isnan(p) | (p < 0) | (p > 1);
  return tnp::where(invalid, cst(k, kNaN),
                    tnp::where(k < 0, cst(k, 0), tnp::where(k < 1, 1.0 - p, cst(k, 1))));
}
Array ppf(const ArrayLike& q_, const ArrayLike& p_) {
  // the smallest k in {0, 1} with cdf(k) >= q
  auto [q, p] = promote("bernoulli.ppf", q_, p_);
  const Array invalid = tnp::isnan(q) | tnp::isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1);
  return tnp::where(invalid, cst(q, kNaN), tnp::where(q <= 1.0 - p, cst(q, 0), cst(q, 1)));
}
}  // namespace bernoulli

// ---------------------------------------------------------------- poisson
namespace poisson {
Array logpmf(const ArrayLike& k_, const ArrayLike& mu_, const ArrayLike& loc_) {
  // -inf below loc and at non-integer k
  auto [k, mu, loc] = promote("poisson.logpmf", k_, mu_, loc_);
  const Array x = k - loc;
  const Array log_probs = sp::xlogy(x, mu) - sp::gammaln(x + 1) - mu;
  return tnp::where((x < 0) | (tnp::round(k) != k), cst(k, -kInf), log_probs);
}
Array pmf(const ArrayLike& k, const ArrayLike& mu, const ArrayLike& loc) {
  return tnp::exp(logpmf(k, mu, loc));
}
Array cdf(const ArrayLike& k_, const ArrayLike& mu_, const ArrayLike& loc_) {
  // gammaincc(floor(k - loc) + 1, mu); 0 below loc
  auto [k, mu, loc] = promote("poisson.cdf", k_, mu_, loc_);
  const Array x = k - loc;
  const Array p = sp::gammaincc(tnp::floor(1 + x), mu);
  return tnp::where(x < 0, cst(p, 0), p);
}
namespace {
// sum over k < upper (per element of mu, flat) of entr(pmf(k, mu)), k < max_k.
Array truncated_entropy(const Array& mu, int64_t max_k, const Array& upper) {
  const Array k = tnp::expand_dims(tnp::arange(max_k, mu.dtype()), 1);
  const Array probs = pmf(k, mu, 0);
  const Array mask = k < tnp::expand_dims(upper, 0);
  return tnp::sum(sp::entr(tnp::where(mask, probs, cst(probs, 0))), 0);
}
}  // namespace

Array entropy(const ArrayLike& mu_, const ArrayLike& loc_) {
  auto [mu, loc] = detail::promote_dtypes("poisson.entropy", mu_, loc_);
  const Shape out = tnp::broadcast_shapes(mu.shape(), loc.shape(), "poisson.entropy");
  const Array m = tnp::ravel(mu);
  const Array small = truncated_entropy(m, 35, tnp::ceil(m + 20));
  const Array medium = truncated_entropy(m, 250, tnp::ceil(m + 10 * tnp::sqrt(m) + 20));
  const Array large = 0.5 * tnp::log(2 * detail::kPi * std::exp(1.0) * m) - 1.0 / (12 * m);
  const Array r =
      tnp::where(m == 0, cst(m, 0), tnp::where(m < 10, small, tnp::where(m < 100, medium, large)));
  return tnp::broadcast_to(tnp::reshape(r, mu.shape()), out);
}
}  // namespace poisson

// ---------------------------------------------------------------- geom
namespace geom {
Array logpmf(const ArrayLike& k_, const ArrayLike& p_, const ArrayLike& loc_) {
  // (1 - p)^(k - 1) p on k = loc + 1, ...
  auto [k, p, loc] = promote("geom.logpmf", k_, p_, loc_);
  const Array x = k - loc;
  const Array log_probs = sp::xlog1py(x - 1, -p) + tnp::log(p);
  return tnp::where(x <= 0, cst(k, -kInf), log_probs);
}
Array pmf(const ArrayLike& k, const ArrayLike& p, const ArrayLike& loc) {
  return tnp::exp(logpmf(k, p, loc));
}
}  // namespace geom

// ---------------------------------------------------------------- binom
namespace binom {
Array logpmf(const ArrayLike& k_, const ArrayLike& n_, const ArrayLike& p_, const ArrayLike& loc_) {
  auto [k, n, p, loc] = promote("binom.logpmf", k_, n_, p_, loc_);
  const Array y = k - loc;
  const Array comb = sp::gammaln(n + 1) - sp::gammaln(y + 1) - sp::gammaln(n - y + 1);
  const Array log_probs = comb + sp::xlogy(y, p) + sp::xlog1py(n - y, -p);
  return tnp::where((y >= 0) & (y <= n), log_probs, cst(k, -kInf));
}
Array pmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& p, const ArrayLike& loc) {
  return tnp::exp(logpmf(k, n, p, loc));
}
}  // namespace binom

// ---------------------------------------------------------------- nbinom
namespace nbinom {
Array logpmf(const ArrayLike& k_, const ArrayLike& n_, const ArrayLike& p_, const ArrayLike& loc_) {
  // C(k + n - 1, k) p^n (1 - p)^k on k = loc, loc + 1, ...
  auto [k, n, p, loc] = promote("nbinom.logpmf", k_, n_, p_, loc_);
  const Array y = k - loc;
  const Array log_choose = sp::gammaln(y + n) - sp::gammaln(n) - sp::gammaln(y + 1);
  const Array log_probs = log_choose + sp::xlogy(n, p) + sp::xlog1py(y, -p);
  return tnp::where(y < 0, cst(k, -kInf), log_probs);
}
Array pmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& p, const ArrayLike& loc) {
  return tnp::exp(logpmf(k, n, p, loc));
}
}  // namespace nbinom

// ---------------------------------------------------------------- betabinom
namespace betabinom {
Array logpmf(const ArrayLike& k_, const ArrayLike& n_, const ArrayLike& a_, const ArrayLike& b_,
             const ArrayLike& loc_) {
  // C(n, y) B(y + a, n - y + b) / B(a, b), C(n, y) = 1 / ((n + 1) B(n - y + 1, y + 1))
  auto [k, n, a, b, loc] = promote("betabinom.logpmf", k_, n_, a_, b_, loc_);
  const Array y = k - loc;
  const Array log_choose = -tnp::log1p(n) - sp::betaln(n - y + 1, y + 1);
  Array log_probs = log_choose + sp::betaln(y + a, n - y + b) - sp::betaln(a, b);
  log_probs = tnp::where((y < 0) | (y > n), cst(k, -kInf), log_probs);
  return tnp::where((n < 0) | (a <= 0) | (b <= 0), cst(k, kNaN), log_probs);
}
Array pmf(const ArrayLike& k, const ArrayLike& n, const ArrayLike& a, const ArrayLike& b,
          const ArrayLike& loc) {
  return tnp::exp(logpmf(k, n, a, b, loc));
}
}  // namespace betabinom

}  // namespace tessera::scipy::stats
