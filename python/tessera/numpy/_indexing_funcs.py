"""jnp's index-producing and index-consuming functions, composed from gather/scatter, sort and
cumsum as JAX composes them: nonzero/argwhere/flatnonzero (static `size` under
transformations), searchsorted (a vectorized binary search: ceil(log2(n + 1)) gathers),
digitize, bincount, unique, partition/argpartition, select, choose, compress, extract, diff,
ediff1d, unravel_index, ravel_multi_index, the *_indices helpers, indices, ix_, put and
put_along_axis."""
import builtins as _builtins
import math as _math
import operator as _operator

import numpy as _np

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.array import Array as _Array
from tessera.errors import ConcretizationTypeError as _ConcretizationTypeError


def _is_tracer(x):
    return isinstance(x, _Array) and x._is_tracer


def _concrete(x, name, what):
    if _is_tracer(x):
        raise _ConcretizationTypeError(
            f"The size argument of jnp.{name} must be statically specified to use jnp.{name} "
            f"within JAX transformations ({what} depends on the values).")
    return _np.asarray(x)


def _inexact(dt):
    return str(dt) == "bfloat16" or _np.dtype(dt).kind == "f"


# ---- nonzero & co. ----
def nonzero(a, *, size=None, fill_value=None):
    a = _jnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar)"
                         " instead.")
    if size is None:
        host = _concrete(a, "nonzero", "the number of nonzero elements")
        return tuple(_jnp.asarray(i.astype(_np.int32)) for i in _np.nonzero(host))
    size = int(size)
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    flat = _jnp.ravel(a) != 0
    n = flat.shape[0]
    pos = _jnp.cumsum(flat.astype(_jnp.int32)) - 1          # output slot of each nonzero
    slot = _jnp.where(flat, pos, size)                       # size: dropped
    found = _jnp.zeros((size,), _jnp.int32).at[slot].set(
        _jnp.arange(n, dtype=_jnp.int32), mode="drop")
    count = _jnp.sum(flat.astype(_jnp.int32))
    valid = _jnp.arange(size, dtype=_jnp.int32) < count
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {a.ndim}; got "
                         f"{fill_value}")
    out = []
    stride = 1
    strides = []
    for d in reversed(a.shape):
        strides.append(stride)
        stride *= d
    strides = strides[::-1]
    for d, (dim, st) in enumerate(zip(a.shape, strides)):
        coord = (found // st) % max(dim, 1)
        f = 0 if fills[d] is None else fills[d]
        out.append(_jnp.where(valid, coord, _jnp.asarray(f, dtype=_jnp.int32)))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(_jnp.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = _jnp.asarray(a)
    if a.ndim == 0:
        a = a.reshape((1,))
        r = _jnp.stack(nonzero(a, size=size, fill_value=fill_value), -1)
        return r[:, :0]
    return _jnp.stack(nonzero(a, size=size, fill_value=fill_value), -1)


# ---- searching ----
def _less(x, y):
    """x < y in JAX's sort order (NaN the largest)."""
    if _inexact(x.dtype):
        return (x < y) | (_jnp.isnan(y) & ~_jnp.isnan(x))
    return x < y


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                         "['left', 'right'].")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"{method!r} is an invalid value for keyword 'method'. Expected one of "
                         "['sort', 'scan', 'scan_unrolled', 'compare_all'].")
    a = _jnp.asarray(a)
    v = _jnp.asarray(v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = a[_jnp.asarray(sorter)]
    dt = _jnp.result_type(a, v)
    a, v = a.astype(dt), v.astype(dt)
    n = a.shape[0]
    lo = _jnp.zeros(v.shape, _jnp.int32)
    hi = _jnp.full(v.shape, n, _jnp.int32)
    if n == 0:
        return lo
    # Invariant: every a[i] with i < lo goes before v, every a[i] with i >= hi after it.
    for _ in range(_math.ceil(_math.log2(n + 1))):
        mid = (lo + hi) // 2
        am = _jnp.take(a, _jnp.clip(mid, 0, n - 1), mode="clip")
        before = _less(am, v) if side == "left" else ~_less(v, am)
        active = lo < hi
        lo = _jnp.where(active & before, mid + 1, lo)
        hi = _jnp.where(active & ~before, mid, hi)
    return lo


def digitize(x, bins, right=False, *, method=None):
    x = _jnp.asarray(x)
    bins = _jnp.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins.shape}")
    if bins.shape[0] == 0:
        return _jnp.zeros(x.shape, _jnp.int32)
    kw = {} if method is None else {"method": method}
    side = "left" if right else "right"
    inc = searchsorted(bins, x, side=side, **kw)
    # Decreasing bins: the reversed bins searched from the same side (NumPy's and JAX's rule).
    dec = bins.shape[0] - searchsorted(bins[::-1], x, side=side, **kw)
    return _jnp.where(bins[-1] >= bins[0], inc, dec)


def bincount(x, weights=None, minlength=0, *, length=None):
    x = _jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    if _np.dtype(x.dtype).kind not in "iub":
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if length is None:
        host = _concrete(x, "bincount", "the output length")
        length = _builtins.max(int(host.max(initial=-1)) + 1, int(minlength))
    length = int(length)
    w = _jnp.ones(x.shape, _jnp.int32) if weights is None else _jnp.asarray(weights)
    dn = _lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    # Negative values count in bin 0, as JAX's bincount clips them.
    ids = _jnp.maximum(x.astype(_jnp.int32), 0)
    return _lax.scatter_add(_jnp.zeros((length,), w.dtype), ids[:, None], w, dn, mode="drop")


# ---- unique, partition ----
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    if axis is not None:
        return _unique_axis(ar, axis, return_index, return_inverse, return_counts, equal_nan,
                            size, fill_value)
    a = _jnp.ravel(_jnp.asarray(ar))
    n = a.shape[0]
    perm = _jnp.argsort(a, stable=True)
    s = a[perm]
    if n == 0:
        first = _jnp.zeros((0,), bool)
    else:
        diff = s[1:] != s[:-1]
        if equal_nan and _inexact(s.dtype):
            diff = diff & ~(_jnp.isnan(s[1:]) & _jnp.isnan(s[:-1]))
        first = _jnp.concatenate([_jnp.ones((1,), bool), diff])
    if size is None:
        (where_first,) = nonzero(first) if n else (_jnp.zeros((0,), _jnp.int32),)
    else:
        (where_first,) = nonzero(first, size=size, fill_value=n)
    k = where_first.shape[0]
    vals = _jnp.take(s, where_first, mode="fill", fill_value=0)
    if size is not None:
        real = where_first < n
        if fill_value is None:
            fill = s[0] if n else _jnp.zeros((), s.dtype)
        else:
            fill = _jnp.asarray(fill_value, dtype=s.dtype)
        vals = _jnp.where(real, vals, fill)
    out = [vals]
    if return_index:
        out.append(_jnp.take(perm, where_first, mode="fill", fill_value=0))
    if return_inverse:
        group = _jnp.cumsum(first.astype(_jnp.int32)) - 1
        inv = _jnp.zeros((n,), _jnp.int32).at[perm].set(group)
        out.append(inv.reshape(_jnp.shape(ar)) if _jnp.ndim(ar) > 0 else inv)
    if return_counts:
        ends = _jnp.concatenate([where_first[1:], _jnp.full((1,), n, _jnp.int32)]) if k else \
            _jnp.zeros((0,), _jnp.int32)
        if size is not None:
            ends = _jnp.minimum(ends, n)
        counts = _jnp.where(where_first < n, ends - where_first, 0)
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(ar, axis, return_index, return_inverse, return_counts, equal_nan, size,
                 fill_value):
    """unique over the slices of ar along axis: the slices are sorted lexicographically (a
    stable lexsort on their elements, first element most significant) and equal neighbours
    merged, as NumPy and JAX do."""
    a = _jnp.asarray(ar)
    if a.ndim == 0:
        raise ValueError(f"jnp.unique: axis {axis} is out of bounds for a 0-dimensional array")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"jnp.unique: axis {axis} is out of bounds for an array of dimension "
                         f"{a.ndim}")
    axis = _operator.index(axis) % a.ndim
    moved = _jnp.moveaxis(a, axis, 0)
    n, rest = moved.shape[0], moved.shape[1:]
    m = _math.prod(rest)
    rows = moved.reshape((n, m))
    if n == 0 or m == 0:
        perm = _jnp.arange(n, dtype=_jnp.int32)
        first = _jnp.arange(n, dtype=_jnp.int32) == 0
    else:
        perm = _jnp.lexsort([rows[:, j] for j in reversed(range(m))]).astype(_jnp.int32)
        srt = rows[perm]
        neq = srt[1:] != srt[:-1]
        if equal_nan and _inexact(srt.dtype):
            neq = neq & ~(_jnp.isnan(srt[1:]) & _jnp.isnan(srt[:-1]))
        first = _jnp.concatenate([_jnp.ones((1,), bool), _jnp.any(neq, axis=1)])
    if size is None:
        host = _concrete(first, "unique", "the number of unique slices")
        where_first = _jnp.asarray(_np.nonzero(host)[0].astype(_np.int32))
    else:
        (where_first,) = nonzero(first, size=size, fill_value=n) if n else \
            (_jnp.full((int(size),), 0, _jnp.int32),)
    k = where_first.shape[0]
    src = _jnp.take(perm, where_first, mode="fill", fill_value=0) if n else where_first
    vals = _jnp.take(rows, src, axis=0, mode="fill", fill_value=0) if n else \
        _jnp.zeros((k, m), rows.dtype)
    if size is not None:
        real = (where_first < n)[:, None]
        if fill_value is None:
            fill = vals[:1] if n else _jnp.zeros((1, m), rows.dtype)
        else:
            fill = _jnp.broadcast_to(_jnp.asarray(fill_value, dtype=rows.dtype),
                                     rest).reshape((1, m))
        vals = _jnp.where(real, vals, fill)
    out = [_jnp.moveaxis(vals.reshape((k,) + rest), 0, axis)]
    if return_index:
        out.append(_jnp.where(where_first < n, src, 0) if size is not None else src)
    if return_inverse:
        group = _jnp.cumsum(first.astype(_jnp.int32)) - 1
        out.append(_jnp.zeros((n,), _jnp.int32).at[perm].set(group))
    if return_counts:
        ends = _jnp.concatenate([where_first[1:], _jnp.full((1,), n, _jnp.int32)]) if k else \
            _jnp.zeros((0,), _jnp.int32)
        ends = _jnp.minimum(ends, n)
        out.append(_jnp.where(where_first < n, ends - where_first, 0))
    return out[0] if len(out) == 1 else tuple(out)


def partition(a, kth, axis=-1):
    """A sorted copy: the kth element is in its sorted place, smaller ones before and larger
    ones after (any order of them is a valid partition; this one is sorted)."""
    a = _jnp.asarray(a)
    n = a.shape[axis]
    if not -n <= int(kth) < n:
        raise ValueError(f"kth={kth} is out of bounds for an axis of size {n}")
    return _jnp.sort(a, axis=axis)


def argpartition(a, kth, axis=-1):
    a = _jnp.asarray(a)
    n = a.shape[axis]
    if not -n <= int(kth) < n:
        raise ValueError(f"kth={kth} is out of bounds for an axis of size {n}")
    return _jnp.argsort(a, axis=axis, stable=True)


# ---- selection ----
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    out = _jnp.asarray(default)
    for c, x in zip(reversed(condlist), reversed(choicelist)):
        c = _jnp.asarray(c)
        if c.dtype != _np.dtype(bool):
            raise TypeError(f"condlist entries must be boolean arrays; got {c.dtype}")
        out = _jnp.where(c, x, out)
    return out


def choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = _jnp.asarray(a)
    n = len(choices)
    if mode == "raise":
        host = _concrete(a, "choose", "mode='raise' checks the index values")
        if host.size and (host.min() < 0 or host.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = _jnp.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrs = _jnp.broadcast_arrays(a, *choices)
    stacked = _jnp.stack(arrs[1:], 0)
    return _jnp.take_along_axis(stacked, arrs[0].astype(_jnp.int32)[None], 0)[0]


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    cond = _jnp.asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    a = _jnp.asarray(a)
    if axis is None:
        a = _jnp.ravel(a)
        axis = 0
    axis = axis % a.ndim
    m = a.shape[axis]
    cond = cond.astype(bool)
    if cond.shape[0] > m:  # numpy: extra trailing entries must be False
        cond = cond[:m]
    elif cond.shape[0] < m:
        cond = _jnp.concatenate([cond, _jnp.zeros((m - cond.shape[0],), bool)])
    (idx,) = nonzero(cond, size=size, fill_value=m)
    moved = _jnp.moveaxis(a, axis, 0)
    taken = _jnp.take(moved, idx, axis=0, mode="fill", fill_value=fill_value)
    return _jnp.moveaxis(taken, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    return compress(_jnp.ravel(condition), _jnp.ravel(arr), size=size, fill_value=fill_value)


# ---- differences ----
def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = _jnp.asarray(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = axis % a.ndim

    def edge(e):
        e = _jnp.asarray(e)
        if e.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            e = _jnp.broadcast_to(e, tuple(shape))
        return e
    parts = ([edge(prepend)] if prepend is not None else []) + [a] + \
        ([edge(append)] if append is not None else [])
    if len(parts) > 1:
        a = _jnp.concatenate(parts, axis=axis)
    for _ in range(n):
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[axis] = slice(1, None)
        lo[axis] = slice(None, -1)
        if a.dtype == _np.dtype(bool):
            a = a[tuple(hi)] != a[tuple(lo)]
        else:
            a = a[tuple(hi)] - a[tuple(lo)]
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    a = _jnp.ravel(_jnp.asarray(ary))
    r = a[1:] - a[:-1]
    parts = []
    if to_begin is not None:
        parts.append(_jnp.ravel(_jnp.asarray(to_begin)).astype(r.dtype))
    parts.append(r)
    if to_end is not None:
        parts.append(_jnp.ravel(_jnp.asarray(to_end)).astype(r.dtype))
    return _jnp.concatenate(parts) if len(parts) > 1 else r


# ---- index arithmetic ----
def unravel_index(indices, shape):
    """As JAX: negative indices count from the end and out-of-range ones are clipped."""
    idx = _jnp.asarray(indices)
    shape = tuple(int(s) for s in shape)
    total = _math.prod(shape)
    if total == 0:
        raise ValueError("cannot unravel index into an empty shape")
    idx = _jnp.clip(_jnp.where(idx < 0, idx + total, idx), 0, total - 1)
    out = []
    for s in reversed(shape):
        out.append(idx % s)
        idx = idx // s
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    idx = [_jnp.asarray(i) for i in multi_index]
    for i in idx:
        if _np.dtype(i.dtype).kind not in "iu":
            raise TypeError(f"only int indices permitted, got {i.dtype}")
    if mode == "raise":
        for i, d in zip(idx, dims):
            host = _concrete(i, "ravel_multi_index", "mode='raise' checks the values")
            if host.size and (host.min() < 0 or host.max() >= d):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idx = [_jnp.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [i % d for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap' or 'clip'")
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    out = None
    for k in order_dims:
        out = idx[k] if out is None else out * dims[k] + idx[k]
    return out


def indices(dimensions, dtype=None, sparse=False):
    dtype = _jnp.int32 if dtype is None else dtype
    dimensions = tuple(int(d) for d in dimensions)
    n = len(dimensions)
    grids = []
    for k, d in enumerate(dimensions):
        shape = [1] * n
        shape[k] = d
        g = _jnp.arange(d, dtype=dtype).reshape(tuple(shape))
        grids.append(g if sparse else _jnp.broadcast_to(g, dimensions))
    return tuple(grids) if sparse else _jnp.stack(grids, 0) if n else _jnp.zeros((0,), dtype)


def ix_(*args):
    n = len(args)
    out = []
    for k, a in enumerate(args):
        a = _jnp.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}")
        if a.dtype == _np.dtype(bool):
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[k] = a.shape[0]
        out.append(a.reshape(tuple(shape)))
    return tuple(out)


def _static_indices(fn, *args):
    return tuple(_jnp.asarray(i.astype(_np.int32)) for i in fn(*args))


def tril_indices(n, k=0, m=None):
    return _static_indices(_np.tril_indices, int(n), int(k), None if m is None else int(m))


def triu_indices(n, k=0, m=None):
    return _static_indices(_np.triu_indices, int(n), int(k), None if m is None else int(m))


def tril_indices_from(arr, k=0):
    s = _jnp.shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(s[0], k, s[1])


def triu_indices_from(arr, k=0):
    s = _jnp.shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(s[0], k, s[1])


def diag_indices(n, ndim=2):
    if n < 0 or ndim < 0:
        raise ValueError(f"n and ndim must be non-negative, got {n} and {ndim}")
    i = _jnp.arange(int(n), dtype=_jnp.int32)
    return (i,) * int(ndim)


def diag_indices_from(arr):
    s = _jnp.shape(arr)
    if len(s) < 2 or any(d != s[0] for d in s):
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


# ---- functional puts ----
def put(a, ind, v, mode=None, *, inplace=True):
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    a = _jnp.asarray(a)
    ind = _jnp.ravel(_jnp.asarray(ind))
    v = _jnp.ravel(_jnp.asarray(v))
    if v.size == 0 or ind.size == 0:
        return a
    if v.shape[0] != ind.shape[0]:  # numpy repeats v to ind's length
        v = _jnp.take(v, _jnp.arange(ind.shape[0]) % v.shape[0])
    if mode is None or mode == "fill":
        mode = "drop"
    elif mode == "wrap":
        ind, mode = ind % a.size, None
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    return _jnp.ravel(a).at[ind].set(v.astype(a.dtype), mode=mode).reshape(a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                         "arrays are immutable. Pass inplace=False to instead return an updated "
                         "array.")
    arr = _jnp.asarray(arr)
    idx = _jnp.asarray(indices)
    if axis is None:
        arr2 = _jnp.ravel(arr)
        return put_along_axis(arr2, _jnp.ravel(idx), _jnp.ravel(_jnp.asarray(values)), 0,
                              inplace=False, mode=mode).reshape(arr.shape)
    axis = axis % arr.ndim
    if idx.ndim != arr.ndim:
        raise ValueError("indices and arr must have the same number of dimensions")
    shape = list(arr.shape)
    shape[axis] = idx.shape[axis]
    idx = _jnp.broadcast_to(idx, tuple(shape))
    key = []
    for d in range(arr.ndim):
        if d == axis:
            key.append(idx)
        else:
            s = [1] * arr.ndim
            s[d] = shape[d]
            key.append(_jnp.arange(shape[d], dtype=_jnp.int32).reshape(tuple(s)))
    vals = _jnp.broadcast_to(_jnp.asarray(values).astype(arr.dtype), tuple(shape))
    return arr.at[tuple(key)].set(vals, mode=mode)
