// lax.associative_scan over a Python combining function on flat lists, the cumulative lax
// functions and jnp.cumsum & co. (tessera/_src/lax_cumulative.py and tessera.numpy wrap them
// with jax's signatures and pytrees). As py_custom.cpp: the C++ work runs with the GIL held and
// the callback takes it (re-entrantly); Python exceptions raised by fn propagate unchanged.
#include <memory>
#include <string>

#include "py_common.h"
#include "tessera/lax_assoc_scan.h"
#include "tessera/numpy_cumulative.h"

namespace tessera::python {

namespace {

using LaxCum = Array (*)(const Array&, int64_t, bool);
void def_cum(py::module_& lax, const char* name, LaxCum f) {
  lax.def(
      name,
      [f, name](py::handle x, py::handle axis_, bool reverse) {
        int64_t axis = as_int(axis_, name, "axis");
        Array a = to_array(x);
        py::gil_scoped_release nogil;
        return f(a, axis, reverse);
      },
      py::arg("operand"), py::arg("axis") = 0, py::arg("reverse") = false);
}

using NpCum = Array (*)(const numpy::ArrayLike&, std::optional<int64_t>, std::optional<DType>);
void def_np_cum(py::module_& np, const char* name, NpCum f) {
  np.def(
      name,
      [f, name](py::handle x, py::object axis, py::object dtype) {
        Array a = to_array(x);
        std::optional<int64_t> ax;
        if (!axis.is_none()) ax = as_int(axis, name, "axis");
        std::optional<DType> dt = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return f(a, ax, dt);
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("dtype") = py::none());
}

using NpCumApi = Array (*)(const numpy::ArrayLike&, std::optional<int64_t>, std::optional<DType>,
                           bool);
void def_np_cum_api(py::module_& np, const char* name, NpCumApi f) {
  np.def(
      name,
      [f, name](py::handle x, py::object axis, py::object dtype, bool include_initial) {
        Array a = to_array(x);
        std::optional<int64_t> ax;
        if (!axis.is_none()) ax = as_int(axis, name, "axis");
        std::optional<DType> dt = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return f(a, ax, dt, include_initial);
      },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("dtype") = py::none(),
      py::arg("include_initial") = false);
}

}  // namespace

void bind_cumulative(py::module_& m) {
  py::module_ lax = m.attr("lax");
  py::module_ np = m.attr("numpy");
  // fn(list of 2n arrays) -> list of n arrays.
  lax.def(
      "associative_scan",
      [](py::function fn, const py::sequence& elems, bool reverse, py::handle axis_) {
        int64_t axis = as_int(axis_, "associative_scan", "axis");

        flat::Fun f = flat_fun(std::move(fn), "associative_scan");
        return to_list(lax::associative_scan(f, to_arrays(elems), reverse, axis));
      },
      py::arg("fn"), py::arg("elems"), py::arg("reverse") = false, py::arg("axis") = 0);
  def_cum(lax, "cumsum", lax::cumsum);
  def_cum(lax, "cumprod", lax::cumprod);
  def_cum(lax, "cummax", lax::cummax);
  def_cum(lax, "cummin", lax::cummin);
  def_cum(lax, "cumlogsumexp", lax::cumlogsumexp);
  def_np_cum(np, "cumsum", numpy::cumsum);
  def_np_cum(np, "cumprod", numpy::cumprod);
  def_np_cum(np, "nancumsum", numpy::nancumsum);
  def_np_cum(np, "nancumprod", numpy::nancumprod);
  def_np_cum_api(np, "cumulative_sum", numpy::cumulative_sum);
  def_np_cum_api(np, "cumulative_prod", numpy::cumulative_prod);
}

}  // namespace tessera::python
