"""tessera.scipy.stats: jax.scipy.stats's distributions, one module each
(`jax.scipy.stats.norm.logpdf(x, loc, scale)`, `jax.scipy.stats.poisson.pmf(k, mu)`).

Every function takes JAX's loc/scale arguments, promotes them as JAX's promote_args_inexact and
gives JAX's values outside the support (-inf log-density, 0 density, NaN where JAX gives NaN).
multivariate_normal factors its covariance with lax.linalg.cholesky.
"""
from tessera.scipy.stats import (  # noqa: F401
    bernoulli, beta, binom, cauchy, chi2, expon, gamma, laplace, logistic, multivariate_normal,
    norm, poisson, t, uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "expon", "gamma", "laplace",
           "logistic", "multivariate_normal", "norm", "poisson", "t", "uniform"]
