"""jax.experimental: io_callback, enable_x64 / disable_x64."""
from tessera._src.callback import io_callback
from tessera._src.config import disable_x64, enable_x64

__all__ = ["io_callback", "enable_x64", "disable_x64"]
