// Basic indexing (tessera/index.h): integers, slices with any step, newaxis, one ellipsis and
// rank-0 integer Arrays (dynamic). One plan per index expression: a single strided lax.slice
// (after a rev of the dims with negative steps), one dynamic_slice for the dynamic indices, a
// squeeze of the indexed dims and a reshape for the new axes — so x[...] stages at most four
// equations, each with cheap transpose and batching rules.
#include <algorithm>
#include <string>

#include "api/numpy_internal.h"
#include "tessera/index.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/numpy_indexing.h"

namespace tessera {

namespace numpy {

using namespace detail;

namespace {

constexpr const char* kOp = "getitem";

}  // namespace

Array getitem(const Array& x, const std::vector<Index>& idx) {
  check_defined(kOp, x);
  if (detail::has_advanced_index(idx)) return detail::advanced_getitem(x, idx);
  const int64_t nd = x.ndim();
  int64_t consumed = 0, ellipses = 0;
  for (const Index& i : idx) {
    const auto& v = i.value();
    if (std::holds_alternative<Ellipsis>(v)) {
      ++ellipses;
    } else if (!std::holds_alternative<NewAxis>(v)) {
      ++consumed;
    }
    if (const Array* a = std::get_if<Array>(&v)) {
      check_defined(kOp, *a);
      if (!is_integer(a->dtype()))
        throw IndexError(op_message(
            kOp, "indexers must have an integer or boolean type; got " + a->aval().str()));
    }
  }
  if (ellipses > 1)
    throw IndexError(op_message(kOp, "an index can only have a single ellipsis ('...')"));
  if (consumed > nd)
    throw IndexError(op_message(kOp, "too many indices for array: array is " + std::to_string(nd) +
                                         "-dimensional, but " + std::to_string(consumed) +
                                         " were indexed"));

  // Per input dim: the static slice, a dynamic start, whether it is removed.
  std::vector<int64_t> starts(static_cast<size_t>(nd), 0),
      limits(x.shape().begin(), x.shape().end()), strides(static_cast<size_t>(nd), 1);
  std::vector<int64_t> reversed, removed;
  std::vector<Array> dyn(static_cast<size_t>(nd));
  // Output layout: for each output axis, whether it is a new axis.
  std::vector<bool> out_is_new;
  int64_t d = 0;
  for (const Index& i : idx) {
    const auto& v = i.value();
    if (std::holds_alternative<NewAxis>(v)) {
      out_is_new.push_back(true);
    } else if (std::holds_alternative<Ellipsis>(v)) {
      const int64_t k = nd - consumed;
      for (int64_t j = 0; j < k; ++j, ++d) out_is_new.push_back(false);
    } else if (const int64_t* p = std::get_if<int64_t>(&v)) {
      const int64_t n = x.shape()[d];
      const int64_t at = *p < 0 ? *p + n : *p;
      if (at < 0 || at >= n)
        throw IndexError(op_message(kOp, "index " + std::to_string(*p) +
                                             " is out of bounds for axis " + std::to_string(d) +
                                             " with size " + std::to_string(n)));
      starts[d] = at;
      limits[d] = at + 1;
      removed.push_back(d);
      ++d;
    } else if (const Slice* s = std::get_if<Slice>(&v)) {
      const int64_t n = x.shape()[d];
      const detail::SliceRange r = detail::slice_range(kOp, *s, n);
      if (r.count == 0) {
        starts[d] = limits[d] = 0;
      } else if (r.step > 0) {
        starts[d] = r.start;
        limits[d] = r.start + (r.count - 1) * r.step + 1;
        strides[d] = r.step;
      } else {
        // After rev, element i sits at n - 1 - i.
        reversed.push_back(d);
        const int64_t st = n - 1 - r.start;
        starts[d] = st;
        limits[d] = st + (r.count - 1) * (-r.step) + 1;
        strides[d] = -r.step;
      }
      out_is_new.push_back(false);
      ++d;
    } else {
      dyn[d] = std::get<Array>(v);
      removed.push_back(d);
      ++d;
    }
  }
  for (; d < nd; ++d) out_is_new.push_back(false);

  Array r = x;
  if (!reversed.empty()) r = lax::rev(r, reversed);
  bool trivial = true;
  bool unit = true;
  for (int64_t k = 0; k < nd; ++k) {
    trivial = trivial && starts[k] == 0 && limits[k] == x.shape()[k] && strides[k] == 1;
    unit = unit && strides[k] == 1;
  }
  if (!trivial) r = lax::slice(r, starts, limits, unit ? std::vector<int64_t>{} : strides);
  bool any_dyn = false;
  for (const Array& a : dyn) any_dyn = any_dyn || a.defined();
  if (any_dyn) {
    std::vector<Array> ds;
    std::vector<int64_t> sizes(r.shape().begin(), r.shape().end());
    for (int64_t k = 0; k < nd; ++k) {
      if (dyn[k].defined()) {
        ds.push_back(dyn[k]);
        sizes[k] = 1;
      } else {
        ds.push_back(numpy::scalar(0.0, DType::kInt32));
      }
    }
    r = lax::dynamic_slice(r, ds, sizes);
  }
  if (!removed.empty()) {
    std::sort(removed.begin(), removed.end());
    r = lax::squeeze(r, removed);
  }
  if (std::find(out_is_new.begin(), out_is_new.end(), true) != out_is_new.end()) {
    Shape s;
    int64_t src = 0;
    for (bool is_new : out_is_new) s.push_back(is_new ? 1 : r.shape()[src++]);
    r = lax::reshape(r, s);
  }
  return r;
}

}  // namespace numpy

Array Array::operator[](int64_t i) const { return numpy::getitem(*this, {Index(i)}); }
Array Array::operator[](std::initializer_list<Index> idx) const {
  return numpy::getitem(*this, std::vector<Index>(idx));
}
Array Array::operator[](const std::vector<Index>& idx) const { return numpy::getitem(*this, idx); }

}  // namespace tessera
