// Per-primitive choices of the jaxpr printer that the text format leaves to the primitive (JAX's
// pp_eqn_rules): the params a primitive prints first, in order, before the rest sorted by name
// (jit prints `jit[name=f jaxpr={...}]`, as current JAX does).
#pragma once

#include <string>
#include <vector>

#include "tessera/primitive.h"

namespace tessera::ir {

void set_param_print_order(const Primitive& p, std::vector<std::string> leading);
// The params `p` prints first (empty for most primitives).
std::vector<std::string> param_print_order(const Primitive& p);

}  // namespace tessera::ir
