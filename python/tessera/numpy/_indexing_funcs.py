"""jnp's index-producing and index-consuming functions: nonzero/argwhere/flatnonzero (static
`size` under transformations), searchsorted, digitize, bincount, unique, partition/argpartition,
select, choose, compress, extract, diff, ediff1d, unravel_index, ravel_multi_index, the *_indices
helpers, indices, ix_, put and put_along_axis.

One implementation: the C++ functions of tessera/numpy_index_funcs.h (bound in
python/src/py_index_funcs.cpp). This module keeps only jnp's Python signatures: keyword
handling, Python ints and sequences, tuple results and the arguments JAX rejects (`out`)."""
import operator as _operator

from tessera import _tessera

_C = _tessera.index_funcs


def _opt_index(x):
    return None if x is None else _operator.index(x)


# ---- nonzero & co. ----
def nonzero(a, *, size=None, fill_value=None):
    return _C.nonzero(a, _opt_index(size), fill_value)


def flatnonzero(a, *, size=None, fill_value=None):
    return _C.flatnonzero(a, _opt_index(size), fill_value)


def argwhere(a, *, size=None, fill_value=None):
    return _C.argwhere(a, _opt_index(size), fill_value)


# ---- searching and counting ----
def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    return _C.searchsorted(a, v, side, sorter, method)


def digitize(x, bins, right=False, *, method=None):
    return _C.digitize(x, bins, bool(right), method)


def bincount(x, weights=None, minlength=0, *, length=None):
    return _C.bincount(x, weights, minlength, length)


# ---- unique, partition ----
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """jnp.unique: the sorted unique values (or, with axis, unique slices) and the requested
    index, inverse and counts. `sorted` is accepted for JAX's signature; results are always
    sorted."""
    del sorted
    values, index, inverse, counts = _C.unique(
        ar, bool(return_index), bool(return_inverse), bool(return_counts), bool(equal_nan),
        _opt_index(size), fill_value, _opt_index(axis))
    out = [values]
    if return_index:
        out.append(index)
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def partition(a, kth, axis=-1):
    """A copy with the kth element in its sorted place, smaller ones before it and larger ones
    after (this one is sorted, which is a valid partition)."""
    return _C.partition(a, kth, axis)


def argpartition(a, kth, axis=-1):
    return _C.argpartition(a, kth, axis)


# ---- selection ----
def select(condlist, choicelist, default=0):
    return _C.select(list(condlist), list(choicelist), default)


def choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    return _C.choose(a, list(choices), mode)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    return _C.compress(condition, a, _opt_index(axis), _opt_index(size), fill_value)


def extract(condition, arr, *, size=None, fill_value=0):
    return _C.extract(condition, arr, _opt_index(size), fill_value)


# ---- differences ----
def diff(a, n=1, axis=-1, prepend=None, append=None):
    return _C.diff(a, n, axis, prepend, append)


def ediff1d(ary, to_end=None, to_begin=None):
    return _C.ediff1d(ary, to_end, to_begin)


# ---- index arithmetic ----
def unravel_index(indices, shape):
    """As JAX: negative indices count from the end and out-of-range ones are clipped."""
    return _C.unravel_index(indices, shape)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    return _C.ravel_multi_index(list(multi_index), dims, mode, order)


def indices(dimensions, dtype=None, sparse=False):
    return _C.indices(dimensions, dtype, bool(sparse))


def ix_(*args):
    return _C.ix_(*args)


def tril_indices(n, k=0, m=None):
    return _C.tril_indices(n, k, m)


def triu_indices(n, k=0, m=None):
    return _C.triu_indices(n, k, m)


def tril_indices_from(arr, k=0):
    return _C.tril_indices_from(arr, k)


def triu_indices_from(arr, k=0):
    return _C.triu_indices_from(arr, k)


def diag_indices(n, ndim=2):
    return _C.diag_indices(n, ndim)


def diag_indices_from(arr):
    return _C.diag_indices_from(arr)


# ---- functional puts ----
def put(a, ind, v, mode=None, *, inplace=True):
    return _C.put(a, ind, v, mode, bool(inplace))


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    return _C.put_along_axis(arr, indices, values, _opt_index(axis), bool(inplace), mode)
