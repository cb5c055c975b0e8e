// lax.padtype_to_pads (include/tessera/lax_padding.h).
#include "tessera/lax_padding.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "tessera/errors.h"

namespace tessera::lax {

namespace {

std::string shape_str(std::span<const int64_t> v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  if (v.size() == 1) s += ",";
  return s + ")";
}

}  // namespace

PaddingType parse_padding_type(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "VALID") return PaddingType::kValid;
  if (upper == "SAME") return PaddingType::kSame;
  if (upper == "SAME_LOWER") return PaddingType::kSameLower;
  throw Error(op_message("padtype_to_pads",
                         "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
                         "got " +
                             std::string(name) + "."));
}

std::string_view padding_type_name(PaddingType type) {
  switch (type) {
    case PaddingType::kValid:
      return "VALID";
    case PaddingType::kSame:
      return "SAME";
    case PaddingType::kSameLower:
      return "SAME_LOWER";
  }
  throw TypeError(op_message(
      "padtype_to_pads", "Unknown padding type: " + std::to_string(static_cast<int>(type)) + "."));
}

std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(std::span<const int64_t> in_shape,
                                                         std::span<const int64_t> window_shape,
                                                         std::span<const int64_t> window_strides,
                                                         PaddingType padding) {
  if (window_shape.size() != in_shape.size() || window_strides.size() != in_shape.size())
    throw ValueError(
        op_message("padtype_to_pads", "in_shape " + shape_str(in_shape) + ", window_shape " +
                                          shape_str(window_shape) + " and window_strides " +
                                          shape_str(window_strides) +
                                          " must have one length (one entry per dimension)."));
  if (padding != PaddingType::kValid && padding != PaddingType::kSame &&
      padding != PaddingType::kSameLower)
    padding_type_name(padding);  // throws JAX's "Unknown padding type"
  std::vector<std::pair<int64_t, int64_t>> pads(in_shape.size(), {0, 0});
  if (padding == PaddingType::kValid) return pads;
  for (size_t i = 0; i < in_shape.size(); ++i) {
    const int64_t stride = window_strides[i];
    if (stride <= 0)
      throw ValueError(op_message("padtype_to_pads", "window_strides must be positive, got " +
                                                         shape_str(window_strides) + "."));
    // ceil(in / stride) for in >= 0 (JAX's _ceil_divide is floor-based: -(-in // stride)).
    const int64_t in = in_shape[i];
    const int64_t out = in >= 0 ? (in + stride - 1) / stride : -((-in) / stride);
    const int64_t total = std::max<int64_t>(0, (out - 1) * stride + window_shape[i] - in);
    const int64_t half = total / 2;
    pads[i] = padding == PaddingType::kSame ? std::pair{half, total - half}
                                            : std::pair{total - half, half};
  }
  return pads;
}

std::vector<std::pair<int64_t, int64_t>> padtype_to_pads(std::span<const int64_t> in_shape,
                                                         std::span<const int64_t> window_shape,
                                                         std::span<const int64_t> window_strides,
                                                         std::string_view padding) {
  return padtype_to_pads(in_shape, window_shape, window_strides, parse_padding_type(padding));
}

}  // namespace tessera::lax
