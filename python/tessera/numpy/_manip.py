"""jax.numpy's array manipulation, padding, diagonals, grids and products over tessera::numpy
(numpy_manip.h), with jax.numpy's signatures."""
import builtins as _builtins
import operator as _operator

import numpy as _np

from tessera import _tessera

_C = _tessera.numpy
_L = _tessera.lax
Array = _tessera.Array


def _dt(d):
    from tessera.numpy import _dt as dt
    return dt(d)


def _asarray(x):
    from tessera.numpy import asarray
    return asarray(x)


def _ints(v):
    if isinstance(v, (tuple, list)):
        return tuple(_operator.index(i) for i in v)
    return (_operator.index(v),)


# ---- axes ----
def swapaxes(a, axis1, axis2):
    return _C.swapaxes(a, _operator.index(axis1), _operator.index(axis2))


def moveaxis(a, source, destination):
    return _C.moveaxis(a, _ints(source), _ints(destination))


def squeeze(a, axis=None):
    return _C.squeeze(a, None if axis is None else _ints(axis))


def expand_dims(a, axis):
    return _C.expand_dims(a, _ints(axis))


def ravel(a, order="C"):
    if order != "C":
        raise NotImplementedError("jnp.ravel: only order='C' is supported")
    return _C.ravel(a)


def _atleast(f):
    def g(*arys):
        outs = [f(x) for x in arys]
        return outs[0] if len(outs) == 1 else outs
    return g


atleast_1d = _atleast(_C.atleast_1d)
atleast_2d = _atleast(_C.atleast_2d)
atleast_3d = _atleast(_C.atleast_3d)


def broadcast_arrays(*args):
    return _C.broadcast_arrays(list(args))


def broadcast_shapes(*shapes):
    return tuple(_np.broadcast_shapes(*shapes))


# ---- joining and splitting ----
def _seq(arrays, name):
    if isinstance(arrays, Array):
        if arrays.ndim == 0:
            raise ValueError(f"jnp.{name}: zero-dimensional arrays cannot be joined")
        return list(arrays)
    return list(arrays)


def _cast_all(arrays, dtype):
    if dtype is None:
        return arrays
    return [_C.astype(x, _dt(dtype)) for x in arrays]


def concatenate(arrays, axis=0, dtype=None):
    xs = _cast_all(_seq(arrays, "concatenate"), dtype)
    if not xs:
        raise ValueError("Need at least one array to concatenate.")
    return _C.concatenate(xs, None if axis is None else _operator.index(axis))


def concat(arrays, /, *, axis=0):
    return concatenate(arrays, axis)


def stack(arrays, axis=0, out=None, dtype=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    xs = _cast_all(_seq(arrays, "stack"), dtype)
    if not xs:
        raise ValueError("Need at least one array to stack.")
    return _C.stack(xs, _operator.index(axis))


def hstack(tup, dtype=None):
    return _C.hstack(_cast_all(_seq(tup, "hstack"), dtype))


def vstack(tup, dtype=None):
    return _C.vstack(_cast_all(_seq(tup, "vstack"), dtype))


row_stack = vstack


def dstack(tup, dtype=None):
    return _C.dstack(_cast_all(_seq(tup, "dstack"), dtype))


def column_stack(tup):
    return _C.column_stack(_seq(tup, "column_stack"))


def _split_points(ios):
    if isinstance(ios, (Array, _np.ndarray)):
        ios = _np.asarray(ios)
        if ios.ndim == 0:
            return int(ios)
        return [int(i) for i in ios]
    if isinstance(ios, (tuple, list)):
        return [_operator.index(i) for i in ios]
    return _operator.index(ios)


def split(ary, indices_or_sections, axis=0):
    return _C.split(ary, _split_points(indices_or_sections), _operator.index(axis))


def array_split(ary, indices_or_sections, axis=0):
    p = _split_points(indices_or_sections)
    if isinstance(p, list):
        return _C.split(ary, p, _operator.index(axis))
    return _C.array_split(ary, p, _operator.index(axis))


def hsplit(ary, indices_or_sections):
    a = _asarray(ary)
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    a = _asarray(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    a = _asarray(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


# ---- repetition, flipping, rolling ----
def tile(A, reps):
    return _C.tile(A, _ints(reps))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    if isinstance(repeats, (Array, _np.ndarray)):
        r = _np.asarray(repeats)
        repeats = int(r) if r.ndim == 0 else [int(i) for i in r.reshape(-1)]
    elif isinstance(repeats, (tuple, list)):
        repeats = [_operator.index(i) for i in repeats]
    else:
        repeats = _operator.index(repeats)
    out = _C.repeat(a, repeats, None if axis is None else _operator.index(axis))
    if total_repeat_length is not None:
        ax = 0 if axis is None else _operator.index(axis) % _builtins.max(out.ndim, 1)
        n = out.shape[ax]
        if n > total_repeat_length:  # as JAX: truncate, or pad by repeating the last element
            out = _L.slice_in_dim(out, 0, total_repeat_length, 1, ax)
        elif n < total_repeat_length:
            if n == 0:
                raise ValueError("jnp.repeat: cannot pad an empty result to total_repeat_length")
            last = _L.slice_in_dim(out, n - 1, n, 1, ax)
            reps = [1] * out.ndim
            reps[ax] = total_repeat_length - n
            out = _C.concatenate([out, _C.tile(last, reps)], ax)
    return out


def flip(m, axis=None):
    return _C.flip(m, None if axis is None else _ints(axis))


fliplr = _C.fliplr
flipud = _C.flipud


def roll(a, shift, axis=None):
    if axis is None:
        s = _np.asarray(shift)
        if s.ndim != 0:  # NumPy: a sequence of shifts with axis=None sums them
            shift = int(s.sum())
        return _C.roll(a, _operator.index(int(shift)), None)
    shifts, axes = _np.broadcast_arrays(_np.asarray(shift), _np.asarray(axis))
    return _C.roll(a, [int(s) for s in shifts.reshape(-1)], [int(x) for x in axes.reshape(-1)])


def rot90(m, k=1, axes=(0, 1)):
    ax = _ints(axes)
    if len(ax) != 2:
        raise ValueError("len(axes) must be 2.")
    return _C.rot90(m, _operator.index(k), ax[0], ax[1])


# ---- padding ----
_PAD_KWARGS = {
    "constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
    "linear_ramp": {"end_values"}, "maximum": {"stat_length"}, "minimum": {"stat_length"},
    "mean": {"stat_length"}, "median": {"stat_length"}, "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
}


def _has_big_int(v):
    """Whether a nested sequence holds a Python int outside int64 (NumPy makes those float64
    or object arrays, which must not be silently rounded or wrapped)."""
    if isinstance(v, int):
        return not -2**63 <= v < 2**63
    if isinstance(v, (tuple, list)):
        return any(_has_big_int(e) for e in v)
    return False


def _pairs(v, ndim, name, as_int=True):
    """NumPy's broadcasting of a pad argument to one (before, after) pair per axis."""
    arr = _np.asarray(v)
    if as_int:
        if _has_big_int(v) or (arr.dtype.kind == "u" and arr.size and int(arr.max()) >= 2**63):
            raise OverflowError(f"[pad] `{name}` {v!r} does not fit in a 64-bit signed integer; "
                                "pad widths must lie in [-2**63, 2**63 - 1]")
        if arr.dtype.kind not in "iub":
            raise TypeError(f"[pad] `{name}` must be of integral type; got {v!r}")
        arr = arr.astype(_np.int64)
    try:
        return _np.broadcast_to(arr, (ndim, 2)).tolist()
    except ValueError:
        raise ValueError(f"jnp.pad: `{name}` of shape {arr.shape} cannot be broadcast to "
                         f"({ndim}, 2), one (before, after) pair per axis") from None


def pad(array, pad_width, mode="constant", **kwargs):
    """jnp.pad with NumPy's pad_width forms and modes; constant_values, end_values and
    stat_length may differ per axis and side, as in NumPy."""
    x = _asarray(array)
    if callable(mode):
        raise NotImplementedError("jnp.pad: a callable mode is not supported by Tessera")
    if mode not in _PAD_KWARGS:
        raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - _PAD_KWARGS[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if x.ndim == 0:
        if _np.any(_np.asarray(pad_width) != 0):
            raise ValueError("jnp.pad: a rank-0 array cannot be padded")
        return x
    widths = _pairs(pad_width, x.ndim, "pad_width")
    if any(w < 0 for p in widths for w in p):
        raise ValueError("index can't contain negative values")
    cv = kwargs.get("constant_values", 0) if mode == "constant" else 0
    if isinstance(cv, Array) and cv.ndim == 0:
        # Possibly traced: lax.pad takes the padding value as an operand.
        v = _L.convert_element_type(cv, x._dtype_name)
        return _L.pad(x, v, [(b, a, 0) for b, a in widths])
    rt = kwargs.get("reflect_type", "even")
    if rt not in ("even", "odd"):
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got {rt!r}")
    # NumPy's per-side forms, broadcast here; the core pads (numpy_manip.h).
    cvs = _pairs(cv, x.ndim, "constant_values", as_int=False)
    evs = _pairs(kwargs.get("end_values", 0), x.ndim, "end_values", as_int=False)
    sl = kwargs.get("stat_length")
    sls = None if sl is None else _pairs(sl, x.ndim, "stat_length")
    return _C.pad(x, widths, mode, cvs, evs, sls, rt)


# ---- diagonals, triangles, grids ----
def diagonal(a, offset=0, axis1=0, axis2=1):
    return _C.diagonal(a, _operator.index(offset), _operator.index(axis1),
                       _operator.index(axis2))


def diag(v, k=0):
    return _C.diag(v, _operator.index(k))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    return _C.trace(a, _operator.index(offset), _operator.index(axis1), _operator.index(axis2),
                    _dt(dtype))


def tril(m, k=0):
    return _C.tril(m, _operator.index(k))


def triu(m, k=0):
    return _C.triu(m, _operator.index(k))


def tri(N, M=None, k=0, dtype=None):
    return _C.tri(_operator.index(N), None if M is None else _operator.index(M),
                  _operator.index(k), _dt(dtype))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    return _C.meshgrid(list(xi), indexing, bool(sparse))


# ---- products ----
def _pref(out, preferred_element_type):
    if preferred_element_type is None:
        return out
    return _C.astype(out, _dt(preferred_element_type))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise TypeError("tensordot axes argument must be an int or a pair of sequences")
        axes = (_ints(axes[0]), _ints(axes[1]))
    else:
        axes = _operator.index(axes)
    return _pref(_C.tensordot(a, b, axes), preferred_element_type)


def outer(a, b, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    return _C.outer(a, b)


def inner(a, b, *, precision=None, preferred_element_type=None):
    return _pref(_C.inner(a, b), preferred_element_type)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    return _pref(_C.vdot(a, b), preferred_element_type)


kron = _C.kron

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_subscripts(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) -> ("...", operands)."""
    def letters(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += "..."
            else:
                out += _LETTERS[_operator.index(s)]
        return out
    operands, subs = [], []
    args = list(args)
    while len(args) >= 2:
        operands.append(args.pop(0))
        subs.append(letters(args.pop(0)))
    spec = ",".join(subs)
    if args:
        spec += "->" + letters(args[0])
    return spec, operands


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts((subscripts,) + operands)
    return _C.einsum(subscripts.replace(" ", ""), list(operands), _dt(preferred_element_type))
