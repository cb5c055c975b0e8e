"""tessera.lax.linalg: jax.lax.linalg."""
from tessera.lax._linalg_spectral import eigh, qr, svd, symmetrize  # noqa: F401
