"""jax.scipy.stats.truncnorm: the normal distribution truncated to [a, b] (standardized bounds: the support is
[loc + a scale, loc + b scale]).

The algorithms are C++ (tessera::scipy::stats::truncnorm, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.truncnorm


def logpdf(x, a, b, loc=0, scale=1):
    return _F.logpdf(*_check("truncnorm.logpdf", x, a, b, loc, scale))


def pdf(x, a, b, loc=0, scale=1):
    return _F.pdf(*_check("truncnorm.pdf", x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    return _F.logcdf(*_check("truncnorm.logcdf", x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    return _F.cdf(*_check("truncnorm.cdf", x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    return _F.logsf(*_check("truncnorm.logsf", x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    return _F.sf(*_check("truncnorm.sf", x, a, b, loc, scale))
