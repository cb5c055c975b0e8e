// What lax::reduce and lax::reduce_window share to recognize a monoid computation (JAX's
// _get_monoid_reducer / _get_monoid_window_reducer): the binary primitive a one-operand scalar
// body applies to its two arguments, and whether an init value is exactly that primitive's
// identity. Both then bind the monoid's own reduction primitive instead of the generic one.
#pragma once

#include <string>
#include <string_view>

#include "tessera/array.h"
#include "tessera/jaxpr.h"

namespace tessera::lax::detail {

// "add", "mul", "max", "min", "and", "or", "xor" ... : the primitive name of a body that is
// exactly `a op b` (either argument order) on its two invars, with no consts; "" otherwise.
std::string monoid_op(const Jaxpr& body);
// Whether the concrete rank-0 x equals op's identity in x's dtype, exactly: add/or/xor 0,
// mul 1, max the lowest value (-inf for floats), min the highest (+inf), and all bits set.
bool is_monoid_identity(const Array& x, std::string_view op);

}  // namespace tessera::lax::detail
