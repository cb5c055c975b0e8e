"""tessera.scipy: jax.scipy's special functions and distributions
(`jax.scipy.special.gammaln`, `jax.scipy.stats.norm.logpdf`)."""
from tessera.scipy import linalg, special, stats  # noqa: F401

__all__ = ["linalg", "special", "stats"]
