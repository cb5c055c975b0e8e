// jnp.histogram, histogram_bin_edges, histogramdd, histogram2d and interp, composed from
// searchsorted, scatter-add
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
#include "tessera/numpy_manip.h"

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

// n + 1 edges evenly spaced from lo to hi (rank-0 arrays of dtype dt), widened by 0.5 each side
// when lo == hi; the last edge is hi exactly.
Array traced_edges(Array lo, Array hi, int64_t n, DType dt) {
  const Array same = lax::eq(lo, hi);
  const Array half = numpy::scalar(0.5, dt);
  lo = lax::select_n(same, {lo, lax::sub(lo, half)});
  hi = lax::select_n(same, {hi, lax::add(hi, half)});
  const Array step = lax::div(lax::sub(hi, lo), numpy::scalar(static_cast<double>(n), dt));
  const Array edges = lax::add(lo, lax::mul(lax::iota(dt, n + 1), step));
  return at(edges, {n}).set(hi);
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
  double lo = 0.0, hi = 1.0;  // NumPy's range for empty data
  const bool have_range = range.has_value();
  if (range.lo_array()) {
    // A range of arrays: traced ends give traced edges (JAX's asarray(range, dtype)).
    const Array& la = *range.lo_array();
    const Array& ha = *range.hi_array();
    check_defined(name.c_str(), la);
    check_defined(name.c_str(), ha);
    if (la.ndim() != 0 || ha.ndim() != 0)
      throw ValueError(op_message(name,
                                  "`range` must be either None or a sequence of scalars, "
                                  "got ends of shapes " +
                                      tuple_str(la.shape()) + " and " + tuple_str(ha.shape())));
    if (la.is_tracer() || ha.is_tracer())
      return traced_edges(convert(name.c_str(), la, dt), convert(name.c_str(), ha, dt), n, dt);
    lo = la.item_double();
    hi = ha.item_double();
  } else if (range) {
    lo = range.lo();
    hi = range.hi();
  } else if (a.is_tracer()) {
    // Traced data: the edges follow its min and max.
    return traced_edges(convert(name.c_str(), lax::reduce_min(a, {0}), dt),
                        convert(name.c_str(), lax::reduce_max(a, {0}), dt), n, dt);
  }
  if (have_range) {
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

namespace {
// The 1-based bin of each x (0: below the first edge, k = edges' length: above the last or NaN),
// the last edge counting in the last bin.
Array bin_of(const Array& x, const Array& edges) {
  const int64_t k = edges.shape()[0];
  const Array i = searchsorted(edges, x, "right");
  const Array last = lax::reshape(lax::slice(edges, {k - 1}, {k}), {});
  return lax::select_n(lax::eq(x, last), {i, filled(k - 1, DType::kInt32, i.shape())});
}
}  // namespace

HistogramDD histogramdd(const ArrayLike& sample0, const std::vector<HistogramBins>& bins,
                        const std::vector<HistogramRange>& range,
                        const std::optional<Array>& weights, bool density) {
  const char* op = "histogramdd";
  const Array& s0 = sample0.array();
  check_defined(op, s0);
  if (s0.ndim() != 2)
    throw ValueError(
        op_message(op, "jnp.histogramdd: sample must be a 2-D array of shape (N, D); got shape " +
                           tuple_str(s0.shape())));
  const int64_t N = s0.shape()[0], D = s0.shape()[1];
  DType dt;
  std::optional<Array> w;
  if (weights) {
    check_defined(op, *weights);
    if (weights->shape() != Shape{N})
      throw ValueError(op_message(
          op, "should have one weight for each sample. (jnp.histogramdd: sample.shape=" +
                  tuple_str(s0.shape()) + ", weights.shape=" + tuple_str(weights->shape()) + ")"));
    dt = inexact_of({s0, *weights});
    w = convert(op, *weights, dt);
  } else {
    dt = inexact_of({s0});
  }
  const Array sample = convert(op, s0, dt);
  if (!range.empty() && static_cast<int64_t>(range.size()) != D)
    throw ValueError(op_message(op, "For sample.shape=" + tuple_str(s0.shape()) +
                                        ", range must be a sequence of " + std::to_string(D) +
                                        " pairs or Nones; got " + std::to_string(range.size()) +
                                        " entries"));
  if (bins.empty() || (bins.size() != 1 && static_cast<int64_t>(bins.size()) != D))
    throw ValueError(op_message(
        op, "should be a bin for each dimension. (jnp.histogramdd: D=" + std::to_string(D) +
                ", got " + std::to_string(bins.size()) + " bins)"));
  HistogramDD r;
  std::vector<Array> idx;
  Shape nbins;
  for (int64_t i = 0; i < D; ++i) {
    const Array col = lax::reshape(lax::slice_in_dim(sample, i, i + 1, 1, 1), {N});
    const Array e = bin_edges(op, col, bins.size() == 1 ? bins[0] : bins[static_cast<size_t>(i)],
                              range.empty() ? HistogramRange() : range[static_cast<size_t>(i)], dt);
    idx.push_back(bin_of(col, e));
    nbins.push_back(e.shape()[0] + 1);
    r.edges.push_back(e);
  }
  // One bincount over the flat bin of each point; the outer (out of range) bins cut away.
  const Array flat = ravel_multi_index(idx, nbins, "clip");
  Array hist = lax::reshape(bincount(flat, w, 0, shape_size(nbins)), nbins);
  std::vector<int64_t> start(static_cast<size_t>(D), 1), stop;
  for (int64_t b : nbins) stop.push_back(b - 1);
  hist = lax::slice(hist, start, stop);
  if (density) {
    hist = convert(op, hist, dt);
    std::vector<int64_t> all(static_cast<size_t>(D));
    for (int64_t i = 0; i < D; ++i) all[static_cast<size_t>(i)] = i;
    hist = divide(hist, lax::reduce_sum(hist, all));
    for (int64_t i = 0; i < D; ++i) {
      Shape s(static_cast<size_t>(D), 1);
      s[static_cast<size_t>(i)] = nbins[static_cast<size_t>(i)] - 2;
      hist = divide(hist, lax::reshape(diff(r.edges[static_cast<size_t>(i)]), s));
    }
  }
  r.hist = hist;
  return r;
}

std::vector<Array> histogram2d(const ArrayLike& x0, const ArrayLike& y0,
                               const std::vector<HistogramBins>& bins,
                               const std::vector<HistogramRange>& range,
                               const std::optional<Array>& weights, bool density) {
  const char* op = "histogram2d";
  const Array& x = x0.array();
  const Array& y = y0.array();
  check_defined(op, x);
  check_defined(op, y);
  if (x.ndim() != 1 || y.ndim() != 1 || x.shape() != y.shape())
    throw ValueError(op_message(
        op, "jnp.histogram2d: x and y must be 1-D arrays of the same length; got shapes " +
                tuple_str(x.shape()) + " and " + tuple_str(y.shape())));
  if (bins.size() != 1 && bins.size() != 2)
    throw ValueError(op_message(op,
                                "jnp.histogram2d: bins must be one entry for both "
                                "dimensions or two (one per dimension); got " +
                                    std::to_string(bins.size())));
  const std::vector<Array> xy = promote(op, {x, y});
  HistogramDD r = histogramdd(stack(xy, 1), bins, range, weights, density);
  return {r.hist, r.edges[0], r.edges[1]};
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
