// Host callbacks (tessera/debug.h) over Python callables: debug_callback, pure_callback and
// io_callback take a Python function of a list of concrete Arrays (pure/io return a list of
// array-likes, converted with JAX's dtype canonicalization and checked by the core). The
// tessera package (tessera/debug.py, tessera/_src/callback.py) handles pytrees, formatting and
// JAX's argument checks. As in py_custom.cpp each call takes the GIL (re-entrantly) and Python
// exceptions raised by a callback propagate unchanged.
#include <memory>
#include <string>

#include "py_common.h"
#include "tessera/debug.h"

namespace tessera::python {

namespace {

std::string fn_name(const py::function& f, const char* fallback) {
  py::object q = py::getattr(f, "__qualname__", py::none());
  if (q.is_none()) q = py::getattr(f, "__name__", py::none());
  return q.is_none() ? std::string(fallback) : py::str(q).cast<std::string>();
}

// A host function returning the flattened leaves of the Python callback's result.
HostFun result_fun(PyFn f) {
  return [f = std::move(f)](std::span<const Array> xs) {
    py::gil_scoped_acquire gil;
    py::object r = (*f)(to_list(xs));
    std::vector<Array> out;
    for (py::handle h : py::reinterpret_borrow<py::sequence>(r)) out.push_back(to_array(h));
    return out;
  };
}

// (shape, dtype) pairs from Python.
std::vector<Aval> to_avals(const py::sequence& specs) {
  std::vector<Aval> out;
  for (py::handle h : specs) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    out.push_back(Aval{to_shape(s[0], "callback", "result shape"), dtype_from_py(s[1]), false});
  }
  return out;
}

}  // namespace

void bind_callbacks(py::module_& m) {
  // NotImplementedError (vmap of a pure_callback without a vmap_method) as Python's.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
  m.def(
      "debug_callback",
      [](py::function f, const py::sequence& args, bool ordered) {
        std::string name = fn_name(f, "_flat_callback");
        HostFun host = [f = share(std::move(f))](std::span<const Array> xs) {
          py::gil_scoped_acquire gil;
          (*f)(to_list(xs));
          return std::vector<Array>{};
        };
        flat::debug_callback(std::move(host), to_arrays(args), ordered, std::move(name));
      },
      py::arg("callback"), py::arg("args"), py::arg("ordered") = false);
  m.def(
      "pure_callback",
      [](py::function f, const py::sequence& result_avals, const py::sequence& args,
         const py::object& vmap_method) {
        std::string name = fn_name(f, "pure_callback");
        VmapMethod vm = vmap_method.is_none() ? VmapMethod::kUnspecified
                                              : parse_vmap_method(vmap_method.cast<std::string>());
        return to_list(flat::pure_callback(result_fun(share(std::move(f))), to_avals(result_avals),
                                           to_arrays(args), vm, std::move(name)));
      },
      py::arg("callback"), py::arg("result_avals"), py::arg("args"),
      py::arg("vmap_method") = py::none());
  m.def(
      "io_callback",
      [](py::function f, const py::sequence& result_avals, const py::sequence& args, bool ordered) {
        std::string name = fn_name(f, "io_callback");
        return to_list(flat::io_callback(result_fun(share(std::move(f))), to_avals(result_avals),
                                         to_arrays(args), ordered, std::move(name)));
      },
      py::arg("callback"), py::arg("result_avals"), py::arg("args"), py::arg("ordered") = false);
}

}  // namespace tessera::python
