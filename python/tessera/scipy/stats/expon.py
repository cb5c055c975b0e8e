"""jax.scipy.stats.expon: the exponential distribution exp(-(x - loc) / scale) / scale."""
from tessera import numpy as _jnp
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.logpdf", x, loc, scale)
    y = (x - loc) / scale
    return _jnp.where(x < loc, _const(x, -_inf), -y - _jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.cdf", x, loc, scale)
    y = (x - loc) / scale
    return _jnp.where(x < loc, _jnp.zeros_like(y), -_jnp.expm1(-y))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.logcdf", x, loc, scale)
    y = (x - loc) / scale
    return _jnp.where(x < loc, _const(y, -_inf), _jnp.log(-_jnp.expm1(-y)))


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.sf", x, loc, scale)
    y = (x - loc) / scale
    return _jnp.where(x < loc, _jnp.ones_like(y), _jnp.exp(-y))


def logsf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.logsf", x, loc, scale)
    y = (x - loc) / scale
    return _jnp.where(x < loc, _jnp.zeros_like(y), -y)


def ppf(q, loc=0, scale=1):
    """loc - scale * log1p(-q) for q in [0, 1], NaN otherwise."""
    q, loc, scale = _promote("expon.ppf", q, loc, scale)
    return _jnp.where((q < 0) | (q > 1), _const(q, _nan), loc - scale * _jnp.log1p(-q))
