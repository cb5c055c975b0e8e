"""jax.scipy.stats.gennorm: the generalized normal distribution with shape beta,
beta / (2 Gamma(1 / beta)) exp(-|x|^beta)."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, beta):
    x, beta = _promote("gennorm.logpdf", x, beta)
    return _jnp.log(0.5 * beta) - _special.gammaln(1 / beta) - _jnp.abs(x) ** beta


def pdf(x, beta):
    return _jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """(1 + sign(x) P(1 / beta, |x|^beta)) / 2, P the regularized lower incomplete gamma."""
    x, beta = _promote("gennorm.cdf", x, beta)
    return 0.5 * (1 + _jnp.sign(x) * _special.gammainc(1 / beta, _jnp.abs(x) ** beta))
