// Inlining of call primitives (inline_calls.h).
#include "compiler/passes/inline_calls.h"

#include <algorithm>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "tessera/errors.h"

namespace tessera::compiler {

namespace {

std::mutex g_calls_mu;
std::vector<const Primitive*>& call_primitives() {
  static std::vector<const Primitive*> v;
  return v;
}

}  // namespace

void register_call_primitive(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_calls_mu);
  auto& v = call_primitives();
  if (std::find(v.begin(), v.end(), &p) == v.end()) v.push_back(&p);
}

bool is_call_primitive(const Primitive& p) {
  std::lock_guard<std::mutex> lock(g_calls_mu);
  const auto& v = call_primitives();
  return std::find(v.begin(), v.end(), &p) != v.end();
}

std::vector<Atom> splice_body(const Jaxpr& body, std::span<const Atom> args,
                              std::vector<JaxprEqn>& out) {
  std::unordered_map<uint64_t, Atom> env;
  for (size_t i = 0; i < body.invars.size(); ++i) env.emplace(body.invars[i].id(), args[i]);
  auto read = [&](const Atom& a) -> Atom {
    if (const Var* v = std::get_if<Var>(&a)) {
      auto it = env.find(v->id());
      if (it == env.end())
        throw_internal("compiler/inline",
                       "a body reads a var it does not define (" + v->aval().str() + ")");
      return it->second;
    }
    return a;
  };
  for (const JaxprEqn& e : body.eqns) {
    if (is_call_primitive(*e.primitive)) {
      std::vector<Atom> ins;
      for (const Atom& a : e.invars) ins.push_back(read(a));
      const Jaxpr& inner = *e.params.get<std::shared_ptr<const Jaxpr>>("jaxpr");
      std::vector<Atom> res = splice_body(inner, ins, out);
      for (size_t i = 0; i < e.outvars.size(); ++i)
        if (!e.outvars[i].is_dropped()) env.emplace(e.outvars[i].id(), res[i]);
      continue;
    }
    JaxprEqn ne = e;
    for (Atom& a : ne.invars) a = read(a);
    for (Var& v : ne.outvars) {
      Var fresh = v.is_dropped() ? Var::dropped(v.aval()) : Var(v.aval());
      if (!v.is_dropped()) env.emplace(v.id(), fresh);
      v = fresh;
    }
    out.push_back(std::move(ne));
  }
  std::vector<Atom> res;
  for (const Atom& a : body.outvars) res.push_back(read(a));
  return res;
}

std::shared_ptr<const Jaxpr> inline_calls(const Jaxpr& j) {
  Jaxpr out;
  out.constvars = j.constvars;
  out.invars = j.invars;
  out.effects = j.effects;
  std::vector<Atom> args;
  for (const Var& v : j.constvars) args.push_back(v);
  for (const Var& v : j.invars) args.push_back(v);
  // The outer binders keep their names: splice maps them to themselves.
  Jaxpr whole = j;
  whole.invars.insert(whole.invars.begin(), j.constvars.begin(), j.constvars.end());
  whole.constvars.clear();
  out.outvars = splice_body(whole, args, out.eqns);
  return intern(std::move(out));
}

}  // namespace tessera::compiler
