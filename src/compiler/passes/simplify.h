// Algebraic simplification.
//
// What: each equation whose family registered a simplification rule is offered to it, with its
// operands renamed and a view of the equations that produced them; a rule may forward the
// equation's results to existing values (x * 1 -> x, neg(neg(x)) -> x, an identity transpose,
// reshape or convert -> x, select_n with a literal predicate -> that case) or replace the
// equation by new ones reading further back (transpose(transpose(x)) -> one transpose,
// reshape chains -> one reshape, broadcast of a broadcast -> one, lossless convert chains -> one
// convert). Producers left without readers go in the dce pass that follows.
// Why: transformations and user code leave such chains (vmap moves axes back and forth, grad
// of a reshape is a reshape, weak-type promotion inserts converts, masks are often constant);
// each removed equation is a kernel and a buffer fewer. Every rule keeps results bitwise equal:
// x + 0.0 is not x for floats (-0.0 + 0.0 is +0.0), so only x + (-0.0) and x - 0.0 simplify.
// The pass checks that a forwarded value has exactly the equation's result type (shape, dtype,
// weak type) and keeps the equation otherwise. The compiler knows no primitive: the families
// register their rules (register_simplification), as they register lowering rules.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::compiler {

// What a rule sees: the equation (operands renamed) and, for a var operand, the equation of
// the program so far that defines it (null for inputs and literals).
struct SimplifyView {
  const JaxprEqn& eqn;
  std::function<const JaxprEqn*(const Atom&)> producer;
};

// What a rule returns: equations to append in place of this one (outvars fresh; may be empty)
// and the equation's results, one atom per outvar.
struct Rewrite {
  std::vector<JaxprEqn> eqns;
  std::vector<Atom> results;
};

using SimplifyRule = std::function<std::optional<Rewrite>(const SimplifyView&)>;

void register_simplification(const Primitive& p, SimplifyRule rule);

std::shared_ptr<const Jaxpr> simplify(const Jaxpr& j);

// ---- helpers for rules ----
// The value of a rank-0 literal operand (nullopt for vars and other literals).
std::optional<double> scalar_literal(const Atom& a);
// An equation `p[params](ins)` with fresh outvars of the given types.
JaxprEqn new_eqn(const Primitive& p, std::vector<Atom> ins, std::vector<Aval> outs, Params params);
// A rewrite forwarding the (single) result to `a`.
Rewrite forward(Atom a);
// A rewrite replacing the equation by `e` (its results are e's outvars).
Rewrite replace_with(JaxprEqn e);

}  // namespace tessera::compiler
