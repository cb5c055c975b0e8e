"""tessera.scipy.interpolate: jax.scipy.interpolate.RegularGridInterpolator, linear or
nearest interpolation on a rectilinear grid (one sorted coordinate vector per axis)."""
import itertools as _itertools

from tessera import numpy as _jnp
from tessera.tree_util import register_pytree_node_class as _register

__all__ = ["RegularGridInterpolator"]


def _coords_array(xi, ndim):
    """xi as an (..., ndim) array: a tuple of coordinate arrays is broadcast and stacked."""
    if isinstance(xi, tuple):
        if len(xi) == 1:
            xi = xi[0]
        else:
            parts = _jnp.broadcast_arrays(*[_jnp.asarray(p) for p in xi])
            return _jnp.stack(parts, axis=-1)
    xi = _jnp.asarray(xi)
    if xi.ndim == 1:
        xi = xi.reshape(-1, ndim) if ndim > 1 else xi.reshape(-1, 1)
    return xi


@_register
class RegularGridInterpolator:
    """Interpolates values (shape (n_1, ..., n_d, ...)) given on the grid points[0] x ... x
    points[d-1] (each strictly ascending). method: 'linear' or 'nearest'. Points outside the
    grid get fill_value (NaN by default); with fill_value=None they are extrapolated from the
    edge cell. bounds_error=True is not supported (it cannot be checked under jit), as JAX."""

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=_jnp.nan):
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        if isinstance(values, (str, bytes)) or not hasattr(values, "shape") and \
                not isinstance(values, (list, tuple)):
            raise TypeError("RegularGridInterpolator requires ndarray or scalar arguments, got "
                            f"{type(values).__name__} for values")
        values = _jnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        if not _jnp.issubdtype(values.dtype, _jnp.floating):
            values = values.astype(_jnp.result_type(values.dtype, 1.0))
        if fill_value is not None:
            fill_value = _jnp.asarray(fill_value)
            if not _jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        self.grid = tuple(_jnp.asarray(p) for p in points)
        for i, g in enumerate(self.grid):
            if g.ndim != 1 or g.shape[0] != values.shape[i]:
                raise ValueError(f"RegularGridInterpolator: points[{i}] must be 1-D with "
                                 f"{values.shape[i]} entries (values.shape[{i}]), got shape "
                                 f"{g.shape}")
            if g.shape[0] < 2:
                raise ValueError(f"RegularGridInterpolator: points[{i}] needs at least 2 "
                                 "entries")
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _coords_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        lead = xi.shape[:-1]
        xi = xi.reshape(-1, ndim).astype(self.values.dtype)
        indices, fracs, outside = self._locate(xi)
        if method == "linear":
            result = self._linear(indices, fracs)
        else:
            result = self.values[tuple(_jnp.where(t <= 0.5, i, i + 1)
                                       for i, t in zip(indices, fracs))]
        if self.fill_value is not None:
            mask = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = _jnp.where(mask, self.fill_value.astype(result.dtype), result)
        return result.reshape(lead + self.values.shape[ndim:])

    def _locate(self, xi):
        """Per axis: the cell's lower index i (clamped to [0, n-2]), the position in the cell
        (x - g[i]) / (g[i+1] - g[i]), and whether any coordinate lies outside the grid."""
        indices, fracs = [], []
        outside = _jnp.zeros((xi.shape[0],), bool)
        for axis, g in enumerate(self.grid):
            x = xi[:, axis]
            i = _jnp.clip(_jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            lo = g[i]
            indices.append(i)
            fracs.append((x - lo) / (g[i + 1] - lo))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, fracs, outside

    def _linear(self, indices, fracs):
        extra = (None,) * (self.values.ndim - len(indices))
        total = None
        for upper in _itertools.product((False, True), repeat=len(indices)):
            weight = None
            for up, t in zip(upper, fracs):
                w = t if up else 1 - t
                weight = w if weight is None else weight * w
            idx = tuple(i + 1 if up else i for up, i in zip(upper, indices))
            term = self.values[idx] * weight[(slice(None),) + extra]
            total = term if total is None else total + term
        return total

    def tree_flatten(self):
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux, children):
        grid, values, fill_value = children
        obj = object.__new__(cls)
        obj.method, obj.bounds_error = aux
        obj.grid, obj.values, obj.fill_value = grid, values, fill_value
        return obj
