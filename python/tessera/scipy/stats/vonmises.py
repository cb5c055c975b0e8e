"""jax.scipy.stats.vonmises: the von Mises distribution exp(kappa cos x) / (2 pi I0(kappa)).

The algorithms are C++ (tessera::scipy::stats::vonmises, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.vonmises


def logpdf(x, kappa):
    return _F.logpdf(*_check("vonmises.logpdf", x, kappa))


def pdf(x, kappa):
    return _F.pdf(*_check("vonmises.pdf", x, kappa))
