"""jax.debug: print and callback, working under every transformation.

``print(fmt, *args, ordered=False, **kwargs)`` formats the arguments' values with ``str.format``
when the program runs (arrays print as NumPy prints them; a format spec on a rank-0 array
formats its scalar, as jax.Array.__format__), and ``callback(fn, *args, ordered=False,
**kwargs)`` calls ``fn`` with the values of pytree arguments. Both bind the ``debug_callback``
primitive: under vmap they run once per batch member, in order; under grad/jvp they see the
primal values, once; they are staged (with a Debug or OrderedDebug effect) by make_jaxpr and
survive dead-code elimination.
"""
import builtins
import functools
import string
import sys

import numpy as _np

from tessera import _tessera
from tessera import tree_util

Array = _tessera.Array

__all__ = ["callback", "print"]


def _as_operand(x):
    return x if isinstance(x, Array) else _tessera.asarray(x)


def callback(callback, *args, ordered=False, **kwargs):
    """jax.debug.callback: calls ``callback(*args, **kwargs)`` with the arguments' values."""
    if not callable(callback):
        raise TypeError("first argument to jax.debug.callback must be callable, "
                        f"but got an object of type {type(callback)}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    operands = [_as_operand(x) for x in flat_args]

    def _flat_callback(flat):
        a, k = tree_util.tree_unflatten(in_tree, list(flat))
        callback(*a, **k)

    _flat_callback.__qualname__ = "debug_callback.<locals>._flat_callback"
    _tessera.debug_callback(_flat_callback, operands, bool(ordered))


class _ArrayFormatter(string.Formatter):
    """str.format with jax.Array's __format__: a spec on a rank-0 array formats its scalar; an
    empty spec prints the array as NumPy's str; traced arrays print as their tracer."""

    def format_field(self, value, format_spec):
        if isinstance(value, Array):
            if value._is_tracer or not format_spec:
                return str(value)
            host = _np.asarray(value)
            return builtins.format(host[()] if host.ndim == 0 else host, format_spec)
        return super().format_field(value, format_spec)


class _DebugPrintFormatChecker(_ArrayFormatter):
    """Checks a format at trace time with JAX's errors for unused arguments."""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(
                f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                "You may be passing an f-string (i.e, `f\"{x}\"`) into "
                "`jax.debug.print` and instead should pass in a regular string.")


_checker = _DebugPrintFormatChecker()
_formatter = _ArrayFormatter()


def _format_print_callback(fmt, *args, **kwargs):
    sys.stdout.write(_formatter.format(fmt, *args, **kwargs) + "\n")


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 (jax.debug.print's name)
    """jax.debug.print: prints ``fmt.format(*args, **kwargs)`` with the values when the program
    runs. Not for f-strings: write ``print("x: {x}", x=x)``."""
    _checker.format(fmt, *args, **kwargs)
    callback(functools.partial(_format_print_callback, fmt), *args, ordered=ordered, **kwargs)
