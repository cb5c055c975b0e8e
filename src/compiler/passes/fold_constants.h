// Constant folding.
//
// What: an effect-free equation whose operands are all literals and whose results are rank 0 is
// evaluated at compile time with its eager implementation, and its results become literals
// (which later equations may fold in turn).
// Why: staged programs carry scalar arithmetic on constants (a learning rate times a constant, a
// bound computed from static values); folded, it costs nothing per call and exposes literal
// operands to the simplifier. Only rank-0 results fold, so the program never grows by large
// baked-in arrays (JAX passes closed-over arrays as arguments for the same reason).
#pragma once

#include <memory>

#include "tessera/jaxpr.h"

namespace tessera::compiler {

std::shared_ptr<const Jaxpr> fold_constants(const Jaxpr& j);

}  // namespace tessera::compiler
