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

// The lower-triangular Cholesky factor L (L·Lᵀ = x) of symmetric positive-definite matrices
// [..., n, n]; symmetrize_input uses (x + xᵀ)/2, else only x's lower triangle is read. A matrix
// that is not positive definite gives an all-NaN L. ValueError for non-square x.
Array cholesky(const Array& x, bool symmetrize_input = true);

// LU decomposition with partial pivoting of x [..., m, n]: (lu, pivots, permutation) with
// x[..., permutation, :] = L·U, L (unit lower, m×k) and U (upper, k×n) packed in lu, pivots
// [..., min(m, n)] int32 (0-based row swaps), permutation [..., m] int32.
std::tuple<Array, Array, Array> lu(const Array& x);

// The permutation [..., permutation_size] int32 that the row swaps `pivots` [..., k] (int32)
// produce from the identity; ValueError when permutation_size < k.
Array lu_pivots_to_permutation(const Array& pivots, int64_t permutation_size);

// JAX's lax.linalg._lu_solve: solves A·x = b (trans 0) or Aᵀ·x = b (trans 1 or 2) from lu's
// factors; b is [..., m] (one rank below lu) or [..., m, k]; batch dims broadcast.
Array lu_solve(const Array& lu, const Array& permutation, const Array& b, int trans = 0);

// JAX's lax.linalg._solve: a [..., m, m], b [..., m] (one rank below a) or [..., m, k] whose
// leading size-1 dims broadcast to a's. Differentiates as custom_linear_solve: the gradient costs
// one more solve with the same factorization (never a derivative of the LU kernel).
Array solve(const Array& a, const Array& b);

}  // namespace tessera::lax::linalg

namespace tessera::linalg {

// jnp.linalg (integer/bool inputs promoted to the default float dtype).
// solve: b of rank 1 is one vector [m]; otherwise b is [..., m, k]; batch dims broadcast.
Array solve(const Array& a, const Array& b);
Array inv(const Array& a);
// det's gradient is JAX's: adj(a)ᵀ from a cofactor solve, finite for singular a of rank n-1.
Array det(const Array& a);
// (sign, log|det|); sign 0 and logabsdet -inf for singular matrices.
std::pair<Array, Array> slogdet(const Array& a);
// a^n by repeated squaring; n < 0 inverts a first; n == 0 gives identities.
Array matrix_power(const Array& a, int64_t n);
// The product of the arrays (the first may be 1-D, a row vector; the last 1-D, a column).
Array multi_dot(const std::vector<Array>& arrays);
Array tensorsolve(const Array& a, const Array& b,
                  const std::optional<std::vector<int64_t>>& axes = std::nullopt);
Array tensorinv(const Array& a, int64_t ind = 2);
// The lower Cholesky factor (its transpose when upper); input symmetrized.
Array cholesky(const Array& a, bool upper = false);

}  // namespace tessera::linalg

// jax.scipy.linalg.
namespace tessera::linalg::scipy {

// Only the lower (lower) or upper triangle of a is read; the other triangle of the result is
// zero (SciPy leaves it unspecified).
Array cholesky(const Array& a, bool lower = false);
std::pair<Array, bool> cho_factor(const Array& a, bool lower = false);
Array cho_solve(const std::pair<Array, bool>& c_and_lower, const Array& b);
// (lu, pivots int32).
std::pair<Array, Array> lu_factor(const Array& a);
// trans: 0 (a x = b), 1 (aᵀ x = b), 2 (aᴴ x = b).
Array lu_solve(const std::pair<Array, Array>& lu_and_piv, const Array& b, int trans = 0);
// {p, l, u} with a = p·l·u, or {p·l, u} when permute_l.
std::vector<Array> lu(const Array& a, bool permute_l = false);
// trans 0/1/2 ('N'/'T'/'C'); b [..., m] (one rank below a) or [..., m, k].
Array solve_triangular(const Array& a, const Array& b, int trans = 0, bool lower = false,
                       bool unit_diagonal = false);
// assume_a: "gen", "sym", "her" (LU) or "pos" (Cholesky of the `lower` triangle).
Array solve(const Array& a, const Array& b, bool lower = false,
            const std::string& assume_a = "gen");
Array inv(const Array& a);
Array det(const Array& a);

}  // namespace tessera::linalg::scipy
