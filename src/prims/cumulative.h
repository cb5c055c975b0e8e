// The cumulative reductions along one axis (jax.lax's cumsum_p, cumprod_p, cummax_p, cummin_p,
// cumlogsumexp_p), params {axis: int64, reverse: bool}. Operands are numbers (no bool);
// cumlogsumexp takes floating dtypes. The output has the operand's aval.
#pragma once

#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive cumsum, cumprod, cummax, cummin, cumlogsumexp;

void register_cumulative();

}  // namespace tessera::prims
