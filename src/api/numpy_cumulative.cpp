// jnp.cumsum, cumprod, nancumsum, nancumprod, cumulative_sum, cumulative_prod: jnp's
// _cumulative_reduction restated over lax.cumsum / lax.cumprod.
#include "tessera/numpy_cumulative.h"

#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "api/numpy_reduce_util.h"
#include "tessera/lax.h"
#include "tessera/lax_assoc_scan.h"

namespace tessera::numpy {

using namespace detail;

namespace {

struct CumSpec {
  bool prod = false;              // cumprod (else cumsum)
  bool fill_nan = false;          // NaN -> the identity first (nancumsum / nancumprod)
  bool promote_integers = false;  // no dtype: bool/narrow ints -> the default int/uint
};

int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ValueError(op_message(op, "axis " + std::to_string(axis) +
                                        " is out of bounds for array of dimension " +
                                        std::to_string(ndim)));
  return axis < 0 ? axis + ndim : axis;
}

void check_dtypes(const char* op, const Array& x, const std::optional<DType>& dtype) {
  check_defined(op, x);
  if (is_extended(x.dtype()))
    throw TypeError(op_message(op, std::string(op) + " does not accept dtype " +
                                       dtype_str(x.dtype()) + "; it takes numbers and bool."));
  if (dtype && is_extended(*dtype))
    throw TypeError(op_message(op, "dtype " + dtype_str(*dtype) + " is not a valid dtype for " +
                                       op + "; use a number or bool dtype."));
}

// jnp's _cumulative_reduction (axis already canonical for a of rank >= 1 when `flatten` is
// false).
Array cumulative(const char* op, const Array& x, std::optional<int64_t> axis,
                 std::optional<DType> dtype, const CumSpec& s) {
  check_dtypes(op, x, dtype);
  Array a = x;
  if (!axis || a.ndim() == 0) a = lax::reshape(a, Shape{a.size()});
  const int64_t ax = canonical_axis(op, axis.value_or(0), a.ndim());
  if (s.fill_nan && is_inexact(a.dtype())) {
    const Array fill = constant(s.prod ? 1.0 : 0.0, TypedDType{a.dtype(), false});
    a = lax::select_n(isnan_lax(a), {a, broadcast_to_shape(fill, a.shape())});
  }
  DType result = dtype ? *dtype : a.dtype();
  if ((!dtype && s.promote_integers) || result == DType::kBool)
    result = promote_integer_dtype(result);
  result = canonicalize_dtype(result);
  const bool to_bool = dtype && *dtype == DType::kBool;
  if (a.dtype() != DType::kBool && to_bool) a = convert(op, a, DType::kBool);
  a = convert(op, a, result);
  Array r = s.prod ? lax::cumprod(a, ax) : lax::cumsum(a, ax);
  if (to_bool) r = convert(op, r, DType::kBool);
  return r;
}

// The array API's cumulative_sum / cumulative_prod.
Array cumulative_api(const char* op, const char* what, const Array& x, std::optional<int64_t> axis,
                     std::optional<DType> dtype, bool include_initial, const CumSpec& s) {
  check_dtypes(op, x, dtype);
  if (x.ndim() == 0)
    throw ValueError(op_message(op, std::string("The input must be non-scalar to take a ") + what +
                                        ", however a scalar value or scalar array was given."));
  if (!axis && x.ndim() > 1)
    throw ValueError(op_message(
        op, "The input array has rank " + std::to_string(x.ndim()) +
                ", however axis was not set to an explicit value. The axis argument is only "
                "optional for one-dimensional arrays."));
  const int64_t ax = canonical_axis(op, axis.value_or(0), x.ndim());
  Array out = cumulative(op, x, ax, dtype, s);
  if (!include_initial) return out;
  Shape init_shape = x.shape();
  init_shape[ax] = 1;
  const Array init =
      broadcast_to_shape(constant(s.prod ? 1.0 : 0.0, TypedDType{out.dtype(), false}), init_shape);
  return lax::concatenate({init, out}, ax);
}

}  // namespace

Array cumsum(const ArrayLike& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("cumsum", x.array(), axis, dtype, {});
}
Array cumprod(const ArrayLike& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("cumprod", x.array(), axis, dtype, {.prod = true});
}
Array nancumsum(const ArrayLike& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("nancumsum", x.array(), axis, dtype, {.fill_nan = true});
}
Array nancumprod(const ArrayLike& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("nancumprod", x.array(), axis, dtype, {.prod = true, .fill_nan = true});
}
Array cumulative_sum(const ArrayLike& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                     bool include_initial) {
  return cumulative_api("cumulative_sum", "cumulative sum", x.array(), axis, dtype, include_initial,
                        {.promote_integers = true});
}
Array cumulative_prod(const ArrayLike& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                      bool include_initial) {
  return cumulative_api("cumulative_prod", "cumulative product", x.array(), axis, dtype,
                        include_initial, {.prod = true});
}

}  // namespace tessera::numpy
