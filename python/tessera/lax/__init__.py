"""tessera.lax: jax.lax's names over Tessera's primitives."""
import enum as _enum
import operator as _operator

from tessera import _tessera
from tessera._src import array as _array  # noqa: F401  (installs Array's methods)
from tessera._src.dtypes import dtype_arg as _dt
from tessera._src.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401

_C = _tessera.lax

add, sub, mul, div = _C.add, _C.sub, _C.mul, _C.div
max, min, pow = _C.max, _C.min, _C.pow
eq, ne, lt, le, gt, ge = _C.eq, _C.ne, _C.lt, _C.le, _C.gt, _C.ge
neg, exp, log, sin, cos, tanh, logistic, sqrt = (
    _C.neg, _C.exp, _C.log, _C.sin, _C.cos, _C.tanh, _C.logistic, _C.sqrt)
integer_pow = _C.integer_pow
select_n = _C.select_n
broadcast = _C.broadcast


def stop_gradient(x):
    """The identity whose derivative is zero; maps over pytrees as jax.lax.stop_gradient."""
    from tessera import tree_util
    return tree_util.tree_map(_C.stop_gradient, x)


def convert_element_type(operand, new_dtype):
    return _C.convert_element_type(operand, _dt(new_dtype))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    return _C.broadcast_in_dim(operand, tuple(shape), tuple(broadcast_dimensions))


def reshape(operand, new_sizes, dimensions=None):
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    return _C.reshape(operand, tuple(new_sizes))


def transpose(operand, permutation):
    return _C.transpose(operand, tuple(permutation))


def iota(dtype, size):
    return _C.iota(_dt(dtype), size)


def broadcasted_iota(dtype, shape, dimension):
    return _C.broadcasted_iota(_dt(dtype), tuple(shape), dimension)


def reduce_sum(operand, axes):
    return _C.reduce_sum(operand, tuple(axes))


def reduce_max(operand, axes):
    return _C.reduce_max(operand, tuple(axes))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    return _C.dot_general(lhs, rhs, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))),
                          _dt(preferred_element_type))


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    from tessera import numpy as jnp
    out = jnp.dot(lhs, rhs)
    return out if preferred_element_type is None else convert_element_type(out, preferred_element_type)


# ---- more elementwise math, special functions, bitwise (lax.h) ----
abs, sign, floor, ceil = _C.abs, _C.sign, _C.floor, _C.ceil
exp2, expm1, log1p, rsqrt, cbrt = _C.exp2, _C.expm1, _C.log1p, _C.rsqrt, _C.cbrt
tan, asin, acos, atan, atan2 = _C.tan, _C.asin, _C.acos, _C.atan, _C.atan2
sinh, cosh, asinh, acosh, atanh = _C.sinh, _C.cosh, _C.asinh, _C.acosh, _C.atanh
is_finite, nextafter, rem, square, reciprocal = (
    _C.is_finite, _C.nextafter, _C.rem, _C.square, _C.reciprocal)
erf, erfc, erf_inv, lgamma, digamma = _C.erf, _C.erfc, _C.erf_inv, _C.lgamma, _C.digamma
polygamma, zeta, igamma, igammac, igamma_grad_a = (
    _C.polygamma, _C.zeta, _C.igamma, _C.igammac, _C.igamma_grad_a)
random_gamma_grad, bessel_i0e, bessel_i1e, betainc = (
    _C.random_gamma_grad, _C.bessel_i0e, _C.bessel_i1e, _C.betainc)
bitwise_not, bitwise_and, bitwise_or, bitwise_xor = (
    _C.bitwise_not, _C.bitwise_and, _C.bitwise_or, _C.bitwise_xor)
shift_left, shift_right_logical, shift_right_arithmetic = (
    _C.shift_left, _C.shift_right_logical, _C.shift_right_arithmetic)
population_count, clz = _C.population_count, _C.clz


class RoundingMethod(_enum.IntEnum):
    """lax.round's rounding of halfway cases."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    return _C.round(x, int(RoundingMethod(rounding_method)))


def clamp(min, x, max):
    """min <= x <= max elementwise; min and max are rank 0 or x's shape."""
    return _C.clamp(min, x, max)


def bitcast_convert_type(operand, new_dtype):
    return _C.bitcast_convert_type(operand, _dt(new_dtype))


def reduce_precision(operand, exponent_bits, mantissa_bits):
    return _C.reduce_precision(operand, _operator.index(exponent_bits),
                               _operator.index(mantissa_bits))


# ---- reductions ----
def reduce_prod(operand, axes):
    return _C.reduce_prod(operand, tuple(axes))


def reduce_min(operand, axes):
    return _C.reduce_min(operand, tuple(axes))


def reduce_and(operand, axes):
    return _C.reduce_and(operand, tuple(axes))


def reduce_or(operand, axes):
    return _C.reduce_or(operand, tuple(axes))


def reduce_xor(operand, axes):
    return _C.reduce_xor(operand, tuple(axes))


def argmax(operand, axis, index_dtype):
    return _C.argmax(operand, _operator.index(axis), _dt(index_dtype))


def argmin(operand, axis, index_dtype):
    return _C.argmin(operand, _operator.index(axis), _dt(index_dtype))


def reduce(operands, init_values, computation, dimensions):
    """jax.lax.reduce: operands and init_values are matching pytrees (one array, or several);
    computation(accumulators, values) -> accumulators on rank-0 values of that structure."""
    from tessera import tree_util
    flat_ops, tree = tree_util.tree_flatten(operands)
    flat_init, init_tree = tree_util.tree_flatten(init_values)
    if init_tree != tree:
        raise ValueError("lax.reduce: operands and init_values must have the same tree "
                         f"structure, got {tree} and {init_tree}")

    def body(accs, values):
        out = computation(tree_util.tree_unflatten(tree, accs),
                          tree_util.tree_unflatten(tree, values))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError("lax.reduce: the computation must return the operands' structure "
                            f"{tree}, got {out_tree}")
        return out_leaves

    outs = _C.reduce(flat_ops, flat_init, body, tuple(dimensions))
    return tree_util.tree_unflatten(tree, outs)


# ---- slicing, concatenation, padding ----
def squeeze(array, dimensions):
    return _C.squeeze(array, tuple(dimensions))


def expand_dims(array, dimensions):
    return _C.expand_dims(array, tuple(dimensions))


def rev(operand, dimensions):
    return _C.rev(operand, tuple(dimensions))


def slice(operand, start_indices, limit_indices, strides=None):
    return _C.slice(operand, tuple(start_indices), tuple(limit_indices),
                    () if strides is None else tuple(strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    shape = _tessera.asarray(operand).shape
    ax = _operator.index(axis)
    n = shape[ax] if -len(shape) <= ax < len(shape) else 0
    start = 0 if start_index is None else _operator.index(start_index)
    limit = n if limit_index is None else _operator.index(limit_index)
    return _C.slice_in_dim(operand, start, limit, _operator.index(stride), ax)


def index_in_dim(operand, index, axis=0, keepdims=True):
    return _C.index_in_dim(operand, _operator.index(index), _operator.index(axis), bool(keepdims))


def dynamic_slice(operand, start_indices, slice_sizes):
    return _C.dynamic_slice(operand, list(start_indices), tuple(slice_sizes))


def dynamic_update_slice(operand, update, start_indices):
    return _C.dynamic_update_slice(operand, update, list(start_indices))


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    return _C.dynamic_slice_in_dim(operand, start_index, _operator.index(slice_size),
                                   _operator.index(axis))


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    return _C.dynamic_index_in_dim(operand, index, _operator.index(axis), bool(keepdims))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    return _C.dynamic_update_slice_in_dim(operand, update, start_index, _operator.index(axis))


def dynamic_update_index_in_dim(operand, update, index, axis):
    """dynamic_update_slice_in_dim of `update` with a size-1 axis inserted at `axis` when it
    has the operand's rank minus one (as jax.lax)."""
    operand = _tessera.asarray(operand)
    update = _tessera.asarray(update)
    ax = _operator.index(axis)
    if operand.ndim:
        ax %= operand.ndim
    if update.ndim == operand.ndim - 1:
        update = _C.expand_dims(update, (ax,))
    return _C.dynamic_update_slice_in_dim(operand, update, index, ax)


def concatenate(operands, dimension):
    return _C.concatenate(list(operands), _operator.index(dimension))


def pad(operand, padding_value, padding_config):
    return _C.pad(operand, padding_value, [tuple(c) for c in padding_config])
from tessera._src.lax_cumulative import associative_scan, cumlogsumexp, cummax, cummin, cumprod, cumsum  # noqa: E402,F401,E501
from tessera._src.lax_gather import (  # noqa: E402,F401
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter,
    scatter_add, scatter_max, scatter_min, scatter_mul, scatter_sub)
from tessera._src.lax_sort import sort, sort_key_val, top_k  # noqa: E402,F401
from tessera.lax._window import PaddingType, padtype_to_pads, reduce_window  # noqa: E402,F401


# ---- everyday extras: full/full_like, collapse, batch_matmul, select, optimization_barrier ----
def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with `fill_value`; weakly typed when dtype is None and the
    fill value is a Python scalar (as jax.lax.full)."""
    shape = (shape,) if isinstance(shape, int) else tuple(_operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise TypeError(f"full: shape must have non-negative dimensions; got {shape}")
    fill = _tessera.asarray(fill_value)
    if fill.ndim != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{fill.shape}.")
    if dtype is not None:
        fill = convert_element_type(fill, dtype)
    return broadcast_in_dim(fill, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """full with x's shape and dtype (and x's weak type when dtype is None)."""
    x = _tessera.asarray(x)
    shape = x.shape if shape is None else shape
    if dtype is None:
        fill = _tessera.asarray(fill_value)
        if fill.ndim != 0:
            raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                            f"{fill.shape}.")
        fill = convert_element_type(fill, x.dtype)
        if x.weak_type and not fill._is_tracer:
            # A Python scalar of x's kind is weakly typed with x's (default) dtype.
            py = {"b": bool, "i": int, "u": int, "f": float}.get(getattr(x.dtype, "kind", ""))
            weak = _tessera.asarray(py(fill.item())) if py is not None else None
            if weak is not None and weak.weak_type and weak.dtype == x.dtype:
                fill = weak
        out = full(shape, fill)
        return out
    return full(shape, fill_value, dtype)


def zeros_like_array(x):
    return full_like(x, 0)


def collapse(operand, start_dimension, stop_dimension=None):
    """operand with dimensions [start_dimension, stop_dimension) merged into one."""
    operand = _tessera.asarray(operand)
    nd = operand.ndim
    lo = _operator.index(start_dimension)
    hi = nd if stop_dimension is None else _operator.index(stop_dimension)
    lo = lo + nd if lo < 0 else lo
    hi = hi + nd if hi < 0 else hi
    if not 0 <= lo <= hi <= nd:
        raise ValueError(f"collapse: invalid dimensions start={start_dimension}, "
                         f"stop={stop_dimension} for an operand of rank {nd}")
    shape = operand.shape
    size = 1
    for d in shape[lo:hi]:
        size *= d
    return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product: (..., m, k) x (..., k, n) with equal batch dimensions."""
    lhs, rhs = _tessera.asarray(lhs), _tessera.asarray(rhs)
    if min(lhs.ndim, rhs.ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)),
                       precision=precision)


def optimization_barrier(operand):
    """The identity on a pytree of arrays (Tessera's compiler has no reordering to block)."""
    from tessera import tree_util
    return tree_util.tree_map(_tessera.asarray, operand)


def select(pred, on_true, on_false):
    """select_n with a boolean predicate: on_true where pred, else on_false."""
    p = _tessera.asarray(pred)
    if str(p.dtype) != "bool":
        raise TypeError(f"select pred must be boolean type, got {p.dtype}.")
    return select_n(p, on_false, on_true)


def complex(x, y):
    raise NotImplementedError("lax.complex: Tessera has no complex64 / complex128 dtypes yet, "
                              "so complex numbers cannot be built")


from tessera.lax import linalg  # noqa: E402,F401
from tessera.lax._conv import (ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated, conv_general_dilated_patches, conv_transpose, conv_with_general_padding)  # noqa: E402,F401,E501
from tessera.lax._custom_linear_solve import custom_linear_solve, custom_root  # noqa: E402,F401
from tessera.lax._more import (  # noqa: E402,F401
    approx_max_k, approx_min_k, broadcast_shapes, broadcast_to_rank, conj, platform_dependent,
    split)
from tessera.lax._parallel import (  # noqa: E402,F401
    all_gather, axis_index, axis_size, pmax, pmean, pmin, ppermute, pshuffle, psum,
    psum_scatter, reduce_scatter)
