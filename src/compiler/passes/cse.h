// Common-subexpression elimination.
//
// What: an equation whose primitive, params and operands equal those of an earlier equation is
// dropped, and its results are read from the earlier equation's. Operands compare after the
// renaming (so chains of duplicates collapse in one pass); literals compare by value; params by
// content (sub-jaxprs structurally: interned bodies compare by identity).
// Why: transformations and user code repeat work — the JVP of sin(x) * sin(x), a vmap that
// broadcasts the same operand for two uses, x * y computed in two branches of a formula. Fewer
// equations means fewer kernels and less memory traffic once fusion runs.
// Never merged: equations with effects (their own or their primitive's: callbacks, prints,
// ordered IO), since running them twice is the program's meaning.
#pragma once

#include <memory>

#include "tessera/jaxpr.h"

namespace tessera::compiler {

std::shared_ptr<const Jaxpr> cse(const Jaxpr& j);

}  // namespace tessera::compiler
