// eval_jaxpr: runs a jaxpr by binding each equation's primitive through the current trace, so
// the same loop evaluates eagerly now and stages or transforms under other traces. Values are
// released after their last use to keep peak memory at what the program needs.
#include <string>
#include <unordered_map>

#include "tessera/jaxpr.h"

namespace tessera {

std::vector<Array> eval_jaxpr(const Jaxpr& j, std::span<const Array> consts,
                              std::span<const Array> args) {
  if (consts.size() != j.constvars.size() || args.size() != j.invars.size())
    throw ValueError(op_message(
        "eval_jaxpr", "the jaxpr takes " + std::to_string(j.constvars.size()) + " constants and " +
                          std::to_string(j.invars.size()) + " arguments, got " +
                          std::to_string(consts.size()) + " and " + std::to_string(args.size()) +
                          "; pass one array per constvar and per invar"));
  // Last equation reading each var (j.eqns.size() for jaxpr outputs: never released).
  std::unordered_map<uint64_t, size_t> last_use;
  for (size_t k = 0; k < j.eqns.size(); ++k)
    for (const Atom& a : j.eqns[k].invars)
      if (const Var* v = std::get_if<Var>(&a)) last_use[v->id()] = k;
  for (const Atom& a : j.outvars)
    if (const Var* v = std::get_if<Var>(&a)) last_use[v->id()] = j.eqns.size();

  std::unordered_map<uint64_t, Array> env;
  auto write = [&](const Var& v, Array x) {
    if (!v.is_dropped() && last_use.count(v.id())) env[v.id()] = std::move(x);
  };
  auto read = [&](const Atom& a) -> Array {
    if (const Var* v = std::get_if<Var>(&a)) {
      auto it = env.find(v->id());
      if (it == env.end())
        throw_internal("ir/eval_jaxpr", "var with id " + std::to_string(v->id()) + " (" +
                                            v->aval().str() + ") is read before it is defined");
      return it->second;
    }
    return std::get<Literal>(a).value();
  };
  for (size_t i = 0; i < consts.size(); ++i) write(j.constvars[i], consts[i]);
  for (size_t i = 0; i < args.size(); ++i) write(j.invars[i], args[i]);

  std::vector<Array> ins;
  for (size_t k = 0; k < j.eqns.size(); ++k) {
    const JaxprEqn& e = j.eqns[k];
    ins.clear();
    for (const Atom& a : e.invars) ins.push_back(read(a));
    std::vector<Array> outs = tessera::bind(*e.primitive, std::span<const Array>(ins), e.params);
    if (outs.size() != e.outvars.size())
      throw_internal("ir/eval_jaxpr", "'" + e.primitive->name() + "' returned " +
                                          std::to_string(outs.size()) +
                                          " outputs, the equation "
                                          "binds " +
                                          std::to_string(e.outvars.size()));
    for (size_t i = 0; i < outs.size(); ++i) write(e.outvars[i], std::move(outs[i]));
    for (const Atom& a : e.invars)
      if (const Var* v = std::get_if<Var>(&a))
        if (last_use[v->id()] == k) env.erase(v->id());
  }
  std::vector<Array> result;
  result.reserve(j.outvars.size());
  for (const Atom& a : j.outvars) result.push_back(read(a));
  return result;
}

std::vector<Array> eval_jaxpr(const ClosedJaxpr& j, std::span<const Array> args) {
  if (!j.jaxpr) throw_internal("ir/eval_jaxpr", "ClosedJaxpr without a jaxpr");
  return eval_jaxpr(*j.jaxpr, j.consts, args);
}

}  // namespace tessera
