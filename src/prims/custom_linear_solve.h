// The custom_linear_solve primitive (JAX's linear_solve_p, lax.custom_linear_solve): x = solve(b)
// for a linear operator given as const-free jaxprs, differentiated implicitly at the solution.
//
// Operands: the constants of matvec, vecmat, solve and transpose_solve (in that order, counted
// by `const_lengths`), then the leaves of b. Params: `matvec_jaxpr` (x -> A·x), `solve_jaxpr`
// (b -> x, then any aux outputs), and — both or neither — `vecmat_jaxpr` (the transposed
// operator) and `transpose_solve_jaxpr` (b -> Aᵀ⁻¹·b, then aux); each jaxpr takes its constants
// then the b-shaped leaves. Results: x's leaves (b's avals), then solve's aux outputs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive custom_linear_solve;

// The four jaxprs in JAX's _LinearSolveTuple order; vecmat and transpose_solve may be null.
struct LinearSolveJaxprs {
  std::shared_ptr<const Jaxpr> matvec, vecmat, solve, transpose_solve;
};

Params linear_solve_params(const LinearSolveJaxprs& jaxprs,
                           const std::array<int64_t, 4>& const_lengths);

void register_custom_linear_solve();

}  // namespace tessera::prims
