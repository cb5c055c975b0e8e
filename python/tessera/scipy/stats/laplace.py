"""jax.scipy.stats.laplace: the Laplace distribution exp(-|x - loc| / scale) / (2 scale)."""
import math as _math

from tessera import numpy as _jnp
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("laplace.logpdf", x, loc, scale)
    return -_math.log(2.0) - _jnp.log(scale) - _jnp.abs(x - loc) / scale


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """exp(z) / 2 below loc, 1 - exp(-z) / 2 above (z = (x - loc) / scale)."""
    x, loc, scale = _promote("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    return _jnp.where(z < 0, 0.5 * _jnp.exp(z), 1.0 - 0.5 * _jnp.exp(-z))
