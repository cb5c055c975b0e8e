// jax.jit's C++ side (tessera/jit.h): the trace cache of one jitted function over Python pytrees,
// and JitFunction, the base of the object jax.jit returns, whose __call__ is C++ end to end for
// calls with positional dynamic arguments only: flatten the arguments with the C++ pytrees, look
// the signature up, execute, unflatten — Python runs only on a miss (to trace). Other calls
// (keyword or static arguments, donation, disable_jit) go to the Python path
// (tessera/_src/jit.py's _call_python), which splits off static arguments (one cache per static
// key) and calls JitCache.call.
#include "compiler/executable.h"
#include "py_common.h"
#include "py_tree.h"
#include "tessera/config.h"
#include "tessera/jit.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::python {

namespace {

// The flat function of a Python trace hook: hook(leaves) -> (out_leaves, out_treedef); the
// output structure lands in out_def.
flat::Fun traced_fun(py::function hook, TreeDef& out_def) {
  PyFn fn = share(std::move(hook));
  return [fn, &out_def](std::span<const Array> v) {
    py::gil_scoped_acquire gil;
    py::tuple r = (*fn)(to_list(v));
    out_def = r[1].cast<const pytree::PyTreeDef&>().def;
    return result_arrays(r[0], "jit");
  };
}

struct JitFunction {
  std::shared_ptr<flat::JitCache> cache;  // the cache of positional-only calls
  bool fast = false;                      // no static arguments and no donation
};

py::object jit_function_call(py::object self, py::args args, py::kwargs kwargs) {
  JitFunction& jf = self.cast<JitFunction&>();
  if (!jf.fast || kwargs.size() != 0 || config::read_bool("jax_disable_jit"))
    return self.attr("_call_python")(*args, **kwargs);
  py::list leaves;
  pytree::Flattener fl{leaves.ptr(), nullptr, true, false, {}};
  // The structure of (args, {}), as the Python path flattens (dynamic args, dynamic kwargs), so
  // both paths share cache entries.
  static const TreeDef no_kwargs = [] {
    py::dict d;
    py::list l;
    pytree::Flattener f{l.ptr(), nullptr, true, false, {}};
    return f.flatten(d.ptr());
  }();
  TreeDef in_def = TreeDef::tuple({fl.flatten(args.ptr()), no_kwargs});
  std::vector<Array> xs;
  try {
    xs = to_arrays(leaves);
  } catch (const std::exception&) {
    // A leaf that is not an array: JAX's error, naming where it was passed.
    self.attr("_invalid_argument")(args, py::dict());
    throw;
  }
  TreeDef out_def;
  flat::Fun fun;
  // Only a miss calls the Python tracer (made lazily: a hit builds no Python closure).
  fun = [&self, &in_def, &out_def](std::span<const Array> v) {
    py::gil_scoped_acquire gil;
    py::function hook = self.attr("_positional_tracer")(pytree::PyTreeDef{in_def, py::none()});
    return traced_fun(std::move(hook), out_def)(v);
  };
  std::vector<Array> outs = jf.cache->call(in_def, xs, fun, out_def);
  std::vector<py::object> objs;
  objs.reserve(outs.size());
  for (const Array& a : outs) objs.push_back(py::cast(a));
  std::vector<PyObject*> ptrs;
  ptrs.reserve(objs.size());
  for (const py::object& o : objs) ptrs.push_back(o.ptr());
  size_t pos = 0, kpos = 0;
  return pytree::unflatten_rec(out_def, ptrs.data(), pos, nullptr, kpos);
}

}  // namespace

void bind_jit(py::module_& m) {
  py::class_<JitFunction>(m, "JitFunction", py::dynamic_attr())
      .def(py::init([](std::shared_ptr<flat::JitCache> cache, bool fast) {
             return JitFunction{std::move(cache), fast};
           }),
           py::arg("cache"), py::arg("fast"))
      .def("__call__", &jit_function_call);
  py::class_<flat::JitCache, std::shared_ptr<flat::JitCache>>(m, "JitCache")
      .def(py::init([](std::string name, bool keep_unused, bool inline_call) {
             JitOptions o;
             o.name = std::move(name);
             o.keep_unused = keep_unused;
             o.inline_call = inline_call;
             return std::make_shared<flat::JitCache>(std::move(o));
           }),
           py::arg("name"), py::arg("keep_unused") = false, py::arg("inline") = false)
      // f(leaves) -> (out_leaves, out_treedef); returns (outputs, out_treedef, refused): the
      // leaves flagged in `donated` that are concrete Tessera Arrays are deleted after the call
      // (an output that is the same array gets a handle of its own), except those with a live
      // NumPy/DLPack view, whose avals are returned for JAX's warning.
      .def(
          "call",
          [](flat::JitCache& c, const pytree::PyTreeDef& in_tree, const py::sequence& leaves,
             py::function f, py::object donated) {
            std::vector<Array> xs = to_arrays(leaves);
            TreeDef out_def;
            std::vector<Array> outs =
                c.call(in_tree.def, xs, traced_fun(std::move(f), out_def), out_def);
            py::list refused;
            if (!donated.is_none()) {
              const std::vector<bool> mask = donated.cast<std::vector<bool>>();
              for (size_t i = 0; i < mask.size() && i < xs.size(); ++i) {
                if (!mask[i] || !py::isinstance<Array>(leaves[i])) continue;
                Array x = xs[i];
                if (!x.is_concrete() || x.is_deleted()) continue;
                if (external_views(x.buffer("jit").get()) > 0) {
                  std::string shape = "ShapedArray(" + std::string(dtype_name(x.dtype())) + "[";
                  for (size_t d = 0; d < x.shape().size(); ++d)
                    shape += (d ? "," : "") + std::to_string(x.shape()[d]);
                  refused.append(py::str(shape + "])"));
                  continue;
                }
                for (Array& o : outs)
                  if (o.impl() == x.impl()) o = Array(o.aval(), o.buffer("jit"));
                x.delete_buffer();
              }
            }
            return py::make_tuple(to_list(outs), pytree::PyTreeDef{out_def, py::none()}, refused);
          },
          py::arg("in_tree"), py::arg("leaves"), py::arg("fun"), py::arg("donated") = py::none())
      .def(
          "trace",
          [](flat::JitCache& c, const pytree::PyTreeDef& in_tree, const py::sequence& leaves,
             py::function f) {
            std::vector<Array> xs = to_arrays(leaves);
            TreeDef out_def;
            ClosedJaxpr j = c.trace(in_tree.def, xs, traced_fun(std::move(f), out_def), out_def);
            return py::make_tuple(j, pytree::PyTreeDef{out_def, py::none()});
          },
          py::arg("in_tree"), py::arg("leaves"), py::arg("fun"))
      .def_property_readonly("trace_count", &flat::JitCache::trace_count);
  m.def("jit_compile_count", &flat::jit_compile_count);
  // The live NumPy/DLPack views of an array's buffer (0 for tracers and deleted arrays).
  m.def("external_views", [](const Array& a) {
    return a.is_concrete() && !a.is_deleted() ? external_views(a.buffer("jit").get()) : 0;
  });
  m.def("compiled_text", &flat::compiled_text);
  // XLA's cost-analysis keys for the optimized program of a closed jaxpr.
  m.def("cost_analysis", [](const ClosedJaxpr& j) {
    trace::Staged st = trace::hoist_consts(j);
    compiler::CostAnalysis c = compiler::cost_analysis(*compiler::optimize(*st.jaxpr));
    py::dict d;
    d["flops"] = c.flops;
    d["bytes accessed"] = c.bytes_accessed;
    return d;
  });
}

}  // namespace tessera::python
