// jax.scipy.stats's continuous univariate distributions (tessera/scipy_stats.h), each the
// composition jax/_src/scipy/stats/<name>.py uses: promote_args_inexact, then jnp/lax ops and
// tessera::scipy::special functions, with JAX's -inf / 0 / NaN outside the support.
#include <cmath>

#include "api/scipy_stats_internal.h"
#include "tessera/lax.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/numpy_reductions.h"
#include "tessera/scipy_special.h"
#include "tessera/scipy_stats.h"

namespace tessera::scipy::stats {

namespace {
namespace tnp = tessera::numpy;
namespace sp = tessera::scipy::special;
using detail::cst;
using detail::kInf;
using detail::kLog2Pi;
using detail::kNaN;
using detail::kPi;
using detail::promote;

// q outside [0, 1] (or NaN compared false) -> NaN, as the ppf functions do.
Array nan_outside_unit(const Array& q, const Array& out) {
  return tnp::where((q < 0) | (q > 1), cst(out, kNaN), out);
}
}  // namespace

// ---------------------------------------------------------------- norm
namespace norm {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("norm.logpdf", x_, loc_, scale_);
  const Array z = (x - loc) / scale;
  return -0.5 * (z * z + kLog2Pi) - tnp::log(scale);
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("norm.cdf", x_, loc_, scale_);
  return sp::ndtr((x - loc) / scale);
}
Array logcdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("norm.logcdf", x_, loc_, scale_);
  return sp::log_ndtr((x - loc) / scale);
}
Array sf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("norm.sf", x_, loc_, scale_);
  return sp::ndtr((loc - x) / scale);
}
Array logsf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("norm.logsf", x_, loc_, scale_);
  return sp::log_ndtr((loc - x) / scale);
}
Array ppf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("norm.ppf", q_, loc_, scale_);
  return sp::ndtri(q) * scale + loc;
}
Array isf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("norm.isf", q_, loc_, scale_);
  return loc - sp::ndtri(q) * scale;
}
}  // namespace norm

// ---------------------------------------------------------------- logistic
namespace logistic {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  // -2 log(2 cosh(z / 2)) - log(scale)
  auto [x, loc, scale] = promote("logistic.logpdf", x_, loc_, scale_);
  const Array half = (x - loc) / scale / 2;
  return -2.0 * tnp::logaddexp(half, -half) - tnp::log(scale);
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("logistic.cdf", x_, loc_, scale_);
  return sp::expit((x - loc) / scale);
}
Array logcdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("logistic.logcdf", x_, loc_, scale_);
  return nn::log_sigmoid((x - loc) / scale);
}
Array sf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("logistic.sf", x_, loc_, scale_);
  return sp::expit((loc - x) / scale);
}
Array logsf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("logistic.logsf", x_, loc_, scale_);
  return nn::log_sigmoid((loc - x) / scale);
}
Array ppf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("logistic.ppf", q_, loc_, scale_);
  return sp::logit(q) * scale + loc;
}
Array isf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("logistic.isf", q_, loc_, scale_);
  return loc - sp::logit(q) * scale;
}
}  // namespace logistic

// ---------------------------------------------------------------- cauchy
namespace cauchy {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("cauchy.logpdf", x_, loc_, scale_);
  const Array z = (x - loc) / scale;
  return -std::log(kPi) - tnp::log(scale) - tnp::log1p(z * z);
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("cauchy.cdf", x_, loc_, scale_);
  return 0.5 + tnp::arctan((x - loc) / scale) / kPi;
}
Array logcdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::log(cdf(x, loc, scale));
}
Array sf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("cauchy.sf", x_, loc_, scale_);
  return 0.5 + tnp::arctan((loc - x) / scale) / kPi;
}
Array logsf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::log(sf(x, loc, scale));
}
Array ppf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("cauchy.ppf", q_, loc_, scale_);
  return loc + scale * tnp::tan(kPi * (q - 0.5));
}
Array isf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("cauchy.isf", q_, loc_, scale_);
  return loc + scale * tnp::tan(kPi * (0.5 - q));
}
}  // namespace cauchy

// ---------------------------------------------------------------- expon
namespace expon {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("expon.logpdf", x_, loc_, scale_);
  const Array y = (x - loc) / scale;
  return tnp::where(x < loc, -kInf, -y - tnp::log(scale));
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("expon.cdf", x_, loc_, scale_);
  const Array y = (x - loc) / scale;
  return tnp::where(x < loc, cst(y, 0), -tnp::expm1(-y));
}
Array logcdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("expon.logcdf", x_, loc_, scale_);
  const Array y = (x - loc) / scale;
  return tnp::where(x < loc, cst(y, -kInf), tnp::log(-tnp::expm1(-y)));
}
Array sf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("expon.sf", x_, loc_, scale_);
  const Array y = (x - loc) / scale;
  return tnp::where(x < loc, cst(y, 1), tnp::exp(-y));
}
Array logsf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("expon.logsf", x_, loc_, scale_);
  const Array y = (x - loc) / scale;
  return tnp::where(x < loc, cst(y, 0), -y);
}
Array ppf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("expon.ppf", q_, loc_, scale_);
  return nan_outside_unit(q, loc - scale * tnp::log1p(-q));
}
}  // namespace expon

// ---------------------------------------------------------------- laplace
namespace laplace {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("laplace.logpdf", x_, loc_, scale_);
  return -std::log(2.0) - tnp::log(scale) - tnp::abs(x - loc) / scale;
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  // exp(z) / 2 below loc, 1 - exp(-z) / 2 above
  auto [x, loc, scale] = promote("laplace.cdf", x_, loc_, scale_);
  const Array z = (x - loc) / scale;
  return tnp::where(z < 0, 0.5 * tnp::exp(z), 1.0 - 0.5 * tnp::exp(-z));
}
}  // namespace laplace

// ---------------------------------------------------------------- uniform
namespace uniform {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("uniform.logpdf", x_, loc_, scale_);
  const Array outside = (x > loc + scale) | (x < loc);
  return tnp::where(outside, cst(x, -kInf), -tnp::log(scale));
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  // 0 below loc, 1 above loc + scale, (x - loc) / scale between, NaN for NaN x
  auto [x, loc, scale] = promote("uniform.cdf", x_, loc_, scale_);
  const Array inside = (x >= loc) & (x <= loc + scale);
  return tnp::where(
      x < loc, cst(x, 0),
      tnp::where(x > loc + scale, cst(x, 1), tnp::where(inside, (x - loc) / scale, cst(x, kNaN))));
}
Array ppf(const ArrayLike& q_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [q, loc, scale] = promote("uniform.ppf", q_, loc_, scale_);
  return tnp::where(tnp::isnan(q) | (q < 0) | (q > 1), cst(q, kNaN), loc + scale * q);
}
}  // namespace uniform

// ---------------------------------------------------------------- gumbel_l
namespace gumbel_l {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("gumbel_l.logpdf", x_, loc_, scale_);
  const Array z = (x - loc) / scale;
  return z - tnp::exp(z) - tnp::log(scale);
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array logcdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  // log(1 - exp(-exp(z))) through expm1
  auto [x, loc, scale] = promote("gumbel_l.logcdf", x_, loc_, scale_);
  return tnp::log(-tnp::expm1(-tnp::exp((x - loc) / scale)));
}
Array cdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("gumbel_l.cdf", x_, loc_, scale_);
  return -tnp::expm1(-tnp::exp((x - loc) / scale));
}
Array logsf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("gumbel_l.logsf", x_, loc_, scale_);
  return -tnp::exp((x - loc) / scale);
}
Array sf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logsf(x, loc, scale));
}
Array ppf(const ArrayLike& p_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [p, loc, scale] = promote("gumbel_l.ppf", p_, loc_, scale_);
  return nan_outside_unit(p, loc + scale * tnp::log(-tnp::log1p(-p)));
}
}  // namespace gumbel_l

// ---------------------------------------------------------------- gumbel_r
namespace gumbel_r {
Array logpdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("gumbel_r.logpdf", x_, loc_, scale_);
  const Array z = (x - loc) / scale;
  return -(z + tnp::exp(-z)) - tnp::log(scale);
}
Array pdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, loc, scale));
}
Array logcdf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("gumbel_r.logcdf", x_, loc_, scale_);
  return -tnp::exp(-(x - loc) / scale);
}
Array cdf(const ArrayLike& x, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logcdf(x, loc, scale));
}
Array logsf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  // log(1 - exp(-exp(-z))) through expm1, so that the upper tail keeps its precision
  auto [x, loc, scale] = promote("gumbel_r.logsf", x_, loc_, scale_);
  return tnp::log(-tnp::expm1(-tnp::exp(-(x - loc) / scale)));
}
Array sf(const ArrayLike& x_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, loc, scale] = promote("gumbel_r.sf", x_, loc_, scale_);
  return -tnp::expm1(-tnp::exp(-(x - loc) / scale));
}
Array ppf(const ArrayLike& p_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [p, loc, scale] = promote("gumbel_r.ppf", p_, loc_, scale_);
  return nan_outside_unit(p, loc - scale * tnp::log(-tnp::log(p)));
}
}  // namespace gumbel_r

// ---------------------------------------------------------------- gamma
namespace gamma {
Array logpdf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  auto [x, a, loc, scale] = promote("gamma.logpdf", x_, a_, loc_, scale_);
  const Array y = (x - loc) / scale;
  const Array log_probs = sp::xlogy(a - 1.0, y) - y - sp::gammaln(a) - tnp::log(scale);
  return tnp::where(x < loc, -kInf, log_probs);
}
Array pdf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, a, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& loc_,
          const ArrayLike& scale_) {
  auto [x, a, loc, scale] = promote("gamma.cdf", x_, a_, loc_, scale_);
  return sp::gammainc(a, tnp::maximum((x - loc) / scale, 0));
}
Array logcdf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::log(cdf(x, a, loc, scale));
}
Array sf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& loc_, const ArrayLike& scale_) {
  auto [x, a, loc, scale] = promote("gamma.sf", x_, a_, loc_, scale_);
  return sp::gammaincc(a, tnp::maximum((x - loc) / scale, 0));
}
Array logsf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::log(sf(x, a, loc, scale));
}
}  // namespace gamma

// ---------------------------------------------------------------- chi2
namespace chi2 {
Array logpdf(const ArrayLike& x_, const ArrayLike& df_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  auto [x, df, loc, scale] = promote("chi2.logpdf", x_, df_, loc_, scale_);
  const Array y = (x - loc) / scale;
  const Array k = df / 2;
  const Array log_probs =
      sp::xlogy(k - 1.0, y) - y / 2 - sp::gammaln(k) - k * std::log(2.0) - tnp::log(scale);
  return tnp::where(x < loc, -kInf, log_probs);
}
Array pdf(const ArrayLike& x, const ArrayLike& df, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, df, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& df_, const ArrayLike& loc_,
          const ArrayLike& scale_) {
  auto [x, df, loc, scale] = promote("chi2.cdf", x_, df_, loc_, scale_);
  return sp::gammainc(df / 2, tnp::maximum((x - loc) / scale / 2, 0));
}
Array logcdf(const ArrayLike& x, const ArrayLike& df, const ArrayLike& loc,
             const ArrayLike& scale) {
  return tnp::log(cdf(x, df, loc, scale));
}
Array sf(const ArrayLike& x_, const ArrayLike& df_, const ArrayLike& loc_,
         const ArrayLike& scale_) {
  auto [x, df, loc, scale] = promote("chi2.sf", x_, df_, loc_, scale_);
  return sp::gammaincc(df / 2, tnp::maximum((x - loc) / scale / 2, 0));
}
Array logsf(const ArrayLike& x, const ArrayLike& df, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::log(sf(x, df, loc, scale));
}
}  // namespace chi2

// ---------------------------------------------------------------- t
namespace t {
Array logpdf(const ArrayLike& x_, const ArrayLike& df_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  // -(lgamma(df/2) - lgamma((df+1)/2) + log(pi df scale^2)/2 + (df+1)/2 log1p(z^2 / df))
  auto [x, df, loc, scale] = promote("t.logpdf", x_, df_, loc_, scale_);
  const Array z = (x - loc) / scale;
  const Array half_df = df / 2;
  const Array half_df1 = half_df + 0.5;
  const Array normalizer =
      lax::lgamma(half_df) - lax::lgamma(half_df1) + 0.5 * tnp::log(scale * scale * kPi * df);
  return -(normalizer + half_df1 * tnp::log1p(z * z / df));
}
Array pdf(const ArrayLike& x, const ArrayLike& df, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, df, loc, scale));
}
}  // namespace t

// ---------------------------------------------------------------- pareto
namespace pareto {
Array logpdf(const ArrayLike& x_, const ArrayLike& b_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  auto [x, b, loc, scale] = promote("pareto.logpdf", x_, b_, loc_, scale_);
  const Array y = (x - loc) / scale;
  const Array log_probs = tnp::log(b) - (b + 1) * tnp::log(y) - tnp::log(scale);
  return tnp::where(y < 1, cst(x, -kInf), log_probs);
}
Array pdf(const ArrayLike& x, const ArrayLike& b, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logpdf(x, b, loc, scale));
}
Array logsf(const ArrayLike& x_, const ArrayLike& b_, const ArrayLike& loc_,
            const ArrayLike& scale_) {
  auto [x, b, loc, scale] = promote("pareto.logsf", x_, b_, loc_, scale_);
  const Array y = (x - loc) / scale;
  return tnp::where(y < 1, cst(y, 0), -b * tnp::log(y));
}
Array sf(const ArrayLike& x, const ArrayLike& b, const ArrayLike& loc, const ArrayLike& scale) {
  return tnp::exp(logsf(x, b, loc, scale));
}
Array logcdf(const ArrayLike& x_, const ArrayLike& b_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  auto [x, b, loc, scale] = promote("pareto.logcdf", x_, b_, loc_, scale_);
  const Array y = (x - loc) / scale;
  const Array out = tnp::log(-tnp::expm1(-b * tnp::log(tnp::maximum(y, 1))));
  return tnp::where(y < 1, cst(x, -kInf), out);
}
Array cdf(const ArrayLike& x_, const ArrayLike& b_, const ArrayLike& loc_,
          const ArrayLike& scale_) {
  auto [x, b, loc, scale] = promote("pareto.cdf", x_, b_, loc_, scale_);
  const Array y = (x - loc) / scale;
  return tnp::where(y < 1, cst(y, 0), -tnp::expm1(-b * tnp::log(tnp::maximum(y, 1))));
}
Array ppf(const ArrayLike& q_, const ArrayLike& b_, const ArrayLike& loc_,
          const ArrayLike& scale_) {
  // loc + scale (1 - q)^(-1 / b)
  auto [q, b, loc, scale] = promote("pareto.ppf", q_, b_, loc_, scale_);
  return nan_outside_unit(q, loc + scale * tnp::exp(-tnp::log1p(-q) / b));
}
}  // namespace pareto

// ---------------------------------------------------------------- beta
namespace beta {
Array logpdf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& b_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  auto [x, a, b, loc, scale] = promote("beta.logpdf", x_, a_, b_, loc_, scale_);
  const Array y = (x - loc) / scale;
  const Array log_probs =
      sp::xlogy(a - 1.0, y) + sp::xlog1py(b - 1.0, -y) - sp::betaln(a, b) - tnp::log(scale);
  const Array out = tnp::where((x > loc + scale) | (x < loc), cst(x, -kInf), log_probs);
  return tnp::where((a <= 0) | (b <= 0) | (scale <= 0), cst(x, kNaN), out);
}
Array pdf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& b, const ArrayLike& loc,
          const ArrayLike& scale) {
  return tnp::exp(logpdf(x, a, b, loc, scale));
}
Array cdf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& b_, const ArrayLike& loc_,
          const ArrayLike& scale_) {
  auto [x, a, b, loc, scale] = promote("beta.cdf", x_, a_, b_, loc_, scale_);
  return sp::betainc(a, b, tnp::clip((x - loc) / scale, 0, 1));
}
Array logcdf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& b, const ArrayLike& loc,
             const ArrayLike& scale) {
  return tnp::log(cdf(x, a, b, loc, scale));
}
Array sf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& b_, const ArrayLike& loc_,
         const ArrayLike& scale_) {
  auto [x, a, b, loc, scale] = promote("beta.sf", x_, a_, b_, loc_, scale_);
  return sp::betainc(b, a, 1.0 - tnp::clip((x - loc) / scale, 0, 1));
}
Array logsf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& b, const ArrayLike& loc,
            const ArrayLike& scale) {
  return tnp::log(sf(x, a, b, loc, scale));
}
}  // namespace beta

// ---------------------------------------------------------------- truncnorm
// The normalizing mass Phi(b) - Phi(a) is computed in log space from whichever tail keeps its
// precision: both bounds in the left half, both in the right half (by symmetry), or straddling
// 0 (log1p of minus the two tails).
namespace truncnorm {
namespace {
// log(x - y) from log x > log y.
Array log_diff(const Array& log_x, const Array& log_y) {
  return log_x + tnp::log1p(-tnp::exp(log_y - log_x));
}

// log(Phi(b) - Phi(a)) for a <= b.
Array log_gauss_mass(const Array& a0, const Array& b0) {
  const Shape s = tnp::broadcast_shapes(a0.shape(), b0.shape());
  const Array a = tnp::broadcast_to(a0, s), b = tnp::broadcast_to(b0, s);
  const Array left = b <= 0;
  const Array right = a > 0;
  const Array middle = (!left) & (!right);
  // arguments kept inside each case's valid region so that the unused branches stay finite
  const Array a_l = tnp::where(left, a, -1.0), b_l = tnp::where(left, b, 0.0);
  const Array log_left = log_diff(sp::log_ndtr(b_l), sp::log_ndtr(a_l));
  const Array a_r = tnp::where(right, a, 1.0), b_r = tnp::where(right, b, kInf);
  const Array log_right = log_diff(sp::log_ndtr(-a_r), sp::log_ndtr(-b_r));
  const Array a_m = tnp::where(middle, a, -1.0), b_m = tnp::where(middle, b, 1.0);
  const Array log_middle = tnp::log1p(-sp::ndtr(a_m) - sp::ndtr(-b_m));
  return tnp::where(left, log_left, tnp::where(right, log_right, log_middle));
}

Array logcdf_std(const Array& z, const Array& a, const Array& b) {
  const Array zc = tnp::clip(z, a, b);
  Array val = log_gauss_mass(a, zc) - log_gauss_mass(a, b);
  val = tnp::where(z >= b, cst(val, 0), val);
  return tnp::where(z <= a, cst(val, -kInf), val);
}
}  // namespace

Array logpdf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& b_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  auto [x, a, b, loc, scale] = promote("truncnorm.logpdf", x_, a_, b_, loc_, scale_);
  const Array z = (x - loc) / scale;
  const Array val = norm::logpdf(z) - log_gauss_mass(a, b) - tnp::log(scale);
  return tnp::where((z < a) | (z > b), cst(val, -kInf), val);
}
Array pdf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& b, const ArrayLike& loc,
          const ArrayLike& scale) {
  return tnp::exp(logpdf(x, a, b, loc, scale));
}
Array logcdf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& b_, const ArrayLike& loc_,
             const ArrayLike& scale_) {
  // log((Phi(z) - Phi(a)) / (Phi(b) - Phi(a))): 0 above b, -inf below a
  auto [x, a, b, loc, scale] = promote("truncnorm.logcdf", x_, a_, b_, loc_, scale_);
  return logcdf_std((x - loc) / scale, a, b);
}
Array cdf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& b, const ArrayLike& loc,
          const ArrayLike& scale) {
  return tnp::exp(logcdf(x, a, b, loc, scale));
}
Array logsf(const ArrayLike& x_, const ArrayLike& a_, const ArrayLike& b_, const ArrayLike& loc_,
            const ArrayLike& scale_) {
  // the mirror image: logcdf(-x) of the distribution truncated to [-b, -a]
  auto [x, a, b, loc, scale] = promote("truncnorm.logsf", x_, a_, b_, loc_, scale_);
  return logcdf_std((loc - x) / scale, -b, -a);
}
Array sf(const ArrayLike& x, const ArrayLike& a, const ArrayLike& b, const ArrayLike& loc,
         const ArrayLike& scale) {
  return tnp::exp(logsf(x, a, b, loc, scale));
}
}  // namespace truncnorm

// ---------------------------------------------------------------- gennorm
namespace gennorm {
Array logpdf(const ArrayLike& x_, const ArrayLike& beta_) {
  auto [x, beta] = promote("gennorm.logpdf", x_, beta_);
  return tnp::log(0.5 * beta) - sp::gammaln(1 / beta) - tnp::power(tnp::abs(x), beta);
}
Array pdf(const ArrayLike& x, const ArrayLike& beta) { return tnp::exp(logpdf(x, beta)); }
Array cdf(const ArrayLike& x_, const ArrayLike& beta_) {
  // (1 + sign(x) P(1 / beta, |x|^beta)) / 2
  auto [x, beta] = promote("gennorm.cdf", x_, beta_);
  return 0.5 * (1 + tnp::sign(x) * sp::gammainc(1 / beta, tnp::power(tnp::abs(x), beta)));
}
}  // namespace gennorm

// ---------------------------------------------------------------- vonmises
namespace vonmises {
Array logpdf(const ArrayLike& x_, const ArrayLike& kappa_) {
  // kappa (cos x - 1) - log(2 pi i0e(kappa)): i0e = e^-kappa I0 keeps large kappa finite
  auto [x, kappa] = promote("vonmises.logpdf", x_, kappa_);
  const Array out = kappa * (tnp::cos(x) - 1) - tnp::log(2 * kPi * sp::i0e(kappa));
  return tnp::where(kappa > 0, out, cst(x, kNaN));
}
Array pdf(const ArrayLike& x, const ArrayLike& kappa) { return tnp::exp(logpdf(x, kappa)); }
}  // namespace vonmises

// ---------------------------------------------------------------- wrapcauchy
namespace wrapcauchy {
Array logpdf(const ArrayLike& x_, const ArrayLike& c_) {
  auto [x, c] = promote("wrapcauchy.logpdf", x_, c_);
  Array out = tnp::log1p(-c * c) - std::log(2 * kPi) - tnp::log(1 + c * c - 2 * c * tnp::cos(x));
  out = tnp::where((x >= 0) & (x <= 2 * kPi), out, cst(x, -kInf));
  return tnp::where((c > 0) & (c < 1), out, cst(x, kNaN));
}
Array pdf(const ArrayLike& x, const ArrayLike& c) { return tnp::exp(logpdf(x, c)); }
}  // namespace wrapcauchy

}  // namespace tessera::scipy::stats
