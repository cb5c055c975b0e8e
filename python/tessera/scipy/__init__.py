"""tessera.scipy: jax.scipy's special functions, distributions, linear algebra, optimization,
integration, image interpolation, signal processing and clustering
(`jax.scipy.special.gammaln`, `jax.scipy.stats.norm.logpdf`, `jax.scipy.optimize.minimize`)."""
from tessera.scipy import linalg, optimize, special, stats  # noqa: F401

__all__ = ["linalg", "optimize", "special", "stats"]
