"""tessera.numpy.linalg: jax.numpy.linalg's norms and decompositions."""
import operator as _operator

from tessera import _tessera
from tessera.numpy._linalg_solve import (  # noqa: F401
    cholesky, det, inv, matrix_power, multi_dot, slogdet, solve, tensorinv, tensorsolve)
from tessera.numpy._linalg_spectral import (  # noqa: F401
    EighResult, QRResult, SVDResult, cond, eig, eigh, eigvals, eigvalsh, lstsq, matrix_rank, pinv,
    qr, svd, svdvals)

_C = _tessera.numpy


def _axis(axis):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_operator.index(a) for a in axis)
    return _operator.index(axis)


def _ord(ord):
    if ord is None or isinstance(ord, str):
        return ord
    return float(ord)


def norm(x, ord=None, axis=None, keepdims=False):
    """jnp.linalg.norm: vector norms over one axis, matrix norms over two (ord 2, -2 and 'nuc'
    from the singular values)."""
    return _C.norm(x, _ord(ord), _axis(axis), bool(keepdims))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    return _C.vector_norm(x, _ord(ord), _axis(axis), bool(keepdims))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return _C.norm(x, _ord(ord), (-2, -1), bool(keepdims))
