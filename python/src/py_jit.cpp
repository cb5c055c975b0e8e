// jax.jit's C++ side (tessera/jit.h): the trace cache of one jitted function over Python pytrees.
// tessera/_src/jit.py splits off static arguments (one cache per static key), flattens the
// dynamic ones with the C++ pytrees and calls JitCache.call, which looks the signature up, stages
// the Python function on a miss and binds the `jit` primitive.
#include "py_common.h"
#include "py_tree.h"
#include "tessera/jit.h"

namespace tessera::python {

void bind_jit(py::module_& m) {
  py::class_<flat::JitCache, std::shared_ptr<flat::JitCache>>(m, "JitCache")
      .def(py::init([](std::string name, bool keep_unused, bool inline_call) {
             JitOptions o;
             o.name = std::move(name);
             o.keep_unused = keep_unused;
             o.inline_call = inline_call;
             return std::make_shared<flat::JitCache>(std::move(o));
           }),
           py::arg("name"), py::arg("keep_unused") = false, py::arg("inline") = false)
      // f(leaves) -> (out_leaves, out_treedef); returns (outputs, out_treedef).
      .def(
          "call",
          [](flat::JitCache& c, const pytree::PyTreeDef& in_tree, const py::sequence& leaves,
             py::function f) {
            std::vector<Array> xs = to_arrays(leaves);
            TreeDef out_def;
            PyFn fn = share(std::move(f));
            flat::Fun fun = [fn, &out_def](std::span<const Array> v) {
              py::gil_scoped_acquire gil;
              py::tuple r = (*fn)(to_list(v));
              out_def = r[1].cast<const pytree::PyTreeDef&>().def;
              return result_arrays(r[0], "jit");
            };
            std::vector<Array> outs = c.call(in_tree.def, xs, fun, out_def);
            return py::make_tuple(to_list(outs), pytree::PyTreeDef{out_def, py::none()});
          },
          py::arg("in_tree"), py::arg("leaves"), py::arg("fun"))
      .def(
          "trace",
          [](flat::JitCache& c, const pytree::PyTreeDef& in_tree, const py::sequence& leaves,
             py::function f) {
            std::vector<Array> xs = to_arrays(leaves);
            TreeDef out_def;
            PyFn fn = share(std::move(f));
            flat::Fun fun = [fn, &out_def](std::span<const Array> v) {
              py::gil_scoped_acquire gil;
              py::tuple r = (*fn)(to_list(v));
              out_def = r[1].cast<const pytree::PyTreeDef&>().def;
              return result_arrays(r[0], "jit");
            };
            ClosedJaxpr j = c.trace(in_tree.def, xs, fun, out_def);
            return py::make_tuple(j, pytree::PyTreeDef{out_def, py::none()});
          },
          py::arg("in_tree"), py::arg("leaves"), py::arg("fun"))
      .def_property_readonly("trace_count", &flat::JitCache::trace_count);
  m.def("jit_compile_count", &flat::jit_compile_count);
  m.def("compiled_text", &flat::compiled_text);
}

}  // namespace tessera::python
