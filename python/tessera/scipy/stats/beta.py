"""jax.scipy.stats.beta: the beta distribution y^(a-1) (1-y)^(b-1) / B(a, b) on [0, 1].

The algorithms are C++ (tessera::scipy::stats::beta, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.beta


def logpdf(x, a, b, loc=0, scale=1):
    return _F.logpdf(*_check("beta.logpdf", x, a, b, loc, scale))


def pdf(x, a, b, loc=0, scale=1):
    return _F.pdf(*_check("beta.pdf", x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    return _F.cdf(*_check("beta.cdf", x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    return _F.logcdf(*_check("beta.logcdf", x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    return _F.sf(*_check("beta.sf", x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    return _F.logsf(*_check("beta.logsf", x, a, b, loc, scale))
