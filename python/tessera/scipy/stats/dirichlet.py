"""jax.scipy.stats.dirichlet: the Dirichlet distribution on the simplex, with density
prod x_i^(alpha_i - 1) / B(alpha). x's first axis holds the K components (or K - 1, the last
being 1 - sum); further axes are a batch.

The algorithms are C++ (tessera::scipy::stats::dirichlet, tessera/scipy_stats.h); these
functions check their arguments and call it."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.dirichlet


def logpdf(x, alpha):
    return _F.logpdf(*_check("dirichlet.logpdf", x, alpha))


def pdf(x, alpha):
    return _F.pdf(*_check("dirichlet.pdf", x, alpha))
