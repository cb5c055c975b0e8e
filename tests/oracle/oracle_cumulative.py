"""NumPy references for the cumulative family: lax.cumsum, cumprod, cummax, cummin and
cumlogsumexp (params axis, reverse), written from jax.lax's documented semantics with NumPy's
accumulate functions (np.cumsum, np.cumprod, np.maximum/minimum.accumulate,
np.logaddexp.accumulate).

Operands are numbers (bool raises TypeError); cumlogsumexp takes floating dtypes. Integer results
wrap modulo 2^bits (computed in Python integers); float results are computed in float64 from the
exact inputs and rounded once, with a tolerance for the rounding of the accumulation's own steps
(16-bit floats accumulate in float32).
"""

import math

import numpy as np


def ops(base):
    JaxError = base.JaxError
    Result = base.Result
    EPS = base.EPS

    def prepare(name, p, ins, floating_only=False):
        dt = ins[0]["dtype"]
        accepted = base.FLOATS if floating_only else base.NUMS
        if dt not in accepted:
            raise JaxError("TypeError", "lax.%s does not accept dtype %s" % (name, dt))
        x = ins[0]["a"]
        axis = int(p["axis"])
        if axis < 0 or axis >= x.ndim:
            raise JaxError("ValueError", "axis %d is out of bounds for shape %s" % (axis, x.shape))
        return dt, x, axis, bool(p.get("reverse", False))

    def flip(a, axis, reverse):
        return np.flip(a, axis) if reverse else a

    def step_eps(dt):
        return EPS["float32"] if dt in ("float16", "bfloat16") else EPS[dt]

    def int_scan(x, axis, reverse, dt, f):
        """Exact integer scan in Python ints (object arrays), wrapped to dt."""
        a = flip(np.moveaxis(base.as_pyints(x), axis, 0), 0, reverse)
        out = np.empty(a.shape, dtype=object)
        for k in range(a.shape[0]):
            out[k] = a[0] if k == 0 else f(out[k - 1], a[k])
        out = np.moveaxis(flip(out, 0, reverse), 0, axis)
        return Result(base.wrap_ints(out, dt), dt)

    def float_scan(x, axis, reverse, f):
        a = flip(base.to_f64(x), axis, reverse)
        with np.errstate(all="ignore"):
            return flip(f(a, axis=axis), axis, reverse), a

    def cumsum(p, ins, x64):
        dt, x, axis, reverse = prepare("cumsum", p, ins)
        if base.is_int(dt):
            return int_scan(x, axis, reverse, dt, lambda s, v: s + v)
        v, a = float_scan(x, axis, reverse, np.cumsum)
        absval = flip(np.cumsum(np.abs(a), axis=axis), axis, reverse)
        n = x.shape[axis]
        e = step_eps(dt)
        bound = absval * (2.0 * max(n, 1) * e) + 1e-30
        bound = np.where(np.isfinite(bound), bound, 0.0)
        return Result(base.round_to(v, dt), dt, rtol=EPS[dt], atol_array=bound)

    def cumprod(p, ins, x64):
        dt, x, axis, reverse = prepare("cumprod", p, ins)
        if base.is_int(dt):
            return int_scan(x, axis, reverse, dt, lambda s, v: s * v)
        v, _ = float_scan(x, axis, reverse, np.cumprod)
        n = x.shape[axis]
        return Result(base.round_to(v, dt), dt, rtol=EPS[dt] + 2.0 * n * step_eps(dt),
                      atol=1e-300)

    def extremum(name, ufunc):
        def f(p, ins, x64):
            dt, x, axis, reverse = prepare(name, p, ins)
            if x.size == 0:
                return Result(np.asarray(x).copy(), dt)
            if base.is_int(dt):
                a = flip(x, axis, reverse)
                return Result(flip(ufunc.accumulate(a, axis=axis), axis, reverse).astype(dt), dt)
            v, _ = float_scan(x, axis, reverse, ufunc.accumulate)  # NaN propagates
            return Result(base.round_to(v, dt), dt)
        return f

    def cumlogsumexp(p, ins, x64):
        dt, x, axis, reverse = prepare("cumlogsumexp", p, ins, floating_only=True)
        if x.size == 0:
            return Result(np.asarray(x).copy(), dt)
        v, a = float_scan(x, axis, reverse, np.logaddexp.accumulate)
        n = x.shape[axis]
        k = 4.0 * (n + 1) * step_eps(dt)
        with np.errstate(all="ignore"):
            scale = flip(np.maximum.accumulate(np.abs(a), axis=axis), axis, reverse) + 1.0
            bound = np.where(np.isfinite(scale), scale * k, 0.0)
        return Result(base.round_to(v, dt), dt, rtol=EPS[dt], atol_array=bound)

    return {
        "lax.cumsum": cumsum,
        "lax.cumprod": cumprod,
        "lax.cummax": extremum("cummax", np.maximum),
        "lax.cummin": extremum("cummin", np.minimum),
        "lax.cumlogsumexp": cumlogsumexp,
    }
