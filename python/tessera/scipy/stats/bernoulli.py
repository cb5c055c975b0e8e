"""jax.scipy.stats.bernoulli: P(k = 1) = p, P(k = 0) = 1 - p (shifted by loc).

The algorithms are C++ (tessera::scipy::stats::bernoulli, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.bernoulli


def logpmf(k, p, loc=0):
    return _F.logpmf(*_check("bernoulli.logpmf", k, p, loc))


def pmf(k, p, loc=0):
    return _F.pmf(*_check("bernoulli.pmf", k, p, loc))


def cdf(k, p):
    return _F.cdf(*_check("bernoulli.cdf", k, p))


def ppf(q, p):
    return _F.ppf(*_check("bernoulli.ppf", q, p))
