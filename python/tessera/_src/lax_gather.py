"""jax.lax's gather and scatter operators and their dimension-number types, over the C++
primitives (src/prims/gather_scatter.h for the semantics)."""
import enum
from typing import NamedTuple, Sequence

from tessera import _tessera

_C = _tessera.lax


class GatherScatterMode(enum.Enum):
    """How gather and scatter treat indices whose window would leave the operand."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


class GatherDimensionNumbers(NamedTuple):
    offset_dims: Sequence[int]
    collapsed_slice_dims: Sequence[int]
    start_index_map: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    start_indices_batching_dims: Sequence[int] = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


def _mode(mode, default):
    if mode is None:
        return default
    return GatherScatterMode.from_any(mode)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """lax.gather: mode None is PROMISE_IN_BOUNDS (clamped on CPU)."""
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError("gather: dimension_numbers must be a lax.GatherDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    m = _mode(mode, GatherScatterMode.PROMISE_IN_BOUNDS)
    return _C._gather(operand, start_indices, dimension_numbers, tuple(slice_sizes),
                      bool(indices_are_sorted), bool(unique_indices), m, fill_value)


def _scatter(kind):
    def f(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
          unique_indices=False, mode=None):
        if not isinstance(dimension_numbers, ScatterDimensionNumbers):
            raise TypeError(f"scatter: dimension_numbers must be a lax.ScatterDimensionNumbers, "
                            f"got {type(dimension_numbers).__name__}")
        m = _mode(mode, GatherScatterMode.FILL_OR_DROP)
        return _C._scatter(kind, operand, scatter_indices, updates, dimension_numbers,
                           bool(indices_are_sorted), bool(unique_indices), m)
    f.__name__ = "scatter" if kind == "scatter" else f"scatter_{kind}"
    return f


scatter = _scatter("scatter")
scatter_add = _scatter("add")
scatter_sub = _scatter("sub")
scatter_mul = _scatter("mul")
scatter_min = _scatter("min")
scatter_max = _scatter("max")
