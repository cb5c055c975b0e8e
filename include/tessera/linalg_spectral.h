// Dense linear algebra of the spectral family: jax.lax.linalg's eigh, svd and qr, and QR's raw
// forms geqrf, geqp3 and householder_product (namespace tessera::lax::linalg, over the
// primitives of src/prims/linalg_{eigh,svd,qr,householder}.cpp), and the jnp.linalg /
// jax.scipy.linalg functions built on them (namespaces tessera::linalg and
// tessera::linalg::scipy, src/api/linalg_spectral.cpp). float32/float64 (Tessera has no complex
// dtypes); the lax-level functions take floating inputs only, the jnp/scipy-level ones promote
// integers and bools to the default float (float32, float64 under x64). Every function is built
// from Tessera ops, so jit, vmap and grad compose through it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy_reductions.h"

namespace tessera::lax::linalg {

// (x + xᵀ) / 2 over the last two axes (JAX's symmetrize).
Array symmetrize(const Array& x);

// The eigendecomposition of symmetric x (..., n, n): (v, w), v's columns the eigenvectors, w the
// eigenvalues ascending. Only the lower (lower) or upper triangle is read; symmetrize_input
// first replaces x by symmetrize(x) (then both triangles count, and so does the gradient).
// Non-convergence or non-finite input: NaNs. ValueError for a non-square or rank < 2 x,
// TypeError for a non-float32/float64 dtype.
std::pair<Array, Array> eigh(const Array& x, bool lower = true, bool symmetrize_input = true,
                             bool sort_eigenvalues = true);

// Singular value decomposition of x (..., m, n): {u, s, vh} (compute_uv) or {s}; s descending,
// u (..., m, m or k), vh (..., n or k, n) as full_matrices says (k = min(m, n)). The JVP needs
// full_matrices=false or a square x (NotImplementedError otherwise, as JAX).
std::vector<Array> svd(const Array& x, bool full_matrices = true, bool compute_uv = true);

// QR decomposition of x (..., m, n): (q, r); q (..., m, m) and r (..., m, n) when
// full_matrices, else (..., m, k) and (..., k, n). The JVP needs m >= n and (full_matrices only
// when square): NotImplementedError otherwise, as JAX.
std::pair<Array, Array> qr(const Array& x, bool full_matrices = true);
// jax.lax.linalg.qr(x, pivoting=, full_matrices=): {q, r} without pivoting; with pivoting
// {q, r, p}, p int32 (..., n) the 0-based column permutation (LAPACK ?geqp3) with
// x[..., :, p] = q r and |diag r| non-increasing (p is zero for empty matrices, as JAX's).
// Differentiable as the unpivoted qr, through the permuted columns (p's tangent is zero).
std::vector<Array> qr(const Array& x, bool pivoting, bool full_matrices);

// The raw Householder factorizations (src/prims/linalg_householder.cpp). JAX defines no
// derivatives for them: differentiating raises NotImplementedError.
// geqrf(a (..., m, n)) -> (a_factored, taus (..., min(m, n))): LAPACK ?geqrf; R is a_factored's
// upper triangle, the reflectors' vectors lie below its diagonal (unit diagonal implicit).
std::pair<Array, Array> geqrf(const Array& a);
// geqp3(a (..., m, n), jpvt int32 (..., n)) -> {a_factored, jpvt, taus}: LAPACK ?geqp3
// (column-pivoted geqrf). jpvt in: nonzero keeps that column in front, 0 leaves it free; out:
// the 1-based original index of each factored column (LAPACK's convention, as JAX's).
std::vector<Array> geqp3(const Array& a, const Array& jpvt);
// householder_product(a (..., m, n), taus (..., k)) with m >= n >= k: the first n columns of
// the product of the k reflectors below a's diagonal (LAPACK ?orgqr), shape (..., m, n).
Array householder_product(const Array& a, const Array& taus);

}  // namespace tessera::lax::linalg

namespace tessera::linalg {

using NormOrd = numpy::linalg::NormOrd;

// jnp.linalg.eigh: (eigenvalues, eigenvectors). UPLO "L" or "U" (ValueError otherwise).
struct EighResult {
  Array eigenvalues, eigenvectors;
};
EighResult eigh(const Array& a, const std::string& UPLO = "L", bool symmetrize_input = true);
// jnp.linalg.eigvalsh: the eigenvalues of eigh.
Array eigvalsh(const Array& a, const std::string& UPLO = "L", bool symmetrize_input = true);

// jnp.linalg.svd: {U, S, Vh} (compute_uv) or {S}. hermitian: from eigh (|w| sorted descending,
// the signs moved into Vh), as JAX.
std::vector<Array> svd(const Array& a, bool full_matrices = true, bool compute_uv = true,
                       bool hermitian = false);
// jnp.linalg.svdvals: the singular values, descending.
Array svdvals(const Array& a);

// jnp.linalg.qr: mode "reduced" (or "full", as JAX) -> {Q, R} (k columns/rows), "complete" ->
// {Q, R} (full), "r" -> {R} (reduced R), "raw" -> {h, tau}: geqrf's output transposed, h
// (..., n, m) (NumPy's Fortran-order layout, as JAX's), and tau (..., k). Any other mode:
// ValueError.
std::vector<Array> qr(const Array& a, const std::string& mode = "reduced");

// jnp.linalg.pinv: the Moore-Penrose pseudo-inverse via the SVD; singular values <= rtol · the
// largest count as zero. rtol absent: 10 · max(m, n) · eps. rtol may be an array that
// broadcasts against a's batch dims. Differentiated by JAX's custom JVP (Golub & Pereyra).
Array pinv(const Array& a, const std::optional<Array>& rtol = std::nullopt, bool hermitian = false);

// jnp.linalg.matrix_rank: the number of singular values > tol. rtol absent:
// tol = max(s) · max(m, n) · eps; rtol given: tol = rtol (JAX's convention). Rank < 2 inputs:
// 1 if any entry is nonzero, else 0. int32 result.
Array matrix_rank(const Array& M, const std::optional<Array>& rtol = std::nullopt);

// jnp.linalg.lstsq(a, b, rcond): {x, resid, rank, s} via the SVD, as JAX (numpy_resid=false:
// the residuals ||b - a x||² are always returned, per column of b). a must be 2-D, b 1-D or 2-D.
std::vector<Array> lstsq(const Array& a, const Array& b,
                         const std::optional<double>& rcond = std::nullopt);

// jnp.linalg.cond(x, p): None/2 -> s_max/s_min, -2 -> s_min/s_max, otherwise
// norm(x, p) · norm(inv(x), p) (square x only; inv from linalg_solve.h). NaN results become inf
// unless x had NaNs.
Array cond(const Array& x, const NormOrd& p = {});

// jnp.linalg.eig / eigvals: their results are complex, which Tessera does not have:
// NotImplementedError naming complex64/complex128.
[[noreturn]] void eig(const Array& a);
[[noreturn]] void eigvals(const Array& a);

}  // namespace tessera::linalg

namespace tessera::linalg::scipy {

// jax.scipy.linalg.eigh(a, lower, eigvals_only): {w, v} or {w}.
std::vector<Array> eigh(const Array& a, bool lower = true, bool eigvals_only = false);
// jax.scipy.linalg.svd(a, full_matrices, compute_uv): {U, s, Vh} or {s}.
std::vector<Array> svd(const Array& a, bool full_matrices = true, bool compute_uv = true);
// jax.scipy.linalg.qr(a, mode, pivoting): mode "full" -> {Q, R}, "economic" -> {Q, R} reduced,
// "r" -> {R} (full R), "raw" -> {h, tau, R} (SciPy's ((h, tau), R): geqrf's output h (..., m, n)
// untransposed, and the economic R); pivoting appends P, the int32 0-based column permutation
// (a[..., :, P] = Q R), to each ({Q, R, P}, {R, P}, {h, tau, R, P}; raw then uses ?geqp3).
std::vector<Array> qr(const Array& a, const std::string& mode = "full", bool pivoting = false);
// jax.scipy.linalg.expm: Padé approximation with scaling and squaring (orders 3..13 for
// float64, 3..7 for float32, chosen by the 1-norm as JAX; the Padé solve is lax.linalg's LU
// solve, or a triangular solve when upper_triangular); batched over leading dims. More than
// max_squarings squarings needed: NaNs.
Array expm(const Array& A, bool upper_triangular = false, int64_t max_squarings = 16);

}  // namespace tessera::linalg::scipy
