"""jax.scipy.stats.beta: the beta distribution y^(a-1) (1-y)^(b-1) / B(a, b) on [0, 1]."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, a, b, loc=0, scale=1):
    """-inf outside [loc, loc + scale]; NaN where a, b or scale is not positive."""
    x, a, b, loc, scale = _promote("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = (_special.xlogy(a - 1.0, y) + _special.xlog1py(b - 1.0, -y)
                 - _special.betaln(a, b) - _jnp.log(scale))
    out = _jnp.where((x > loc + scale) | (x < loc), _const(x, -_inf), log_probs)
    return _jnp.where((a <= 0) | (b <= 0) | (scale <= 0), _const(x, _nan), out)


def pdf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("beta.cdf", x, a, b, loc, scale)
    return _special.betainc(a, b, _jnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    return _jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("beta.sf", x, a, b, loc, scale)
    return _special.betainc(b, a, 1.0 - _jnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    return _jnp.log(sf(x, a, b, loc, scale))
