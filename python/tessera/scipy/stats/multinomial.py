"""jax.scipy.stats.multinomial: n! prod p_i^x_i / x_i! over count vectors x (last axis) with
sum x = n."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpmf(x, n, p):
    """x and n must be integers (as JAX); -inf where the counts do not sum to n."""
    p, = _promote("multinomial.logpmf", p)
    x = _jnp.asarray(x)
    n = _jnp.asarray(n)
    if not (_jnp.issubdtype(x.dtype, _jnp.integer) and _jnp.issubdtype(n.dtype, _jnp.integer)):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    xf = x.astype(p.dtype)
    nf = n.astype(p.dtype)
    log_probs = _special.gammaln(nf + 1) + _jnp.sum(_special.xlogy(xf, p)
                                                    - _special.gammaln(xf + 1), axis=-1)
    return _jnp.where(_jnp.sum(x, axis=-1) == n, log_probs, _const(log_probs, -_inf))


def pmf(x, n, p):
    return _jnp.exp(logpmf(x, n, p))
