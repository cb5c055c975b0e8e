"""jax.scipy.linalg's block_diag, toeplitz, hilbert, polar (through the SVD), expm_frechet
(through the exponential of the block matrix [[A, E], [0, A]]) and eigh_tridiagonal (eigenvalues
by Sturm-sequence bisection), composed from jax.numpy and lax. funm, sqrtm, schur, hessenberg and
rsf2csf need a Schur decomposition over complex dtypes, which Tessera does not have."""
import numpy as _np

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera.scipy._linalg_spectral import expm as _expm
from tessera.scipy._linalg_spectral import svd as _svd

__all__ = ["block_diag", "eigh_tridiagonal", "expm_frechet", "funm", "hessenberg", "hilbert",
           "polar", "rsf2csf", "schur", "sqrtm", "toeplitz"]


def _real_only(name, *arrays):
    for a in arrays:
        if _jnp.iscomplexobj(a):
            raise TypeError(f"jax.scipy.linalg.{name}: complex inputs are not supported "
                            "(Tessera has no complex dtypes)")


def block_diag(*arrs):
    """The block-diagonal matrix of the given (at most 2-D) arrays, in one promoted dtype; a
    1-D argument is a row, a scalar a 1 x 1 block."""
    if len(arrs) == 0:
        arrs = (_jnp.zeros((1, 0)),)
    arrs = [_jnp.asarray(a) for a in arrs]
    _real_only("block_diag", *arrs)
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             f"dimensions, got {a.shape} at argument {i}.")
    dtype = _jnp.result_type(*arrs)
    arrs = [_jnp.atleast_2d(a).astype(dtype) for a in arrs]
    cols = sum(a.shape[1] for a in arrs)
    rows = []
    left = 0
    for a in arrs:
        r, c = a.shape
        rows.append(_jnp.pad(a, [(0, 0), (left, cols - left - c)]))
        left += c
    return _jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r[0] ignored; r = c when
    omitted). Leading axes of c and r are batch axes, broadcast together:
    result (..., len(c), len(r))."""
    c = _jnp.atleast_1d(_jnp.asarray(c))
    r = c if r is None else _jnp.atleast_1d(_jnp.asarray(r))
    _real_only("toeplitz", c, r)
    dtype = _jnp.result_type(c, r)
    c = c.astype(dtype)
    r = r.astype(dtype)
    batch = _jnp.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = _jnp.broadcast_to(c, batch + c.shape[-1:])
    r = _jnp.broadcast_to(r, batch + r.shape[-1:])
    m, n = c.shape[-1], r.shape[-1]
    # entry (i, j) is vals[i - j + n - 1] of vals = [r[n-1], ..., r[1], c[0], ..., c[m-1]]
    vals = _jnp.concatenate([_jnp.flip(r[..., 1:], axis=-1), c], axis=-1)
    idx = _np.arange(m)[:, None] - _np.arange(n)[None, :] + n - 1
    return vals[..., _jnp.asarray(idx.astype(_np.int32))]


def hilbert(n):
    """The n x n Hilbert matrix 1 / (i + j + 1), in the default float dtype."""
    i = _jnp.arange(n, dtype=_jnp.result_type(1.0))
    return 1.0 / (i[:, None] + i[None, :] + 1)


def polar(a, side="right", *, method="qdwh", eps=None, maxiter=None):
    """(u, p) with a = u p (side 'right', p = V S V^T) or a = p u (side 'left', p = U S U^T),
    u with orthonormal columns (rows when a is wide) and p positive semidefinite, from the thin
    SVD a = U S V^T (u = U V^T). method 'qdwh' (JAX's default iteration) gives the same
    factors: both are computed through the SVD here."""
    del eps, maxiter
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    if side not in ("right", "left"):
        raise ValueError(f"side={side} must be 'right' or 'left'")
    a = _jnp.asarray(a)
    _real_only("polar", a)
    if a.ndim != 2:
        raise ValueError(f"jax.scipy.linalg.polar: a must be a 2-D matrix, got shape {a.shape}")
    if not _jnp.issubdtype(a.dtype, _jnp.floating):
        a = a.astype(_jnp.result_type(a.dtype, 1.0))
    u_, s, vh = _svd(a, full_matrices=False)
    unitary = u_ @ vh
    if side == "right":
        posdef = (vh.T * s) @ vh
    else:
        posdef = (u_ * s) @ u_.T
    return unitary, posdef


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative L of the matrix exponential at A in the direction E
    (expm(A + t E) = expm(A) + t L + O(t^2)), read off the exponential of the block matrix
    [[A, E], [0, A]] = [[expm(A), L], [0, expm(A)]]: (expm(A), L), or L when not compute_expm."""
    A = _jnp.asarray(A)
    E = _jnp.asarray(E)
    _real_only("expm_frechet", A, E)
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"only method='SPS' is supported (got method={method!r})")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"expected A to be a square matrix, got shape {A.shape}")
    if E.ndim < 2 or E.shape[-1] != E.shape[-2]:
        raise ValueError(f"expected E to be a square matrix, got shape {E.shape}")
    if A.shape != E.shape:
        raise ValueError(f"expected A and E to be the same shape, got {A.shape} and {E.shape}")
    dtype = _jnp.result_type(A, E, 1.0) if not _jnp.issubdtype(
        _jnp.result_type(A, E), _jnp.floating) else _jnp.result_type(A, E)
    A = A.astype(dtype)
    E = E.astype(dtype)
    n = A.shape[-1]
    top = _jnp.concatenate([A, E], axis=-1)
    bottom = _jnp.concatenate([_jnp.zeros_like(A), A], axis=-1)
    big = _expm(_jnp.concatenate([top, bottom], axis=-2))
    expm_a = big[..., :n, :n]
    frechet = big[..., :n, n:]
    return (expm_a, frechet) if compute_expm else frechet


def _needs_schur(name):
    return NotImplementedError(
        f"jax.scipy.linalg.{name} needs a (complex) Schur decomposition, i.e. complex dtypes "
        "(complex64/complex128), which Tessera does not have; for a symmetric matrix use "
        "jax.scipy.linalg.eigh (f(A) = V diag(f(w)) V^T)")


def funm(A, func, disp=True):
    raise _needs_schur("funm")


def sqrtm(A, blocksize=1):
    raise _needs_schur("sqrtm")


def schur(a, output="real"):
    raise _needs_schur("schur")


def rsf2csf(T, Z, check_finite=True):
    raise _needs_schur("rsf2csf")


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    raise NotImplementedError("jax.scipy.linalg.hessenberg is not implemented in Tessera (JAX "
                              "calls LAPACK's gehrd, CPU only); it is the first step of the "
                              "Schur decomposition, which needs complex dtypes")


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None):
    """The eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal d (n) and
    off-diagonal e (n - 1), by bisection on Sturm-sequence counts (JAX's method): all of them
    (select 'a') or those with indices select_range = (lo, hi), inclusive (select 'i').
    eigvals_only=True is required, as in JAX."""
    if not eigvals_only:
        raise NotImplementedError("Calculation of eigenvectors is not implemented")
    d = _jnp.asarray(d)
    e = _jnp.asarray(e)
    _real_only("eigh_tridiagonal", d, e)
    if d.ndim != 1 or e.ndim != 1:
        raise ValueError(f"eigh_tridiagonal: d and e must be 1-D, got shapes {d.shape} and "
                         f"{e.shape}")
    n = d.shape[0]
    if e.shape[0] != n - 1:
        raise ValueError(f"eigh_tridiagonal: e must have n - 1 = {n - 1} entries (d has {n}), "
                         f"got {e.shape[0]}")
    dtype = _jnp.result_type(d, e)
    if not _jnp.issubdtype(dtype, _jnp.floating):
        dtype = _jnp.result_type(dtype, 1.0)
    d = d.astype(dtype)
    e = e.astype(dtype)
    if select == "a":
        lo_i, hi_i = 0, n - 1
    elif select == "i":
        lo_i, hi_i = (int(v) for v in select_range)
        if not 0 <= lo_i <= hi_i < n:
            raise ValueError(f"eigh_tridiagonal: select_range {select_range} must satisfy "
                             f"0 <= lo <= hi < n = {n}")
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must be either 'a', 'v' or 'i'")
    if n == 1:
        return d[lo_i:hi_i + 1]
    finfo = _jnp.finfo(dtype)
    e2 = e * e
    # Gershgorin bounds hold every eigenvalue
    radius = _jnp.abs(_jnp.concatenate([e, _jnp.zeros(1, dtype)])) + _jnp.abs(
        _jnp.concatenate([_jnp.zeros(1, dtype), e]))
    lower = _jnp.min(d - radius)
    upper = _jnp.max(d + radius)
    span = _jnp.maximum(upper - lower, finfo.tiny)
    lower = lower - 2 * finfo.eps * span * n - finfo.tiny
    upper = upper + 2 * finfo.eps * span * n + finfo.tiny
    pivmin = finfo.tiny * _jnp.maximum(1.0, _jnp.max(e2))
    if tol is None:
        tol = 2 * finfo.eps * _jnp.maximum(_jnp.abs(lower), _jnp.abs(upper))

    def count_below(x):
        """How many eigenvalues are < x (the negative pivots of LDL^T of T - x I)."""
        def step(k, carry):
            q, count = carry
            q = d[k] - x - e2[k - 1] / q
            q = _jnp.where(_jnp.abs(q) < pivmin, -pivmin, q)
            return q, count + (q < 0).astype(_jnp.int32)
        q0 = d[0] - x
        q0 = _jnp.where(_jnp.abs(q0) < pivmin, -pivmin, q0)
        return _lax.fori_loop(1, n, step, (q0, (q0 < 0).astype(_jnp.int32)))[1]

    targets = _jnp.arange(lo_i, hi_i + 1, dtype=_jnp.int32)
    lo = _jnp.full(targets.shape, lower, dtype)
    hi = _jnp.full(targets.shape, upper, dtype)
    # each step halves every bracket: from the Gershgorin width to the default tol takes about
    # as many steps as the mantissa has bits; 4 x the width in bits also covers a smaller tol
    max_steps = 4 * int(finfo.bits)

    def cond(s):
        k, lo, hi = s
        return (k < max_steps) & _jnp.any(hi - lo > tol)

    def body(s):
        k, lo, hi = s
        mid = 0.5 * (lo + hi)
        below = count_below(mid)
        # the target-th eigenvalue (0-based) lies below mid iff more than target are below it
        go_left = below > targets
        return k + 1, _jnp.where(go_left, lo, mid), _jnp.where(go_left, mid, hi)

    _, lo, hi = _lax.while_loop(cond, body, (_jnp.asarray(0, _jnp.int32), lo, hi))
    return 0.5 * (lo + hi)
