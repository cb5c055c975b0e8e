// The while primitive (JAX's while_p): operands [cond_consts..., body_consts..., init...],
// params cond_jaxpr (invars [cond_consts..., carry...] -> one bool scalar), body_jaxpr (invars
// [body_consts..., carry...] -> carry, identical types), cond_nconsts, body_nconsts. Both
// jaxprs are const-free (closure constants are the leading operands).
#pragma once

#include <cstdint>
#include <memory>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive while_loop;

// Params {body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts}.
Params while_params(std::shared_ptr<const Jaxpr> cond_jaxpr, int64_t cond_nconsts,
                    std::shared_ptr<const Jaxpr> body_jaxpr, int64_t body_nconsts);

void register_while();

}  // namespace tessera::prims
