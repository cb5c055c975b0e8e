"""tessera.scipy.stats: jax.scipy.stats's distributions, one module each
(`jax.scipy.stats.norm.logpdf(x, loc, scale)`, `jax.scipy.stats.poisson.pmf(k, mu)`), and
mode, rankdata, sem and gaussian_kde.

Every function takes JAX's loc/scale arguments, promotes them as JAX's promote_args_inexact and
gives JAX's values outside the support (-inf log-density, 0 density, NaN where JAX gives NaN).
multivariate_normal factors its covariance with lax.linalg.cholesky.
"""
from tessera.scipy.stats import (  # noqa: F401
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom,
    gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm,
    pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from tessera.scipy.stats._core import ModeResult, mode, rankdata, sem  # noqa: F401
from tessera.scipy.stats._kde import gaussian_kde  # noqa: F401

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "mode", "ModeResult", "multinomial", "multivariate_normal", "nbinom",
           "norm", "pareto", "poisson", "rankdata", "sem", "t", "truncnorm", "uniform",
           "vonmises", "wrapcauchy"]
