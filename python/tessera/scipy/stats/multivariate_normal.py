"""jax.scipy.stats.multivariate_normal: the normal distribution of vectors with a mean and a
covariance matrix (logpdf and pdf, as JAX's; allow_singular is not supported, as in JAX).

The algorithm is C++ (tessera::scipy::stats::multivariate_normal, tessera/scipy_stats.h: a
Cholesky factor of cov and a triangular solve); these functions check their arguments."""
from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_args as _check

_F = _C.multivariate_normal


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov). A scalar mean is a univariate normal with variance cov; a scalar
    cov with a vector mean is cov times the identity."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    return _F.logpdf(*_check("multivariate_normal.logpdf", x, mean, cov))


def pdf(x, mean, cov):
    return _F.pdf(*_check("multivariate_normal.pdf", x, mean, cov))
