"""jax.sharding's names that exist today: SingleDeviceSharding (every array is placed whole on
one device until the parallelism issues add meshes and named shardings)."""
from tessera._src.devices import SingleDeviceSharding

__all__ = ["SingleDeviceSharding"]
