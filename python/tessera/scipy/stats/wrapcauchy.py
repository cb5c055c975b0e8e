"""jax.scipy.stats.wrapcauchy: the wrapped Cauchy distribution
(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)) on [0, 2 pi].

The algorithms are C++ (tessera::scipy::stats::wrapcauchy, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.wrapcauchy


def logpdf(x, c):
    return _F.logpdf(*_check("wrapcauchy.logpdf", x, c))


def pdf(x, c):
    return _F.pdf(*_check("wrapcauchy.pdf", x, c))
