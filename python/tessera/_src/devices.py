"""Devices as jax.devices() shows them (CPU devices today), device_put, block_until_ready."""
from tessera import _tessera
from tessera import tree_util


class Device:
    """A device (jax.Device): platform, id."""

    def __init__(self, platform, id):
        self.platform = platform
        self.id = id
        self.device_kind = "cpu"

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def memory_stats(self):
        """The device's allocator statistics (jax.Device.memory_stats): bytes_in_use,
        peak_bytes_in_use, bytes_limit (0: no limit; TESSERA_CPU_MEMORY_LIMIT), ..."""
        return _tessera.memory_stats(self.id)

    def __eq__(self, other):
        return isinstance(other, Device) and (self.platform, self.id) == (other.platform, other.id)

    def __hash__(self):
        return hash((self.platform, self.id))


_CPU = [Device("cpu", 0)]


def devices(backend=None):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend}; this build has: cpu")
    return list(_CPU)


def local_devices(process_index=None, backend=None):
    return devices(backend)


def device_put(x, device=None):
    """Copies array-likes to the device as Arrays (pytrees map over their leaves)."""
    if device is not None and device not in _CPU:
        raise ValueError(f"device_put: unknown device {device!r}")

    def put(leaf):
        if isinstance(leaf, _tessera.Array):
            return leaf
        return _tessera.asarray(leaf)

    return tree_util.tree_map(put, x)


def block_until_ready(x):
    """Waits for every array in the pytree x (eager CPU work is synchronous) and returns x."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, _tessera.Array):
            leaf.block_until_ready()
    return x
