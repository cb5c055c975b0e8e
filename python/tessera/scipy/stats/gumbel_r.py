"""jax.scipy.stats.gumbel_r: the right-skewed Gumbel distribution, cdf exp(-exp(-z)) with z = (x - loc) / scale.

The algorithms are C++ (tessera::scipy::stats::gumbel_r, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.gumbel_r


def logpdf(x, loc=0, scale=1):
    return _F.logpdf(*_check("gumbel_r.logpdf", x, loc, scale))


def pdf(x, loc=0, scale=1):
    return _F.pdf(*_check("gumbel_r.pdf", x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return _F.logcdf(*_check("gumbel_r.logcdf", x, loc, scale))


def cdf(x, loc=0, scale=1):
    return _F.cdf(*_check("gumbel_r.cdf", x, loc, scale))


def logsf(x, loc=0, scale=1):
    return _F.logsf(*_check("gumbel_r.logsf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return _F.sf(*_check("gumbel_r.sf", x, loc, scale))


def ppf(p, loc=0, scale=1):
    return _F.ppf(*_check("gumbel_r.ppf", p, loc, scale))
