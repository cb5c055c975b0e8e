// Shared helpers for the JVP and transpose rules of the primitive families.
//
// Tangents and cotangents use primitive.h's conventions: an undefined Array is a symbolic zero.
// Every helper computes with tessera::lax functions only (plus rank-0 constants), so the rules
// built on them work under any trace.
#pragma once

#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/primitive.h"
#include "trace/tangents.h"

namespace tessera::prims::ad {

// The interpreter layer's tangent vocabulary (trace/tangents.h), under the names rules use.
using trace::add_tangents;
using trace::full_like_aval;
using trace::has_tangent;
using trace::instantiate;
using trace::scalar_const;
using trace::zero_tangent;
using trace::zeros_like_aval;
// Broadcasts t (rank 0, or the same rank with dims equal or 1) to shape; undefined stays
// undefined.
Array broadcast_to_shape(const Array& t, const Shape& shape);
// The cotangent of an operand of aval that lax's broadcasting rule stretched to ct's shape:
// sums ct over the broadcast dims (all dims for rank-0 operands; size-1 dims are summed and
// reshaped back).
Array unbroadcast(const Array& ct, const Aval& aval);
// InternalError naming the rule, for transpose calls that break the linearity contract.
[[noreturn]] void bad_linearity(std::string_view op, std::string_view message);

// What a JVP rule returns: (primal outputs, tangents).
using JvpOut = std::pair<std::vector<Array>, std::vector<Array>>;
// The one-element result vector {a}.
std::vector<Array> one(Array a);
// The JVP of an op linear in its first operand (the others, if any, are not differentiated):
// {f(x)}, {f(t)}, where a symbolic-zero tangent stays one.
template <class F>
JvpOut linear_jvp(std::span<const Array> primals, std::span<const Array> tangents, F f) {
  Array out = f(primals[0]);
  Array t;
  if (!zero_tangent(primals[0], tangents[0])) t = f(tangents[0]);
  return {one(out), one(t)};
}
// JAX's defjvp_zero for a single-output primitive: p bound on the primals, with a symbolic-zero
// tangent (piecewise-constant ops, integer/bool outputs).
JvpRule zero_jvp(const Primitive& p);

}  // namespace tessera::prims::ad
