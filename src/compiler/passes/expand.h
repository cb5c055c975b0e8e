// Expansion of equations into other primitives' equations, by rules the families register.
//
// What: every equation whose primitive has an expansion rule that accepts it is replaced by the
// equations of the const-free jaxpr the rule returns (its invars are the equation's operands,
// its outvars its results), with fresh binders per site. A rule declines (returns null) where
// the expansion would not pay: argmax over an axis fusion cannot fold, 16-bit operands.
// Why: a primitive without a scalar definition or fold rule of its own can still fuse when it
// is a composition of ones that have them — argmax is a max and a min over the same row, which
// fusion computes in one pass over memory as two stages (XLA reaches the same through its
// variadic reduce). Running before fold/simplify/cse lets the expansion share work with its
// neighbours (argmax beside max computes the maximum once). Rules must compute exactly what
// the eager implementation computes. The compiler knows no primitive by name.
#pragma once

#include <functional>
#include <memory>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::compiler {

using ExpansionRule = std::function<std::shared_ptr<const Jaxpr>(const JaxprEqn&)>;

void register_expansion(const Primitive& p, ExpansionRule rule);
// The rule registered for p, or null.
const ExpansionRule* expansion_rule(const Primitive& p);

std::shared_ptr<const Jaxpr> expand(const Jaxpr& j);

}  // namespace tessera::compiler
