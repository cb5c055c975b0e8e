// tessera::numpy reductions: sum, max, mean with jnp's dtype rules (small integers accumulate in
// the default int/uint, 16-bit floats in float32) and keepdims.
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

using namespace detail;

namespace {

// jnp's _upcast_f16: 16-bit floats are reduced in float32.
DType upcast_f16(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ? DType::kFloat32 : d;
}

void check_reducible(const char* op, const Array& x) {
  check_defined(op, x);
  if (is_extended(x.dtype()))
    throw TypeError(op_message(op, "cannot reduce an array of dtype " + dtype_str(x.dtype()) +
                                       "; convert it to a numeric dtype first"));
}

// The reduced array with size-1 dims put back at `axes` (sorted) when keepdims.
Array keep_dims(const Array& r, const Shape& in_shape, const std::vector<int64_t>& axes,
                bool keepdims) {
  if (!keepdims || axes.empty()) return r;
  Shape s = in_shape;
  for (int64_t a : axes) s[a] = 1;
  return lax::reshape(r, s);
}

// sum in computation dtype `comp` (strong), then converted to `result`.
Array sum_impl(const char* op, const Array& x, const std::vector<int64_t>& axes, bool keepdims,
               DType comp, DType result) {
  // Booleans sum as integers (the count of true); a bool result is "any".
  const DType acc = comp == DType::kBool ? default_int_dtype() : comp;
  Array r = convert(op, x, acc);
  if (!axes.empty()) r = lax::reduce_sum(r, axes);
  r = keep_dims(r, x.shape(), axes, keepdims);
  if (result == DType::kBool) return lax::ne(r, constant(0, TypedDType{acc, false}));
  return convert(op, r, result);
}

}  // namespace

Array sum(const Array& x, Axes axis, bool keepdims, std::optional<DType> dtype) {
  const char* op = "sum";
  check_reducible(op, x);
  std::vector<int64_t> axes = normalize_axes(op, axis, x.ndim());
  DType result = dtype ? *dtype : x.dtype();
  if (!dtype) {
    // jnp.sum promotes bool and small integers to the default int / uint.
    if (result == DType::kBool) {
      result = default_int_dtype();
    } else if (is_unsigned_integer(result) && itemsize(result) < itemsize(default_uint_dtype())) {
      result = default_uint_dtype();
    } else if (is_signed_integer(result) && itemsize(result) < itemsize(default_int_dtype())) {
      result = default_int_dtype();
    }
  }
  result = canonicalize_dtype(result);
  return sum_impl(op, x, axes, keepdims, is_inexact(result) ? upcast_f16(result) : result, result);
}

Array sum(const Array& x, int64_t axis, bool keepdims) {
  return sum(x, std::vector<int64_t>{axis}, keepdims);
}

Array max(const Array& x, Axes axis, bool keepdims) {
  const char* op = "max";
  check_reducible(op, x);
  std::vector<int64_t> axes = normalize_axes(op, axis, x.ndim());
  for (int64_t a : axes) {
    if (x.shape()[a] == 0)
      throw ValueError(op_message(op,
                                  "zero-size array to reduction operation max which has no "
                                  "identity (axis " +
                                      std::to_string(a) + " of shape " + shape_str(x.shape()) +
                                      " is empty)"));
  }
  Array r = convert(op, x, x.dtype());
  if (!axes.empty()) r = lax::reduce_max(r, axes);
  return keep_dims(r, x.shape(), axes, keepdims);
}

Array max(const Array& x, int64_t axis, bool keepdims) {
  return max(x, std::vector<int64_t>{axis}, keepdims);
}

Array mean(const Array& x, Axes axis, bool keepdims, std::optional<DType> dtype) {
  const char* op = "mean";
  check_reducible(op, x);
  std::vector<int64_t> axes = normalize_axes(op, axis, x.ndim());
  const DType result = canonicalize_dtype(dtype ? *dtype : to_inexact(x.dtype()));
  const DType comp = upcast_f16(result);
  int64_t count = 1;
  for (int64_t a : axes) count *= x.shape()[a];
  Array s = sum_impl(op, x, axes, keepdims, comp, comp);
  Array m = lax::div(s, constant(static_cast<double>(count), TypedDType{comp, false}));
  return convert(op, m, result);
}

Array mean(const Array& x, int64_t axis, bool keepdims) {
  return mean(x, std::vector<int64_t>{axis}, keepdims);
}

}  // namespace tessera::numpy
