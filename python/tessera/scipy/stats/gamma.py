"""jax.scipy.stats.gamma: the gamma distribution with shape a, y^(a-1) e^-y / Gamma(a)."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote("gamma.logpdf", x, a, loc, scale)
    y = (x - loc) / scale
    log_probs = _special.xlogy(a - 1.0, y) - y - _special.gammaln(a) - _jnp.log(scale)
    return _jnp.where(x < loc, _const(x, -_inf), log_probs)


def pdf(x, a, loc=0, scale=1):
    return _jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote("gamma.cdf", x, a, loc, scale)
    return _special.gammainc(a, _jnp.maximum((x - loc) / scale, 0))


def logcdf(x, a, loc=0, scale=1):
    return _jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote("gamma.sf", x, a, loc, scale)
    return _special.gammaincc(a, _jnp.maximum((x - loc) / scale, 0))


def logsf(x, a, loc=0, scale=1):
    return _jnp.log(sf(x, a, loc, scale))
