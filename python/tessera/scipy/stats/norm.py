"""jax.scipy.stats.norm: the normal distribution with mean loc and standard deviation scale.

The algorithms are C++ (tessera::scipy::stats::norm, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.norm


def logpdf(x, loc=0, scale=1):
    return _F.logpdf(*_check("norm.logpdf", x, loc, scale))


def pdf(x, loc=0, scale=1):
    return _F.pdf(*_check("norm.pdf", x, loc, scale))


def cdf(x, loc=0, scale=1):
    return _F.cdf(*_check("norm.cdf", x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return _F.logcdf(*_check("norm.logcdf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return _F.sf(*_check("norm.sf", x, loc, scale))


def logsf(x, loc=0, scale=1):
    return _F.logsf(*_check("norm.logsf", x, loc, scale))


def ppf(q, loc=0, scale=1):
    return _F.ppf(*_check("norm.ppf", q, loc, scale))


def isf(q, loc=0, scale=1):
    return _F.isf(*_check("norm.isf", q, loc, scale))
