"""tessera.lax.linalg: jax.lax.linalg's triangular_solve, cholesky, lu and
lu_pivots_to_permutation, and eigh, svd, qr, geqrf, geqp3, householder_product and symmetrize
(tessera/lax/_linalg_spectral.py),
over Tessera's primitives (src/prims/linalg_*.cpp)."""
import operator as _operator

from tessera import _tessera
from tessera.lax._linalg_spectral import (eigh, geqp3, geqrf, householder_product, qr,  # noqa: F401
                                          svd, symmetrize)

_S = _tessera.linalg_solve

__all__ = ["triangular_solve", "cholesky", "lu", "lu_pivots_to_permutation", "eigh", "qr", "svd",
           "symmetrize", "geqrf", "geqp3", "householder_product"]


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Solves op(a) @ x = b (left_side) or x @ op(a) = b for triangular a [..., m, m]; b is
    [..., m, n] (left) or [..., n, m] with a's batch dims, or one rank less (a vector)."""
    return _S.triangular_solve(a, b, bool(left_side), bool(lower), bool(transpose_a),
                               bool(conjugate_a), bool(unit_diagonal))


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor; all NaN for a matrix that is not positive definite."""
    return _S.cholesky(x, bool(symmetrize_input))


def lu(x):
    """(lu, pivots, permutation): LU decomposition with partial pivoting."""
    return tuple(_S.lu(x))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The int32 permutation [..., permutation_size] the row swaps `pivots` produce."""
    return _S.lu_pivots_to_permutation(pivots, _operator.index(permutation_size))
