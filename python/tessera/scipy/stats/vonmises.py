"""jax.scipy.stats.vonmises: the von Mises distribution exp(kappa cos x) / (2 pi I0(kappa))."""
import math as _math

from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, kappa):
    """kappa (cos x - 1) - log(2 pi i0e(kappa)), with i0e = e^-kappa I0 so that large kappa
    does not overflow; NaN for kappa <= 0."""
    x, kappa = _promote("vonmises.logpdf", x, kappa)
    out = kappa * (_jnp.cos(x) - 1) - _jnp.log(2 * _math.pi * _special.i0e(kappa))
    return _jnp.where(kappa > 0, out, _const(x, _nan))


def pdf(x, kappa):
    return _jnp.exp(logpdf(x, kappa))
