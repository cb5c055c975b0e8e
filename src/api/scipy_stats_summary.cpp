// jax.scipy.stats's summary statistics (mode, rankdata, sem) and gaussian_kde's kernels
// (tessera/scipy_stats.h), compositions of jnp/lax ops as JAX's _core.py and kde.py are.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "api/scipy_stats_internal.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_assoc_scan.h"
#include "tessera/linalg_solve.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/numpy_cumulative.h"
#include "tessera/numpy_indexing.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_sort.h"
#include "tessera/random.h"
#include "tessera/random_dists.h"
#include "tessera/scipy_special.h"
#include "tessera/scipy_stats.h"
#include "tessera/shape.h"

namespace tessera::scipy::stats {

namespace {
namespace tnp = tessera::numpy;
namespace sp = tessera::scipy::special;
using detail::cst;
using detail::kNaN;

// JAX's nan_policy checks: ValueError for an unknown policy, NotImplementedError for a known
// one the function does not implement.
void check_nan_policy(const char* name, const std::string& policy,
                      const std::vector<std::string>& allowed) {
  if (policy != "propagate" && policy != "omit" && policy != "raise") {
    throw ValueError(op_message(
        name, "nan_policy must be 'propagate', 'omit' or 'raise', got '" + policy + "'"));
  }
  for (const auto& a : allowed)
    if (a == policy) return;
  throw NotImplementedError("Logic for `nan_policy` of " + policy + " is not implemented in " +
                            name + "; use nan_policy='propagate'");
}

int64_t normalize_axis(const char* name, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim) {
    throw IndexError(op_message(name, "axis " + std::to_string(axis) +
                                          " is out of bounds for an array of rank " +
                                          std::to_string(ndim)));
  }
  return axis < 0 ? axis + ndim : axis;
}

// The ranks of x along its last axis.
Array rank_last_axis(const Array& x, const std::string& method) {
  const int64_t last = x.ndim() - 1;
  const int64_t n = x.shape().back();
  const Array order = tnp::argsort(x, -1, /*stable=*/true);
  const Array inverse = tnp::argsort(order, -1, /*stable=*/true);
  if (method == "ordinal") return inverse + 1;
  // the ranks' integer dtype: argsort's (the default int, as JAX's)
  const DType idt = inverse.dtype();
  const Array xs = tnp::take_along_axis(x, order, -1);
  Shape one = x.shape();
  one.back() = 1;
  const Array ones = tnp::ones(one, DType::kBool);
  // true where a run of equal values starts (in sorted order)
  const Array new_run = tnp::concatenate(
      {ones, lax::slice_in_dim(xs, 1, n, 1, last) != lax::slice_in_dim(xs, 0, n - 1, 1, last)}, -1);
  if (method == "dense") {
    const Array dense = tnp::cumsum(new_run, -1, idt);
    return tnp::take_along_axis(dense, inverse, -1);
  }
  const Array pos = lax::broadcasted_iota(idt, xs.shape(), last);
  // the sorted position where each element's run of equal values starts / ends
  const Array start = lax::cummax(tnp::where(new_run, pos, 0), last);
  const Array run_ends = tnp::concatenate({lax::slice_in_dim(new_run, 1, n, 1, last), ones}, -1);
  const Array end = lax::cummin(tnp::where(run_ends, pos, n - 1), last, /*reverse=*/true);
  const Array low = tnp::take_along_axis(start, inverse, -1) + 1;
  const Array high = tnp::take_along_axis(end, inverse, -1) + 1;
  if (method == "min") return low;
  if (method == "max") return high;
  return 0.5 * (low + high);
}

// log sum_j w_j N(x_i; y_j, cov) for every column x_i of x (d, m); y is (d, n).
Array log_gauss_sums(const Array& x, const Array& y, const Array& cov, const Array& weights) {
  const int64_t d = x.shape()[0], m = x.shape()[1], n = y.shape()[1];
  const Array chol = lax::linalg::cholesky(cov);
  // diff[i, j] = x_i - y_j, (m, n, d)
  const Array diff =
      tnp::expand_dims(tnp::transpose(x), 1) - tnp::expand_dims(tnp::transpose(y), 0);
  // whiten every pair: solve chol z = diff
  const Array white = lax::linalg::triangular_solve(
      chol, tnp::transpose(tnp::reshape(diff, {m * n, d})), /*left_side=*/true, /*lower=*/true);
  const Array maha = tnp::reshape(tnp::sum(white * white, 0), {m, n});
  const Array log_det = 2 * tnp::sum(tnp::log(tnp::diagonal(chol)));
  const Array log_norm = -0.5 * (static_cast<double>(d) * std::log(2 * std::numbers::pi) + log_det);
  return nn::logsumexp(-0.5 * maha + tnp::expand_dims(tnp::log(weights), 0), {.axis = 1}) +
         log_norm;
}

// jnp.cov(dataset, rowvar=True, bias=False, aweights=weights) for weights summing to 1.
Array weighted_cov(const Array& dataset, const Array& weights) {
  const Array v1 = tnp::sum(weights);
  const Array avg = tnp::sum(dataset * weights, 1, /*keepdims=*/true) / v1;
  const Array fact = v1 - tnp::sum(weights * weights) / v1;
  const Array xc = dataset - avg;
  return tnp::matmul(xc * weights, tnp::transpose(xc)) / fact;
}
}  // namespace

// ---------------------------------------------------------------- mode, rankdata, sem
std::pair<Array, Array> mode(const ArrayLike& a_, std::optional<int64_t> axis,
                             const std::string& nan_policy, bool keepdims) {
  check_nan_policy("mode", nan_policy, {"propagate"});
  Array a = a_.array();
  if (!axis) {
    a = tnp::ravel(a);
    axis = 0;
  }
  if (a.ndim() == 0) a = tnp::reshape(a, {1});
  const int64_t ax = normalize_axis("mode", *axis, a.ndim());
  if (a.shape()[ax] == 0) {
    throw ValueError(op_message("mode", "the axis " + std::to_string(ax) + " of a (shape " +
                                            shape_str(a.shape()) + ") is empty"));
  }
  const Array x = tnp::moveaxis(a, ax, -1);
  const Array equal = tnp::expand_dims(x, -1) == tnp::expand_dims(x, -2);
  const Array counts = tnp::astype(tnp::sum(equal, -1), DType::kInt32);
  const Array best = tnp::max(counts, -1, /*keepdims=*/true);
  // the smallest value among the most frequent: the others replaced by the slice's max
  const Array candidates = tnp::where(counts == best, x, tnp::max(x, -1, /*keepdims=*/true));
  Array value = tnp::min(candidates, -1);
  Array count = tnp::squeeze(best, -1);
  if (is_floating(x.dtype())) {
    value = tnp::where(tnp::any(tnp::isnan(x), -1), cst(x, kNaN), value);
  }
  if (keepdims) {
    value = tnp::expand_dims(value, ax);
    count = tnp::expand_dims(count, ax);
  }
  return {value, count};
}

Array rankdata(const ArrayLike& a_, const std::string& method, std::optional<int64_t> axis,
               const std::string& nan_policy) {
  check_nan_policy("rankdata", nan_policy, {"propagate"});
  if (method != "average" && method != "min" && method != "max" && method != "dense" &&
      method != "ordinal") {
    throw ValueError(op_message("rankdata", "unknown method '" + method +
                                                "': use 'average', 'min', 'max', 'dense' or "
                                                "'ordinal'"));
  }
  const Array& a = a_.array();
  if (!axis) return rank_last_axis(tnp::ravel(a), method);
  if (a.ndim() == 0) throw ValueError(op_message("rankdata", "axis given for a 0-d array"));
  const int64_t ax = normalize_axis("rankdata", *axis, a.ndim());
  return tnp::moveaxis(rank_last_axis(tnp::moveaxis(a, ax, -1), method), -1, ax);
}

Array sem(const ArrayLike& a_, std::optional<int64_t> axis, int64_t ddof,
          const std::string& nan_policy, bool keepdims) {
  check_nan_policy("sem", nan_policy, {"propagate", "omit"});
  Array a = a_.array();
  if (!is_floating(a.dtype())) a = tnp::astype(a, tnp::result_type({a, 1.0}));
  tnp::ReduceOptions o;
  if (axis) o.axis = *axis;
  o.ddof = static_cast<double>(ddof);
  o.keepdims = keepdims;
  if (nan_policy == "propagate") {
    const int64_t size = axis ? a.shape()[normalize_axis("sem", *axis, a.ndim())] : a.size();
    return tnp::std(a, o) / tnp::sqrt(tnp::scalar(static_cast<double>(size), a.dtype()));
  }
  tnp::ReduceOptions c;
  c.axis = o.axis;
  c.keepdims = keepdims;
  const Array count = tnp::astype(tnp::sum(!tnp::isnan(a), c), a.dtype());
  return tnp::nanstd(a, o) / tnp::sqrt(count);
}

// ---------------------------------------------------------------- gaussian_kde
GaussianKDE GaussianKDE::make(const ArrayLike& dataset_,
                              const std::variant<std::string, double, Array>& bw_method,
                              const std::optional<ArrayLike>& weights_) {
  const char* name = "gaussian_kde";
  Array dataset = tnp::atleast_2d(dataset_.array());
  if (!is_floating(dataset.dtype()))
    dataset = tnp::astype(dataset, tnp::result_type({dataset, 1.0}));
  if (dataset.size() <= 1) {
    throw ValueError(op_message(name, "`dataset` input should have multiple elements."));
  }
  if (dataset.ndim() != 2) {
    throw ValueError(op_message(
        name, "`dataset` must be (d, n) or (n,); got shape " + shape_str(dataset.shape())));
  }
  const DType dt = dataset.dtype();
  const int64_t d = dataset.shape()[0], n = dataset.shape()[1];
  GaussianKDE k;
  k.dataset = dataset;
  if (weights_) {
    Array w = tnp::astype(tnp::atleast_1d(weights_->array()), dt);
    w = w / tnp::sum(w);
    if (w.ndim() != 1) {
      throw ValueError(op_message(name, "`weights` input should be one-dimensional."));
    }
    if (w.shape()[0] != n) {
      throw ValueError(op_message(name, "`weights` input should be of length n (" +
                                            std::to_string(n) + "); got " +
                                            std::to_string(w.shape()[0])));
    }
    k.weights = w;
    k.neff = 1 / tnp::sum(w * w);
  } else {
    k.weights = tnp::full({n}, 1.0 / static_cast<double>(n), dt);
    k.neff = tnp::scalar(static_cast<double>(n), dt);
  }
  const double dd = static_cast<double>(d);
  Array factor;
  if (const auto* s = std::get_if<std::string>(&bw_method)) {
    if (*s == "scott") {
      factor = tnp::power(k.neff, -1.0 / (dd + 4));
    } else if (*s == "silverman") {
      factor = tnp::power(k.neff * (dd + 2) / 4.0, -1.0 / (dd + 4));
    } else {
      throw ValueError(
          op_message(name, "`bw_method` should be 'scott', 'silverman', a scalar or a callable."));
    }
  } else if (const auto* v = std::get_if<double>(&bw_method)) {
    factor = tnp::scalar(*v, dt);
  } else {
    factor = tnp::astype(std::get<Array>(bw_method), dt);
  }
  const Array data_cov = weighted_cov(dataset, k.weights);
  k.covariance = data_cov * (factor * factor);
  k.inv_cov = linalg::inv(data_cov) / (factor * factor);
  return k;
}

Array GaussianKDE::factor() const {
  return tnp::sqrt(covariance[{0, 0}] / weighted_cov(dataset, weights)[{0, 0}]);
}

Array GaussianKDE::logpdf(const ArrayLike& points_) const {
  Array points = tnp::astype(tnp::atleast_2d(points_.array()), dataset.dtype());
  const int64_t pd = points.shape()[0], m = points.shape()[1];
  if (pd != d()) {
    if (pd == 1 && m == d()) {
      points = tnp::reshape(points, {d(), 1});
    } else {
      throw ValueError(
          op_message("gaussian_kde.logpdf", "points have dimension " + std::to_string(pd) +
                                                ", dataset has dimension " + std::to_string(d())));
    }
  }
  return log_gauss_sums(points, dataset, covariance, weights);
}

Array GaussianKDE::evaluate(const ArrayLike& points) const { return tnp::exp(logpdf(points)); }

Array GaussianKDE::integrate_gaussian(const ArrayLike& mean_, const ArrayLike& cov_) const {
  const Array mean = tnp::astype(tnp::atleast_1d(tnp::squeeze(mean_.array())), dataset.dtype());
  const Array cov = tnp::astype(tnp::atleast_2d(cov_.array()), dataset.dtype());
  if (mean.shape() != Shape{d()}) {
    throw ValueError(op_message("gaussian_kde.integrate_gaussian",
                                "mean does not have dimension " + std::to_string(d())));
  }
  if (cov.shape() != Shape{d(), d()}) {
    throw ValueError(op_message("gaussian_kde.integrate_gaussian",
                                "covariance does not have dimension " + std::to_string(d())));
  }
  return tnp::exp(log_gauss_sums(tnp::expand_dims(mean, 1), dataset, covariance + cov, weights)[0]);
}

Array GaussianKDE::integrate_box_1d(const ArrayLike& low, const ArrayLike& high) const {
  if (d() != 1) {
    throw ValueError(op_message("gaussian_kde", "integrate_box_1d() only handles 1D pdfs"));
  }
  const Array sd = tnp::sqrt(covariance[{0, 0}]);
  const Array lo = (low - dataset[0]) / sd;
  const Array hi = (high - dataset[0]) / sd;
  return tnp::sum(weights * (sp::ndtr(hi) - sp::ndtr(lo)));
}

Array GaussianKDE::integrate_kde(const GaussianKDE& other) const {
  if (other.d() != d()) {
    throw ValueError(op_message("gaussian_kde.integrate_kde",
                                "KDEs are not the same dimensionality (" + std::to_string(d()) +
                                    " and " + std::to_string(other.d()) + ")"));
  }
  const Array logs = log_gauss_sums(other.dataset, dataset, covariance + other.covariance, weights);
  return tnp::sum(other.weights * tnp::exp(logs));
}

Array GaussianKDE::resample(const Array& key, const Shape& shape) const {
  const Array keys = random::split(key);
  const Array idx = random::choice(keys[0], n(), shape, /*replace=*/true, weights);
  const Array noise = random::multivariate_normal(keys[1], tnp::zeros({d()}, dataset.dtype()),
                                                  covariance, shape, dataset.dtype());
  return tnp::take(dataset, idx, 1) + tnp::moveaxis(noise, -1, 0);
}

}  // namespace tessera::scipy::stats
