// Helpers shared by the eager CPU kernels: dtype dispatch and element conversions.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tessera/dtype.h"
#include "tessera/errors.h"

namespace tessera::kernels {

// Calls f.template operator()<T>() with the C++ storage type of dtype d.
// float16/bfloat16 dispatch to their storage structs; kernels compute them in float.
template <class F>
decltype(auto) dispatch_dtype(DType d, F&& f) {
  switch (d) {
    case DType::kBool:
      return f.template operator()<bool>();
    case DType::kInt8:
      return f.template operator()<int8_t>();
    case DType::kInt16:
      return f.template operator()<int16_t>();
    case DType::kInt32:
      return f.template operator()<int32_t>();
    case DType::kInt64:
      return f.template operator()<int64_t>();
    case DType::kUInt8:
      return f.template operator()<uint8_t>();
    case DType::kUInt16:
      return f.template operator()<uint16_t>();
    case DType::kUInt32:
      return f.template operator()<uint32_t>();
    case DType::kUInt64:
      return f.template operator()<uint64_t>();
    case DType::kFloat16:
      return f.template operator()<float16_t>();
    case DType::kBFloat16:
      return f.template operator()<bfloat16_t>();
    case DType::kFloat32:
      return f.template operator()<float>();
    case DType::kFloat64:
      return f.template operator()<double>();
    default:
      break;
  }
  throw TypeError(std::string("[kernel] dtype ") + std::string(dtype_name(d)) +
                  " has no CPU kernel; convert it to a numeric dtype first");
}

// Calls f.template operator()<U>() with the unsigned integer type of an element's size, for
// kernels that only move bytes (transpose, select, broadcast). Size 0 (float0) moves nothing.
template <class F>
void dispatch_bits(size_t size, F&& f) {
  switch (size) {
    case 0:
      return;
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
    default:
      break;
  }
  throw InternalError("internal error in kernels: no byte-moving kernel for elements of " +
                      std::to_string(size) + " bytes");
}

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

// The type arithmetic is done in: float for 16-bit floats, T otherwise.
template <class T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <class T>
inline compute_t<T> load(T v) {
  if constexpr (std::is_same_v<T, float16_t>)
    return half_bits_to_float(v.bits);
  else if constexpr (std::is_same_v<T, bfloat16_t>)
    return bfloat16_bits_to_float(v.bits);
  else
    return v;
}
template <class T>
inline T store(compute_t<T> v) {
  if constexpr (std::is_same_v<T, float16_t>)
    return float16_t{float_to_half_bits(v)};
  else if constexpr (std::is_same_v<T, bfloat16_t>)
    return bfloat16_t{float_to_bfloat16_bits(v)};
  else
    return v;
}

}  // namespace tessera::kernels
