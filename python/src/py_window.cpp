// lax.padtype_to_pads and the windowed reductions (lax.reduce_window and its monoid forms) on
// flat arguments; python/tessera/lax/_window.py gives them jax.lax's signatures.
#include <string>
#include <utility>
#include <vector>

#include "py_common.h"
#include "tessera/lax_padding.h"

namespace tessera::python {

void bind_window(py::module_& m) {
  py::module_ lax = m.attr("lax");
  // padtype_to_pads(in_shape, window_shape, window_strides, padding: str) -> [(lo, hi), ...]
  lax.def("padtype_to_pads", [](py::object in_shape, py::object window_shape,
                                py::object window_strides, std::string padding) {
    auto in = to_ints(in_shape, "padtype_to_pads", "in_shape");
    auto w = to_ints(window_shape, "padtype_to_pads", "window_shape");
    auto s = to_ints(window_strides, "padtype_to_pads", "window_strides");
    py::list out;
    for (auto [lo, hi] : lax::padtype_to_pads(in, w, s, padding))
      out.append(py::make_tuple(lo, hi));
    return out;
  });
}

}  // namespace tessera::python
