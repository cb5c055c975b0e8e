"""jax.lax's windowed reductions: reduce_window (monoid detection as JAX's), padtype_to_pads and
PaddingType."""
import enum as _enum

from tessera import _tessera

_C = _tessera.lax


class PaddingType(_enum.Enum):
    """jax.lax.PaddingType."""
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) padding per dimension for 'VALID', 'SAME', 'SAME_LOWER' (a string in
    any case, or a PaddingType), as jax.lax.padtype_to_pads."""
    if isinstance(padding, PaddingType):
        padding = padding.name
    elif not isinstance(padding, str):
        raise TypeError(f"Unknown padding type: {padding}.")
    return [tuple(p) for p in _C.padtype_to_pads(tuple(in_shape), tuple(window_shape),
                                                  tuple(window_strides), padding)]
