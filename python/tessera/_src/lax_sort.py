"""jax.lax.sort and sort_key_val, and jax.numpy's sort, argsort, lexsort, sort_complex,
quantile, percentile, median and their nan* forms, over Tessera's C++ core
(src/api/lax_sort.cpp, numpy_sort.cpp)."""
import operator as _operator

from tessera import _tessera

_C = _tessera.lax
_N = _tessera.numpy


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts `operand` (an array, or a sequence of arrays of one shape) along `dimension`.

    For a sequence, the first `num_keys` arrays are the keys (lexicographic, the first primary)
    and the others are permuted alike; a tuple comes back. -0.0 and 0.0 sort as equal and NaNs
    sort to the end. The sort is always stable."""
    if isinstance(operand, (list, tuple)):
        return tuple(_C.sort(list(operand), dimension, bool(is_stable), num_keys))
    if _operator.index(num_keys) != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    return _C.sort([operand], dimension, bool(is_stable), 1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts `keys` along `dimension` and applies the same permutation to `values`."""
    k, v = _C.sort([keys, values], dimension, bool(is_stable), 1)
    return k, v


def top_k(operand, k):
    """The k largest entries along the last axis (descending) and their int32 indices."""
    v, i = _C.top_k(operand, k)
    return v, i


# ---- jax.numpy ----
def _check_kind_order(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _axis(axis):
    return None if axis is None else _operator.index(axis)


def np_sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """jax.numpy.sort: a sorted copy of `a` along `axis` (None flattens); NaNs last, and first
    when descending (the ascending result reversed)."""
    _check_kind_order("sort", kind, order)
    return _N.sort(a, _axis(axis), bool(stable), bool(descending))


def np_argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """jax.numpy.argsort: the indices that sort `a` along `axis` (None flattens); a stable
    descending argsort keeps tied elements in their original order."""
    _check_kind_order("argsort", kind, order)
    return _N.argsort(a, _axis(axis), bool(stable), bool(descending))


def np_lexsort(keys, axis=-1):
    """jax.numpy.lexsort: the indirect stable sort by `keys`, the last key primary. `keys` is a
    sequence of arrays of one shape or an array whose first axis runs over the keys."""
    if hasattr(keys, "ndim") and hasattr(keys, "shape") and not isinstance(keys, (list, tuple)):
        keys = [keys[i] for i in range(keys.shape[0])] if keys.ndim > 0 else [keys]
    return _N.lexsort(list(keys), _operator.index(axis))


def np_sort_complex(a):
    """jax.numpy.sort_complex: raises NotImplementedError (Tessera has no complex dtypes)."""
    return _N.sort_complex(a)


def _stat_axis(axis):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_operator.index(x) for x in axis)
    return _operator.index(axis)


def _check_out(name, out, overwrite_input):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")


def _np_quantile(name):
    f = getattr(_N, name)

    def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, *, interpolation=None):
        _check_out(name, out, overwrite_input)
        if interpolation is not None:
            method = interpolation
        return f(a, q, _stat_axis(axis), str(method), bool(keepdims))

    quantile.__name__ = quantile.__qualname__ = name
    quantile.__doc__ = (f"jax.numpy.{name}: q a scalar or 1-d array (its shape comes first in "
                        "the result); method linear, lower, higher, midpoint or nearest; q is "
                        "not range-checked (positions are clamped), as JAX.")
    return quantile


def _np_median(name):
    f = getattr(_N, name)

    def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
        _check_out(name, out, overwrite_input)
        return f(a, _stat_axis(axis), bool(keepdims))

    median.__name__ = median.__qualname__ = name
    median.__doc__ = f"jax.numpy.{name}: the quantile 0.5 with method 'midpoint'."
    return median


np_quantile = _np_quantile("quantile")
np_percentile = _np_quantile("percentile")
np_nanquantile = _np_quantile("nanquantile")
np_nanpercentile = _np_quantile("nanpercentile")
np_median = _np_median("median")
np_nanmedian = _np_median("nanmedian")
np_sort.__name__ = np_sort.__qualname__ = "sort"
np_argsort.__name__ = np_argsort.__qualname__ = "argsort"
np_lexsort.__name__ = np_lexsort.__qualname__ = "lexsort"
np_sort_complex.__name__ = np_sort_complex.__qualname__ = "sort_complex"
