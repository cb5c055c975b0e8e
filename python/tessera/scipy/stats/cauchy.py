"""jax.scipy.stats.cauchy: the Cauchy distribution 1 / (pi scale (1 + z^2)).

The algorithms are C++ (tessera::scipy::stats::cauchy, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.cauchy


def logpdf(x, loc=0, scale=1):
    return _F.logpdf(*_check("cauchy.logpdf", x, loc, scale))


def pdf(x, loc=0, scale=1):
    return _F.pdf(*_check("cauchy.pdf", x, loc, scale))


def cdf(x, loc=0, scale=1):
    return _F.cdf(*_check("cauchy.cdf", x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return _F.logcdf(*_check("cauchy.logcdf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return _F.sf(*_check("cauchy.sf", x, loc, scale))


def logsf(x, loc=0, scale=1):
    return _F.logsf(*_check("cauchy.logsf", x, loc, scale))


def ppf(q, loc=0, scale=1):
    return _F.ppf(*_check("cauchy.ppf", q, loc, scale))


def isf(q, loc=0, scale=1):
    return _F.isf(*_check("cauchy.isf", q, loc, scale))
