"""jax.scipy.stats.uniform: the uniform distribution on [loc, loc + scale].

The algorithms are C++ (tessera::scipy::stats::uniform, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.uniform


def logpdf(x, loc=0, scale=1):
    return _F.logpdf(*_check("uniform.logpdf", x, loc, scale))


def pdf(x, loc=0, scale=1):
    return _F.pdf(*_check("uniform.pdf", x, loc, scale))


def cdf(x, loc=0, scale=1):
    return _F.cdf(*_check("uniform.cdf", x, loc, scale))


def ppf(q, loc=0, scale=1):
    return _F.ppf(*_check("uniform.ppf", q, loc, scale))
