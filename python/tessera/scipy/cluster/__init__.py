"""tessera.scipy.cluster: jax.scipy.cluster.vq."""
from tessera.scipy.cluster import vq  # noqa: F401

__all__ = ["vq"]
