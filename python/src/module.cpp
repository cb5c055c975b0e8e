// tessera._tessera: the C++ core seen from Python (the tessera package wraps it).
#include "py_common.h"

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "Tessera's C++ core (use the tessera package)";
  tessera::register_all();
  tessera::python::bind_errors(m);
  tessera::python::bind_array(m);
  tessera::python::bind_ops(m);
  tessera::python::bind_numpy_ext(m);
  tessera::python::bind_lax_ext(m);
  tessera::python::bind_cumulative(m);
  tessera::python::bind_transforms(m);
  tessera::python::bind_custom(m);
  tessera::python::bind_callbacks(m);
  tessera::python::bind_control_flow(m);
  tessera::python::bind_checkpoint(m);
}
