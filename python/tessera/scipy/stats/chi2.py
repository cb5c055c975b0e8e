"""jax.scipy.stats.chi2: the chi-squared distribution, gamma(df / 2, scale = 2).

The algorithms are C++ (tessera::scipy::stats::chi2, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.chi2


def logpdf(x, df, loc=0, scale=1):
    return _F.logpdf(*_check("chi2.logpdf", x, df, loc, scale))


def pdf(x, df, loc=0, scale=1):
    return _F.pdf(*_check("chi2.pdf", x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    return _F.cdf(*_check("chi2.cdf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return _F.logcdf(*_check("chi2.logcdf", x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    return _F.sf(*_check("chi2.sf", x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return _F.logsf(*_check("chi2.logsf", x, df, loc, scale))
