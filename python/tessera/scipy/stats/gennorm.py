"""jax.scipy.stats.gennorm: the generalized normal distribution with shape beta,
beta / (2 Gamma(1 / beta)) exp(-|x|^beta).

The algorithms are C++ (tessera::scipy::stats::gennorm, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.gennorm


def logpdf(x, beta):
    return _F.logpdf(*_check("gennorm.logpdf", x, beta))


def pdf(x, beta):
    return _F.pdf(*_check("gennorm.pdf", x, beta))


def cdf(x, beta):
    return _F.cdf(*_check("gennorm.cdf", x, beta))
