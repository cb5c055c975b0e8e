// Known/unknown splits of jaxprs: partial_eval_jaxpr_nounits, and the saveable split of a
// linearization (JAX's partial_eval_jaxpr_custom with a policy). See jaxpr_transforms.h.
//
// Both walk equations, not traces. partial_eval_jaxpr_nounits marks each equation known when
// every value it reads is known and it has no effects; the known equations form the known jaxpr,
// the others the unknown one, and the known values the unknown side reads are its residuals.
// linearize_jaxpr_custom starts from linearize_jaxpr's (known, linear) pair: the linear part
// reads residuals of the known part; the policy decides, per residual, whether its producing
// equation may save it; when not, that equation is copied to the staged side and its own inputs
// are resolved the same way (the known part's invars are always available).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/passes/dce.h"
#include "tessera/errors.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::trace {

namespace {

Effects effects_of(const std::vector<JaxprEqn>& eqns) {
  Effects e;
  for (const JaxprEqn& q : eqns) e = effects_union(e, q.effects);
  return e;
}

Atom substitute(const Atom& a, const std::unordered_map<uint64_t, Atom>& sub) {
  if (const auto* v = std::get_if<Var>(&a)) {
    auto it = sub.find(v->id());
    if (it != sub.end()) return it->second;
  }
  return a;
}

JaxprPtr pruned(Jaxpr j) {
  j.effects = effects_of(j.eqns);
  auto p = ir::dce(j, std::vector<bool>(j.outvars.size(), true)).first;
  return intern(Jaxpr(*p));
}

}  // namespace

PartialEval partial_eval_jaxpr_nounits(const Jaxpr& j, const std::vector<bool>& in_unknown,
                                       const std::vector<bool>& instantiate) {
  if (!j.constvars.empty())
    throw_internal("jaxpr_transforms", "partial_eval_jaxpr_nounits: the jaxpr has constvars");
  if (in_unknown.size() != j.invars.size() || instantiate.size() != j.outvars.size())
    throw_internal("jaxpr_transforms", "partial_eval_jaxpr_nounits: mask sizes do not match");
  std::unordered_set<uint64_t> unknown;
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (in_unknown[i]) unknown.insert(j.invars[i].id());
  auto is_unknown = [&](const Atom& a) {
    const auto* v = std::get_if<Var>(&a);
    return v != nullptr && unknown.count(v->id()) > 0;
  };

  Jaxpr known, staged;
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (!in_unknown[i]) known.invars.push_back(j.invars[i]);
  std::vector<Var> residuals;
  std::unordered_set<uint64_t> is_residual;
  auto need = [&](const Atom& a) {  // a known value the unknown side reads
    const auto* v = std::get_if<Var>(&a);
    if (v == nullptr || unknown.count(v->id()) > 0) return;
    if (is_residual.insert(v->id()).second) residuals.push_back(*v);
  };
  for (const JaxprEqn& e : j.eqns) {
    bool u = !e.effects.empty();
    for (const Atom& a : e.invars) u = u || is_unknown(a);
    if (!u) {
      known.eqns.push_back(e);
      continue;
    }
    for (const Atom& a : e.invars) need(a);
    for (const Var& v : e.outvars) unknown.insert(v.id());
    staged.eqns.push_back(e);
  }

  PartialEval r;
  r.out_unknown.assign(j.outvars.size(), false);
  for (size_t i = 0; i < j.outvars.size(); ++i) {
    const Atom& o = j.outvars[i];
    if (is_unknown(o) || instantiate[i]) {
      r.out_unknown[i] = true;
      need(o);
      staged.outvars.push_back(o);
    } else {
      known.outvars.push_back(o);
    }
  }
  known.outvars.insert(known.outvars.end(), residuals.begin(), residuals.end());
  staged.invars = residuals;
  for (size_t i = 0; i < j.invars.size(); ++i)
    if (in_unknown[i]) staged.invars.push_back(j.invars[i]);
  r.num_res = residuals.size();
  r.known = pruned(std::move(known));
  r.unknown = pruned(std::move(staged));
  return r;
}

CustomLinearized linearize_jaxpr_custom(const Jaxpr& j, const std::vector<bool>& nonzero,
                                        const std::vector<bool>& instantiate,
                                        const Saveable& saveable) {
  LinearizedJaxpr lj = linearize_jaxpr(j, nonzero, instantiate);
  const Jaxpr& K = *lj.known;
  const Jaxpr& L = *lj.lin;
  const size_t m = j.outvars.size(), R = lj.res_avals.size(), nlc = lj.lin_consts.size();
  if (K.outvars.size() != m + R || L.invars.size() < nlc + R)
    throw_internal("jaxpr_transforms", "linearize_jaxpr_custom: linearization has bad arity");

  std::unordered_map<uint64_t, int64_t> input_index;
  for (size_t i = 0; i < K.invars.size(); ++i)
    input_index.emplace(K.invars[i].id(), static_cast<int64_t>(i));
  std::unordered_map<uint64_t, size_t> producer;
  for (size_t e = 0; e < K.eqns.size(); ++e)
    for (const Var& v : K.eqns[e].outvars) producer.emplace(v.id(), e);

  // Resolve what the staged side reads: the known part's inputs, saved residuals, or
  // recomputed equations.
  std::vector<char> recompute(K.eqns.size(), 0);
  std::vector<char> needed_input(K.invars.size(), 0);
  std::vector<Var> saved;
  std::unordered_set<uint64_t> seen;
  std::vector<Atom> stack(K.outvars.begin() + static_cast<std::ptrdiff_t>(m), K.outvars.end());
  while (!stack.empty()) {
    Atom a = std::move(stack.back());
    stack.pop_back();
    const auto* v = std::get_if<Var>(&a);
    if (v == nullptr || !seen.insert(v->id()).second) continue;
    if (auto it = input_index.find(v->id()); it != input_index.end()) {
      needed_input[it->second] = 1;
      continue;
    }
    auto pit = producer.find(v->id());
    if (pit == producer.end())
      throw_internal("jaxpr_transforms", "linearize_jaxpr_custom: a residual has no producer");
    const JaxprEqn& e = K.eqns[pit->second];
    if (!e.effects.empty() || saveable(e)) {
      saved.push_back(*v);
    } else if (!recompute[pit->second]) {
      recompute[pit->second] = 1;
      for (const Atom& x : e.invars) stack.push_back(x);
    }
  }
  // Saved residuals in the order the known part computes them (deterministic jaxprs).
  std::sort(saved.begin(), saved.end(), [&](const Var& a, const Var& b) {
    size_t pa = producer.at(a.id()), pb = producer.at(b.id());
    return pa != pb ? pa < pb : a.id() < b.id();
  });

  CustomLinearized s;
  s.known_consts = lj.known_consts;
  s.staged_consts = lj.lin_consts;
  s.num_res = saved.size();
  s.out_nonzero = lj.out_nonzero;
  {
    Jaxpr kj;
    kj.invars = K.invars;
    kj.eqns = K.eqns;
    kj.outvars.assign(K.outvars.begin(), K.outvars.begin() + static_cast<std::ptrdiff_t>(m));
    kj.outvars.insert(kj.outvars.end(), saved.begin(), saved.end());
    s.known = pruned(std::move(kj));
  }
  {
    // L's residual invars read the known part's residual outvars.
    std::unordered_map<uint64_t, Atom> sub;
    for (size_t r = 0; r < R; ++r) sub.emplace(L.invars[nlc + r].id(), K.outvars[m + r]);
    Jaxpr sj;
    sj.invars.assign(L.invars.begin(), L.invars.begin() + static_cast<std::ptrdiff_t>(nlc));
    for (size_t i = 0; i < K.invars.size(); ++i)
      if (needed_input[i]) {
        s.staged_inputs.push_back(static_cast<int64_t>(i));
        sj.invars.push_back(K.invars[i]);
      }
    sj.invars.insert(sj.invars.end(), saved.begin(), saved.end());
    sj.invars.insert(sj.invars.end(), L.invars.begin() + static_cast<std::ptrdiff_t>(nlc + R),
                     L.invars.end());
    for (size_t e = 0; e < K.eqns.size(); ++e)
      if (recompute[e]) sj.eqns.push_back(K.eqns[e]);
    for (const JaxprEqn& e : L.eqns) {
      JaxprEqn c = e;
      for (Atom& x : c.invars) x = substitute(x, sub);
      sj.eqns.push_back(std::move(c));
    }
    for (const Atom& o : L.outvars) sj.outvars.push_back(substitute(o, sub));
    s.staged = pruned(std::move(sj));
  }
  return s;
}

}  // namespace tessera::trace
