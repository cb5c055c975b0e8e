// The jaxpr verifier: checks the invariants every pass and transformation relies on (each var
// defined once before use, equation types agree with the primitives' abstract-eval rules,
// literals are scalars, effects are declared). A failure is a bug in whatever built the jaxpr.
#include <algorithm>
#include <exception>
#include <string>
#include <unordered_set>

#include "tessera/jaxpr.h"

namespace tessera {

namespace {

[[noreturn]] void fail(const Jaxpr& j, std::string msg, std::ptrdiff_t eqn_index = -1) {
  if (eqn_index >= 0) msg += "\n  in equation: " + eqn_to_string(j, static_cast<size_t>(eqn_index));
  msg += "\n  in jaxpr:\n" + to_string(j);
  throw_internal("ir/verifier", msg);
}

std::string avals_str(const std::vector<Aval>& as) {
  std::string s = "(";
  for (size_t i = 0; i < as.size(); ++i) s += (i ? ", " : "") + as[i].str();
  return s + ")";
}

void verify_impl(const Jaxpr& j) {
  std::unordered_set<uint64_t> defined;
  auto define = [&](const Var& v, const char* what, std::ptrdiff_t eqn) {
    if (!v.valid()) fail(j, std::string("invalid (default-constructed) var as ") + what, eqn);
    if (v.is_dropped()) {
      if (eqn < 0) fail(j, std::string("dropped var `_` used as ") + what);
      return;
    }
    if (!defined.insert(v.id()).second)
      fail(j,
           std::string(what) + " var with id " + std::to_string(v.id()) + " (" + v.aval().str() +
               ") is defined more than once",
           eqn);
  };
  auto check_use = [&](const Atom& a, const char* what, std::ptrdiff_t eqn) {
    if (const Var* v = std::get_if<Var>(&a)) {
      if (!v->valid() || v->is_dropped() || !defined.count(v->id()))
        fail(j,
             std::string(what) + " var with id " + std::to_string(v->id()) + " (" +
                 (v->valid() ? v->aval().str() : std::string("?")) +
                 ") is used before it is defined",
             eqn);
    } else {
      const Literal& l = std::get<Literal>(a);
      if (l.aval().ndim() != 0)
        fail(j,
             std::string(what) + " literal of type " + l.aval().str() +
                 " is not a scalar; non-scalar constants must be constvars",
             eqn);
    }
  };

  for (const Var& v : j.constvars) define(v, "constvar", -1);
  for (const Var& v : j.invars) define(v, "invar", -1);
  for (size_t k = 0; k < j.eqns.size(); ++k) {
    const JaxprEqn& e = j.eqns[k];
    const auto ki = static_cast<std::ptrdiff_t>(k);
    if (!e.primitive) fail(j, "equation " + std::to_string(k) + " has no primitive", ki);
    for (const Atom& a : e.invars) check_use(a, "input", ki);
    for (const auto& kv : e.params.items())
      if (auto* sub = std::get_if<std::shared_ptr<const Jaxpr>>(&kv.second))
        if (*sub) verify_impl(**sub);
    for (const auto& kv : e.params.items())
      if (auto* subs = std::get_if<JaxprList>(&kv.second))
        for (const auto& sub : *subs)
          if (sub) verify_impl(*sub);
    for (const Effect& eff : e.effects)
      if (!std::binary_search(j.effects.begin(), j.effects.end(), eff))
        fail(j, "equation effect '" + eff.name + "' is not among the jaxpr's effects", ki);
    if (!e.primitive->abstract_eval)
      fail(j, "primitive '" + e.primitive->name() + "' has no abstract-eval rule", ki);
    std::vector<Aval> in_avals;
    for (const Atom& a : e.invars) in_avals.push_back(atom_aval(a));
    std::vector<Aval> want;
    try {
      want = abstract_eval(*e.primitive, in_avals, e.params);
    } catch (const InternalError&) {
      throw;
    } catch (const std::exception& ex) {
      fail(j,
           "abstract evaluation of '" + e.primitive->name() + "' on " + avals_str(in_avals) +
               " failed: " + ex.what(),
           ki);
    }
    if (want.size() != e.outvars.size())
      fail(j,
           "'" + e.primitive->name() + "' produces " + std::to_string(want.size()) + " outputs " +
               avals_str(want) + " but the equation binds " + std::to_string(e.outvars.size()),
           ki);
    for (size_t i = 0; i < want.size(); ++i)
      if (e.outvars[i].valid() && !(e.outvars[i].aval() == want[i]))
        fail(j,
             "output " + std::to_string(i) + " is typed " + e.outvars[i].aval().str() + " but '" +
                 e.primitive->name() + "' produces " + want[i].str() +
                 (want[i].weak_type != e.outvars[i].aval().weak_type ? " (weak_type differs)" : ""),
             ki);
    for (const Var& v : e.outvars) define(v, "output", ki);
  }
  for (const Atom& a : j.outvars) check_use(a, "jaxpr output", -1);
  if (!std::is_sorted(j.effects.begin(), j.effects.end()))
    fail(j, "jaxpr effects are not sorted (build them with make_effects)");
}

}  // namespace

void verify(const Jaxpr& j) { verify_impl(j); }

}  // namespace tessera
