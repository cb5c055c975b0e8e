"""jax.scipy.stats.binom: the binomial distribution C(n, k) p^k (1 - p)^(n - k).

The algorithms are C++ (tessera::scipy::stats::binom, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.binom


def logpmf(k, n, p, loc=0):
    return _F.logpmf(*_check("binom.logpmf", k, n, p, loc))


def pmf(k, n, p, loc=0):
    return _F.pmf(*_check("binom.pmf", k, n, p, loc))
