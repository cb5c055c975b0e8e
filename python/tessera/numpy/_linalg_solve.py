"""jax.numpy.linalg's solve family (solve, inv, det, slogdet, matrix_power, multi_dot,
tensorsolve, tensorinv, cholesky) over Tessera's C++ core (src/api/linalg_solve.cpp)."""
import collections as _collections
import operator as _operator

from tessera import _tessera

_S = _tessera.linalg_solve

__all__ = ["solve", "inv", "det", "slogdet", "matrix_power", "multi_dot", "tensorsolve",
           "tensorinv", "cholesky"]

SlogdetResult = _collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])


def solve(a, b):
    """Solves a @ x = b; b of rank 1 is one vector, otherwise b is [..., m, k]."""
    return _S.solve(a, b)


def inv(a):
    return _S.inv(a)


def det(a):
    return _S.det(a)


def slogdet(a, *, method=None):
    if method not in (None, "lu"):
        raise ValueError(f"Unrecognized slogdet method {method!r}; Tessera supports 'lu'")
    sign, logabsdet = _S.slogdet(a)
    return SlogdetResult(sign, logabsdet)


def matrix_power(a, n):
    return _S.matrix_power(a, _operator.index(n))


def multi_dot(arrays, *, precision=None):
    del precision
    return _S.multi_dot(list(arrays))


def tensorsolve(a, b, axes=None):
    if axes is not None:
        axes = [_operator.index(x) for x in axes]
    return _S.tensorsolve(a, b, axes)


def tensorinv(a, ind=2):
    return _S.tensorinv(a, _operator.index(ind))


def cholesky(a, *, upper=False, symmetrize_input=True):
    if not symmetrize_input:
        raise NotImplementedError("jnp.linalg.cholesky: symmetrize_input=False is not supported "
                                  "here; use tessera.lax.linalg.cholesky(x, "
                                  "symmetrize_input=False)")
    return _S.jnp_cholesky(a, bool(upper))
