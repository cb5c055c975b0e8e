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
        """x with func applied to x[idx] (once per indexed element: a repeated index is applied
        once, where JAX applies func once per occurrence)."""
        vals = self.get(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode="clip" if mode is None else mode)
        return self.set(func(vals), indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode)


Array.at = property(_IndexUpdateHelper, doc="JAX's functional index updates: x.at[idx].set(v)")


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    return _tessera._take(a, indices, axis, mode, fill_value)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    return _tessera._take_along_axis(arr, indices, axis, mode, fill_value)
