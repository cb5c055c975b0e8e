"""Oracle ops for src/prims/bitwise.cpp: lax.not/and/or/xor, the shifts, population_count, clz,
bitcast_convert_type and reduce_precision (loaded by numpy_oracle.load_extensions).

Integer ops work on Python ints of the bit pattern with XLA's semantics written out: a shift
amount is read as an unsigned integer of the operand's width; amounts >= the width give 0
(shift_left, shift_right_logical) or the top bit replicated (shift_right_arithmetic, also on
unsigned types: it acts on the bits). bitcast_convert_type is ndarray.view on little-endian
bytes. reduce_precision is emulated on float64 values with exact power-of-two scaling and
Python's round-half-even, independent of the C++ bit manipulation: round the significand to
`mantissa_bits` bits (the source format's denormals keep its fixed quantum), then overflow to a
signed inf above the reduced exponent range and flush to a signed zero below its smallest
normal exponent; NaN stays NaN, or becomes +inf with no mantissa bits.
"""

import math

import numpy as np

# (exponent bits, mantissa bits) of each float dtype.
FORMATS = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}


def ops(base):
    INTS = base.INTS

    def check(op, ins, allowed):
        for i in ins:
            if i["dtype"] not in allowed:
                raise base.JaxError("TypeError", "lax.%s does not accept %s" % (op, i["dtype"]))

    def width(dt):
        return 1 if dt == "bool" else np.dtype(dt).itemsize * 8

    def bits_of(v, dt):
        """Python int value -> its unsigned bit pattern."""
        return int(v) % (1 << width(dt))

    def from_bits(b, dt):
        """Unsigned bit pattern -> the value of dtype dt."""
        w = width(dt)
        b %= 1 << w
        if dt in base.SINTS and b >= 1 << (w - 1):
            b -= 1 << w
        return b

    def elementwise(f, arrays, dt, out_dt=None):
        out_dt = out_dt or dt
        arrs = np.broadcast_arrays(*[base.as_pyints(a) for a in arrays])
        out = np.empty(arrs[0].shape, dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = f(*[int(a[idx]) for a in arrs])
        if out_dt == "bool":
            return np.asarray(out.astype(np.int64) != 0).reshape(out.shape)
        return np.array(out.ravel().tolist(), dtype=out_dt).reshape(out.shape)

    # ---- not / and / or / xor

    def lax_not(p, ins, x64):
        check("not", ins, ("bool",) + INTS)
        dt = ins[0]["dtype"]
        if dt == "bool":
            return base.Result(np.logical_not(ins[0]["a"]), dt)
        w = width(dt)
        v = elementwise(lambda x: from_bits((1 << w) - 1 - bits_of(x, dt), dt), [ins[0]["a"]], dt)
        return base.Result(v, dt)

    def logic(kind):
        def f(p, ins, x64):
            check(kind, ins, ("bool",) + INTS)
            base.check_same_dtype(kind, ins)
            base.lax_shapes(kind, ins)
            dt = ins[0]["dtype"]
            g = {"and": lambda a, b: a & b, "or": lambda a, b: a | b,
                 "xor": lambda a, b: a ^ b}[kind]
            v = elementwise(lambda a, b: from_bits(g(bits_of(a, dt), bits_of(b, dt)), dt),
                            [ins[0]["a"], ins[1]["a"]], dt)
            return base.Result(v, dt)
        return f

    # ---- shifts

    def shift(kind):
        def f(p, ins, x64):
            check(kind, ins, INTS)
            base.check_same_dtype(kind, ins)
            base.lax_shapes(kind, ins)
            dt = ins[0]["dtype"]
            w = width(dt)

            def one(x, s):
                xb, sb = bits_of(x, dt), bits_of(s, dt)  # the amount as unsigned
                top = xb >> (w - 1)
                if kind == "shift_left":
                    r = 0 if sb >= w else xb << sb
                elif kind == "shift_right_logical":
                    r = 0 if sb >= w else xb >> sb
                else:  # arithmetic: replicate the top bit
                    k = min(sb, w - 1)
                    r = xb >> k
                    if top:
                        r |= ((1 << k) - 1) << (w - k)
                return from_bits(r, dt)

            return base.Result(elementwise(one, [ins[0]["a"], ins[1]["a"]], dt), dt)
        return f

    # ---- counts

    def lax_population_count(p, ins, x64):
        check("population_count", ins, INTS)
        dt = ins[0]["dtype"]
        v = elementwise(lambda x: bin(bits_of(x, dt)).count("1"), [ins[0]["a"]], dt)
        return base.Result(v, dt)

    def lax_clz(p, ins, x64):
        check("clz", ins, INTS)
        dt = ins[0]["dtype"]
        w = width(dt)
        v = elementwise(lambda x: w - bits_of(x, dt).bit_length(), [ins[0]["a"]], dt)
        return base.Result(v, dt)

    # ---- bitcast_convert_type

    def raw_bits(a, dt):
        """Storage array -> an array of dtype dt's true bytes (bfloat16: uint16 bit patterns)."""
        a = np.array(a, order="C")  # (np.ascontiguousarray would turn rank 0 into (1,))
        if dt == "bfloat16":  # float32 storage holds the exact bfloat16 value
            return (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return a.astype(np.dtype(dt))

    def to_storage(raw, dt):
        if dt == "bfloat16":
            wide = np.array(raw, dtype=np.uint32) << np.uint32(16)  # stays uint32 at rank 0
            return np.array(wide, dtype=np.uint32).view(np.float32)
        return raw

    def lax_bitcast(p, ins, x64):
        src, dst = ins[0]["dtype"], p["new_dtype"]
        if (src == "bool" or dst == "bool") and src != dst:
            raise base.JaxError("TypeError", "bitcast_convert_type to or from bool")
        raw = raw_bits(ins[0]["a"], src)
        shape = raw.shape
        n_src, n_dst = raw.dtype.itemsize, base.storage(dst).itemsize
        if dst == "bfloat16":
            n_dst = 2
        view_dt = np.uint16 if dst == "bfloat16" else np.dtype(dst)
        if n_src == n_dst:
            out = raw.view(view_dt).reshape(shape)
        elif n_src > n_dst:
            out = raw.reshape(shape + (1,)).view(view_dt).reshape(shape + (n_src // n_dst,))
        else:
            if not shape or shape[-1] * n_src != n_dst:
                raise base.JaxError("ValueError", "bitcast_convert_type widening needs a last "
                                    "dim of the width ratio")
            out = raw.view(view_dt).reshape(shape[:-1])
        return base.Result(to_storage(np.array(out), dst), dst)

    # ---- reduce_precision

    def reduce_one(x, src_e, src_m, e, m):
        if math.isnan(x):
            return x if m > 0 else math.inf
        if math.isinf(x) or x == 0.0:
            return x
        bias = (1 << (src_e - 1)) - 1
        emin = 1 - bias  # the source's smallest normal exponent (its denormals share its quantum)
        r = x
        if m < src_m:
            _, k = math.frexp(x)  # |x| in [2^(k-1), 2^k)
            q = max(k - 1, emin) - m  # the quantum of the kept bits
            y = math.ldexp(x, -q)  # exact scaling
            n = round(y)  # ties to the even significand...
            if m == 0 and abs(y - math.trunc(y)) == 0.5 and k - 1 >= emin:
                # ...whose last kept bit is, without mantissa bits, the exponent's lowest bit
                odd = (k - 1 + bias) % 2 == 1
                n = math.trunc(y) + (int(math.copysign(1, x)) if odd else 0)
            try:
                r = math.copysign(math.ldexp(float(abs(n)), q), x)
            except OverflowError:
                r = math.copysign(math.inf, x)
            if r != 0.0 and math.frexp(r)[1] - 1 > bias:  # rounded past the source's max
                r = math.copysign(math.inf, x)
        if e < src_e and not math.isinf(r) and r != 0.0:
            reduced_bias = (1 << (e - 1)) - 1
            k = math.frexp(r)[1]
            u = k - 1 if k - 1 >= emin else emin - 1  # source denormals: below emin
            if u > reduced_bias:
                r = math.copysign(math.inf, x)
            elif u <= -reduced_bias:
                r = math.copysign(0.0, x)
        return r

    def lax_reduce_precision(p, ins, x64):
        dt = ins[0]["dtype"]
        if not base.is_float(dt):
            raise base.JaxError("TypeError", "reduce_precision requires a float dtype")
        e, m = int(p["exponent_bits"]), int(p["mantissa_bits"])
        if e < 1:
            raise base.JaxError("ValueError", "exponent_bits must be positive")
        if m < 0:
            raise base.JaxError("ValueError", "mantissa_bits must be non-negative")
        src_e, src_m = FORMATS[dt]
        x = base.to_f64(ins[0]["a"])
        out = np.array([reduce_one(float(v), src_e, src_m, e, m) for v in x.ravel()],
                       dtype=np.float64).reshape(x.shape)
        # Every result lies on the source format's grid (or is inf/zero): exact in storage.
        return base.Result(base.round_to(out, dt), dt)

    return {
        "lax.not": lax_not,
        "lax.and": logic("and"),
        "lax.or": logic("or"),
        "lax.xor": logic("xor"),
        "lax.shift_left": shift("shift_left"),
        "lax.shift_right_logical": shift("shift_right_logical"),
        "lax.shift_right_arithmetic": shift("shift_right_arithmetic"),
        "lax.population_count": lax_population_count,
        "lax.clz": lax_clz,
        "lax.bitcast_convert_type": lax_bitcast,
        "lax.reduce_precision": lax_reduce_precision,
    }
