"""jax.scipy.stats.gumbel_l: the left-skewed Gumbel distribution, sf exp(-exp(z)) with
z = (x - loc) / scale."""
from tessera import numpy as _jnp
from tessera.scipy.stats._util import promote_args_inexact as _promote


def _z(name, x, loc, scale):
    x, loc, scale = _promote(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _z("gumbel_l.logpdf", x, loc, scale)
    return z - _jnp.exp(z) - _jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """log(1 - exp(-exp(z))) through expm1."""
    z, _ = _z("gumbel_l.logcdf", x, loc, scale)
    return _jnp.log(-_jnp.expm1(-_jnp.exp(z)))


def cdf(x, loc=0, scale=1):
    z, _ = _z("gumbel_l.cdf", x, loc, scale)
    return -_jnp.expm1(-_jnp.exp(z))


def logsf(x, loc=0, scale=1):
    z, _ = _z("gumbel_l.logsf", x, loc, scale)
    return -_jnp.exp(z)


def sf(x, loc=0, scale=1):
    return _jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """loc + scale log(-log(1 - p)); NaN outside [0, 1]."""
    p, loc, scale = _promote("gumbel_l.ppf", p, loc, scale)
    out = loc + scale * _jnp.log(-_jnp.log1p(-p))
    return _jnp.where((p < 0) | (p > 1), _jnp.full_like(out, _jnp.nan), out)
