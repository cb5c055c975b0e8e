"""jax.scipy.linalg's eigh, svd, qr and expm over Tessera's spectral primitives (the C++
tessera::linalg::scipy::eigh / svd / qr / expm of src/api/linalg_spectral.cpp)."""
from tessera import _tessera

_C = _tessera.linalg_spectral

__all__ = ["eigh", "expm", "qr", "svd"]


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    """Eigenvalues w (ascending) and eigenvectors v of a symmetric a, reading its lower (lower)
    or upper triangle: (w, v), or w when eigvals_only."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("scipy.linalg.eigh: the generalized problem (b given) is not "
                                  "implemented in Tessera.")
    if eigvals is not None:
        raise NotImplementedError("scipy.linalg.eigh: eigvals (a subset) is not implemented.")
    if type != 1:
        raise NotImplementedError("scipy.linalg.eigh: only type=1 is implemented.")
    out = _C.scipy_eigh(a, bool(lower), bool(eigvals_only))
    return out[0] if eigvals_only else (out[0], out[1])


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """(U, s, Vh) when compute_uv, else s."""
    del overwrite_a, check_finite, lapack_driver
    out = _C.scipy_svd(a, bool(full_matrices), bool(compute_uv))
    return tuple(out) if compute_uv else out[0]


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """mode 'full' -> (Q, R); 'economic' -> reduced (Q, R); 'r' -> (R,); 'raw' -> ((h, tau), R)
    with h LAPACK ?geqrf's factored matrix (..., m, n) and R the economic one, as SciPy.
    pivoting=True appends P, the int32 column permutation with a[..., :, P] == Q @ R:
    (Q, R, P), (R, P) or ((h, tau), R, P)."""
    del overwrite_a, lwork, check_finite
    out = _C.scipy_qr(a, str(mode), bool(pivoting))
    if mode == "raw":
        return ((out[0], out[1]),) + tuple(out[2:])
    return tuple(out)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential by Padé approximation with scaling and squaring (JAX's)."""
    return _C.expm(A, bool(upper_triangular), int(max_squarings))
