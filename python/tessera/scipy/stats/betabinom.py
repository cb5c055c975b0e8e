"""jax.scipy.stats.betabinom: the beta-binomial distribution, C(n, k) B(k + a, n - k + b) /
B(a, b) on k = loc, ..., loc + n."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpmf(k, n, a, b, loc=0):
    """-inf outside loc <= k <= loc + n; NaN for n < 0, a <= 0 or b <= 0."""
    k, n, a, b, loc = _promote("betabinom.logpmf", k, n, a, b, loc)
    y = k - loc
    log_choose = -_jnp.log1p(n) - _special.betaln(n - y + 1, y + 1)
    log_probs = log_choose + _special.betaln(y + a, n - y + b) - _special.betaln(a, b)
    log_probs = _jnp.where((y < 0) | (y > n), _const(k, -_inf), log_probs)
    return _jnp.where((n < 0) | (a <= 0) | (b <= 0), _const(k, _nan), log_probs)


def pmf(k, n, a, b, loc=0):
    return _jnp.exp(logpmf(k, n, a, b, loc))
