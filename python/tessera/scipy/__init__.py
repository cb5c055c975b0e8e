"""tessera.scipy: jax.scipy's special functions, distributions, linear algebra, optimization,
integration, image interpolation, signal processing and clustering
(`jax.scipy.special.gammaln`, `jax.scipy.stats.norm.logpdf`, `jax.scipy.optimize.minimize`)."""
from tessera.scipy import (  # noqa: F401
    integrate, interpolate, linalg, ndimage, optimize, special, stats)

__all__ = ["integrate", "interpolate", "linalg", "ndimage", "optimize", "special", "stats"]
