#include "trace/staging_trace.h"

#include <string>
#include <unordered_set>

#include "core/array_errors.h"

namespace tessera::trace {

std::string StagingTracer::str() const {
  return "Traced<" + aval().str() + ">with<" +
         (owner()->partial_eval() ? "JaxprTrace" : "DynamicJaxprTrace") + ">";
}

std::string StagingTracer::origin() const {
  const DebugInfo* d = owner()->debug_info();
  return d ? origin_message(*d, owner()->progenitor_inputs(var_)) : std::string();
}

std::vector<size_t> StagingTrace::progenitor_inputs(const Var& v) const {
  std::unordered_set<uint64_t> needed{v.id()};
  for (auto e = eqns_.rbegin(); e != eqns_.rend(); ++e) {
    bool used = false;
    for (const Var& o : e->outvars) used = used || needed.count(o.id()) > 0;
    if (!used) continue;
    for (const Atom& a : e->invars)
      if (const Var* in = std::get_if<Var>(&a)) needed.insert(in->id());
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < invars_.size(); ++i)
    if (needed.count(invars_[i].id())) out.push_back(i);
  return out;
}

Array StagingTrace::new_arg(const Aval& aval) {
  Var v(aval);
  invars_.push_back(v);
  return tracer_for(v);
}

Array StagingTrace::tracer_for(const Var& v) {
  return Array(std::make_shared<StagingTracer>(shared_from_this(), v));
}

bool StagingTrace::is_own(const Array& a) const {
  return a.defined() && a.is_tracer() && a.tracer()->trace() == this;
}

Atom StagingTrace::atom_for(const Array& a, std::string_view op) {
  if (const auto* t = own_tracer<StagingTracer>(a, this, op)) return t->var();
  if (a.is_concrete() && a.is_deleted())
    throw ValueError(op_message(op, deleted_array_message(a.aval())));
  if (a.is_concrete() && a.ndim() == 0) return Literal(a);
  auto it = const_index_.find(a.impl().get());
  if (it != const_index_.end()) return it->second;
  Var v(a.aval());
  constvars_.push_back(v);
  consts_.push_back(a);
  const_index_.emplace(a.impl().get(), v);
  return v;
}

std::vector<Array> StagingTrace::process_primitive(const Primitive& p, std::span<const Array> args,
                                                   const Params& params) {
  std::vector<Aval> in_avals;
  in_avals.reserve(args.size());
  bool any_own = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined())
      throw ValueError(op_message(p.name(), "argument " + std::to_string(i) +
                                                " is an empty Array handle (default-constructed)"));
    if (own_tracer<StagingTracer>(args[i], this, p.name())) any_own = true;
    in_avals.push_back(args[i].aval());
  }
  if (partial_eval_ && !any_own) return bind_in(parent(), p, args, params);
  // Constant folding (the primitive's const_fold rule): evaluated now, at the bottom trace.
  if (!any_own && p.const_fold && p.const_fold(args, params)) {
    Trace* bottom = this;
    while (bottom->parent() != nullptr) bottom = bottom->parent();
    return bind_in(bottom, p, args, params);
  }
  if (!p.abstract_eval)
    throw_internal("staging", "primitive '" + p.name() + "' has no abstract-eval rule");
  return stage(p, args, params, abstract_eval(p, in_avals, params));
}

std::vector<Array> StagingTrace::stage(const Primitive& p, std::span<const Array> args,
                                       const Params& params, std::vector<Aval> out_avals) {
  JaxprEqn eqn;
  eqn.invars.reserve(args.size());
  for (const Array& a : args) eqn.invars.push_back(atom_for(a, p.name()));
  eqn.primitive = &p;
  eqn.params = params;
  eqn.effects = primitive_effects(p);
  if (p.effects) eqn.effects = effects_union(eqn.effects, make_effects(p.effects(params)));
  std::vector<Array> outs;
  outs.reserve(out_avals.size());
  for (Aval& av : out_avals) {
    Var v(std::move(av));
    eqn.outvars.push_back(v);
    outs.push_back(tracer_for(v));
  }
  eqns_.push_back(std::move(eqn));
  return outs;
}

ClosedJaxpr StagingTrace::build(std::span<const Array> outs) {
  Jaxpr j;
  for (const Array& o : outs) j.outvars.push_back(atom_for(o, "make_jaxpr"));
  for (const JaxprEqn& e : eqns_) j.effects = effects_union(j.effects, e.effects);
  j.constvars = constvars_;
  j.invars = invars_;
  j.eqns = eqns_;
  return ClosedJaxpr{std::make_shared<const Jaxpr>(std::move(j)), consts_};
}

}  // namespace tessera::trace
