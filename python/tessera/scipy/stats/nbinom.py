"""jax.scipy.stats.nbinom: the negative binomial distribution
C(k + n - 1, k) p^n (1 - p)^k on k = loc, loc + 1, ..."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpmf(k, n, p, loc=0):
    """-inf for k < loc."""
    k, n, p, loc = _promote("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    log_choose = _special.gammaln(y + n) - _special.gammaln(n) - _special.gammaln(y + 1)
    log_probs = log_choose + _special.xlogy(n, p) + _special.xlog1py(y, -p)
    return _jnp.where(y < 0, _const(k, -_inf), log_probs)


def pmf(k, n, p, loc=0):
    return _jnp.exp(logpmf(k, n, p, loc))
