"""jnp's histogram family (histogram, histogram_bin_edges, histogram2d, histogramdd), interp,
vectorize (generalized-ufunc signatures over tessera.vmap) and the array-function helpers
piecewise, fill_diagonal, place, apply_along_axis and apply_over_axes.

The histograms and interp are the C++ functions of tessera/numpy_index_funcs.h (bound in
python/src/py_index_funcs.cpp); this module keeps their Python signatures (string bins, a
sequence of bins per dimension). vectorize stays in Python — it calls Python functions with
excluded, keyword and None arguments and tuple results, which a flat C++ function cannot see —
and parses its signature with the C++ parser that tessera::numpy::vectorize uses."""
import builtins as _builtins
import functools as _functools
import warnings as _warnings

import numpy as _np

from tessera import _tessera
from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.array import Array as _Array
from tessera.numpy import _indexing_funcs as _idx

_C = _tessera.index_funcs


def _is_tracer(x):
    return isinstance(x, _Array) and x._is_tracer


# ---- histograms ----
def _no_string_bins(name, bins):
    if isinstance(bins, str):
        raise NotImplementedError(f"jnp.{name}: string values for `bins` not implemented.")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges jnp.histogram uses: bins itself (as a float array) when it is an array, else
    bins + 1 evenly spaced edges over range (default: the data's min and max)."""
    _no_string_bins("histogram_bin_edges", bins)
    return _C.histogram_bin_edges(a, bins, range, weights)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(hist, bin_edges) as jnp.histogram: hist has the float dtype of a (and weights);
    density=True divides by the bin widths and the total."""
    _no_string_bins("histogram", bins)
    return _C.histogram(a, bins, range, weights, bool(density))


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(hist, [edges per dimension]) for an (N, D) sample, as jnp.histogramdd: integer counts
    without weights or density (as JAX), floating ones otherwise."""
    _no_string_bins("histogramdd", bins)
    shape = _jnp.shape(sample)
    try:
        per_dim = list(bins)  # a sequence (or 1-D array): one entry per dimension, as JAX
    except TypeError:
        per_dim = [bins]
    else:
        if len(shape) == 2 and len(per_dim) != shape[1]:
            raise ValueError(f"should be a bin for each dimension. (jnp.histogramdd: "
                             f"D={shape[1]}, got {len(per_dim)} bins)")
    hist, edges = _C.histogramdd(sample, per_dim, None if range is None else list(range),
                                 weights, bool(density))
    return hist, list(edges)


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(hist, xedges, yedges) for the points (x[i], y[i]), as jnp.histogram2d: bins is one
    count or array of edges for both dimensions, or a pair of them."""
    _no_string_bins("histogram2d", bins)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    per_dim = list(bins) if n == 2 else [bins]  # other lengths: one array of edges for both
    return _C.histogram2d(x, y, per_dim, None if range is None else list(range), weights,
                          bool(density))


# ---- interpolation ----
def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional linear interpolation, as jnp.interp: xp increasing (not checked);
    left/right are the values outside [xp[0], xp[-1]] (default fp[0], fp[-1]), or
    'extrapolate' to continue the end segments; with period, x and xp are taken modulo it."""
    return _C.interp(x, xp, fp, left, right, period)


# ---- vectorize ----
def _parse_signature(signature):
    """(input core dims, output core dims) as tuples of names (tessera::numpy's parser)."""
    ins, outs = _C.parse_gufunc_signature(signature)
    return list(ins), list(outs)


def _core_sizes(sizes, shape, dims, context, is_input):
    if is_input and len(shape) < len(dims):
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all "
                         f"core dimensions {dims!r} {context}")
    if not is_input and len(shape) != len(dims):
        raise ValueError(f"output shape {shape!r} does not match core dimensions {dims!r} "
                         f"{context}")
    core = shape[len(shape) - len(dims):] if dims else ()
    for d, s in zip(dims, core):
        if sizes.setdefault(d, s) != s:
            raise ValueError(f"inconsistent size for core dimension {d!r}: {s!r} vs "
                             f"{sizes[d]!r} {context}")


def vectorize(pyfunc=None, *, excluded=frozenset(), signature=None):
    """jnp.vectorize: pyfunc, written for one element (or, with a gufunc `signature` such as
    "(n),(n)->()", for arrays of the core shapes), applied over the broadcast leading
    dimensions of its arguments with vmap. Positional indices and keyword names in `excluded`
    are passed through unchanged. Usable as a decorator, bare or with arguments."""
    if pyfunc is None:
        return _functools.partial(vectorize, excluded=excluded, signature=signature)
    if not callable(pyfunc):
        raise TypeError(f"jnp.vectorize: pyfunc must be callable; got {pyfunc!r}")
    excluded = frozenset(excluded)
    if _builtins.any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, but "
                        f"excluded={excluded!r}")
    if _builtins.any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")
    parsed = None if signature is None else _parse_signature(signature)

    @_functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        static_pos = {i: a for i, a in enumerate(args) if i in excluded}
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw = sorted(k for k in kwargs if k not in excluded)
        if dyn_kw and parsed is not None:
            raise TypeError(f"jnp.vectorize with a signature takes its vectorized arguments "
                            f"positionally; got keyword argument(s) {dyn_kw} {context}. Pass "
                            "them positionally, or add their names to excluded.")
        dyn = [a for i, a in enumerate(args) if i not in excluded] + [kwargs[k] for k in dyn_kw]
        npos = len(dyn) - len(dyn_kw)
        if parsed is None:
            in_dims, out_dims = [()] * len(dyn), None
        else:
            in_dims, out_dims = parsed
        # None arguments are passed through, like excluded ones (scalar core only).
        nones = {j for j, a in enumerate(dyn) if a is None}
        if nones and len(in_dims) == len(dyn) and _builtins.any(in_dims[j] != () for j in nones):
            raise ValueError(f"Cannot pass None at locations {nones} with "
                             f"signature={signature!r}")
        live = [j for j in _builtins.range(len(dyn)) if j not in nones]
        if len(in_dims) != len(dyn):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_dims)!r}, "
                            f"got {len(dyn)!r} {context}")
        arrs = [_jnp.asarray(dyn[j]) for j in live]
        dims = [in_dims[j] for j in live]
        sizes = {}
        loop_shapes = []
        for a, d in zip(arrs, dims):
            _core_sizes(sizes, a.shape, d, context, True)
            loop_shapes.append(a.shape[:a.ndim - len(d)])
        bshape = _jnp.broadcast_shapes(*loop_shapes) if loop_shapes else ()
        rank_mode = str(_tessera.config_read("jax_numpy_rank_promotion"))
        if rank_mode != "allow":
            ranks = {len(s) for a, s in zip(arrs, loop_shapes) if a.ndim != 0}
            if len(ranks) > 1:
                msg = (f"operands with shapes {[a.shape for a in arrs]} require rank promotion "
                       f"for jnp.vectorize function with signature {signature}. Set the "
                       "jax_numpy_rank_promotion config option to 'allow' to disable this "
                       "message.")
                if rank_mode == "raise":
                    raise ValueError(msg)
                _warnings.warn(msg)

        def call(*live_args):
            full = list(dyn)
            for j, v in zip(live, live_args):
                full[j] = v
            pos = full[:npos]
            for i in sorted(static_pos):
                pos.insert(i, static_pos[i])
            kw = dict(zip(dyn_kw, full[npos:]))
            out = pyfunc(*pos, **kw, **static_kw)
            if out_dims is not None:
                outs = out if isinstance(out, tuple) else (out,)
                if len(out_dims) > 1 and not isinstance(out, tuple):
                    raise TypeError(f"output must be a tuple when multiple outputs are "
                                    f"expected, got: {out!r}\n{context}")
                if len(outs) != len(out_dims):
                    raise TypeError(f"wrong number of output arguments: expected "
                                    f"{len(out_dims)!r}, got {len(outs)!r} {context}")
                osizes = dict(sizes)
                for o, d in zip(outs, out_dims):
                    _core_sizes(osizes, tuple(_jnp.shape(o)), d, context, False)
            return out

        squeezed, filled = [], []
        for a, s in zip(arrs, loop_shapes):
            filled.append(((1,) * (len(bshape) - len(s)) + tuple(s))[::-1])
            ones = tuple(i for i, n in enumerate(s) if n == 1)
            squeezed.append(_jnp.squeeze(a, axis=ones) if ones else a)
        f = call
        expand = []
        for neg, axis_sizes in enumerate(zip(*filled)):
            in_axes = tuple(None if n == 1 else 0 for n in axis_sizes)
            if _builtins.all(ax is None for ax in in_axes):
                expand.append(len(bshape) - 1 - neg)
            else:
                from tessera import vmap
                f = vmap(f, in_axes)
        out = f(*squeezed)
        if not expand:
            return out
        if isinstance(out, tuple):
            return tuple(_jnp.expand_dims(o, expand) for o in out)
        return _jnp.expand_dims(out, expand)

    return wrapped


# ---- functional helpers ----
def piecewise(x, condlist, funclist, *args, **kw):
    """Where condlist[k] holds, funclist[k] (a function of the element, or a constant); the
    last true condition wins; elsewhere funclist[len(condlist)] if given, else 0. Functions
    are called on scalars, under vmap (as JAX's lax.switch over the elements)."""
    x = _jnp.asarray(x)
    if isinstance(condlist, (_Array, _np.ndarray)) and _jnp.ndim(condlist) == x.ndim or \
            isinstance(condlist, bool):
        condlist = [condlist]
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    conds = _jnp.stack([_jnp.broadcast_to(_jnp.asarray(c), x.shape).astype(bool)
                        for c in condlist], 0)
    # Branch index: 1 + the last true condition, 0 (the default) where none holds.
    hits = _jnp.cumsum(_jnp.concatenate([_jnp.zeros((1,) + x.shape, _jnp.int32),
                                         conds.astype(_jnp.int32)], 0), axis=0)
    which = _jnp.argmax(hits, axis=0).astype(_jnp.int32)
    dt = x.dtype

    def branch(f):
        if callable(f):
            return lambda v: _jnp.asarray(f(v, *args, **kw)).astype(dt)
        return lambda v: _jnp.asarray(f, dtype=dt)
    branches = [branch(f) for f in funclist]
    return vectorize(_lax.switch, excluded=(1,))(which, branches, x)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to val (repeated as needed), as jnp.fill_diagonal with
    inplace=False; wrap=True continues the diagonal below a tall matrix as NumPy does."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False "
                                  "(jnp.fill_diagonal returns the updated array)")
    a = _jnp.asarray(a)
    val = _jnp.ravel(_jnp.asarray(val))
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and _builtins.any(n != a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else _builtins.min(a.shape[1] * a.shape[1], a.size)
    else:
        step = 1 + int(_np.cumprod(a.shape[:-1]).sum())
        end = a.size
    pos = _np.arange(0, end, step, dtype=_np.int32)
    if pos.size == 0:
        return a
    if val.size == 0:
        raise ValueError("jnp.fill_diagonal: val must not be empty")
    vals = _jnp.take(val, _jnp.asarray(_np.arange(pos.size, dtype=_np.int32) % val.size))
    flat = _jnp.ravel(a).at[_jnp.asarray(pos)].set(vals.astype(a.dtype))
    return flat.reshape(a.shape)


def place(arr, mask, vals, *, inplace=True):
    """arr with the positions where mask is true set to vals, in order and repeated
    cyclically, as jnp.place with inplace=False."""
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    arr = _jnp.asarray(arr)
    m = _jnp.ravel(_jnp.asarray(mask)).astype(bool)
    if m.shape[0] != arr.size:
        raise ValueError(f"jnp.place: mask must have the size of arr ({arr.size}); got "
                         f"{m.shape[0]}")
    v = _jnp.ravel(_jnp.asarray(vals))
    n = arr.size
    if n == 0:
        return arr
    if v.size == 0:
        if not _is_tracer(m) and bool(_np.asarray(m).any()):
            raise ValueError("Cannot insert from an empty array!")
        return arr
    (where,) = _idx.nonzero(m, size=n, fill_value=n)
    tiled = _jnp.take(v, _jnp.arange(n, dtype=_jnp.int32) % v.size)
    return _jnp.ravel(arr).at[where].set(tiled.astype(arr.dtype), mode="drop").reshape(arr.shape)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-D slices of arr along axis, with vmap over the other axes."""
    arr = _jnp.asarray(arr)
    nd = arr.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"jnp.apply_along_axis: axis {axis} is out of bounds for an array of "
                         f"dimension {nd}")
    axis %= nd
    from tessera import vmap

    def f(a):
        return func1d(a, *args, **kwargs)
    for i in _builtins.range(1, nd - axis):
        f = vmap(f, in_axes=i, out_axes=-1)
    for _ in _builtins.range(axis):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping the reduced axes (as size 1)."""
    a = _jnp.asarray(a)
    nd = a.ndim
    if isinstance(axes, int):
        axes = (axes,)
    for axis in axes:
        b = _jnp.asarray(func(a, axis))
        if b.ndim == nd:
            a = b
        elif b.ndim == nd - 1:
            a = _jnp.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a
