// Convolutions (tessera/lax_conv.h) as _tessera.conv. python/tessera/lax/_conv.py turns JAX's
// argument forms (ConvDimensionNumbers, precision enums/strings, sequences) into the plain
// ones taken here: padding a string or (low, high) pairs, dimension numbers None, three
// layout strings or three int tuples. The C++ work runs with the GIL released.
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "py_common.h"
#include "tessera/lax_conv.h"

namespace tessera::python {

namespace {

using Ints = std::vector<int64_t>;
using PadArg = std::variant<std::string, lax::PaddingPairs>;
using LayoutArg = std::optional<std::variant<std::array<std::string, 3>, std::array<Ints, 3>>>;

lax::ConvPadding padding_of(const PadArg& p) {
  if (auto* s = std::get_if<std::string>(&p)) return lax::ConvPadding(*s);
  return lax::ConvPadding(std::get<lax::PaddingPairs>(p));
}

lax::ConvLayout layout_of(const LayoutArg& d) {
  if (!d) return lax::ConvLayout();
  if (auto* s = std::get_if<std::array<std::string, 3>>(&*d))
    return lax::ConvLayout((*s)[0], (*s)[1], (*s)[2]);
  const auto& n = std::get<std::array<Ints, 3>>(*d);
  return lax::ConvLayout(ConvDimensionNumbers{n[0], n[1], n[2]});
}

std::optional<Precision> precision_of(std::optional<int> p) {
  if (!p) return std::nullopt;
  return static_cast<Precision>(*p);
}

}  // namespace

void bind_conv(py::module_& m) {
  py::module_ c = m.def_submodule("conv", "lax convolutions");
  c.def(
      "conv_general_dilated",
      [](py::handle lhs, py::handle rhs, Ints strides, PadArg padding, std::optional<Ints> ld,
         std::optional<Ints> rd, LayoutArg dn, int64_t fgc, int64_t bgc, std::optional<int> prec,
         py::object pref) {
        Array l = to_array(lhs), r = to_array(rhs);
        auto p = opt_dtype(pref);
        py::gil_scoped_release nogil;
        return lax::conv_general_dilated(l, r, strides, padding_of(padding), ld.value_or(Ints{}),
                                         rd.value_or(Ints{}), layout_of(dn), fgc, bgc,
                                         precision_of(prec), p);
      },
      py::arg("lhs"), py::arg("rhs"), py::arg("window_strides"), py::arg("padding"),
      py::arg("lhs_dilation"), py::arg("rhs_dilation"), py::arg("dimension_numbers"),
      py::arg("feature_group_count"), py::arg("batch_group_count"), py::arg("precision"),
      py::arg("preferred_element_type"));
  c.def(
      "conv_transpose",
      [](py::handle lhs, py::handle rhs, Ints strides, PadArg padding, std::optional<Ints> rd,
         LayoutArg dn, bool transpose_kernel, std::optional<int> prec, py::object pref,
         bool consistent) {
        Array l = to_array(lhs), r = to_array(rhs);
        auto p = opt_dtype(pref);
        py::gil_scoped_release nogil;
        return lax::conv_transpose(l, r, strides, padding_of(padding), rd.value_or(Ints{}),
                                   layout_of(dn), transpose_kernel, precision_of(prec), p,
                                   consistent);
      },
      py::arg("lhs"), py::arg("rhs"), py::arg("strides"), py::arg("padding"),
      py::arg("rhs_dilation"), py::arg("dimension_numbers"), py::arg("transpose_kernel"),
      py::arg("precision"), py::arg("preferred_element_type"), py::arg("use_consistent_padding"));
  c.def(
      "conv_dimension_numbers",
      [](Ints lhs_shape, Ints rhs_shape, LayoutArg dn) {
        const ConvDimensionNumbers d =
            lax::conv_dimension_numbers(lhs_shape, rhs_shape, layout_of(dn));
        return std::array<Ints, 3>{d.lhs_spec, d.rhs_spec, d.out_spec};
      },
      py::arg("lhs_shape"), py::arg("rhs_shape"), py::arg("dimension_numbers"));
}

}  // namespace tessera::python
