"""jax.scipy.cluster.vq.vq: vector quantization, each observation's nearest code."""
from tessera import numpy as _jnp
from tessera.scipy.special import _promote_args_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """(code, dist): for every row of obs (M, N) the index of the nearest row of code_book
    (K, N) in Euclidean distance (the first on ties) and that distance. 1-D obs and code_book
    are M and K scalars."""
    del check_finite
    obs, code_book = _promote_args_inexact("vq", obs, code_book)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: obs has {obs.shape[1]} features but code_book has "
                         f"{code_book.shape[1]}; they must match")
    dist = _jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = _jnp.argmin(dist, axis=-1)
    return code, _jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
