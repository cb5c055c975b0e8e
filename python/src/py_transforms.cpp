// The flat transformation core (transforms_flat.h) over Python callables. A Python function
// receives a list of Arrays and returns a list (or tuple) of array-likes; the tessera package
// flattens and unflattens pytrees around these calls. Python exceptions raised inside propagate
// out unchanged, and the trace context is restored on the way (TraceScope unwinding).
#include <string>

#include "py_common.h"

namespace tessera::python {

namespace {

py::list to_list(const std::vector<Array>& xs) {
  py::list l(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) l[i] = py::cast(xs[i]);
  return l;
}

std::vector<std::optional<int64_t>> to_axes_list(const py::sequence& s) {
  std::vector<std::optional<int64_t>> out;
  for (py::handle h : s) {
    if (h.is_none())
      out.emplace_back(std::nullopt);
    else
      out.emplace_back(as_int(h, "vmap", "axis"));
  }
  return out;
}

py::tuple aval_tuple(const Aval& a) {
  py::tuple shape(a.shape.size());
  for (size_t i = 0; i < a.shape.size(); ++i) shape[i] = a.shape[i];
  return py::make_tuple(shape, std::string(dtype_name(a.dtype)), a.weak_type);
}

}  // namespace

void bind_transforms(py::module_& m) {
  py::class_<ClosedJaxpr> closed(m, "ClosedJaxpr", py::dynamic_attr());
  closed.def("__str__", [](const ClosedJaxpr& j) { return to_string(j); })
      .def("__repr__", [](const ClosedJaxpr& j) { return to_string(j); })
      .def(
          "pretty_print", [](const ClosedJaxpr& j, int width) { return to_string(j, width); },
          py::arg("width") = 80)
      .def_property_readonly("consts", [](const ClosedJaxpr& j) { return to_list(j.consts); })
      .def_property_readonly("in_avals",
                             [](const ClosedJaxpr& j) {
                               py::list l;
                               for (const Var& v : j.jaxpr->invars) l.append(aval_tuple(v.aval()));
                               return l;
                             })
      .def_property_readonly("out_avals",
                             [](const ClosedJaxpr& j) {
                               py::list l;
                               for (const Atom& a : j.jaxpr->outvars)
                                 l.append(aval_tuple(atom_aval(a)));
                               return l;
                             })
      .def_property_readonly("num_eqns", [](const ClosedJaxpr& j) { return j.jaxpr->eqns.size(); })
      .def("eqn_primitives", [](const ClosedJaxpr& j) {
        py::list l;
        for (const JaxprEqn& e : j.jaxpr->eqns) l.append(e.primitive->name());
        return l;
      });
  bind_jaxpr_views(m, closed);

  py::class_<flat::Linearized, std::shared_ptr<flat::Linearized>>(m, "Linearized")
      .def_property_readonly("outs", [](const flat::Linearized& l) { return to_list(l.outs()); })
      .def("jvp",
           [](const flat::Linearized& l, const py::sequence& ts) {
             std::vector<Array> t;
             for (py::handle h : ts) t.push_back(h.is_none() ? Array() : to_array(h));
             return to_list(l.jvp(t));
           })
      .def("vjp",
           [](const flat::Linearized& l, const py::sequence& cts) {
             std::vector<Array> c;
             for (py::handle h : cts) c.push_back(h.is_none() ? Array() : to_array(h));
             return to_list(l.vjp(c));
           })
      .def_property_readonly("linear_jaxpr",
                             [](const flat::Linearized& l) { return l.linear_jaxpr(); });

  m.def("jvp", [](py::function f, const py::sequence& primals, const py::sequence& tangents) {
    std::vector<Array> t;
    for (py::handle h : tangents) t.push_back(h.is_none() ? Array() : to_array(h));
    auto [po, to] = flat::jvp(flat_fun(f, "transform"), to_arrays(primals), t);
    return py::make_tuple(to_list(po), to_list(to));
  });
  m.def("linearize", [](py::function f, const py::sequence& primals) {
    return std::make_shared<flat::Linearized>(
        flat::linearize(flat_fun(f, "transform"), to_arrays(primals)));
  });
  m.def("value_and_grad",
        [](py::function f, const py::sequence& args, bool allow_int, const std::string& op) {
          flat::ValueAndGrad r =
              flat::value_and_grad(flat_fun(f, "transform"), to_arrays(args), allow_int, op);
          return py::make_tuple(to_list(r.outs), to_list(r.grads));
        });
  m.def(
      "jacfwd",
      [](py::function f, const py::sequence& args, py::object num_aux) {
        std::vector<Array> outs;
        flat::CountFn count;
        if (!num_aux.is_none())
          count = [num_aux] {
            py::gil_scoped_acquire gil;
            return num_aux().cast<size_t>();
          };
        std::vector<Array> j =
            flat::jacfwd(flat_fun(f, "transform"), to_arrays(args), &outs, count);
        return py::make_tuple(to_list(j), to_list(outs));
      },
      py::arg("f"), py::arg("args"), py::arg("num_aux") = py::none());
  m.def(
      "jacrev",
      [](py::function f, const py::sequence& args, py::object num_aux) {
        std::vector<Array> outs;
        flat::CountFn count;
        if (!num_aux.is_none())
          count = [num_aux] {
            py::gil_scoped_acquire gil;
            return num_aux().cast<size_t>();
          };
        std::vector<Array> j =
            flat::jacrev(flat_fun(f, "transform"), to_arrays(args), &outs, count);
        return py::make_tuple(to_list(j), to_list(outs));
      },
      py::arg("f"), py::arg("args"), py::arg("num_aux") = py::none());
  m.def("linear_transpose", [](py::function f, const py::sequence& primals) {
    auto ft = flat::linear_transpose(flat_fun(f, "transform"), to_arrays(primals));
    return py::cpp_function([ft](const py::sequence& cts) { return to_list(ft(to_arrays(cts))); });
  });
  m.def(
      "vmap",
      [](py::function f, const py::sequence& args, const py::sequence& in_axes,
         py::function out_axes_for, py::handle axis_size_, const std::string& name) {
        std::optional<int64_t> axis_size = opt_int(axis_size_, "vmap", "axis_size");

        auto axes = to_axes_list(in_axes);
        std::function<std::vector<std::optional<int64_t>>(size_t)> oa = [out_axes_for](size_t n) {
          py::gil_scoped_acquire gil;
          return to_axes_list(out_axes_for(n));
        };
        return to_list(
            flat::vmap(flat_fun(f, "transform"), to_arrays(args), axes, oa, axis_size, name));
      },
      py::arg("f"), py::arg("args"), py::arg("in_axes"), py::arg("out_axes_for"),
      py::arg("axis_size") = py::none(), py::arg("axis_name") = "");
  // debug: None, or (func_src_info, [arg_name per flat argument]) for concretization errors.
  m.def(
      "make_jaxpr",
      [](py::function f, const py::sequence& args, py::object debug) {
        if (debug.is_none()) return flat::make_jaxpr(flat_fun(f, "transform"), to_arrays(args));
        py::tuple t = debug.cast<py::tuple>();
        DebugInfo d{"make_jaxpr", t[0].cast<std::string>(), t[1].cast<std::vector<std::string>>(),
                    "Python"};
        return flat::make_jaxpr(flat_fun(f, "transform"), to_arrays(args), &d);
      },
      py::arg("f"), py::arg("args"), py::arg("debug") = py::none());
  m.def("abstract_placeholder", [](py::object shape, py::object dtype, bool weak) {
    Shape s;
    for (py::handle h : shape) s.push_back(as_int(h, "abstract_placeholder", "shape entry"));
    return flat::abstract_placeholder(Aval{s, dtype_from_py(dtype), weak});
  });
}

}  // namespace tessera::python
