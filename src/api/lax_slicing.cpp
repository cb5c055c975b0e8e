// tessera::lax slicing, concatenation, padding, squeeze/expand_dims/rev and the extra
// reductions: thin wrappers that build params and bind (every shape/dtype check lives in the
// primitive's abstract-eval rule). The *_in_dim helpers and the negative-index normalization of
// dynamic_slice's start indices are composites, as in JAX.
#include <algorithm>

#include "prims/prims.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::lax {

namespace {

int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= std::max<int64_t>(ndim, 1) || (ndim == 0))
    throw ValueError(op_message(op, "axis " + std::to_string(axis) +
                                        " is out of bounds for an array of rank " +
                                        std::to_string(ndim) + "; pass an axis in [" +
                                        std::to_string(-ndim) + ", " + std::to_string(ndim) + ")"));
  return axis < 0 ? axis + ndim : axis;
}

// JAX's _dynamic_slice_indices: a negative start counts from the end of its dim (i + size when
// i < 0); the primitive then clamps. Concrete indices fold on the host.
std::vector<Array> normalize_starts(const char* op, const Array& x,
                                    const std::vector<Array>& starts) {
  if (static_cast<int64_t>(starts.size()) != x.ndim())
    throw TypeError(op_message(op, "needs one start index per dimension of the operand: got " +
                                       std::to_string(starts.size()) +
                                       " indices for an operand of shape " + shape_str(x.shape())));
  std::vector<Array> out;
  out.reserve(starts.size());
  for (size_t d = 0; d < starts.size(); ++d) {
    const Array& i = starts[d];
    if (!i.defined() || i.ndim() != 0 || !is_integer(i.dtype()))
      throw TypeError(
          op_message(op, "start indices must be rank-0 integer arrays; index " + std::to_string(d) +
                             " is " + (i.defined() ? i.aval().str() : std::string("undefined"))));
    const auto n = static_cast<double>(x.shape()[d]);
    if (i.is_concrete()) {
      const double v = i.item_double();
      out.push_back(v < 0 ? numpy::scalar(v + n, i.dtype()) : i);
    } else if (is_unsigned_integer(i.dtype())) {
      out.push_back(i);
    } else {
      // lt before add, as JAX's _dynamic_slice_indices stages them.
      const Array negative = lt(i, numpy::scalar(0.0, i.dtype()));
      out.push_back(select_n(negative, {i, add(i, numpy::scalar(n, i.dtype()))}));
    }
  }
  return out;
}

Array zero_index() { return numpy::scalar(0.0, DType::kInt32); }

}  // namespace

Array squeeze(const Array& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty() && x.is_concrete()) return x;
  // As lax.squeeze: negative dims count from the end and the primitive gets them canonical and
  // sorted (out-of-range dims are left for the primitive's ValueError).
  std::vector<int64_t> dims;
  for (int64_t d : dimensions) dims.push_back(d < 0 && d >= -x.ndim() ? d + x.ndim() : d);
  std::sort(dims.begin(), dims.end());
  return bind1(prims::squeeze, {x}, Params{{"dimensions", dims}});
}

Array expand_dims(const Array& x, const std::vector<int64_t>& dimensions) {
  const int64_t out_rank = x.ndim() + static_cast<int64_t>(dimensions.size());
  std::vector<int64_t> dims;
  for (int64_t d : dimensions) dims.push_back(canonical_axis("expand_dims", d, out_rank));
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    throw ValueError(op_message("expand_dims", "repeated dimension in " + shape_str(dimensions)));
  Shape shape;
  std::vector<int64_t> bdims;
  int64_t src = 0;
  for (int64_t o = 0; o < out_rank; ++o) {
    if (std::binary_search(dims.begin(), dims.end(), o)) {
      shape.push_back(1);
    } else {
      shape.push_back(x.shape()[static_cast<size_t>(src++)]);
      bdims.push_back(o);
    }
  }
  return broadcast_in_dim(x, shape, bdims);
}

Array rev(const Array& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty() && x.is_concrete()) return x;
  return bind1(prims::rev, {x}, Params{{"dimensions", dimensions}});
}

Array slice(const Array& x, const std::vector<int64_t>& start_indices,
            const std::vector<int64_t>& limit_indices, const std::vector<int64_t>& strides) {
  return bind1(prims::slice, {x},
               Params{{"start_indices", start_indices},
                      {"limit_indices", limit_indices},
                      {"strides", strides}});
}

Array slice_in_dim(const Array& x, int64_t start, int64_t limit, int64_t stride, int64_t axis) {
  const int64_t ax = canonical_axis("slice_in_dim", axis, x.ndim());
  std::vector<int64_t> starts(static_cast<size_t>(x.ndim()), 0);
  std::vector<int64_t> limits(x.shape().begin(), x.shape().end());
  std::vector<int64_t> strides(static_cast<size_t>(x.ndim()), 1);
  const int64_t n = x.shape()[static_cast<size_t>(ax)];
  // As lax.slice_in_dim: negative start/limit count from the end.
  starts[static_cast<size_t>(ax)] = start < 0 ? start + n : start;
  limits[static_cast<size_t>(ax)] = limit < 0 ? limit + n : limit;
  strides[static_cast<size_t>(ax)] = stride;
  return slice(x, starts, limits, stride == 1 ? std::vector<int64_t>{} : strides);
}

Array index_in_dim(const Array& x, int64_t index, int64_t axis, bool keepdims) {
  const int64_t ax = canonical_axis("index_in_dim", axis, x.ndim());
  const int64_t n = x.shape()[static_cast<size_t>(ax)];
  const int64_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    throw IndexError(op_message("index_in_dim",
                                "index " + std::to_string(index) + " is out of bounds for axis " +
                                    std::to_string(ax) + " with size " + std::to_string(n)));
  Array s = slice_in_dim(x, i, i + 1, 1, ax);
  return keepdims ? s : squeeze(s, {ax});
}

Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices,
                    const std::vector<int64_t>& slice_sizes) {
  std::vector<Array> args{x};
  for (const Array& i : normalize_starts("dynamic_slice", x, start_indices)) args.push_back(i);
  return bind1(prims::dynamic_slice, std::span<const Array>(args),
               Params{{"slice_sizes", slice_sizes}});
}

Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<Array>& start_indices) {
  std::vector<Array> args{x, update};
  for (const Array& i : normalize_starts("dynamic_update_slice", x, start_indices))
    args.push_back(i);
  return bind1(prims::dynamic_update_slice, std::span<const Array>(args));
}

Array dynamic_slice_in_dim(const Array& x, const Array& start, int64_t size, int64_t axis) {
  const int64_t ax = canonical_axis("dynamic_slice_in_dim", axis, x.ndim());
  std::vector<Array> starts;
  for (int64_t d = 0; d < x.ndim(); ++d) starts.push_back(d == ax ? start : zero_index());
  std::vector<int64_t> sizes(x.shape().begin(), x.shape().end());
  sizes[static_cast<size_t>(ax)] = size;
  return dynamic_slice(x, starts, sizes);
}

Array dynamic_index_in_dim(const Array& x, const Array& index, int64_t axis, bool keepdims) {
  const int64_t ax = canonical_axis("dynamic_index_in_dim", axis, x.ndim());
  Array s = dynamic_slice_in_dim(x, index, 1, ax);
  return keepdims ? s : squeeze(s, {ax});
}

Array dynamic_update_slice_in_dim(const Array& x, const Array& update, const Array& start,
                                  int64_t axis) {
  const int64_t ax = canonical_axis("dynamic_update_slice_in_dim", axis, x.ndim());
  std::vector<Array> starts;
  for (int64_t d = 0; d < x.ndim(); ++d) starts.push_back(d == ax ? start : zero_index());
  return dynamic_update_slice(x, update, starts);
}

Array concatenate(const std::vector<Array>& operands, int64_t dimension) {
  if (operands.size() == 1 && operands[0].is_concrete()) return operands[0];
  return bind1(prims::concatenate, std::span<const Array>(operands),
               Params{{"dimension", dimension}});
}

Array pad(const Array& x, const Array& padding_value, const std::vector<PadConfig>& config) {
  std::vector<int64_t> flat;
  for (const PadConfig& c : config) {
    flat.push_back(c.low);
    flat.push_back(c.high);
    flat.push_back(c.interior);
  }
  return bind1(prims::pad, {x, padding_value}, Params{{"padding_config", flat}});
}

Array reduce_prod(const Array& x, const std::vector<int64_t>& axes) {
  return bind1(prims::reduce_prod, {x}, Params{{"axes", axes}});
}
Array reduce_min(const Array& x, const std::vector<int64_t>& axes) {
  return bind1(prims::reduce_min, {x}, Params{{"axes", axes}});
}
Array reduce_and(const Array& x, const std::vector<int64_t>& axes) {
  return bind1(prims::reduce_and, {x}, Params{{"axes", axes}});
}
Array reduce_or(const Array& x, const std::vector<int64_t>& axes) {
  return bind1(prims::reduce_or, {x}, Params{{"axes", axes}});
}
Array reduce_xor(const Array& x, const std::vector<int64_t>& axes) {
  return bind1(prims::reduce_xor, {x}, Params{{"axes", axes}});
}
Array argmax(const Array& x, int64_t axis, DType index_dtype) {
  return bind1(prims::argmax, {x},
               Params{{"axes", std::vector<int64_t>{axis}},
                      {"index_dtype", canonicalize_dtype(index_dtype)}});
}
Array argmin(const Array& x, int64_t axis, DType index_dtype) {
  return bind1(prims::argmin, {x},
               Params{{"axes", std::vector<int64_t>{axis}},
                      {"index_dtype", canonicalize_dtype(index_dtype)}});
}

}  // namespace tessera::lax
