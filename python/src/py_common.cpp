// Conversions shared by the bindings (py_common.h) that are not one-liners.
#include "py_common.h"

namespace tessera::python {

std::vector<Array> result_arrays(py::handle r, const char* op, const char* what, bool none_ok) {
  if (!py::isinstance<py::sequence>(r) || py::isinstance<py::str>(r))
    throw TypeError(std::string("[") + op + "] the flattened " + what +
                    " must return a list of arrays");
  std::vector<Array> out;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(r)) {
    if (!h.is_none()) {
      out.push_back(to_array(h));
    } else if (none_ok) {
      out.emplace_back();
    } else {
      throw TypeError(std::string("[") + op + "] the flattened " + what +
                      " returned None where an array is required");
    }
  }
  return out;
}

flat::Fun flat_fun(py::function f, const char* op) {
  return [f = share(std::move(f)), op](std::span<const Array> xs) {
    py::gil_scoped_acquire gil;
    return result_arrays((*f)(to_list(xs)), op);
  };
}

}  // namespace tessera::python
