"""tessera.flatten_util: jax.flatten_util.ravel_pytree.

    flat, unravel = ravel_pytree(params)   # one 1-d array of every leaf, in tree order
    params2 = unravel(flat - lr * g_flat)

The flat vector's dtype is the promotion of the leaves' dtypes (JAX's rules, jnp.result_type).
When all leaves share one dtype, ``unravel`` casts nothing, so it accepts a vector of another
dtype (JAX's behaviour: e.g. a float32 tree unravels a float64 tangent); otherwise ``unravel``
requires that promoted dtype and casts each piece back to its leaf's dtype. An empty tree
ravels to a float32 array of size 0. Everything is jnp/lax, so both functions work under jit,
grad and vmap.
"""
import math as _math

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.dtypes import canonicalize_dtype as _canonicalize
from tessera.tree_util import tree_flatten as _tree_flatten
from tessera.tree_util import tree_unflatten as _tree_unflatten

__all__ = ["ravel_pytree"]


def _leaf_dtype(x):
    dtype = getattr(x, "dtype", None)
    if dtype is None:  # Python scalars and lists: their default jnp dtype
        return _jnp.asarray(x).dtype
    return _canonicalize(dtype)


class _Unravel:
    """unravel for one (structure, sizes, shapes, dtypes): callable, hashable and compared by
    value (as JAX's HashablePartial), so it can be a static argument of jit."""

    __slots__ = ("_treedef", "_sizes", "_shapes", "_from_dtypes", "_to_dtype", "_total")

    def __init__(self, treedef, sizes, shapes, from_dtypes, to_dtype):
        self._treedef = treedef
        self._sizes = sizes
        self._shapes = shapes
        self._from_dtypes = from_dtypes  # None: one dtype, no casts
        self._to_dtype = to_dtype
        self._total = sum(sizes)

    def _key(self):
        return (self._treedef, self._sizes, self._shapes, self._from_dtypes, self._to_dtype)

    def __eq__(self, other):
        return type(other) is _Unravel and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"unravel_pytree({self._treedef})"

    def __call__(self, flat):
        shape = _jnp.shape(flat)
        if len(shape) != 1 or shape[0] != self._total:
            raise ValueError(
                f"unravel function given array of shape {tuple(shape)}, but expected a 1-d "
                f"array of size {self._total} (the size ravel_pytree returned).")
        if self._from_dtypes is not None:
            dtype = _leaf_dtype(flat)
            if dtype != self._to_dtype:
                raise TypeError(f"unravel function given array of dtype {dtype}, but expected "
                                f"dtype {self._to_dtype}")
        leaves = []
        start = 0
        for k, (size, shape) in enumerate(zip(self._sizes, self._shapes)):
            piece = _lax.slice_in_dim(flat, start, start + size, axis=0)
            piece = _jnp.reshape(piece, shape)
            if self._from_dtypes is not None:
                piece = _lax.convert_element_type(piece, self._from_dtypes[k])
            leaves.append(piece)
            start += size
        return _tree_unflatten(self._treedef, leaves)


def ravel_pytree(pytree):
    """Ravels a pytree of arrays and scalars into one 1-d array.

    Returns ``(flat, unravel)``: ``flat`` concatenates the raveled leaves in tree_flatten
    order, in the promoted dtype of the leaves; ``unravel(v)`` maps a vector of the same size
    back to a pytree of the original structure, shapes and dtypes.
    """
    leaves, treedef = _tree_flatten(pytree)
    if not leaves:
        return _jnp.zeros((0,), dtype=_jnp.float32), _Unravel(treedef, (), (), None, None)
    from_dtypes = tuple(_leaf_dtype(x) for x in leaves)
    to_dtype = _jnp.result_type(*from_dtypes)
    shapes = tuple(tuple(_jnp.shape(x)) for x in leaves)
    sizes = tuple(_math.prod(s) for s in shapes)
    same = all(d == to_dtype for d in from_dtypes)
    pieces = []
    for x, n in zip(leaves, sizes):
        x = _jnp.asarray(x) if same else _lax.convert_element_type(x, to_dtype)
        pieces.append(_jnp.reshape(x, (n,)))
    flat = _lax.concatenate(pieces, 0)
    return flat, _Unravel(treedef, sizes, shapes, None if same else from_dtypes, to_dtype)
