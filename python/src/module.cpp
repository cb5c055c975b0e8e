// tessera._tessera: the C++ core seen from Python (the tessera package wraps it).
#include "py_common.h"
#include "runtime/thread_pool.h"
#include "tessera/config.h"

namespace tessera::python {
void bind_linalg_spectral(py::module_& m);  // py_linalg_spectral.cpp
void bind_io(py::module_& m);               // py_io.cpp
void bind_random_dists(py::module_& m);     // py_random_dists.cpp
void bind_window(py::module_& m);           // py_window.cpp
void bind_conv(py::module_& m);             // py_conv.cpp
void bind_index_funcs(py::module_& m);      // py_index_funcs.cpp
void bind_scipy_special(py::module_& m);    // py_scipy_special.cpp
void bind_scipy_stats(py::module_& m);      // py_scipy_stats.cpp
void bind_linear_solve(py::module_& m);     // py_linear_solve.cpp
}  // namespace tessera::python

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "Tessera's C++ core (use the tessera package)";
  tessera::python::bind_errors(m);
  // Read every TESSERA_* variable now: a bad value fails the import with its ValueError
  // message instead of surfacing at some later, unrelated call.
  tessera::devices();
  tessera::runtime::num_threads();
  tessera::x64_enabled();
  tessera::config::flags();
  tessera::register_all();
  tessera::python::bind_array(m);
  tessera::python::bind_numpy(m);
  tessera::python::bind_lax(m);
  tessera::python::bind_indexing(m);
  tessera::python::bind_cumulative(m);
  tessera::python::bind_sort(m);
  tessera::python::bind_index_funcs(m);
  tessera::python::bind_linalg_spectral(m);
  tessera::python::bind_linalg_solve(m);
  tessera::python::bind_random(m);
  tessera::python::bind_random_dists(m);
  tessera::python::bind_nn(m);
  tessera::python::bind_nn_initializers(m);
  tessera::python::bind_scipy_special(m);
  tessera::python::bind_transforms(m);
  tessera::python::bind_custom(m);
  tessera::python::bind_linear_solve(m);
  tessera::python::bind_callbacks(m);
  tessera::python::bind_control_flow(m);
  tessera::python::bind_checkpoint(m);
  tessera::python::bind_devices(m);
  tessera::python::bind_tree(m);
  tessera::python::bind_config(m);
  tessera::python::bind_jit(m);
  tessera::python::bind_io(m);
  tessera::python::bind_window(m);
  tessera::python::bind_conv(m);
  tessera::python::bind_scipy_stats(m);
}
