"""jax.scipy.stats.chi2: the chi-squared distribution, gamma(df / 2, scale = 2)."""
import math as _math

from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    k = df / 2
    log_probs = (_special.xlogy(k - 1.0, y) - y / 2 - _special.gammaln(k) - k * _math.log(2.0)
                 - _jnp.log(scale))
    return _jnp.where(x < loc, _const(x, -_inf), log_probs)


def pdf(x, df, loc=0, scale=1):
    return _jnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote("chi2.cdf", x, df, loc, scale)
    return _special.gammainc(df / 2, _jnp.maximum((x - loc) / scale / 2, 0))


def logcdf(x, df, loc=0, scale=1):
    return _jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote("chi2.sf", x, df, loc, scale)
    return _special.gammaincc(df / 2, _jnp.maximum((x - loc) / scale / 2, 0))


def logsf(x, df, loc=0, scale=1):
    return _jnp.log(sf(x, df, loc, scale))
