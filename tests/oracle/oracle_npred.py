"""NumPy references for tessera::numpy's reductions, statistics and comparisons
(tests/cpp/test_numpy_reductions.cpp), restating jax.numpy's documented rules: dtype
promotion (sum/prod promote bool and narrow ints to the default int/uint; statistics make
integers float; 16-bit floats accumulate in float32), where masks, initial, ddof, NaN
handling, and errors. Values are computed in float64 (or exactly, for integers) from the
inputs as converted to the computation dtype; accumulated results carry per-element bounds.

Ops ("npred.<name>"): params are JSON: axis (null, int or list), keepdims, dtype, initial,
ddof, where (true: the second input is the mask), rtol, atol, equal_nan, nan, posinf,
neginf, ord, has_min/has_max (clip: which bounds the extra inputs are).
"""

import math

import numpy as np


def ops(base):
    B = base
    FLOAT16S = ("float16", "bfloat16")

    def default_int(x64):
        return "int64" if x64 else "int32"

    def default_uint(x64):
        return "uint64" if x64 else "uint32"

    def bits(dt):
        return np.dtype(B.storage(dt)).itemsize * 8

    def promote_integer(dt, x64):
        if dt == "bool":
            return default_int(x64)
        if dt in B.UINTS and bits(dt) < bits(default_uint(x64)):
            return default_uint(x64)
        if dt in B.SINTS and bits(dt) < bits(default_int(x64)):
            return default_int(x64)
        return dt

    def upcast(dt):
        return "float32" if dt in FLOAT16S else dt

    def user_dtype(p, x64):
        d = p.get("dtype")
        return B.canonicalize(d, x64) if d else None

    def get_mask(p, ins, x):
        if not p.get("where"):
            return None
        w = ins[1]["a"]
        m = w if ins[1]["dtype"] == "bool" else (B.to_f64(w) != 0)
        try:
            if np.broadcast_shapes(m.shape, x.shape) != x.shape:
                raise ValueError
        except ValueError:
            raise B.JaxError("ValueError", "where mask does not broadcast to the input")
        return np.broadcast_to(m.astype(bool), x.shape)

    def f64(a, dt):
        return B.to_f64(a) if dt != "bool" else np.asarray(a, np.float64)

    # ------------------------------------------------------------ sum / prod

    def sum_prod(kind):
        def f(p, ins, x64):
            x, src = ins[0]["a"], ins[0]["dtype"]
            axes = B.np_axes(p, x)
            keep = bool(p.get("keepdims", False))
            mask = get_mask(p, ins, x)
            if src == "bool":  # jnp's _cast_to_numeric
                x, src = B.convert(x, "bool", default_int(x64)), default_int(x64)
            dt = user_dtype(p, x64) or promote_integer(src, x64)
            comp = upcast(dt)
            xc = B.convert(x, src, comp)
            init = p.get("initial")
            n = int(math.prod(x.shape[a] for a in axes)) if axes else 1
            if comp == "bool":
                ident = kind == "prod"
                v = xc if mask is None else np.where(mask, xc, ident)
                r = np.all(v, axis=axes, keepdims=keep) if kind == "prod" else np.any(
                    v, axis=axes, keepdims=keep)
                if init is not None:
                    r = (r & bool(init)) if kind == "prod" else (r | bool(init))
                return B.Result(B.convert(r, "bool", dt), dt, weak=False)
            ident = 0 if kind == "sum" else 1
            if B.is_int(comp):
                wide = np.uint64 if comp.startswith("u") else np.int64
                v = xc.astype(wide)
                if mask is not None:
                    v = np.where(mask, v, wide(ident))
                with np.errstate(all="ignore"):
                    r = (np.sum if kind == "sum" else np.prod)(
                        v, axis=axes, keepdims=keep, dtype=wide)
                    if init is not None:
                        iv = B.convert(np.array(float(init)), "float64", comp).astype(wide)
                        r = (r + iv) if kind == "sum" else (r * iv)
                r = B.wrap_ints(B.as_pyints(np.asarray(r)), comp)
                return B.Result(B.convert(r, comp, dt), dt, weak=False)
            v = B.to_f64(xc)
            if mask is not None:
                v = np.where(mask, v, float(ident))
            with np.errstate(all="ignore"):
                if kind == "sum":
                    s = np.sum(v, axis=axes, keepdims=keep)
                    a = np.sum(np.abs(v), axis=axes, keepdims=keep)
                    if init is not None:
                        iv = float(B.to_f64(B.round_to(float(init), comp)))
                        s, a = s + iv, a + abs(iv)
                    r = B.accum_result(s, a, n + 1, comp)
                else:
                    s = np.prod(v, axis=axes, keepdims=keep)
                    if init is not None:
                        s = s * float(B.to_f64(B.round_to(float(init), comp)))
                    e = B.EPS[comp]
                    tiny = np.finfo(np.float32).tiny if comp != "float64" else 1e-300
                    bound = np.abs(s) * (n + 2) * e + tiny * (n + 2)
                    r = B.Result(B.round_to(s, comp), comp, rtol=e, atol_array=bound)
            if dt != comp:  # 16-bit result: one more rounding
                r.value = B.round_to(B.to_f64(r.value), dt)
                r.rtol = max(r.rtol, B.EPS[dt])
            elif not B.is_float(dt):
                r.value = B.convert(r.value, comp, dt)
            r.dtype, r.weak = dt, False
            return r
        return f

    # ------------------------------------------------------------ max / min

    def identity_value(kind, dt):
        if dt == "bool":
            return kind == "min"
        if B.is_int(dt):
            info = B.iinfo(dt)
            return info.min if kind == "max" else info.max
        return -np.inf if kind == "max" else np.inf

    def extremum_values(kind, x, dt, axes, keep, mask, init):
        """max/min of storage array x (dtype dt) with jnp's where/initial semantics."""
        if dt != "bool" and not B.is_int(dt):
            v = B.to_f64(x)
        else:
            v = x
        ident = identity_value(kind, dt)
        if B.is_int(dt):
            ident = np.array(ident, dtype=dt)  # a Python int would promote uint64 to float64
        if mask is not None:
            v = np.where(mask, v, ident)
        fn = np.max if kind == "max" else np.min
        with np.errstate(all="ignore"):
            if v.size == 0 or any(x.shape[a] == 0 for a in axes):
                r = np.full(tuple(1 if (keep and i in axes) else d for i, d in enumerate(
                    x.shape) if keep or i not in axes), ident,
                    dtype=v.dtype if dt != "bool" else bool)
            else:
                r = fn(v, axis=axes, keepdims=keep)
            if init is not None:
                if dt == "bool":
                    iv = bool(init)
                elif B.is_int(dt):
                    iv = B.convert(np.array(float(init)), "float64", dt)[()]
                else:
                    iv = float(B.to_f64(B.round_to(float(init), dt)))
                r = (np.maximum if kind == "max" else np.minimum)(r, iv)
        if dt == "bool":
            return np.asarray(r, bool)
        if B.is_int(dt):
            return np.asarray(r).astype(dt)
        return B.round_to(r, dt)

    def check_no_identity(kind, p, x, axes, mask):
        if p.get("initial") is None:
            if mask is not None:
                raise B.JaxError("ValueError", "%s with where needs initial" % kind)
            if any(x.shape[a] == 0 for a in axes):
                raise B.JaxError("ValueError", "zero-size array to reduction operation %s" % kind)

    def extremum(kind):
        def f(p, ins, x64):
            x, dt = ins[0]["a"], ins[0]["dtype"]
            axes = B.np_axes(p, x)
            mask = get_mask(p, ins, x)
            check_no_identity(kind, p, x, axes, mask)
            keep = bool(p.get("keepdims", False))
            return B.Result(extremum_values(kind, x, dt, axes, keep, mask, p.get("initial")), dt,
                            weak=False)
        return f

    def ptp(p, ins, x64):
        x, dt = ins[0]["a"], ins[0]["dtype"]
        if dt == "bool":
            raise B.JaxError("TypeError", "ptp of bool")
        axes = B.np_axes(p, x)
        check_no_identity("max", p, x, axes, None)
        keep = bool(p.get("keepdims", False))
        hi = extremum_values("max", x, dt, axes, keep, None, None)
        lo = extremum_values("min", x, dt, axes, keep, None, None)
        if B.is_int(dt):
            return B.Result(B.wrap_ints(B.as_pyints(hi) - B.as_pyints(lo), dt), dt, weak=False)
        with np.errstate(all="ignore"):
            return B.Result(B.round_to(B.to_f64(hi) - B.to_f64(lo), dt), dt, weak=False)

    def all_any(kind):
        def f(p, ins, x64):
            x, dt = ins[0]["a"], ins[0]["dtype"]
            axes = B.np_axes(p, x)
            mask = get_mask(p, ins, x)
            b = B.convert(x, dt, "bool")
            if mask is not None:
                b = np.where(mask, b, kind == "all")
            fn = np.all if kind == "all" else np.any
            return B.Result(np.asarray(fn(b, axis=axes, keepdims=bool(p.get("keepdims")))),
                            "bool", weak=False)
        return f

    def count_nonzero(p, ins, x64):
        x, dt = ins[0]["a"], ins[0]["dtype"]
        axes = B.np_axes(p, x)
        b = B.convert(x, dt, "bool")
        r = np.sum(b, axis=axes, keepdims=bool(p.get("keepdims")), dtype=np.int64)
        it = default_int(x64)
        return B.Result(np.asarray(r).astype(it), it, weak=False)

    # ------------------------------------------------------------ mean / var / std

    def var_values(x, src, comp, axes, keep, mask, ddof, nan_mode):
        """(var, error bound) in float64 from x converted to comp; masked (and, in nan_mode,
        NaN) entries are left out; NaN where N - ddof <= 0."""
        v = B.to_f64(B.convert(x, src, comp)) if src != "bool" else x.astype(np.float64)
        use = np.ones(v.shape, bool) if mask is None else mask.copy()
        if nan_mode:
            use &= ~np.isnan(v)
        w = np.where(use, v, 0.0)
        with np.errstate(all="ignore"):
            mu = np.sum(w, axis=axes, keepdims=True) / np.sum(use, axis=axes, keepdims=True)
            c = np.where(use, v - mu, 0.0)
            ss = np.sum(c * c, axis=axes, keepdims=keep)
            sq = np.sum(np.where(use, v * v, 0.0), axis=axes, keepdims=keep)
            d = np.sum(use, axis=axes, keepdims=keep).astype(np.float64) - ddof
            var = np.where(d > 0, ss / d, np.nan)
            # Two passes in comp: the mean's error and each square's rounding, summed.
            nmax = max(1, int(math.prod(x.shape[a] for a in axes)) if axes else 1)
            bound = 8.0 * (nmax + 2) * B.EPS[comp] * sq / np.where(d > 0, d, 1.0)
            bound = np.where(np.isfinite(bound), bound, 0.0) + 1e-30
        return var, bound

    def mean_op(nan_mode):
        def f(p, ins, x64):
            x, src = ins[0]["a"], ins[0]["dtype"]
            nan_mode_ = nan_mode and B.is_float(src)  # nanmean of ints is mean
            axes = B.np_axes(p, x)
            keep = bool(p.get("keepdims", False))
            mask = get_mask(p, ins, x)
            dt = user_dtype(p, x64) or B.to_inexact(src, x64)
            if not B.is_float(dt):
                raise B.Skip("mean with an integer dtype")
            comp = upcast(dt)
            v = B.to_f64(B.convert(x, src, comp)) if src != "bool" else x.astype(np.float64)
            use = np.ones(v.shape, bool) if mask is None else mask.copy()
            if nan_mode_:
                use &= ~np.isnan(v)
            w = np.where(use, v, 0.0)
            with np.errstate(all="ignore"):
                s = np.sum(w, axis=axes, keepdims=keep)
                a = np.sum(np.abs(w), axis=axes, keepdims=keep)
                n = np.sum(use, axis=axes, keepdims=keep).astype(np.float64)
                m = s / n
                nmax = max(1, int(math.prod(x.shape[k] for k in axes)) if axes else 1)
                bound = np.where(np.isfinite(a), a / np.maximum(n, 1) * (nmax + 2) * B.EPS[comp]
                                 * 2, 0.0) + 1e-30
            rtol = B.EPS[dt]
            if nan_mode_ and dt != comp:
                rtol = 3 * B.EPS[dt]  # jnp.nanmean divides the 16-bit sum by the 16-bit count
            return B.Result(B.round_to(m, dt), dt, weak=False, rtol=rtol, atol_array=bound)
        return f

    def var_op(nan_mode, root):
        def f(p, ins, x64):
            x, src = ins[0]["a"], ins[0]["dtype"]
            axes = B.np_axes(p, x)
            keep = bool(p.get("keepdims", False))
            mask = get_mask(p, ins, x)
            ud = p.get("dtype")
            if ud:
                dt = B.canonicalize(ud, x64)
                if not B.is_float(dt):
                    raise B.Skip("var/std with a non-floating dtype")
            else:
                dt = B.to_inexact(src, x64)
            comp = upcast(dt)
            ddof = float(p.get("ddof", 0))
            var, bound = var_values(x, src, comp, axes, keep, mask, ddof,
                                    nan_mode and B.is_float(src))
            if root:
                # jnp.std is sqrt(var(...)) with var rounded to the result dtype first: one
                # rounding step of var (an ulp, large for 16-bit subnormals) plus the
                # computation bound e, through sqrt: |sqrt(a) - sqrt(b)| <= min(sqrt(e), e/sqrt(a)).
                tiny = {"float16": 2.0**-24, "bfloat16": 2.0**-133, "float32": 2.0**-149,
                        "float64": 5e-324}[dt]
                with np.errstate(all="ignore"):
                    ulp = np.maximum(np.abs(var) * B.EPS[dt], tiny)
                    e = np.where(np.isfinite(ulp), bound + ulp, 0.0)
                    val = np.sqrt(B.to_f64(B.round_to(var, dt)))
                    rt = np.sqrt(np.where(var > 0, var, 1.0))
                    bound = np.where(var > 0, np.minimum(np.sqrt(e), e / rt), np.sqrt(e))
                    bound = np.where(np.isfinite(bound), bound, 0.0)
            else:
                val = var
            return B.Result(B.round_to(val, dt), dt, weak=False, rtol=2 * B.EPS[dt],
                            atol_array=bound)
        return f

    # ------------------------------------------------------------ nan variants

    def nan_fill(x, dt, value):
        if not B.is_float(dt):
            return x
        v = B.to_f64(x)
        return B.round_to(np.where(np.isnan(v), value, v), dt)

    def nan_sum_prod(kind):
        inner = sum_prod(kind)

        def f(p, ins, x64):
            x, dt = ins[0]["a"], ins[0]["dtype"]
            filled = dict(ins[0], a=nan_fill(x, dt, 0.0 if kind == "sum" else 1.0))
            return inner(p, [filled] + ins[1:], x64)
        return f

    def nan_extremum(kind):
        inner = extremum(kind)

        def f(p, ins, x64):
            x, dt = ins[0]["a"], ins[0]["dtype"]
            if not B.is_float(dt):
                return inner(p, ins, x64)
            filled = dict(ins[0], a=nan_fill(x, dt, -np.inf if kind == "max" else np.inf))
            r = inner(p, [filled] + ins[1:], x64)
            if p.get("initial") is None:
                axes = B.np_axes(p, x)
                alln = np.all(np.isnan(B.to_f64(x)), axis=axes,
                              keepdims=bool(p.get("keepdims", False)))
                r.value = np.where(alln, np.float32(np.nan), r.value).astype(r.value.dtype)
            return r
        return f

    # ------------------------------------------------------------ argmax / argmin

    def arg_extremum(kind, nan_mode):
        def f(p, ins, x64):
            x, dt = ins[0]["a"], ins[0]["dtype"]
            axis = p.get("axis")
            keep = bool(p.get("keepdims", False))
            if axis is not None and (axis < -x.ndim or axis >= x.ndim):
                raise B.JaxError("IndexError", "axis out of range")
            if (axis is None and x.size == 0) or (axis is not None and x.shape[axis] == 0):
                raise B.JaxError("ValueError", "attempt to get %s of an empty sequence" % kind)
            v = f64(x, dt) if B.is_float(dt) else x
            fn = np.argmax if kind == "argmax" else np.argmin
            if nan_mode and B.is_float(dt):
                nan = np.isnan(v)
                vv = np.where(nan, -np.inf if kind == "argmax" else np.inf, v)
                r = fn(vv, axis=axis, keepdims=keep)
                alln = np.all(nan, axis=axis, keepdims=keep)
                r = np.where(alln, -1, r)
            else:
                # NumPy returns the first NaN for both, as XLA's argmax/argmin do.
                r = fn(v, axis=axis, keepdims=keep)
            it = default_int(x64)
            return B.Result(np.asarray(r).astype(it), it, weak=False)
        return f

    # ------------------------------------------------------------ comparisons

    def promote2(ins, x64, inexact):
        try:
            np.broadcast_shapes(ins[0]["a"].shape, ins[1]["a"].shape)
        except ValueError:
            raise B.JaxError("ValueError", "incompatible shapes for broadcasting")
        return B.promote_inputs(ins[:2], x64, inexact=inexact)

    def close_values(p, ins, x64):
        (a, b), dt, _ = promote2(ins, x64, True)
        a, b = np.broadcast_arrays(a, b)
        rt = float(B.to_f64(B.round_to(p.get("rtol", 1e-5), dt)))
        at = float(B.to_f64(B.round_to(p.get("atol", 1e-8), dt)))
        fa, fb = B.to_f64(a), B.to_f64(b)

        def rnd(v):  # one operation in dtype dt: exact in float64, rounded once
            return B.to_f64(B.round_to(v, dt))
        with np.errstate(all="ignore"):
            lhs = rnd(np.abs(rnd(fa - fb)))
            rhs = rnd(at + rnd(rt * np.abs(fb)))
            out = lhs <= rhs
        ainf, binf = np.isinf(fa), np.isinf(fb)
        out &= ~(ainf | binf)
        out |= ainf & binf & (fa == fb)
        anan, bnan = np.isnan(fa), np.isnan(fb)
        out &= ~(anan | bnan)
        if p.get("equal_nan"):
            out |= anan & bnan
        return out

    def isclose(p, ins, x64):
        return B.Result(close_values(p, ins, x64), "bool", weak=False)

    def allclose(p, ins, x64):
        return B.Result(np.asarray(np.all(close_values(p, ins, x64))), "bool", weak=False)

    def array_equal(p, ins, x64):
        if ins[0]["a"].shape != ins[1]["a"].shape:
            return B.Result(np.asarray(False), "bool", weak=False)
        (a, b), dt, _ = B.promote_inputs(ins[:2], x64)
        fa, fb = (f64(a, dt), f64(b, dt)) if B.is_float(dt) else (a, b)
        eq = fa == fb
        if p.get("equal_nan") and B.is_float(dt):
            eq |= np.isnan(fa) & np.isnan(fb)
        return B.Result(np.asarray(np.all(eq)), "bool", weak=False)

    def array_equiv(p, ins, x64):
        try:
            np.broadcast_shapes(ins[0]["a"].shape, ins[1]["a"].shape)
        except ValueError:
            return B.Result(np.asarray(False), "bool", weak=False)
        (a, b), dt, _ = B.promote_inputs(ins[:2], x64)
        fa, fb = (f64(a, dt), f64(b, dt)) if B.is_float(dt) else (a, b)
        return B.Result(np.asarray(np.all(fa == fb)), "bool", weak=False)

    # ------------------------------------------------------------ nan_to_num / clip

    def nan_to_num(p, ins, x64):
        x, dt = ins[0]["a"], ins[0]["dtype"]
        if not B.is_float(dt):
            return B.Result(x.copy(), dt, weak=ins[0]["weak"])
        fmax = B.BF16_MAX if dt == "bfloat16" else float(np.finfo(B.storage(dt)).max)
        posinf = p.get("posinf")
        neginf = p.get("neginf")
        posinf = fmax if posinf is None else posinf
        neginf = -fmax if neginf is None else neginf
        v = B.to_f64(x)
        v = np.where(np.isnan(v), p.get("nan", 0.0), v)
        v = np.where(v == np.inf, posinf, v)
        v = np.where(v == -np.inf, neginf, v)
        return B.Result(B.round_to(v, dt), dt, weak=False)

    def clip(p, ins, x64):
        k = 1
        x = ins[0]
        cur = x
        if p.get("has_min"):
            r = B.np_binary("max")(p, [ins[k], cur], x64)
            cur = {"a": r.value, "dtype": r.dtype, "weak": r.weak}
            k += 1
        if p.get("has_max"):
            r = B.np_binary("min")(p, [ins[k], cur], x64)
            cur = {"a": r.value, "dtype": r.dtype, "weak": r.weak}
        return B.Result(cur["a"], cur["dtype"], weak=cur["weak"])

    # ------------------------------------------------------------ linalg.norm

    def pnorm(a, p, axes, keep, dt, n):
        """sum(|x|^p)^(1/p) as jnp computes it: |x|^p in the result dtype (16-bit terms may be
        subnormal), summed (in float32 for 16-bit), rounded, and the root taken in the dtype.
        Follows those roundings; the bound covers an ulp per term, the sum's error, and the
        root's (the sum's relative error over |p|) and rounding."""
        tiny = {"float16": 2.0**-24, "bfloat16": 2.0**-133, "float32": 2.0**-149,
                "float64": 5e-324}[dt]
        e = B.EPS[upcast(dt)]
        with np.errstate(all="ignore"):
            t = B.to_f64(B.round_to(a ** p, dt))
            ulp_t = np.where(np.isfinite(t), np.maximum(np.abs(t) * B.EPS[dt], tiny), 0)
            s_ = np.sum(t, axis=axes, keepdims=keep)
            es = (np.sum(ulp_t, axis=axes, keepdims=keep) + 4 * (n + 2) * e * np.abs(s_)
                  + np.maximum(np.abs(s_) * B.EPS[dt], tiny))
            s_r = B.to_f64(B.round_to(s_, dt))
            r = s_r ** (1.0 / p)
            rel = np.where((s_r > 0) & np.isfinite(s_r), es / np.where(s_r > 0, s_r, 1), 0)
            bound = np.abs(r) * (rel / abs(p) + 2 * B.EPS[dt])
            bound = np.where(np.isfinite(bound), bound, 0.0) + 1e-30
        return B.Result(B.round_to(r, dt), dt, weak=False, rtol=B.EPS[dt], atol_array=bound)

    def norm(p, ins, x64):
        x, src = ins[0]["a"], ins[0]["dtype"]
        dt = B.to_inexact(src, x64) if not B.is_float(src) else src
        v = B.to_f64(B.convert(x, src, dt)) if src != "bool" else x.astype(np.float64)
        ord_ = p.get("ord")
        axis = p.get("axis")
        keep = bool(p.get("keepdims", False))
        e = B.EPS[upcast(dt)]
        if isinstance(axis, int):
            axis = [axis]
        if axis is None:
            axes = tuple(range(v.ndim))  # ord None: the 2-norm of any rank; else 1 or 2 axes
        else:
            axes = tuple(a % v.ndim if v.ndim else a for a in axis)
            for a in axis:
                if a < -v.ndim or a >= v.ndim:
                    raise B.JaxError("IndexError", "axis out of range")
        n = max(1, int(math.prod(v.shape[a] for a in axes)) if axes else 1)
        if ord_ == "inf":
            ord_ = np.inf
        elif ord_ == "-inf":
            ord_ = -np.inf
        with np.errstate(all="ignore"):
            if axis is None and ord_ is None:
                return pnorm(np.abs(v), 2, tuple(range(v.ndim)), keep, dt, n)
            elif len(axes) == 1:
                a = np.abs(v)
                if any(v.shape[k] == 0 for k in axes) and ord_ in (np.inf, -np.inf):
                    raise B.JaxError("ValueError", "zero-size array to reduction operation")
                if ord_ is None or ord_ == 2:
                    return pnorm(a, 2, axes, keep, dt, n)
                elif ord_ == np.inf:
                    r, tol = np.max(a, axis=axes, keepdims=keep), 0.0
                elif ord_ == -np.inf:
                    r, tol = np.min(a, axis=axes, keepdims=keep), 0.0
                elif ord_ == 0:
                    r, tol = np.sum(v != 0, axis=axes, keepdims=keep).astype(np.float64), 0.0
                elif ord_ == 1:
                    r, tol = np.sum(a, axis=axes, keepdims=keep), 2 * (n + 2) * e
                else:
                    return pnorm(a, ord_, axes, keep, dt, n)
            elif len(axes) == 2:
                row, col = axes
                if row == col:
                    raise B.JaxError("ValueError", "duplicate axes")
                a = np.abs(v)
                if ord_ is None or ord_ == "fro":
                    return pnorm(a, 2, axes, keep, dt, n)
                elif ord_ in (1, -1, np.inf, -np.inf):
                    sum_ax, ext_ax = (row, col) if ord_ in (1, -1) else (col, row)
                    if v.shape[ext_ax] == 0:
                        raise B.JaxError("ValueError", "zero-size array to reduction operation")
                    s = np.sum(a, axis=sum_ax, keepdims=True)
                    fn = np.max if ord_ in (1, np.inf) else np.min
                    r = fn(s, axis=ext_ax, keepdims=True)
                    if not keep:
                        r = np.squeeze(r, axis=(row, col))
                    tol = 2 * (n + 2) * e
                elif ord_ in (2, -2, "nuc"):
                    # Singular values (jnp.linalg.svd): reduced per matrix, float64 reference.
                    if v.shape[row] == 0 or v.shape[col] == 0:
                        if ord_ != "nuc":
                            raise B.JaxError("ValueError",
                                             "zero-size array to reduction operation")
                    w = np.asarray(v, dtype=np.float64)
                    r = np.linalg.norm(w, ord=ord_, axis=(row, col), keepdims=keep)
                    # LAPACK's singular values are accurate to ~k eps * the largest one.
                    smax = np.max(np.linalg.norm(w, ord=2, axis=(row, col))) if w.size else 0.0
                    k = max(1, min(v.shape[row], v.shape[col]))
                    tol = 8 * (k + 2) * e
                    return B.Result(B.round_to(r, dt), dt, weak=False, rtol=tol + B.EPS[dt],
                                    atol=tol * smax * k + 1e-30)
                else:
                    raise B.JaxError("ValueError", "invalid order for matrix norm")
            else:
                raise B.JaxError("ValueError", "Improper number of axes for norm")
        return B.Result(B.round_to(r, dt), dt, weak=False, rtol=tol + B.EPS[dt],
                        atol=1e-30)

    return {
        "npred.sum": sum_prod("sum"), "npred.prod": sum_prod("prod"),
        "npred.max": extremum("max"), "npred.min": extremum("min"),
        "npred.ptp": ptp, "npred.all": all_any("all"), "npred.any": all_any("any"),
        "npred.count_nonzero": count_nonzero,
        "npred.mean": mean_op(False), "npred.nanmean": mean_op(True),
        "npred.var": var_op(False, False), "npred.std": var_op(False, True),
        "npred.nanvar": var_op(True, False), "npred.nanstd": var_op(True, True),
        "npred.nansum": nan_sum_prod("sum"), "npred.nanprod": nan_sum_prod("prod"),
        "npred.nanmax": nan_extremum("max"), "npred.nanmin": nan_extremum("min"),
        "npred.argmax": arg_extremum("argmax", False),
        "npred.argmin": arg_extremum("argmin", False),
        "npred.nanargmax": arg_extremum("argmax", True),
        "npred.nanargmin": arg_extremum("argmin", True),
        "npred.isclose": isclose, "npred.allclose": allclose,
        "npred.array_equal": array_equal, "npred.array_equiv": array_equiv,
        "npred.nan_to_num": nan_to_num, "npred.clip": clip, "npred.norm": norm,
    }
