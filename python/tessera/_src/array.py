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
            return NotImplemented
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
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    if self._is_tracer:
        raise TypeError("iterating over a traced array needs indexing, which arrives with "
                        "slicing support; use vmap or lax ops instead")
    for row in _np.asarray(self):
        yield _tessera.asarray(_np.array(row))


def _reshape(self, *shape, order="C"):
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return _jnp().reshape(self, shape)


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return _jnp().transpose(self, axes if axes else None)


_METHODS = {  # + - * / ** and comparisons are bound in C++ (python/src/py_array.cpp)
    "__matmul__": _binary("matmul"), "__rmatmul__": _binary("matmul", True),
    "__neg__": lambda self: _jnp().negative(self),
    "__pos__": lambda self: _jnp().positive(self),
    "__iter__": _iter,
    "tolist": _tolist,
    "item": _item,
    "reshape": _reshape,
    "transpose": _transpose,
    "astype": lambda self, dtype: _jnp().astype(self, dtype),
    "sum": lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: _jnp().sum(self, axis, dtype, out, keepdims=keepdims),
    "mean": lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: _jnp().mean(self, axis, dtype, out, keepdims=keepdims),
    "max": lambda self, axis=None, out=None, keepdims=False, **kw: _jnp().max(self, axis, out, keepdims=keepdims),
    "dot": lambda self, other: _jnp().dot(self, other),
    "copy": lambda self: _jnp().array(self, copy=True),
    "__copy__": lambda self: self,
    "__deepcopy__": lambda self, memo: self,
}
for _name, _f in _METHODS.items():
    setattr(Array, _name, _f)
Array.dtype = property(_dtype)
Array.T = property(lambda self: _jnp().transpose(self))
Array.mT = property(lambda self: _jnp().swapaxes(self, -1, -2) if hasattr(_jnp(), "swapaxes") else _jnp().transpose(self, tuple(range(self.ndim - 2)) + (self.ndim - 1, self.ndim - 2)))
Array.__hash__ = None  # arrays are not hashable (as JAX's)
Array.__array_priority__ = 100  # NumPy arrays on the left defer to our reflected operators
