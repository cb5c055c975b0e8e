"""jax.scipy.stats.wrapcauchy: the wrapped Cauchy distribution
(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)) on [0, 2 pi]."""
import math as _math

from tessera import numpy as _jnp
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import nan as _nan
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, c):
    """-inf outside [0, 2 pi]; NaN unless 0 < c < 1."""
    x, c = _promote("wrapcauchy.logpdf", x, c)
    out = (_jnp.log1p(-c * c) - _math.log(2 * _math.pi)
           - _jnp.log(1 + c * c - 2 * c * _jnp.cos(x)))
    out = _jnp.where((x >= 0) & (x <= 2 * _math.pi), out, _const(x, -_inf))
    return _jnp.where((c > 0) & (c < 1), out, _const(x, _nan))


def pdf(x, c):
    return _jnp.exp(logpdf(x, c))
