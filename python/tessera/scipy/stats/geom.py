"""jax.scipy.stats.geom: the geometric distribution (1 - p)^(k - 1) p on k = loc + 1, ..."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpmf(k, p, loc=0):
    """-inf for k - loc <= 0."""
    k, p, loc = _promote("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = _special.xlog1py(x - 1, -p) + _jnp.log(p)
    return _jnp.where(x <= 0, _const(k, -_inf), log_probs)


def pmf(k, p, loc=0):
    return _jnp.exp(logpmf(k, p, loc))
