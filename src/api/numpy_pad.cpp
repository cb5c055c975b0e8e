// tessera::numpy.pad and its modes (numpy_manip.h). Constant padding is one lax.pad (one per axis
// and side when the values differ: later axes cover the corners, as NumPy); the other modes build
// each axis's borders from slices of the (already partly padded) array and join them with one
// concatenate per axis, extending several times where the border is wider than the array, as
// NumPy's iterative definition does. Per-side values (constant_values, end_values, stat_length)
// are NumPy's: one pair per axis or one for all.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/numpy_sort.h"

namespace tessera::numpy {

using namespace detail;

namespace {

Array bcast_along(const Array& edge, int64_t width, int64_t ax) {
  Shape s = edge.shape();
  s[ax] = width;
  std::vector<int64_t> dims(static_cast<size_t>(edge.ndim()));
  for (int64_t i = 0; i < edge.ndim(); ++i) dims[i] = i;
  return lax::broadcast_in_dim(edge, s, dims);
}

Array join(const Array& before, const Array& x, const Array& after, int64_t ax) {
  std::vector<Array> parts;
  if (before.defined() && before.shape()[ax] > 0) parts.push_back(before);
  parts.push_back(x);
  if (after.defined() && after.shape()[ax] > 0) parts.push_back(after);
  return parts.size() == 1 ? x : lax::concatenate(parts, ax);
}

// reflect ("reflect": mirror without the edge; "symmetric": with it), one step of at most the
// available width; odd: 2 * edge - mirrored.
Array mirror_once(const Array& x, int64_t before, int64_t after, int64_t ax, bool symmetric,
                  bool odd) {
  const int64_t n = x.shape()[ax];
  const int64_t skip = symmetric ? 0 : 1;
  Array b, a;
  if (before > 0) {
    b = lax::rev(lax::slice_in_dim(x, skip, skip + before, 1, ax), {ax});
    if (odd) {
      Array e = lax::slice_in_dim(x, 0, 1, 1, ax);
      b = lax::sub(lax::mul(numpy::scalar(2.0, x.dtype()), bcast_along(e, before, ax)), b);
    }
  }
  if (after > 0) {
    a = lax::rev(lax::slice_in_dim(x, n - skip - after, n - skip, 1, ax), {ax});
    if (odd) {
      Array e = lax::slice_in_dim(x, n - 1, n, 1, ax);
      a = lax::sub(lax::mul(numpy::scalar(2.0, x.dtype()), bcast_along(e, after, ax)), a);
    }
  }
  return join(b, x, a, ax);
}

// A per-side argument as one (before, after) pair per axis: `all` on every side when v is empty.
template <class T>
std::vector<std::pair<T, T>> per_axis(const std::vector<std::pair<T, T>>& v, T all, int64_t ndim,
                                      const char* name) {
  const size_t n = static_cast<size_t>(ndim);
  if (v.empty()) return std::vector<std::pair<T, T>>(n, {all, all});
  if (v.size() == 1) return std::vector<std::pair<T, T>>(n, v[0]);
  if (v.size() != n)
    throw ValueError(op_message("pad", std::string(name) + " has " + std::to_string(v.size()) +
                                           " (before, after) pairs for an array of " +
                                           std::to_string(ndim) +
                                           " axes; give one pair per axis or one for all"));
  return v;
}

// The statistic of `mode` over region along ax, kept as a size-1 axis, in x's dtype.
Array stat_of(const Array& region, int64_t ax, const std::string& mode, DType dtype) {
  Array stat;
  if (mode == "maximum") {
    stat = lax::reduce_max(region, {ax});
  } else if (mode == "minimum") {
    stat = lax::reduce_min(region, {ax});
  } else {
    // mean, or median (of the values promoted to floating, as jnp.median): integer results
    // are rounded half to even, as NumPy's pad rounds them.
    stat = mode == "median" ? median(region, AxisArg(ax)) : mean(region, ax);
    if (!is_floating(dtype)) stat = lax::round(stat, lax::RoundingMethod::kToNearestEven);
    stat = lax::convert_element_type(stat, dtype);
  }
  return lax::expand_dims(stat, {ax});
}

struct AxisPad {
  int64_t before = 0, after = 0;
  std::pair<double, double> ends{0.0, 0.0};         // linear_ramp's end values
  std::optional<std::pair<int64_t, int64_t>> stat;  // stat_length, when given
};

Array pad_axis(const Array& x, const AxisPad& p, int64_t ax, const PadOptions& o) {
  const int64_t before = p.before, after = p.after;
  const std::string& mode = o.mode;
  const int64_t n = x.shape()[ax];
  if (before == 0 && after == 0) return x;
  if (mode == "edge" || ((mode == "reflect") && n == 1)) {
    if (n == 0)
      throw ValueError(op_message("pad", "can't extend an empty axis " + std::to_string(ax) +
                                             " using mode '" + mode + "'"));
    return join(bcast_along(lax::slice_in_dim(x, 0, 1, 1, ax), before, ax), x,
                bcast_along(lax::slice_in_dim(x, n - 1, n, 1, ax), after, ax), ax);
  }
  if (mode == "reflect" || mode == "symmetric") {
    if (n == 0)
      throw ValueError(op_message("pad", "can't extend an empty axis " + std::to_string(ax) +
                                             " using mode '" + mode + "'"));
    const bool sym = mode == "symmetric";
    const bool odd = o.reflect_type == "odd";
    Array r = x;
    int64_t b = before, a = after;
    while (b > 0 || a > 0) {
      // NumPy extends by at most the original width per step, mirroring the padded array.
      const int64_t cap = sym ? n : n - 1;
      const int64_t cb = std::min(b, cap), ca = std::min(a, cap);
      r = mirror_once(r, cb, ca, ax, sym, odd);
      b -= cb;
      a -= ca;
    }
    return r;
  }
  if (mode == "wrap") {
    if (n == 0)
      throw ValueError(op_message(
          "pad", "can't extend an empty axis " + std::to_string(ax) + " using mode 'wrap'"));
    Array r = x;
    int64_t b = before, a = after;
    while (b > 0 || a > 0) {
      const int64_t cb = std::min(b, n), ca = std::min(a, n);
      const int64_t m = r.shape()[ax];
      // The original period sits at [b_done, b_done + n) of r; wrapping copies from it.
      const int64_t off = before - b;
      Array bp = cb > 0 ? lax::slice_in_dim(r, off + n - cb, off + n, 1, ax) : Array();
      Array ap = ca > 0 ? lax::slice_in_dim(r, m - (after - a) - n, m - (after - a) - n + ca, 1, ax)
                        : Array();
      r = join(bp, r, ap, ax);
      b -= cb;
      a -= ca;
    }
    return r;
  }
  if (mode == "linear_ramp") {
    if (n == 0)
      throw ValueError(op_message(
          "pad", "can't extend an empty axis " + std::to_string(ax) + " using mode 'linear_ramp'"));
    const DType comp = is_floating(x.dtype()) ? x.dtype() : to_inexact(x.dtype());
    auto ramp = [&](int64_t w, const Array& edge, bool rising, double end_value) -> Array {
      if (w == 0) return Array();
      // NumPy: linspace(end_value, edge, w, endpoint=False), reversed on the after side.
      Shape s = edge.shape();
      s[ax] = w;
      Array t =
          lax::div(lax::broadcasted_iota(comp, s, ax), numpy::scalar(static_cast<double>(w), comp));
      if (!rising) t = lax::rev(t, {ax});
      const Array e = bcast_along(lax::convert_element_type(edge, comp), w, ax);
      const Array end = numpy::scalar(end_value, comp);
      Array v = lax::add(end, lax::mul(t, lax::sub(e, end)));
      // jnp builds the ramp with linspace, which floors for integer dtypes.
      if (is_integer(x.dtype())) v = lax::floor(v);
      return lax::convert_element_type(v, x.dtype());
    };
    return join(ramp(before, lax::slice_in_dim(x, 0, 1, 1, ax), true, p.ends.first), x,
                ramp(after, lax::slice_in_dim(x, n - 1, n, 1, ax), false, p.ends.second), ax);
  }
  if (mode == "maximum" || mode == "minimum" || mode == "mean" || mode == "median") {
    if (n == 0)
      throw ValueError(op_message("pad", "can't extend an empty axis " + std::to_string(ax) +
                                             " using mode '" + mode + "'"));
    if (!p.stat) {
      const Array stat = stat_of(x, ax, mode, x.dtype());
      return join(bcast_along(stat, before, ax), x, bcast_along(stat, after, ax), ax);
    }
    // NumPy's stat_length: the statistic of at most that many values at each end.
    auto side = [&](int64_t w, int64_t len, bool at_start) -> Array {
      if (w == 0) return Array();
      const int64_t k = std::min(len, n);
      if (k == 0)
        throw ValueError(op_message("pad", "stat_length of 0 yields no value for padding"));
      Array region =
          at_start ? lax::slice_in_dim(x, 0, k, 1, ax) : lax::slice_in_dim(x, n - k, n, 1, ax);
      return bcast_along(stat_of(region, ax, mode, x.dtype()), w, ax);
    };
    return join(side(before, p.stat->first, true), x, side(after, p.stat->second, false), ax);
  }
  throw ValueError(op_message(
      "pad", "unimplemented padding mode '" + mode +
                 "'; the modes are constant, edge, reflect, symmetric, wrap, linear_ramp, "
                 "maximum, minimum, mean, median and empty"));
}

}  // namespace

Array pad(const Array& x, const PadWidth& pad_width_in, const PadOptions& o) {
  const char* op = "pad";
  check_defined(op, x);
  PadWidth pw = pad_width_in;
  if (pw.size() == 1 && x.ndim() != 1) pw.assign(static_cast<size_t>(x.ndim()), pw[0]);
  if (static_cast<int64_t>(pw.size()) != x.ndim())
    throw ValueError(op_message(op, "pad_width has " + std::to_string(pad_width_in.size()) +
                                        " (before, after) pairs for an array of shape " +
                                        shape_str(x.shape()) +
                                        "; give one pair per axis or one for all"));
  for (const auto& [b, a] : pw)
    if (b < 0 || a < 0)
      throw ValueError(op_message(op, "index can't contain negative values (pad_width)"));
  const int64_t nd = x.ndim();
  if (o.mode == "constant" || o.mode == "empty") {
    const PadValues cv = o.mode == "empty"
                             ? PadValues(static_cast<size_t>(nd), {0.0, 0.0})
                             : per_axis(o.constant_values, o.constant_value, nd, "constant_values");
    bool uniform = true;
    for (const auto& [b, a] : cv) uniform = uniform && b == cv[0].first && a == cv[0].first;
    if (uniform || nd == 0) {
      std::vector<lax::PadConfig> cfg;
      for (const auto& [b, a] : pw) cfg.push_back({b, a, 0});
      return lax::pad(x, numpy::scalar(nd ? cv[0].first : o.constant_value, x.dtype()), cfg);
    }
    Array r = x;
    for (int64_t ax = 0; ax < nd; ++ax) {
      for (int side = 0; side < 2; ++side) {
        const int64_t w = side == 0 ? pw[ax].first : pw[ax].second;
        if (w == 0) continue;
        std::vector<lax::PadConfig> cfg(static_cast<size_t>(nd), {0, 0, 0});
        (side == 0 ? cfg[ax].low : cfg[ax].high) = w;
        const double v = side == 0 ? cv[ax].first : cv[ax].second;
        r = lax::pad(r, numpy::scalar(v, x.dtype()), cfg);
      }
    }
    return r;
  }
  const PadValues ends = per_axis(o.end_values, o.end_value, nd, "end_values");
  PadWidth stat;
  if (o.stat_length) {
    stat = per_axis<int64_t>(*o.stat_length, 0, nd, "stat_length");
    for (const auto& [b, a] : stat)
      if (b < 0 || a < 0)
        throw ValueError(op_message(op, "index can't contain negative values (stat_length)"));
  }
  Array r = x;
  for (int64_t ax = 0; ax < nd; ++ax) {
    AxisPad p{pw[ax].first, pw[ax].second, ends[ax], std::nullopt};
    if (o.stat_length) p.stat = stat[ax];
    r = pad_axis(r, p, ax, o);
  }
  return r;
}

Array pad(const Array& x, int64_t pad_width, const PadOptions& options) {
  return pad(x,
             PadWidth(static_cast<size_t>(std::max<int64_t>(x.ndim(), 1)), {pad_width, pad_width}),
             options);
}

}  // namespace tessera::numpy
