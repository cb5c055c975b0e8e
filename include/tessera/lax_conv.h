// tessera::lax convolutions: conv_general_dilated and JAX's wrappers around it (conv,
// conv_with_general_padding, conv_transpose) and conv_dimension_numbers, with JAX's argument
// forms: padding as a string ("VALID", "SAME", "SAME_LOWER") or (low, high) pairs, dimension
// numbers as nullopt (NC..., OI..., NC...), a ConvDimensionNumbers or three layout strings
// such as {"NHWC", "HWIO", "NHWC"}.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/array.h"
#include "tessera/param_types.h"

namespace tessera::lax {

// {lhs_spec, rhs_spec, out_spec}: (batch, feature, spatial...) positions of lhs and out, and
// (output feature, input feature, spatial...) positions of rhs (param_types.h).
using ConvDimensionNumbers = tessera::ConvDimensionNumbers;
using PaddingPairs = std::vector<std::pair<int64_t, int64_t>>;

// A padding argument: a padding string or explicit (low, high) pairs (negative pads crop).
class ConvPadding {
 public:
  ConvPadding(const char* name) : value_(std::string(name)) {}
  ConvPadding(std::string name) : value_(std::move(name)) {}
  ConvPadding(PaddingPairs pairs) : value_(std::move(pairs)) {}
  ConvPadding(std::initializer_list<std::pair<int64_t, int64_t>> pairs)
      : value_(PaddingPairs(pairs)) {}
  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  const std::string& name() const { return std::get<std::string>(value_); }
  const PaddingPairs& pairs() const { return std::get<PaddingPairs>(value_); }

 private:
  std::variant<std::string, PaddingPairs> value_;
};

// A dimension_numbers argument: none (the default layout), a ConvDimensionNumbers, or three
// layout strings (lhs, rhs, out) as lax.conv_general_dilated takes them.
class ConvLayout {
 public:
  ConvLayout() = default;
  ConvLayout(std::nullopt_t) {}
  ConvLayout(ConvDimensionNumbers dn) : value_(std::move(dn)) {}
  ConvLayout(std::string lhs, std::string rhs, std::string out)
      : value_(std::array<std::string, 3>{std::move(lhs), std::move(rhs), std::move(out)}) {}
  bool is_none() const { return std::holds_alternative<std::monostate>(value_); }
  bool is_numbers() const { return std::holds_alternative<ConvDimensionNumbers>(value_); }
  const ConvDimensionNumbers& numbers() const { return std::get<ConvDimensionNumbers>(value_); }
  const std::array<std::string, 3>& strings() const {
    return std::get<std::array<std::string, 3>>(value_);
  }

 private:
  std::variant<std::monostate, ConvDimensionNumbers, std::array<std::string, 3>> value_;
};

// lax.conv_dimension_numbers: the ConvDimensionNumbers a layout argument stands for. Spatial
// dims of lhs and out are ordered as they appear in the rhs string. TypeError (JAX's messages)
// for ranks that differ, strings of the wrong length, missing or repeated N/C/O/I, or spatial
// characters that differ between the three strings.
ConvDimensionNumbers conv_dimension_numbers(const Shape& lhs_shape, const Shape& rhs_shape,
                                            const ConvLayout& dimension_numbers);

// lax.conv_general_dilated. Empty lhs_dilation / rhs_dilation mean all ones (JAX's None). A
// string padding is resolved by lax.padtype_to_pads on the (dilated) kernel; it is a
// ValueError together with an lhs_dilation other than ones (use conv_transpose).
Array conv_general_dilated(const Array& lhs, const Array& rhs,
                           const std::vector<int64_t>& window_strides, const ConvPadding& padding,
                           const std::vector<int64_t>& lhs_dilation = {},
                           const std::vector<int64_t>& rhs_dilation = {},
                           const ConvLayout& dimension_numbers = {},
                           int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                           std::optional<Precision> precision = std::nullopt,
                           std::optional<DType> preferred_element_type = std::nullopt);

// lax.conv: NC.../OI... layouts, no dilation.
Array conv(const Array& lhs, const Array& rhs, const std::vector<int64_t>& window_strides,
           const ConvPadding& padding, std::optional<Precision> precision = std::nullopt,
           std::optional<DType> preferred_element_type = std::nullopt);

// lax.conv_with_general_padding: NC.../OI... layouts with dilations.
Array conv_with_general_padding(const Array& lhs, const Array& rhs,
                                const std::vector<int64_t>& window_strides,
                                const ConvPadding& padding,
                                const std::vector<int64_t>& lhs_dilation,
                                const std::vector<int64_t>& rhs_dilation,
                                std::optional<Precision> precision = std::nullopt,
                                std::optional<DType> preferred_element_type = std::nullopt);

// lax.conv_transpose: a fractionally strided convolution (lhs_dilation = strides). The default
// layouts are TensorFlow's (NC/IO, NHC/HIO, NHWC/HWIO, NHWDC/HWDIO). "SAME"/"VALID" (and pairs
// when use_consistent_padding) are the forward convolution's padding; otherwise pairs pad the
// dilated input directly. transpose_kernel flips the kernel's spatial dims and swaps its
// feature dims (Keras' Conv2DTranspose, the gradient of conv).
Array conv_transpose(const Array& lhs, const Array& rhs, const std::vector<int64_t>& strides,
                     const ConvPadding& padding, const std::vector<int64_t>& rhs_dilation = {},
                     const ConvLayout& dimension_numbers = {}, bool transpose_kernel = false,
                     std::optional<Precision> precision = std::nullopt,
                     std::optional<DType> preferred_element_type = std::nullopt,
                     bool use_consistent_padding = false);

}  // namespace tessera::lax
