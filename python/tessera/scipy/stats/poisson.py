"""jax.scipy.stats.poisson: the Poisson distribution mu^k e^-mu / k! on k = loc, loc + 1, ..."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpmf(k, mu, loc=0):
    """-inf below loc and at non-integer k."""
    k, mu, loc = _promote("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = _special.xlogy(x, mu) - _special.gammaln(x + 1) - mu
    return _jnp.where((x < 0) | (_jnp.round(k) != k), _const(k, -_inf), log_probs)


def pmf(k, mu, loc=0):
    return _jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """gammaincc(floor(k - loc) + 1, mu); 0 below loc."""
    k, mu, loc = _promote("poisson.cdf", k, mu, loc)
    x = k - loc
    p = _special.gammaincc(_jnp.floor(1 + x), mu)
    return _jnp.where(x < 0, _jnp.zeros_like(p), p)
