// NumPy indexing beyond basic slicing, and JAX's functional updates (`x.at[idx].set(v)`):
// integer-array (advanced) indices, with NumPy's placement of the advanced axes (adjacent
// advanced indices put the broadcast index shape where they stand; separated ones put it
// first), mixed with integers, slices of any step, newaxis and an ellipsis; boolean masks of
// concrete arrays (as their nonzero() integer arrays; a traced mask raises JAX's
// NonConcreteBooleanIndexError text). One gather (or scatter) per expression, as JAX's
// _index_to_gather. Negative indices wrap; out-of-bounds: x[idx] and index_get clamp (JAX's
// promise_in_bounds on CPU), updates drop (fill_or_drop), unless `mode` says otherwise.
//
//   namespace tnp = tessera::numpy;
//   Array rows = x[{ids}];                                   // x[ids]
//   Array y = tnp::at(x, {ids, tessera::Slice()}).add(v);    // x.at[ids, :].add(v)
#pragma once

#include <optional>
#include <vector>

#include "tessera/index.h"
#include "tessera/param_types.h"

namespace tessera::numpy {

struct IndexOptions {
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<GatherScatterMode> mode;  // none: clamp for reads, drop for updates
  std::optional<double> fill_value;       // reads in FILL_OR_DROP mode
};

enum class IndexUpdate { kSet, kAdd, kSubtract, kMultiply, kDivide, kPower, kMin, kMax };

// x[idx] with the options (what x.at[idx].get(...) computes).
Array index_get(const Array& x, const std::vector<Index>& idx, const IndexOptions& o = {});
// x with x[idx] combined with `values` (broadcast to x[idx]'s shape, cast to x's dtype).
// Duplicate indices accumulate (set: the last wins); divide and power divide / raise x by
// the product of the values at each index, as JAX's.
Array index_update(const Array& x, const std::vector<Index>& idx, const Array& values,
                   IndexUpdate op, const IndexOptions& o = {});

// JAX's x.at[idx] helper.
class IndexRef {
 public:
  IndexRef(Array x, std::vector<Index> idx) : x_(std::move(x)), idx_(std::move(idx)) {}
  Array get(const IndexOptions& o = {}) const { return index_get(x_, idx_, o); }
  Array set(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kSet, o);
  }
  Array add(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kAdd, o);
  }
  Array subtract(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kSubtract, o);
  }
  Array multiply(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kMultiply, o);
  }
  Array divide(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kDivide, o);
  }
  Array power(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kPower, o);
  }
  Array min(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kMin, o);
  }
  Array max(const Array& v, const IndexOptions& o = {}) const {
    return up(v, IndexUpdate::kMax, o);
  }

 private:
  Array up(const Array& v, IndexUpdate op, const IndexOptions& o) const {
    return index_update(x_, idx_, v, op, o);
  }
  Array x_;
  std::vector<Index> idx_;
};
inline IndexRef at(const Array& x, std::vector<Index> idx) { return IndexRef(x, std::move(idx)); }

// jnp.take (flattened when axis is none) and jnp.take_along_axis: JAX's default mode "fill"
// (out-of-bounds reads give NaN, the integer minimum, the unsigned maximum or True).
Array take(const Array& a, const Array& indices, std::optional<int64_t> axis = std::nullopt,
           const IndexOptions& o = {});
Array take_along_axis(const Array& arr, const Array& indices, std::optional<int64_t> axis,
                      const IndexOptions& o = {});

namespace detail {
// Python's slice.indices(n): the first index, the step and the element count.
struct SliceRange {
  int64_t start, step, count;
};
SliceRange slice_range(const char* op, const Slice& s, int64_t n);
// getitem's hand-off: whether an expression has integer-array or mask indices, and its gather.
bool has_advanced_index(const std::vector<Index>& idx);
Array advanced_getitem(const Array& x, const std::vector<Index>& idx);
}  // namespace detail

}  // namespace tessera::numpy
