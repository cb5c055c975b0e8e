// Shared helpers for the JVP and transpose rules of the primitive families.
//
// Tangents and cotangents use primitive.h's conventions: an undefined Array is a symbolic zero.
// Every helper computes with tessera::lax functions only (plus rank-0 constants), so the rules
// built on them work under any trace.
#pragma once

#include <string_view>

#include "tessera/array.h"

namespace tessera::prims::ad {

// A rank-0 constant of dtype d (strongly typed).
Array scalar_const(double v, DType d);
// A constant of aval's shape and dtype filled with v (zeros_like_aval: v == 0).
Array full_like_aval(const Aval& aval, double v);
Array zeros_like_aval(const Aval& aval);
// t itself when defined, else zeros of aval.
Array instantiate(const Array& t, const Aval& aval);
// a + b, where an undefined operand is a symbolic zero (both undefined -> undefined).
Array add_tangents(const Array& a, const Array& b);
// Broadcasts t (rank 0, or the same rank with dims equal or 1) to shape; undefined stays
// undefined.
Array broadcast_to_shape(const Array& t, const Shape& shape);
// The cotangent of an operand of aval that lax's broadcasting rule stretched to ct's shape:
// sums ct over the broadcast dims (all dims for rank-0 operands; size-1 dims are summed and
// reshaped back).
Array unbroadcast(const Array& ct, const Aval& aval);
// Whether values of dtype d carry tangents (floating dtypes only).
bool has_tangent(DType d);
// InternalError naming the rule, for transpose calls that break the linearity contract.
[[noreturn]] void bad_linearity(std::string_view op, std::string_view message);

}  // namespace tessera::prims::ad
