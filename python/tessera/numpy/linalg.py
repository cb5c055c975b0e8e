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


# ---- the array API's linalg names (JAX's jnp.linalg has them) ----

def _jnp():
    import tessera.numpy as jnp
    return jnp


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    x = _jnp().asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got {x.ndim=}")
    return _jnp().swapaxes(x, -1, -2)


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices in the last two axes."""
    return _jnp().diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the matrices in the last two axes."""
    return _jnp().trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def outer(x1, x2, /):
    """The outer product of two 1-D arrays."""
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are {x1.ndim=} "
                         f"{x2.ndim=}")
    return jnp.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along `axis` (both inputs of size 3 there)."""
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have {x1.shape=} and {x2.shape=}")
    return jnp.cross(x1, x2, axis=axis)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot products of the vectors along `axis` (broadcast over the other axes)."""
    return _jnp().vecdot(x1, x2, axis=axis, precision=precision,
                         preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    jnp = _jnp()
    out = jnp.matmul(x1, x2)
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    return _jnp().tensordot(x1, x2, axes=axes, precision=precision,
                            preferred_element_type=preferred_element_type)
