// lax.PaddingType and lax.padtype_to_pads: the explicit (low, high) padding that "VALID",
// "SAME" and "SAME_LOWER" stand for, shared by windowed reductions and convolutions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::lax {

// JAX's lax.PaddingType (member order is JAX's value minus one).
enum class PaddingType : int32_t { kValid, kSame, kSameLower };

// Parses "VALID", "SAME", "SAME_LOWER" in any letter case, as JAX does (`padding.upper()`).
// Throws tessera::Error (Python: RuntimeError, as JAX) naming the string otherwise.
PaddingType parse_padding_type(std::string_view name);
// "VALID", "SAME" or "SAME_LOWER".
std::string_view padding_type_name(PaddingType type);

// The (low, high) padding of each dimension. VALID: all (0, 0). SAME and SAME_LOWER: the
// output has ceil(in / stride) elements and the total padding max(0, (out - 1) * stride +
// window - in) is split in halves; an odd extra element goes high for SAME and low for
// SAME_LOWER. The three spans must have one length; strides must be positive.
std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(std::span<const int64_t> in_shape,
                                                         std::span<const int64_t> window_shape,
                                                         std::span<const int64_t> window_strides,
                                                         PaddingType padding);
std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(std::span<const int64_t> in_shape,
                                                         std::span<const int64_t> window_shape,
                                                         std::span<const int64_t> window_strides,
                                                         std::string_view padding);

}  // namespace tessera::lax
