"""jax.scipy.stats.multinomial: n! prod p_i^x_i / x_i! over count vectors x (last axis) with
sum x = n (x and n must be integers).

The algorithms are C++ (tessera::scipy::stats::multinomial, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.multinomial


def logpmf(x, n, p):
    return _F.logpmf(*_check("multinomial.logpmf", x, n, p))


def pmf(x, n, p):
    return _F.pmf(*_check("multinomial.pmf", x, n, p))
