"""jax.lax.associative_scan and the cumulative reductions (lax.cumsum, cumprod, cummax, cummin,
cumlogsumexp), and jax.numpy's cumsum, cumprod, nancumsum, nancumprod, cumulative_sum and
cumulative_prod, over Tessera's C++ core (src/api/lax_assoc_scan.cpp, numpy_cumulative.cpp)."""
import operator as _operator

from tessera import _tessera

_C = _tessera.lax
_N = _tessera.numpy


def associative_scan(fn, elems, reverse=False, axis=0):
    """The inclusive scan of `elems` (a pytree of arrays with one extent along `axis`) with the
    associative function fn(a, b) -> c on pytrees of elems' structure, as jax.lax's parallel
    prefix: fn is called O(log n) times on whole slices of the elements."""
    from tessera import tree_util
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    elems_flat, tree = tree_util.tree_flatten(elems)
    n = len(elems_flat)

    def flat_fn(xs):
        a = tree_util.tree_unflatten(tree, list(xs[:n]))
        b = tree_util.tree_unflatten(tree, list(xs[n:]))
        # As JAX, only fn's leaves count (a tuple for list elems is fine); the core checks
        # their number, shapes and dtypes.
        return tree_util.tree_leaves(fn(a, b))

    outs = _C.associative_scan(flat_fn, elems_flat, bool(reverse), _operator.index(axis))
    return tree_util.tree_unflatten(tree, outs)


def cumsum(operand, axis=0, reverse=False):
    """Computes a cumulative sum along `axis`."""
    return _C.cumsum(operand, _operator.index(axis), bool(reverse))


def cumprod(operand, axis=0, reverse=False):
    """Computes a cumulative product along `axis`."""
    return _C.cumprod(operand, _operator.index(axis), bool(reverse))


def cummax(operand, axis=0, reverse=False):
    """Computes a cumulative maximum along `axis`."""
    return _C.cummax(operand, _operator.index(axis), bool(reverse))


def cummin(operand, axis=0, reverse=False):
    """Computes a cumulative minimum along `axis`."""
    return _C.cummin(operand, _operator.index(axis), bool(reverse))


def cumlogsumexp(operand, axis=0, reverse=False):
    """Computes a cumulative logsumexp along `axis`."""
    return _C.cumlogsumexp(operand, _operator.index(axis), bool(reverse))


# ---- jax.numpy ----
def _dtype(d):
    from tessera._src.dtypes import dtype_arg
    return dtype_arg(d)


def _axis(axis):
    return None if axis is None else _operator.index(axis)


def _np_cumulative(name):
    f = getattr(_N, name)

    def cumulative(a, axis=None, dtype=None, out=None):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
        return f(a, _axis(axis), _dtype(dtype))

    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = f"jax.numpy.{name}: axis=None flattens; dtype as jnp."
    return cumulative


np_cumsum = _np_cumulative("cumsum")
np_cumprod = _np_cumulative("cumprod")
np_nancumsum = _np_cumulative("nancumsum")
np_nancumprod = _np_cumulative("nancumprod")


def np_cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """jax.numpy.cumulative_sum (the array API): bool and narrow integers accumulate in the
    default int; include_initial prepends zeros."""
    return _N.cumulative_sum(x, _axis(axis), _dtype(dtype), bool(include_initial))


def np_cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """jax.numpy.cumulative_prod (the array API); include_initial prepends ones."""
    return _N.cumulative_prod(x, _axis(axis), _dtype(dtype), bool(include_initial))


np_cumulative_sum.__name__ = np_cumulative_sum.__qualname__ = "cumulative_sum"
np_cumulative_prod.__name__ = np_cumulative_prod.__qualname__ = "cumulative_prod"
