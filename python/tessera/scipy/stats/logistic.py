"""jax.scipy.stats.logistic: the logistic distribution (cdf = expit((x - loc) / scale))."""
from tessera import nn as _nn
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, loc=0, scale=1):
    """-2 log(2 cosh(z / 2)) - log(scale), z = (x - loc) / scale."""
    x, loc, scale = _promote("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2
    return -2.0 * _jnp.logaddexp(half, -half) - _jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.cdf", x, loc, scale)
    return _special.expit((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.logcdf", x, loc, scale)
    return _nn.log_sigmoid((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.sf", x, loc, scale)
    return _special.expit((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.logsf", x, loc, scale)
    return _nn.log_sigmoid((loc - x) / scale)


def ppf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.ppf", x, loc, scale)
    return _special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.isf", x, loc, scale)
    return loc - _special.logit(x) * scale
