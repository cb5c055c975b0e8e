"""jax.scipy.stats.logistic: the logistic distribution (cdf = expit((x - loc) / scale)).

The algorithms are C++ (tessera::scipy::stats::logistic, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.logistic


def logpdf(x, loc=0, scale=1):
    return _F.logpdf(*_check("logistic.logpdf", x, loc, scale))


def pdf(x, loc=0, scale=1):
    return _F.pdf(*_check("logistic.pdf", x, loc, scale))


def cdf(x, loc=0, scale=1):
    return _F.cdf(*_check("logistic.cdf", x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return _F.logcdf(*_check("logistic.logcdf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return _F.sf(*_check("logistic.sf", x, loc, scale))


def logsf(x, loc=0, scale=1):
    return _F.logsf(*_check("logistic.logsf", x, loc, scale))


def ppf(x, loc=0, scale=1):
    return _F.ppf(*_check("logistic.ppf", x, loc, scale))


def isf(x, loc=0, scale=1):
    return _F.isf(*_check("logistic.isf", x, loc, scale))
