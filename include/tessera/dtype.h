// Element types, JAX's type-promotion lattice with weak types, and finfo/iinfo.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// Order matters only for tables in dtype.cpp; never persist the numeric values.
enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  // JAX's extended dtypes.
  kFloat0,      // tangent type of integer/bool values: zero bytes per element
  kKeyThreefry  // a typed PRNG key (jax.random.key): one key = 2 x uint32 = 8 bytes
};
inline constexpr int kNumDTypes = 15;

// JAX's name: "float32", "bfloat16", "float0", "key<fry>".
std::string_view dtype_name(DType d);
// The jaxpr short name: "f32", "bf16", "i32", "u8", "bool", "float0", "key<fry>".
std::string_view dtype_short_name(DType d);
// Parses either a JAX name or a short name; throws ValueError for unknown names.
DType dtype_from_name(std::string_view name);
std::ostream& operator<<(std::ostream& os, DType d);

// Bytes per element (0 for float0).
size_t itemsize(DType d);
bool is_bool(DType d);
bool is_floating(DType d);  // f16, bf16, f32, f64
bool is_integer(DType d);   // signed or unsigned, not bool
bool is_signed_integer(DType d);
bool is_unsigned_integer(DType d);
bool is_extended(DType d);  // float0, key types
bool is_inexact(DType d);   // floating (complex later)

// 64-bit mode (jax_enable_x64). Off by default: 64-bit results are canonicalized to 32 bits.
void set_x64_enabled(bool on);
bool x64_enabled();
// int64->int32, uint64->uint32, float64->float32 unless x64 is enabled.
DType canonicalize_dtype(DType d);
DType default_int_dtype();    // int32 (int64 with x64)
DType default_uint_dtype();   // uint32 (uint64 with x64)
DType default_float_dtype();  // float32 (float64 with x64)

// A dtype with JAX's weak-type flag: C++/Python scalars are weak.
struct TypedDType {
  DType dtype;
  bool weak = false;
};

// jnp.promote_types: the least upper bound in JAX's lattice of two strong types.
// Not canonicalized (promote_types(f64, i32) == f64 even without x64), as JAX.
// Throws TypeError for extended dtypes that do not match.
DType promote_types(DType a, DType b);

// jnp.result_type over inputs with weak flags: JAX's lattice with weak types
// (i*, f*), canonicalized to the current 32/64-bit mode. The result is weak iff
// JAX's is (e.g. every input weak, or the bound is a weak type).
TypedDType result_type(std::initializer_list<TypedDType> in);
TypedDType result_type(const TypedDType* in, size_t n);

struct FInfo {
  DType dtype;
  int bits;
  double eps;   // 2^-mantissa_bits
  double max;   // largest finite
  double min;   // -max
  double tiny;  // smallest positive normal (== smallest_normal)
  double smallest_subnormal;
  double resolution;  // 10^-precision
  int precision;      // decimal digits
  int nmant;          // explicit mantissa bits
  int nexp;           // exponent bits
  int maxexp;
  int minexp;
};
struct IInfo {
  DType dtype;
  int bits;
  int64_t min;
  uint64_t max;
};
// Throw ValueError naming the dtype when it is not floating / integer.
FInfo finfo(DType d);
IInfo iinfo(DType d);

// ---- 16-bit floats: storage types with exact round-to-nearest-even conversions. ----
struct float16_t {
  uint16_t bits;
};
struct bfloat16_t {
  uint16_t bits;
};
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bfloat16_bits(float f);
inline float bfloat16_bits_to_float(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
// Double -> half rounds once (no double rounding through float).
uint16_t double_to_half_bits(double d);
uint16_t double_to_bfloat16_bits(double d);

inline float to_float(float16_t h) { return half_bits_to_float(h.bits); }
inline float to_float(bfloat16_t b) { return bfloat16_bits_to_float(b.bits); }

// Maps a C++ element type to its DType.
template <class T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct dtype_of<int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct dtype_of<uint16_t> {
  static constexpr DType value = DType::kUInt16;
};
template <>
struct dtype_of<uint32_t> {
  static constexpr DType value = DType::kUInt32;
};
template <>
struct dtype_of<uint64_t> {
  static constexpr DType value = DType::kUInt64;
};
template <>
struct dtype_of<float16_t> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct dtype_of<bfloat16_t> {
  static constexpr DType value = DType::kBFloat16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::kFloat64;
};
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

}  // namespace tessera
