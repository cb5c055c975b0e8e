// jnp.sort, argsort, lexsort, sort_complex, and the order statistics (quantile, percentile,
// median and their nan* forms): jnp's definitions restated over lax.sort.
//
// The statistics pick the sorted elements at their positions without gather: a scalar q of
// quantile/percentile/median has one position for every slice — a dynamic slice along the axis;
// per-slice positions (the nan* forms count each slice's non-NaN elements) or a vector q use one
// compare of an iota along the axis with the positions, a select (other elements -inf) and a max
// reduction over the axis — O(elements × len(q)). Both are exact (the element's own bits) and
// differentiable through the sort's, dynamic_slice's and the reduction's rules. A slice holding
// a NaN gives NaN (quantile): after the sort, its last element is NaN.
#include "tessera/numpy_sort.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "api/numpy_reduce_util.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_sort.h"

namespace tessera::numpy {

using namespace detail;

namespace {

int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ValueError(op_message(op, "axis " + std::to_string(axis) +
                                        " is out of bounds for array of dimension " +
                                        std::to_string(ndim)));
  return axis < 0 ? axis + ndim : axis;
}

// The index dtype of positions along an axis of n elements (jnp's choice).
DType index_dtype(int64_t n) {
  return n >= (int64_t{1} << 31) ? DType::kInt64 : default_int_dtype();
}

void check_sortable(const char* op, const Array& x) {
  check_defined(op, x);
  if (is_extended(x.dtype()))
    throw TypeError(op_message(op, std::string(op) + " does not accept dtype " +
                                       dtype_str(x.dtype()) + "; it sorts numbers and bools."));
}

enum class Method { kLinear, kLower, kHigher, kMidpoint, kNearest };

Method parse_method(const char* op, const std::string& m) {
  if (m == "linear") return Method::kLinear;
  if (m == "lower") return Method::kLower;
  if (m == "higher") return Method::kHigher;
  if (m == "midpoint") return Method::kMidpoint;
  if (m == "nearest") return Method::kNearest;
  throw ValueError(op_message(
      op,
      "method can only be 'linear', 'lower', 'higher', 'midpoint', or 'nearest', got '" + m + "'"));
}

Shape concat_shapes(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

// The elements of a (shape S, sorted along ax) at integer positions idx (shape qs + S with
// size 1 at ax, or broadcastable to it): shape qs + S without ax.
Array pick(const Array& a, const Array& idx, const Shape& qs, int64_t ax) {
  const int64_t qn = static_cast<int64_t>(qs.size());
  const Shape full = concat_shapes(qs, a.shape());
  std::vector<int64_t> bdims;
  for (int64_t d = 0; d < a.ndim(); ++d) bdims.push_back(qn + d);
  const Array vals = lax::broadcast_in_dim(a, full, bdims);
  const Array mask = lax::eq(lax::broadcasted_iota(idx.dtype(), full, qn + ax), idx);
  const Array fill = broadcast_to_shape(
      constant(-std::numeric_limits<double>::infinity(), TypedDType{a.dtype(), false}), full);
  return lax::reduce_max(lax::select_n(mask, {fill, vals}), {qn + ax});
}

// jnp's _quantile (squash_nans: the nan* forms).
Array quantile_impl(const char* op, const Array& a0, const Array& q0, const AxisArg& axis,
                    const std::string& method, bool keepdims, bool squash_nans) {
  const Method m = parse_method(op, method);
  check_sortable(op, a0);
  check_sortable(op, q0);
  Array a = promote_inexact(op, {a0})[0];
  const DType adt = a.dtype();
  if (q0.ndim() > 1)
    throw ValueError(op_message(op, "q must be have rank <= 1, got shape " + tuple_str(q0.shape()) +
                                        "; pass a scalar or a 1-d array of quantiles."));
  const DType qdt = to_inexact(q0.dtype());
  const Array q = convert(op, q0, qdt);
  const Shape qs = q.shape();
  const int64_t qn = q.ndim();

  // The axis to reduce, after flattening (none) or merging several axes at the end (a tuple).
  std::optional<Shape> keep_shape;  // the keepdims shape when axes were merged
  int64_t ax = 0;
  const Axes& axes = axis.axes();
  if (!axes) {
    if (keepdims) keep_shape = Shape(static_cast<size_t>(a.ndim()), 1);
    a = lax::reshape(a, {a.size()});
  } else if (axes->size() == 1) {
    ax = canonical_axis(op, (*axes)[0], a.ndim());
  } else {
    const int64_t nd = a.ndim();
    std::vector<int64_t> red;
    for (int64_t x : *axes) red.push_back(canonical_axis(op, x, nd));
    std::vector<int64_t> sorted_red = red;
    std::sort(sorted_red.begin(), sorted_red.end());
    if (std::adjacent_find(sorted_red.begin(), sorted_red.end()) != sorted_red.end())
      throw ValueError(op_message(op, "repeated axis in " + tuple_str(*axes)));
    Shape ks = a.shape(), kept;
    std::vector<int64_t> perm;
    int64_t merged = 1;
    for (int64_t d = 0; d < nd; ++d)
      if (!std::binary_search(sorted_red.begin(), sorted_red.end(), d)) {
        perm.push_back(d);
        kept.push_back(a.shape()[d]);
      }
    for (int64_t d : sorted_red) {
      perm.push_back(d);
      merged *= a.shape()[d];
      ks[d] = 1;
    }
    keep_shape = ks;
    a = lax::reshape(lax::transpose(a, perm), concat_shapes(kept, {merged}));
    ax = a.ndim() - 1;
  }
  const Shape s = a.shape();
  const int64_t r = a.ndim();
  const int64_t n = s[ax];
  Shape red_shape = s;  // the reduced shape with the axis kept as size 1
  red_shape[ax] = 1;
  Shape rest = s;
  rest.erase(rest.begin() + ax);
  auto finish = [&](Array res) {  // res: qs + rest
    if (keepdims) {
      res = keep_shape ? lax::reshape(res, concat_shapes(qs, *keep_shape))
                       : lax::expand_dims(res, {qn + ax});
    }
    return convert(op, res, adt);
  };
  if (n == 0)
    return finish(broadcast_to_shape(constant(std::nan(""), TypedDType{adt, false}),
                                     concat_shapes(qs, rest)));

  a = lax::sort(a, ax);
  // quantile: a slice holding a NaN gives NaN. NaNs sort last, so its last element tells.
  Array nan_slice;
  if (!squash_nans)
    nan_slice = lax::squeeze(isnan_lax(lax::slice_in_dim(a, n - 1, n, 1, ax)), {ax});

  const Shape ones_r(static_cast<size_t>(r), 1);
  const Array qe = lax::reshape(q, concat_shapes(qs, ones_r));
  Array last;  // the last valid position: n - 1, or the non-NaN count - 1 per slice
  if (squash_nans) {
    const Array valid = convert(op, lax::bitwise_not(isnan_lax(a)), qdt);
    const Array counts = lax::reshape(lax::reduce_sum(valid, {ax}),
                                      concat_shapes(Shape(static_cast<size_t>(qn), 1), red_shape));
    last = lax::sub(counts, constant(1.0, TypedDType{qdt, false}));
  } else {
    last = constant(static_cast<double>(n - 1), TypedDType{qdt, false});
  }
  const Array zero = constant(0.0, TypedDType{qdt, false});
  const Array pos = lax::mul(qe, last);
  const Array low = lax::floor(pos), high = lax::ceil(pos);
  const Array hw = lax::sub(pos, low);
  const Array lw = lax::sub(constant(1.0, TypedDType{qdt, false}), hw);
  const DType idt = index_dtype(n);
  auto clamp_index = [&](const Array& p) {
    return lax::convert_element_type(lax::max(zero, lax::min(p, last)), idt);
  };
  // One position for every slice (quantile of a scalar q): a dynamic slice; otherwise the
  // masked reduction (O(elements) per quantile).
  auto select_at = [&](const Array& p) {
    const Array i = clamp_index(p);
    if (squash_nans || qn > 0) return pick(a, i, qs, ax);
    return lax::squeeze(lax::dynamic_slice_in_dim(a, lax::reshape(i, {}), 1, ax), {ax});
  };
  const Array lowv = select_at(low), highv = select_at(high);
  const Shape out = concat_shapes(qs, rest);
  auto finish_nan = [&](const Array& res) {
    if (squash_nans) return finish(res);
    const Array mask = broadcast_to_shape(nan_slice, out);
    const Array nan =
        broadcast_to_shape(constant(std::nan(""), TypedDType{res.dtype(), false}), out);
    return finish(lax::select_n(mask, {res, nan}));
  };
  // Weights: qs + (red_shape or ones) without the axis, broadcast to the result.
  auto weight = [&](const Array& w) { return broadcast_to_shape(lax::squeeze(w, {qn + ax}), out); };
  switch (m) {
    case Method::kLinear:
      return finish_nan(lax::add(lax::mul(convert(op, lowv, qdt), weight(lw)),
                                 lax::mul(convert(op, highv, qdt), weight(hw))));
    case Method::kLower:
      return finish_nan(lowv);
    case Method::kHigher:
      return finish_nan(highv);
    case Method::kNearest: {
      const Array pred = weight(lax::le(hw, constant(0.5, TypedDType{qdt, false})));
      return finish_nan(lax::select_n(pred, {highv, lowv}));
    }
    case Method::kMidpoint:
    default:
      return finish_nan(lax::mul(lax::add(lowv, highv), constant(0.5, TypedDType{adt, false})));
  }
}

Array percent_to_fraction(const char* op, const Array& q) {
  check_sortable(op, q);
  const Array qf = promote_inexact(op, {q})[0];
  return lax::div(qf, constant(100.0, TypedDType{qf.dtype(), false}));
}

Array half() { return constant(0.5, TypedDType{default_float_dtype(), true}); }

}  // namespace

Array sort(const ArrayLike& a, std::optional<int64_t> axis, bool stable, bool descending) {
  Array x = a.array();
  check_sortable("sort", x);
  if (!axis) x = lax::reshape(x, {x.size()});
  const int64_t ax = canonical_axis("sort", axis.value_or(0), x.ndim());
  Array r = lax::sort(x, ax, stable);
  return descending ? lax::rev(r, {ax}) : r;
}

Array argsort(const ArrayLike& a, std::optional<int64_t> axis, bool stable, bool descending) {
  Array x = a.array();
  check_sortable("argsort", x);
  if (!axis) x = lax::reshape(x, {x.size()});
  const int64_t ax = canonical_axis("argsort", axis.value_or(0), x.ndim());
  Array iota = lax::broadcasted_iota(index_dtype(x.shape()[ax]), x.shape(), ax);
  // A stable descending sort reverses the input first, so that ties come out in their original
  // order once the result is reversed back.
  if (descending && stable) {
    x = lax::rev(x, {ax});
    iota = lax::rev(iota, {ax});
  }
  Array idx = lax::sort_key_val(x, iota, ax, stable).second;
  return descending ? lax::rev(idx, {ax}) : idx;
}

Array lexsort(const std::vector<Array>& keys, int64_t axis) {
  if (keys.empty())
    throw TypeError(op_message("lexsort", "need sequence of keys with len > 0 in lexsort"));
  for (const Array& k : keys) {
    check_sortable("lexsort", k);
    if (k.shape() != keys[0].shape())
      throw ValueError(op_message("lexsort", "all keys need to be the same shape, got " +
                                                 tuple_str(keys[0].shape()) + " and " +
                                                 tuple_str(k.shape())));
  }
  if (keys[0].ndim() == 0) return constant(0.0, TypedDType{default_int_dtype(), false});
  const int64_t ax = canonical_axis("lexsort", axis, keys[0].ndim());
  std::vector<Array> ops(keys.rbegin(), keys.rend());
  ops.push_back(lax::broadcasted_iota(index_dtype(keys[0].shape()[ax]), keys[0].shape(), ax));
  return lax::sort(ops, ax, true, static_cast<int64_t>(keys.size())).back();
}

Array sort_complex(const ArrayLike& a) {
  check_defined("sort_complex", a.array());
  throw NotImplementedError(op_message(
      "sort_complex",
      "sort_complex returns complex64/complex128 arrays, and Tessera has no complex dtypes yet; "
      "use sort for real arrays."));
}

Array quantile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis,
               const std::string& method, bool keepdims) {
  return quantile_impl("quantile", a.array(), q.array(), axis, method, keepdims, false);
}
Array percentile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis,
                 const std::string& method, bool keepdims) {
  return quantile_impl("percentile", a.array(), percent_to_fraction("percentile", q.array()), axis,
                       method, keepdims, false);
}
Array median(const ArrayLike& a, const AxisArg& axis, bool keepdims) {
  return quantile_impl("median", a.array(), half(), axis, "midpoint", keepdims, false);
}
Array nanquantile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis,
                  const std::string& method, bool keepdims) {
  return quantile_impl("nanquantile", a.array(), q.array(), axis, method, keepdims, true);
}
Array nanpercentile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis,
                    const std::string& method, bool keepdims) {
  return quantile_impl("nanpercentile", a.array(), percent_to_fraction("nanpercentile", q.array()),
                       axis, method, keepdims, true);
}
Array nanmedian(const ArrayLike& a, const AxisArg& axis, bool keepdims) {
  return quantile_impl("nanmedian", a.array(), half(), axis, "midpoint", keepdims, true);
}

}  // namespace tessera::numpy
