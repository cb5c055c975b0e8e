"""tessera.numpy: jax.numpy's names over Tessera's numpy layer (`import tessera.numpy as jnp`)."""
import builtins as _builtins

import numpy as _np

from tessera import _tessera
from tessera._src import array as _array  # installs Array's Python methods
from tessera._src import dtypes as _dtypes

_C = _tessera.numpy
ndarray = _array.Array
Array = _array.Array

# ---- dtypes ----
bool_ = _dtypes.scalar_types["bool_"]
int8, int16, int32, int64 = (_dtypes.scalar_types[n] for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_dtypes.scalar_types[n] for n in ("uint8", "uint16", "uint32", "uint64"))
float16, bfloat16, float32, float64 = (_dtypes.scalar_types[n] for n in ("float16", "bfloat16", "float32", "float64"))
float_ = float64
int_ = int64
finfo = _dtypes.finfo
iinfo = _dtypes.iinfo
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None


def dtype(x):
    """The dtype object of a dtype spec or array."""
    if isinstance(x, Array):
        return x.dtype
    return _dtypes.dtype_of_name(_tessera.canonical_dtype_name(x) if x is not _builtins.float and x is not _builtins.int else _tessera.canonical_dtype_name(x))


def result_type(*args):
    return _dtypes.dtype_of_name(_tessera.result_type_name(*args))


def promote_types(a, b):
    return result_type(dtype(a), dtype(b))


def _dt(d):
    if d is None:
        return None
    if isinstance(d, _dtypes._ScalarType):
        return d.name
    if isinstance(d, _dtypes._BFloat16DType):
        return "bfloat16"
    return d


# ---- creation ----
def asarray(a, dtype=None, order=None, *, copy=None):
    """An Array from an array-like. Read-only NumPy arrays are aliased (zero copy); writeable
    ones are copied, so that later writes through NumPy cannot change an immutable Array."""
    if copy is True and isinstance(a, Array):
        return _C.add(a, 0) if dtype is None else _C.astype(a, _dt(dtype))
    return _tessera.asarray(a, _dt(dtype))


def array(object, dtype=None, copy=True, order=None, ndmin=0):
    out = _tessera.asarray(object, _dt(dtype))
    if isinstance(object, Array) and copy and out is object:
        out = _C.astype(object, out._dtype_name)
    while out.ndim < ndmin:
        out = reshape(out, (1,) + out.shape)
    return out


def zeros(shape, dtype=None):
    return _C.zeros(shape, _dt(dtype))


def ones(shape, dtype=None):
    return _C.ones(shape, _dt(dtype))


def full(shape, fill_value, dtype=None):
    return _C.full(shape, fill_value, _dt(dtype))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def zeros_like(a, dtype=None, shape=None):
    a = asarray(a)
    return zeros(a.shape if shape is None else shape, dtype or a.dtype)


def ones_like(a, dtype=None, shape=None):
    a = asarray(a)
    return ones(a.shape if shape is None else shape, dtype or a.dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    a = asarray(a)
    return full(a.shape if shape is None else shape, fill_value, dtype or a.dtype)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    return _C.arange(start, stop, step, _dt(dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    out = _C.linspace(float(start), float(stop), int(num), bool(endpoint), _dt(dtype))
    if retstep:
        step = (float(stop) - float(start)) / _builtins.max(1, (num - 1) if endpoint else num)
        return out, step
    return out


def eye(N, M=None, k=0, dtype=None):
    return _C.eye(N, M, k, _dt(dtype))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


# ---- elementwise ----
add = _C.add
subtract = _C.subtract
multiply = _C.multiply
divide = _C.divide
true_divide = _C.true_divide
power = _C.power
pow = _C.power
maximum = _C.maximum
minimum = _C.minimum
equal = _C.equal
not_equal = _C.not_equal
less = _C.less
less_equal = _C.less_equal
greater = _C.greater
greater_equal = _C.greater_equal
negative = _C.negative
positive = _C.positive
exp = _C.exp
log = _C.log
sin = _C.sin
cos = _C.cos
tanh = _C.tanh
sqrt = _C.sqrt
square = _C.square
where = _C.where


# ---- reductions ----
def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.sum is not supported (arrays are immutable).")
    return _C.sum(a, axis, _dt(dtype), keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported (arrays are immutable).")
    return _C.mean(a, axis, _dt(dtype), keepdims)


def max(a, axis=None, out=None, keepdims=False):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.max is not supported (arrays are immutable).")
    return _C.max(a, axis, keepdims)


amax = max


# ---- shapes and products ----
def reshape(a, shape=None, order="C", *, newshape=None):
    if shape is None:
        shape = newshape
    if isinstance(shape, int):
        shape = (shape,)
    return _C.reshape(a, tuple(shape))


def transpose(a, axes=None):
    return _C.transpose(a, None if axes is None else tuple(axes))


def broadcast_to(array, shape):
    if isinstance(shape, int):
        shape = (shape,)
    return _C.broadcast_to(array, tuple(shape))


def astype(x, dtype, copy=False):
    return _C.astype(x, _dt(dtype))


matmul = _C.matmul
dot = _C.dot


def shape(a):
    return asarray(a).shape


def ndim(a):
    return asarray(a).ndim


def size(a, axis=None):
    a = asarray(a)
    return a.size if axis is None else a.shape[axis]


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array sharing the memory of a DLPack producer (NumPy, torch ...; CPU only)."""
    out = _tessera.from_dlpack(x)
    return array(out) if copy else out
