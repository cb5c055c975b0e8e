"""NumPy references for the math primitives of arithmetic_unary.cpp, transcendental.cpp and
binary_math.cpp (loaded by numpy_oracle.py).

Float results are computed in float64 from the exact input values and rounded once to the
result dtype; rounding, sign, abs, square, rem, nextafter and clamp are exact, the
transcendental functions get numpy_oracle's TRANSC_TOL. Integer semantics are XLA's: abs and
square wrap, rem has the dividend's sign with x % 0 == x and INT_MIN % -1 == 0.
"""

import numpy as np


def ops(base):
    FLOATS, INTS, NUMS, ALL = base.FLOATS, base.INTS, base.NUMS, base.ALL
    JaxError, Result = base.JaxError, base.Result
    to_f64, round_to, wrap_ints, as_pyints = base.to_f64, base.round_to, base.wrap_ints, base.as_pyints

    def accepts(op, ins, ok):
        for i in ins:
            if i["dtype"] not in ok:
                raise JaxError("TypeError", "lax.%s does not accept %s" % (op, i["dtype"]))

    # ---- unary

    def round_away(v):
        # Half away from zero, exactly (np.round is half to even): trunc(x) + sign(x) where the
        # dropped fraction is at least one half. x - trunc(x) is exact in float64.
        t = np.trunc(v)
        return np.where(np.abs(v - t) >= 0.5, t + np.sign(v), t)

    def sign_keep_zero(v):
        return np.where(v == 0, v, np.sign(v))  # XLA keeps -0; NaN stays NaN

    # name -> (float64 function, exact?)
    FLOAT_FNS = {
        "floor": (np.floor, True),
        "ceil": (np.ceil, True),
        "exp2": (np.exp2, False),
        "expm1": (np.expm1, False),
        "log1p": (np.log1p, False),
        "rsqrt": (lambda v: 1.0 / np.sqrt(v), False),
        "cbrt": (np.cbrt, False),
        "tan": (np.tan, False),
        "asin": (np.arcsin, False),
        "acos": (np.arccos, False),
        "atan": (np.arctan, False),
        "sinh": (np.sinh, False),
        "cosh": (np.cosh, False),
        "asinh": (np.arcsinh, False),
        "acosh": (np.arccosh, False),
        "atanh": (np.arctanh, False),
    }

    def float_unary(name):
        fn, exact = FLOAT_FNS[name]

        def f(p, ins, x64):
            accepts(name, ins, FLOATS)
            dt = ins[0]["dtype"]
            with np.errstate(all="ignore"):
                v = fn(to_f64(ins[0]["a"]))
            return Result(round_to(v, dt), dt) if exact else base.transc(v, dt)
        return f

    def lax_round(p, ins, x64):
        accepts("round", ins, FLOATS)
        m = int(p.get("rounding_method", 0))
        if m not in (0, 1):
            raise JaxError("ValueError", "bad rounding_method")
        dt = ins[0]["dtype"]
        v = to_f64(ins[0]["a"])
        return Result(round_to(round_away(v) if m == 0 else np.rint(v), dt), dt)

    def lax_is_finite(p, ins, x64):
        accepts("is_finite", ins, FLOATS)
        return Result(np.isfinite(to_f64(ins[0]["a"])), "bool")

    def int_unary(name, fn_int, fn_float):
        def f(p, ins, x64):
            accepts(name, ins, NUMS)
            x, dt = ins[0]["a"], ins[0]["dtype"]
            if base.is_int(dt):
                vals = [fn_int(int(v)) for v in as_pyints(x).ravel()]
                return Result(wrap_ints(np.array(vals, dtype=object).reshape(x.shape), dt), dt)
            with np.errstate(all="ignore"):
                return Result(round_to(fn_float(to_f64(x)), dt), dt)
        return f

    def isign(v):
        return (v > 0) - (v < 0)

    # ---- binary

    def binary_checks(op, ins, ok):
        accepts(op, ins, ok)
        base.check_same_dtype(op, ins)
        base.lax_shapes(op, ins)

    def lax_atan2(p, ins, x64):
        binary_checks("atan2", ins, FLOATS)
        dt = ins[0]["dtype"]
        with np.errstate(all="ignore"):
            return base.transc(np.arctan2(to_f64(ins[0]["a"]), to_f64(ins[1]["a"])), dt)

    def c_rem(a, b):
        if b == 0:
            return a
        r = abs(a) % abs(b)
        return -r if a < 0 else r

    def lax_rem(p, ins, x64):
        binary_checks("rem", ins, NUMS)
        dt = ins[0]["dtype"]
        x, y = ins[0]["a"], ins[1]["a"]
        if base.is_int(dt):
            return Result(base.int_binop(c_rem, x, y, dt), dt)
        with np.errstate(all="ignore"):
            return Result(round_to(np.fmod(to_f64(x), to_f64(y)), dt), dt)  # exact

    def next_bf16(x, y):
        # bfloat16 values stored as float32: step the top 16 bits.
        xs, ys = np.broadcast_arrays(np.asarray(x, np.float32), np.asarray(y, np.float32))
        shape = xs.shape
        xs, ys = xs.reshape(-1), ys.reshape(-1)  # (a 0-d array cannot be viewed as another type)
        ux = (xs.view(np.uint32) >> 16).astype(np.int64)
        uy = (ys.view(np.uint32) >> 16).astype(np.int64)
        up = (xs < ys) == (xs > 0)
        r = np.where(up, ux + 1, ux - 1)
        r = np.where(xs == 0, (uy & 0x8000) | 1, r)
        r = np.where(xs == ys, uy, r)
        out = (r.astype(np.uint32) << 16).view(np.float32)
        return np.where(np.isnan(xs) | np.isnan(ys), np.float32(np.nan), out).reshape(shape)

    def lax_nextafter(p, ins, x64):
        binary_checks("nextafter", ins, FLOATS)
        dt = ins[0]["dtype"]
        x, y = ins[0]["a"], ins[1]["a"]
        if dt == "bfloat16":
            return Result(next_bf16(x, y), dt)
        return Result(np.nextafter(x.astype(dt), y.astype(dt)), dt)  # in the dtype itself

    def lax_clamp(p, ins, x64):
        accepts("clamp", ins, ALL)
        base.check_same_dtype("clamp", ins)
        lo, x, hi = (i["a"] for i in ins)
        for b in (lo, hi):
            if b.ndim and b.shape != x.shape:
                raise JaxError("TypeError", "clamp bounds must be rank 0 or the operand's shape")
        dt = ins[1]["dtype"]
        if dt == "bool" or base.is_int(dt):
            out = np.minimum(np.maximum(x, lo), hi)  # exact in the dtype; or/and on bool
        else:
            with np.errstate(all="ignore"):
                out = round_to(np.minimum(np.maximum(to_f64(x), to_f64(lo)), to_f64(hi)), dt)
        return Result(np.broadcast_to(out, x.shape).astype(base.storage(dt)), dt)

    table = {
        "lax.abs": int_unary("abs", abs, np.abs),
        "lax.sign": int_unary("sign", isign, sign_keep_zero),
        "lax.square": int_unary("square", lambda v: v * v, np.square),
        "lax.round": lax_round,
        "lax.is_finite": lax_is_finite,
        "lax.atan2": lax_atan2,
        "lax.rem": lax_rem,
        "lax.nextafter": lax_nextafter,
        "lax.clamp": lax_clamp,
    }
    for name in FLOAT_FNS:
        table["lax." + name] = float_unary(name)
    return table
