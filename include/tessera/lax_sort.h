// lax.sort and lax.sort_key_val (jax.lax's names and semantics) — src/api/lax_sort.cpp; the
// sort primitive's rules are in src/prims/sort.cpp.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/array.h"

namespace tessera::lax {

// Sorts the operands (one shape, rank >= 1, any dtypes) along `dimension` (negative counts from
// the end), lexicographically by the first num_keys of them, the others permuted alongside;
// returns one array per operand. Floats order -0.0 and +0.0 as equal and every NaN after +inf
// (NaNs equal). The sort is stable whatever is_stable says. TypeError for no operands (JAX's
// "Sort requires at least one operand") and for differing shapes; ValueError for a dimension
// out of range (also for rank-0 operands, as JAX's canonicalize_axis) and for num_keys outside
// [1, number of operands].
std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension = -1,
                        bool is_stable = true, int64_t num_keys = 1);
// One operand (num_keys must be 1: ValueError otherwise, as JAX).
Array sort(const Array& operand, int64_t dimension = -1, bool is_stable = true,
           int64_t num_keys = 1);
// keys sorted along dimension and values permuted alike: (sorted keys, permuted values).
std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int64_t dimension = -1,
                                     bool is_stable = true);

// The k largest entries along the last axis, in descending order, and their int32 indices
// (ties: the lower index first; NaN counts as the largest). ValueError for k < 0 or k larger
// than the last dimension; TypeError for rank 0.
std::pair<Array, Array> top_k(const Array& operand, int64_t k);

}  // namespace tessera::lax
