"""NumPy references for tessera::numpy's index functions (numpy_index_funcs.h), loaded by
numpy_oracle.py. Tuple-returning functions take "out" (which element a case compares).
Where JAX differs from NumPy the reference restates JAX's documented behaviour: a static
`size` pads (fill_value) or truncates, bincount counts negative values in bin 0, unravel_index
wraps negative indices and clips out-of-range ones, searchsorted/digitize/argpartition return
int32 and the other produced indices the default int (int64 canonicalized to int32 without x64).

  "idx.nonzero" {out, size?, fill?}     "idx.flatnonzero" {size?, fill?}   "idx.argwhere" {size?}
  "idx.searchsorted" {side}             "idx.digitize" {right}
  "idx.bincount" {minlength, length?}   inputs x (, weights)
  "idx.unique" {out: values|index|inverse|counts, size?, fill?}
  "idx.partition" {kth, axis}           "idx.argpartition" {kth, axis}
  "idx.select" {n}  inputs n conditions, n choices, default
  "idx.choose" {mode}  inputs a, choices...
  "idx.compress" {axis?, size?, fill}   "idx.extract" {size?, fill}
  "idx.diff" {n, axis, prepend, append} inputs a (, prepend) (, append)
  "idx.ediff1d" {to_begin, to_end}      inputs ary (, to_begin) (, to_end)
  "idx.unravel_index" {shape, out}      "idx.ravel_multi_index" {dims, mode, order}
  "idx.tri_indices" {fn, n, k, m?, out} "idx.indices" {dims}
  "idx.put" {mode?}  inputs a, ind, v   "idx.put_along_axis" {axis?}  inputs arr, idx, values
  "idx.histogram" {bins | edges input, range?, density, out}  inputs a (, weights) (, edges)
  "idx.interp" {left?, right?, period?} inputs x, xp, fp
  "idx.histogramdd" {bins: [count or null (edges input)] per dim, ranges?: [pair or null],
                     weights, density, out: -1 hist | i edges of dim i}
                     inputs sample (N, D) (, weights) (, the edges of each null bin, in order)
  "idx.unique_axis" {axis, out: values|index|inverse|counts}
"""

import numpy as np


def ops(base):
    Result = base.Result

    def default_int(x64):
        return base.canonicalize("int64", x64)

    def ints(v, x64):
        return Result(np.asarray(v).astype(np.int64).astype(default_int(x64)), default_int(x64))

    def i32(v):
        return Result(np.asarray(v).astype(np.int32), "int32")

    def arr(i):
        return np.asarray(i["a"])

    def f64(i):
        return base.to_f64(i["a"])

    def same(v, i):
        dt = i["dtype"]
        return Result(np.asarray(v).astype(base.storage(dt)), dt)

    def padded(v, size, fill):
        v = np.asarray(v)
        if size is None:
            return v
        out = np.full((size,) + v.shape[1:], fill, dtype=v.dtype)
        k = min(size, v.shape[0])
        out[:k] = v[:k]
        return out

    def nonzero(p, ins, x64):
        a = arr(ins[0])
        nz = np.nonzero(a)
        fill = p.get("fill", 0)
        fills = fill if isinstance(fill, list) else [fill] * a.ndim
        v = padded(nz[p["out"]], p.get("size"), fills[p["out"]])
        return ints(v, x64)

    def flatnonzero(p, ins, x64):
        return ints(padded(np.flatnonzero(arr(ins[0])), p.get("size"), p.get("fill", 0)), x64)

    def argwhere(p, ins, x64):
        a = arr(ins[0])
        w = np.argwhere(a)
        if a.ndim == 0:
            w = w.reshape((w.shape[0], 0))
        return ints(padded(w, p.get("size"), p.get("fill", 0)), x64)

    def searchsorted(p, ins, x64):
        return i32(np.searchsorted(f64(ins[0]), f64(ins[1]), side=p["side"]))

    def digitize(p, ins, x64):
        return i32(np.digitize(f64(ins[0]), f64(ins[1]), right=p["right"]))

    def bincount(p, ins, x64):
        x = np.maximum(arr(ins[0]).astype(np.int64), 0)
        w = f64(ins[1]) if len(ins) > 1 else None
        r = np.bincount(x, w, minlength=p.get("minlength", 0))
        if "length" in p:
            r = np.concatenate([r, np.zeros(max(0, p["length"] - len(r)), r.dtype)])[:p["length"]]
        if w is None:
            return ints(r, x64)
        dt = ins[1]["dtype"]
        if base.is_float(dt):
            return Result(base.round_to(r, dt), dt, rtol=1e-5, atol=1e-5)
        return Result(base.wrap_ints(r.astype(object), dt), dt)

    def unique(p, ins, x64):
        a = arr(ins[0])
        dt = ins[0]["dtype"]
        vals, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                                 return_counts=True, equal_nan=True)
        size = p.get("size")
        out = p["out"]
        if a.size == 0 and size and "fill" not in p:
            raise base.JaxError("ValueError", "jnp.unique: for zero-sized input with nonzero "
                                "size argument, fill_value must be specified")
        if out == "values":
            fill = p.get("fill", vals[0] if vals.size else 0)
            return Result(padded(vals, size, fill).astype(base.storage(dt)), dt)
        if out == "index":  # JAX pads with the first unique value's index
            return ints(padded(index, size, index[0] if index.size else 0), x64)
        if out == "inverse":
            return ints(np.asarray(inverse).reshape(a.shape), x64)
        return ints(padded(counts, size, 0), x64)

    def partition(p, ins, x64):
        return same(np.sort(arr(ins[0]), axis=p["axis"], kind="stable"), ins[0])

    def argpartition(p, ins, x64):
        return i32(np.argsort(arr(ins[0]), axis=p["axis"], kind="stable"))

    def select(p, ins, x64):
        n = p["n"]
        conds = [arr(i) for i in ins[:n]]
        choices = [arr(i) for i in ins[n:2 * n]]
        dt = ins[n]["dtype"]
        r = np.select(conds, choices, arr(ins[2 * n]))
        return Result(np.asarray(r).astype(base.storage(dt)), dt)

    def choose(p, ins, x64):
        r = np.choose(arr(ins[0]), [arr(i) for i in ins[1:]], mode=p["mode"])
        return same(r, ins[1])

    def compress(p, ins, x64):
        cond = arr(ins[0]).astype(bool)
        a = arr(ins[1])
        axis = p.get("axis")
        if axis is None:
            a, axis = a.ravel(), 0
        m = a.shape[axis]
        cond = np.concatenate([cond[:m], np.zeros(max(0, m - cond.shape[0]), bool)])
        r = np.moveaxis(np.compress(cond, a, axis=axis), axis, 0)
        r = np.moveaxis(padded(r, p.get("size"), p.get("fill", 0)), 0, axis)
        return same(r, ins[1])

    def steps(a, n, axis, dt):
        """n differences along axis, each rounded once to dt (bool: !=)."""
        for _ in range(n):
            hi = np.take(a, np.arange(1, a.shape[axis]), axis=axis)
            lo = np.take(a, np.arange(0, a.shape[axis] - 1), axis=axis)
            if dt == "bool":
                a = hi != lo
            elif base.is_float(dt):
                a = base.to_f64(base.round_to(base.to_f64(hi) - base.to_f64(lo), dt))
            else:
                a = base.wrap_ints(hi.astype(object) - lo.astype(object), dt)
        return a

    def diff(p, ins, x64):
        dt = ins[0]["dtype"]
        a = arr(ins[0])
        axis = p["axis"] % a.ndim
        parts = []
        k = 1
        for key in ("prepend", "append"):
            if p.get(key):
                e = arr(ins[k])
                k += 1
                if e.ndim == 0:
                    shape = list(a.shape)
                    shape[axis] = 1
                    e = np.broadcast_to(e, shape)
                parts.append((key, e.astype(a.dtype)))
        pre = [e for key, e in parts if key == "prepend"]
        app = [e for key, e in parts if key == "append"]
        a = np.concatenate(pre + [a] + app, axis=axis)
        return same(steps(a, p["n"], axis, dt), ins[0])

    def ediff1d(p, ins, x64):
        dt = ins[0]["dtype"]
        r = steps(arr(ins[0]).ravel(), 1, 0, dt)
        k = 1
        parts = [r]
        if p.get("to_begin"):
            parts.insert(0, np.ravel(arr(ins[k])).astype(r.dtype))
            k += 1
        if p.get("to_end"):
            parts.append(np.ravel(arr(ins[k])).astype(r.dtype))
        return same(np.concatenate(parts), ins[0])

    def unravel_index(p, ins, x64):
        shape = tuple(p["shape"])
        total = int(np.prod(shape))
        i = arr(ins[0]).astype(np.int64)
        i = np.clip(np.where(i < 0, i + total, i), 0, total - 1)
        return same(np.unravel_index(i, shape)[p["out"]], ins[0])

    def ravel_multi_index(p, ins, x64):
        r = np.ravel_multi_index(tuple(arr(i) for i in ins), tuple(p["dims"]), mode=p["mode"],
                                 order=p["order"])
        return same(r, ins[0])

    def tri_indices(p, ins, x64):
        fn = getattr(np, p["fn"])
        return ints(fn(p["n"], p["k"], p.get("m"))[p["out"]], x64)

    def indices(p, ins, x64):
        return ints(np.indices(tuple(p["dims"])), x64)

    def put(p, ins, x64):
        a = arr(ins[0]).copy()
        kw = {"mode": p["mode"]} if p.get("mode") else {}
        np.put(a, arr(ins[1]), arr(ins[2]).astype(a.dtype), **kw)
        return same(a, ins[0])

    def put_along_axis(p, ins, x64):
        a = arr(ins[0]).copy()
        np.put_along_axis(a, arr(ins[1]).astype(np.int64), arr(ins[2]).astype(a.dtype),
                          p.get("axis"))
        return same(a, ins[0])

    def histogram(p, ins, x64):
        a = f64(ins[0])
        dt = base.canonicalize("float64", x64) if not base.is_float(ins[0]["dtype"]) \
            else ins[0]["dtype"]
        k = 1
        w = None
        if p.get("weights"):
            w = f64(ins[k])
            k += 1
        if p.get("edges"):
            bins = f64(ins[k])
        else:
            bins = p["bins"]
            lo, hi = p["range"] if p.get("range") else (a.min(), a.max()) if a.size else (0, 1)
            # The edges are computed in double and rounded once to dt (as NumPy does).
            lo, hi = float(lo), float(hi)
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            bins = base.to_f64(base.round_to(np.linspace(lo, hi, bins + 1), dt))
        # Count against the rounded edges, as JAX/NumPy do for data of dtype dt.
        a = base.to_f64(base.round_to(a, dt))
        hist, edges = np.histogram(a, bins=bins, weights=w, density=p.get("density", False))
        if p["out"] == 1:
            return Result(base.round_to(edges, dt), dt)
        tol = 1e-5 if dt != "float64" else 1e-12
        return Result(base.round_to(hist, dt), dt, rtol=tol, atol=tol)

    def count_edges(col, n, rng, dt):
        """jnp's edges for n bins: a double linspace over the range (default the data's min
        and max; (0, 1) when empty; widened by 0.5 when empty), rounded once to dt."""
        lo, hi = rng if rng is not None else (col.min(), col.max()) if col.size else (0, 1)
        lo, hi = float(lo), float(hi)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return base.to_f64(base.round_to(np.linspace(lo, hi, n + 1), dt))

    def histogramdd(p, ins, x64):
        sample = f64(ins[0])
        dts = [ins[0]["dtype"]] + ([ins[1]["dtype"]] if p["weights"] else [])
        floats = [d for d in dts if base.is_float(d)]  # float32/float64 (JAX's promotion)
        dt = ("float64" if "float64" in floats else "float32") if floats else \
            base.canonicalize("float64", x64)
        k = 1
        w = None
        if p["weights"]:
            w = f64(ins[1])
            k = 2
        sample = base.to_f64(base.round_to(sample, dt))
        ranges = p.get("ranges") or [None] * sample.shape[1]
        edges = []
        for d, n in enumerate(p["bins"]):
            if n is None:
                edges.append(base.to_f64(base.round_to(f64(ins[k]), dt)))
                k += 1
            else:
                edges.append(count_edges(sample[:, d], n, ranges[d], dt))
        hist, _ = np.histogramdd(sample, bins=edges, weights=w, density=p["density"])
        if p["out"] >= 0:
            return Result(base.round_to(edges[p["out"]], dt), dt)
        if w is None and not p["density"]:
            return ints(hist, x64)
        tol = 1e-5 if dt != "float64" else 1e-12
        return Result(base.round_to(hist, dt), dt, rtol=tol, atol=tol)

    def unique_axis(p, ins, x64):
        a = arr(ins[0])
        vals, index, inverse, counts = np.unique(a, axis=p["axis"], return_index=True,
                                                 return_inverse=True, return_counts=True)
        if p["out"] == "values":
            return same(vals, ins[0])
        return ints({"index": index, "inverse": inverse.reshape(-1),
                     "counts": counts}[p["out"]], x64)

    def interp(p, ins, x64):
        x, xp, fp = (f64(i) for i in ins)
        kw = {k: p[k] for k in ("left", "right", "period") if k in p}
        r = np.interp(x, xp, fp, **kw)
        dt = ins[0]["dtype"]
        tol = 2e-5 if dt == "float32" else 1e-12
        return Result(base.round_to(r, dt), dt, rtol=tol, atol=tol)

    return {
        "idx.nonzero": nonzero,
        "idx.flatnonzero": flatnonzero,
        "idx.argwhere": argwhere,
        "idx.searchsorted": searchsorted,
        "idx.digitize": digitize,
        "idx.bincount": bincount,
        "idx.unique": unique,
        "idx.partition": partition,
        "idx.argpartition": argpartition,
        "idx.select": select,
        "idx.choose": choose,
        "idx.compress": compress,
        "idx.diff": diff,
        "idx.ediff1d": ediff1d,
        "idx.unravel_index": unravel_index,
        "idx.ravel_multi_index": ravel_multi_index,
        "idx.tri_indices": tri_indices,
        "idx.indices": indices,
        "idx.put": put,
        "idx.put_along_axis": put_along_axis,
        "idx.histogram": histogram,
        "idx.interp": interp,
        "idx.histogramdd": histogramdd,
        "idx.unique_axis": unique_axis,
    }
