"""NumPy references for the slicing family (squeeze, rev, slice, dynamic_slice,
dynamic_update_slice, concatenate, pad), written from jax.lax's documented semantics.

These ops move values without arithmetic, so every result is exact in the operand's dtype.
The dynamic ops model lax.dynamic_slice / lax.dynamic_update_slice as called from Python: a
negative start counts from the end of its dimension (start + dim), then XLA clamps each start
into [0, dim - size] so that the window fits.
"""

import numpy as np


def ops(base):
    JaxError = base.JaxError
    Result = base.Result

    def out(a, ins):
        return Result(np.array(a, dtype=base.storage(ins[0]["dtype"])), ins[0]["dtype"])

    def squeeze(p, ins, x64):
        x = ins[0]["a"]
        dims = [int(d) for d in p["dimensions"]]
        canon = []
        for d in dims:
            if not -x.ndim <= d < x.ndim:
                raise JaxError("ValueError", "squeeze dimension out of range")
            canon.append(d % x.ndim)
        if len(set(canon)) != len(canon):
            raise JaxError("ValueError", "squeeze dimensions are not unique")
        if any(x.shape[d] != 1 for d in canon):
            raise JaxError("ValueError", "squeeze of a dimension whose size is not 1")
        keep = [n for d, n in enumerate(x.shape) if d not in canon]
        return out(x.reshape(keep), ins)

    def rev(p, ins, x64):
        x = ins[0]["a"]
        dims = [int(d) for d in p["dimensions"]]
        if any(not 0 <= d < x.ndim for d in dims) or len(set(dims)) != len(dims):
            raise JaxError("ValueError", "rev dimensions out of range or repeated")
        idx = tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(x.ndim))
        return out(x[idx], ins)

    def slice_(p, ins, x64):
        x = ins[0]["a"]
        start, limit = list(p["start_indices"]), list(p["limit_indices"])
        strides = p.get("strides") or [1] * x.ndim
        if len(start) != x.ndim or len(limit) != x.ndim or len(strides) != x.ndim:
            raise JaxError("TypeError", "slice index lengths differ from the rank")
        for s, l, st, n in zip(start, limit, strides, x.shape):
            if s < 0 or l > n or l < s or st <= 0:
                raise JaxError("TypeError", "slice indices out of range")
        return out(x[tuple(slice(s, l, st) for s, l, st in zip(start, limit, strides))], ins)

    def starts_of(ins, dims, sizes):
        """Each start as Python's lax.dynamic_slice leaves it: negative + dim, then clamped."""
        out_starts = []
        for i, n, k in zip(ins, dims, sizes):
            v = int(np.asarray(i["a"]).reshape(()))
            if v < 0:
                v += n
            out_starts.append(min(max(v, 0), n - k))
        return out_starts

    def dynamic_slice(p, ins, x64):
        x = ins[0]["a"]
        sizes = [int(s) for s in p["slice_sizes"]]
        if len(ins) - 1 != x.ndim or len(sizes) != x.ndim:
            raise JaxError("TypeError", "dynamic_slice needs one start and size per dim")
        if any(k < 0 or k > n for k, n in zip(sizes, x.shape)):
            raise JaxError("TypeError", "dynamic_slice slice_sizes out of range")
        st = starts_of(ins[1:], x.shape, sizes)
        return out(x[tuple(slice(s, s + k) for s, k in zip(st, sizes))], ins)

    def dynamic_update_slice(p, ins, x64):
        x, u = ins[0]["a"], ins[1]["a"]
        if ins[0]["dtype"] != ins[1]["dtype"]:
            raise JaxError("TypeError", "dynamic_update_slice dtypes differ")
        if u.ndim != x.ndim or len(ins) - 2 != x.ndim:
            raise JaxError("TypeError", "dynamic_update_slice ranks differ")
        if any(k > n for k, n in zip(u.shape, x.shape)):
            raise JaxError("TypeError", "dynamic_update_slice update larger than operand")
        st = starts_of(ins[2:], x.shape, u.shape)
        r = np.array(x, copy=True)
        r[tuple(slice(s, s + k) for s, k in zip(st, u.shape))] = u
        return out(r, ins)

    def concatenate(p, ins, x64):
        dim = int(p["dimension"])
        if len({i["dtype"] for i in ins}) != 1:
            raise JaxError("TypeError", "concatenate dtypes differ")
        xs = [i["a"] for i in ins]
        if not xs or len({x.ndim for x in xs}) != 1 or not 0 <= dim < xs[0].ndim:
            raise JaxError("TypeError", "concatenate ranks or dimension")
        return out(np.concatenate(xs, axis=dim), ins)

    def pad(p, ins, x64):
        x, v = ins[0]["a"], ins[1]["a"]
        if ins[0]["dtype"] != ins[1]["dtype"]:
            raise JaxError("TypeError", "pad dtypes differ")
        flat = [int(c) for c in p["padding_config"]]
        cfg = [flat[i:i + 3] for i in range(0, len(flat), 3)]
        if len(cfg) != x.ndim or any(c[2] < 0 for c in cfg):
            raise JaxError("ValueError", "bad padding_config")
        fill = np.asarray(v).reshape(())
        r = np.asarray(x)
        for d, (lo, hi, interior) in enumerate(cfg):
            n = r.shape[d]
            # Interior: n entries spread interior + 1 apart.
            m = n + max(n - 1, 0) * interior
            shape = list(r.shape)
            shape[d] = m
            spread = np.full(shape, fill, dtype=r.dtype)
            idx = [slice(None)] * r.ndim
            idx[d] = slice(0, m, interior + 1)
            spread[tuple(idx)] = r
            # Edges: positive widths add fill, negative widths crop.
            if lo + hi + m < 0:
                raise JaxError("ValueError", "negative result size")
            shape[d] = m + max(lo, 0) + max(hi, 0)
            grown = np.full(shape, fill, dtype=r.dtype)
            idx[d] = slice(max(lo, 0), max(lo, 0) + m)
            grown[tuple(idx)] = spread
            idx[d] = slice(max(-lo, 0), shape[d] - max(-hi, 0))
            r = grown[tuple(idx)]
        return out(r, ins)

    return {
        "lax.squeeze": squeeze,
        "lax.rev": rev,
        "lax.slice": slice_,
        "lax.dynamic_slice": dynamic_slice,
        "lax.dynamic_update_slice": dynamic_update_slice,
        "lax.concatenate": concatenate,
        "lax.pad": pad,
    }
