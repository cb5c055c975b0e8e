// jnp.histogram, histogram_bin_edges and interp, composed from searchsorted, scatter-add
// (`at`), gathers and where as JAX composes them. Semantics: include/tessera/numpy_index_funcs.h.
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "api/numpy_index_util.h"
#include "api/numpy_internal.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_sort.h"
#include "tessera/numpy_index_funcs.h"
#include "tessera/numpy_indexing.h"

namespace tessera::numpy {

using namespace detail;

namespace {

// Python's repr of a float: "3.0", "0.1", "nan".
std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// JAX's promote_dtypes_inexact of the given dtypes' result.
DType inexact_of(const std::vector<Array>& xs) { return to_inexact(typed_result(xs).dtype); }

// The bin count of an int `bins` (or a rank-0 integer array), which sets the result's shape.
int64_t bin_count(const std::string& name, const HistogramBins& bins) {
  int64_t n = 0;
  if (const int64_t* i = std::get_if<int64_t>(&bins)) {
    n = *i;
  } else {
    const Array& b = std::get<Array>(bins);
    const Array* v = concrete_of(b);
    if (!v)
      throw ConcretizationError(op_message(
          name, "The bins argument of jnp." + name +
                    " must be concrete when it is a number of bins (it sets the shape of the "
                    "result); pass a Python int, or an array of bin edges."));
    if (!is_integer(b.dtype()))
      throw TypeError(op_message(name, "jnp." + name +
                                           ": bins must be an integer or a 1-D array of bin "
                                           "edges; got a rank-0 array of dtype " +
                                           dtype_str(b.dtype())));
    n = v->item<int64_t>();
  }
  if (n < 1)
    throw ValueError(op_message(
        name,
        "jnp." + name + ": `bins` must be positive, when an integer; got " + std::to_string(n)));
  return n;
}

// The bin edges in dtype dt for the 1-D data a (histogram_bin_edges' rules).
Array bin_edges(const std::string& name, const Array& a, const HistogramBins& bins,
                const HistogramRange& range, DType dt) {
  if (const Array* b = std::get_if<Array>(&bins)) {
    check_defined(name.c_str(), *b);
    if (b->ndim() == 1) {
      const Array edges = convert(name.c_str(), *b, dt);
      if (edges.shape()[0] == 0)
        throw ValueError(op_message(
            name, "jnp." + name + ": `bins` must hold at least one edge, when an array"));
      if (const Array* host = concrete_of(edges)) {
        const char* p = static_cast<const char*>(host->raw_data());
        const size_t w = itemsize(dt);
        for (int64_t i = 1; i < host->size(); ++i)
          if (load_as_double(dt, p + (i - 1) * w) > load_as_double(dt, p + i * w))
            throw ValueError(op_message(
                name, "jnp." + name + ": `bins` must increase monotonically, when an array"));
      }
      return edges;
    }
    if (b->ndim() != 0)
      throw ValueError(op_message(name, "jnp." + name +
                                            ": bins must be an integer or a 1-D array of "
                                            "edges; got an array of shape " +
                                            tuple_str(b->shape())));
  }
  const int64_t n = bin_count(name, bins);
  if (!range && a.is_tracer()) {
    // Traced data: the edges follow its min and max.
    Array lo = convert(name.c_str(), lax::reduce_min(a, {0}), dt);
    Array hi = convert(name.c_str(), lax::reduce_max(a, {0}), dt);
    const Array same = lax::eq(lo, hi);
    const Array half = numpy::scalar(0.5, dt);
    lo = lax::select_n(same, {lo, lax::sub(lo, half)});
    hi = lax::select_n(same, {hi, lax::add(hi, half)});
    const Array step = lax::div(lax::sub(hi, lo), numpy::scalar(static_cast<double>(n), dt));
    const Array edges = lax::add(lo, lax::mul(lax::iota(dt, n + 1), step));
    return at(edges, {n}).set(hi);
  }
  double lo = 0.0, hi = 1.0;  // NumPy's range for empty data
  if (range) {
    lo = range->first;
    hi = range->second;
    if (lo > hi)
      throw ValueError(op_message(
          name, "jnp." + name + ": max must be larger than min in range parameter; got range=(" +
                    py_float(lo) + ", " + py_float(hi) + ")"));
  } else if (a.size() > 0) {
    const Array ad = convert(name.c_str(), a, dt);
    lo = lax::reduce_min(ad, {0}).item_double();
    hi = lax::reduce_max(ad, {0}).item_double();
  }
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw ValueError(op_message(name, "jnp." + name + ": autodetected range of [" + py_float(lo) +
                                          ", " + py_float(hi) +
                                          "] is not finite; pass a finite range"));
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  // NumPy's edges: a double-precision linspace, rounded once to dt.
  std::vector<double> e(static_cast<size_t>(n + 1));
  const double step = (hi - lo) / static_cast<double>(n);
  for (int64_t i = 0; i <= n; ++i) e[static_cast<size_t>(i)] = static_cast<double>(i) * step + lo;
  e.back() = hi;
  return numpy::array(e, {n + 1}, dt);
}

}  // namespace

Array histogram_bin_edges(const ArrayLike& a0, const HistogramBins& bins,
                          const HistogramRange& range, const std::optional<Array>& weights) {
  (void)weights;  // accepted for NumPy's signature; the edges do not depend on it
  const char* op = "histogram_bin_edges";
  const Array& a = a0.array();
  check_defined(op, a);
  return bin_edges(op, flat1(a), bins, range, inexact_of({a}));
}

std::vector<Array> histogram(const ArrayLike& a0, const HistogramBins& bins,
                             const HistogramRange& range, const std::optional<Array>& weights,
                             bool density) {
  const char* op = "histogram";
  const Array& a = a0.array();
  check_defined(op, a);
  DType dt;
  Array w;
  if (!weights) {
    dt = inexact_of({a});
    w = filled(1, dt, {a.size()});
  } else {
    check_defined(op, *weights);
    if (weights->shape() != a.shape())
      throw ValueError(op_message(
          op, "weights should have the same shape as a. (jnp.histogram: got a.shape=" +
                  tuple_str(a.shape()) + ", weights.shape=" + tuple_str(weights->shape()) + ")"));
    dt = inexact_of({a, *weights});
    w = flat1(convert(op, *weights, dt));
  }
  const Array x = convert(op, flat1(a), dt);
  const Array edges = bin_edges(op, x, bins, range, dt);
  const int64_t k = edges.shape()[0];
  // 1-based bin of each x: 0 below the first edge, k above the last (or NaN: dropped); the
  // last edge counts in the last bin.
  const Array i = searchsorted(edges, x, "right");
  const Array last = lax::reshape(lax::slice(edges, {k - 1}, {k}), {});
  const Array bin = lax::select_n(lax::eq(x, last), {i, filled(k - 1, DType::kInt32, i.shape())});
  Array counts =
      at(lax::broadcast_in_dim(numpy::scalar(0.0, dt), {k}, {}), {bin}).add(w, mode_opt(kDropMode));
  counts = lax::slice(counts, {1}, {k});
  if (density) counts = divide(divide(counts, diff(edges)), lax::reduce_sum(counts, {0}));
  return {counts, edges};
}

Array interp(const ArrayLike& x0, const ArrayLike& xp0, const ArrayLike& fp0, const InterpEnd& left,
             const InterpEnd& right, const std::optional<ArrayLike>& period) {
  const char* op = "interp";
  Array x = x0.array(), xp = xp0.array(), fp = fp0.array();
  check_defined(op, x);
  check_defined(op, xp);
  check_defined(op, fp);
  if (xp.shape() != fp.shape() || xp.ndim() != 1)
    throw ValueError(op_message(op,
                                "xp and fp must be one-dimensional arrays of equal size "
                                "(jnp.interp: got shapes " +
                                    tuple_str(xp.shape()) + " and " + tuple_str(fp.shape()) + ")"));
  if (xp.shape()[0] == 0)
    throw ValueError(op_message(op,
                                "jnp.interp: xp and fp must not be empty (array of sample "
                                "points is empty)"));
  const DType dt = inexact_of({x, xp});
  x = convert(op, x, dt);
  xp = convert(op, xp, dt);
  fp = convert(op, fp, to_inexact(fp.dtype()));
  bool extrapolate[2] = {false, false};
  const InterpEnd* ends[2] = {&left, &right};
  const char* names[2] = {"left", "right"};
  for (int s = 0; s < 2; ++s)
    if (const auto& m = ends[s]->mode()) {
      if (*m != "extrapolate")
        throw ValueError(op_message(op, std::string("the only valid string value of `") + names[s] +
                                            "` is 'extrapolate', got: " + py_repr(*m)));
      extrapolate[s] = true;
    }
  if (period) {
    const Array& p0 = period->array();
    check_defined(op, p0);
    if (p0.ndim() != 0)
      throw ValueError(
          op_message(op, "period must be a scalar; got shape " + tuple_str(p0.shape())));
    if (const Array* host = concrete_of(p0))
      if (host->item_double() == 0.0)
        throw ValueError(op_message(op, "jnp.interp: period must be a non-zero value"));
    const Array p = lax::abs(convert(op, p0, dt));
    x = remainder(x, p);
    std::tie(xp, fp) = lax::sort_key_val(remainder(xp, p), fp);
    const int64_t m = xp.shape()[0];
    xp = lax::concatenate(
        {lax::sub(lax::slice(xp, {m - 1}, {m}), p), xp, lax::add(lax::slice(xp, {0}, {1}), p)}, 0);
    fp = lax::concatenate({lax::slice(fp, {m - 1}, {m}), fp, lax::slice(fp, {0}, {1})}, 0);
  }
  const int64_t n = xp.shape()[0];
  const Array f_first = lax::reshape(lax::slice(fp, {0}, {1}), {});
  const Array f_last = lax::reshape(lax::slice(fp, {n - 1}, {n}), {});
  Array out;
  if (n == 1) {
    out = broadcast_to(f_first, x.shape());
  } else {
    const Array i =
        lax::clamp(iconst(1, kIndexI32), searchsorted(xp, x, "right"), iconst(n - 1, kIndexI32));
    const Array im1 = lax::sub(i, iconst(1, kIndexI32));
    const IndexOptions clip = mode_opt(GatherScatterMode::kClip);
    const Array x0v = index_get(xp, {im1}, clip), x1v = index_get(xp, {i}, clip);
    const Array f0 = index_get(fp, {im1}, clip), f1 = index_get(fp, {i}, clip);
    const Array dx = lax::sub(x1v, x0v);
    // Coincident points: the left value, with a finite (zero) slope for gradients. The
    // threshold is spacing(eps) of dt (bfloat16 uses float32's, as the Python package).
    const int p = dt == DType::kFloat64 ? 52 : dt == DType::kFloat16 ? 10 : 23;
    const double tiny = std::ldexp(1.0, -2 * p);
    const Array flat = lax::le(lax::abs(dx), numpy::scalar(tiny, dt));
    const Array t = lax::div(
        lax::sub(x, x0v),
        lax::select_n(flat, {dx, lax::broadcast_in_dim(numpy::scalar(1.0, dt), dx.shape(), {})}));
    // The weighted form is exact at both ends of a segment (t = 0 or 1).
    const Array blend = add(multiply(f0, subtract(1, t)), multiply(f1, t));
    out = where(flat, f0, blend);
  }
  if (!period) {
    const Array x_first = lax::reshape(lax::slice(xp, {0}, {1}), {});
    const Array x_last = lax::reshape(lax::slice(xp, {n - 1}, {n}), {});
    if (!extrapolate[0]) out = where(less(x, x_first), left.value() ? *left.value() : f_first, out);
    if (!extrapolate[1])
      out = where(greater(x, x_last), right.value() ? *right.value() : f_last, out);
  }
  return out;
}

}  // namespace tessera::numpy
