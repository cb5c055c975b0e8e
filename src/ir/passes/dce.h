// Dead-code elimination on jaxprs (JAX's dce_jaxpr contract).
//
// What: walks the equations backwards from the used outputs, keeping an equation when any of
// its outputs is used or when it has effects (then all its inputs count as used). A primitive
// with a DCE rule (Primitive::dce: loops and conditionals) rewrites its own equation instead —
// dropping unused carries and outputs inside its bodies — and reports which inputs it reads. Outputs of
// kept equations that nothing reads become dropped vars (`_`).
// Why: transformations (linearize, vmap of partial outputs, jit of a function whose results are
// partly ignored) stage more than they need; DCE keeps compiled programs and residuals small.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "tessera/jaxpr.h"

namespace tessera::ir {

// Returns the pruned jaxpr, whose outvars are the outvars of `j` flagged in used_outputs (one
// flag per outvar), and one flag per invar saying whether the pruned jaxpr reads it. Invars and
// constvars are kept (not deleted) so that callers can keep their argument lists; the jaxpr's
// effects are unchanged (effectful equations are never removed).
std::pair<std::shared_ptr<const Jaxpr>, std::vector<bool>> dce(
    const Jaxpr& j, const std::vector<bool>& used_outputs);

}  // namespace tessera::ir
