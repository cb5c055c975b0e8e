"""NumPy references for the sort family: lax.sort (params dimension, num_keys, out_index — the
operand whose sorted result the row returns), written from jax.lax.sort's documented order:
lexicographic by the first num_keys operands, stable; floats order -0.0 and +0.0 as equal and
every NaN after +inf (NaNs equal); bool false < true. The permutation is np.lexsort's (stable)
over (NaN flag, value) pairs per key, and every operand is permuted by it exactly.
"""

import numpy as np


def ops(base):
    JaxError = base.JaxError
    Result = base.Result

    def lexsort_keys(a, dt):
        """(value, NaN flag) as np.lexsort keys, the flag more significant."""
        if base.is_float(dt):
            v = np.asarray(a, dtype=np.float64)
            nan = np.isnan(v)
            return [np.where(nan, 0.0, v), nan.astype(np.int8)]
        if dt == "bool":
            return [np.asarray(a).astype(np.int8)]
        return [np.asarray(a)]

    def sort(p, ins, x64):
        if not ins:
            raise JaxError("TypeError", "Sort requires at least one operand")
        arrs = [i["a"] for i in ins]
        dts = [i["dtype"] for i in ins]
        shape = arrs[0].shape
        if any(a.shape != shape for a in arrs):
            raise JaxError("TypeError", "Arguments to sort must have equal shapes")
        nd = len(shape)
        dim = int(p.get("dimension", -1))
        if dim < -nd or dim >= nd:
            raise JaxError("ValueError", "axis %d is out of bounds for array of dimension %d"
                           % (dim, nd))
        dim %= nd
        nk = int(p.get("num_keys", 1))
        if nk < 1 or nk > len(arrs):
            raise JaxError("ValueError", "num_keys=%d must be between 1 and %d" % (nk, len(arrs)))
        out = int(p.get("out_index", 0))
        keys = []
        for k in reversed(range(nk)):  # np.lexsort: the last key is primary
            keys.extend(lexsort_keys(arrs[k], dts[k]))
        if arrs[0].size == 0:
            return Result(np.asarray(arrs[out]).copy(), dts[out])
        perm = np.lexsort([np.moveaxis(k, dim, -1) for k in keys], axis=-1)
        y = np.take_along_axis(np.moveaxis(arrs[out], dim, -1), perm, axis=-1)
        return Result(np.ascontiguousarray(np.moveaxis(y, -1, dim)), dts[out])

    return {"lax.sort": sort}
