// The tangent vocabulary of the interpreters and the jaxpr transformations: which values carry
// tangents, symbolic zeros, materialized zeros and the sum of two tangents — JAX's ad_util
// (zeros_like_aval, add_jaxvals, instantiate_zeros). Computed with interpreter_ops().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tessera/array.h"

namespace tessera::trace {

// Whether values of dtype d carry tangents (floating dtypes).
bool has_tangent(DType d);
// Whether `tangent` is a symbolic zero: undefined, or of an integer/bool primal.
bool zero_tangent(const Array& primal, const Array& tangent);
// The aval of the tangent of a value of aval a: a itself, strongly typed, for floating values;
// float0 of a's shape for integer/bool ones.
Aval tangent_aval(const Aval& a);
// Per input: whether its tangent is nonzero (defined, and of a value that carries tangents).
// What the rules of primitives with sub-jaxprs pass to jvp_jaxpr / linearize_jaxpr.
std::vector<bool> nonzero_mask(std::span<const Array> primals, std::span<const Array> tangents);

// A rank-0 constant of dtype d (strongly typed).
Array scalar_const(double v, DType d);
// A constant of aval's shape and dtype filled with v.
Array full_like_aval(const Aval& aval, double v);
Array zeros_like_aval(const Aval& aval);
// t itself when defined, else zeros of aval.
Array instantiate(const Array& t, const Aval& aval);
// a + b, where an undefined operand is a symbolic zero (both undefined -> undefined).
Array add_tangents(const Array& a, const Array& b);

}  // namespace tessera::trace
