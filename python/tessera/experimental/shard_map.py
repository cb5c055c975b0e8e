"""jax.experimental.shard_map: shard_map(f, mesh, in_specs, out_specs, check_rep=True,
auto=frozenset()) (tessera/_src/shard_map.py)."""
from tessera._src.shard_map import shard_map

__all__ = ["shard_map"]
