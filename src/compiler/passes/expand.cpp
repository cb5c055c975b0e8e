// The expansion pass (expand.h).
#include "compiler/passes/expand.h"

#include <unordered_map>
#include <vector>

#include "compiler/passes/inline_calls.h"
#include "compiler/rule_table.h"
#include "tessera/errors.h"

namespace tessera::compiler {

namespace {

RuleTable<ExpansionRule>& expansions() {
  static RuleTable<ExpansionRule> t;
  return t;
}

// The rule's jaxpr for e, checked against the equation (a wrong one is the family's bug).
std::shared_ptr<const Jaxpr> expansion_of(const JaxprEqn& e) {
  const ExpansionRule* rule = expansion_rule(*e.primitive);
  if (rule == nullptr) return nullptr;
  std::shared_ptr<const Jaxpr> body = (*rule)(e);
  if (body == nullptr) return nullptr;
  bool ok = body->constvars.empty() && body->invars.size() == e.invars.size() &&
            body->outvars.size() == e.outvars.size();
  for (size_t i = 0; ok && i < e.invars.size(); ++i)
    ok = body->invars[i].aval().shape == atom_aval(e.invars[i]).shape &&
         body->invars[i].aval().dtype == atom_aval(e.invars[i]).dtype;
  for (size_t i = 0; ok && i < e.outvars.size(); ++i) {
    const Aval& got = atom_aval(body->outvars[i]);
    const Aval& want = e.outvars[i].aval();
    ok = got.shape == want.shape && got.dtype == want.dtype;
  }
  if (!ok)
    throw_internal("compiler/expand", "the expansion of " + e.primitive->name() +
                                          " does not take the equation's operands or give its "
                                          "results");
  return body;
}

}  // namespace

void register_expansion(const Primitive& p, ExpansionRule rule) {
  expansions().set(p, std::move(rule));
}

const ExpansionRule* expansion_rule(const Primitive& p) { return expansions().get(p); }

std::shared_ptr<const Jaxpr> expand(const Jaxpr& j) {
  bool any = false;
  for (const JaxprEqn& e : j.eqns) any |= expansion_rule(*e.primitive) != nullptr;
  if (!any) return intern(Jaxpr(j));
  Jaxpr out = j;
  out.eqns.clear();
  // A result of an expanded equation is read as the expansion's atom from then on.
  std::unordered_map<uint64_t, Atom> renamed;
  auto read = [&](Atom& a) {
    if (const Var* v = std::get_if<Var>(&a))
      if (auto it = renamed.find(v->id()); it != renamed.end()) a = it->second;
  };
  for (const JaxprEqn& e0 : j.eqns) {
    JaxprEqn e = e0;
    for (Atom& a : e.invars) read(a);
    std::shared_ptr<const Jaxpr> body = expansion_of(e);
    if (body == nullptr) {
      out.eqns.push_back(std::move(e));
      continue;
    }
    std::vector<Atom> res = splice_body(*body, e.invars, out.eqns);
    for (size_t i = 0; i < e.outvars.size(); ++i)
      if (!e.outvars[i].is_dropped()) renamed.emplace(e.outvars[i].id(), res[i]);
  }
  for (Atom& a : out.outvars) read(a);
  return intern(std::move(out));
}

}  // namespace tessera::compiler
