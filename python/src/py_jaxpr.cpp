// JAX's view of a jaxpr from Python: ClosedJaxpr.jaxpr / .eqns / .literals, and the Jaxpr,
// JaxprEqn, Var and Literal objects (python/tessera/_src/jaxpr_view.py builds them from the
// plain structure `_view` returns here). Var names are the ones the printed jaxpr shows.
#include <string>
#include <unordered_map>

#include "py_common.h"
#include "tessera/param_types.h"

namespace tessera::python {

py::object param_to_py(const ParamValue& v) {
  return std::visit(
      [&](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, double> || std::is_same_v<T, std::string>) {
          return py::cast(x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return py::tuple(py::cast(x));
        } else if constexpr (std::is_same_v<T, DType>) {
          return py::str(std::string(dtype_name(x)));
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Jaxpr>>) {
          if (!x) return py::none();
          return py::cast(ClosedJaxpr{x, {}});
        } else if constexpr (std::is_same_v<T, JaxprList>) {
          py::tuple t(x.size());
          for (size_t i = 0; i < x.size(); ++i)
            t[i] = x[i] ? py::cast(ClosedJaxpr{x[i], {}}) : py::none();
          return t;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamTuple>>) {
          py::tuple t(x ? x->items.size() : 0);
          for (size_t i = 0; x && i < x->items.size(); ++i) t[i] = param_to_py(x->items[i]);
          return t;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamRecord>>) {
          if (!x) return py::none();
          // dot_general's as JAX passes it to policies: ((lhs_contract, rhs_contract),
          // (lhs_batch, rhs_batch)); other records as the tuple of their fields.
          std::vector<py::object> f;
          for (const ParamValue& e : x->fields) f.push_back(param_to_py(e));
          if (x->def == &kDotDimensionNumbersDef && f.size() == 4)
            return py::make_tuple(py::make_tuple(f[0], f[1]), py::make_tuple(f[2], f[3]));
          py::tuple t(f.size());
          for (size_t i = 0; i < f.size(); ++i) t[i] = f[i];
          return t;
        } else {
          return py::str(param_value_str(v));
        }
      },
      v);
}

namespace {

py::tuple aval_of(const Aval& a) {
  py::tuple shape(a.shape.size());
  for (size_t i = 0; i < a.shape.size(); ++i) shape[i] = a.shape[i];
  return py::make_tuple(shape, std::string(dtype_name(a.dtype)), a.weak_type);
}

// ("var", name, aval) or ("lit", value, aval, text).
struct Namer {
  std::unordered_map<uint64_t, std::string> names;
  py::tuple var(const Var& v) const {
    auto it = names.find(v.id());
    const std::string n = v.is_dropped() ? "_" : it != names.end() ? it->second : "?";
    return py::make_tuple("var", n, aval_of(v.aval()));
  }
  py::tuple atom(const Atom& a) const {
    if (const Var* v = std::get_if<Var>(&a)) return var(*v);
    const Literal& l = std::get<Literal>(a);
    return py::make_tuple("lit", py::cast(l.value()), aval_of(l.aval()), l.value_str());
  }
};

py::dict view(const Jaxpr& j) {
  const Namer n{var_names(j)};
  py::list constvars, invars, outvars, eqns;
  for (const Var& v : j.constvars) constvars.append(n.var(v));
  for (const Var& v : j.invars) invars.append(n.var(v));
  for (const Atom& a : j.outvars) outvars.append(n.atom(a));
  for (size_t i = 0; i < j.eqns.size(); ++i) {
    const JaxprEqn& e = j.eqns[i];
    py::dict params;
    for (const auto& [k, v] : e.params.items()) params[py::str(k)] = param_to_py(v);
    py::list ins, outs, effects;
    for (const Atom& a : e.invars) ins.append(n.atom(a));
    for (const Var& v : e.outvars) outs.append(n.var(v));
    for (const Effect& f : e.effects) effects.append(f.name);
    py::dict d;
    d["primitive"] = e.primitive ? e.primitive->name() : std::string("<null>");
    d["params"] = params;
    d["invars"] = ins;
    d["outvars"] = outs;
    d["effects"] = effects;
    d["text"] = eqn_to_string(j, i);
    eqns.append(d);
  }
  py::list effects;
  for (const Effect& f : j.effects) effects.append(f.name);
  py::dict d;
  d["constvars"] = constvars;
  d["invars"] = invars;
  d["outvars"] = outvars;
  d["eqns"] = eqns;
  d["effects"] = effects;
  d["text"] = to_string(j);
  return d;
}

}  // namespace

void bind_jaxpr_views(py::module_&, py::class_<ClosedJaxpr>& cls) {
  cls.def("_view", [](const ClosedJaxpr& j) {
    if (!j.jaxpr) throw ValueError("ClosedJaxpr: empty");
    return view(*j.jaxpr);
  });
}

}  // namespace tessera::python
