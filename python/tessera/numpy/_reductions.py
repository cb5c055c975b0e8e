"""jax.numpy's reductions, statistics and comparisons over tessera::numpy (numpy_reductions.h),
with jax.numpy's signatures and keyword names."""
import operator as _operator

from tessera import _tessera

_C = _tessera.numpy


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _dt(d):
    from tessera.numpy import _dt as dt
    return dt(d)


def _axis(axis):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_operator.index(a) for a in axis)
    return _operator.index(axis)


def _initial(initial, name):
    if initial is None:
        return None
    if isinstance(initial, _tessera.Array) and initial._is_tracer:
        raise TypeError(f"jnp.{name}: a traced `initial` is not supported; pass a Python number "
                        "or a concrete array")
    return float(initial)


def _promote(a, dtype, promote_integers):
    # promote_integers=False keeps small integer and bool inputs in their own dtype.
    if dtype is None and not promote_integers:
        a = _tessera.asarray(a)
        if a._dtype_name.startswith(("int", "uint")):
            return a._dtype_name
    return _dt(dtype)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    _no_out(out, "sum")
    return _C.sum(a, _axis(axis), _promote(a, dtype, promote_integers), bool(keepdims),
                  _initial(initial, "sum"), where, 0.0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    _no_out(out, "prod")
    return _C.prod(a, _axis(axis), _promote(a, dtype, promote_integers), bool(keepdims),
                   _initial(initial, "prod"), where, 0.0)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "max")
    return _C.max(a, _axis(axis), None, bool(keepdims), _initial(initial, "max"), where, 0.0)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "min")
    return _C.min(a, _axis(axis), None, bool(keepdims), _initial(initial, "min"), where, 0.0)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "amax")
    return max(a, axis, None, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "amin")
    return min(a, axis, None, keepdims, initial, where)


def ptp(a, axis=None, out=None, keepdims=False):
    _no_out(out, "ptp")
    return _C.ptp(a, _axis(axis), None, bool(keepdims), None, None, 0.0)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "all")
    return _C.all(a, _axis(axis), None, bool(keepdims), None, where, 0.0)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "any")
    return _C.any(a, _axis(axis), None, bool(keepdims), None, where, 0.0)


def count_nonzero(a, axis=None, keepdims=False):
    return _C.count_nonzero(a, _axis(axis), None, bool(keepdims), None, None, 0.0)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "mean")
    return _C.mean(a, _axis(axis), _dt(dtype), bool(keepdims), None, where, 0.0)


def _ddof(ddof, correction, name):
    if correction is None:
        return float(ddof)
    if ddof != 0:
        raise ValueError(f"jnp.{name}: ddof and correction can't both be specified")
    return float(correction)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    _no_out(out, "var")
    return _C.var(a, _axis(axis), _dt(dtype), bool(keepdims), None, where,
                  _ddof(ddof, correction, "var"))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    _no_out(out, "std")
    return _C.std(a, _axis(axis), _dt(dtype), bool(keepdims), None, where,
                  _ddof(ddof, correction, "std"))


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "nansum")
    return _C.nansum(a, _axis(axis), _dt(dtype), bool(keepdims), _initial(initial, "nansum"),
                     where, 0.0)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "nanprod")
    return _C.nanprod(a, _axis(axis), _dt(dtype), bool(keepdims), _initial(initial, "nanprod"),
                      where, 0.0)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "nanmax")
    return _C.nanmax(a, _axis(axis), None, bool(keepdims), _initial(initial, "nanmax"), where,
                     0.0)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "nanmin")
    return _C.nanmin(a, _axis(axis), None, bool(keepdims), _initial(initial, "nanmin"), where,
                     0.0)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    _no_out(out, "nanmean")
    return _C.nanmean(a, _axis(axis), _dt(dtype), bool(keepdims), None, where, 0.0)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           correction=None):
    _no_out(out, "nanvar")
    return _C.nanvar(a, _axis(axis), _dt(dtype), bool(keepdims), None, where,
                     _ddof(ddof, correction, "nanvar"))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           correction=None):
    _no_out(out, "nanstd")
    return _C.nanstd(a, _axis(axis), _dt(dtype), bool(keepdims), None, where,
                     _ddof(ddof, correction, "nanstd"))


def _arg(name):
    f = getattr(_C, name)

    def arg(a, axis=None, out=None, keepdims=None):
        _no_out(out, name)
        return f(a, None if axis is None else _operator.index(axis), bool(keepdims))

    arg.__name__ = name
    arg.__doc__ = f"jnp.{name}: the index of the first extremum (axis None: of the flattened array)."
    return arg


argmax = _arg("argmax")
argmin = _arg("argmin")
nanargmax = _arg("nanargmax")
nanargmin = _arg("nanargmin")


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _C.isclose(a, b, float(rtol), float(atol), bool(equal_nan))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _C.allclose(a, b, float(rtol), float(atol), bool(equal_nan))


def array_equal(a1, a2, equal_nan=False):
    return _C.array_equal(a1, a2, bool(equal_nan))


def array_equiv(a1, a2):
    return _C.array_equiv(a1, a2)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return _C.nan_to_num(x, float(nan), None if posinf is None else float(posinf),
                         None if neginf is None else float(neginf))


class _Unset:
    def __repr__(self):
        return "<unset>"


_UNSET = _Unset()


def clip(arr=None, /, min=None, max=None, *, a=_UNSET, a_min=_UNSET, a_max=_UNSET):
    """jnp.clip(arr, min, max); the deprecated keywords a, a_min and a_max still work."""
    if a is not _UNSET:
        if arr is not None:
            raise ValueError("jnp.clip: pass `arr` (positionally) or the deprecated `a`, not both")
        arr = a
    if a_min is not _UNSET:
        if min is not None:
            raise ValueError("jnp.clip: pass `min` or the deprecated `a_min`, not both")
        min = a_min
    if a_max is not _UNSET:
        if max is not None:
            raise ValueError("jnp.clip: pass `max` or the deprecated `a_max`, not both")
        max = a_max
    if arr is None:
        raise TypeError("jnp.clip() missing the array argument `arr`")
    return _C.clip(arr, min, max)
