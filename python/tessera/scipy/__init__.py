"""tessera.scipy: jax.scipy's special functions, distributions, linear algebra, optimization,
integration, image interpolation, signal processing and clustering
(`jax.scipy.special.gammaln`, `jax.scipy.stats.norm.logpdf`, `jax.scipy.optimize.minimize`)."""
from tessera.scipy import (  # noqa: F401
    cluster, integrate, interpolate, linalg, ndimage, optimize, signal, special, stats)

__all__ = ["cluster", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
           "special", "stats"]
