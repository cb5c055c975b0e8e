// The sort primitive (jax.lax's sort_p): sort(*operands) {dimension: int64, is_stable: bool,
// num_keys: int64}, multiple results. The operands share one shape (rank >= 1; any dtypes) and
// are sorted along `dimension` (0 <= dimension < rank: lax normalizes negative dimensions)
// lexicographically by the first num_keys, the others permuted alongside; each result keeps
// its operand's aval. Floats order as JAX's: -0.0 and +0.0 tie, every NaN sorts after +inf and
// NaNs tie. Always stable, whatever is_stable says.
#pragma once

#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive sort;
// top_k(operand) {k}: the k largest along the last axis, descending, and their int32 indices
// (top_k.cpp; the same order as sort's, reversed; ties keep the lower index first).
extern Primitive top_k_p;

void register_sort();
void register_top_k();

}  // namespace tessera::prims
