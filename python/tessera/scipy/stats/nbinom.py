"""jax.scipy.stats.nbinom: the negative binomial distribution
C(k + n - 1, k) p^n (1 - p)^k on k = loc, loc + 1, ...

The algorithms are C++ (tessera::scipy::stats::nbinom, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.nbinom


def logpmf(k, n, p, loc=0):
    return _F.logpmf(*_check("nbinom.logpmf", k, n, p, loc))


def pmf(k, n, p, loc=0):
    return _F.pmf(*_check("nbinom.pmf", k, n, p, loc))
