"""jax.scipy.stats.bernoulli: P(k = 1) = p, P(k = 0) = 1 - p (shifted by loc)."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpmf(k, p, loc=0):
    """k log p + (1 - k) log(1 - p); -inf outside {loc, loc + 1}."""
    k, p, loc = _promote("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = _special.xlogy(x, p) + _special.xlog1py(1.0 - x, -p)
    return _jnp.where((x < 0) | (x > 1), _const(k, -_inf), log_probs)


def pmf(k, p, loc=0):
    return _jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """0 for k < 0, 1 - p for 0 <= k < 1, 1 for k >= 1; NaN for NaN or p outside [0, 1]."""
    k, p = _promote("bernoulli.cdf", k, p)
    invalid = _jnp.isnan(k) | _jnp.isnan(p) | (p < 0) | (p > 1)
    return _jnp.select([invalid, k < 0, k < 1], [_const(k, _nan), _jnp.zeros_like(k), 1.0 - p],
                       _jnp.ones_like(k))


def ppf(q, p):
    """The smallest k in {0, 1} with cdf(k) >= q; NaN for q or p outside [0, 1]."""
    q, p = _promote("bernoulli.ppf", q, p)
    invalid = _jnp.isnan(q) | _jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return _jnp.where(invalid, _const(q, _nan),
                      _jnp.where(q <= 1.0 - p, _jnp.zeros_like(q), _jnp.ones_like(q)))
