"""jax.scipy.stats.t: Student's t distribution with df degrees of freedom (logpdf, pdf)."""
import math as _math

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera.scipy.stats._util import promote_args_inexact as _promote


def logpdf(x, df, loc=0, scale=1):
    """lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale^2)/2 - (df+1)/2 log1p(z^2 / df)."""
    x, df, loc, scale = _promote("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    half_df1 = half_df + 0.5
    normalizer = (_lax.lgamma(half_df) - _lax.lgamma(half_df1)
                  + 0.5 * _jnp.log(scale * scale * _math.pi * df))
    return -(normalizer + half_df1 * _jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    return _jnp.exp(logpdf(x, df, loc, scale))
