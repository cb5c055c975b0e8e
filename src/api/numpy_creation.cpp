// tessera::numpy array creation: scalars, host data, full/zeros/ones, arange, linspace, eye.
// Host values are written with store_from_double (exact integer stores for 64-bit integers);
// fills, arange and linspace compose lax ops as jnp does, so their rounding matches JAX's.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

using namespace detail;

namespace {

void check_creatable(const char* op, DType d) {
  if (is_extended(d))
    throw TypeError(op_message(op, "cannot create an array of dtype " + dtype_str(d) +
                                       " from values; use the dtype's own constructor"));
}

// Shapes of host-filled arrays are bounded as doubles (8 bytes an element), so the host vectors
// below can never be sized from a wrapped-around product.
void check_shape(const char* op, const Shape& shape) { tessera::check_shape(op, shape, 8); }

// Host doubles -> a new array of (dtype, weak).
Array from_doubles(const char* op, const double* v, const Shape& shape, DType dtype,
                   bool weak = false) {
  check_creatable(op, dtype);
  check_shape(op, shape);
  const Aval aval{shape, dtype, weak};
  Array out = empty_array(aval, op);
  if (aval.nbytes() == 0) return out;
  auto* p = static_cast<unsigned char*>(out.buffer()->data());
  const size_t item = itemsize(dtype);
  const int64_t n = aval.size();
  for (int64_t i = 0; i < n; ++i) store_from_double(dtype, p + i * item, v[i]);
  return out;
}

void check_count(const char* op, size_t n, const Shape& shape) {
  check_shape(op, shape);
  if (static_cast<int64_t>(n) != shape_size(shape))
    throw ValueError(op_message(
        op, std::to_string(n) + " values cannot fill shape " + shape_str(shape) + " (" +
                std::to_string(shape_size(shape)) + " elements); give one value per element"));
}

DType default_float() { return default_float_dtype(); }

// A rank-0 fill broadcast to shape (lax.full).
Array full_impl(const char* op, const Shape& shape, double v, TypedDType t) {
  check_creatable(op, t.dtype);
  check_shape(op, shape);
  Array s = constant(v, t);
  if (shape.empty()) return s;
  return lax::broadcast(s, shape);
}

}  // namespace

// ---------------------------------------------------------------- scalars

Array weak_scalar(double v) { return constant(v, TypedDType{default_float(), true}); }

Array weak_scalar_int(int64_t v) {
  const DType d = default_int_dtype();
  if (d == DType::kInt32) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw ValueError(op_message("weak_scalar_int",
                                  "C++ integer " + std::to_string(v) +
                                      " too large to convert to int32 (64-bit mode is off); use a "
                                      "floating scalar, or enable x64 with set_x64_enabled(true)"));
    const int32_t x = static_cast<int32_t>(v);
    return array_from_host(Aval{{}, d, true}, &x);
  }
  return array_from_host(Aval{{}, d, true}, &v);
}

Array scalar(double v, DType dtype) { return from_doubles("scalar", &v, {}, dtype); }

// ---------------------------------------------------------------- host data

Array array(std::initializer_list<double> values, std::optional<DType> dtype) {
  return from_doubles("array", values.begin(), {static_cast<int64_t>(values.size())},
                      canonicalize_dtype(dtype.value_or(DType::kFloat64)));
}

Array array(std::initializer_list<std::initializer_list<double>> rows, std::optional<DType> dtype) {
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t m = n ? static_cast<int64_t>(rows.begin()->size()) : 0;
  std::vector<double> flat;
  flat.reserve(n * m);
  int64_t i = 0;
  for (const auto& row : rows) {
    if (static_cast<int64_t>(row.size()) != m)
      throw ValueError(op_message("array", "ragged nested list: row " + std::to_string(i) +
                                               " has " + std::to_string(row.size()) +
                                               " elements but row 0 has " + std::to_string(m) +
                                               "; every row needs the same length"));
    flat.insert(flat.end(), row.begin(), row.end());
    ++i;
  }
  return from_doubles("array", flat.data(), {n, m},
                      canonicalize_dtype(dtype.value_or(DType::kFloat64)));
}

Array array(const std::vector<double>& values, const Shape& shape, std::optional<DType> dtype) {
  check_count("array", values.size(), shape);
  return from_doubles("array", values.data(), shape,
                      canonicalize_dtype(dtype.value_or(DType::kFloat64)));
}

Array array(const std::vector<float>& values, const Shape& shape) {
  check_count("array", values.size(), shape);
  return array_from_host(Aval{shape, DType::kFloat32, false}, values.data());
}

Array array(const std::vector<int32_t>& values, const Shape& shape) {
  check_count("array", values.size(), shape);
  return array_from_host(Aval{shape, DType::kInt32, false}, values.data());
}

Array array(const std::vector<int64_t>& values, const Shape& shape) {
  check_count("array", values.size(), shape);
  const DType d = canonicalize_dtype(DType::kInt64);
  if (d == DType::kInt64) return array_from_host(Aval{shape, d, false}, values.data());
  std::vector<int32_t> narrow(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t v = values[i];
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw ValueError(op_message("array", "value " + std::to_string(v) + " at index " +
                                               std::to_string(i) +
                                               " too large to convert to int32 (64-bit mode is "
                                               "off); enable x64 or use values in int32's range"));
    narrow[i] = static_cast<int32_t>(v);
  }
  return array_from_host(Aval{shape, d, false}, narrow.data());
}

Array array(const std::vector<bool>& values, const Shape& shape) {
  check_count("array", values.size(), shape);
  std::vector<uint8_t> bytes(values.begin(), values.end());  // bool is stored as one byte
  return array_from_host(Aval{shape, DType::kBool, false}, bytes.data());
}

Array asarray(const ArrayLike& x, std::optional<DType> dtype) {
  check_defined("asarray", x.array());
  if (!dtype) return x.array();
  return convert("asarray", x.array(), canonicalize_dtype(*dtype));
}

// ---------------------------------------------------------------- fills

Array zeros(const Shape& shape, DType dtype) {
  return full_impl("zeros", shape, 0.0, TypedDType{canonicalize_dtype(dtype), false});
}

Array ones(const Shape& shape, DType dtype) {
  return full_impl("ones", shape, 1.0, TypedDType{canonicalize_dtype(dtype), false});
}

// jnp.full (lax.full): a C++ double fill without dtype is weakly typed, as a Python float is.
Array full(const Shape& shape, double fill_value, std::optional<DType> dtype) {
  TypedDType t =
      dtype ? TypedDType{canonicalize_dtype(*dtype), false} : TypedDType{default_float(), true};
  return full_impl("full", shape, fill_value, t);
}

Array empty(const Shape& shape, DType dtype) {
  return full_impl("empty", shape, 0.0, TypedDType{canonicalize_dtype(dtype), false});
}

namespace {

// lax.full_like: x's dtype and weak flag unless a dtype is given.
Array full_like_impl(const char* op, const Array& x, double v, std::optional<DType> dtype) {
  check_defined(op, x);
  TypedDType t = dtype ? TypedDType{canonicalize_dtype(*dtype), false} : x.aval().typed();
  return full_impl(op, x.shape(), v, t);
}

}  // namespace

Array zeros_like(const Array& x, std::optional<DType> dtype) {
  return full_like_impl("zeros_like", x, 0.0, dtype);
}
Array ones_like(const Array& x, std::optional<DType> dtype) {
  return full_like_impl("ones_like", x, 1.0, dtype);
}
Array full_like(const Array& x, double fill_value, std::optional<DType> dtype) {
  return full_like_impl("full_like", x, fill_value, dtype);
}
Array empty_like(const Array& x, std::optional<DType> dtype) {
  return full_like_impl("empty_like", x, 0.0, dtype);
}

// ---------------------------------------------------------------- ranges

namespace {

int64_t checked_length(const char* op, double n) {
  if (!std::isfinite(n))
    throw ValueError(op_message(op,
                                "the number of elements is not finite; give finite start, "
                                "stop and a nonzero step"));
  if (n > 9.0e15) throw ValueError(op_message(op, "too many elements requested"));
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

// jnp.arange(start, stop, step): start + step * iota, computed in the working dtype (float32 for
// 16-bit floats), then converted.
Array arange_impl(double start, double step, int64_t n, DType dtype) {
  const char* op = "arange";
  check_creatable(op, dtype);
  DType work = is_floating(dtype) && itemsize(dtype) < 4 ? DType::kFloat32 : dtype;
  if (work == DType::kBool) work = default_int_dtype();
  Array r = lax::iota(work, n);
  if (step != 1.0) r = lax::mul(constant(step, TypedDType{work, false}), r);
  if (start != 0.0) r = lax::add(constant(start, TypedDType{work, false}), r);
  return convert(op, r, dtype);
}

}  // namespace

Array arange(double stop, std::optional<DType> dtype) {
  const DType d = canonicalize_dtype(dtype.value_or(default_float()));
  check_creatable("arange", d);
  return lax::iota(d, checked_length("arange", std::ceil(stop)));
}

Array arange(double start, double stop, double step, std::optional<DType> dtype) {
  if (step == 0.0) throw ValueError(op_message("arange", "step must not be zero"));
  const DType d = canonicalize_dtype(dtype.value_or(default_float()));
  const int64_t n = checked_length("arange", std::ceil((stop - start) / step));
  return arange_impl(start, step, n, d);
}

Array arange(int64_t stop, std::optional<DType> dtype) {
  const DType d = canonicalize_dtype(dtype.value_or(default_int_dtype()));
  check_creatable("arange", d);
  return lax::iota(d, stop > 0 ? stop : 0);
}

Array arange(int64_t start, int64_t stop, int64_t step, std::optional<DType> dtype) {
  const char* op = "arange";
  if (step == 0) throw ValueError(op_message(op, "step must not be zero"));
  const DType d = canonicalize_dtype(dtype.value_or(default_int_dtype()));
  check_creatable(op, d);
  // Exact ceil((stop - start) / step) in integers.
  const __int128 span = static_cast<__int128>(stop) - start;
  __int128 n = span / step;
  if (n * step != span && ((span > 0) == (step > 0))) ++n;
  if (n < 0) n = 0;
  if (is_floating(d)) return arange_impl(double(start), double(step), int64_t(n), d);
  if (n > 0) {
    // The last value must be representable, as it is with int32 in JAX.
    const __int128 last = start + (n - 1) * static_cast<__int128>(step);
    IInfo info = iinfo(d == DType::kBool ? default_int_dtype() : d);
    if (last < info.min || last > static_cast<__int128>(info.max) || start < info.min ||
        start > static_cast<__int128>(info.max))
      throw ValueError(op_message(op, "values from " + std::to_string(start) + " step " +
                                          std::to_string(step) + " do not fit " + dtype_str(d) +
                                          "; use a wider dtype"));
  }
  const DType work = d == DType::kBool ? default_int_dtype() : d;
  Array r = lax::iota(work, static_cast<int64_t>(n));
  if (step != 1) r = lax::mul(constant(double(step), TypedDType{work, false}), r);
  if (start != 0) r = lax::add(constant(double(start), TypedDType{work, false}), r);
  return convert(op, r, d);
}

Array linspace(double start, double stop, int64_t num, bool endpoint, std::optional<DType> dtype) {
  const char* op = "linspace";
  if (num < 0)
    throw ValueError(
        op_message(op, "number of samples, " + std::to_string(num) + ", must be non-negative"));
  // (An if, not value_or: GCC's branchless value_or reads the disengaged payload byte, which
  // valgrind reports as uninitialised.)
  DType d = default_float();
  if (dtype.has_value()) d = canonicalize_dtype(*dtype);
  check_creatable(op, d);
  const DType comp = to_inexact(d);
  const TypedDType ct{comp, false};
  Array out;
  if (num == 0) {
    out = lax::iota(comp, 0);
  } else if (num == 1) {
    out = lax::broadcast(constant(start, ct), {1});
  } else {
    // jnp: start * (1 - t) + stop * t with t = i / div; t == 1 at i == div gives stop exactly.
    const int64_t div = endpoint ? num - 1 : num;
    Array t = lax::div(lax::iota(comp, num), constant(double(div), ct));
    out = lax::add(lax::mul(constant(start, ct), lax::sub(constant(1.0, ct), t)),
                   lax::mul(constant(stop, ct), t));
  }
  if (is_integer(d) && out.size() > 0) {
    // jnp floors before converting to an integer dtype.
    const auto* p = static_cast<const unsigned char*>(out.raw_data(op));
    std::vector<double> v(static_cast<size_t>(out.size()));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = std::floor(load_as_double(comp, p + i * itemsize(comp)));
    return from_doubles(op, v.data(), out.shape(), d);
  }
  return convert(op, out, d);
}

Array eye(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  const char* op = "eye";
  const int64_t cols = m.value_or(n);
  const Shape shape{n, cols};
  const DType d = canonicalize_dtype(dtype);
  check_creatable(op, d);
  tessera::check_shape(op, shape, itemsize(d));
  // The k-th diagonal (i, i + k) from two iotas, as jnp.eye: no host buffer of n * cols values,
  // so the device memory limit applies.
  if (k >= cols || k <= -n) return full_impl(op, shape, 0.0, {d, false});
  const DType it = n < INT32_MAX && cols < INT32_MAX ? DType::kInt32 : DType::kInt64;
  const Array i = lax::broadcasted_iota(it, shape, 0);
  const Array j = lax::broadcasted_iota(it, shape, 1);
  return convert(op, lax::eq(lax::sub(j, i), constant(static_cast<double>(k), {it, false})), d);
}

Array identity(int64_t n, DType dtype) { return eye(n, std::nullopt, 0, dtype); }

}  // namespace tessera::numpy
