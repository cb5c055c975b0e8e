"""jax.experimental: io_callback, enable_x64 / disable_x64, and the shard_map module."""
from tessera._src.callback import io_callback
from tessera._src.config import disable_x64, enable_x64
from tessera.experimental import shard_map

__all__ = ["io_callback", "enable_x64", "disable_x64", "shard_map"]
