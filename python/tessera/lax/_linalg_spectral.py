"""jax.lax.linalg's eigh, svd and qr (and symmetrize) over Tessera's eigh/svd/qr primitives
(src/prims/linalg_{eigh,svd,qr}.cpp, lapack ?syevd, ?gesdd/?gesvd, ?geqrf/?geqp3/?orgqr), and the
raw Householder primitives geqrf, geqp3 and householder_product (src/prims/linalg_householder.cpp).
float32 and float64 inputs only (jnp.linalg promotes integers); Tessera has no complex dtypes."""
from tessera import _tessera

_C = _tessera.linalg_spectral

__all__ = ["eigh", "geqp3", "geqrf", "householder_product", "qr", "svd", "symmetrize"]


def symmetrize(x):
    """(x + xᵀ) / 2 over the last two axes."""
    return _C.symmetrize(x)


def _subset(name, subset_by_index, rank, full_matrices=False):
    """JAX's checks of subset_by_index=(start, end) (end exclusive) against the number of
    eigen/singular values; returns (start, end) as ints."""
    try:
        lo, hi = (int(i) for i in subset_by_index)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: subset_by_index must be a pair (start, end) of ints, got "
                         f"{subset_by_index!r}.") from None
    if lo < 0:
        raise ValueError(f"{name}: indices in subset_by_index must be non-negative, got "
                         f"{(lo, hi)}.")
    if hi > rank:
        raise ValueError(f"{name}: subset_by_index[1] = {hi} exceeds the number of values "
                         f"({rank}).")
    if hi < lo:
        raise ValueError(f"{name}: subset_by_index {(lo, hi)} is an invalid range.")
    if full_matrices and (lo, hi) != (0, rank):
        raise ValueError(f"{name}: full_matrices and subset_by_index cannot both be set; pass "
                         "full_matrices=False.")
    return lo, hi


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None):
    """The eigendecomposition of symmetric matrices: (v, w), v's columns the eigenvectors, w the
    eigenvalues in ascending order."""
    v, w = _C.lax_eigh(x, bool(lower), bool(symmetrize_input), bool(sort_eigenvalues))
    if subset_by_index is not None:
        # (start, end) of the eigenvalues in ascending order: computed in full, then sliced (the
        # slice's transpose gives the gradient).
        lo, hi = _subset("eigh", subset_by_index, w.shape[-1])
        v, w = v[..., :, lo:hi], w[..., lo:hi]
    return v, w


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition: (u, s, vh) when compute_uv, else s (descending)."""
    if algorithm is not None:
        raise NotImplementedError("svd: only the default algorithm (LAPACK ?gesdd) exists in "
                                  "Tessera; pass algorithm=None.")
    if subset_by_index is not None:
        # (start, end) of the singular values in descending order (0 = the largest): the full
        # reduced decomposition, sliced.
        lo, hi = _subset("svd", subset_by_index, min(x.shape[-2:]), full_matrices)
        if (lo, hi) != (0, min(x.shape[-2:])):
            u, s, vh = _C.lax_svd(x, False, True)
            s = s[..., lo:hi]
            return (u[..., :, lo:hi], s, vh[..., lo:hi, :]) if compute_uv else s
    out = _C.lax_svd(x, bool(full_matrices), bool(compute_uv))
    return tuple(out) if compute_uv else out[0]


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition: (q, r); full_matrices gives q (..., m, m) and r (..., m, n), otherwise
    (..., m, k) and (..., k, n) with k = min(m, n). pivoting=True returns (q, r, p) with p the
    int32 column permutation (LAPACK ?geqp3): x[..., :, p] == q @ r, |diag(r)| non-increasing."""
    del use_magma  # a GPU (MAGMA) choice; Tessera's CPU path is LAPACK
    out = _C.lax_qr(x, bool(pivoting), bool(full_matrices))
    return tuple(out)


def geqrf(a):
    """(a, taus): LAPACK ?geqrf. r is the upper triangle of a; the Householder vectors lie below
    its diagonal and taus (..., min(m, n)) holds their scalar factors."""
    h, taus = _C.geqrf(a)
    return h, taus


def geqp3(a, jpvt):
    """(a, jpvt, taus): LAPACK ?geqp3, the column-pivoted geqrf. jpvt int32 (..., n): nonzero
    keeps a column in front, 0 leaves it free; returned as the 1-based original column index of
    each factored column (a[..., :, jpvt - 1] == q @ r)."""
    return tuple(_C.geqp3(a, jpvt))


def householder_product(a, taus):
    """The first n columns of the product of the Householder reflectors stored below a's
    diagonal (a (..., m, n), m >= n) scaled by taus (..., k), k <= n: LAPACK ?orgqr."""
    return _C.householder_product(a, taus)
