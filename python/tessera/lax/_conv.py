"""jax.lax's convolutions over Tessera's conv_general_dilated primitive (src/prims/conv.cpp):
conv_general_dilated, conv, conv_with_general_padding, conv_transpose, conv_dimension_numbers,
ConvDimensionNumbers and conv_general_dilated_patches, with JAX's argument forms (padding
strings or (low, high) pairs; dimension numbers None, a ConvDimensionNumbers or three layout
strings; lists or tuples)."""
import operator as _operator
from typing import NamedTuple, Sequence

from tessera import _tessera
from tessera._src.dtypes import dtype_arg as _dt

_C = _tessera.conv

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_patches", "conv_transpose", "conv_with_general_padding"]


class ConvDimensionNumbers(NamedTuple):
    """Batch, feature and spatial dimensions of a convolution: lhs_spec and out_spec are
    (batch dimension, feature dimension, spatial dimensions...), rhs_spec is (output feature
    dimension, input feature dimension, spatial dimensions...)."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


_PRECISIONS = {"default": 0, "fastest": 0, "bfloat16": 0, "high": 1, "tensorfloat32": 1,
               "bfloat16_3x": 1, "highest": 2, "float32": 2}


def _precision(p):
    """lax.Precision-like (None, an enum with a name, a string, or a pair) as its index."""
    if p is None:
        return None
    if isinstance(p, (tuple, list)):
        if len(p) != 2:
            raise ValueError(f"precision should be None, a Precision, a string or a pair of "
                             f"them, got {p!r}")
        return _precision(p[0])
    name = p if isinstance(p, str) else getattr(p, "name", None)
    if name is None or name.lower() not in _PRECISIONS:
        raise ValueError(f"Unrecognized precision: {p!r}; expected None, lax.Precision."
                         f"DEFAULT/HIGH/HIGHEST or one of {sorted(_PRECISIONS)}")
    return _PRECISIONS[name.lower()]


def _dimension_numbers(dn):
    """None, three layout strings, or three int tuples (a ConvDimensionNumbers)."""
    if dn is None:
        return None
    if isinstance(dn, ConvDimensionNumbers):
        return tuple(tuple(int(d) for d in spec) for spec in dn)
    if isinstance(dn, (list, tuple)):
        if len(dn) != 3:
            raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dn)}.")
        if all(isinstance(e, str) for e in dn):
            return tuple(dn)
        if all(isinstance(e, (list, tuple)) for e in dn):
            return tuple(tuple(_operator.index(d) for d in spec) for spec in dn)
        raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dn))}.")
    raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got {type(dn)}.")


def _padding(padding):
    if isinstance(padding, str):
        return padding
    try:
        return [(_operator.index(lo), _operator.index(hi)) for lo, hi in padding]
    except (ValueError, TypeError) as e:
        raise ValueError("padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from e


def _ints(xs):
    return None if xs is None else [_operator.index(x) for x in xs]


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """The ConvDimensionNumbers that None, three layout strings ('NHWC', 'HWIO', 'NHWC') or a
    ConvDimensionNumbers stand for, for operands of these shapes."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    dn = _C.conv_dimension_numbers(list(lhs_shape), list(rhs_shape),
                                   _dimension_numbers(dimension_numbers))
    return ConvDimensionNumbers(*(tuple(spec) for spec in dn))


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None, out_sharding=None):
    """General n-dimensional convolution with padding, strides, lhs ("transposed") and rhs
    ("atrous") dilation, feature and batch groups; jax.lax.conv_general_dilated."""
    if out_sharding is not None:
        raise NotImplementedError("conv_general_dilated: out_sharding is not supported by "
                                  "Tessera yet; shard the result with device_put")
    return _C.conv_general_dilated(
        lhs, rhs, _ints(window_strides), _padding(padding), _ints(lhs_dilation),
        _ints(rhs_dilation), _dimension_numbers(dimension_numbers),
        _operator.index(feature_group_count), _operator.index(batch_group_count),
        _precision(precision), _dt(preferred_element_type))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated with NC.../OI... layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated with NC.../OI... layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """A fractionally strided convolution (jax.lax.conv_transpose): TensorFlow's layouts by
    default; transpose_kernel flips the kernel and swaps its feature dims (Keras'
    Conv2DTranspose); use_consistent_padding reads pairs as the forward convolution's padding
    (PyTorch's conv_transpose)."""
    return _C.conv_transpose(lhs, rhs, _ints(strides), _padding(padding), _ints(rhs_dilation),
                             _dimension_numbers(dimension_numbers), bool(transpose_kernel),
                             _precision(precision), _dt(preferred_element_type),
                             bool(use_consistent_padding))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches conv_general_dilated would multiply with a filter of `filter_shape`: each
    output feature is one (input feature, window position) pair, input-feature major (a
    depthwise convolution with a one-hot filter, as JAX computes it)."""
    from tessera import numpy as jnp
    lhs = jnp.asarray(lhs)
    filter_shape = tuple(_operator.index(k) for k in filter_shape)
    dn = conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    size = 1
    for k in filter_shape:
        size *= k
    channels = lhs.shape[dn.lhs_spec[1]]
    rhs = jnp.eye(size, dtype=lhs.dtype).reshape((size, 1) + filter_shape)
    rhs = jnp.tile(rhs, (channels,) + (1,) * (rhs.ndim - 1))
    # Canonical (O, I, spatial...) to the layout rhs_spec describes.
    perm = [0] * rhs.ndim
    for canonical, position in enumerate(dn.rhs_spec):
        perm[position] = canonical
    rhs = jnp.transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                dn, feature_group_count=channels, precision=precision,
                                preferred_element_type=preferred_element_type)
