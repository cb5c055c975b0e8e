"""jax.scipy.stats.multivariate_normal: the normal distribution of vectors with a mean and a
covariance matrix (logpdf and pdf, as JAX's; allow_singular is not supported, as in JAX)."""
import math as _math

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera.scipy.stats._util import promote_args_inexact as _promote

_LOG_2PI = _math.log(2 * _math.pi)


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov). A scalar mean is a univariate normal with variance cov; a scalar
    cov with a vector mean is cov times the identity; otherwise cov is factored
    (lax.linalg.cholesky) and x - mean solved against the factor."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = _promote("multivariate_normal.logpdf", x, mean, cov)
    if not mean.shape:
        d = x - mean
        return -0.5 * d * d / cov - 0.5 * (_LOG_2PI + _jnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return (-0.5 * _jnp.einsum("...i,...i->...", y, y) / cov
                - 0.5 * n * (_LOG_2PI + _jnp.log(cov)))
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = _lax.linalg.cholesky(cov)
    d = x - mean
    batch = _jnp.broadcast_shapes(factor.shape[:-2], d.shape[:-1])
    factor = _jnp.broadcast_to(factor, batch + (n, n))
    d = _jnp.broadcast_to(d, batch + (n,))
    y = _lax.linalg.triangular_solve(factor, d[..., None], left_side=True, lower=True)[..., 0]
    return (-0.5 * _jnp.einsum("...i,...i->...", y, y) - 0.5 * n * _LOG_2PI
            - _jnp.sum(_jnp.log(_jnp.diagonal(factor, 0, -2, -1)), axis=-1))


def pdf(x, mean, cov):
    return _jnp.exp(logpdf(x, mean, cov))
