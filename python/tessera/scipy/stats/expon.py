"""jax.scipy.stats.expon: the exponential distribution exp(-(x - loc) / scale) / scale.

The algorithms are C++ (tessera::scipy::stats::expon, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.expon


def logpdf(x, loc=0, scale=1):
    return _F.logpdf(*_check("expon.logpdf", x, loc, scale))


def pdf(x, loc=0, scale=1):
    return _F.pdf(*_check("expon.pdf", x, loc, scale))


def cdf(x, loc=0, scale=1):
    return _F.cdf(*_check("expon.cdf", x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return _F.logcdf(*_check("expon.logcdf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return _F.sf(*_check("expon.sf", x, loc, scale))


def logsf(x, loc=0, scale=1):
    return _F.logsf(*_check("expon.logsf", x, loc, scale))


def ppf(q, loc=0, scale=1):
    return _F.ppf(*_check("expon.ppf", q, loc, scale))
