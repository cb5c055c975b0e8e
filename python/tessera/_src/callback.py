"""jax.pure_callback and jax.experimental.io_callback over Tessera's flat core (debug.h).

The callback's arguments and results are pytrees: arguments are flattened into the operands of a
``pure_callback`` / ``io_callback`` equation, and the callback's result is flattened and checked
(count, shapes, dtypes, with JAX's messages) against ``result_shape_dtypes`` (a pytree of
ShapeDtypeStructs, arrays or anything with ``shape`` and ``dtype``) when it runs.
"""
import warnings

from tessera import _tessera
from tessera import tree_util

Array = _tessera.Array

__all__ = ["io_callback", "pure_callback"]

_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]
_UNSET = object()


def _as_operand(x):
    return x if isinstance(x, Array) else _tessera.asarray(x)


def _dtype_name(dt):
    name = getattr(dt, "name", None)
    return name if isinstance(name, str) else str(dt)


def _result_avals(result_shape_dtypes):
    leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError("result_shape_dtypes must be a pytree whose leaves have `shape` and "
                            f"`dtype` attributes, got a leaf {leaf!r}")
        name = _dtype_name(leaf.dtype)
        if _tessera.canonical_dtype_name(name) != name:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        avals.append((tuple(int(d) for d in leaf.shape), name))
    return avals, out_tree


def _flat_callback(callback, in_tree):
    def flat(xs):
        args, kwargs = tree_util.tree_unflatten(in_tree, list(xs))
        return tree_util.tree_leaves(callback(*args, **kwargs))
    flat.__qualname__ = getattr(callback, "__qualname__", getattr(callback, "__name__", "callback"))
    return flat


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vectorized=_UNSET,
                  vmap_method=None, **kwargs):
    """jax.pure_callback: calls a pure host function; its outputs are ``result_shape_dtypes``.

    Under vmap the behaviour follows ``vmap_method``: "sequential" / "sequential_unrolled"
    call once per batch member; "expand_dims" calls once with unbatched arguments given a
    leading axis of size 1; "broadcast_all" broadcasts them to the batch size;
    "legacy_vectorized" (the deprecated ``vectorized=True``) passes them as they are. Without a
    vmap_method, vmap raises NotImplementedError, as current JAX. No JVP: use custom_jvp.
    """
    del sharding  # single device
    if vectorized is not _UNSET:
        if vmap_method is not None:
            raise ValueError("the vectorized and vmap_method arguments of jax.pure_callback "
                             "cannot be used together. Please use the vmap_method argument.")
        warnings.warn("The vectorized argument of jax.pure_callback is deprecated. Use "
                      "vmap_method='legacy_vectorized' (or 'sequential') instead.",
                      DeprecationWarning, stacklevel=2)
        vmap_method = "legacy_vectorized" if vectorized else "sequential"
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    out = _tessera.pure_callback(_flat_callback(callback, in_tree), avals,
                                 [_as_operand(x) for x in flat_args], vmap_method)
    return tree_util.tree_unflatten(out_tree, list(out))


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """jax.experimental.io_callback: calls an impure host function (an IO effect, ordered or
    not: it is never removed by dead-code elimination). vmap calls it once per batch member
    (an ordered one cannot be vmapped); no JVP."""
    del sharding
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    out = _tessera.io_callback(_flat_callback(callback, in_tree), avals,
                               [_as_operand(x) for x in flat_args], bool(ordered))
    return tree_util.tree_unflatten(out_tree, list(out))
