"""jax.scipy.stats.poisson: the Poisson distribution mu^k e^-mu / k! on k = loc, loc + 1, ...

The algorithms are C++ (tessera::scipy::stats::poisson, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.poisson


def logpmf(k, mu, loc=0):
    return _F.logpmf(*_check("poisson.logpmf", k, mu, loc))


def pmf(k, mu, loc=0):
    return _F.pmf(*_check("poisson.pmf", k, mu, loc))


def cdf(k, mu, loc=0):
    return _F.cdf(*_check("poisson.cdf", k, mu, loc))


def entropy(mu, loc=0):
    """The Shannon entropy (JAX's regimes: sums of the mass for mu < 100, Stirling's
    asymptotic form above); loc does not change it."""
    return _F.entropy(*_check("poisson.entropy", mu, loc))
