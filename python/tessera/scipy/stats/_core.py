"""jax.scipy.stats.mode, rankdata and sem."""
from typing import Any, NamedTuple

import numpy as _np

from tessera import lax as _lax
from tessera import numpy as _jnp


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _check_nan_policy(name, nan_policy, allowed):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: nan_policy must be 'propagate', 'omit' or 'raise', got "
                         f"{nan_policy!r}")
    if nan_policy not in allowed:
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented "
                                  f"in {name}; use nan_policy='propagate'")


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """ModeResult(mode, count): the most frequent value along axis (the smallest on ties, as
    SciPy) and how often it occurs; axis=None flattens. A slice holding NaN has mode NaN."""
    _check_nan_policy("mode", nan_policy, ("propagate",))
    a = _jnp.asarray(a)
    if axis is None:
        a = a.ravel()
        axis = 0
    if a.ndim == 0:
        a = a.reshape(1)
    axis = axis % a.ndim
    if a.shape[axis] == 0:
        raise ValueError(f"mode: the axis {axis} of a (shape {a.shape}) is empty")
    x = _jnp.moveaxis(a, axis, -1)
    equal = x[..., :, None] == x[..., None, :]
    counts = _jnp.sum(equal, axis=-1).astype(_jnp.int32)
    best = _jnp.max(counts, axis=-1, keepdims=True)
    sentinel = (_jnp.finfo(x.dtype).max if _jnp.issubdtype(x.dtype, _jnp.floating)
                else _jnp.iinfo(x.dtype).max)
    candidates = _jnp.where(counts == best, x, _jnp.asarray(sentinel, x.dtype))
    value = _jnp.min(candidates, axis=-1)
    count = best[..., 0]
    if _jnp.issubdtype(x.dtype, _jnp.floating):
        has_nan = _jnp.any(_jnp.isnan(x), axis=-1)
        value = _jnp.where(has_nan, _jnp.asarray(_np.nan, x.dtype), value)
    if keepdims:
        value = _jnp.expand_dims(value, axis)
        count = _jnp.expand_dims(count, axis)
    return ModeResult(value, count)


def _rank_last_axis(x, method):
    n = x.shape[-1]
    order = _jnp.argsort(x, axis=-1, stable=True)
    inverse = _jnp.argsort(order, axis=-1, stable=True)
    if method == "ordinal":
        return inverse + 1
    xs = _jnp.take_along_axis(x, order, axis=-1)
    new_run = _jnp.concatenate([_jnp.ones(x.shape[:-1] + (1,), bool),
                                xs[..., 1:] != xs[..., :-1]], axis=-1)
    if method == "dense":
        dense = _jnp.cumsum(new_run, axis=-1, dtype=_jnp.int32)
        return _jnp.take_along_axis(dense, inverse, axis=-1)
    pos = _lax.broadcasted_iota(_jnp.int32, xs.shape, xs.ndim - 1)
    # the sorted position where each element's run of equal values starts / ends
    start = _lax.cummax(_jnp.where(new_run, pos, 0), axis=xs.ndim - 1)
    run_ends = _jnp.concatenate([new_run[..., 1:], _jnp.ones(x.shape[:-1] + (1,), bool)],
                                axis=-1)
    end = _lax.cummin(_jnp.where(run_ends, pos, n - 1), axis=xs.ndim - 1, reverse=True)
    low = _jnp.take_along_axis(start, inverse, axis=-1) + 1
    high = _jnp.take_along_axis(end, inverse, axis=-1) + 1
    if method == "min":
        return low
    if method == "max":
        return high
    return 0.5 * (low + high)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (1-based) of a's elements, along axis or over the flattened array. Ties:
    'average' (float), 'min', 'max', 'dense' (consecutive) or 'ordinal' (first come first)."""
    _check_nan_policy("rankdata", nan_policy, ("propagate",))
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    a = _jnp.asarray(a)
    if axis is None:
        return _rank_last_axis(a.ravel(), method)
    if a.ndim == 0:
        raise ValueError("rankdata: axis given for a 0-d array")
    axis = axis % a.ndim
    return _jnp.moveaxis(_rank_last_axis(_jnp.moveaxis(a, axis, -1), method), -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n) along axis (axis=None
    flattens); nan_policy='omit' ignores NaNs."""
    _check_nan_policy("sem", nan_policy, ("propagate", "omit"))
    a = _jnp.asarray(a)
    if not _jnp.issubdtype(a.dtype, _jnp.floating):
        a = a.astype(_jnp.result_type(a.dtype, 1.0))
    if nan_policy == "propagate":
        size = a.size if axis is None else a.shape[axis]
        return a.std(axis, ddof=ddof, keepdims=keepdims) / _jnp.sqrt(_jnp.asarray(size, a.dtype))
    count = _jnp.sum(~_jnp.isnan(a), axis=axis, keepdims=keepdims).astype(a.dtype)
    return _jnp.nanstd(a, axis, ddof=ddof, keepdims=keepdims) / _jnp.sqrt(count)
