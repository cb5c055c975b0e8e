"""jnp's histogram family (histogram, histogram_bin_edges, histogram2d, histogramdd), interp,
vectorize (generalized-ufunc signatures over tessera.vmap) and the array-function helpers
piecewise, fill_diagonal, place, apply_along_axis and apply_over_axes, composed from
searchsorted, bincount, scatter (`.at[]`), sort and vmap as JAX composes them.

Counting follows NumPy: a value v lands in bin i when edges[i] <= v < edges[i + 1], the last
bin is closed on the right, and values outside the edges (or NaN) are not counted."""
import builtins as _builtins
import functools as _functools
import math as _math
import operator as _operator
import re as _re
import warnings as _warnings

import numpy as _np

from tessera import _tessera
from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.array import Array as _Array
from tessera.errors import ConcretizationTypeError as _ConcretizationTypeError
from tessera.numpy import _indexing_funcs as _idx


def _is_tracer(x):
    return isinstance(x, _Array) and x._is_tracer


def _any_tracer(xs):
    return _builtins.any(_is_tracer(x) for x in xs)


def _inexact_dtype(*dtypes):
    """JAX's promote_dtypes_inexact: the common dtype, made floating (int -> default float)."""
    dt = _jnp.result_type(*dtypes) if len(dtypes) > 1 else _jnp.dtype(dtypes[0])
    if _idx._inexact(dt):
        return dt
    default = _jnp.float64 if _tessera.x64_enabled() else _jnp.float32
    return _jnp.promote_types(dt, default)


def _host_dtype(dt):
    return _np.float32 if str(dt) == "bfloat16" else _np.dtype(dt)


# ---- histograms ----
def _bin_count(name, bins):
    """An int bin count, which must be concrete (it sets the output's shape)."""
    if _is_tracer(bins):
        raise _ConcretizationTypeError(
            f"The bins argument of jnp.{name} must be concrete when it is a number of bins (it "
            f"sets the shape of the result); pass a Python int, or an array of bin edges.")
    try:
        n = _operator.index(bins if not isinstance(bins, (_Array, _np.ndarray)) else
                            _np.asarray(bins).item())
    except TypeError:
        raise TypeError(f"jnp.{name}: bins must be an integer or a 1-D array of bin edges; got "
                        f"{bins!r}") from None
    if n < 1:
        raise ValueError(f"jnp.{name}: `bins` must be positive, when an integer; got {n}")
    return n


def _edges(name, a, bins, range, dt):
    """Bin edges in dtype dt for the 1-D data a (histogram_bin_edges' rules)."""
    if isinstance(bins, str):
        raise NotImplementedError(f"jnp.{name}: string values for `bins` not implemented.")
    if _jnp.ndim(bins) == 1:
        edges = _jnp.asarray(bins).astype(dt)
        if edges.shape[0] == 0:
            raise ValueError(f"jnp.{name}: `bins` must hold at least one edge, when an array")
        if not _is_tracer(edges):
            host = _np.asarray(edges)
            if _np.any(host[:-1] > host[1:]):
                raise ValueError(f"jnp.{name}: `bins` must increase monotonically, when an "
                                 "array")
        return edges
    if _jnp.ndim(bins) != 0:
        raise ValueError(f"jnp.{name}: bins must be an integer or a 1-D array of edges; got an "
                         f"array of shape {_jnp.shape(bins)}")
    n = _bin_count(name, bins)
    if range is None:
        if a.size == 0:
            lo, hi = 0.0, 1.0  # NumPy's range for empty data
        elif _is_tracer(a):
            lo, hi = _jnp.min(a), _jnp.max(a)
        else:
            host = _np.asarray(a.astype(_host_dtype(dt)))
            lo, hi = host.min().item(), host.max().item()
    else:
        if isinstance(range, (_Array, _np.ndarray)) and range.shape != (2,) or \
                not isinstance(range, (_Array, _np.ndarray)) and len(range) != 2:
            raise ValueError(f"`range` must be either None or a sequence of scalars, got "
                             f"{range}")
        lo, hi = range[0], range[1]
    if not _any_tracer((lo, hi)):
        lo, hi = float(_np.asarray(lo)), float(_np.asarray(hi))
        if lo > hi:
            raise ValueError(f"jnp.{name}: max must be larger than min in range parameter; got "
                             f"range=({lo}, {hi})")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        # NumPy's edges: a double-precision linspace rounded to dt.
        return _jnp.asarray(_np.linspace(lo, hi, n + 1).astype(_host_dtype(dt))).astype(dt)
    lo = _jnp.asarray(lo).astype(dt)
    hi = _jnp.asarray(hi).astype(dt)
    same = lo == hi
    lo, hi = _jnp.where(same, lo - 0.5, lo), _jnp.where(same, hi + 0.5, hi)
    step = (hi - lo) / n
    edges = lo + _jnp.arange(n + 1, dtype=dt) * step
    return edges.at[n].set(hi)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges jnp.histogram uses: bins itself (as a float array) when it is an array, else
    bins + 1 evenly spaced edges over range (default: the data's min and max)."""
    a = _jnp.asarray(a)
    return _edges("histogram_bin_edges", _jnp.ravel(a), bins, range, _inexact_dtype(a.dtype))


def _bin_index(x, edges):
    """1-based bin of each x (0: below the first edge, len(edges): above the last or NaN), the
    last edge counting in the last bin."""
    i = _idx.searchsorted(edges, x, side="right")
    return _jnp.where(x == edges[-1], edges.shape[0] - 1, i)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(hist, bin_edges) as jnp.histogram: hist has the float dtype of a (and weights);
    density=True divides by the bin widths and the total."""
    a = _jnp.asarray(a)
    if weights is None:
        dt = _inexact_dtype(a.dtype)
        w = _jnp.ones(a.shape, dt)
    else:
        w = _jnp.asarray(weights)
        if w.shape != a.shape:
            raise ValueError(f"weights should have the same shape as a. (jnp.histogram: got "
                             f"a.shape={a.shape}, weights.shape={w.shape})")
        dt = _inexact_dtype(a.dtype, w.dtype)
        w = w.astype(dt)
    a = _jnp.ravel(a).astype(dt)
    edges = _edges("histogram", a, bins, range, dt)
    k = edges.shape[0]
    idx = _bin_index(a, edges)
    counts = _jnp.zeros((k,), dt).at[idx].add(_jnp.ravel(w), mode="drop")[1:]
    if density:
        counts = counts / _idx.diff(edges) / _jnp.sum(counts)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(hist, [edges per dimension]) for an (N, D) sample, as jnp.histogramdd: integer counts
    without weights or density (as JAX), floating ones otherwise."""
    sample = _jnp.asarray(sample)
    if sample.ndim != 2:
        raise ValueError(f"jnp.histogramdd: sample must be a 2-D array of shape (N, D); got "
                         f"shape {sample.shape}")
    N, D = sample.shape
    dt = _inexact_dtype(sample.dtype)
    if weights is not None:
        weights = _jnp.asarray(weights)
        if weights.shape != (N,):
            raise ValueError(f"should have one weight for each sample. (jnp.histogramdd: "
                             f"sample.shape={sample.shape}, weights.shape={weights.shape})")
        dt = _inexact_dtype(sample.dtype, weights.dtype)
        weights = weights.astype(dt)
    sample = sample.astype(dt)
    if range is not None and (len(range) != D or _builtins.any(
            r is not None and _jnp.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs or "
                         f"Nones; got range={range}")
    if isinstance(bins, str):
        raise NotImplementedError("jnp.histogramdd: string values for `bins` not implemented.")
    if not isinstance(bins, (list, tuple)) and _jnp.ndim(bins) == 0:
        per_dim = [bins] * D
    else:
        per_dim = list(bins)
        if len(per_dim) != D:
            raise ValueError(f"should be a bin for each dimension. (jnp.histogramdd: D={D}, "
                             f"got {len(per_dim)} bins)")
    idxs, edges = [], []
    for i in _builtins.range(D):
        col = sample[:, i]
        e = _edges("histogramdd", col, per_dim[i], None if range is None else range[i], dt)
        j = _idx.searchsorted(e, col, side="right")
        idxs.append(_jnp.where(col == e[-1], j - 1, j))
        edges.append(e)
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = _idx.ravel_multi_index(tuple(idxs), nbins, mode="clip")
    hist = _idx.bincount(flat, weights, length=_math.prod(nbins)).reshape(nbins)
    hist = hist[(slice(1, -1),) * D]
    if density:
        hist = hist.astype(dt)
        hist = hist / _jnp.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * D
            shape[i] = e.shape[0] - 1
            hist = hist / _idx.diff(e).reshape(tuple(shape))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(hist, xedges, yedges) for the points (x[i], y[i]), as jnp.histogram2d."""
    x, y = _jnp.asarray(x), _jnp.asarray(y)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"jnp.histogram2d: x and y must be 1-D arrays of the same length; got "
                         f"shapes {x.shape} and {y.shape}")
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb != 1 and nb != 2:  # one array of edges, for both dimensions
        bins = [bins, bins]
    dt = _jnp.result_type(x, y)
    hist, edges = histogramdd(_jnp.stack([x.astype(dt), y.astype(dt)], 1), bins, range, weights,
                              density)
    return hist, edges[0], edges[1]


# ---- interpolation ----
def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional linear interpolation, as jnp.interp: xp increasing (not checked);
    left/right are the values outside [xp[0], xp[-1]] (default fp[0], fp[-1]), or
    'extrapolate' to continue the end segments; with period, x and xp are taken modulo it."""
    x, xp, fp = _jnp.asarray(x), _jnp.asarray(xp), _jnp.asarray(fp)
    if xp.shape != fp.shape or xp.ndim != 1:
        raise ValueError(f"xp and fp must be one-dimensional arrays of equal size (jnp.interp: "
                         f"got shapes {xp.shape} and {fp.shape})")
    if xp.shape[0] == 0:
        raise ValueError("jnp.interp: xp and fp must not be empty (array of sample points is "
                         "empty)")
    dt = _inexact_dtype(x.dtype, xp.dtype)
    x, xp = x.astype(dt), xp.astype(dt)
    fp = fp.astype(_inexact_dtype(fp.dtype))
    ext = {}
    for side, v in (("left", left), ("right", right)):
        if isinstance(v, str):
            if v != "extrapolate":
                raise ValueError(f"the only valid string value of `{side}` is 'extrapolate', "
                                 f"got: {v!r}")
            ext[side] = True
        else:
            ext[side] = False
    if period is not None:
        if _jnp.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        if not _is_tracer(period) and float(_np.asarray(period)) == 0:
            raise ValueError("jnp.interp: period must be a non-zero value")
        period = _jnp.abs(_jnp.asarray(period).astype(dt))
        x = x % period
        xp, fp = _lax.sort_key_val(xp % period, fp)
        xp = _jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = _jnp.concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    if n == 1:
        out = _jnp.broadcast_to(fp[0], x.shape)
    else:
        i = _jnp.clip(_idx.searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1 = xp[i - 1], xp[i]
        f0, f1 = fp[i - 1], fp[i]
        dx = x1 - x0
        # Coincident points: the left value, with a finite (zero) slope for gradients.
        tiny = _np.spacing(_np.finfo(_host_dtype(dt)).eps)
        flat = _jnp.abs(dx) <= tiny
        t = (x - x0) / _jnp.where(flat, 1, dx)
        # The weighted form is exact at both ends of a segment (t = 0 or 1).
        out = _jnp.where(flat, f0, f0 * (1 - t) + f1 * t)
    if period is None:
        if not ext["left"]:
            out = _jnp.where(x < xp[0], fp[0] if left is None else left, out)
        if not ext["right"]:
            out = _jnp.where(x > xp[-1], fp[-1] if right is None else right, out)
    return out


# ---- vectorize ----
_DIM = r"\w+"
_DIMS = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_DIMS}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIG = rf"^{_ARGS}->{_ARGS}$"


def _parse_signature(signature):
    sig = _re.sub(r"\s+", "", signature)
    if not _re.match(_SIG, sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = ([tuple(_re.findall(_DIM, arg)) for arg in _re.findall(_ARG, part)]
                 for part in sig.split("->"))
    return ins, outs


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
