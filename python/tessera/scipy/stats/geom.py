"""jax.scipy.stats.geom: the geometric distribution (1 - p)^(k - 1) p on k = loc + 1, ...

The algorithms are C++ (tessera::scipy::stats::geom, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.geom


def logpmf(k, p, loc=0):
    return _F.logpmf(*_check("geom.logpmf", k, p, loc))


def pmf(k, p, loc=0):
    return _F.pmf(*_check("geom.pmf", k, p, loc))
