// lax.padtype_to_pads and the windowed reductions (lax.reduce_window and its monoid forms) on
// flat arguments; python/tessera/lax/_window.py gives them jax.lax's signatures.
#include <string>
#include <utility>
#include <vector>

#include "py_common.h"
#include "tessera/lax_padding.h"
#include "tessera/lax_window.h"

namespace tessera::python {

namespace {

lax::Pads to_pads(const py::object& pads, const char* op) {
  lax::Pads out;
  for (py::handle row : pads) {
    py::sequence pair = py::reinterpret_borrow<py::sequence>(row);
    if (py::len(pair) != 2)
      throw TypeError(std::string("[") + op +
                      "] padding must be a sequence of (low, high) pairs, one per dimension");
    out.emplace_back(as_int(pair[0], op, "padding"), as_int(pair[1], op, "padding"));
  }
  return out;
}

using Monoid = Array (*)(const Array&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                         const lax::WindowPadding&, const std::vector<int64_t>&,
                         const std::vector<int64_t>&);

void def_monoid(py::module_& lax, const char* name, Monoid f) {
  // name(operand, window_dimensions, window_strides, padding pairs, base_dilation,
  // window_dilation): the window arguments already resolved by _window.py.
  lax.def(name, [f, name](py::handle x, py::object dims, py::object strides, py::object pads,
                          py::object bdil, py::object wdil) {
    Array a = to_array(x);
    auto d = to_ints(dims, name, "window_dimensions");
    auto s = to_ints(strides, name, "window_strides");
    lax::Pads p = to_pads(pads, name);
    auto b = to_ints(bdil, name, "base_dilation");
    auto w = to_ints(wdil, name, "window_dilation");
    py::gil_scoped_release nogil;
    return f(a, d, s, p, b, w);
  });
}

}  // namespace

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
  def_monoid(lax, "reduce_window_sum", lax::reduce_window_sum);
  def_monoid(lax, "reduce_window_max", lax::reduce_window_max);
  def_monoid(lax, "reduce_window_min", lax::reduce_window_min);
  // reduce_window_generic(operands, init_values, computation, window args...): the generic
  // primitive; computation(accs, values) takes and returns lists of rank-0 arrays (_window.py
  // adapts pytrees). Traced with the GIL held.
  lax.def("reduce_window_generic",
          [](py::sequence operands, py::sequence inits, py::function computation, py::object dims,
             py::object strides, py::object pads, py::object bdil, py::object wdil) {
            const char* op = "reduce_window";
            lax::WindowComputation body = [computation](const std::vector<Array>& accs,
                                                        const std::vector<Array>& values) {
              py::gil_scoped_acquire gil;
              py::object r = computation(to_list(accs), to_list(values));
              if (!py::isinstance<py::sequence>(r))
                throw TypeError("[reduce_window] the computation must return a list of arrays");
              return to_arrays(r);
            };
            return to_list(lax::reduce_window(
                arrays_of(operands), arrays_of(inits), body, to_ints(dims, op, "window_dimensions"),
                to_ints(strides, op, "window_strides"), to_pads(pads, op),
                to_ints(bdil, op, "base_dilation"), to_ints(wdil, op, "window_dilation"),
                /*detect_monoid=*/false));
          });
}

}  // namespace tessera::python
