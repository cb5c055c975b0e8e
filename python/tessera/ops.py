"""jax.ops: segment reductions, each one scatter (lax.scatter_add/mul/max/min into the
reduction's identity). Segment ids outside [0, num_segments) are dropped (negative ones are not
wrapped), as JAX's."""
import numpy as _np

from tessera import lax as _lax
from tessera import numpy as _jnp


def _segment(name, identity):
    def f(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
          bucket_size=None, mode=None):
        data = _jnp.asarray(data)
        ids = _jnp.asarray(segment_ids)
        if _np.dtype(ids.dtype).kind not in "iu":
            raise TypeError(f"{name}: segment_ids must be integers, got {ids.dtype}")
        if num_segments is None:
            if getattr(ids, "_is_tracer", False):
                raise ValueError(f"{name}: num_segments must be given (a static int) when "
                                 "segment_ids is traced; it sets the output's shape")
            num_segments = int(_np.max(_np.asarray(ids), initial=-1)) + 1
        num_segments = int(num_segments)
        if num_segments < 0:
            raise ValueError(f"{name}: num_segments must be non-negative, got {num_segments}")
        if ids.ndim != 1 or (data.ndim == 0 or data.shape[0] != ids.shape[0]):
            raise ValueError(f"{name}: segment_ids must be 1-d with one id per row of data; got "
                             f"data {data.shape} and segment_ids {ids.shape}")
        init = identity(data.dtype)
        out = _jnp.full((num_segments,) + tuple(data.shape[1:]), init, dtype=data.dtype)
        dn = _lax.ScatterDimensionNumbers(update_window_dims=tuple(range(1, data.ndim)),
                                          inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))
        scatter = {"add": _lax.scatter_add, "multiply": _lax.scatter_mul, "max": _lax.scatter_max,
                   "min": _lax.scatter_min}[name]
        return scatter(out, ids[:, None], data, dn, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode="drop" if mode is None else mode)
    return f


def _lowest(dt):
    dt = _np.dtype(dt) if not str(dt) == "bfloat16" else None
    if dt is None or dt.kind == "f":
        return -_np.inf
    if dt.kind == "b":
        return False
    return _np.iinfo(dt).min


def _highest(dt):
    dt = _np.dtype(dt) if not str(dt) == "bfloat16" else None
    if dt is None or dt.kind == "f":
        return _np.inf
    if dt.kind == "b":
        return True
    return _np.iinfo(dt).max


segment_sum = _segment("add", lambda dt: 0)
segment_prod = _segment("multiply", lambda dt: 1)
segment_max = _segment("max", _lowest)
segment_min = _segment("min", _highest)
for _f, _n in [(segment_sum, "segment_sum"), (segment_prod, "segment_prod"),
               (segment_max, "segment_max"), (segment_min, "segment_min")]:
    _f.__name__ = _n
