// The program passes jit runs before making thunks, in order:
//   inline_calls    nested jit (call primitives) spliced in      passes/inline_calls.h
//   expand          equations the families expand (argmax)        passes/expand.h
//   fold_constants  rank-0 equations of literals evaluated        passes/fold_constants.h
//   simplify        algebraic identities the families register    passes/simplify.h
//   cse             repeated pure equations merged                passes/cse.h
//   dce             results nothing reads removed                 ir/passes/dce.h
// Each pass is a function from a jaxpr to a new (interned) jaxpr. TESSERA_DUMP_IR=<pass|all>
// (or a comma-separated list of pass names) prints the program after those passes to stderr,
// headed "// after <pass>:"; another value raises ValueError naming the accepted ones.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/jaxpr.h"

namespace tessera::compiler {

// The pass names, in pipeline order.
const std::vector<std::string>& pass_names();

// The pipeline.
std::shared_ptr<const Jaxpr> optimize(const Jaxpr& j);

// The passes TESSERA_DUMP_IR selects (read once per optimize call; empty when unset).
std::vector<std::string> dump_ir_passes();

}  // namespace tessera::compiler
