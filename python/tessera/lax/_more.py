"""More of jax.lax's surface, composed from existing operators: split, broadcast_to_rank,
approx_max_k / approx_min_k (exact: the exact top k is a valid answer for any recall target) and
conj (the identity on Tessera's real dtypes)."""
from tessera import _tessera


def split(operand, sizes, axis=0):
    """Pieces of operand along axis with the given sizes (which must sum to its length)."""
    from tessera import lax
    x = _tessera.asarray(operand)
    nd = len(x.shape)
    if not -nd <= axis < nd:
        raise ValueError(f"split: axis {axis} is out of bounds for an array of rank {nd}.")
    axis %= nd
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                         f"operand shape {tuple(x.shape)}")
    out, start = [], 0
    for s in sizes:
        out.append(lax.slice_in_dim(x, start, start + s, axis=axis))
        start += s
    return out


def broadcast_to_rank(x, rank):
    """x with leading dimensions of size 1 added up to `rank`."""
    from tessera import lax
    x = _tessera.asarray(x)
    nd = len(x.shape)
    if nd >= rank:
        return x
    return lax.broadcast(x, (1,) * (rank - nd))


def _approx_k(name, operand, k, reduction_dimension, largest):
    from tessera import lax
    from tessera import numpy as jnp
    x = _tessera.asarray(operand)
    nd = len(x.shape)
    if not -nd <= reduction_dimension < nd:
        raise ValueError(f"{name}: reduction_dimension {reduction_dimension} is out of bounds "
                         f"for an array of rank {nd}.")
    d = reduction_dimension % nd
    if not 0 <= k <= x.shape[d]:
        raise ValueError(f"{name}: k must be in [0, {x.shape[d]}], got {k}.")
    moved = jnp.moveaxis(x, d, -1)
    if largest:
        vals, idx = lax.top_k(moved, k)
    else:
        # The k smallest: ascending stable sort of (value, index) — NaNs last, as JAX's
        # approx_min_k on CPU orders them.
        iota = lax.broadcasted_iota("int32", moved.shape, len(moved.shape) - 1)
        svals, sidx = lax.sort((moved, iota), dimension=len(moved.shape) - 1, num_keys=1)
        vals = lax.slice_in_dim(svals, 0, k, axis=len(moved.shape) - 1)
        idx = lax.slice_in_dim(sidx, 0, k, axis=len(moved.shape) - 1)
    return jnp.moveaxis(vals, -1, d), jnp.moveaxis(idx, -1, d)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """(values, indices) of the k largest along reduction_dimension, in descending order."""
    return _approx_k("approx_max_k", operand, int(k), int(reduction_dimension), True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """(values, indices) of the k smallest along reduction_dimension, in ascending order."""
    return _approx_k("approx_min_k", operand, int(k), int(reduction_dimension), False)


def conj(x):
    """The complex conjugate: the identity on Tessera's real dtypes."""
    x = _tessera.asarray(x)
    if str(x.dtype) == "bool" or not any(str(x.dtype).startswith(p) for p in
                                          ("float", "bfloat", "int", "uint")):
        raise TypeError(f"conj does not accept dtype {x.dtype}.")
    return x


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the shapes (tuples of ints); ValueError when they do not
    broadcast."""
    import numpy as np
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(map(tuple, shapes))}"
                         ) from None


_PLATFORMS = ("cpu", "cuda", "rocm", "tpu", "gpu")


def platform_dependent(*args, default=None, **per_platform):
    """jax.lax.platform_dependent: the branch for the platform the computation runs on, applied to
    args (Tessera's computations run on the CPU: the `cpu` branch, else `default`)."""
    for p in per_platform:
        if p not in _PLATFORMS:
            raise ValueError(f"Unsupported platform {p!r} in lax.platform_dependent; expected "
                             f"one of {_PLATFORMS}")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError("lax.platform_dependent: no branch for the platform 'cpu' and "
                                  "no default")
    return branch(*args)
