"""Python methods of tessera.Array: NumPy's operators (reflected ones too, so a NumPy array on
the left defers to Tessera), properties and methods, delegating to tessera.numpy."""
import operator as _operator

import numpy as _np

from tessera import _tessera
from tessera._src import dtypes as _dtypes

Array = _tessera.Array


def _jnp():
    from tessera import numpy as jnp  # late: tessera.numpy imports this module
    return jnp


def _binary(name, reflected=False):
    def op(self, other):
        if not _is_arraylike(other):
            return NotImplemented  # Python's operator protocol: let `other` try its reflected op
        f = getattr(_jnp(), name)
        return f(other, self) if reflected else f(self, other)
    op.__name__ = name
    return op


def _is_arraylike(x):
    return isinstance(x, (Array, int, float, bool, _np.ndarray, _np.generic, list, tuple))


def _dtype(self):
    return _dtypes.dtype_of_name(self._dtype_name)


def _tolist(self):
    return _np.asarray(self).tolist()


def _item(self, *args):
    if self._is_tracer:
        # As JAX: a tracer with a known concrete value (grad of eager code) converts; an
        # abstract one raises ConcretizationTypeError from the C++ side.
        if args:
            raise TypeError("item() with arguments is not supported on traced arrays")
        name = self._dtype_name
        if name == "bool":
            return bool(self)
        if name.startswith(("int", "uint")):
            return int(self)
        return float(self)
    return _np.asarray(self).item(*args)


def _iter(self):
    # As JAX: rows by indexing, so that iteration works on tracers too.
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    for i in range(self.shape[0]):
        yield self[i]


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return _jnp().reshape(self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return _jnp().transpose(self, axes if axes else None)


def _squeeze(self, axis=None):
    return _jnp().squeeze(self, axis)


def _round(self, decimals=0, out=None):
    return _jnp().round(self, decimals, out)


def _dunder_round(self, ndigits=None):
    # As jax.Array: round(x) is jnp.round(x) converted to the default int dtype; with ndigits,
    # jnp.round(x, ndigits).
    out = _jnp().round(self, ndigits or 0)
    return _jnp().astype(out, int) if ndigits is None else out


def _divmod(self, other):
    if not _is_arraylike(other):
        return NotImplemented
    return _jnp().divmod(self, other)


def _rdivmod(self, other):
    if not _is_arraylike(other):
        return NotImplemented
    return _jnp().divmod(other, self)


_METHODS = {  # + - * / ** and comparisons are bound in C++ (python/src/py_array.cpp)
    "__matmul__": _binary("matmul"), "__rmatmul__": _binary("matmul", True),
    "__neg__": lambda self: _jnp().negative(self),
    "__pos__": lambda self: _jnp().positive(self),
    "__iter__": _iter,
    "__mod__": _binary("remainder"), "__rmod__": _binary("remainder", True),
    "__floordiv__": _binary("floor_divide"), "__rfloordiv__": _binary("floor_divide", True),
    "__divmod__": _divmod, "__rdivmod__": _rdivmod,
    "__and__": _binary("bitwise_and"), "__rand__": _binary("bitwise_and", True),
    "__or__": _binary("bitwise_or"), "__ror__": _binary("bitwise_or", True),
    "__xor__": _binary("bitwise_xor"), "__rxor__": _binary("bitwise_xor", True),
    "__lshift__": _binary("left_shift"), "__rlshift__": _binary("left_shift", True),
    "__rshift__": _binary("right_shift"), "__rrshift__": _binary("right_shift", True),
    "__invert__": lambda self: _jnp().invert(self),
    "__abs__": lambda self: _jnp().abs(self),
    "__round__": _dunder_round,
    "tolist": _tolist,
    "item": _item,
    "reshape": _reshape,
    "transpose": _transpose,
    "astype": lambda self, dtype, copy=False, device=None: _jnp().astype(self, dtype, copy=copy, device=device),
    "__array_namespace__": lambda self, *, api_version=None: _jnp(),
    "sum": lambda self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True: _jnp().sum(self, axis, dtype, out, keepdims, initial, where, promote_integers),
    "prod": lambda self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True: _jnp().prod(self, axis, dtype, out, keepdims, initial, where, promote_integers),
    "mean": lambda self, axis=None, dtype=None, out=None, keepdims=False, *, where=None: _jnp().mean(self, axis, dtype, out, keepdims, where=where),
    "max": lambda self, axis=None, out=None, keepdims=False, initial=None, where=None: _jnp().max(self, axis, out, keepdims, initial, where),
    "min": lambda self, axis=None, out=None, keepdims=False, initial=None, where=None: _jnp().min(self, axis, out, keepdims, initial, where),
    "ptp": lambda self, axis=None, out=None, keepdims=False: _jnp().ptp(self, axis, out, keepdims),
    "all": lambda self, axis=None, out=None, keepdims=False, *, where=None: _jnp().all(self, axis, out, keepdims, where=where),
    "any": lambda self, axis=None, out=None, keepdims=False, *, where=None: _jnp().any(self, axis, out, keepdims, where=where),
    "var": lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None: _jnp().var(self, axis, dtype, out, ddof, keepdims, where=where, correction=correction),
    "std": lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None: _jnp().std(self, axis, dtype, out, ddof, keepdims, where=where, correction=correction),
    "argmax": lambda self, axis=None, out=None, keepdims=None: _jnp().argmax(self, axis, out, keepdims),
    "argmin": lambda self, axis=None, out=None, keepdims=None: _jnp().argmin(self, axis, out, keepdims),
    "clip": lambda self, min=None, max=None: _jnp().clip(self, min, max),
    "round": _round,
    "squeeze": _squeeze,
    "flatten": lambda self, order="C": _jnp().ravel(self, order),
    "ravel": lambda self, order="C": _jnp().ravel(self, order),
    "swapaxes": lambda self, axis1, axis2: _jnp().swapaxes(self, axis1, axis2),
    "diagonal": lambda self, offset=0, axis1=0, axis2=1: _jnp().diagonal(self, offset, axis1, axis2),
    "trace": lambda self, offset=0, axis1=0, axis2=1, dtype=None, out=None: _jnp().trace(self, offset, axis1, axis2, dtype, out),
    "repeat": lambda self, repeats, axis=None, *, total_repeat_length=None: _jnp().repeat(self, repeats, axis, total_repeat_length=total_repeat_length),
    "dot": lambda self, other: _jnp().dot(self, other),
    "copy": lambda self: _jnp().array(self, copy=True),
    "sort": lambda self, axis=-1, *, kind=None, order=None, stable=True, descending=False: _jnp().sort(self, axis, kind=kind, order=order, stable=stable, descending=descending),
    "argsort": lambda self, axis=-1, *, kind=None, order=None, stable=True, descending=False: _jnp().argsort(self, axis, kind=kind, order=order, stable=stable, descending=descending),
    "argpartition": lambda self, kth, axis=-1: _jnp().argpartition(self, kth, axis),
    "searchsorted": lambda self, v, side="left", sorter=None, *, method="scan": _jnp().searchsorted(self, v, side, sorter, method=method),
    "nonzero": lambda self, *, fill_value=None, size=None: _jnp().nonzero(self, size=size, fill_value=fill_value),
    "compress": lambda self, condition, axis=None, *, out=None, size=None, fill_value=0: _jnp().compress(condition, self, axis, out=out, size=size, fill_value=fill_value),
    "take": lambda self, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False, fill_value=None: _jnp().take(self, indices, axis, out, mode, unique_indices, indices_are_sorted, fill_value),
    "__copy__": lambda self: self,
    "__deepcopy__": lambda self, memo: self,
}
for _name, _f in _METHODS.items():
    setattr(Array, _name, _f)
Array.cumsum = lambda self, axis=None, dtype=None, out=None: _jnp().cumsum(self, axis, dtype, out)  # noqa: E501
Array.cumprod = lambda self, axis=None, dtype=None, out=None: _jnp().cumprod(self, axis, dtype, out)  # noqa: E501
Array.dtype = property(_dtype)
Array.T = property(lambda self: _jnp().transpose(self))
Array.mT = property(lambda self: _jnp().swapaxes(self, -1, -2))
Array.__hash__ = None  # arrays are not hashable (as JAX's)
Array.__array_priority__ = 100  # NumPy arrays on the left defer to our reflected operators


def _format(self, spec):
    """format(x, spec) as JAX's: a 0-d array formats its scalar (f"{x:.3f}"); other arrays
    accept only the empty spec, like NumPy."""
    if self.ndim == 0:
        import numpy as _np
        return format(_np.asarray(self)[()], spec)
    if spec:
        raise TypeError(f"unsupported format string passed to {type(self).__name__}.__format__")
    return str(self)


Array.__format__ = _format


# ---- jax.Array's attributes for real arrays on one device (no complex dtypes in Tessera) ----
def _view(self, dtype=None, type=None):
    """Reinterprets the bytes (same itemsize; NumPy's view), as lax.bitcast_convert_type."""
    if type is not None:
        raise TypeError("[Array.view] the `type` argument is not supported (JAX's neither)")
    if dtype is None:
        return self
    from tessera import lax
    return lax.bitcast_convert_type(self, dtype)


def _to_device(self, device, *, stream=None):
    from tessera._src.devices import device_put
    del stream
    return device_put(self, device)


def _addressable_data(self, index):
    if index != 0:
        raise IndexError(f"[addressable_data] index {index} out of range: the array has one "
                         "addressable shard")
    return self


class Shard:
    """One shard of an Array (jax.Shard): its device, its index into the global array (slices),
    its replica id and its data. A Tessera array is one shard covering all of it."""

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def _shards(self):
    return [Shard(self.device, tuple(slice(None) for _ in self.shape), 0, self)]


Array.addressable_shards = property(_shards)
Array.global_shards = property(_shards)
Array.itemsize = property(lambda self: self.dtype.itemsize)
Array.real = property(lambda self: _jnp().real(self))
Array.imag = property(lambda self: _jnp().imag(self))
Array.conj = lambda self: _jnp().conj(self)
Array.conjugate = lambda self: _jnp().conjugate(self)
Array.is_fully_addressable = property(lambda self: True)  # one process
Array.is_fully_replicated = property(lambda self: True)  # one device holds all of it
Array.on_device_size_in_bytes = lambda self: self.nbytes
Array.copy_to_host_async = lambda self: None  # host memory is device memory on CPU
Array.to_device = _to_device
Array.addressable_data = _addressable_data
Array.view = _view
Array.__complex__ = lambda self: complex(self.item())
