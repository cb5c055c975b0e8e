// Shared pieces of the dense linear-algebra primitives of the solve family (triangular_solve,
// cholesky, lu, lu_pivots_to_permutation): operand checks, the batched eager driver and the lax
// helpers their JVP rules compute with.
//
// Threading: OpenBLAS runs single-threaded (runtime/blas.h's init(), called by every family's
// registration), and Tessera's one pool splits a batch of matrices into tasks of whole matrices,
// one LAPACK/BLAS call per matrix, each writing only its own output slice. A single matrix (or a
// batch too small to pay for waking workers) runs on the calling thread as one call. The two
// never fight: there is only one pool, and the library call inside a task never spawns threads.
// Chunk boundaries depend on the matrix sizes only, so results never depend on the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "tessera/array.h"
#include "tessera/primitive.h"

namespace tessera::prims {

// linalg_triangular_solve.cpp: triangular_solve(a, b) {left_side, lower, transpose_a,
// conjugate_a, unit_diagonal}.
extern Primitive triangular_solve_p;

namespace linalg {

// The number of matrices in an operand of shape [..., r, c] (product of the leading dims).
int64_t batch_count(const Shape& s);

// TypeError unless the aval is float32/float64 of rank >= 2 (what names it: "a", "b", "x").
void check_float_matrix(const char* op, const Aval& a, const char* what);

// Runs fn(i) for every matrix i < batch. flops: a rough cost of one matrix's call, which sets
// how many matrices share a chunk (never a thread-count-dependent split).
void for_each_matrix(int64_t batch, double flops, const std::function<void(int64_t)>& fn);

// Runs fn(first, count) over the batch in consecutive groups of `group` matrices (the last one
// may be short), for kernels that work on several matrices at once (linalg_small.h). Groups are
// cut at multiples of `group` from 0, so which matrices share a group never depends on the
// thread count.
void for_each_group(int64_t batch, int64_t group, double flops,
                    const std::function<void(int64_t, int64_t)>& fn);

// LAPACK's info < 0 (an illegal argument: a bug here) as an InternalError naming the routine.
void check_lapack_info(const char* op, const char* routine, int64_t info);

// x with its last two axes swapped (one transpose).
Array swap_last2(const Array& x);
// Batched matrix product over the leading dims: [..., m, k] x [..., k, n] -> [..., m, n].
Array matmul(const Array& a, const Array& b);
// The lower (tril: j <= i + k) or upper (triu: j >= i + k) part of the last two axes, the rest
// zero.
Array tri(const Array& x, bool lower, int64_t k = 0);
// An n x n identity of dtype dt.
Array identity(int64_t n, DType dt);
// triangular_solve bound with its params.
Array trsolve(const Array& a, const Array& b, bool left_side, bool lower, bool transpose_a,
              bool unit_diagonal);

}  // namespace linalg
}  // namespace tessera::prims
