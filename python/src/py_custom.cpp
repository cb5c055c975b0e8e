// custom_jvp / custom_vjp (custom_derivatives_flat.h) over Python callables. The rules receive
// and return lists of Arrays; None stands for an undefined Array (a symbolic zero tangent or
// cotangent). The tessera package (tessera/_src/custom_derivatives.py) handles pytrees,
// nondiff_argnums and JAX's structure errors around these calls. As in py_transforms.cpp the
// C++ work runs with the GIL held and each callback takes it (re-entrantly); Python exceptions
// raised by a rule propagate out unchanged.
#include <memory>
#include <string>

#include "py_common.h"

namespace tessera::python {

namespace {

// The two lists of a pair returned by a flattened rule.
std::pair<py::object, py::object> pair_of(const py::object& r, const char* what) {
  if (!py::isinstance<py::tuple>(r) && !py::isinstance<py::list>(r))
    throw TypeError(std::string("[custom derivative] the flattened ") + what +
                    " must return a pair of lists");
  py::sequence s = py::reinterpret_borrow<py::sequence>(r);
  if (s.size() != 2)
    throw TypeError(std::string("[custom derivative] the flattened ") + what +
                    " must return a pair of lists");
  return {s[0], s[1]};
}

}  // namespace

void bind_custom(py::module_& m) {
  m.def(
      "custom_jvp_call",
      [](py::function f, py::function jvp, const py::sequence& args, bool symbolic_zeros) {
        flat::JvpFun rule = [jvp = share(std::move(jvp))](std::span<const Array> ps,
                                                          std::span<const Array> ts) {
          py::gil_scoped_acquire gil;
          auto [po, to] = pair_of((*jvp)(to_list(ps), to_list(ts)), "JVP rule");
          return std::make_pair(result_arrays(po, "custom derivative", "JVP rule", false),
                                result_arrays(to, "custom derivative", "JVP rule", true));
        };
        return to_list(flat::custom_jvp_call(flat_fun(std::move(f), "custom derivative"), rule,
                                             to_arrays(args), symbolic_zeros));
      },
      py::arg("f"), py::arg("jvp"), py::arg("args"), py::arg("symbolic_zeros") = false);
  m.def(
      "custom_vjp_call",
      [](py::function f, py::function fwd, py::function bwd, const py::sequence& args) {
        flat::FwdFun ffwd = [fwd = share(std::move(fwd))](std::span<const Array> xs) {
          py::gil_scoped_acquire gil;
          auto [outs, res] = pair_of((*fwd)(to_list(xs)), "fwd rule");
          return std::make_pair(result_arrays(outs, "custom derivative", "fwd rule", false),
                                result_arrays(res, "custom derivative", "fwd rule", false));
        };
        flat::BwdFun fbwd = [bwd = share(std::move(bwd))](std::span<const Array> res,
                                                          std::span<const Array> cts) {
          py::gil_scoped_acquire gil;
          return result_arrays((*bwd)(to_list(res), to_list(cts)), "custom derivative", "bwd rule",
                               true);
        };
        return to_list(flat::custom_vjp_call(flat_fun(std::move(f), "custom derivative"), ffwd,
                                             fbwd, to_arrays(args)));
      },
      py::arg("f"), py::arg("fwd"), py::arg("bwd"), py::arg("args"));
  // closure_convert's core: f staged on args; the closed-over values that are tracers become
  // leading invars (returned to hoist), concrete ones stay constants of the closed jaxpr.
  m.def("closure_convert_flat", [](py::function f, const py::sequence& args) {
    ClosedJaxpr c = flat::make_jaxpr(flat_fun(std::move(f), "custom derivative"), to_arrays(args));
    Jaxpr j = *c.jaxpr;
    std::vector<Var> hoisted, kept;
    std::vector<Array> hoisted_vals, kept_vals;
    for (size_t i = 0; i < c.consts.size(); ++i) {
      bool traced = c.consts[i].is_tracer();
      (traced ? hoisted : kept).push_back(j.constvars[i]);
      (traced ? hoisted_vals : kept_vals).push_back(c.consts[i]);
    }
    hoisted.insert(hoisted.end(), j.invars.begin(), j.invars.end());
    j.invars = std::move(hoisted);
    j.constvars = std::move(kept);
    j.cached_hash = 0;
    ClosedJaxpr out{std::make_shared<const Jaxpr>(std::move(j)), std::move(kept_vals)};
    return py::make_tuple(py::cast(out), to_list(hoisted_vals));
  });
  m.def("eval_jaxpr_flat", [](const ClosedJaxpr& j, const py::sequence& args) {
    return to_list(eval_jaxpr(j, to_arrays(args)));
  });
}

}  // namespace tessera::python
