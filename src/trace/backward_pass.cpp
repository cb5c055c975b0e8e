#include "trace/backward_pass.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tessera/errors.h"
#include "trace/tangents.h"

namespace tessera::trace {

std::vector<Array> backward_pass(const Jaxpr& j, std::span<const Array> consts,
                                 std::span<const Array> out_cts) {
  if (consts.size() != j.constvars.size() || out_cts.size() != j.outvars.size())
    throw_internal("backward_pass", "argument counts do not match the jaxpr");
  std::unordered_set<uint64_t> linear;
  std::unordered_map<uint64_t, Array> env;  // values of non-linear vars
  for (const Var& v : j.invars) linear.insert(v.id());
  for (size_t i = 0; i < consts.size(); ++i) env.emplace(j.constvars[i].id(), consts[i]);
  auto value_of = [&](const Atom& a) -> Array {
    if (const auto* l = std::get_if<Literal>(&a)) return l->value();
    return env.at(std::get<Var>(a).id());
  };
  auto is_linear = [&](const Atom& a) {
    const auto* v = std::get_if<Var>(&a);
    return v && linear.count(v->id()) != 0;
  };

  // Forward: evaluate the non-linear equations, mark the linear ones.
  std::vector<const JaxprEqn*> lin_eqns;
  for (const JaxprEqn& e : j.eqns) {
    bool lin = false;
    for (const Atom& a : e.invars) lin |= is_linear(a);
    if (lin) {
      for (const Var& v : e.outvars) linear.insert(v.id());
      lin_eqns.push_back(&e);
      continue;
    }
    std::vector<Array> args;
    for (const Atom& a : e.invars) args.push_back(value_of(a));
    std::vector<Array> outs = tessera::bind(*e.primitive, args, e.params);
    for (size_t k = 0; k < e.outvars.size(); ++k)
      if (!e.outvars[k].is_dropped()) env.emplace(e.outvars[k].id(), std::move(outs[k]));
  }

  // Backward.
  std::unordered_map<uint64_t, Array> ct_env;
  auto add_ct = [&](const Atom& a, const Array& ct) {
    if (!ct.defined() || !is_linear(a)) return;
    Array& slot = ct_env[std::get<Var>(a).id()];
    slot = add_tangents(slot, ct);
  };
  for (size_t i = 0; i < j.outvars.size(); ++i) add_ct(j.outvars[i], out_cts[i]);
  for (auto it = lin_eqns.rbegin(); it != lin_eqns.rend(); ++it) {
    const JaxprEqn& e = **it;
    std::vector<Array> cts(e.outvars.size());
    bool any = false;
    for (size_t k = 0; k < e.outvars.size(); ++k) {
      auto f = ct_env.find(e.outvars[k].id());
      if (f != ct_env.end()) {
        cts[k] = std::move(f->second);
        ct_env.erase(f);
        any = true;
      }
    }
    if (!any) continue;
    for (size_t k = 0; k < cts.size(); ++k)
      if (!cts[k].defined()) cts[k] = zeros_like_aval(e.outvars[k].aval());
    std::vector<Array> args;
    std::vector<Aval> avals;
    for (const Atom& a : e.invars) {
      avals.push_back(atom_aval(a));
      args.push_back(is_linear(a) ? Array() : value_of(a));
    }
    if (!e.primitive->transpose) {
      throw TypeError(op_message(e.primitive->name(),
                                 "transpose rule for '" + e.primitive->name() +
                                     "' is not implemented; reverse-mode differentiation (vjp, "
                                     "grad) reached it on a linear input"));
    }
    std::vector<Array> in_cts = e.primitive->transpose(cts, args, avals, e.params);
    for (size_t k = 0; k < e.invars.size() && k < in_cts.size(); ++k)
      add_ct(e.invars[k], in_cts[k]);
  }
  std::vector<Array> out;
  out.reserve(j.invars.size());
  for (const Var& v : j.invars) {
    auto f = ct_env.find(v.id());
    out.push_back(f == ct_env.end() ? Array() : f->second);
  }
  return out;
}

}  // namespace tessera::trace
