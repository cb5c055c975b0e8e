// Dead-code elimination: see dce.h for what and why.
#include "ir/passes/dce.h"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace tessera::ir {

std::pair<std::shared_ptr<const Jaxpr>, std::vector<bool>> dce(
    const Jaxpr& j, const std::vector<bool>& used_outputs) {
  if (used_outputs.size() != j.outvars.size())
    throw_internal("ir/dce", "used_outputs has " + std::to_string(used_outputs.size()) +
                                 " flags for a jaxpr with " + std::to_string(j.outvars.size()) +
                                 " outputs");
  std::unordered_set<uint64_t> live;
  auto mark = [&](const Atom& a) {
    if (const Var* v = std::get_if<Var>(&a)) live.insert(v->id());
  };
  auto is_live = [&](const Var& v) { return !v.is_dropped() && live.count(v.id()) > 0; };

  Jaxpr out;
  out.constvars = j.constvars;
  out.invars = j.invars;
  out.effects = j.effects;
  for (size_t i = 0; i < j.outvars.size(); ++i) {
    if (!used_outputs[i]) continue;
    out.outvars.push_back(j.outvars[i]);
    mark(j.outvars[i]);
  }

  std::vector<JaxprEqn> kept;
  for (auto it = j.eqns.rbegin(); it != j.eqns.rend(); ++it) {
    const JaxprEqn& e = *it;
    const bool any_used = std::any_of(e.outvars.begin(), e.outvars.end(), is_live);
    if (!any_used && e.effects.empty()) continue;
    if (e.primitive && e.primitive->dce) {
      // The primitive prunes itself (loop carries, branch outputs) and says what it reads.
      std::vector<bool> used_outs(e.outvars.size());
      for (size_t k = 0; k < e.outvars.size(); ++k) used_outs[k] = is_live(e.outvars[k]);
      auto [used_ins, rewritten] = e.primitive->dce(used_outs, e);
      if (!rewritten) continue;
      JaxprEqn ne = std::move(*rewritten);
      for (Var& v : ne.outvars)
        if (!v.is_dropped() && !is_live(v)) v = Var::dropped(v.aval());
      for (size_t k = 0; k < e.invars.size() && k < used_ins.size(); ++k)
        if (used_ins[k]) mark(e.invars[k]);
      kept.push_back(std::move(ne));
      continue;
    }
    JaxprEqn ne = e;
    for (Var& v : ne.outvars)
      if (!v.is_dropped() && !is_live(v)) v = Var::dropped(v.aval());
    for (const Atom& a : e.invars) mark(a);
    kept.push_back(std::move(ne));
  }
  std::reverse(kept.begin(), kept.end());
  out.eqns = std::move(kept);

  std::vector<bool> used_inputs(j.invars.size());
  for (size_t i = 0; i < j.invars.size(); ++i) used_inputs[i] = is_live(j.invars[i]);
  return {std::make_shared<const Jaxpr>(std::move(out)), std::move(used_inputs)};
}

}  // namespace tessera::ir
