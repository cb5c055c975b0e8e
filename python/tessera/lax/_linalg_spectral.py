"""jax.lax.linalg's eigh, svd and qr (and symmetrize) over Tessera's eigh/svd/qr primitives
(src/prims/linalg_{eigh,svd,qr}.cpp, lapack ?syevd, ?gesdd/?gesvd, ?geqrf/?orgqr). float32 and
float64 inputs only (jnp.linalg promotes integers); Tessera has no complex dtypes."""
from tessera import _tessera

_C = _tessera.linalg_spectral

__all__ = ["eigh", "qr", "svd", "symmetrize"]


def symmetrize(x):
    """(x + xᵀ) / 2 over the last two axes."""
    return _C.symmetrize(x)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None):
    """The eigendecomposition of symmetric matrices: (v, w), v's columns the eigenvectors, w the
    eigenvalues in ascending order."""
    if subset_by_index is not None:
        raise NotImplementedError("eigh: subset_by_index is not implemented in Tessera; compute "
                                  "all eigenvalues and slice them.")
    v, w = _C.lax_eigh(x, bool(lower), bool(symmetrize_input), bool(sort_eigenvalues))
    return v, w


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition: (u, s, vh) when compute_uv, else s (descending)."""
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not implemented in Tessera; compute "
                                  "all singular values and slice them.")
    if algorithm is not None:
        raise NotImplementedError("svd: only the default algorithm (LAPACK ?gesdd) exists in "
                                  "Tessera; pass algorithm=None.")
    out = _C.lax_svd(x, bool(full_matrices), bool(compute_uv))
    return tuple(out) if compute_uv else out[0]


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition: (q, r); full_matrices gives q (..., m, m) and r (..., m, n), otherwise
    (..., m, k) and (..., k, n) with k = min(m, n)."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not implemented in Tessera; use "
                                  "pivoting=False.")
    q, r = _C.lax_qr(x, bool(full_matrices))
    return q, r
