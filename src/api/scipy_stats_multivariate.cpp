// jax.scipy.stats's multivariate distributions (tessera/scipy_stats.h): multivariate_normal
// (Cholesky factor and a triangular solve), dirichlet and multinomial, as JAX's modules
// compose them.
#include <string>

#include "api/scipy_stats_internal.h"
#include "tessera/errors.h"
#include "tessera/linalg_solve.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/scipy_special.h"
#include "tessera/scipy_stats.h"
#include "tessera/shape.h"

namespace tessera::scipy::stats {

namespace {
namespace tnp = tessera::numpy;
namespace sp = tessera::scipy::special;
using detail::cst;
using detail::kInf;
using detail::kLog2Pi;
using detail::promote_dtypes;
}  // namespace

// ---------------------------------------------------------------- multivariate_normal
namespace multivariate_normal {
Array logpdf(const ArrayLike& x_, const ArrayLike& mean_, const ArrayLike& cov_) {
  auto [x, mean, cov] = promote_dtypes("multivariate_normal.logpdf", x_, mean_, cov_);
  if (mean.ndim() == 0) {  // univariate, cov the variance
    const Array d = x - mean;
    return -0.5 * d * d / cov - 0.5 * (kLog2Pi + tnp::log(cov));
  }
  const int64_t n = mean.shape().back();
  const double nd = static_cast<double>(n);
  if (cov.ndim() == 0) {  // cov times the identity
    const Array y = x - mean;
    return -0.5 * tnp::sum(y * y, -1) / cov - 0.5 * nd * (kLog2Pi + tnp::log(cov));
  }
  const Shape& cs = cov.shape();
  if (cov.ndim() < 2 || cs[cs.size() - 2] != n || cs.back() != n) {
    throw ValueError(op_message(
        "multivariate_normal.logpdf",
        "got incompatible shapes: mean " + shape_str(mean.shape()) + " and cov " + shape_str(cs) +
            "; cov's last two dimensions must be (n, n) with n = mean.shape[-1] (" +
            std::to_string(n) + ")"));
  }
  Array factor = lax::linalg::cholesky(cov);
  Array d = x - mean;
  Shape fb(cs.begin(), cs.end() - 2);
  Shape db(d.shape().begin(), d.shape().end() - 1);
  Shape batch = tnp::broadcast_shapes(fb, db, "multivariate_normal.logpdf");
  Shape fs = batch, ds = batch;
  fs.push_back(n);
  fs.push_back(n);
  ds.push_back(n);
  factor = tnp::broadcast_to(factor, fs);
  d = tnp::broadcast_to(d, ds);
  const Array y = tnp::squeeze(lax::linalg::triangular_solve(factor, tnp::expand_dims(d, -1),
                                                             /*left_side=*/true, /*lower=*/true),
                               -1);
  return -0.5 * tnp::sum(y * y, -1) - 0.5 * nd * kLog2Pi -
         tnp::sum(tnp::log(tnp::diagonal(factor, 0, -2, -1)), -1);
}
Array pdf(const ArrayLike& x, const ArrayLike& mean, const ArrayLike& cov) {
  return tnp::exp(logpdf(x, mean, cov));
}
}  // namespace multivariate_normal

// ---------------------------------------------------------------- dirichlet
namespace dirichlet {
Array logpdf(const ArrayLike& x_, const ArrayLike& alpha_) {
  auto [x, alpha] = promote_dtypes("dirichlet.logpdf", x_, alpha_);
  if (alpha.ndim() != 1) {
    throw ValueError(
        op_message("dirichlet.logpdf",
                   "`alpha` must be one-dimensional; got alpha.shape=" + shape_str(alpha.shape())));
  }
  const int64_t k = alpha.shape()[0];
  if (x.ndim() == 0 || (x.shape()[0] != k && x.shape()[0] != k - 1)) {
    throw ValueError(op_message(
        "dirichlet.logpdf",
        "`x` must have either the same number of entries as `alpha` or one entry fewer; got "
        "x.shape=" +
            shape_str(x.shape()) + ", alpha.shape=" + shape_str(alpha.shape())));
  }
  if (x.shape()[0] != k) {
    x = tnp::concatenate({x, tnp::expand_dims(1 - tnp::sum(x, 0), 0)}, 0);
  }
  const Array log_norm = tnp::sum(sp::gammaln(alpha)) - sp::gammaln(tnp::sum(alpha));
  Shape as(static_cast<size_t>(x.ndim()), 1);
  as[0] = k;
  const Array a = tnp::reshape(alpha, as);
  const Array log_probs = tnp::sum(sp::xlogy(a - 1, x), 0) - log_norm;
  // on the simplex: every component positive, the sum 1 within 1e-6
  const Array on_simplex = tnp::all(x > 0, 0) & (tnp::abs(tnp::sum(x, 0) - 1) < 1e-6);
  return tnp::where(on_simplex, log_probs, cst(x, -kInf));
}
Array pdf(const ArrayLike& x, const ArrayLike& alpha) { return tnp::exp(logpdf(x, alpha)); }
}  // namespace dirichlet

// ---------------------------------------------------------------- multinomial
namespace multinomial {
Array logpmf(const ArrayLike& x_, const ArrayLike& n_, const ArrayLike& p_) {
  // n! prod p_i^x_i / x_i! over count vectors (last axis) summing to n
  auto [p] = promote_dtypes("multinomial.logpmf", p_);
  const Array& x = x_.array();
  const Array& n = n_.array();
  if (!is_integer(x.dtype()) || !is_integer(n.dtype())) {
    throw ValueError(op_message(
        "multinomial.logpmf",
        "x and n must be of integer type; got x.dtype=" + std::string(dtype_name(x.dtype())) +
            ", n.dtype=" + std::string(dtype_name(n.dtype()))));
  }
  const Array xf = tnp::astype(x, p.dtype());
  const Array nf = tnp::astype(n, p.dtype());
  const Array log_probs =
      sp::gammaln(nf + 1) + tnp::sum(sp::xlogy(xf, p) - sp::gammaln(xf + 1), -1);
  return tnp::where(tnp::sum(x, -1) == n, log_probs, cst(log_probs, -kInf));
}
Array pmf(const ArrayLike& x, const ArrayLike& n, const ArrayLike& p) {
  return tnp::exp(logpmf(x, n, p));
}
}  // namespace multinomial

}  // namespace tessera::scipy::stats
