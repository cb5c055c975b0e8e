"""jax.numpy's everyday extras, composed from tessera.numpy and tessera.lax so that jit, vmap
and grad compose: statistics (average, cov, corrcoef), polynomials (polyval, polyadd, polysub,
polymul, polyder, polyint), trapezoid, cross, gradient, logspace/geomspace/vander, the set
functions (isin, setdiff1d, union1d, intersect1d, setxor1d; static `size` under
transformations), packbits/unpackbits, i0, gcd/lcm, frexp/ldexp/modf/spacing, angle, the dtype
predicates (can_cast, issubdtype, isdtype), block, fromfunction, frombuffer, the array-API
products (matrix_transpose, vecdot, matvec, vecmat), unstack/permute_dims, bitwise_count,
trim_zeros, delete/insert/append/resize, mask_indices, rollaxis, convolve/correlate,
einsum_path and frompyfunc (a jnp.ufunc).

Data-dependent output shapes follow JAX: concrete inputs work eagerly, traced ones need the
static `size` argument (else JAX's ConcretizationTypeError)."""
import builtins as _builtins
import functools as _functools
import math as _math
import operator as _operator

import numpy as _np

from tessera import _tessera
from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src import dtypes as _dtypes
from tessera._src.array import Array as _Array
from tessera.errors import ConcretizationTypeError as _ConcretizationTypeError
from tessera.numpy import _indexing_funcs as _idx

# NumPy's abstract scalar types, as jax.numpy exports them.
generic, number, inexact, floating, complexfloating = (
    _np.generic, _np.number, _np.inexact, _np.floating, _np.complexfloating)
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger


# ---- helpers ----
def _is_tracer(x):
    return isinstance(x, _Array) and x._is_tracer


def _kind(dt):
    return "f" if str(dt) == "bfloat16" else _np.dtype(dt).kind


def _default_float():
    return _jnp.float64 if _tessera.x64_enabled() else _jnp.float32


def _promote(*xs):
    """JAX's promote_dtypes: Arrays of the common dtype (weak types as jnp's result_type)."""
    xs = [_jnp.asarray(x) for x in xs]
    dt = _jnp.result_type(*xs)
    return [x if x.dtype == dt else x.astype(dt) for x in xs]


def _promote_inexact(*xs):
    """JAX's promote_dtypes_inexact: the common dtype, integers and bools made floating."""
    xs = [_jnp.asarray(x) for x in xs]
    dt = _jnp.result_type(*xs)
    if _kind(dt) not in "fc":
        dt = _jnp.promote_types(dt, _default_float())
    return [x if x.dtype == dt else x.astype(dt) for x in xs]


def _axis(axis, ndim):
    a = _operator.index(axis)
    if not -ndim <= a < _builtins.max(ndim, 1):
        raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


def _concrete_or_error(x, name, what):
    if _is_tracer(x):
        raise _ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: jnp.{name} "
            f"needs a concrete {what} (the shape of its result depends on it). The error arose in "
            f"jnp.{name}().")
    return _np.asarray(x)


# ---- statistics ----
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        (a,) = _promote_inexact(a)
        avg = _jnp.mean(a, axis=axis, keepdims=keepdims)
        n = a.size // _builtins.max(avg.size, 1) if a.size else 0
        wsum = _jnp.full(avg.shape, n, avg.dtype)
    else:
        a, w = _promote_inexact(a, weights)
        if a.shape != w.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if isinstance(axis, (tuple, list)):
                raise ValueError("Single axis expected when shapes of a and weights differ")
            if w.ndim != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            ax = _axis(axis, a.ndim)
            if w.shape[0] != a.shape[ax]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = _jnp.moveaxis(_jnp.broadcast_to(w, (1,) * (a.ndim - 1) + w.shape), -1, ax)
        wsum = _jnp.sum(w, axis=axis, keepdims=keepdims)
        avg = _jnp.sum(a * w, axis=axis, keepdims=keepdims) / wsum
    if returned:
        if wsum.shape != avg.shape:
            wsum = _jnp.broadcast_to(wsum, avg.shape)
        return avg, wsum
    return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    if y is not None:
        m, y = _promote_inexact(m, y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = _promote_inexact(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = _jnp.atleast_2d(m)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return _jnp.zeros((0, 0), x.dtype)
    if y is not None:
        y = _jnp.atleast_2d(y)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = _jnp.concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        f = _jnp.asarray(fweights)
        if f.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if f.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if _kind(f.dtype) not in "iu":
            raise TypeError("fweights must be integer.")
        w = f
    if aweights is not None:
        aw = _jnp.asarray(aweights)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        w = aw if w is None else w * aw
    avg, wsum = average(x, axis=1, weights=w, returned=True)
    wsum = wsum[0]
    if w is None:
        fact = x.shape[1] - ddof
    elif ddof == 0:
        fact = wsum
    elif aweights is None:
        fact = wsum - ddof
    else:
        fact = wsum - ddof * _jnp.sum(w * _jnp.asarray(aweights)) / wsum
    xc = x - avg[:, None]
    xt = xc.T if w is None else (xc * w.astype(xc.dtype)).T
    return _jnp.squeeze(_jnp.matmul(xc, xt) / _jnp.asarray(fact, dtype=xc.dtype))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    c = cov(x, y, rowvar)
    if dtype is not None:
        c = c.astype(dtype)
    if c.ndim == 0:
        return c / c  # a scalar covariance: NaN, or 1 (NumPy's and JAX's answer)
    d = _jnp.diagonal(c)
    s = _jnp.sqrt(d)
    c = c / s[:, None] / s[None, :]
    return _jnp.clip(c, -1, 1)


# ---- polynomials ----
def polyval(p, x, *, unroll=16):
    p, x = _promote_inexact(p, x)
    shape = _jnp.broadcast_shapes(p.shape[1:], x.shape)
    y = _jnp.zeros(shape, x.dtype)
    for i in range(p.shape[0]):  # Horner; the length is static
        y = y * x + p[i]
    return y


def polyadd(a1, a2):
    a1, a2 = _promote(a1, a2)
    if a2.shape[0] > a1.shape[0]:
        a1, a2 = a2, a1
    if a2.shape[0] == 0:
        return a1 + _jnp.zeros(a2.shape[1:], a1.dtype)
    return a1.at[a1.shape[0] - a2.shape[0]:].add(a2)


def polysub(a1, a2):
    a1, a2 = _promote(a1, a2)
    return polyadd(a1, -a2)


def polymul(a1, a2, *, trim_leading_zeros=False):
    a1, a2 = _promote_inexact(a1, a2)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = _jnp.zeros((1,), a2.dtype)
    if a2.shape[0] == 0:
        a2 = _jnp.zeros((1,), a1.dtype)
    return convolve(a1, a2, mode="full")


def _static_order(m, name):
    if _is_tracer(m):
        raise _ConcretizationTypeError(f"The 'm' argument of jnp.{name} must be concrete.")
    return _operator.index(m)


def polyder(p, m=1):
    m = _static_order(m, "polyder")
    (p,) = _promote_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    # coefficient of x**j (j = n - 1 - i) gets j (j - 1) ... (j - m + 1)
    coeff = _np.ones(_builtins.max(n - m, 0))
    for i in range(n - m):
        j = n - 1 - i
        coeff[i] = _math.prod(range(j - m + 1, j + 1))
    return p[:_builtins.max(n - m, 0)] * _jnp.asarray(coeff, dtype=p.dtype)


def polyint(p, m=1, k=None):
    m = _static_order(m, "polyint")
    p, k = _promote_inexact(p, 0 if k is None else k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = _jnp.atleast_1d(k)
    if k.shape[0] == 1:
        k = _jnp.full((m,), k[0], k.dtype) if m else k[:0]
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    n = p.shape[0]
    out = _jnp.concatenate([p, k])
    # x**j integrated m times: divide by (j + 1) ... (j + m); constants k[i] sit at degree m-1-i
    coeff = _np.ones(n + m)
    for i in range(n + m):
        j = n + m - 1 - i  # degree after integration
        coeff[i] = _math.prod(range(_builtins.max(j - m + 1, 1), j + 1))
    return out / _jnp.asarray(coeff, dtype=p.dtype)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    if x is None:
        (y,) = _promote_inexact(y)
        d = _jnp.asarray(dx, dtype=y.dtype) if not isinstance(dx, _Array) else dx
    else:
        y, x = _promote_inexact(y, x)
        if x.ndim == 1:
            d = _jnp.diff(x)
        else:
            d = _jnp.moveaxis(_jnp.diff(x, axis=axis), axis, -1)
    y = _jnp.moveaxis(y, axis, -1)
    return 0.5 * _jnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _promote(a, b)
    a = _jnp.moveaxis(a, axisa, -1)
    b = _jnp.moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else _jnp.zeros_like(a0)
    b2 = b[..., 2] if b.shape[-1] == 3 else _jnp.zeros_like(b0)
    c = _jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return _jnp.moveaxis(c, -1, axisc)


# ---- sequences ----
def _linspace(start, stop, num, endpoint, dtype, axis):
    """linspace with array endpoints (broadcast), the result computed in `dtype`."""
    num = _operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _promote_inexact(start, stop)
    s, e = _jnp.broadcast_arrays(s, e)
    div = (num - 1) if endpoint else num
    steps = _jnp.arange(num, dtype=s.dtype).reshape((num,) + (1,) * s.ndim)
    if div > 0:
        out = s[None] + steps * ((e - s)[None] / div)
        if endpoint and num > 1:
            out = _jnp.concatenate([out[:-1], e[None]], axis=0)
    else:
        out = _jnp.broadcast_to(s[None], (num,) + s.shape)
    return _jnp.moveaxis(out, 0, axis)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    dt = dtype if dtype is not None else _jnp.result_type(
        *_promote_inexact(start, stop))
    lin = _linspace(start, stop, num, endpoint, dt, axis)
    out = _jnp.power(_jnp.asarray(base, dtype=lin.dtype), lin)
    return out.astype(dtype) if dtype is not None else out


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    s, e = _promote_inexact(start, stop)
    if not (_is_tracer(s) or _is_tracer(e)):
        if _np.any(_np.asarray(s) == 0) or _np.any(_np.asarray(e) == 0):
            raise ValueError("Geometric sequence cannot include zero")
    # Both ends negative: a positive sequence, negated.
    flip = 1 - (1 - _jnp.sign(s)) * (1 - _jnp.sign(e)) // 2
    lin = _linspace(_jnp.log10(flip * s), _jnp.log10(flip * e), num, endpoint, s.dtype, 0)
    out = _jnp.power(_jnp.asarray(10.0, dtype=lin.dtype), lin) * flip
    n = out.shape[0]
    if n > 0:  # exact ends, as NumPy
        s_b, e_b = _jnp.broadcast_arrays(s, e)
        parts = [s_b[None]]
        if n > 2:
            parts.append(out[1:-1] if endpoint else out[1:])
        elif n == 2 and not endpoint:
            parts.append(out[1:])
        if endpoint and n > 1:
            parts.append(e_b[None])
        out = _jnp.concatenate(parts, axis=0)
    out = _jnp.moveaxis(out, 0, axis)
    return out.astype(dtype) if dtype is not None else out


def vander(x, N=None, increasing=False):
    x = _jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else _operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = _np.arange(N) if increasing else _np.arange(N - 1, -1, -1)
    dt = x.dtype if _kind(x.dtype) != "b" else _jnp.int32
    return _jnp.power(x[:, None].astype(dt), _jnp.asarray(powers, dtype=dt)[None, :])


def gradient(f, *varargs, axis=None, edge_order=None):
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    (f,) = _promote_inexact(f)
    if axis is None:
        axes = tuple(range(f.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(_axis(a, f.ndim) for a in axis)
    else:
        axes = (_axis(axis, f.ndim),)
    if not axes:
        return []
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and _np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments %d" % len(varargs))
    out = []
    for ax, h in zip(axes, spacings):
        if f.shape[ax] < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        g = _jnp.moveaxis(f, ax, -1)
        if _np.ndim(h) == 0:
            h = _jnp.asarray(h, dtype=f.dtype)
            first = (g[..., 1:2] - g[..., 0:1]) / h
            last = (g[..., -1:] - g[..., -2:-1]) / h
            mid = (g[..., 2:] - g[..., :-2]) / (2 * h)
        else:
            (xs,) = _promote_inexact(h)
            xs = xs.astype(f.dtype)
            if xs.ndim != 1 or xs.shape[0] != g.shape[-1]:
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            dx = _jnp.diff(xs)
            first = (g[..., 1:2] - g[..., 0:1]) / dx[0]
            last = (g[..., -1:] - g[..., -2:-1]) / dx[-1]
            d1, d2 = dx[:-1], dx[1:]
            mid = (-d2 / (d1 * (d1 + d2)) * g[..., :-2] + (d2 - d1) / (d1 * d2) * g[..., 1:-1]
                   + d1 / (d2 * (d1 + d2)) * g[..., 2:])
        out.append(_jnp.moveaxis(_jnp.concatenate([first, mid, last], -1), -1, ax))
    return out[0] if len(out) == 1 else out


# ---- set functions ----
def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                         "'binary_search', 'sort', and 'auto'")
    e, t = _promote(element, test_elements)
    flat, tf = _jnp.ravel(e), _jnp.ravel(t)
    if flat.shape[0] == 0 or tf.shape[0] == 0:
        found = _jnp.zeros(flat.shape, bool)
    elif method in ("binary_search", "sort"):
        st = _jnp.sort(tf)
        i = _jnp.clip(_idx.searchsorted(st, flat), 0, st.shape[0] - 1)
        found = st[i] == flat
    else:
        found = _jnp.any(flat[:, None] == tf[None, :], axis=-1)
    found = found.reshape(e.shape)
    return ~found if invert else found


def _sorted_with_first(a):
    """a sorted, and a mask of each value's first occurrence (NaNs equal, as jnp.unique)."""
    s = _jnp.sort(a)
    n = s.shape[0]
    if n == 0:
        return s, _jnp.zeros((0,), bool)
    diff = s[1:] != s[:-1]
    if _kind(s.dtype) == "f":
        diff = diff & ~(_jnp.isnan(s[1:]) & _jnp.isnan(s[:-1]))
    return s, _jnp.concatenate([_jnp.ones((1,), bool), diff])


def _compact(name, vals, keep, size, fill_value, default_fill):
    """vals[keep] (concrete keep), or its first `size` entries padded with a fill value."""
    if size is None:
        host = _concrete_or_error(keep, name, "set of values")
        return vals[_jnp.asarray(_np.nonzero(host)[0].astype(_np.int32))]
    size = _operator.index(size)
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    n = vals.shape[0]
    if n == 0:
        return _jnp.full((size,), 0 if fill_value is None else fill_value, vals.dtype)
    (where,) = _idx.nonzero(keep, size=size, fill_value=n)
    out = _jnp.take(vals, _jnp.minimum(where, n - 1))
    count = _jnp.sum(keep.astype(_jnp.int32))
    valid = _jnp.arange(size, dtype=_jnp.int32) < count
    fill = default_fill(out, valid) if fill_value is None else _jnp.asarray(fill_value,
                                                                            dtype=vals.dtype)
    return _jnp.where(valid, out, fill)


def _smallest(out, valid):
    """The smallest value of the result (0 when it is empty): JAX's default fill."""
    if out.shape[0] == 0:
        return _jnp.zeros((), out.dtype)
    big = _jnp.max(_jnp.where(valid, out, out[0]))
    lo = _jnp.min(_jnp.where(valid, out, big))
    return _jnp.where(valid[0], lo, _jnp.zeros((), out.dtype))


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    a1, a2 = _promote(_jnp.ravel(_jnp.asarray(ar1)), _jnp.ravel(_jnp.asarray(ar2)))
    if assume_unique:
        vals, keep = a1, isin(a1, a2, invert=True)
    else:
        vals, first = _sorted_with_first(a1)
        keep = first & isin(vals, a2, invert=True)
    return _compact("setdiff1d", vals, keep, size,
                    0 if fill_value is None else fill_value, None)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    a = _jnp.concatenate([_jnp.ravel(_jnp.asarray(ar1)), _jnp.ravel(_jnp.asarray(ar2))])
    if size is None:
        vals, keep = _sorted_with_first(a)
        return _compact("union1d", vals, keep, None, None, None)
    return _idx.unique(a, size=size, fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    a1, a2 = _promote(_jnp.ravel(_jnp.asarray(ar1)), _jnp.ravel(_jnp.asarray(ar2)))
    perm1 = _jnp.argsort(a1, stable=True)
    s1 = a1[perm1]
    if s1.shape[0]:
        diff = s1[1:] != s1[:-1]
        first = _jnp.concatenate([_jnp.ones((1,), bool), diff])
    else:
        first = _jnp.zeros((0,), bool)
    keep = first & isin(s1, a2)
    vals = _compact("intersect1d", s1, keep, size, fill_value, _smallest)
    if not return_indices:
        return vals
    n1, n2 = a1.shape[0], a2.shape[0]
    i1 = _compact("intersect1d", perm1, keep, size, n1, None)
    if n2 == 0:
        i2 = _jnp.full(i1.shape, n2, _jnp.int32)
    else:
        perm2 = _jnp.argsort(a2, stable=True)
        s2 = a2[perm2]
        pos = _jnp.clip(_idx.searchsorted(s2, vals), 0, n2 - 1)
        i2 = perm2[pos]
        if size is not None:
            count = _jnp.sum(keep.astype(_jnp.int32))
            i2 = _jnp.where(_jnp.arange(i1.shape[0]) < count, i2, n2)
    return vals, i1.astype(_jnp.int32), i2.astype(_jnp.int32)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    a1, a2 = _promote(_jnp.ravel(_jnp.asarray(ar1)), _jnp.ravel(_jnp.asarray(ar2)))
    vals, first = _sorted_with_first(_jnp.concatenate([a1, a2]))
    keep = first & (isin(vals, a1) != isin(vals, a2))
    return _compact("setxor1d", vals, keep, size, fill_value, _smallest)


# ---- bits ----
def _shifts(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    s = _np.arange(8, dtype=_np.uint8)
    return _jnp.asarray(s if bitorder == "little" else s[::-1])


def packbits(a, axis=None, bitorder="big"):
    a = _jnp.asarray(a)
    if _kind(a.dtype) not in "biu":
        raise TypeError(f"Expected an input array of integer or boolean data type; got {a.dtype}")
    shifts = _shifts(bitorder)
    bits = (a != 0).astype(_jnp.uint8)
    if axis is None:
        bits, ax = _jnp.ravel(bits), 0
    else:
        ax = _axis(axis, a.ndim)
    bits = _jnp.moveaxis(bits, ax, -1)
    rem = bits.shape[-1] % 8
    if rem:
        bits = _jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, 8 - rem)])
    bits = bits.reshape(bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    packed = _jnp.sum(_jnp.left_shift(bits, shifts), axis=-1, dtype=_jnp.uint8)
    return _jnp.moveaxis(packed, -1, ax)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    a = _jnp.asarray(a)
    if a.dtype != _np.uint8:
        raise TypeError(f"Expected an input array of unsigned byte data type; got {a.dtype}")
    shifts = _shifts(bitorder)
    bits = _jnp.right_shift(a[..., None], shifts) & _jnp.asarray(1, _jnp.uint8)
    if axis is None:
        bits, ax = _jnp.ravel(bits), 0
    else:
        ax = _axis(axis, a.ndim)
        bits = _jnp.moveaxis(bits, ax, -2)
        bits = bits.reshape(bits.shape[:-2] + (-1,))
    if count is not None:
        count = _operator.index(count)
        n = bits.shape[-1]
        if count > n:
            bits = _jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - n)])
        else:
            bits = bits[..., :count]
    return _jnp.moveaxis(bits, -1, ax)


def bitwise_count(x, /):
    x = _jnp.asarray(x)
    if _kind(x.dtype) not in "iu":
        raise TypeError(f"bitwise_count requires an integer argument; got {x.dtype}")
    return _lax.population_count(_jnp.abs(x)).astype(_jnp.uint8)


# ---- elementwise math ----
def i0(x):
    (x,) = _promote_inexact(x)
    ax = _jnp.abs(x)
    return _jnp.exp(ax) * _lax.bessel_i0e(ax)


def _require_int(name, *xs):
    for x in xs:
        if _kind(x.dtype) not in "iu":
            raise TypeError(f"Arguments to jax.numpy.{name} must be integers.")


def gcd(x1, x2, /):
    x1, x2 = _promote(x1, x2)
    _require_int("gcd", x1, x2)
    a, b = _jnp.broadcast_arrays(_jnp.abs(x1), _jnp.abs(x2))

    def cond(c):
        return _jnp.any(c[1] != 0)

    def body(c):
        a, b = c
        nz = b != 0
        safe = _jnp.where(nz, b, _jnp.ones_like(b))
        return _jnp.where(nz, b, a), _jnp.where(nz, a % safe, _jnp.zeros_like(b))

    return _lax.while_loop(cond, body, (a, b))[0]


def lcm(x1, x2, /):
    x1, x2 = _promote(x1, x2)
    _require_int("lcm", x1, x2)
    d = gcd(x1, x2)
    zero = d == 0
    out = _jnp.abs(x1 * (x2 // _jnp.where(zero, _jnp.ones_like(d), d)))
    return _jnp.where(zero, _jnp.zeros_like(out), out)


_FLOAT_BITS = {  # dtype: (int dtype, mantissa bits, exponent bias)
    "float32": (_np.int32, 23, 127),
    "float64": (_np.int64, 52, 1023),
}


def _work_dtype(dt):
    """frexp/ldexp work in float32 for 16-bit floats (exact), in their own dtype otherwise."""
    return "float32" if str(dt) in ("float16", "bfloat16") else str(dt)


def frexp(x, /):
    (x,) = _promote_inexact(x)
    dt = x.dtype
    wd = _work_dtype(dt)
    xw = x.astype(wd)
    idt, nmant, bias = _FLOAT_BITS[wd]
    tiny = _np.finfo(wd).tiny
    sub = (_jnp.abs(xw) < tiny) & (xw != 0)
    scale = nmant + 1
    xs = _jnp.where(sub, xw * _jnp.asarray(2.0 ** scale, wd), xw)
    bits = _lax.bitcast_convert_type(xs, idt)
    expo_field = _lax.shift_right_logical(bits, _jnp.asarray(nmant, idt)) & \
        _jnp.asarray(2 * bias + 1, idt)
    expo = expo_field - (bias - 1) - _jnp.where(sub, _jnp.asarray(scale, idt),
                                                _jnp.asarray(0, idt))
    keep = idt(~((2 * bias + 1) << nmant))  # every bit but the exponent's
    mbits = (bits & _jnp.asarray(keep)) | _jnp.asarray(idt((bias - 1) << nmant))
    mant = _lax.bitcast_convert_type(mbits, wd)
    special = (xw == 0) | _jnp.isinf(xw) | _jnp.isnan(xw)
    mant = _jnp.where(special, xw, mant).astype(dt)
    expo = _jnp.where(special, _jnp.zeros_like(expo), expo).astype(_jnp.int32)
    return mant, expo


def _pow2(k, wd):
    """2.0**k for integer k in the normal range, built from the exponent bits."""
    idt, nmant, bias = _FLOAT_BITS[wd]
    return _lax.bitcast_convert_type(
        _jnp.left_shift((k + bias).astype(idt), _jnp.asarray(nmant, idt)), wd)


def ldexp(x1, x2, /):
    x2 = _jnp.asarray(x2)
    if _kind(x2.dtype) not in "iu":
        raise TypeError(f"ldexp: x2 must be of integer type; got {x2.dtype}")
    (x1,) = _promote_inexact(x1)
    dt = x1.dtype
    wd = _work_dtype(dt)
    idt, nmant, bias = _FLOAT_BITS[wd]
    lim = bias - 1
    e = _jnp.clip(x2.astype(idt), -3 * lim, 3 * lim)
    e1 = e // 3
    r = e - e1
    e2 = r // 2
    e3 = r - e2
    x = x1.astype(wd)
    out = x * _pow2(e1, wd) * _pow2(e2, wd) * _pow2(e3, wd)
    return out.astype(dt)


def modf(x, /):
    (x,) = _promote_inexact(x)
    whole = _jnp.where(x >= 0, _jnp.floor(x), _jnp.ceil(x))
    return x - whole, whole


def spacing(x, /):
    (x,) = _promote_inexact(x)
    toward = _jnp.where(x < 0, _jnp.asarray(-_np.inf, x.dtype), _jnp.asarray(_np.inf, x.dtype))
    out = _jnp.nextafter(x, toward) - x
    return _jnp.where(_jnp.isinf(x), _jnp.asarray(_np.nan, x.dtype), out)


def angle(z, deg=False):
    (z,) = _promote_inexact(z)
    out = _jnp.arctan2(_jnp.zeros_like(z), z)
    return _jnp.rad2deg(out) if deg else out


# ---- dtype predicates ----
def _dtype_like(x):
    """A NumPy dtype, or the bfloat16 dtype object, for a dtype-like or an array."""
    if isinstance(x, _Array) or hasattr(x, "dtype") and not isinstance(x, type) and \
            not isinstance(x, _dtypes._ScalarType):
        x = x.dtype
    if isinstance(x, _dtypes._ScalarType):
        x = x.dtype
    if isinstance(x, _dtypes._BFloat16DType) or (isinstance(x, str) and x == "bfloat16"):
        return _dtypes.bfloat16_dtype
    return _np.dtype(x)


_SAFE_TO_BF16 = ("bool", "int8", "uint8", "bfloat16")


def can_cast(from_, to, casting="safe"):
    f, t = _dtype_like(from_), _dtype_like(to)
    fb, tb = isinstance(f, _dtypes._BFloat16DType), isinstance(t, _dtypes._BFloat16DType)
    if not (fb or tb):
        return bool(_np.can_cast(f, t, casting))
    if casting == "unsafe":
        return True
    if fb and tb:
        return True
    if casting in ("no", "equiv"):
        return False
    if fb:  # bfloat16 -> a wider float
        return str(t) in ("float32", "float64", "complex64", "complex128") or \
            (casting == "same_kind" and _np.dtype(t).kind in "fc")
    return str(f) in _SAFE_TO_BF16 or (casting == "same_kind" and _np.dtype(f).kind in "biuf")


def _abstract_or_dtype(x):
    if isinstance(x, type) and issubclass(x, _np.generic):
        return x
    return _dtype_like(x)


def issubdtype(arg1, arg2):
    from tessera._src import dtypes as _xd
    key = _xd.key_dtype
    if (arg1 is key or (isinstance(arg1, str) and arg1.startswith("key")) or
            arg2 is _xd.prng_key or arg2 is _xd.extended or arg2 is key):
        return _xd.issubdtype(arg1, arg2)  # the extended (PRNG key) dtypes
    a1, a2 = _abstract_or_dtype(arg1), _abstract_or_dtype(arg2)
    b1 = isinstance(a1, _dtypes._BFloat16DType)
    b2 = isinstance(a2, _dtypes._BFloat16DType)
    if b1 or b2:
        if b1 and b2:
            return True
        if b1 and isinstance(a2, type):
            return a2 in (_np.floating, _np.inexact, _np.number, _np.generic)
        return False
    return bool(_np.issubdtype(a1, a2))


_ISDTYPE_KINDS = {
    "bool": lambda d: d == "b",
    "signed integer": lambda d: d == "i",
    "unsigned integer": lambda d: d == "u",
    "integral": lambda d: d in "iu",
    "real floating": lambda d: d == "f",
    "complex floating": lambda d: d == "c",
    "numeric": lambda d: d in "iufc",
}


def isdtype(dtype, kind):
    d = _dtype_like(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise ValueError(f"Unrecognized kind={k!r}; expected one of "
                                 f"{tuple(_ISDTYPE_KINDS)} or a dtype")
            if _ISDTYPE_KINDS[k](_kind(d)):
                return True
        else:
            try:
                other = _dtype_like(k)
            except TypeError:
                raise TypeError(f"Expected kind to be a dtype, string, or tuple; got {k!r}") \
                    from None
            if str(other) == str(d):
                return True
    return False


# ---- construction ----
def block(arrays):
    if isinstance(arrays, tuple):
        raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                        "np.block does not allow implicit conversion from tuple to ndarray.")

    def depth(x):
        if isinstance(x, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                            "np.block does not allow implicit conversion from tuple to ndarray.")
        if not isinstance(x, list):
            return 0, _jnp.ndim(x)
        if not x:
            raise ValueError("List at arrays cannot be empty")
        ds = [depth(e) for e in x]
        if len({d for d, _ in ds}) != 1:
            raise ValueError("List depths are mismatched.")
        return ds[0][0] + 1, _builtins.max(n for _, n in ds)

    list_depth, max_ndim = depth(arrays)
    ndim = _builtins.max(list_depth, max_ndim)

    def build(x, d):
        if not isinstance(x, list):
            x = _jnp.asarray(x)
            return x.reshape((1,) * (ndim - x.ndim) + x.shape)
        return _jnp.concatenate([build(e, d + 1) for e in x], axis=-(list_depth - d))

    return build(arrays, 0)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    shape = tuple(_operator.index(s) for s in (shape if isinstance(shape, (tuple, list))
                                                else (shape,)))
    from tessera._src.api import vmap
    f = _functools.partial(function, **kwargs) if kwargs else function
    n = len(shape)
    for i in range(n):  # vmapped from the last axis out: argument j maps axis j
        in_axes = tuple(0 if j == n - 1 - i else None for j in range(n))
        f = vmap(f, in_axes=in_axes)
    return f(*(_jnp.arange(s, dtype=dtype) for s in shape))


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    d = _dtype_like(dtype) if dtype is not float else _np.dtype(float)
    if isinstance(d, _dtypes._BFloat16DType):
        raw = _np.frombuffer(buffer, dtype=_np.uint16, count=count, offset=offset)
        return _lax.bitcast_convert_type(_jnp.asarray(raw), "bfloat16")
    return _jnp.asarray(_np.frombuffer(buffer, dtype=d, count=count, offset=offset).copy())


# ---- array API products and views ----
def matrix_transpose(x, /):
    x = _jnp.asarray(x)
    if x.ndim < 2:
        raise ValueError("x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={x.ndim}")
    return _jnp.swapaxes(x, -1, -2)


def _pref_cast(preferred_element_type, *xs):
    if preferred_element_type is None:
        return _promote(*xs)
    return [_jnp.asarray(x).astype(preferred_element_type) for x in xs]


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    x1, x2 = _pref_cast(preferred_element_type, x1, x2)
    a1, a2 = _axis(axis, x1.ndim), _axis(axis, x2.ndim)
    if x1.shape[a1] != x2.shape[a2]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"axis={axis}")
    x1, x2 = _jnp.moveaxis(x1, a1, -1), _jnp.moveaxis(x2, a2, -1)
    return _jnp.sum(x1 * x2, axis=-1, dtype=x1.dtype if _kind(x1.dtype) != "b" else None)


def matvec(x1, x2, /):
    x1, x2 = _promote(x1, x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError("matvec: x1 must be at least 2-D and x2 at least 1-D; got shapes "
                         f"{x1.shape} and {x2.shape}")
    return _jnp.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    x1, x2 = _promote(x1, x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError("vecmat: x1 must be at least 1-D and x2 at least 2-D; got shapes "
                         f"{x1.shape} and {x2.shape}")
    return _jnp.matmul(x1[..., None, :], x2)[..., 0, :]


def unstack(x, /, *, axis=0):
    x = _jnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    x = _jnp.moveaxis(x, _axis(axis, x.ndim), 0)
    return tuple(x[i] for i in range(x.shape[0]))


def permute_dims(a, /, axes):
    return _jnp.transpose(a, axes)


def rollaxis(a, axis, start=0):
    a = _jnp.asarray(a)
    n = a.ndim
    axis = _axis(axis, n)
    start = _operator.index(start)
    if not -n <= start <= n:
        raise ValueError(f"start={start} must satisfy {-n}<=start<={n}")
    if start < 0:
        start += n
    if start > axis:
        start -= 1
    return _jnp.moveaxis(a, axis, start)


# ---- editing ----
def trim_zeros(filt, trim="fb", axis=None):
    filt = _jnp.asarray(filt)
    host = _concrete_or_error(filt, "trim_zeros", "`filt`")
    if filt.ndim != 1:
        raise ValueError(f"trim_zeros requires a 1-D input; got shape {filt.shape}")
    if not isinstance(trim, str):
        raise TypeError(f"trim must be a string; got {trim!r}")
    t = trim.lower()
    nz = _np.flatnonzero(host)
    if nz.size == 0:
        return filt[:0]
    start = int(nz[0]) if "f" in t else 0
    end = int(nz[-1]) + 1 if "b" in t else filt.shape[0]
    return filt[start:end]


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    a = _jnp.asarray(arr)
    if axis is None:
        a, ax = _jnp.ravel(a), 0
    else:
        ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(obj, slice):
        keep = _np.delete(_np.arange(n), obj)
    elif _is_tracer(obj):
        idx = _jnp.asarray(obj)
        if not assume_unique_indices:
            raise _ConcretizationTypeError(
                "jnp.delete(arr, obj): obj must be concrete (a Python int, slice or NumPy "
                "array); pass assume_unique_indices=True to delete traced indices under "
                "transformations.")
        if _kind(idx.dtype) not in "iu":
            raise ValueError(f"jnp.delete(arr, obj): obj must be integer-typed; got {idx.dtype}")
        idx = _jnp.sort(_jnp.ravel(_jnp.where(idx < 0, idx + n, idx)))
        # output slot i holds the i-th kept index: i plus the deleted ones at or before it
        i = _jnp.arange(n - idx.shape[0], dtype=_jnp.int32)
        i = i + _jnp.sum(idx[:, None] - _jnp.arange(idx.shape[0])[:, None] <= i[None, :],
                         axis=0, dtype=_jnp.int32)
        return _jnp.take(a, i, axis=ax)
    else:
        o = _np.asarray(obj)
        if o.dtype.kind == "b":
            if o.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}")
            keep = _np.flatnonzero(~o)
        else:
            if o.size and o.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            o = o.astype(_np.int64)
            if o.size and (o.min() < -n or o.max() >= n):
                bad = int(o[(o < -n) | (o >= n)].ravel()[0])
                raise IndexError(f"index {bad} is out of bounds for axis {ax} with size {n}")
            keep = _np.delete(_np.arange(n), o)
    return _jnp.take(a, _jnp.asarray(keep.astype(_np.int32)), axis=ax)


def insert(arr, obj, values, axis=None):
    a = _jnp.asarray(arr)
    if axis is None:
        a, ax = _jnp.ravel(a), 0
    else:
        ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(obj, slice):
        idx = _jnp.asarray(_np.arange(*obj.indices(n)).astype(_np.int32))
    else:
        idx = _jnp.asarray(obj)
        if idx.ndim > 1:
            raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                             f"scalar; got {obj}")
        if _kind(idx.dtype) not in "iu":
            if idx.size == 0 and not isinstance(obj, _Array):
                idx = idx.astype(_jnp.int32)
            else:
                raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    v = _jnp.asarray(values).astype(a.dtype)
    v = v.reshape((1,) * (a.ndim - v.ndim) + v.shape)
    if idx.size == 1:
        scalar = idx.ndim == 0
        first = _jnp.ravel(idx)[0]
        if scalar:
            v = _jnp.moveaxis(v, 0, ax)
        idx = _jnp.full((v.shape[ax],), first, idx.dtype)
    k = _np.broadcast_shapes(idx.shape, (v.shape[ax],))[0]
    idx = _jnp.broadcast_to(idx.astype(_jnp.int32), (k,))
    idx = _jnp.clip(_jnp.where(idx < 0, idx + n, idx), 0, n)
    # Each inserted value lands at its index plus the number of values inserted before it.
    order = _jnp.argsort(idx, stable=True)
    vpos = idx.at[order].add(_jnp.arange(k, dtype=_jnp.int32))
    is_val = _jnp.zeros((n + k,), bool).at[vpos].set(True)
    (apos,) = _idx.nonzero(~is_val, size=n, fill_value=n + k)
    out_shape = list(a.shape)
    out_shape[ax] = n + k
    out = _jnp.zeros(tuple(out_shape), a.dtype)
    lead = (slice(None),) * ax
    vshape = list(out_shape)
    vshape[ax] = k
    out = out.at[lead + (vpos,)].set(_jnp.broadcast_to(v, tuple(vshape)))
    return out.at[lead + (apos,)].set(a)


def append(arr, values, axis=None):
    if axis is None:
        return _jnp.concatenate([_jnp.ravel(_jnp.asarray(arr)), _jnp.ravel(_jnp.asarray(values))])
    return _jnp.concatenate([_jnp.asarray(arr), _jnp.asarray(values)], axis=axis)


def resize(a, new_shape):
    a = _jnp.asarray(a)
    shape = (new_shape,) if isinstance(new_shape, int) else tuple(
        _operator.index(s) for s in new_shape)
    if _builtins.any(s < 0 for s in shape):
        raise ValueError("All elements of `new_shape` must be non-negative")
    flat = _jnp.ravel(a)
    total = _math.prod(shape)
    if flat.shape[0] == 0 or total == 0:
        return _jnp.zeros(shape, a.dtype)
    reps = -(-total // flat.shape[0])
    return _jnp.tile(flat, reps)[:total].reshape(shape)


def mask_indices(n, mask_func, k=0, *, size=None):
    m = mask_func(_jnp.ones((n, n), _jnp.int32), k) != 0
    return _idx.nonzero(m, size=size)


# ---- convolution ----
def _conv(x, y, mode, op, preferred_element_type):
    if _jnp.ndim(x) != 1 or _jnp.ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = _promote_inexact(x, y)
    else:
        x, y = _promote(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = False
    if x.shape[0] < y.shape[0]:
        x, y = y, x
        reverse = op == "correlate"
    if op == "convolve":
        y = y[::-1]
    m = y.shape[0]
    if mode == "valid":
        lo, hi = 0, 0
    elif mode == "same":
        lo, hi = m // 2, m - m // 2 - 1
    elif mode == "full":
        lo, hi = m - 1, m - 1
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    xp = _jnp.pad(x, [(lo, hi)])
    n_out = xp.shape[0] - m + 1
    windows = _np.arange(n_out)[:, None] + _np.arange(m)[None, :]
    out = _jnp.matmul(xp[_jnp.asarray(windows.astype(_np.int32))], y)
    if reverse:
        out = out[::-1]
    if preferred_element_type is not None:
        out = out.astype(preferred_element_type)
    return out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    return _conv(a, v, mode, "convolve", preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    return _conv(a, v, mode, "correlate", preferred_element_type)


def einsum_path(subscripts, *operands, optimize="auto"):
    """NumPy's contraction path for operands of these shapes (only shapes are used)."""
    if optimize in ("auto", True):
        optimize = "greedy"
    stand_ins = []
    for x in operands:
        shape = _np.shape(x) if not isinstance(x, _Array) else x.shape
        stand_ins.append(_np.broadcast_to(_np.zeros((), _np.float32), shape))
    return _np.einsum_path(subscripts, *stand_ins, optimize=optimize)


# ---- frompyfunc / ufunc ----
class ufunc:
    """jnp.ufunc: a scalar function made a broadcasting, vmapped universal function."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None):
        self._func = func
        self.nin = _operator.index(nin)
        self.nout = _operator.index(nout)
        self.nargs = self.nin if nargs is None else _operator.index(nargs)
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._vec = _jnp.vectorize(func)

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional argument(s) but "
                            f"{len(args)} were given")
        return self._vec(*args)

    def _binary(self, method):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs; got nin={self.nin}, "
                             f"nout={self.nout}")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self}.reduce()")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}.reduce()")
        a = _jnp.asarray(a)
        if dtype is not None:
            a = a.astype(dtype)
        if axis is None:
            axes = tuple(range(a.ndim))
        elif isinstance(axis, (tuple, list)):
            axes = tuple(_axis(x, a.ndim) for x in axis)
        else:
            axes = (_axis(axis, a.ndim),)
        res = a
        for ax in sorted(axes, reverse=True):
            res = self._reduce_axis(res, ax, initial)
            initial = None
        if keepdims:
            res = _jnp.expand_dims(res, tuple(sorted(axes))) if axes else res
        return res

    def _reduce_axis(self, a, ax, initial):
        x = _jnp.moveaxis(a, ax, 0)
        if initial is None:
            if x.shape[0] == 0:
                if self.identity is None:
                    raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                     "which has no identity")
                return _jnp.full(x.shape[1:], self.identity, x.dtype)
            carry, rest = x[0], x[1:]
        else:
            carry = _jnp.full(x.shape[1:], initial, x.dtype)
            rest = x
        if rest.shape[0] == 0:
            return carry

        def body(c, xi):
            return _jnp.asarray(self._vec(c, xi)).astype(c.dtype), None

        carry, _ = _lax.scan(body, carry, rest)
        return carry

    def accumulate(self, a, axis=0, dtype=None, out=None):
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self}.accumulate()")
        a = _jnp.asarray(a)
        if dtype is not None:
            a = a.astype(dtype)
        ax = _axis(axis, a.ndim)
        x = _jnp.moveaxis(a, ax, 0)
        if x.shape[0] == 0:
            return a

        def body(c, xi):
            c = _jnp.asarray(self._vec(c, xi)).astype(c.dtype)
            return c, c

        _, ys = _lax.scan(body, x[0], x[1:])
        return _jnp.moveaxis(_jnp.concatenate([x[:1], ys], axis=0), 0, ax)

    def outer(self, A, B, /):
        self._binary("outer")
        A, B = _jnp.asarray(A), _jnp.asarray(B)
        return self._vec(A.reshape(A.shape + (1,) * B.ndim), B)


def frompyfunc(func, /, nin, nout, *, identity=None):
    return ufunc(func, nin, nout, identity=identity)
