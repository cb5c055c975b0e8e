"""jax.scipy.stats.t: Student's t distribution with df degrees of freedom (logpdf, pdf).

The algorithms are C++ (tessera::scipy::stats::t, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.t


def logpdf(x, df, loc=0, scale=1):
    return _F.logpdf(*_check("t.logpdf", x, df, loc, scale))


def pdf(x, df, loc=0, scale=1):
    return _F.pdf(*_check("t.pdf", x, df, loc, scale))
