"""tessera.scipy.ndimage: jax.scipy.ndimage.map_coordinates, interpolation of an N-D array at
arbitrary coordinates with nearest (order=0) or multilinear (order=1) weights.

Every coordinate axis contributes one (order 0) or two (order 1) integer sample indices with
weights; out-of-range indices are mapped back into the array by the boundary mode (as JAX's:
'constant' keeps them and substitutes cval, 'nearest' clamps, 'wrap' is periodic, i.e. SciPy's
'grid-wrap', 'mirror' reflects about the edge samples, 'reflect' about the edge half-way points),
and the result is the weighted sum over the 2^ndim corner combinations."""
import itertools as _itertools

from tessera import lax as _lax
from tessera import numpy as _jnp

__all__ = ["map_coordinates"]


def _mirror(index, size):
    # a triangular wave of period 2 (size - 1): ... 2 1 0 1 2 ... size-1 size-2 ...
    if size == 1:
        return _jnp.zeros_like(index)
    period = 2 * (size - 1)
    return (size - 1) - _jnp.abs(index % period - (size - 1))


def _reflect(index, size):
    # ... 1 0 | 0 1 ... size-1 | size-1 size-2 ...: period 2 size
    r = index % (2 * size)
    return _jnp.where(r < size, r, 2 * size - 1 - r)


_MODES = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: _jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x):
    return x if _jnp.issubdtype(x.dtype, _jnp.integer) else _lax.round(x)


def _nodes(coordinate, order):
    """[(integer index, weight)] of one coordinate array."""
    if order == 0:
        return [(_round_half_away(coordinate).astype(_jnp.int32), None)]
    lower = _jnp.floor(coordinate)
    frac = coordinate - lower
    index = lower.astype(_jnp.int32)
    return [(index, 1 - frac), (index + 1, frac)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """input sampled at the points whose i-th coordinates are coordinates[i] (all of one shape,
    which is the result's). order: 0 (nearest) or 1 (linear). mode: 'constant' (cval outside),
    'nearest', 'wrap', 'mirror' or 'reflect'. An integer input gives rounded integer results."""
    input = _jnp.asarray(input)
    if isinstance(coordinates, _jnp.ndarray) or hasattr(coordinates, "__array__"):
        coordinates = list(coordinates)
    coordinates = [_jnp.asarray(c) for c in coordinates]
    if len(coordinates) != input.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input.ndim}")
    fixer = _MODES.get(mode)
    if fixer is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. Currently "
            f"supported modes are {set(_MODES)}.")
    if order not in (0, 1):
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires "
                                  f"order<=1 (got order={order})")
    shapes = {tuple(c.shape) for c in coordinates}
    if len(shapes) > 1:
        raise ValueError("jax.scipy.ndimage.map_coordinates: the coordinate arrays must have "
                         f"one shape, got {sorted(shapes)}")
    wdtype = input.dtype if _jnp.issubdtype(input.dtype, _jnp.floating) else \
        _jnp.result_type(input.dtype, 1.0)
    coordinates = [c.astype(wdtype) if c.dtype != wdtype else c for c in coordinates]
    cval_arr = _jnp.asarray(cval, wdtype)

    per_axis = []
    for coordinate, size in zip(coordinates, input.shape):
        nodes = []
        for index, weight in _nodes(coordinate, order):
            valid = ((index >= 0) & (index < size)) if mode == "constant" else None
            nodes.append((fixer(index, size), valid, weight))
        per_axis.append(nodes)

    values = input.astype(wdtype)
    total = None
    for corner in _itertools.product(*per_axis):
        indices = tuple(index for index, _, _ in corner)
        sample = values[indices]
        valids = [v for _, v, _ in corner if v is not None]
        if valids:
            ok = valids[0]
            for v in valids[1:]:
                ok = ok & v
            sample = _jnp.where(ok, sample, cval_arr)
        weights = [w for _, _, w in corner if w is not None]
        for w in weights:
            sample = sample * w
        total = sample if total is None else total + sample
    if _jnp.issubdtype(input.dtype, _jnp.integer):
        total = _round_half_away(total)
    return total.astype(input.dtype)
