"""jax.scipy.stats.truncnorm: the normal distribution truncated to [a, b] (standardized bounds:
the support is [loc + a scale, loc + b scale]).

The normalizing mass Phi(b) - Phi(a) is computed in log space from whichever tail keeps its
precision: both bounds in the left half, both in the right half (by symmetry), or straddling 0
(log1p of minus the two tails)."""
from tessera import numpy as _jnp
from tessera.scipy import special as _special
from tessera.scipy.stats import norm as _norm
from tessera.scipy.stats._util import const as _const
from tessera.scipy.stats._util import inf as _inf
from tessera.scipy.stats._util import promote_args_inexact as _promote


def _log_diff(log_x, log_y):
    """log(x - y) from log x > log y."""
    return log_x + _jnp.log1p(-_jnp.exp(log_y - log_x))


def _log_gauss_mass(a, b):
    """log(Phi(b) - Phi(a)) for a <= b."""
    a, b = _jnp.broadcast_arrays(a, b)
    left = b <= 0
    right = a > 0
    middle = ~left & ~right
    # arguments kept inside each case's valid region so that the unused branches stay finite
    a_l = _jnp.where(left, a, -1.0)
    b_l = _jnp.where(left, b, 0.0)
    log_left = _log_diff(_special.log_ndtr(b_l), _special.log_ndtr(a_l))
    a_r = _jnp.where(right, a, 1.0)
    b_r = _jnp.where(right, b, _inf)
    log_right = _log_diff(_special.log_ndtr(-a_r), _special.log_ndtr(-b_r))
    a_m = _jnp.where(middle, a, -1.0)
    b_m = _jnp.where(middle, b, 1.0)
    log_middle = _jnp.log1p(-_special.ndtr(a_m) - _special.ndtr(-b_m))
    return _jnp.where(left, log_left, _jnp.where(right, log_right, log_middle))


def logpdf(x, a, b, loc=0, scale=1):
    """-inf outside [a, b] (in standardized units)."""
    x, a, b, loc, scale = _promote("truncnorm.logpdf", x, a, b, loc, scale)
    z = (x - loc) / scale
    val = _norm.logpdf(z) - _log_gauss_mass(a, b) - _jnp.log(scale)
    return _jnp.where((z < a) | (z > b), _const(val, -_inf), val)


def pdf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """log((Phi(z) - Phi(a)) / (Phi(b) - Phi(a))): 0 above b, -inf below a."""
    x, a, b, loc, scale = _promote("truncnorm.logcdf", x, a, b, loc, scale)
    z = (x - loc) / scale
    zc = _jnp.clip(z, a, b)
    val = _log_gauss_mass(a, zc) - _log_gauss_mass(a, b)
    val = _jnp.where(z >= b, _jnp.zeros_like(val), val)
    return _jnp.where(z <= a, _const(val, -_inf), val)


def cdf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """The mirror image: logcdf(-x) of the distribution truncated to [-b, -a]."""
    x, a, b, loc, scale = _promote("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logsf(x, a, b, loc, scale))
