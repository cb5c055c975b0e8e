"""JAX's functional index updates (x.at[idx].set(v) & co.), jnp.take and jnp.take_along_axis,
over the C++ indexer (tessera/numpy_indexing.h: one gather or scatter per expression)."""
from tessera import _tessera
from tessera._src.array import Array

_OPS = {"set": 0, "add": 1, "subtract": 2, "multiply": 3, "divide": 4, "power": 5, "min": 6,
        "max": 7}


class _IndexUpdateHelper:
    """x.at: indexing it gives the reference whose methods return updated copies of x."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


def _update(name):
    def method(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _tessera._index_update(self.array, self.index, values, _OPS[name], mode,
                                      bool(indices_are_sorted), bool(unique_indices))
    method.__name__ = name
    method.__doc__ = f"x.at[idx].{name}(values): x with x[idx] {name} values (out-of-bounds "\
        "updates are dropped unless mode says otherwise)."
    return method


class _IndexUpdateRef:
    """x.at[idx]: get, set, add, subtract, multiply (mul), divide, power, min, max, apply."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
            out_sharding=None):
        return _tessera._index_get(self.array, self.index, mode, fill_value,
                                   bool(indices_are_sorted), bool(unique_indices))

    set = _update("set")
    add = _update("add")
    subtract = _update("subtract")
    multiply = _update("multiply")
    mul = multiply
    divide = _update("divide")
    power = _update("power")
    min = _update("min")
    max = _update("max")

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with the unary func applied to x[idx]: once per occurrence, as JAX's scatter_apply
        (an element indexed k times becomes func applied k times). The indexed values are
        gathered once, func runs on them as often as the most repeated destination needs (a
        while_loop: its count may be traced), and one scatter writes them back."""
        gmode = "clip" if mode is None else mode
        vals = self.get(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=gmode)
        if unique_indices:
            new = func(vals)
        else:
            from tessera import lax
            from tessera import numpy as jnp
            counts = jnp.zeros(self.array.shape, jnp.int32).at[self.index].add(1, mode=mode)
            times = counts.at[self.index].get(mode=gmode)
            rounds = jnp.max(times, initial=0)

            def body(state):
                t, v = state
                return t + 1, jnp.where(times > t, jnp.asarray(func(v)).astype(v.dtype), v)

            new = lax.while_loop(lambda s: s[0] < rounds, body, (jnp.int32(0), vals))[1]
        return self.set(new, indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode)


Array.at = property(_IndexUpdateHelper, doc="JAX's functional index updates: x.at[idx].set(v)")


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    return _tessera._take(a, indices, axis, mode, fill_value)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    return _tessera._take_along_axis(arr, indices, axis, mode, fill_value)
