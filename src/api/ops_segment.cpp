// jax.ops' segment reductions (tessera/ops.h): each one scatter into the reduction's identity.
#include <string>

#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_gather.h"
#include "tessera/numpy.h"
#include "tessera/ops.h"

namespace tessera::ops {

namespace {

enum class Reducer { kSum, kProd, kMax, kMin };

// The reduction's identity as a scalar of dtype d, exact for every dtype (the max/min of an
// empty array is the dtype's lowest/highest value: -inf/+inf for floats).
Array identity(Reducer r, DType d) {
  switch (r) {
    case Reducer::kSum:
      return numpy::full({}, 0.0, d);
    case Reducer::kProd:
      return numpy::full({}, 1.0, d);
    case Reducer::kMax:
      return lax::reduce_max(numpy::full({0}, 0.0, d), {0});
    case Reducer::kMin:
      return lax::reduce_min(numpy::full({0}, 0.0, d), {0});
  }
  return {};
}

Array segment(const char* op, Reducer r, const Array& data, const Array& ids,
              std::optional<int64_t> num_segments, const SegmentOptions& o) {
  if (!data.defined() || !ids.defined())
    throw ValueError(std::string(op) + ": data and segment_ids must be defined arrays");
  if (!is_integer(ids.dtype()))
    throw TypeError(std::string(op) + ": segment_ids must be integers, got " +
                    std::string(dtype_name(ids.dtype())) + "; cast them with astype(int32)");
  if (ids.ndim() != 1 || data.ndim() == 0 || data.shape()[0] != ids.shape()[0])
    throw ValueError(std::string(op) +
                     ": segment_ids must be 1-d with one id per row of data; got data " +
                     shape_str(data.shape()) + " and segment_ids " + shape_str(ids.shape()));
  int64_t n;
  if (num_segments) {
    n = *num_segments;
  } else {
    if (!ids.is_concrete())
      throw ConcretizationError(
          std::string(op) +
          ": num_segments must be given (a static int) when segment_ids is traced; it sets the "
          "output's shape");
    n = ids.size() == 0 ? 0 : static_cast<int64_t>(lax::reduce_max(ids, {0}).item_double()) + 1;
    if (n < 0) n = 0;
  }
  if (n < 0)
    throw ValueError(std::string(op) + ": num_segments must be non-negative, got " +
                     std::to_string(n));
  Shape out_shape = data.shape();
  out_shape[0] = n;
  Array init = lax::broadcast(identity(r, data.dtype()), out_shape);
  ScatterDimensionNumbers dn;
  for (int64_t d = 1; d < data.ndim(); ++d) dn.update_window_dims.push_back(d);
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  lax::ScatterOptions so;
  so.indices_are_sorted = o.indices_are_sorted;
  so.unique_indices = o.unique_indices;
  so.mode = o.mode ? *o.mode : GatherScatterMode::kFillOrDrop;
  Array idx = lax::reshape(ids, {ids.shape()[0], 1});
  switch (r) {
    case Reducer::kSum:
      return lax::scatter_add(init, idx, data, dn, so);
    case Reducer::kProd:
      return lax::scatter_mul(init, idx, data, dn, so);
    case Reducer::kMax:
      return lax::scatter_max(init, idx, data, dn, so);
    case Reducer::kMin:
      return lax::scatter_min(init, idx, data, dn, so);
  }
  return {};
}

}  // namespace

Array segment_sum(const Array& data, const Array& segment_ids, std::optional<int64_t> n,
                  const SegmentOptions& o) {
  return segment("segment_sum", Reducer::kSum, data, segment_ids, n, o);
}
Array segment_prod(const Array& data, const Array& segment_ids, std::optional<int64_t> n,
                   const SegmentOptions& o) {
  return segment("segment_prod", Reducer::kProd, data, segment_ids, n, o);
}
Array segment_max(const Array& data, const Array& segment_ids, std::optional<int64_t> n,
                  const SegmentOptions& o) {
  return segment("segment_max", Reducer::kMax, data, segment_ids, n, o);
}
Array segment_min(const Array& data, const Array& segment_ids, std::optional<int64_t> n,
                  const SegmentOptions& o) {
  return segment("segment_min", Reducer::kMin, data, segment_ids, n, o);
}

}  // namespace tessera::ops
