"""jax.scipy.stats.norm: the normal distribution with mean loc and standard deviation scale."""
import math as _math

from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import promote_args_inexact as _promote

_LOG_2PI = _math.log(2 * _math.pi)


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * (z * z + _LOG_2PI) - _jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.cdf", x, loc, scale)
    return _special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.logcdf", x, loc, scale)
    return _special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """1 - cdf, computed as cdf(-x) so that the upper tail keeps its precision."""
    x, loc, scale = _promote("norm.sf", x, loc, scale)
    return _special.ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.logsf", x, loc, scale)
    return _special.log_ndtr((loc - x) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote("norm.ppf", q, loc, scale)
    return _special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse of sf: loc - scale * ndtri(q) (no 1 - q rounding)."""
    q, loc, scale = _promote("norm.isf", q, loc, scale)
    return loc - _special.ndtri(q) * scale
