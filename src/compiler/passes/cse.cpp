// Common-subexpression elimination (cse.h).
#include "compiler/passes/cse.h"

#include <functional>
#include <unordered_map>
#include <vector>

namespace tessera::compiler {

namespace {

struct Key {
  const Primitive* prim;
  const Params* params;  // owned by the equation kept in `out`
  std::vector<Atom> ins;
  size_t hash;
};

size_t atom_hash(const Atom& a) {
  if (const Var* v = std::get_if<Var>(&a)) return std::hash<uint64_t>()(v->id());
  return std::get<Literal>(a).hash() * 31 + 7;
}

bool atom_equal(const Atom& a, const Atom& b) {
  if (a.index() != b.index()) return false;
  if (const Var* v = std::get_if<Var>(&a)) return *v == std::get<Var>(b);
  return std::get<Literal>(a) == std::get<Literal>(b);
}

struct KeyHash {
  size_t operator()(const Key& k) const { return k.hash; }
};
struct KeyEq {
  bool operator()(const Key& a, const Key& b) const {
    if (a.prim != b.prim || a.hash != b.hash || a.ins.size() != b.ins.size()) return false;
    for (size_t i = 0; i < a.ins.size(); ++i)
      if (!atom_equal(a.ins[i], b.ins[i])) return false;
    return *a.params == *b.params;
  }
};

bool effectful(const JaxprEqn& e) {
  return !e.effects.empty() || !primitive_effects(*e.primitive).empty();
}

}  // namespace

std::shared_ptr<const Jaxpr> cse(const Jaxpr& j) {
  Jaxpr out = j;
  out.eqns.clear();
  out.eqns.reserve(j.eqns.size());
  out.cached_hash = 0;
  std::unordered_map<uint64_t, Atom> renamed;
  auto read = [&](const Atom& a) -> Atom {
    if (const Var* v = std::get_if<Var>(&a)) {
      auto it = renamed.find(v->id());
      if (it != renamed.end()) return it->second;
    }
    return a;
  };
  // Keys point into out.eqns: reserve()d above, so they stay valid.
  std::unordered_map<Key, size_t, KeyHash, KeyEq> seen;
  for (const JaxprEqn& e0 : j.eqns) {
    JaxprEqn e = e0;
    for (Atom& a : e.invars) a = read(a);
    if (effectful(e)) {
      out.eqns.push_back(std::move(e));
      continue;
    }
    size_t h = std::hash<const void*>()(e.primitive) ^ (e.params.hash() * 0x9e3779b97f4a7c15ULL);
    for (const Atom& a : e.invars) h = h * 1000003 ^ atom_hash(a);
    out.eqns.push_back(std::move(e));
    JaxprEqn& kept = out.eqns.back();
    Key key{kept.primitive, &kept.params, kept.invars, h};
    auto [it, inserted] = seen.emplace(std::move(key), out.eqns.size() - 1);
    if (inserted) continue;
    // A duplicate: reuse the earlier results, unless it dropped one this equation needs.
    const JaxprEqn& first = out.eqns[it->second];
    bool usable = first.outvars.size() == kept.outvars.size();
    for (size_t k = 0; usable && k < kept.outvars.size(); ++k)
      usable = kept.outvars[k].is_dropped() || !first.outvars[k].is_dropped();
    if (!usable) continue;
    for (size_t k = 0; k < kept.outvars.size(); ++k)
      if (!kept.outvars[k].is_dropped()) renamed.emplace(kept.outvars[k].id(), first.outvars[k]);
    out.eqns.pop_back();
  }
  for (Atom& a : out.outvars) a = read(a);
  return intern(std::move(out));
}

}  // namespace tessera::compiler
