"""jax.scipy.stats.dirichlet: the Dirichlet distribution on the simplex, with density
prod x_i^(alpha_i - 1) / B(alpha). x's first axis holds the K components (or K - 1, the last
being 1 - sum); further axes are a batch."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def _on_simplex(x):
    return _jnp.all(x > 0, axis=0) & (_jnp.abs(_jnp.sum(x, axis=0) - 1) < 1e-6)


def logpdf(x, alpha):
    """-inf off the simplex (a component <= 0, or components not summing to 1 within 1e-6)."""
    x, alpha = _promote("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.ndim == 0 or x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = _jnp.concatenate([x, (1 - _jnp.sum(x, axis=0))[None]], axis=0)
    log_norm = _jnp.sum(_special.gammaln(alpha)) - _special.gammaln(_jnp.sum(alpha))
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    log_probs = _jnp.sum(_special.xlogy(a - 1, x), axis=0) - log_norm
    return _jnp.where(_on_simplex(x), log_probs, _const(x, -_inf))


def pdf(x, alpha):
    return _jnp.exp(logpdf(x, alpha))
