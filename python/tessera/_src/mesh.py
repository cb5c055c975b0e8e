"""jax.sharding's mesh vocabulary: Mesh (devices laid out on named axes), PartitionSpec (how an
array's dims map onto mesh axes), NamedSharding (the two together), jax.make_mesh, and the
current-mesh context (`with mesh:`, jax.sharding.use_mesh) that jax.shard_map reads when it is
given no mesh.

Tessera's devices are the CPU devices of one process (TESSERA_NUM_CPU_DEVICES, default 1). A
NamedSharding describes a layout — shard_shape, the devices, whether it is replicated — and
shard_map runs a function per shard with the mesh axes bound as named axes; arrays themselves
are stored whole on one device (device_put with a NamedSharding places them on the mesh's first
device), so values and shapes are JAX's while the storage is not split."""
import collections
import contextlib
import math

import numpy as np


class _Unconstrained:
    def __repr__(self):
        return "UNCONSTRAINED"


class PartitionSpec(tuple):
    """jax.sharding.PartitionSpec: one entry per leading array dim — None (not split), a mesh
    axis name, or a tuple of names (split over their product, the first name major). Trailing
    dims not named are not split."""

    UNCONSTRAINED = _Unconstrained()

    def __new__(cls, *partitions):
        for p in partitions:
            if isinstance(p, list):
                raise TypeError(f"PartitionSpec entries must be None, a mesh axis name or a "
                                f"tuple of names, got the list {p!r}; use a tuple")
        return tuple.__new__(cls, partitions)

    def __repr__(self):
        return "PartitionSpec(" + ", ".join(repr(p) for p in self) + ")"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))

    def _normalized(self):
        """The spec with each entry as a tuple of axis names (() for None)."""
        out = []
        for p in self:
            if p is None or p is PartitionSpec.UNCONSTRAINED:
                out.append(())
            elif isinstance(p, tuple):
                out.append(tuple(p))
            else:
                out.append((p,))
        return tuple(out)


P = PartitionSpec


_MESH_STACK = []


class Mesh(contextlib.ContextDecorator):
    """jax.sharding.Mesh(devices, axis_names): an ndarray of devices with one name per axis.
    Used as a context manager it is the current mesh (what jax.shard_map uses when it is given
    none)."""

    def __init__(self, devices, axis_names, *, axis_types=None):
        devs = np.array(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if devs.ndim != len(axis_names):
            raise ValueError(
                f"Mesh requires the ndim of its first argument (`devices`) to equal the length "
                f"of its second argument (`axis_names`), but got devices.ndim == {devs.ndim} "
                f"and len(axis_names) == {len(axis_names)}.")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh axis names must be unique, got {axis_names}")
        flat = list(devs.flat)
        if len(set(flat)) != len(flat):
            raise ValueError(f"Mesh devices must be distinct, got {flat}")
        self.devices = devs
        self.axis_names = axis_names
        self.axis_types = axis_types

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self):
        return tuple(self.devices.shape)

    @property
    def size(self):
        return int(self.devices.size)

    @property
    def empty(self):
        return self.devices.size == 0

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self):
        return list(self.devices.flat)

    @property
    def is_multi_process(self):
        return False

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names and
                self.devices.shape == other.devices.shape and
                list(self.devices.flat) == list(other.devices.flat))

    def __hash__(self):
        return hash((self.axis_names, self.devices.shape, tuple(self.devices.flat)))

    def __repr__(self):
        return "Mesh(" + ", ".join(f"'{n}': {s}" for n, s in self.shape.items()) + ")"

    def __enter__(self):
        _MESH_STACK.append(self)
        return self

    def __exit__(self, *exc):
        _MESH_STACK.pop()
        return False


def get_abstract_mesh():
    """The current mesh (innermost `with mesh:` / use_mesh), or None."""
    return _MESH_STACK[-1] if _MESH_STACK else None


@contextlib.contextmanager
def use_mesh(mesh):
    """jax.sharding.use_mesh: `mesh` is the current mesh inside the block."""
    with mesh:
        yield mesh


set_mesh = use_mesh


def make_mesh(axis_shapes, axis_names, *, devices=None, axis_types=None):
    """jax.make_mesh: a Mesh of the given shape over `devices` (default: every device)."""
    from tessera._src.devices import devices as _all_devices
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"make_mesh: axis_shapes {axis_shapes} and axis_names "
                         f"{tuple(axis_names)} must have the same length")
    devs = list(devices) if devices is not None else _all_devices()
    n = math.prod(axis_shapes)
    if n != len(devs):
        raise ValueError(f"Number of devices {len(devs)} must equal the product of mesh_shape "
                         f"{axis_shapes}")
    return Mesh(np.array(devs, dtype=object).reshape(axis_shapes), tuple(axis_names),
                axis_types=axis_types)


def check_spec(mesh, spec, what):
    """The spec's entries as tuples of names, checked against the mesh."""
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"{what}: expected a PartitionSpec, got {spec!r}")
    norm = spec._normalized()
    seen = set()
    for names in norm:
        for n in names:
            if n not in mesh.shape:
                raise ValueError(f"{what}: {spec} refers to the mesh axis {n!r}, which is not "
                                 f"in the mesh {mesh} (axis names {mesh.axis_names})")
            if n in seen:
                raise ValueError(f"{what}: {spec} uses the mesh axis {n!r} more than once")
            seen.add(n)
    return norm


class NamedSharding:
    """jax.sharding.NamedSharding(mesh, spec): an array's dims split over mesh axes as `spec`
    says; replicated over the mesh axes it does not name."""

    def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding expects a Mesh, got {mesh!r}")
        self.mesh = mesh
        self.spec = spec
        self._memory_kind = memory_kind
        self._norm = check_spec(mesh, spec, "NamedSharding")

    def shard_shape(self, global_shape):
        global_shape = tuple(global_shape)
        if len(self._norm) > len(global_shape):
            raise ValueError(f"Sharding {self!r} needs an array of rank >= {len(self._norm)}, "
                             f"got shape {global_shape}")
        out = list(global_shape)
        for d, names in enumerate(self._norm):
            k = math.prod(self.mesh.shape[n] for n in names)
            if out[d] % k:
                raise ValueError(f"Sharding {self!r}: dim {d} of shape {global_shape} "
                                 f"(size {out[d]}) is not divisible by {k}, the product of the "
                                 f"sizes of mesh axes {names}")
            out[d] //= k
        return tuple(out)

    @property
    def num_devices(self):
        return self.mesh.size

    @property
    def device_set(self):
        return set(self.mesh.devices.flat)

    @property
    def addressable_devices(self):
        return self.device_set

    @property
    def is_fully_addressable(self):
        return True

    @property
    def is_fully_replicated(self):
        return all(self.mesh.shape[n] == 1 for names in self._norm for n in names)

    @property
    def memory_kind(self):
        return self._memory_kind or "device"

    def _canonical(self):
        norm = list(self._norm)
        while norm and norm[-1] == ():  # P('x', None) is P('x')
            norm.pop()
        return tuple(norm)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh and
                self._canonical() == other._canonical())

    def __hash__(self):
        return hash((self.mesh, self._canonical()))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"
