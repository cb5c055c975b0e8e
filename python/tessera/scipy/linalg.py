"""tessera.scipy.linalg: jax.scipy.linalg's cholesky, cho_factor, cho_solve, lu, lu_factor,
lu_solve, solve_triangular, solve, inv and det over Tessera's C++ core
(src/api/linalg_solve.cpp), and eigh, svd, qr and expm (tessera/scipy/_linalg_spectral.py);
block_diag, toeplitz, hilbert, polar, expm_frechet and eigh_tridiagonal composed from
jax.numpy and lax (tessera/scipy/_linalg_extra.py)."""
from tessera import _tessera
from tessera.scipy._linalg_extra import (  # noqa: F401
    block_diag, eigh_tridiagonal, expm_frechet, funm, hessenberg, hilbert, polar, rsf2csf, schur,
    sqrtm, toeplitz)
from tessera.scipy._linalg_spectral import eigh, expm, qr, svd  # noqa: F401

_S = _tessera.linalg_solve

__all__ = ["cholesky", "cho_factor", "cho_solve", "lu", "lu_factor", "lu_solve",
           "solve_triangular", "solve", "inv", "det", "eigh", "expm", "qr", "svd",
           "block_diag", "eigh_tridiagonal", "expm_frechet", "funm", "hessenberg", "hilbert",
           "polar", "rsf2csf", "schur", "sqrtm", "toeplitz"]


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _S.scipy_cholesky(a, bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return (_S.scipy_cholesky(a, bool(lower)), bool(lower))


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _S.cho_solve(c, bool(lower), b)


def lu_factor(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    lu_, piv = _S.lu_factor(a)
    return lu_, piv


def _trans(trans):
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}
    if isinstance(trans, bool) or trans not in codes:
        raise ValueError(f"Invalid 'trans' value {trans}")
    return codes[trans]


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    del overwrite_b, check_finite
    lu_, piv = lu_and_piv
    return _S.lu_solve(lu_, piv, b, _trans(trans))


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return tuple(_S.scipy_lu(a, bool(permute_l)))


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    del overwrite_b, debug, check_finite
    return _S.solve_triangular(a, b, _trans(trans), bool(lower), bool(unit_diagonal))


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    del overwrite_a, overwrite_b, debug, check_finite
    return _S.scipy_solve(a, b, bool(lower), str(assume_a))


def inv(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _S.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return _S.det(a)
