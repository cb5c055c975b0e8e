"""tessera.lax: jax.lax's names over Tessera's primitives."""
from tessera import _tessera
from tessera._src import array as _array  # noqa: F401  (installs Array's methods)
from tessera._src.dtypes import _BFloat16DType, _ScalarType

_C = _tessera.lax

add, sub, mul, div = _C.add, _C.sub, _C.mul, _C.div
max, min, pow = _C.max, _C.min, _C.pow
eq, ne, lt, le, gt, ge = _C.eq, _C.ne, _C.lt, _C.le, _C.gt, _C.ge
neg, exp, log, sin, cos, tanh, logistic, sqrt = (
    _C.neg, _C.exp, _C.log, _C.sin, _C.cos, _C.tanh, _C.logistic, _C.sqrt)
integer_pow = _C.integer_pow
select_n = _C.select_n
broadcast = _C.broadcast


def _dt(d):
    if isinstance(d, _ScalarType):
        return d.name
    if isinstance(d, _BFloat16DType):
        return "bfloat16"
    return d


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
