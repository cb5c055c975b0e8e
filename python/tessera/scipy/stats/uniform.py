"""jax.scipy.stats.uniform: the uniform distribution on [loc, loc + scale]."""
from tessera import numpy as _jnp
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, loc=0, scale=1):
    """-log(scale) on [loc, loc + scale], -inf outside."""
    x, loc, scale = _promote("uniform.logpdf", x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return _jnp.where(outside, _const(x, -_inf), -_jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """0 below loc, 1 above loc + scale, (x - loc) / scale between (NaN for NaN x)."""
    x, loc, scale = _promote("uniform.cdf", x, loc, scale)
    return _jnp.select([x < loc, x > loc + scale, (x >= loc) & (x <= loc + scale)],
                       [_jnp.zeros_like(x), _jnp.ones_like(x), (x - loc) / scale],
                       _const(x, _nan))


def ppf(q, loc=0, scale=1):
    """loc + scale * q for q in [0, 1], NaN otherwise."""
    q, loc, scale = _promote("uniform.ppf", q, loc, scale)
    return _jnp.where(_jnp.isnan(q) | (q < 0) | (q > 1), _const(q, _nan), loc + scale * q)
