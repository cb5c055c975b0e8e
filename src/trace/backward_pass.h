// Transposition of linear jaxprs (the reverse half of vjp/grad, and linear_transpose).
#pragma once

#include <span>
#include <vector>

#include "tessera/jaxpr.h"

namespace tessera::trace {

// `j` is linear in its invars. Given cotangents of its outvars (undefined = zero), returns the
// cotangents of its invars (undefined = zero). Equations that read no linear value (constvars,
// literals and values computed from them only) are evaluated forward first; the others are
// transposed in reverse order with their primitives' transpose rules, under the current trace
// (so reverse mode itself can be differentiated or batched).
std::vector<Array> backward_pass(const Jaxpr& j, std::span<const Array> consts,
                                 std::span<const Array> out_cts);

}  // namespace tessera::trace
