"""jax.sharding: SingleDeviceSharding, Mesh, PartitionSpec, NamedSharding, use_mesh / set_mesh,
get_abstract_mesh (tessera/_src/mesh.py says how Tessera's devices hold them)."""
from tessera._src.devices import SingleDeviceSharding
from tessera._src.mesh import (Mesh, NamedSharding, PartitionSpec, get_abstract_mesh, set_mesh,
                               use_mesh)

__all__ = ["SingleDeviceSharding", "Mesh", "NamedSharding", "PartitionSpec", "get_abstract_mesh",
           "set_mesh", "use_mesh"]
