// jnp's index-producing and index-consuming functions (nonzero ... put_along_axis), composed
// from gather/scatter (`at`, take), sort, cumsum and where as JAX composes them. Semantics and
// decisions: include/tessera/numpy_index_funcs.h. The histogram family is in numpy_histogram.cpp.
#include "tessera/numpy_index_funcs.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "api/numpy_index_util.h"
#include "api/numpy_internal.h"
#include "tessera/control_flow_flat.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_gather.h"
#include "tessera/lax_sort.h"
#include "tessera/numpy_cumulative.h"
#include "tessera/numpy_indexing.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_sort.h"

namespace tessera::numpy {

using namespace detail;

namespace {

constexpr DType kI32 = kIndexI32;
constexpr GatherScatterMode kDrop = kDropMode;

// x < y in lax.sort's order: NaN after everything (bool as false < true).
Array sort_less(const Array& x0, const Array& y0) {
  const Array x = is_bool(x0.dtype()) ? lax::convert_element_type(x0, kI32) : x0;
  const Array y = is_bool(y0.dtype()) ? lax::convert_element_type(y0, kI32) : y0;
  const Array lt = lax::lt(x, y);
  if (!is_floating(x.dtype())) return lt;
  return lax::bitwise_or(lt, lax::bitwise_and(lax::ne(y, y), lax::eq(x, x)));
}

Array nonzero_mask(const Array& x) {
  return is_bool(x.dtype()) ? x : lax::ne(x, numpy::scalar(0.0, x.dtype()));
}

// The flat positions of the first `size` true entries of the 1-D mask; n where there are fewer.
Array true_positions(const Array& mask, int64_t size, DType idt) {
  const int64_t n = mask.shape()[0];
  if (n == 0 || size == 0) return filled(n, idt, {size});
  const Array pos = lax::sub(cumsum(lax::convert_element_type(mask, idt)), iconst(1, idt));
  const Array slot = lax::select_n(mask, {filled(size, idt, {n}), pos});  // size: dropped
  return at(filled(n, idt, {size}), {slot}).set(lax::iota(idt, n), mode_opt(kDrop));
}

// first[i]: the sorted s[i] starts a run of equal values (NaNs equal when equal_nan).
Array starts_of_runs(const Array& s, bool equal_nan) {
  const int64_t n = s.shape()[0];
  if (n <= 1) return filled(1, DType::kBool, {n});
  const Array hi = lax::slice(s, {1}, {n}), lo = lax::slice(s, {0}, {n - 1});
  Array neq = lax::ne(hi, lo);
  if (equal_nan && is_floating(s.dtype()))
    neq =
        lax::bitwise_and(neq, lax::bitwise_not(lax::bitwise_and(lax::ne(hi, hi), lax::ne(lo, lo))));
  return lax::concatenate({filled(1, DType::kBool, {1}), neq}, 0);
}

// The index dtype of the results of nonzero, bincount, unique (jnp's default int).
DType index_dtype() { return default_int_dtype(); }

}  // namespace

// ---------------------------------------------------------------- nonzero & co.

std::vector<Array> nonzero(const ArrayLike& a0, const NonzeroOptions& o) {
  const char* op = "nonzero";
  const Array& a = a0.array();
  check_defined(op, a);
  if (a.ndim() == 0)
    throw ValueError(op_message(op,
                                "Calling nonzero on 0d arrays is not allowed. Use "
                                "jnp.atleast_1d(scalar) instead."));
  const int64_t nd = a.ndim();
  std::vector<int64_t> fills = o.fill_value;
  if (fills.empty()) fills.assign(static_cast<size_t>(nd), 0);
  if (fills.size() == 1) fills.assign(static_cast<size_t>(nd), fills[0]);
  if (static_cast<int64_t>(fills.size()) != nd)
    throw ValueError(op_message(op, "fill_value must be a scalar or a tuple of length " +
                                        std::to_string(nd) + "; got " +
                                        std::to_string(o.fill_value.size()) + " values"));
  const DType idt = index_dtype();
  if (!o.size) {
    const Array& host = concrete_for(op, a, "the number of nonzero elements depends on the values",
                                     "pass size (and fill_value) for a static number of results");
    const Array mask = nonzero_mask(host);
    const bool* p = static_cast<const bool*>(mask.raw_data());
    std::vector<std::vector<int64_t>> out(static_cast<size_t>(nd));
    std::vector<int64_t> odo(static_cast<size_t>(nd), 0);  // an odometer over a's shape
    for (int64_t f = 0; f < a.size(); ++f) {
      if (p[f])
        for (int64_t d = 0; d < nd; ++d) out[d].push_back(odo[d]);
      for (int64_t d = nd; d-- > 0;) {
        if (++odo[d] < a.shape()[d]) break;
        odo[d] = 0;
      }
    }
    std::vector<Array> r;
    for (auto& v : out) r.push_back(numpy::array(v, {static_cast<int64_t>(v.size())}));
    return r;
  }
  const int64_t size = *o.size;
  if (size < 0)
    throw ValueError(op_message(op, "size must be non-negative, got " + std::to_string(size)));
  const Array flat = nonzero_mask(flat1(a));
  const Array found = true_positions(flat, size, idt);
  const Array count = lax::reduce_sum(lax::convert_element_type(flat, idt), {0});
  const Array valid = lax::lt(lax::iota(idt, size), count);
  std::vector<Array> out;
  int64_t stride = a.size();
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t dim = a.shape()[d];
    stride = dim ? stride / dim : 1;
    const Array coord = lax::rem(lax::div(found, iconst(std::max<int64_t>(stride, 1), idt)),
                                 iconst(std::max<int64_t>(dim, 1), idt));
    out.push_back(lax::select_n(valid, {filled(fills[d], idt, {size}), coord}));
  }
  return out;
}

std::vector<Array> where(const ArrayLike& condition, const NonzeroOptions& o) {
  return nonzero(condition, o);
}

Array flatnonzero(const ArrayLike& a, const NonzeroOptions& o) {
  check_defined("flatnonzero", a.array());
  return nonzero(flat1(a.array()), o)[0];
}

Array argwhere(const ArrayLike& a0, const NonzeroOptions& o) {
  const Array& a = a0.array();
  check_defined("argwhere", a);
  if (a.ndim() == 0) {
    const Array r = stack(nonzero(lax::reshape(a, {1}), o), -1);
    return lax::slice(r, {0, 0}, {r.shape()[0], 0});
  }
  return stack(nonzero(a, o), -1);
}

// ---------------------------------------------------------------- searching and counting

namespace {

// One step of the binary search: the invariant is that every a[i] with i < lo goes before v
// and every a[i] with i >= hi after it.
std::pair<Array, Array> bisect_step(const Array& a, const Array& v, const Array& lo,
                                    const Array& hi, bool left) {
  const int64_t n = a.shape()[0];
  const Array mid = lax::div(lax::add(lo, hi), iconst(2, kI32));
  const Array idx = lax::clamp(iconst(0, kI32), mid, iconst(n - 1, kI32));
  const Array am = index_get(a, {idx}, mode_opt(GatherScatterMode::kClip));
  const Array before = left ? sort_less(am, v) : lax::bitwise_not(sort_less(v, am));
  const Array active = lax::lt(lo, hi);
  const Array go_right = lax::bitwise_and(active, before);
  const Array go_left = lax::bitwise_and(active, lax::bitwise_not(before));
  return {lax::select_n(go_right, {lo, lax::add(mid, iconst(1, kI32))}),
          lax::select_n(go_left, {hi, mid})};
}

Array search_scan(const Array& a, const Array& v, bool left, bool unrolled) {
  const int64_t n = a.shape()[0];
  const int64_t steps = static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(n) + 1)));
  Array lo = filled(0, kI32, v.shape()), hi = filled(n, kI32, v.shape());
  if (unrolled) {
    for (int64_t s = 0; s < steps; ++s) std::tie(lo, hi) = bisect_step(a, v, lo, hi, left);
    return lo;
  }
  flat::Fun body = [&a, &v, left](std::span<const Array> c) {
    auto [l, h] = bisect_step(a, v, c[1], c[2], left);
    return std::vector<Array>{l, h};
  };
  const std::vector<Array> init{lo, hi};
  return flat::fori_loop(iconst(0, kI32), iconst(steps, kI32), body, init)[0];
}

// Counts the a[i] before each v: (n,) + v.shape comparisons, summed over a.
Array search_compare_all(const Array& a, const Array& v, bool left) {
  const int64_t n = a.shape()[0];
  Shape full{n};
  full.insert(full.end(), v.shape().begin(), v.shape().end());
  std::vector<int64_t> vdims;
  for (int64_t d = 0; d < v.ndim(); ++d) vdims.push_back(d + 1);
  const Array ab = lax::broadcast_in_dim(a, full, {0});
  const Array vb = lax::broadcast_in_dim(v, full, vdims);
  const Array before = left ? sort_less(ab, vb) : lax::bitwise_not(sort_less(vb, ab));
  return lax::reduce_sum(lax::convert_element_type(before, kI32), {0});
}

// The rank of each element in the stable sort of x (1-D).
Array stable_rank(const Array& x) {
  const int64_t m = x.shape()[0];
  const Array perm = lax::sort_key_val(x, lax::iota(kI32, m)).second;
  return at(filled(0, kI32, {m}), {perm}).set(lax::iota(kI32, m));
}

// Co-sorts v with a: v's rank among both, less v's rank among v, is the number of a[i] before
// it. For side left, v goes first in the concatenation (so ties put v before a's equal
// elements); for right, after.
Array search_sort(const Array& a, const Array& v, bool left) {
  const int64_t n = a.shape()[0], m = v.size();
  const Array vf = flat1(v);
  const Array both = left ? lax::concatenate({vf, a}, 0) : lax::concatenate({a, vf}, 0);
  const Array rank = stable_rank(both);
  const Array vrank = left ? lax::slice(rank, {0}, {m}) : lax::slice(rank, {n}, {n + m});
  return lax::reshape(lax::sub(vrank, stable_rank(vf)), v.shape());
}

}  // namespace

Array searchsorted(const ArrayLike& a0, const ArrayLike& v0, const std::string& side,
                   const std::optional<Array>& sorter, const std::string& method) {
  const char* op = "searchsorted";
  if (side != "left" && side != "right")
    throw ValueError(op_message(op, py_repr(side) +
                                        " is an invalid value for keyword 'side'. Expected one "
                                        "of ['left', 'right']."));
  if (method != "scan" && method != "scan_unrolled" && method != "sort" && method != "compare_all")
    throw ValueError(op_message(op, py_repr(method) +
                                        " is an invalid value for keyword 'method'. Expected "
                                        "one of ['sort', 'scan', 'scan_unrolled', "
                                        "'compare_all']."));
  Array a = a0.array(), v = v0.array();
  check_defined(op, a);
  check_defined(op, v);
  if (a.ndim() != 1)
    throw ValueError(
        op_message(op, "a should be 1-dimensional; got shape " + tuple_str(a.shape())));
  if (sorter) a = index_get(a, {*sorter});
  const std::vector<Array> pv = promote(op, {a, v});
  a = pv[0];
  v = pv[1];
  const int64_t n = a.shape()[0];
  if (n == 0) return filled(0, kI32, v.shape());
  const bool left = side == "left";
  if (method == "compare_all") return search_compare_all(a, v, left);
  if (method == "sort") return search_sort(a, v, left);
  return search_scan(a, v, left, method == "scan_unrolled");
}

Array digitize(const ArrayLike& x0, const ArrayLike& bins0, bool right,
               const std::optional<std::string>& method) {
  const char* op = "digitize";
  const Array& x = x0.array();
  const Array& bins = bins0.array();
  check_defined(op, x);
  check_defined(op, bins);
  if (bins.ndim() != 1)
    throw ValueError(op_message(
        op, "digitize: bins must be a 1-dimensional array; got bins=" + tuple_str(bins.shape())));
  const int64_t n = bins.shape()[0];
  if (n == 0) return filled(0, kI32, x.shape());
  const std::string m = method.value_or("scan");
  // Increasing bins: the count of bins before x; decreasing: n less the count in the reversed
  // bins, searched from the same side (NumPy's definition: ties go to the same bin either way).
  const std::string side = right ? "left" : "right";
  const Array inc = searchsorted(bins, x, side, std::nullopt, m);
  const Array rev = lax::rev(bins, {0});
  const Array dec = lax::sub(iconst(n, kI32), searchsorted(rev, x, side, std::nullopt, m));
  const Array increasing =
      lax::bitwise_not(sort_less(lax::slice(bins, {n - 1}, {n}), lax::slice(bins, {0}, {1})));
  return lax::select_n(lax::reshape(increasing, {}), {dec, inc});
}

Array bincount(const ArrayLike& x0, const std::optional<Array>& weights, int64_t minlength,
               std::optional<int64_t> length) {
  const char* op = "bincount";
  const Array& x = x0.array();
  check_defined(op, x);
  if (x.ndim() != 1)
    throw ValueError(
        op_message(op, "only 1-dimensional input supported; got shape " + tuple_str(x.shape())));
  if (!is_integer(x.dtype()) && !is_bool(x.dtype()))
    throw TypeError(op_message(
        op, "x argument to bincount must have an integer type; got " + dtype_str(x.dtype())));
  if (minlength < 0)
    throw ValueError(
        op_message(op, "minlength must be non-negative, got " + std::to_string(minlength)));
  if (weights && weights->shape() != x.shape())
    throw ValueError(op_message(op, "shape of weights must match shape of x; got " +
                                        tuple_str(weights->shape()) + " and " +
                                        tuple_str(x.shape())));
  if (!length) {
    const Array& host =
        concrete_for(op, x, "the output length depends on the values", "pass a static length");
    int64_t mx = -1;
    const char* p = static_cast<const char*>(host.raw_data());
    const size_t w = itemsize(host.dtype());
    for (int64_t i = 0; i < host.size(); ++i)
      mx = std::max(mx, static_cast<int64_t>(load_as_double(host.dtype(), p + i * w)));
    length = std::max(mx + 1, minlength);
  }
  if (*length < 0)
    throw ValueError(op_message(op, "length must be non-negative, got " + std::to_string(*length)));
  const DType wdt = weights ? weights->dtype() : index_dtype();
  const Array w = weights ? *weights : filled(1, wdt, x.shape());
  if (x.size() == 0) return filled(0, wdt, {*length});
  // As JAX: negative values count in bin 0, values >= length are dropped.
  Array xi = is_bool(x.dtype()) ? lax::convert_element_type(x, kI32) : x;
  if (is_signed_integer(xi.dtype())) xi = lax::max(xi, numpy::scalar(0.0, xi.dtype()));
  return at(filled(0, wdt, {*length}), {xi}).add(w, mode_opt(kDrop));
}

// ---------------------------------------------------------------- unique, partition

namespace {

std::string empty_unique_message() {
  return op_message("unique",
                    "jnp.unique: for zero-sized input with nonzero size argument, fill_value "
                    "must be specified");
}

// unique over the slices of ar along axis: the slices are sorted lexicographically (a stable
// lexsort on their elements, the first element most significant) and equal neighbours merged,
// as NumPy and JAX do.
UniqueResult unique_axis(const Array& ar, int64_t axis, const UniqueOptions& o) {
  const char* op = "unique";
  if (ar.ndim() == 0)
    throw ValueError(op_message(op, "jnp.unique: axis " + std::to_string(axis) +
                                        " is out of bounds for a 0-dimensional array"));
  if (axis < -ar.ndim() || axis >= ar.ndim())
    throw ValueError(op_message(op, "jnp.unique: axis " + std::to_string(axis) +
                                        " is out of bounds for an array of dimension " +
                                        std::to_string(ar.ndim())));
  const int64_t ax = axis < 0 ? axis + ar.ndim() : axis;
  const DType idt = index_dtype();
  const Array moved = moveaxis(ar, ax, 0);
  const int64_t n = moved.shape()[0];
  const Shape rest(moved.shape().begin() + 1, moved.shape().end());
  const int64_t m = shape_size(rest);
  const Array rows = lax::reshape(moved, {n, m});
  // The stable order of the slices and where each run of equal slices starts.
  Array perm = lax::iota(idt, n);
  Array first = lax::eq(perm, iconst(0, idt));
  if (n > 1 && m > 0) {
    std::vector<Array> keys;  // lexsort's last key is the primary one
    for (int64_t j = m; j-- > 0;)
      keys.push_back(lax::reshape(lax::slice(rows, {0, j}, {n, j + 1}), {n}));
    perm = lax::convert_element_type(lexsort(keys, 0), idt);
    const Array srt = index_get(rows, {perm}, mode_opt(GatherScatterMode::kClip));
    const Array hi = lax::slice(srt, {1, 0}, {n, m}), lo = lax::slice(srt, {0, 0}, {n - 1, m});
    Array neq = lax::ne(hi, lo);
    if (o.equal_nan && is_floating(srt.dtype()))
      neq = lax::bitwise_and(neq,
                             lax::bitwise_not(lax::bitwise_and(lax::ne(hi, hi), lax::ne(lo, lo))));
    first = lax::concatenate({filled(1, DType::kBool, {1}), lax::reduce_or(neq, {1})}, 0);
  }
  int64_t k = 0;
  if (o.size) {
    if (*o.size < 0)
      throw ValueError(op_message(op, "size must be non-negative, got " + std::to_string(*o.size)));
    k = *o.size;
  } else {
    const Array& host = concrete_for(op, first, "the number of unique slices depends on the values",
                                     "pass size (and fill_value) for a static number of results");
    const bool* p = static_cast<const bool*>(host.raw_data());
    for (int64_t i = 0; i < n; ++i) k += p[i] ? 1 : 0;
  }
  if (n == 0 && k > 0 && !o.fill_value) throw ValueError(empty_unique_message());
  const Array wf = true_positions(first, k, idt);  // n: padding
  const Array real = lax::lt(wf, iconst(n, idt));
  // Padding reads the first unique slice (JAX's nonzero(mask, size=size) pads with 0).
  const Array wf0 = lax::select_n(real, {filled(0, idt, {k}), wf});
  const Array src = n == 0 ? filled(0, idt, {k}) : index_get(perm, {wf0});
  Array vals = n == 0 || m == 0 ? lax::broadcast_in_dim(numpy::scalar(0.0, ar.dtype()), {k, m}, {})
                                : index_get(rows, {src}, mode_opt(GatherScatterMode::kClip));
  if (o.fill_value && k > 0) {
    const Array fill = lax::broadcast_in_dim(numpy::scalar(*o.fill_value, ar.dtype()), {k, m}, {});
    vals = lax::select_n(lax::broadcast_in_dim(real, {k, m}, {0}), {fill, vals});
  }
  Shape vshape{k};
  vshape.insert(vshape.end(), rest.begin(), rest.end());
  UniqueResult r;
  r.values = moveaxis(lax::reshape(vals, vshape), 0, ax);
  if (o.return_index) r.indices = src;
  const Array group =
      lax::sub(cumsum(lax::convert_element_type(first, idt)), iconst(1, idt));  // per sorted slice
  if (o.return_inverse) r.inverse = n == 0 ? group : at(filled(0, idt, {n}), {perm}).set(group);
  if (o.return_counts)
    r.counts = n == 0 ? filled(0, idt, {k})
                      : at(filled(0, idt, {k}), {group}).add(filled(1, idt, {n}), mode_opt(kDrop));
  return r;
}

}  // namespace

UniqueResult unique(const ArrayLike& ar0, const UniqueOptions& o) {
  const char* op = "unique";
  const Array& ar = ar0.array();
  check_defined(op, ar);
  if (o.axis) return unique_axis(ar, *o.axis, o);
  const DType idt = index_dtype();
  const Array a = flat1(ar);
  const int64_t n = a.shape()[0];
  // Sorted values and the stable permutation that sorts them.
  Array s = a, perm = lax::iota(idt, n);
  if (n > 0) std::tie(s, perm) = lax::sort_key_val(a, perm);
  int64_t k = 0;
  if (o.size) {
    if (*o.size < 0)
      throw ValueError(op_message(op, "size must be non-negative, got " + std::to_string(*o.size)));
    k = *o.size;
  } else {
    const Array& host = concrete_for(op, ar, "the number of unique elements depends on the values",
                                     "pass size (and fill_value) for a static number of results");
    const Array hs = n > 0 ? lax::sort(flat1(host)) : flat1(host);
    const Array hf = starts_of_runs(hs, o.equal_nan);
    const bool* p = static_cast<const bool*>(hf.raw_data());
    for (int64_t i = 0; i < n; ++i) k += p[i] ? 1 : 0;
  }
  if (n == 0 && k > 0 && !o.fill_value) throw ValueError(empty_unique_message());
  const Array first = starts_of_runs(s, o.equal_nan);
  const Array wf = true_positions(first, k, idt);  // where each unique value starts; n: padding
  const Array real = lax::lt(wf, iconst(n, idt));
  // Padding reads the first unique value (JAX's nonzero(mask, size=size) pads with 0).
  const Array wf0 = lax::select_n(real, {filled(0, idt, {k}), wf});
  UniqueResult r;
  if (n == 0) {
    const double fv = o.fill_value.value_or(0.0);
    r.values = filled(0, s.dtype(), {k});
    if (k) r.values = full({k}, fv, s.dtype());
  } else {
    Array vals = index_get(s, {wf}, mode_opt(GatherScatterMode::kClip));
    const Array fill = o.fill_value ? numpy::scalar(*o.fill_value, s.dtype())
                                    : lax::reshape(lax::slice(s, {0}, {1}), {});
    r.values = lax::select_n(real, {lax::broadcast_in_dim(fill, {k}, {}), vals});
  }
  if (o.return_index) r.indices = n == 0 ? filled(0, idt, {k}) : index_get(perm, {wf0});
  // The group of each sorted element (its unique value's position).
  const Array group = n == 0
                          ? filled(0, idt, {0})
                          : lax::sub(cumsum(lax::convert_element_type(first, idt)), iconst(1, idt));
  if (o.return_inverse) {
    Array inv = n == 0 ? group : at(filled(0, idt, {n}), {perm}).set(group);
    r.inverse = lax::reshape(inv, ar.shape());  // ar's shape, as JAX's (also rank 0)
  }
  if (o.return_counts) {
    r.counts = n == 0 ? filled(0, idt, {k})
                      : at(filled(0, idt, {k}), {group}).add(filled(1, idt, {n}), mode_opt(kDrop));
  }
  return r;
}

Array unique_values(const ArrayLike& ar) { return unique(ar).values; }

namespace {
int64_t partition_axis(const char* op, const Array& a, int64_t kth, int64_t axis) {
  check_defined(op, a);
  const int64_t ax = canonical_axis(op, axis, a.ndim());
  const int64_t n = a.shape()[ax];
  if (kth < -n || kth >= n)
    throw ValueError(op_message(op, "kth=" + std::to_string(kth) +
                                        " is out of bounds for an axis of size " +
                                        std::to_string(n)));
  return ax;
}
}  // namespace

Array partition(const ArrayLike& a, int64_t kth, int64_t axis) {
  const int64_t ax = partition_axis("partition", a.array(), kth, axis);
  return sort(a, ax);
}

Array argpartition(const ArrayLike& a, int64_t kth, int64_t axis) {
  const int64_t ax = partition_axis("argpartition", a.array(), kth, axis);
  return lax::convert_element_type(argsort(a, ax, true), kI32);
}

// ---------------------------------------------------------------- selection

Array select(const std::vector<Array>& condlist, const std::vector<Array>& choicelist,
             const ArrayLike& default_) {
  const char* op = "select";
  if (condlist.size() != choicelist.size())
    throw ValueError(op_message(op, "condlist must have length equal to choicelist (" +
                                        std::to_string(condlist.size()) + " vs " +
                                        std::to_string(choicelist.size()) + ")"));
  if (condlist.empty()) throw ValueError(op_message(op, "condlist must be non-empty"));
  Array out = default_.array();
  for (size_t i = condlist.size(); i-- > 0;) {
    check_defined(op, condlist[i]);
    check_defined(op, choicelist[i]);
    if (!is_bool(condlist[i].dtype()))
      throw TypeError(op_message(op, "condlist entries must be boolean arrays; got " +
                                         dtype_str(condlist[i].dtype()) + " at position " +
                                         std::to_string(i) + "; compare it (c != 0) first"));
    out = numpy::where(condlist[i], choicelist[i], out);
  }
  return out;
}

Array choose(const ArrayLike& a0, const std::vector<Array>& choices, const std::string& mode) {
  const char* op = "choose";
  Array a = a0.array();
  check_defined(op, a);
  if (!is_integer(a.dtype()))  // bool too, as JAX's issubdtype(a.dtype, integer)
    throw ValueError(op_message(op, "`a` array must be integer typed; got " + dtype_str(a.dtype()) +
                                        " (cast it with astype(int32))"));
  if (choices.empty()) throw ValueError(op_message(op, "choices must be non-empty"));
  const int64_t n = static_cast<int64_t>(choices.size());
  if (mode == "raise") {
    const Array* hp = concrete_of(a);
    if (!hp)
      throw ConcretizationError(op_message(
          op,
          "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use "
          "mode='wrap' or mode='clip' instead. (The index array is the traced " +
              a.aval().str() + ".)"));
    const Array& host = *hp;
    const char* p = static_cast<const char*>(host.raw_data());
    for (int64_t i = 0; i < host.size(); ++i) {
      const double e = load_as_double(host.dtype(), p + i * itemsize(host.dtype()));
      if (e < 0 || e >= static_cast<double>(n))
        throw ValueError(op_message(op, "invalid entry in choice array"));
    }
  } else if (mode == "wrap") {
    a = remainder(a, n);
  } else if (mode == "clip") {
    a = clip(a, 0, n - 1);
  } else {
    throw ValueError(op_message(
        op, "mode=" + py_repr(mode) + " not understood. Must be 'raise', 'wrap', or 'clip'"));
  }
  std::vector<Array> all{a};
  all.insert(all.end(), choices.begin(), choices.end());
  for (const Array& c : choices) check_defined(op, c);
  const std::vector<Array> b = broadcast_arrays(all);
  const Array stacked = stack(std::vector<Array>(b.begin() + 1, b.end()), 0);
  if (b[0].size() == 0) return lax::squeeze(lax::slice_in_dim(stacked, 0, 1, 1, 0), {0});
  const Array idx = lax::expand_dims(lax::convert_element_type(b[0], kI32), {0});
  return lax::squeeze(take_along_axis(stacked, idx, 0), {0});
}

Array compress(const ArrayLike& condition, const ArrayLike& a0, std::optional<int64_t> axis,
               std::optional<int64_t> size, double fill_value) {
  const char* op = "compress";
  Array cond = condition.array();
  Array a = a0.array();
  check_defined(op, cond);
  check_defined(op, a);
  if (cond.ndim() != 1)
    throw ValueError(
        op_message(op, "condition must be a 1D array; got shape " + tuple_str(cond.shape())));
  if (!axis) a = flat1(a);
  const int64_t ax = canonical_axis(op, axis.value_or(0), a.ndim());
  const int64_t m = a.shape()[ax];
  cond = nonzero_mask(cond);
  const int64_t c = cond.shape()[0];
  if (c > m) cond = lax::slice(cond, {0}, {m});  // NumPy: the extra entries must be false
  if (c < m) cond = lax::concatenate({cond, filled(0, DType::kBool, {m - c})}, 0);
  if (!size) {
    const Array& host =
        concrete_for(op, cond, "the number of selected elements depends on the values",
                     "pass size (and fill_value) for a static number of results");
    const bool* p = static_cast<const bool*>(host.raw_data());
    int64_t k = 0;
    for (int64_t i = 0; i < m; ++i) k += p[i] ? 1 : 0;
    size = k;
  }
  if (*size < 0)
    throw ValueError(op_message(op, "size must be non-negative, got " + std::to_string(*size)));
  const Array moved = moveaxis(a, ax, 0);
  Shape out_shape = moved.shape();
  out_shape[0] = *size;
  Array taken;
  if (m == 0 || *size == 0) {
    taken = full(out_shape, fill_value, a.dtype());
  } else {
    const Array idx = true_positions(cond, *size, index_dtype());  // m where missing
    taken = take(moved, idx, 0, mode_opt(kDrop, fill_value));
  }
  return moveaxis(taken, 0, ax);
}

Array extract(const ArrayLike& condition, const ArrayLike& arr, std::optional<int64_t> size,
              double fill_value) {
  check_defined("extract", condition.array());
  check_defined("extract", arr.array());
  return compress(flat1(condition.array()), flat1(arr.array()), std::nullopt, size, fill_value);
}

// ---------------------------------------------------------------- differences

Array diff(const ArrayLike& a0, int64_t n, int64_t axis, const std::optional<ArrayLike>& prepend,
           const std::optional<ArrayLike>& append) {
  const char* op = "diff";
  Array a = a0.array();
  check_defined(op, a);
  if (n < 0)
    throw ValueError(op_message(op, "order must be non-negative but got " + std::to_string(n)));
  if (a.ndim() == 0)
    throw ValueError(
        op_message(op, "diff requires input that is at least one dimensional; got " + a.str()));
  const int64_t ax = canonical_axis(op, axis, a.ndim());
  auto edge = [&](const Array& e) {
    check_defined(op, e);
    if (e.ndim() != 0) return e;
    Shape s = a.shape();
    s[ax] = 1;
    return broadcast_to(e, s);
  };
  std::vector<Array> parts;
  if (prepend) parts.push_back(edge(prepend->array()));
  parts.push_back(a);
  if (append) parts.push_back(edge(append->array()));
  if (parts.size() > 1) a = concatenate(parts, ax);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t m = a.shape()[ax];
    if (m == 0) break;
    const Array hi = lax::slice_in_dim(a, 1, m, 1, ax);
    const Array lo = lax::slice_in_dim(a, 0, m - 1, 1, ax);
    a = is_bool(a.dtype()) ? lax::ne(hi, lo) : subtract(hi, lo);
  }
  return a;
}

Array ediff1d(const ArrayLike& ary, const std::optional<ArrayLike>& to_end,
              const std::optional<ArrayLike>& to_begin) {
  const char* op = "ediff1d";
  check_defined(op, ary.array());
  const Array a = flat1(ary.array());
  const int64_t m = a.shape()[0];
  const Array r = m == 0 ? a : subtract(lax::slice(a, {1}, {m}), lax::slice(a, {0}, {m - 1}));
  std::vector<Array> parts;
  if (to_begin) parts.push_back(convert(op, flat1(to_begin->array()), r.dtype()));
  parts.push_back(r);
  if (to_end) parts.push_back(convert(op, flat1(to_end->array()), r.dtype()));
  return parts.size() > 1 ? lax::concatenate(parts, 0) : r;
}

}  // namespace tessera::numpy
