"""jax.numpy.linalg's spectral functions: eigh, eigvalsh, svd, svdvals, qr, pinv, matrix_rank,
lstsq, cond, eig/eigvals (NotImplementedError: their results are complex). Each is the C++
tessera::linalg function of the same name (src/api/linalg_spectral.cpp), built from Tessera's
eigh/svd/qr primitives, so jit, vmap and grad compose through them."""
import typing as _typing

from tessera import _tessera

_C = _tessera.linalg_spectral

__all__ = ["EighResult", "QRResult", "SVDResult", "cond", "eig", "eigh", "eigvals", "eigvalsh",
           "lstsq", "matrix_rank", "pinv", "qr", "svd", "svdvals"]


class EighResult(_typing.NamedTuple):
    eigenvalues: _typing.Any
    eigenvectors: _typing.Any


class SVDResult(_typing.NamedTuple):
    U: _typing.Any
    S: _typing.Any
    Vh: _typing.Any


class QRResult(_typing.NamedTuple):
    Q: _typing.Any
    R: _typing.Any


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices."""
    w, v = _C.eigh(a, "L" if UPLO is None else UPLO, bool(symmetrize_input))
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """(U, S, Vh) when compute_uv, else S; hermitian uses eigh as JAX."""
    if subset_by_index is not None and not hermitian:
        import tessera.numpy as jnp
        from tessera.lax._linalg_spectral import svd as _lax_svd
        a = jnp.asarray(a)
        if not jnp.issubdtype(a.dtype, jnp.inexact):
            a = a.astype(jnp.result_type(float))
        out = _lax_svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                       subset_by_index=subset_by_index)
        return SVDResult(*out) if compute_uv else out
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index with hermitian=True is not implemented "
                                  "in Tessera; pass hermitian=False.")
    out = _C.svd(a, bool(full_matrices), bool(compute_uv), bool(hermitian))
    return SVDResult(*out) if compute_uv else out[0]


def svdvals(x, /):
    return _C.svd(x, True, False, False)[0]


def qr(a, mode="reduced"):
    """mode 'reduced' (or 'full') / 'complete' -> QRResult(Q, R); 'r' -> R; 'raw' ->
    QRResult(h, tau): LAPACK ?geqrf's reflectors in NumPy's layout, h (..., n, m) (the factored
    matrix transposed, as JAX), and their scalar factors tau (..., k)."""
    out = _C.qr(a, str(mode))
    return out[0] if mode == "r" else QRResult(*out)


def _pick_rtol(name, rtol, rcond):
    if rcond is not None:
        if rtol is not None:
            raise ValueError(f"{name}: only one of rtol or rcond may be specified.")
        return rcond
    return rtol


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse; singular values <= rtol * the largest count as zero
    (default 10 * max(m, n) * eps). rcond is the older name of rtol."""
    return _C.pinv(a, _pick_rtol("pinv", rtol, rcond), bool(hermitian))


def matrix_rank(M, rtol=None, *, tol=None):
    """Number of singular values > tol (default max(s) * max(m, n) * eps); `rtol` given is used
    as the threshold as JAX's; tol is its older name."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    return _C.matrix_rank(M, rtol)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """(x, resid, rank, s) via the SVD; resid is always ||b - a x||² per column (JAX's
    numpy_resid=False)."""
    if numpy_resid:
        raise NotImplementedError("lstsq: numpy_resid=True (value-dependent output shapes) is "
                                  "not supported; use numpy_resid=False.")
    x, resid, rank, s = _C.lstsq(a, b, None if rcond is None else float(rcond))
    return x, resid, rank, s


def cond(x, p=None):
    if p is not None and not isinstance(p, str):
        p = float(p)
    return _C.cond(x, p)


def eig(a):
    _C.eig(a)


def eigvals(a):
    _C.eigvals(a)
