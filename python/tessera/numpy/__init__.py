"""tessera.numpy: jax.numpy's names over Tessera's numpy layer (`import tessera.numpy as jnp`)."""
import builtins as _builtins
import operator as _operator

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


_X64_HINT = ("To enable more dtypes, set the jax_enable_x64 configuration option or the "
             "JAX_ENABLE_X64 shell environment variable. See "
             "https://github.com/jax-ml/jax#current-gotchas for more.")
_PY_SCALAR_TYPES = (float, int, bool, complex)


def _dt(d):
    """A user's dtype argument for the C++ core. Without x64, an explicit 64-bit dtype warns as
    JAX's does (naming the jnp function that received it) and is truncated to 32 bits."""
    if d is None:
        return None
    if isinstance(d, _dtypes._ScalarType):
        d = d.name
    elif isinstance(d, _dtypes._BFloat16DType):
        return "bfloat16"
    # Identity, not `in`: np.dtype("float64") == float is True in NumPy.
    if not _tessera.x64_enabled() and not _builtins.any(d is t for t in _PY_SCALAR_TYPES):
        try:
            requested = _np.dtype(d).name
        except TypeError:
            return d  # not a NumPy dtype: the core reports it
        if requested.endswith("64") or requested == "complex128":
            canonical = _tessera.canonical_dtype_name(requested)
            if canonical != requested:
                import sys
                import warnings
                fun = sys._getframe(1).f_code.co_name
                warnings.warn(f"Explicitly requested dtype {requested} requested in {fun} is not "
                              f"available, and will be truncated to dtype {canonical}. "
                              + _X64_HINT, UserWarning, stacklevel=3)
    return d


# ---- creation ----
def _holds_array(x):
    if isinstance(x, Array):
        return True
    if isinstance(x, (list, tuple)):
        return _builtins.any(_holds_array(e) for e in x)
    return False


def _stack_nested(x):
    """A (nested) list/tuple holding Arrays or tracers: stacked with jnp's promotion, as JAX
    does (NumPy would need the values, which tracers do not have)."""
    if not isinstance(x, (list, tuple)):
        return _tessera.asarray(x)
    if not x:
        return _tessera.asarray(_np.zeros((0,), _np.float32))
    return stack([_stack_nested(e) for e in x])


def _place(x, device):
    """x on `device` (a Device or a Sharding: the `device=` of JAX's creation functions)."""
    if device is None:
        return x
    from tessera._src.devices import device_put
    return device_put(x, device)


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """An Array from an array-like. Read-only NumPy arrays are aliased (zero copy); writeable
    ones are copied, so that later writes through NumPy cannot change an immutable Array.
    Lists holding Arrays (or tracers) are stacked."""
    if device is not None:
        return _place(asarray(a, dtype, order, copy=copy), device)
    if copy is True and isinstance(a, Array):
        return _C.add(a, 0) if dtype is None else _C.astype(a, _dt(dtype))
    if isinstance(a, (list, tuple)) and _holds_array(a):
        out = _stack_nested(a)
        return out if dtype is None else _C.astype(out, _dt(dtype))
    return _tessera.asarray(a, _dt(dtype))


def array(object, dtype=None, copy=True, order=None, ndmin=0, *, device=None):
    if device is not None:
        return _place(array(object, dtype, copy, order, ndmin), device)
    if isinstance(object, (list, tuple)) and _holds_array(object):
        out = asarray(object, dtype)
    else:
        out = _tessera.asarray(object, _dt(dtype))
    if isinstance(object, Array) and copy and out is object:
        out = _C.astype(object, out._dtype_name)
    while out.ndim < ndmin:
        out = reshape(out, (1,) + out.shape)
    return out


def zeros(shape, dtype=None, *, device=None):
    return _place(_C.zeros(shape, _dt(dtype)), device)


def ones(shape, dtype=None, *, device=None):
    return _place(_C.ones(shape, _dt(dtype)), device)


def full(shape, fill_value, dtype=None, *, device=None):
    return _place(_C.full(shape, fill_value, _dt(dtype)), device)


def empty(shape, dtype=None, *, device=None):
    return zeros(shape, dtype, device=device)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    a = asarray(a)
    return zeros(a.shape if shape is None else shape, dtype or a.dtype, device=device)


def ones_like(a, dtype=None, shape=None, *, device=None):
    a = asarray(a)
    return ones(a.shape if shape is None else shape, dtype or a.dtype, device=device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    a = asarray(a)
    return full(a.shape if shape is None else shape, fill_value, dtype or a.dtype, device=device)


def empty_like(a, dtype=None, shape=None, *, device=None):
    return zeros_like(a, dtype, shape, device=device)


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    return _place(_C.arange(start, stop, step, _dt(dtype)), device)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    out = _place(_C.linspace(float(start), float(stop), int(num), bool(endpoint), _dt(dtype)),
                 device)
    if retstep:
        step = (float(stop) - float(start)) / _builtins.max(1, (num - 1) if endpoint else num)
        return out, step
    return out


def eye(N, M=None, k=0, dtype=None, *, device=None):
    return _place(_C.eye(N, M, k, _dt(dtype)), device)


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


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """jnp.where(condition, x, y): elementwise selection with jnp's promotion."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)  # noqa: F821 (below)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         f"to jax.numpy.where, got {x} and {y}.")
    return _C.where(condition, x, y)


# ---- more elementwise (numpy_ufuncs.h) ----
abs = _C.abs
absolute = _C.absolute
fabs = _C.fabs
sign = _C.sign
floor = _C.floor
ceil = _C.ceil
trunc = _C.trunc
fix = _C.fix
rint = _C.rint
exp2 = _C.exp2
expm1 = _C.expm1
log1p = _C.log1p
log2 = _C.log2
log10 = _C.log10
logaddexp = _C.logaddexp
logaddexp2 = _C.logaddexp2
cbrt = _C.cbrt
reciprocal = _C.reciprocal
float_power = _C.float_power
tan = _C.tan
arcsin = asin = _C.arcsin
arccos = acos = _C.arccos
arctan = atan = _C.arctan
arctan2 = atan2 = _C.arctan2
sinh = _C.sinh
cosh = _C.cosh
arcsinh = asinh = _C.arcsinh
arccosh = acosh = _C.arccosh
arctanh = atanh = _C.arctanh
hypot = _C.hypot
deg2rad = _C.deg2rad
rad2deg = _C.rad2deg
degrees = _C.degrees
radians = _C.radians
sinc = _C.sinc
floor_divide = _C.floor_divide
remainder = _C.remainder
mod = _C.mod
fmod = _C.fmod
divmod = _C.divmod
heaviside = _C.heaviside
isfinite = _C.isfinite
isinf = _C.isinf
isnan = _C.isnan
isposinf = _C.isposinf
isneginf = _C.isneginf
signbit = _C.signbit
copysign = _C.copysign
nextafter = _C.nextafter
bitwise_and = _C.bitwise_and
bitwise_or = _C.bitwise_or
bitwise_xor = _C.bitwise_xor
bitwise_not = _C.bitwise_not
invert = bitwise_invert = _C.invert
left_shift = bitwise_left_shift = _C.left_shift
right_shift = bitwise_right_shift = _C.right_shift
logical_and = _C.logical_and
logical_or = _C.logical_or
logical_xor = _C.logical_xor
logical_not = _C.logical_not


def round(a, decimals=0, out=None):
    """Round half to even, to `decimals` decimal places (negative: tens, hundreds, ...)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    return _C.round(a, _operator.index(decimals))


def around(a, decimals=0, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.around is not supported.")
    return _C.round(a, _operator.index(decimals))


# ---- reductions, statistics, comparisons (numpy_reductions.h) ----
from tessera.numpy._reductions import (  # noqa: E402
    all, allclose, amax, amin, any, argmax, argmin, array_equal, array_equiv, clip,
    count_nonzero, isclose, max, mean, min, nan_to_num, nanargmax, nanargmin, nanmax, nanmean,
    nanmin, nanprod, nanstd, nansum, nanvar, prod, ptp, std, sum, var)

# ---- manipulation, padding, products (numpy_manip.h) ----
from tessera.numpy._manip import (  # noqa: E402
    array_split, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, broadcast_shapes,
    column_stack, concat, concatenate, diag, diagonal, dsplit, dstack, einsum, expand_dims, flip,
    fliplr, flipud, hsplit, hstack, inner, kron, meshgrid, moveaxis, outer, pad, ravel, repeat,
    roll, rot90, row_stack, split, squeeze, stack, swapaxes, tensordot, tile, trace, tri, tril,
    triu, vdot, vsplit, vstack)
from tessera.numpy import fft, linalg  # noqa: E402
from tessera._src.indexing import take, take_along_axis  # noqa: E402,F401
from tessera.numpy._indexing_funcs import (  # noqa: E402,F401
    argpartition, argwhere, bincount, choose, compress, diag_indices, diag_indices_from, diff,
    digitize, ediff1d, extract, flatnonzero, indices, ix_, nonzero, partition, put,
    put_along_axis, ravel_multi_index, searchsorted, select, tril_indices, tril_indices_from,
    triu_indices, triu_indices_from, unique, unravel_index)
# ---- files (tessera/io.h) ----
from tessera.numpy._io import NpzFile, load, save, savez, savez_compressed  # noqa: E402,F401
from tessera.numpy._histogram_funcs import (  # noqa: E402,F401
    apply_along_axis, apply_over_axes, fill_diagonal, histogram, histogram2d,
    histogram_bin_edges, histogramdd, interp, piecewise, place, vectorize)
from tessera._src.lax_cumulative import np_cumprod as cumprod, np_cumsum as cumsum, np_cumulative_prod as cumulative_prod, np_cumulative_sum as cumulative_sum, np_nancumprod as nancumprod, np_nancumsum as nancumsum  # noqa: E402,E501
from tessera._src.lax_sort import np_argsort as argsort, np_lexsort as lexsort, np_median as median, np_nanmedian as nanmedian, np_nanpercentile as nanpercentile, np_nanquantile as nanquantile, np_percentile as percentile, np_quantile as quantile, np_sort as sort, np_sort_complex as sort_complex  # noqa: E402,E501


# ---- shapes and products ----
def reshape(a, shape=None, order="C", *, newshape=None):
    if shape is None:
        shape = newshape
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if order == "C":
        return _C.reshape(a, shape)
    if order == "F":
        # Column-major: reverse the axes, fill row-major into the reversed shape, reverse back.
        return transpose(_C.reshape(transpose(asarray(a)), shape[::-1]))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")  # JAX's text
    raise ValueError(f"Unexpected value for 'order' argument: {order!r} (expected 'C' or 'F')")


def transpose(a, axes=None):
    return _C.transpose(a, None if axes is None else tuple(axes))


def broadcast_to(array, shape):
    if isinstance(shape, int):
        shape = (shape,)
    return _C.broadcast_to(array, tuple(shape))


# ---- complex parts: Tessera has no complex dtypes, so every array is real ----
def iscomplexobj(x):
    d = getattr(x, "dtype", None)
    if d is None:
        return isinstance(x, complex) or _np.iscomplexobj(x)
    return getattr(d, "kind", "") == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def _no_complex(op, x):
    if iscomplexobj(x):
        raise TypeError(f"[{op}] complex values are not supported: Tessera has no complex64 / "
                        "complex128 dtypes yet")
    return asarray(x)


def real(val):
    """The real part: the array itself for real dtypes."""
    return _no_complex("real", val)


def imag(val):
    """The imaginary part: zeros of the array's dtype for real dtypes."""
    return zeros_like(_no_complex("imag", val))


def conjugate(x):
    """The complex conjugate: the array itself for real dtypes."""
    return _no_complex("conjugate", x)


conj = conjugate


def isreal(x):
    return equal(imag(x), 0)


def iscomplex(x):
    return not_equal(imag(x), 0)


def astype(x, dtype, /, *, copy=False, device=None):
    return _place(_C.astype(x, _dt(dtype)), device)


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
from tessera.numpy._extra import (  # noqa: E402,F401
    angle, append, average, bitwise_count, block, can_cast, complexfloating, convolve,
    corrcoef, correlate, cov, cross, delete, einsum_path, floating, frexp, frombuffer,
    fromfunction, frompyfunc, gcd, generic, geomspace, gradient, i0, inexact, insert, integer,
    intersect1d, isdtype, isin, issubdtype, lcm, ldexp, logspace, mask_indices,
    matrix_transpose, matvec, modf, number, packbits, permute_dims, polyadd, polyder, polyint,
    polymul, polysub, polyval, resize, rollaxis, setdiff1d, setxor1d, signedinteger, spacing,
    trapezoid, trim_zeros, ufunc, union1d, unpackbits, unsignedinteger, unstack, vander,
    vecdot, vecmat)
from tessera.numpy._more import (  # noqa: E402,F401
    bartlett, blackman, copy, diagflat, fmax, fmin, fromstring, hamming, hanning, isscalar,
    iterable, kaiser, poly, polydiv, polyfit, roots, unique_all, unique_counts, unique_inverse,
    unique_values, unwrap)
from tessera.numpy._index_tricks import (  # noqa: E402,F401
    c_, get_printoptions, index_exp, mgrid, ogrid, printoptions, r_, s_, set_printoptions)
