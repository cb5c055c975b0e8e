// tessera::numpy — the NumPy-style layer over lax (jax.numpy's semantics): type promotion with
// weak C++ scalars, NumPy broadcasting, then bind. Composites only; no rules live here.
//
//   namespace tnp = tessera::numpy;
//   auto x = tnp::linspace(0.0, 1.0, 5);          // float32
//   auto y = tnp::sin(x) * 2.0 + 1;               // weak scalars keep float32
//   std::cout << tnp::sum(y, 0) << "\n";          // Array(..., dtype=float32)
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "tessera/array.h"

namespace tessera::numpy {

// Anything NumPy accepts where an array is expected: an Array, or a C++ scalar. Scalars are
// weakly typed (bool is strong, as in JAX): int -> weak int, double/float -> weak float.
class ArrayLike {
 public:
  ArrayLike(const Array& a) : array_(a) {}        // NOLINT: implicit by design
  ArrayLike(Array&& a) : array_(std::move(a)) {}  // NOLINT
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
  ArrayLike(S s) : array_(scalar(s)) {}  // NOLINT
  const Array& array() const { return array_; }
  operator const Array&() const { return array_; }  // NOLINT

 private:
  template <class S>
  static Array scalar(S s);
  Array array_;
};

// ---- dtypes by jnp's short names: tnp::zeros({3}, tnp::float16) ----
inline constexpr DType bool_ = DType::kBool;
inline constexpr DType int8 = DType::kInt8;
inline constexpr DType int16 = DType::kInt16;
inline constexpr DType int32 = DType::kInt32;
inline constexpr DType int64 = DType::kInt64;
inline constexpr DType uint8 = DType::kUInt8;
inline constexpr DType uint16 = DType::kUInt16;
inline constexpr DType uint32 = DType::kUInt32;
inline constexpr DType uint64 = DType::kUInt64;
inline constexpr DType float16 = DType::kFloat16;
inline constexpr DType bfloat16 = DType::kBFloat16;
inline constexpr DType float32 = DType::kFloat32;
inline constexpr DType float64 = DType::kFloat64;
inline constexpr DType float0 = DType::kFloat0;

// ---- creation ----
// A weakly typed rank-0 array (what C++ scalars become).
Array weak_scalar(double v);       // weak float (float32 unless x64)
Array weak_scalar_int(int64_t v);  // weak int (int32 unless x64)
// A strongly typed rank-0 array of dtype.
Array scalar(double v, DType dtype);
// From host data: values are converted to dtype (default: float32 for floating C++ types,
// int32 for integral ones, bool for bool — canonicalized as JAX does).
Array array(std::initializer_list<double> values, std::optional<DType> dtype = std::nullopt);
Array array(std::initializer_list<std::initializer_list<double>> rows,
            std::optional<DType> dtype = std::nullopt);
Array array(const std::vector<double>& values, const Shape& shape,
            std::optional<DType> dtype = std::nullopt);
Array array(const std::vector<float>& values, const Shape& shape);
Array array(const std::vector<int32_t>& values, const Shape& shape);
Array array(const std::vector<int64_t>& values, const Shape& shape);  // int32 unless x64
Array array(const std::vector<bool>& values, const Shape& shape);
// jnp.asarray: returns x itself when no dtype change is asked, else converts.
Array asarray(const ArrayLike& x, std::optional<DType> dtype = std::nullopt);
Array zeros(const Shape& shape, DType dtype = DType::kFloat32);
Array ones(const Shape& shape, DType dtype = DType::kFloat32);
Array full(const Shape& shape, double fill_value, std::optional<DType> dtype = std::nullopt);
Array empty(const Shape& shape, DType dtype = DType::kFloat32);  // zeros, as JAX
Array zeros_like(const Array& x, std::optional<DType> dtype = std::nullopt);
Array ones_like(const Array& x, std::optional<DType> dtype = std::nullopt);
Array full_like(const Array& x, double fill_value, std::optional<DType> dtype = std::nullopt);
Array empty_like(const Array& x, std::optional<DType> dtype = std::nullopt);
// arange(stop), arange(start, stop, step). Integral arguments give int32, floating float32.
Array arange(double stop, std::optional<DType> dtype = std::nullopt);
Array arange(double start, double stop, double step = 1.0,
             std::optional<DType> dtype = std::nullopt);
Array arange(int64_t stop, std::optional<DType> dtype = std::nullopt);
Array arange(int64_t start, int64_t stop, int64_t step = 1,
             std::optional<DType> dtype = std::nullopt);
inline Array arange(int stop) { return arange(static_cast<int64_t>(stop)); }
inline Array arange(int start, int stop, int step = 1) {
  return arange(static_cast<int64_t>(start), static_cast<int64_t>(stop),
                static_cast<int64_t>(step));
}
Array linspace(double start, double stop, int64_t num = 50, bool endpoint = true,
               std::optional<DType> dtype = std::nullopt);
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType dtype = DType::kFloat32);
Array identity(int64_t n, DType dtype = DType::kFloat32);

// ---- dtypes ----
Array astype(const Array& x, DType dtype);
DType result_type(std::initializer_list<ArrayLike> xs);
// Broadcast shape of NumPy's rules; ValueError naming op and shapes when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast_shapes");
Array broadcast_to(const Array& x, const Shape& shape);

// ---- elementwise (ufuncs) ----
Array add(const ArrayLike& x, const ArrayLike& y);
Array subtract(const ArrayLike& x, const ArrayLike& y);
Array multiply(const ArrayLike& x, const ArrayLike& y);
Array divide(const ArrayLike& x, const ArrayLike& y);  // true division: ints -> float
Array true_divide(const ArrayLike& x, const ArrayLike& y);
Array power(const ArrayLike& x, const ArrayLike& y);
Array maximum(const ArrayLike& x, const ArrayLike& y);
Array minimum(const ArrayLike& x, const ArrayLike& y);
Array negative(const ArrayLike& x);
Array positive(const ArrayLike& x);
Array exp(const ArrayLike& x);  // integers promote to float, as jnp
Array log(const ArrayLike& x);
Array sin(const ArrayLike& x);
Array cos(const ArrayLike& x);
Array tanh(const ArrayLike& x);
Array sqrt(const ArrayLike& x);
Array square(const ArrayLike& x);
Array equal(const ArrayLike& x, const ArrayLike& y);
Array not_equal(const ArrayLike& x, const ArrayLike& y);
Array less(const ArrayLike& x, const ArrayLike& y);
Array less_equal(const ArrayLike& x, const ArrayLike& y);
Array greater(const ArrayLike& x, const ArrayLike& y);
Array greater_equal(const ArrayLike& x, const ArrayLike& y);
Array where(const ArrayLike& condition, const ArrayLike& x, const ArrayLike& y);

// ---- reductions ----
// axis: none = all axes. Negative axes allowed. dtype: the accumulation/result dtype.
using Axes = std::optional<std::vector<int64_t>>;
Array sum(const Array& x, Axes axis = std::nullopt, bool keepdims = false,
          std::optional<DType> dtype = std::nullopt);
Array sum(const Array& x, int64_t axis, bool keepdims = false);
Array max(const Array& x, Axes axis = std::nullopt, bool keepdims = false);
Array max(const Array& x, int64_t axis, bool keepdims = false);
Array mean(const Array& x, Axes axis = std::nullopt, bool keepdims = false,
           std::optional<DType> dtype = std::nullopt);
Array mean(const Array& x, int64_t axis, bool keepdims = false);

// ---- shapes and linear algebra ----
Array reshape(const Array& x, const Shape& shape);  // one -1 allowed
Array transpose(const Array& x, std::optional<std::vector<int64_t>> axes = std::nullopt);
Array matmul(const Array& a, const Array& b);  // NumPy's matmul broadcasting rules
Array dot(const Array& a, const Array& b);     // NumPy's dot rules

// ---- operators (NumPy semantics; C++ scalars are weak) ----
Array operator+(const ArrayLike& x, const ArrayLike& y);
Array operator-(const ArrayLike& x, const ArrayLike& y);
Array operator*(const ArrayLike& x, const ArrayLike& y);
Array operator/(const ArrayLike& x, const ArrayLike& y);
Array operator-(const Array& x);
Array operator==(const ArrayLike& x, const ArrayLike& y);
Array operator!=(const ArrayLike& x, const ArrayLike& y);
Array operator<(const ArrayLike& x, const ArrayLike& y);
Array operator<=(const ArrayLike& x, const ArrayLike& y);
Array operator>(const ArrayLike& x, const ArrayLike& y);
Array operator>=(const ArrayLike& x, const ArrayLike& y);

template <class S>
Array ArrayLike::scalar(S s) {
  if constexpr (std::is_same_v<S, bool>) {
    return numpy::scalar(s ? 1.0 : 0.0, DType::kBool);
  } else if constexpr (std::is_integral_v<S>) {
    return weak_scalar_int(static_cast<int64_t>(s));
  } else {
    return weak_scalar(static_cast<double>(s));
  }
}

}  // namespace tessera::numpy

namespace tessera {
// Operators found by argument-dependent lookup on tessera::Array.
using numpy::operator+;
using numpy::operator-;
using numpy::operator*;
using numpy::operator/;
using numpy::operator==;
using numpy::operator!=;
using numpy::operator<;
using numpy::operator<=;
using numpy::operator>;
using numpy::operator>=;
}  // namespace tessera
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"
