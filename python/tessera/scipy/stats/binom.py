"""jax.scipy.stats.binom: the binomial distribution C(n, k) p^k (1 - p)^(n - k)."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpmf(k, n, p, loc=0):
    """-inf outside loc <= k <= loc + n."""
    k, n, p, loc = _promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = _special.gammaln(n + 1) - _special.gammaln(y + 1) - _special.gammaln(n - y + 1)
    log_probs = comb + _special.xlogy(y, p) + _special.xlog1py(n - y, -p)
    return _jnp.where((y >= 0) & (y <= n), log_probs, _const(k, -_inf))


def pmf(k, n, p, loc=0):
    return _jnp.exp(logpmf(k, n, p, loc))
