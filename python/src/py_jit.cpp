// jax.jit's C++ side (tessera/jit.h): the trace cache of one jitted function over Python pytrees,
// and JitFunction, the base of the object jax.jit returns, whose __call__ is C++ end to end for
// calls with positional dynamic arguments only: flatten the arguments with the C++ pytrees, look
// the signature up, execute, unflatten — Python runs only on a miss (to trace). Other calls
// (keyword or static arguments, donation, disable_jit) go to the Python path
// (tessera/_src/jit.py's _call_python), which splits off static arguments (one cache per static
// key) and calls JitCache.call.
#include "core/array_errors.h"
#include "py_common.h"
#include "py_tree.h"
#include "tessera/config.h"
#include "tessera/jit.h"

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

// What a Python debug-info hook returns: (func_src_info, [arg_name per leaf]).
DebugInfo to_debug_info(py::handle r) {
  py::tuple t = py::reinterpret_borrow<py::tuple>(r);
  DebugInfo d;
  d.traced_for = "jit";
  d.func_src_info = t[0].cast<std::string>();
  d.arg_names = t[1].cast<std::vector<std::string>>();
  d.language = "Python";
  return d;
}

// A Python debug-info hook() called on a miss; None: the default (tessera/jit.h).
flat::DebugInfoFn debug_fn(py::object hook) {
  if (hook.is_none()) return nullptr;
  PyFn fn = share(py::reinterpret_borrow<py::function>(hook));
  return [fn] {
    py::gil_scoped_acquire gil;
    return to_debug_info((*fn)());
  };
}

struct JitFunction {
  std::shared_ptr<flat::JitCache> cache;  // the cache of positional-only calls
  bool fast = false;                      // no static arguments and no donation
};

py::object jit_function_call(py::object self, py::args args, py::kwargs kwargs) {
  JitFunction& jf = self.cast<JitFunction&>();
  if (!jf.fast || kwargs.size() != 0 || config::disable_jit())
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
  flat::DebugInfoFn debug = [&self, &in_def] {
    py::gil_scoped_acquire gil;
    return to_debug_info(
        self.attr("_positional_debug_info")(pytree::PyTreeDef{in_def, py::none()}));
  };
  std::vector<Array> outs = jf.cache->call(in_def, xs, fun, out_def, debug);
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
      // leaves flagged in `donated` are donated (the C++ call marks them in the equation and
      // deletes the concrete ones after it), except those with a live NumPy/DLPack view, whose
      // avals are returned for JAX's warning.
      .def(
          "call",
          [](flat::JitCache& c, const pytree::PyTreeDef& in_tree, const py::sequence& leaves,
             py::function f, py::object donated, py::object debug) {
            std::vector<Array> xs = to_arrays(leaves);
            py::list refused;
            std::vector<bool> mask;
            if (!donated.is_none()) {
              mask = donated.cast<std::vector<bool>>();
              mask.resize(xs.size(), false);
              for (size_t i = 0; i < mask.size(); ++i) {
                if (!mask[i]) continue;
                const Array& x = xs[i];
                if (x.is_concrete() && !x.is_deleted() &&
                    external_views(x.buffer("jit").get()) > 0) {
                  Aval strong = x.aval();
                  strong.weak_type = false;  // JAX's warning shows the buffer's type
                  refused.append(py::str(shaped_array_str(strong)));
                  mask[i] = false;
                }
              }
            }
            TreeDef out_def;
            std::vector<Array> outs = c.call(in_tree.def, xs, traced_fun(std::move(f), out_def),
                                             out_def, debug_fn(std::move(debug)), mask);
            return py::make_tuple(to_list(outs), pytree::PyTreeDef{out_def, py::none()}, refused);
          },
          py::arg("in_tree"), py::arg("leaves"), py::arg("fun"), py::arg("donated") = py::none(),
          py::arg("debug") = py::none())
      .def(
          "trace",
          [](flat::JitCache& c, const pytree::PyTreeDef& in_tree, const py::sequence& leaves,
             py::function f, py::object debug) {
            std::vector<Array> xs = to_arrays(leaves);
            TreeDef out_def;
            ClosedJaxpr j = c.trace(in_tree.def, xs, traced_fun(std::move(f), out_def), out_def,
                                    debug_fn(std::move(debug)));
            return py::make_tuple(j, pytree::PyTreeDef{out_def, py::none()});
          },
          py::arg("in_tree"), py::arg("leaves"), py::arg("fun"), py::arg("debug") = py::none())
      .def_property_readonly("trace_count", &flat::JitCache::trace_count);
  m.def("jit_compile_count", &flat::jit_compile_count);
  // The live NumPy/DLPack views of an array's buffer (0 for tracers and deleted arrays).
  m.def("external_views", [](const Array& a) {
    return a.is_concrete() && !a.is_deleted() ? external_views(a.buffer("jit").get()) : 0;
  });
  m.def("compiled_text", &flat::compiled_text);
  // XLA's cost-analysis keys for the optimized program of a closed jaxpr.
  m.def("cost_analysis", [](const ClosedJaxpr& j) {
    py::dict d;
    for (const auto& [k, v] : flat::cost_analysis(j)) d[py::str(k)] = v;
    return d;
  });
}

}  // namespace tessera::python
