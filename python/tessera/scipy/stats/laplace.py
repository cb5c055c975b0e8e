"""jax.scipy.stats.laplace: the Laplace distribution exp(-|x - loc| / scale) / (2 scale).

The algorithms are C++ (tessera::scipy::stats::laplace, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.laplace


def logpdf(x, loc=0, scale=1):
    return _F.logpdf(*_check("laplace.logpdf", x, loc, scale))


def pdf(x, loc=0, scale=1):
    return _F.pdf(*_check("laplace.pdf", x, loc, scale))


def cdf(x, loc=0, scale=1):
    return _F.cdf(*_check("laplace.cdf", x, loc, scale))
