"""jax.scipy.stats.cauchy: the Cauchy distribution 1 / (pi scale (1 + z^2))."""
import math as _math

from tessera import numpy as _jnp
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -_math.log(_math.pi) - _jnp.log(scale) - _jnp.log1p(z * z)


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("cauchy.cdf", x, loc, scale)
    return 0.5 + _jnp.arctan((x - loc) / scale) / _math.pi


def logcdf(x, loc=0, scale=1):
    return _jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote("cauchy.sf", x, loc, scale)
    return 0.5 + _jnp.arctan((loc - x) / scale) / _math.pi


def logsf(x, loc=0, scale=1):
    return _jnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote("cauchy.ppf", q, loc, scale)
    return loc + scale * _jnp.tan(_math.pi * (q - 0.5))


def isf(q, loc=0, scale=1):
    q, loc, scale = _promote("cauchy.isf", q, loc, scale)
    return loc + scale * _jnp.tan(_math.pi * (0.5 - q))
