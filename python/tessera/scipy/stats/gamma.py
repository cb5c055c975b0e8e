"""jax.scipy.stats.gamma: the gamma distribution with shape a, y^(a-1) e^-y / Gamma(a).

The algorithms are C++ (tessera::scipy::stats::gamma, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.gamma


def logpdf(x, a, loc=0, scale=1):
    return _F.logpdf(*_check("gamma.logpdf", x, a, loc, scale))


def pdf(x, a, loc=0, scale=1):
    return _F.pdf(*_check("gamma.pdf", x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    return _F.cdf(*_check("gamma.cdf", x, a, loc, scale))


def logcdf(x, a, loc=0, scale=1):
    return _F.logcdf(*_check("gamma.logcdf", x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    return _F.sf(*_check("gamma.sf", x, a, loc, scale))


def logsf(x, a, loc=0, scale=1):
    return _F.logsf(*_check("gamma.logsf", x, a, loc, scale))
