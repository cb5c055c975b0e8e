// Algebraic simplification (simplify.h).
#include "compiler/passes/simplify.h"

#include <mutex>
#include <unordered_map>

namespace tessera::compiler {

namespace {

std::mutex g_mu;
std::unordered_map<const Primitive*, SimplifyRule>& rules() {
  static std::unordered_map<const Primitive*, SimplifyRule> m;
  return m;
}

const SimplifyRule* rule_for(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = rules().find(&p);
  return it == rules().end() ? nullptr : &it->second;
}

bool same_type(const Aval& a, const Aval& b) {
  return a.shape == b.shape && a.dtype == b.dtype && a.weak_type == b.weak_type;
}

// The rewrite is well-typed: one result per outvar, each of the outvar's type.
bool well_typed(const Rewrite& r, const JaxprEqn& e) {
  if (r.results.size() != e.outvars.size()) return false;
  for (size_t k = 0; k < r.results.size(); ++k)
    if (!same_type(atom_aval(r.results[k]), e.outvars[k].aval())) return false;
  return true;
}

}  // namespace

void register_simplification(const Primitive& p, SimplifyRule rule) {
  std::lock_guard<std::mutex> lock(g_mu);
  rules()[&p] = std::move(rule);
}

std::optional<double> scalar_literal(const Atom& a) {
  const Literal* l = std::get_if<Literal>(&a);
  if (l == nullptr || l->value().ndim() != 0 || !l->value().is_concrete()) return std::nullopt;
  return l->value().item_double();
}

JaxprEqn new_eqn(const Primitive& p, std::vector<Atom> ins, std::vector<Aval> outs, Params params) {
  JaxprEqn e;
  e.primitive = &p;
  e.invars = std::move(ins);
  for (Aval& a : outs) e.outvars.push_back(Var(std::move(a)));
  e.params = std::move(params);
  e.effects = primitive_effects(p);
  return e;
}

Rewrite forward(Atom a) {
  Rewrite r;
  r.results.push_back(std::move(a));
  return r;
}

Rewrite replace_with(JaxprEqn e) {
  Rewrite r;
  for (const Var& v : e.outvars) r.results.push_back(v);
  r.eqns.push_back(std::move(e));
  return r;
}

std::shared_ptr<const Jaxpr> simplify(const Jaxpr& j) {
  Jaxpr out = j;
  out.eqns.clear();
  out.cached_hash = 0;
  std::unordered_map<uint64_t, Atom> renamed;
  std::unordered_map<uint64_t, size_t> producer_of;  // var id -> index in out.eqns
  auto read = [&](const Atom& a) -> Atom {
    if (const Var* v = std::get_if<Var>(&a)) {
      auto it = renamed.find(v->id());
      if (it != renamed.end()) return it->second;
    }
    return a;
  };
  auto push = [&](JaxprEqn e) {
    for (const Var& v : e.outvars)
      if (!v.is_dropped()) producer_of[v.id()] = out.eqns.size();
    out.eqns.push_back(std::move(e));
  };
  auto producer = [&](const Atom& a) -> const JaxprEqn* {
    const Var* v = std::get_if<Var>(&a);
    if (v == nullptr) return nullptr;
    auto it = producer_of.find(v->id());
    return it == producer_of.end() ? nullptr : &out.eqns[it->second];
  };
  for (const JaxprEqn& e0 : j.eqns) {
    JaxprEqn e = e0;
    for (Atom& a : e.invars) a = read(a);
    const SimplifyRule* rule = e.effects.empty() ? rule_for(*e.primitive) : nullptr;
    std::optional<Rewrite> r;
    if (rule != nullptr) r = (*rule)(SimplifyView{e, producer});
    if (!r || !well_typed(*r, e)) {
      push(std::move(e));
      continue;
    }
    for (JaxprEqn& ne : r->eqns) push(std::move(ne));
    for (size_t k = 0; k < e.outvars.size(); ++k)
      if (!e.outvars[k].is_dropped()) renamed.emplace(e.outvars[k].id(), r->results[k]);
  }
  for (Atom& a : out.outvars) a = read(a);
  return intern(std::move(out));
}

}  // namespace tessera::compiler
