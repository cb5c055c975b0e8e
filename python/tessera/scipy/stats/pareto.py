"""jax.scipy.stats.pareto: the Pareto distribution b / y^(b + 1) on y = (x - loc) / scale >= 1.

The algorithms are C++ (tessera::scipy::stats::pareto, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.pareto


def logpdf(x, b, loc=0, scale=1):
    return _F.logpdf(*_check("pareto.logpdf", x, b, loc, scale))


def pdf(x, b, loc=0, scale=1):
    return _F.pdf(*_check("pareto.pdf", x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    return _F.logsf(*_check("pareto.logsf", x, b, loc, scale))


def sf(x, b, loc=0, scale=1):
    return _F.sf(*_check("pareto.sf", x, b, loc, scale))


def logcdf(x, b, loc=0, scale=1):
    return _F.logcdf(*_check("pareto.logcdf", x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    return _F.cdf(*_check("pareto.cdf", x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    return _F.ppf(*_check("pareto.ppf", q, b, loc, scale))
