// jax.checkpoint / checkpoint_name / saved_residuals and the rematerialization policies
// (tessera/checkpoint.h) over Python callables. The tessera package (tessera/_src/checkpoint.py)
// handles pytrees, static_argnums and argument names around these flat calls. A policy is a
// CheckpointPolicy object: a built-in one (by name), a names policy, the union of two, or a
// Python predicate called as adapter(prim_name, [(shape, dtype_name), ...], params_dict).
#include <memory>
#include <string>

#include "py_common.h"
#include "tessera/checkpoint.h"
#include "tessera/param_types.h"

namespace tessera::python {

namespace {

// The policy handle seen from Python.
struct PyPolicy {
  CheckpointPolicy p;
};

CheckpointPolicy builtin_policy(const std::string& name) {
  namespace cp = checkpoint_policies;
  if (name == "everything_saveable") return cp::everything_saveable();
  if (name == "nothing_saveable") return cp::nothing_saveable();
  if (name == "dots_saveable" || name == "checkpoint_dots") return cp::dots_saveable();
  if (name == "dots_with_no_batch_dims_saveable" || name == "checkpoint_dots_with_no_batch_dims")
    return cp::dots_with_no_batch_dims_saveable();
  throw ValueError("[checkpoint_policies] unknown policy '" + name + "'");
}

const char* kind_str(SavedResidual::Kind k) {
  switch (k) {
    case SavedResidual::Kind::kArgument:
      return "argument";
    case SavedResidual::Kind::kNamed:
      return "named";
    case SavedResidual::Kind::kOutput:
      return "output";
    case SavedResidual::Kind::kConstant:
      return "constant";
    case SavedResidual::Kind::kLiteral:
      return "literal";
  }
  return "output";
}

}  // namespace

void bind_checkpoint(py::module_& m) {
  py::class_<PyPolicy>(m, "CheckpointPolicy")
      .def_property_readonly("name", [](const PyPolicy& p) { return p.p->name(); })
      .def("__repr__", [](const PyPolicy& p) { return "CheckpointPolicy(" + p.p->name() + ")"; });
  m.def("checkpoint_policy",
        [](const std::string& name) { return PyPolicy{builtin_policy(name)}; });
  m.def(
      "checkpoint_names_policy",
      [](const std::string& kind, const std::vector<std::string>& names) {
        namespace cp = checkpoint_policies;
        if (kind == "save_only_these_names") return PyPolicy{cp::save_only_these_names(names)};
        if (kind == "save_any_names_but_these")
          return PyPolicy{cp::save_any_names_but_these(names)};
        if (kind == "save_anything_except_these_names")
          return PyPolicy{cp::save_anything_except_these_names(names)};
        throw ValueError("[checkpoint_policies] unknown names policy '" + kind + "'");
      },
      py::arg("kind"), py::arg("names"));
  m.def("checkpoint_both_policies", [](const PyPolicy& a, const PyPolicy& b) {
    return PyPolicy{checkpoint_policies::save_from_both_policies(a.p, b.p)};
  });
  m.def(
      "checkpoint_callable_policy",
      [](py::function adapter, const std::string& name) {
        PolicyFn fn = [f = share(std::move(adapter))](const Primitive& prim,
                                                      std::span<const Aval> avals,
                                                      const Params& params) {
          py::gil_scoped_acquire gil;
          py::list av;
          for (const Aval& a : avals)
            av.append(py::make_tuple(py::tuple(py::cast(a.shape)),
                                     py::str(std::string(dtype_name(a.dtype)))));
          py::dict ps;
          for (const auto& [k, v] : params.items()) ps[py::str(k)] = param_to_py(v);
          return (*f)(prim.name(), av, ps).cast<bool>();
        };
        return PyPolicy{checkpoint_policies::custom(name, std::move(fn))};
      },
      py::arg("adapter"), py::arg("name"));
  m.def(
      "checkpoint",
      [](py::function f, const py::sequence& args, std::optional<PyPolicy> policy,
         bool prevent_cse) {
        CheckpointOptions o;
        if (policy) o.policy = policy->p;
        o.prevent_cse = prevent_cse;
        return to_list(flat::checkpoint(flat_fun(std::move(f), "checkpoint"), to_arrays(args), o));
      },
      py::arg("f"), py::arg("args"), py::arg("policy") = py::none(), py::arg("prevent_cse") = true);
  m.def(
      "checkpoint_name",
      [](py::handle x, const std::string& name) {
        return flat::checkpoint_name(to_array(x), name);
      },
      py::arg("x"), py::arg("name"));
  // [(shape, dtype_name, aval_str, kind, arg_index, name, where), ...]
  m.def(
      "saved_residuals",
      [](py::function f, const py::sequence& args) {
        std::vector<SavedResidual> rs =
            flat::saved_residuals(flat_fun(std::move(f), "checkpoint"), to_arrays(args));
        py::list out;
        for (const SavedResidual& r : rs)
          out.append(py::make_tuple(py::tuple(py::cast(r.aval.shape)),
                                    std::string(dtype_name(r.aval.dtype)), r.aval.str(),
                                    kind_str(r.kind), r.arg_index, r.name, r.where));
        return out;
      },
      py::arg("f"), py::arg("args"));
}

}  // namespace tessera::python
