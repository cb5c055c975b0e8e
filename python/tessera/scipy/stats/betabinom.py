"""jax.scipy.stats.betabinom: the beta-binomial distribution, C(n, k) B(k + a, n - k + b) /
B(a, b) on k = loc, ..., loc + n.

The algorithms are C++ (tessera::scipy::stats::betabinom, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.betabinom


def logpmf(k, n, a, b, loc=0):
    return _F.logpmf(*_check("betabinom.logpmf", k, n, a, b, loc))


def pmf(k, n, a, b, loc=0):
    return _F.pmf(*_check("betabinom.pmf", k, n, a, b, loc))
