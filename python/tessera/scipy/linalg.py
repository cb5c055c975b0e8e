"""tessera.scipy.linalg: jax.scipy.linalg."""
from tessera.scipy._linalg_spectral import eigh, expm, qr, svd  # noqa: F401
