"""Devices as jax.devices() shows them (the C++ core's CPU devices: TESSERA_NUM_CPU_DEVICES),
the process queries (device_count, local_device_count, default_backend, process_index,
process_count), device_put, device_get and block_until_ready."""
import numpy as np

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


_CPU = [Device("cpu", i) for i in range(_tessera.num_devices())]


class SingleDeviceSharding:
    """An array placed whole on one device (jax.sharding.SingleDeviceSharding)."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self._memory_kind = memory_kind

    @property
    def device_set(self):
        return {self._device}

    @property
    def addressable_devices(self):
        return {self._device}

    @property
    def memory_kind(self):
        return self._memory_kind or "device"

    num_devices = 1
    is_fully_replicated = True
    is_fully_addressable = True

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and self._device == other._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


def _array_device(self):
    if self._is_tracer:
        raise _tracer_error("device")
    return _CPU[self._device_id]


def _tracer_error(what):
    from tessera.errors import ConcretizationTypeError
    return ConcretizationTypeError(
        f"The '{what}' of a traced array is not available: it is abstract inside a "
        f"transformation (jit, vmap, grad); read it outside the transformed function")


def _install_array_placement():
    arr = _tessera.Array
    arr.device = property(_array_device)
    arr.devices = lambda self: {_array_device(self)}
    arr.sharding = property(lambda self: SingleDeviceSharding(_array_device(self)))
    arr.committed = property(_array_committed)


def _array_committed(self):
    if self._is_tracer:
        raise _tracer_error("committed")
    return self._committed


def _check_backend(backend):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend}; this build has: cpu")


def devices(backend=None):
    """Every device of the process (jax.devices): CpuDevice(id=0) .. id=n-1."""
    _check_backend(backend)
    return list(_CPU)


def local_devices(process_index=None, backend=None):
    """The devices of this process (one process: all of them)."""
    if process_index not in (None, 0):
        raise ValueError(f"local_devices: process_index {process_index} out of range "
                         f"(this run has 1 process)")
    return devices(backend)


def device_count(backend=None):
    """The number of devices of every process (jax.device_count)."""
    _check_backend(backend)
    return len(_CPU)


def local_device_count(backend=None):
    """The number of devices of this process (jax.local_device_count)."""
    _check_backend(backend)
    return len(_CPU)


def default_backend():
    """The platform name of the default device (jax.default_backend): 'cpu'."""
    return "cpu"


def process_index(backend=None):
    """This process's index among the processes of the run (one process: 0)."""
    _check_backend(backend)
    return 0


def process_count(backend=None):
    """The number of processes of the run (1: multi-host runs arrive with the parallelism
    issues)."""
    _check_backend(backend)
    return 1


def device_get(x):
    """Copies the Arrays of the pytree x to the host (jax.device_get): NumPy arrays; other
    leaves are returned as they are."""

    def get(leaf):
        if isinstance(leaf, _tessera.Array):
            return np.asarray(leaf)
        return leaf

    return tree_util.tree_map(get, x)


def device_put(x, device=None):
    """Places the array-likes of the pytree x on `device` (a Device, a SingleDeviceSharding or a
    NamedSharding: its mesh's first device)
    as Arrays (jax.device_put). With a device the results are committed to it: later ops on
    them run there, and mixing arrays committed to different devices raises ValueError. Without
    one the results are uncommitted on the default device and follow committed operands."""
    if isinstance(device, SingleDeviceSharding):
        device = device._device
    from tessera._src.mesh import NamedSharding
    if isinstance(device, NamedSharding):
        # Arrays are stored whole (tessera/_src/mesh.py): on the mesh's first device, after the
        # spec is checked against the shapes as JAX checks it.
        for leaf in tree_util.tree_leaves(x):
            device.shard_shape(np.shape(leaf))
        device = next(iter(device.mesh.devices.flat))
    if device is not None and device not in _CPU:
        raise ValueError(f"device_put: unknown device {device!r}; expected one of "
                         f"tessera.devices() = {_CPU!r} or a SingleDeviceSharding of one")
    dev_id = -1 if device is None else device.id

    def put(leaf):
        if not isinstance(leaf, _tessera.Array):
            leaf = _tessera.asarray(leaf)
        if leaf._is_tracer:
            return leaf
        if dev_id < 0:
            return leaf
        return _tessera.device_put(leaf, dev_id)

    return tree_util.tree_map(put, x)


def block_until_ready(x):
    """Waits for every array in the pytree x (eager CPU work is synchronous) and returns x."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, _tessera.Array):
            leaf.block_until_ready()
    return x


_install_array_placement()
