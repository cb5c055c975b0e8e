// tessera::lax convolutions (lax_conv.h): argument canonicalization as jax.lax does it (layout
// strings to dimension numbers, padding strings to pairs, default dilations), then one bind of
// conv_general_dilated; conv_transpose is JAX's composite (padding arithmetic, an optional
// kernel flip, a convolution with lhs dilation).
#include "tessera/lax_conv.h"

#include <algorithm>
#include <set>
#include <string>

#include "tessera/lax.h"
#include "tessera/primitive.h"
#include "tessera/lax_padding.h"

namespace tessera::lax {

namespace {

constexpr const char* kOp = "conv_general_dilated";

using Ints = std::vector<int64_t>;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string strings_str(const std::array<std::string, 3>& s) {
  return "(" + quoted(s[0]) + ", " + quoted(s[1]) + ", " + quoted(s[2]) + ")";
}

int64_t dilate_dim(int64_t d, int64_t dilation) { return d == 0 ? 0 : 1 + dilation * (d - 1); }

Ints spatial_of(const Shape& s, const Ints& spec) {
  Ints out;
  for (size_t i = 2; i < spec.size(); ++i) out.push_back(s[static_cast<size_t>(spec[i])]);
  return out;
}

// JAX's conv_general_permutations: (N, C, spatial in rhs order), (O, I, spatial), (N, C, ...).
ConvDimensionNumbers permutations(const std::array<std::string, 3>& specs) {
  const char pairs[3][2] = {{'N', 'C'}, {'O', 'I'}, {'N', 'C'}};
  for (size_t i = 0; i < 3; ++i) {
    const std::string& s = specs[i];
    const auto count = [&](char ch) { return std::count(s.begin(), s.end(), ch); };
    if (count(pairs[i][0]) != 1 || count(pairs[i][1]) != 1)
      throw TypeError(op_message(kOp, "convolution dimension_numbers[" + std::to_string(i) +
                                          "] must contain the characters '" + pairs[i][0] +
                                          "' and '" + pairs[i][1] + "' exactly once, got " +
                                          quoted(s) + "."));
    if (std::set<char>(s.begin(), s.end()).size() != s.size())
      throw TypeError(op_message(kOp, "convolution dimension_numbers[" + std::to_string(i) +
                                          "] cannot have duplicate characters, got " + quoted(s) +
                                          "."));
  }
  auto spatial_set = [&](size_t i) {
    std::set<char> out(specs[i].begin(), specs[i].end());
    out.erase(pairs[i][0]);
    out.erase(pairs[i][1]);
    return out;
  };
  if (spatial_set(0) != spatial_set(1) || spatial_set(1) != spatial_set(2))
    throw TypeError(op_message(kOp,
                               "convolution dimension_numbers elements must each have the same "
                               "set of spatial characters, got " +
                                   strings_str(specs) + "."));
  const std::string& rhs = specs[1];
  std::array<Ints, 3> perms;
  for (size_t i = 0; i < 3; ++i) {
    const std::string& s = specs[i];
    Ints perm{static_cast<int64_t>(s.find(pairs[i][0])), static_cast<int64_t>(s.find(pairs[i][1]))};
    // Spatial dims in the order their characters appear in the rhs string.
    for (char ch : rhs)
      if (ch != 'O' && ch != 'I') perm.push_back(static_cast<int64_t>(s.find(ch)));
    perms[i] = std::move(perm);
  }
  return ConvDimensionNumbers{perms[0], perms[1], perms[2]};
}

Ints ones(int64_t n) { return Ints(static_cast<size_t>(std::max<int64_t>(n, 0)), 1); }

// JAX's _conv_transpose_padding for one dim: the (before, after) padding of the dilated input
// that makes conv_transpose the transpose of a forward convolution with this padding.
std::pair<int64_t, int64_t> transpose_padding(int64_t k, int64_t s, const ConvPadding& padding,
                                              size_t dim) {
  int64_t pad_a = 0, pad_len = 0;
  if (padding.is_string() && padding.name() == "SAME") {
    pad_len = k + s - 2;
    pad_a = s > k - 1 ? k - 1 : (pad_len + 1) / 2;
  } else if (padding.is_string() && padding.name() == "VALID") {
    pad_len = k + s - 2 + std::max<int64_t>(k - s, 0);
    pad_a = k - 1;
  } else if (!padding.is_string()) {
    const auto [lo, hi] = padding.pairs()[dim];
    pad_a = k - lo - 1;
    pad_len = pad_a + (k - hi - 1);
  } else {
    throw ValueError(op_message("conv_transpose", "Invalid padding mode: " + padding.name()));
  }
  return {pad_a, pad_len - pad_a};
}

}  // namespace

ConvDimensionNumbers conv_dimension_numbers(const Shape& lhs_shape, const Shape& rhs_shape,
                                            const ConvLayout& dimension_numbers) {
  if (dimension_numbers.is_numbers()) return dimension_numbers.numbers();
  if (lhs_shape.size() != rhs_shape.size())
    throw TypeError(op_message(kOp, "convolution requires lhs and rhs ndim to be equal, got " +
                                        std::to_string(lhs_shape.size()) + " and " +
                                        std::to_string(rhs_shape.size()) + "."));
  if (dimension_numbers.is_none()) {
    Ints iota(lhs_shape.size());
    for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<int64_t>(i);
    return ConvDimensionNumbers{iota, iota, iota};
  }
  const auto& specs = dimension_numbers.strings();
  for (size_t i = 0; i < 3; ++i)
    if (specs[i].size() != lhs_shape.size())
      throw TypeError(op_message(kOp, "convolution dimension_numbers[" + std::to_string(i) +
                                          "] must have len equal to the ndim of lhs and rhs, got " +
                                          std::to_string(specs[i].size()) +
                                          " for lhs and rhs shapes " + shape_str(lhs_shape) +
                                          " and " + shape_str(rhs_shape) + "."));
  return permutations(specs);
}

Array conv_general_dilated(const Array& lhs, const Array& rhs,
                           const std::vector<int64_t>& window_strides, const ConvPadding& padding,
                           const std::vector<int64_t>& lhs_dilation,
                           const std::vector<int64_t>& rhs_dilation,
                           const ConvLayout& dimension_numbers, int64_t feature_group_count,
                           int64_t batch_group_count, std::optional<Precision> precision,
                           std::optional<DType> preferred_element_type) {
  const ConvDimensionNumbers dn =
      conv_dimension_numbers(lhs.shape(), rhs.shape(), dimension_numbers);
  Ints ld = lhs_dilation, rd = rhs_dilation;
  if (ld.empty()) {
    ld = ones(lhs.ndim() - 2);
  } else if (padding.is_string() &&
             !std::all_of(ld.begin(), ld.end(), [](int64_t d) { return d == 1; })) {
    throw ValueError(op_message(kOp,
                                "String padding is not implemented for transposed convolution "
                                "using this op. Please either exactly specify the required "
                                "padding or use conv_transpose."));
  }
  if (rd.empty()) rd = ones(rhs.ndim() - 2);
  PaddingPairs pads;
  if (padding.is_string()) {
    // The shape rule reports bad ranks and dimension numbers; resolve only well-formed ones.
    if (lhs.ndim() == rhs.ndim() && lhs.ndim() >= 2 &&
        dn.lhs_spec.size() == static_cast<size_t>(lhs.ndim()) &&
        dn.rhs_spec.size() == dn.lhs_spec.size() && rd.size() == dn.rhs_spec.size() - 2) {
      Ints window = spatial_of(rhs.shape(), dn.rhs_spec);
      for (size_t i = 0; i < window.size(); ++i) window[i] = dilate_dim(window[i], rd[i]);
      pads = padtype_to_pads(spatial_of(lhs.shape(), dn.lhs_spec), window, window_strides,
                             padding.name());
    } else {
      (void)parse_padding_type(padding.name());  // a bad string is reported first
      pads.assign(static_cast<size_t>(std::max<int64_t>(lhs.ndim() - 2, 0)), {0, 0});
    }
  } else {
    pads = padding.pairs();
  }
  Params p{{"window_strides", window_strides},
           {"padding", padding_pairs_param(pads)},
           {"lhs_dilation", ld},
           {"rhs_dilation", rd},
           {"dimension_numbers", dn.to_param()},
           {"feature_group_count", feature_group_count},
           {"batch_group_count", batch_group_count}};
  if (precision) p.set("precision", to_param(*precision));
  if (preferred_element_type)
    p.set("preferred_element_type", canonicalize_dtype(*preferred_element_type));
  return bind1(*find_primitive("conv_general_dilated"), {lhs, rhs}, p);
}

Array conv(const Array& lhs, const Array& rhs, const std::vector<int64_t>& window_strides,
           const ConvPadding& padding, std::optional<Precision> precision,
           std::optional<DType> preferred_element_type) {
  return conv_general_dilated(lhs, rhs, window_strides, padding, {}, {}, {}, 1, 1, precision,
                              preferred_element_type);
}

Array conv_with_general_padding(const Array& lhs, const Array& rhs,
                                const std::vector<int64_t>& window_strides,
                                const ConvPadding& padding,
                                const std::vector<int64_t>& lhs_dilation,
                                const std::vector<int64_t>& rhs_dilation,
                                std::optional<Precision> precision,
                                std::optional<DType> preferred_element_type) {
  return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, {}, 1,
                              1, precision, preferred_element_type);
}

Array conv_transpose(const Array& lhs, const Array& rhs, const std::vector<int64_t>& strides,
                     const ConvPadding& padding, const std::vector<int64_t>& rhs_dilation,
                     const ConvLayout& dimension_numbers, bool transpose_kernel,
                     std::optional<Precision> precision,
                     std::optional<DType> preferred_element_type, bool use_consistent_padding) {
  const int64_t nd = lhs.ndim();
  if (nd != rhs.ndim() || nd < 2)
    throw ValueError(op_message(
        "conv_transpose", "lhs and rhs must have one rank of at least 2, got shapes " +
                              shape_str(lhs.shape()) + " and " + shape_str(rhs.shape()) + "."));
  ConvLayout layout = dimension_numbers;
  if (layout.is_none()) {
    static const char* const kDefaults[4][3] = {{"NC", "IO", "NC"},
                                                {"NHC", "HIO", "NHC"},
                                                {"NHWC", "HWIO", "NHWC"},
                                                {"NHWDC", "HWDIO", "NHWDC"}};
    if (nd > 5)
      throw ValueError(op_message("conv_transpose",
                                  "No 4+ dimensional dimension_number defaults; pass "
                                  "dimension_numbers for operands of rank " +
                                      std::to_string(nd) + "."));
    const auto& d = kDefaults[nd - 2];
    layout = ConvLayout(d[0], d[1], d[2]);
  }
  const ConvDimensionNumbers dn = conv_dimension_numbers(lhs.shape(), rhs.shape(), layout);
  const Ints k = spatial_of(rhs.shape(), dn.rhs_spec);
  const Ints rd = rhs_dilation.empty() ? ones(nd - 2) : rhs_dilation;
  if (strides.size() != k.size() || rd.size() != k.size())
    throw ValueError(op_message("conv_transpose",
                                "strides and rhs_dilation must have one entry per spatial "
                                "dimension (" +
                                    std::to_string(k.size()) + ")."));
  ConvPadding pads = padding;
  const bool string_fwd =
      padding.is_string() && (padding.name() == "SAME" || padding.name() == "VALID");
  if (use_consistent_padding || string_fwd) {
    if (!padding.is_string() && padding.pairs().size() != k.size())
      throw TypeError(
          op_message("conv_transpose", "Wrong number of explicit pads for convolution: expected " +
                                           std::to_string(k.size()) + ", got " +
                                           std::to_string(padding.pairs().size()) + "."));
    PaddingPairs pp;
    for (size_t i = 0; i < k.size(); ++i)
      pp.push_back(transpose_padding(dilate_dim(k[i], rd[i]), strides[i], padding, i));
    pads = ConvPadding(std::move(pp));
  }
  Array kernel = rhs;
  if (transpose_kernel) {
    kernel = rev(kernel, Ints(dn.rhs_spec.begin() + 2, dn.rhs_spec.end()));
    Ints perm(static_cast<size_t>(nd));
    for (int64_t i = 0; i < nd; ++i) perm[static_cast<size_t>(i)] = i;
    std::swap(perm[static_cast<size_t>(dn.rhs_spec[0])], perm[static_cast<size_t>(dn.rhs_spec[1])]);
    kernel = transpose(kernel, perm);
  }
  return conv_general_dilated(lhs, kernel, ones(nd - 2), pads, strides, rd, dn, 1, 1, precision,
                              preferred_element_type);
}

}  // namespace tessera::lax
