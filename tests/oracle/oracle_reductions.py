"""NumPy references for the reductions family: reduce_prod, reduce_min, reduce_and/or/xor,
argmax/argmin and the generic lax.reduce (by the name of the computation the C++ row uses),
written from jax.lax's documented semantics.

Integer results wrap modulo 2^bits (computed in Python integers); float results are computed in
float64 from the exact inputs and rounded once, with a tolerance for the rounding of the
computation's own steps (products: one eps per factor; generic bodies: as given per body).
"""

import math

import numpy as np


def ops(base):
    JaxError = base.JaxError
    Result = base.Result
    EPS = base.EPS

    def axes_of(p, x):
        return base.reduce_axes(p, x)

    def rows(x, axes):
        """x with the reduced axes first (in order), flattened: (n, rest...)."""
        kept = [d for d in range(x.ndim) if d not in axes]
        y = np.transpose(x, list(axes) + kept)
        n = int(math.prod(x.shape[a] for a in axes)) if axes else 1
        return y.reshape((n,) + tuple(x.shape[d] for d in kept)), tuple(x.shape[d] for d in kept)

    def check(op, ins, accepted, what):
        dt = ins[0]["dtype"]
        if dt not in accepted:
            raise JaxError("TypeError", "lax.%s requires %s, got %s" % (op, what, dt))
        return dt

    def reduce_prod(p, ins, x64):
        dt = check("reduce_prod", ins, base.NUMS, "a number dtype")
        x = ins[0]["a"]
        axes = axes_of(p, x)
        r, kept = rows(x, axes)
        n = r.shape[0]
        if base.is_int(dt):
            vals = np.ones(kept, dtype=object)
            for k in range(n):
                vals = vals * base.as_pyints(r[k])
            return Result(base.wrap_ints(vals, dt), dt)
        f = base.to_f64(r)
        with np.errstate(all="ignore"):
            v = np.prod(f, axis=0) if n else np.ones(kept)
        # Halves are multiplied in float32 and rounded once; others in their own dtype.
        step = EPS["float32"] if dt in ("float16", "bfloat16") else EPS[dt]
        return Result(base.round_to(v, dt), dt, rtol=EPS[dt] + 2.0 * n * step, atol=1e-300)

    def min_identity(dt):
        if dt == "bool":
            return True
        if base.is_int(dt):
            return base.iinfo(dt).max
        return np.inf

    def reduce_min(p, ins, x64):
        dt = check("reduce_min", ins, base.ALL, "a number or bool dtype")
        x = ins[0]["a"]
        axes = axes_of(p, x)
        with np.errstate(all="ignore"):
            if dt == "bool":
                return Result(np.all(x, axis=axes), dt)
            if base.is_int(dt):
                return Result(np.min(x, axis=axes, initial=min_identity(dt)), dt)
            f = base.to_f64(x)
            return Result(base.round_to(np.min(f, axis=axes, initial=np.inf), dt), dt)

    def logical(name):
        def f(p, ins, x64):
            dt = check(name, ins, ("bool",) + base.INTS, "a bool or integer dtype")
            x = ins[0]["a"]
            axes = axes_of(p, x)
            r, kept = rows(x, axes)
            if dt == "bool":
                uf = {"reduce_and": np.logical_and, "reduce_or": np.logical_or,
                      "reduce_xor": np.logical_xor}[name]
                init = name == "reduce_and"
                return Result(uf.reduce(r.astype(bool), axis=0, initial=init), dt)
            uf = {"reduce_and": np.bitwise_and, "reduce_or": np.bitwise_or,
                  "reduce_xor": np.bitwise_xor}[name]
            ones = np.array(-1).astype(np.int64).astype(dt)  # all bits set
            init = ones if name == "reduce_and" else np.array(0, dtype=dt)
            return Result(uf.reduce(r, axis=0, initial=init).astype(dt), dt)
        return f

    def nan_ties(x):
        """The argmax rows' input transform: trunc(4 x) (many ties), NaN where x > 1.5."""
        f = base.to_f64(x)
        return np.where(f > 1.5, np.nan, np.trunc(4.0 * f))

    def argminmax(name):
        def f(p, ins, x64):
            dt = ins[0]["dtype"]
            x = ins[0]["a"]
            axis = int(p["axis"])
            idt = base.canonicalize(p.get("index_dtype", "int32"), x64)
            if not base.is_int(idt):
                raise JaxError("TypeError", "index_dtype must be an integer type")
            if not 0 <= axis < x.ndim:
                raise JaxError("ValueError", "axis out of range")
            if x.shape[axis] == 0:
                raise JaxError("ValueError", "attempt to get %s of an empty sequence" % name)
            v = nan_ties(x) if p.get("nan_ties") and base.is_float(dt) else (
                base.to_f64(x) if base.is_float(dt) else x)
            # NumPy's argmax/argmin return the first NaN, as XLA's comparator does.
            r = np.argmax(v, axis=axis) if name == "argmax" else np.argmin(v, axis=axis)
            return Result(np.asarray(r).astype(idt), idt)
        return f

    # ---- lax.reduce with the C++ rows' computations (tests/cpp/util/sweep_rows_reductions.cpp)

    def reduce_generic(p, ins, x64):
        body = p["body"]
        dims = [int(d) for d in p["dims"]]
        dt = ins[0]["dtype"]
        x = ins[0]["a"]
        axes = tuple(dims)
        r, kept = rows(x, axes)
        n = r.shape[0]
        e = EPS.get(dt, 0.0)
        if body == "affine":  # (a, x) -> a + x + a x, init 0: prod(1 + x) - 1
            if base.is_int(dt):
                vals = np.ones(kept, dtype=object)
                for k in range(n):
                    vals = vals * (base.as_pyints(r[k]) + 1)
                return Result(base.wrap_ints(vals - 1, dt), dt)
            f = base.to_f64(r)
            v = np.prod(1.0 + f, axis=0) - 1.0 if n else np.zeros(kept)
            # Each step rounds a + x + a x (3 roundings) relative to the running (1 + acc).
            bound = 8.0 * (n + 1) * e * np.prod(1.0 + np.abs(f), axis=0) if n else 0.0
            return Result(base.round_to(v, dt), dt, rtol=e, atol_array=bound + 1e-300)
        if body in ("logaddexp", "logaddexp_init"):
            f = base.to_f64(r)
            init = -np.inf
            if body == "logaddexp_init":
                init = float(base.to_f64(ins[1]["a"]))
            with np.errstate(all="ignore"):
                v = np.logaddexp.reduce(f, axis=0) if n else np.full(kept, -np.inf)
                v = np.logaddexp(init, v)
            # A body step is about 6 roundings of values up to |result| + 1; log2(n) + 2 levels.
            levels = math.log2(n) + 2 if n else 1
            scale = np.abs(np.where(np.isfinite(v), v, 0.0)) + 1.0
            return Result(base.round_to(v, dt), dt, rtol=e,
                          atol_array=8.0 * levels * e * scale)
        if body == "add_init":  # add with a non-identity init: init + sum
            f = base.to_f64(r)
            init = float(base.to_f64(ins[1]["a"]))
            v = init + (np.sum(f, axis=0) if n else np.zeros(kept))
            a = abs(init) + (np.sum(np.abs(f), axis=0) if n else np.zeros(kept))
            return Result(base.round_to(v, dt), dt, rtol=e, atol_array=2.0 * (n + 1) * e * a)
        if body == "shifted_sum":  # (a, v) -> a + v + s, s closed over, init 0: sum + n s
            f = base.to_f64(r)
            s_ = float(base.to_f64(ins[1]["a"]))
            v = (np.sum(f, axis=0) if n else np.zeros(kept)) + n * s_
            a = (np.sum(np.abs(f), axis=0) if n else np.zeros(kept)) + n * abs(s_)
            return Result(base.round_to(v, dt), dt, rtol=e, atol_array=3.0 * (n + 1) * e * a)
        if body == "argmax_pair":  # (value, index) pairs: value + index of the first maximum
            f = base.to_f64(r)
            idx = np.argmax(f, axis=0)
            val = np.max(f, axis=0)
            return Result(base.round_to(val + idx, dt), dt, rtol=0.0)
        if body == "complex_mul":  # (re, im) products, init (1, 0): re - im
            re, im = base.to_f64(r), base.to_f64(rows(ins[1]["a"], axes)[0])
            z = np.prod(re + 1j * im, axis=0) if n else np.ones(kept, dtype=complex)
            mag = np.prod(np.abs(re + 1j * im), axis=0) if n else np.ones(kept)
            return Result(base.round_to(z.real - z.imag, dt), dt, rtol=e,
                          atol_array=8.0 * (n + 1) * e * mag)
        if body == "affine_compose":  # maps x -> m x + c composed in order, init (1, 0): c - m
            m, c = base.to_f64(r), base.to_f64(rows(ins[1]["a"], axes)[0])
            macc, cacc = np.ones(kept), np.zeros(kept)
            mabs, cabs = np.ones(kept), np.zeros(kept)
            for k in range(n):
                cacc = m[k] * cacc + c[k]
                macc = macc * m[k]
                cabs = np.abs(m[k]) * cabs + np.abs(c[k])
                mabs = mabs * np.abs(m[k])
            return Result(base.round_to(cacc - macc, dt), dt, rtol=e,
                          atol_array=8.0 * (n + 1) * e * (cabs + mabs))
        raise base.Skip("no reference for body %r" % body)

    return {
        "lax.reduce_prod": reduce_prod,
        "lax.reduce_min": reduce_min,
        "lax.reduce_and": logical("reduce_and"),
        "lax.reduce_or": logical("reduce_or"),
        "lax.reduce_xor": logical("reduce_xor"),
        "lax.argmax": argminmax("argmax"),
        "lax.argmin": argminmax("argmin"),
        "lax.reduce_generic": reduce_generic,
    }
