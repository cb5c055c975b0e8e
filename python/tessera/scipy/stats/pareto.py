"""jax.scipy.stats.pareto: the Pareto distribution b / y^(b + 1) on y = (x - loc) / scale >= 1."""
from tessera import numpy as _jnp
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, b, loc=0, scale=1):
    """-inf below loc + scale."""
    x, b, loc, scale = _promote("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    log_probs = _jnp.log(b) - (b + 1) * _jnp.log(y) - _jnp.log(scale)
    return _jnp.where(y < 1, _const(x, -_inf), log_probs)


def pdf(x, b, loc=0, scale=1):
    return _jnp.exp(logpdf(x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    """-b log y above the support's start, 0 below it."""
    x, b, loc, scale = _promote("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    return _jnp.where(y < 1, _jnp.zeros_like(y), -b * _jnp.log(y))


def sf(x, b, loc=0, scale=1):
    return _jnp.exp(logsf(x, b, loc, scale))


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote("pareto.logcdf", x, b, loc, scale)
    y = (x - loc) / scale
    out = _jnp.log(-_jnp.expm1(-b * _jnp.log(_jnp.maximum(y, 1))))
    return _jnp.where(y < 1, _const(x, -_inf), out)


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote("pareto.cdf", x, b, loc, scale)
    y = (x - loc) / scale
    return _jnp.where(y < 1, _jnp.zeros_like(y),
                      -_jnp.expm1(-b * _jnp.log(_jnp.maximum(y, 1))))


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1 / b); NaN outside [0, 1]."""
    q, b, loc, scale = _promote("pareto.ppf", q, b, loc, scale)
    out = loc + scale * _jnp.exp(-_jnp.log1p(-q) / b)
    return _jnp.where((q < 0) | (q > 1), _const(q, _nan), out)
