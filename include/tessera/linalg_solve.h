// Dense linear algebra of the solve family: jax.lax.linalg's triangular_solve, cholesky, lu and
// lu_pivots_to_permutation (namespace tessera::lax::linalg, over the primitives of
// src/prims/linalg_*.cpp), and the jnp.linalg / jax.scipy.linalg functions built on them
// (namespace tessera::linalg, src/api/linalg_solve.cpp). float32/float64; integer inputs are
// promoted by the jnp/scipy-level functions (to float32, float64 under x64), not by lax's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/array.h"

namespace tessera::lax::linalg {

// Solves op(a)·x = b (left_side) or x·op(a) = b, op(a) = a or aᵀ (transpose_a), reading only
// the lower (lower) or upper triangle of a, with ones on the diagonal when unit_diagonal.
// a: [..., m, m]; b: [..., m, n] (left) or [..., n, m] (right) with a's batch dims, or one rank
// less ([..., m]: a single vector, as JAX). conjugate_a has no effect on real dtypes.
Array triangular_solve(const Array& a, const Array& b, bool left_side = false, bool lower = false,
                       bool transpose_a = false, bool conjugate_a = false,
                       bool unit_diagonal = false);

}  // namespace tessera::lax::linalg
