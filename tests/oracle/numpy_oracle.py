#!/usr/bin/python3
"""NumPy oracle for Tessera's C++ tests (tests/cpp/util/oracle.{h,cpp}).

Usage: /usr/bin/python3 numpy_oracle.py DIR

DIR/cases.json is a list of cases written by the C++ harness:
  {"id": 7, "op": "lax.add", "params": {...}, "x64": false,
   "inputs": [{"file": "in7_0.npy", "dtype": "bfloat16", "weak": false}, ...]}
bfloat16 inputs are stored as float32 (NumPy has no bfloat16); their values are exact.

For every case this script computes the result JAX would produce, in JAX's result dtype:
floating results are computed in float64 from the exact input values and rounded once to
the result dtype (bfloat16 rounding is emulated; its values are written as float32);
integer results wrap modulo 2^bits as XLA's do; integer division follows XLA
(x / 0 == -1, all ones for unsigned; INT_MIN / -1 == INT_MIN). It writes DIR/out<id>.npy
(and DIR/atol<id>.npy, a per-element absolute tolerance, for accumulating ops) and one line
per case to DIR/results.tsv:
  id <TAB> ok <TAB> dtype <TAB> weak(0/1/-) <TAB> rtol <TAB> atol <TAB> has_atol_array(0/1)
  id <TAB> error <TAB> KindOfError <TAB> why          (JAX raises: Tessera must raise too)
  id <TAB> skip <TAB> why                             (no defined reference)
  id <TAB> oracle_bug <TAB> traceback-summary         (a bug in this script)

The op table at the end maps each op name to its reference; the dtype tables restate
JAX's documented rules (lax dtype acceptance, jax.numpy type promotion with weak types).
"""

import ast
import json
import math
import os
import sys
import traceback

import numpy as np

FLOATS = ("float16", "bfloat16", "float32", "float64")
SINTS = ("int8", "int16", "int32", "int64")
UINTS = ("uint8", "uint16", "uint32", "uint64")
INTS = SINTS + UINTS
NUMS = INTS + FLOATS
ALL = ("bool",) + NUMS

BF16_MAX = (2.0 - 2.0**-7) * 2.0**127
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


class JaxError(Exception):
    """JAX raises for this case; `kind` is the exception type the C++ side must raise."""

    def __init__(self, kind, why):
        super().__init__(why)
        self.kind = kind
        self.why = why


class Skip(Exception):
    pass


class Result:
    def __init__(self, value, dtype, weak=None, rtol=0.0, atol=0.0, atol_array=None):
        self.value = value  # storage array (bfloat16 values as float32)
        self.dtype = dtype
        self.weak = weak  # None: not checked
        self.rtol = rtol
        self.atol = atol
        self.atol_array = atol_array


# ---------------------------------------------------------------- dtype helpers


def storage(name):
    return np.dtype(np.float32) if name == "bfloat16" else np.dtype(name)


def is_float(name):
    return name in FLOATS


def is_int(name):
    return name in INTS


def iinfo(name):
    return np.iinfo(np.dtype(name))


def round_bf16(x):
    """Rounds float64 values once to bfloat16 (nearest even), returned as float32."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x)
        xf = np.where(finite, x, 0.0)
        _, e = np.frexp(xf)
        e = np.maximum(e - 1, -126)  # binade of the leading bit; subnormals share -126's ulp
        q = np.ldexp(np.ones_like(xf), e - 7)
        r = np.round(xf / q) * q
        r = np.where(np.abs(r) > BF16_MAX, np.copysign(np.inf, r), r)
        r = np.where(finite, r, x)
    return r.astype(np.float32)


def int_to_bf16(a):
    """Integers rounded once (nearest even) to bfloat16, as float32 storage."""
    out = []
    for v in np.asarray(a).astype(object).ravel():
        v = int(v)
        m, neg = abs(v), v < 0
        e = m.bit_length() - 8
        if e > 0:
            q, r = divmod(m, 1 << e)
            half = 1 << (e - 1)
            if r > half or (r == half and q & 1):
                q += 1
            m = q << e
        f = float(m) if m <= BF16_MAX else math.inf
        out.append(-f if neg else f)
    return np.array(out, dtype=np.float64).astype(np.float32).reshape(np.shape(a))


def round_to(x, name):
    """float64 (exact or high-precision) values -> storage array of dtype `name`."""
    x = np.asarray(x, np.float64)
    if name == "bfloat16":
        return round_bf16(x)
    with np.errstate(all="ignore"):
        return x.astype(storage(name))


def wrap_ints(values, name):
    """Python ints (any size) -> array of integer dtype `name`, modulo 2^bits."""
    info = iinfo(name)
    bits = np.dtype(name).itemsize * 8
    m = 1 << bits
    flat = []
    for v in np.asarray(values, dtype=object).ravel():
        v = int(v) % m
        if info.min < 0 and v >= m // 2:
            v -= m
        flat.append(v)
    return np.array(flat, dtype=name).reshape(np.shape(values))


def as_pyints(a):
    return np.asarray(a).astype(object)


def to_f64(a):
    with np.errstate(all="ignore"):
        return np.asarray(a).astype(np.float64)


def convert(a, src, dst):
    """lax.convert_element_type of storage array `a` from `src` to `dst` (defined values)."""
    if src == dst:
        return np.asarray(a).astype(storage(dst))
    if dst == "bool":
        return np.asarray(a) != 0
    if src == "bool":
        a = np.asarray(a).astype(np.int64)
        src = "int64"
    if is_float(dst):
        if is_int(src):
            # Integers round once to the float type: NumPy's C casts do for float32/64 (and
            # for float16, integers beyond 2^24 are inf anyway); bfloat16 is rounded here
            # exactly in Python integers.
            if dst == "bfloat16":
                return int_to_bf16(a)
            return np.asarray(a).astype(storage(dst))
        return round_to(to_f64(a), dst)
    # dst is an integer type
    if is_int(src):
        return wrap_ints(as_pyints(a), dst)
    # float -> int: truncation toward zero; out-of-range and NaN saturate (NaN -> 0), which is
    # what XLA's CPU conversions do and what Tessera's convert kernel documents.
    f = to_f64(a)
    info = iinfo(dst)
    out = []
    for v in f.ravel():
        if math.isnan(v):
            out.append(0)
        elif v <= info.min:
            out.append(int(info.min))
        elif v >= info.max:
            out.append(int(info.max))
        else:
            out.append(int(v))  # truncation toward zero
    return np.array(out, dtype=dst).reshape(f.shape)


def canonicalize(name, x64):
    if x64:
        return name
    return {"int64": "int32", "uint64": "uint32", "float64": "float32"}.get(name, name)


# ---------------------------------------------------------------- JAX type promotion

LATTICE = {
    "bool": ["i*"],
    "i*": ["uint8", "int8"],
    "uint8": ["int16", "uint16"],
    "uint16": ["int32", "uint32"],
    "uint32": ["int64", "uint64"],
    "uint64": ["f*"],
    "int8": ["int16"],
    "int16": ["int32"],
    "int32": ["int64"],
    "int64": ["f*"],
    "f*": ["bfloat16", "float16"],
    "bfloat16": ["float32"],
    "float16": ["float32"],
    "float32": ["float64"],
    "float64": [],
}


def _upper(n):
    seen, todo = set(), [n]
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(LATTICE[x])
    return seen


UPPER = {n: _upper(n) for n in LATTICE}


def lub(nodes):
    common = set(LATTICE)
    for n in nodes:
        common &= UPPER[n]
    for c in common:
        if common <= UPPER[c]:
            return c
    raise AssertionError("no least upper bound for %r" % (nodes,))


def weak_node(dtype):
    if is_int(dtype):
        return "i*"
    if is_float(dtype):
        return "f*"
    return dtype


def result_type(ins, x64):
    """jnp.result_type of (dtype, weak) pairs -> (dtype, weak)."""
    dts = [i["dtype"] for i in ins]
    weaks = [bool(i["weak"]) for i in ins]
    if len(dts) == 1:
        out, weak = dts[0], weaks[0]
    elif len(set(dts)) == 1 and not all(weaks):
        out, weak = dts[0], False
    elif all(weaks):
        out, weak = lub(dts), True
    else:
        out = lub([weak_node(d) if w else d for d, w in zip(dts, weaks)])
        weak = out in ("i*", "f*")
    if out == "i*":
        out = "int64" if x64 else "int32"
    elif out == "f*":
        out = "float64" if x64 else "float32"
    return canonicalize(out, x64), weak and out != "bool"


def to_inexact(dtype, x64):
    """jax.dtypes.to_inexact_dtype: bool and integers up to 32 bits -> float32 (also under
    x64), 64-bit integers -> float64; floats unchanged."""
    if is_float(dtype):
        return dtype
    return canonicalize("float64" if dtype in ("int64", "uint64") else "float32", x64)


def promote_inputs(ins, x64, inexact=False):
    dt, weak = result_type(ins, x64)
    if inexact:
        dt = to_inexact(dt, x64)
    return [convert(i["a"], i["dtype"], dt) for i in ins], dt, weak


# ---------------------------------------------------------------- tolerances

# Transcendental functions: rtol/atol by result dtype (the reference is rounded once from
# float64; Tessera computes 16-bit floats in float32 and rounds, float32 in float32).
TRANSC_TOL = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1e-2, 1e-5),
    "float32": (2e-6, 1e-6),
    "float64": (1e-13, 1e-15),
}
# integer_pow / power with an integer exponent: repeated squaring rounds after every
# multiply in the dtype (as XLA's expansion does), a few ulps for |y| <= 5.
IPOW_TOL = {
    "float16": (5e-3, 1e-5),
    "bfloat16": (4e-2, 1e-5),
    "float32": (1e-6, 1e-6),
    "float64": (2e-15, 1e-15),
}


def transc(x, dt):
    rtol, atol = TRANSC_TOL[dt]
    return Result(round_to(x, dt), dt, rtol=rtol, atol=atol)


def accum_result(value, absval, n_terms, dt):
    """An accumulated float result (sum, dot): per-element bound k*eps*sum|terms| with
    k = min(n, 4*sqrt(n) + 16): n is the worst case of any summation order, the sqrt term
    bounds blocked/pairwise orders on our mixed-sign inputs, tight enough that a dropped
    or doubled block of a large reduction shows."""
    e = EPS[dt]
    k = min(max(n_terms, 1), 4.0 * math.sqrt(n_terms) + 16.0)
    with np.errstate(all="ignore"):
        bound = np.asarray(absval, np.float64) * (k * e) + 1e-30
        bound = np.where(np.isfinite(bound), bound, 0.0)
    return Result(round_to(value, dt), dt, rtol=e, atol=0.0, atol_array=bound)


# ---------------------------------------------------------------- dtype acceptance (lax)

LAX_ACCEPTS = {
    "add": NUMS, "sub": NUMS, "mul": NUMS, "div": NUMS,
    "max": ALL, "min": ALL, "pow": FLOATS,
    "neg": NUMS, "exp": FLOATS, "log": FLOATS, "sin": FLOATS, "cos": FLOATS,
    "tanh": FLOATS, "logistic": FLOATS, "sqrt": FLOATS, "integer_pow": NUMS,
    "eq": ALL, "ne": ALL, "lt": ALL, "le": ALL, "gt": ALL, "ge": ALL,
    "reduce_sum": NUMS, "reduce_max": ALL,
}


def check_accepts(op, ins):
    ok = LAX_ACCEPTS[op]
    for i in ins:
        if i["dtype"] not in ok:
            raise JaxError("TypeError", "lax.%s does not accept %s" % (op, i["dtype"]))


def check_same_dtype(op, ins):
    if len({i["dtype"] for i in ins}) > 1:
        raise JaxError("TypeError", "lax.%s requires one dtype" % op)


def lax_shapes(op, ins):
    """lax's broadcasting rule: rank-0 operands broadcast, others equal rank, dims equal or 1."""
    shapes = [i["a"].shape for i in ins if i["a"].ndim > 0]
    if not shapes:
        return
    r = len(shapes[0])
    if any(len(s) != r for s in shapes):
        raise JaxError("Error", "lax.%s: ranks differ" % op)
    for d in range(r):
        sizes = {s[d] for s in shapes} - {1}
        if len(sizes) > 1:
            raise JaxError("Error", "lax.%s: incompatible shapes" % op)


# ---------------------------------------------------------------- elementwise kernels


def int_div(x, y, dt):
    """XLA's integer division: truncation toward zero, x/0 = -1 (all ones), INT_MIN/-1 wraps."""
    xs, ys = np.broadcast_arrays(as_pyints(x), as_pyints(y))
    out = []
    for a, b in zip(xs.ravel(), ys.ravel()):
        a, b = int(a), int(b)
        if b == 0:
            out.append(-1)
        else:
            q = abs(a) // abs(b)
            out.append(q if (a >= 0) == (b > 0) else -q)
    return wrap_ints(np.array(out, dtype=object).reshape(xs.shape), dt)


def int_binop(f, x, y, dt):
    xs, ys = np.broadcast_arrays(as_pyints(x), as_pyints(y))
    out = np.empty(xs.shape, dtype=object)
    for idx in np.ndindex(xs.shape):
        out[idx] = f(int(xs[idx]), int(ys[idx]))
    return wrap_ints(out, dt)


def arith(kind, x, y, dt):
    """x, y: storage arrays already of dtype dt. Returns a Result."""
    with np.errstate(all="ignore"):
        if dt == "bool":
            # jnp.add/multiply on bool are logical or/and; max/min likewise.
            f = {"add": np.logical_or, "mul": np.logical_and, "max": np.logical_or,
                 "min": np.logical_and}[kind]
            return Result(f(x, y), dt)
        if is_int(dt):
            if kind == "div":
                return Result(int_div(x, y, dt), dt)
            if kind in ("max", "min"):
                f = np.maximum if kind == "max" else np.minimum
                return Result(f(x, y).astype(dt), dt)
            # NumPy's integer array arithmetic wraps modulo 2^bits, as XLA's does.
            f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[kind]
            return Result(f(x, y).astype(dt), dt)
        fx, fy = to_f64(x), to_f64(y)
        if kind == "pow":
            return transc(np.power(fx, fy), dt)
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
             "max": np.maximum, "min": np.minimum}[kind]
        # Exact: one IEEE operation on exact inputs, computed in float64 and rounded once, is
        # the correctly rounded result in every float dtype (no double-rounding issue).
        return Result(round_to(f(fx, fy), dt), dt)


UNARY_F64 = {
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "logistic": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "sqrt": np.sqrt,
}


def unary(kind, x, dt):
    with np.errstate(all="ignore"):
        if kind == "neg":
            if is_int(dt):
                return Result(wrap_ints(-as_pyints(x), dt), dt)
            return Result(round_to(-to_f64(x), dt), dt)
        if kind == "sqrt":
            return Result(round_to(np.sqrt(to_f64(x)), dt), dt)  # correctly rounded
        return transc(UNARY_F64[kind](to_f64(x)), dt)


def integer_pow(x, y, dt):
    if is_int(dt):
        if y < 0:
            raise JaxError("TypeError", "integers cannot be raised to negative powers")
        return Result(wrap_ints(np.vectorize(lambda v: int(v) ** y, otypes=[object])(
            as_pyints(x)) if x.size else as_pyints(x), dt), dt)
    with np.errstate(all="ignore"):
        fx = to_f64(x)
        v = np.ones_like(fx) if y == 0 else np.power(fx, float(y))
    rtol, atol = IPOW_TOL[dt]
    rtol *= max(1, abs(y))
    return Result(round_to(v, dt), dt, rtol=rtol, atol=atol)


COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


def compare(kind, x, y, dt):
    if dt == "bool" or is_float(dt):
        xv, yv = (x, y) if dt == "bool" else (to_f64(x), to_f64(y))
    else:
        xv, yv = x, y  # same integer dtype: NumPy compares exactly
    with np.errstate(all="ignore"):
        return Result(COMPARE[kind](xv, yv), "bool")


# ---------------------------------------------------------------- lax ops


def lax_binary(kind):
    def f(p, ins, x64):
        check_accepts(kind, ins)
        check_same_dtype(kind, ins)
        lax_shapes(kind, ins)
        dt = ins[0]["dtype"]
        return arith(kind, ins[0]["a"], ins[1]["a"], dt)
    return f


def lax_unary(kind):
    def f(p, ins, x64):
        check_accepts(kind, ins)
        return unary(kind, ins[0]["a"], ins[0]["dtype"])
    return f


def lax_integer_pow(p, ins, x64):
    check_accepts("integer_pow", ins)
    return integer_pow(ins[0]["a"], int(p["y"]), ins[0]["dtype"])


def lax_compare(kind):
    def f(p, ins, x64):
        check_accepts(kind, ins)
        check_same_dtype(kind, ins)
        lax_shapes(kind, ins)
        return compare(kind, ins[0]["a"], ins[1]["a"], ins[0]["dtype"])
    return f


def lax_select_n(p, ins, x64):
    which, cases = ins[0], ins[1:]
    check_same_dtype("select_n", cases)
    if which["dtype"] == "bool":
        if len(cases) != 2:
            raise JaxError("TypeError", "select_n with a bool predicate needs 2 cases")
        idx = which["a"].astype(np.int64)
    elif which["dtype"] == "int32":
        idx = which["a"].astype(np.int64)
    else:
        raise JaxError("TypeError", "select_n predicate must be bool or int32")
    shape = cases[0]["a"].shape
    if any(c["a"].shape != shape for c in cases):
        raise JaxError("Error", "select_n cases must have one shape")
    if which["a"].ndim != 0 and which["a"].shape != shape:
        raise JaxError("Error", "select_n predicate must be scalar or match the cases")
    if np.any((idx < 0) | (idx >= len(cases))):
        raise Skip("select_n index out of range is undefined")
    idx = np.broadcast_to(idx, shape)
    out = np.choose(idx, [c["a"] for c in cases]) if idx.size else cases[0]["a"].copy()
    return Result(out.astype(storage(cases[0]["dtype"])), cases[0]["dtype"])


def lax_convert(p, ins, x64):
    src, dst = ins[0]["dtype"], p["new_dtype"]
    return Result(convert(ins[0]["a"], src, dst), dst)


def lax_broadcast_in_dim(p, ins, x64):
    x = ins[0]["a"]
    shape, dims = tuple(p["shape"]), list(p["broadcast_dimensions"])
    if len(dims) != x.ndim or len(set(dims)) != len(dims) or any(
            d < 0 or d >= len(shape) for d in dims) or dims != sorted(dims):
        raise JaxError("Error", "bad broadcast_dimensions")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise JaxError("Error", "broadcast_in_dim operand dim mismatch")
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    return Result(np.broadcast_to(x.reshape(expanded), shape).copy(), ins[0]["dtype"])


def lax_broadcast(p, ins, x64):
    x = ins[0]["a"]
    sizes = tuple(p["sizes"])
    return Result(np.broadcast_to(x, sizes + x.shape).copy(), ins[0]["dtype"])


def lax_reshape(p, ins, x64):
    x = ins[0]["a"]
    new = tuple(p["new_sizes"])
    if any(d < 0 for d in new) or math.prod(new) != x.size:
        raise JaxError("Error", "reshape sizes differ")
    return Result(x.reshape(new).copy(), ins[0]["dtype"])


def lax_transpose(p, ins, x64):
    x = ins[0]["a"]
    perm = list(p["permutation"])
    if sorted(perm) != list(range(x.ndim)):
        raise JaxError("Error", "transpose permutation is not a permutation")
    return Result(np.transpose(x, perm).copy(), ins[0]["dtype"])


def lax_iota(p, ins, x64):
    dt = p["dtype"]
    shape, dim = tuple(p["shape"]), int(p["dimension"])
    if dt == "bool":
        raise Skip("iota of bool is not defined by JAX")
    v = np.arange(shape[dim] if shape else 0)
    expanded = [1] * len(shape)
    expanded[dim] = shape[dim]
    v = np.broadcast_to(v.reshape(expanded), shape)
    if is_int(dt):
        return Result(wrap_ints(as_pyints(v), dt), dt)
    return Result(round_to(v, dt), dt)


def reduce_axes(p, x):
    axes = [a + x.ndim if a < 0 else a for a in p["axes"]]
    if len(set(axes)) != len(axes) or any(a < 0 or a >= x.ndim for a in axes):
        raise JaxError("Error", "bad reduction axes")
    return tuple(axes)


def sum_in(x, dt, axes, keepdims=False):
    """Sum of storage array x (already dtype dt) over axes; ints wrap; floats accumulate."""
    n = int(math.prod(x.shape[a] for a in axes)) if axes else 1
    if dt == "bool":
        raise JaxError("TypeError", "sum of bool")
    if is_int(dt):
        wide = np.uint64 if dt.startswith("u") else np.int64
        with np.errstate(all="ignore"):
            s = np.sum(x.astype(wide), axis=axes, keepdims=keepdims, dtype=wide)
        return Result(s.astype(dt), dt)
    f = to_f64(x)
    with np.errstate(all="ignore"):
        s = np.sum(f, axis=axes, keepdims=keepdims)
        a = np.sum(np.abs(f), axis=axes, keepdims=keepdims)
    return accum_result(s, a, n, dt)


def lax_reduce_sum(p, ins, x64):
    check_accepts("reduce_sum", ins)
    x = ins[0]["a"]
    return sum_in(x, ins[0]["dtype"], reduce_axes(p, x))


def max_identity(dt):
    if dt == "bool":
        return False
    if is_int(dt):
        return iinfo(dt).min
    return -np.inf


def max_in(x, dt, axes, keepdims=False):
    with np.errstate(all="ignore"):
        if dt == "bool":
            return Result(np.any(x, axis=axes, keepdims=keepdims), dt)
        if is_int(dt):
            return Result(np.max(x, axis=axes, keepdims=keepdims, initial=max_identity(dt)), dt)
        f = to_f64(x)
        return Result(round_to(np.max(f, axis=axes, keepdims=keepdims, initial=-np.inf), dt), dt)


def lax_reduce_max(p, ins, x64):
    check_accepts("reduce_max", ins)
    x = ins[0]["a"]
    return max_in(x, ins[0]["dtype"], reduce_axes(p, x))


LETTERS = "abcdefghijklmnopqrstuvwxyz"


def dot_general_values(lhs, rhs, lc, rc, lb, rb, dt):
    """lax.dot_general on storage arrays already converted to the compute dtype dt."""
    lsub = list(LETTERS[: lhs.ndim])
    rsub = list(LETTERS[lhs.ndim: lhs.ndim + rhs.ndim])
    for a, b in zip(lc, rc):
        rsub[b] = lsub[a]
    for a, b in zip(lb, rb):
        rsub[b] = lsub[a]
    out = [lsub[a] for a in lb]
    out += [lsub[i] for i in range(lhs.ndim) if i not in lc and i not in lb]
    out += [rsub[i] for i in range(rhs.ndim) if i not in rc and i not in rb]
    spec = "%s,%s->%s" % ("".join(lsub), "".join(rsub), "".join(out))
    k = int(math.prod(lhs.shape[a] for a in lc)) if lc else 1
    if dt == "bool":
        v = np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64))
        return Result(v != 0, dt)
    if is_int(dt):
        wide = np.uint64 if dt.startswith("u") else np.int64
        with np.errstate(all="ignore"):
            v = np.einsum(spec, lhs.astype(wide), rhs.astype(wide))
        return Result(np.asarray(v).astype(dt), dt)
    fl, fr = to_f64(lhs), to_f64(rhs)
    with np.errstate(all="ignore"):
        v = np.einsum(spec, fl, fr)
        a = np.einsum(spec, np.abs(fl), np.abs(fr))
    return accum_result(v, a, k, dt)


def lax_dot_general(p, ins, x64):
    l, r = ins
    lc, rc = list(p["lc"]), list(p["rc"])
    lb, rb = list(p["lb"]), list(p["rb"])
    lhs, rhs = l["a"], r["a"]
    if l["dtype"] != r["dtype"]:
        raise JaxError("TypeError", "dot_general requires one dtype")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise JaxError("Error", "dot_general dimension lists differ in length")
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise JaxError("Error", "dot_general dimension sizes differ")
    dt = p.get("preferred") or l["dtype"]
    lhs = convert(lhs, l["dtype"], dt)
    rhs = convert(rhs, r["dtype"], dt)
    return dot_general_values(lhs, rhs, lc, rc, lb, rb, dt)


# ---------------------------------------------------------------- numpy layer (jax.numpy)


def np_binary(kind, inexact=False):
    def f(p, ins, x64):
        xs, dt, weak = promote_inputs(ins, x64, inexact=inexact)
        try:
            np.broadcast_shapes(*(x.shape for x in xs))
        except ValueError:
            raise JaxError("ValueError", "incompatible shapes for broadcasting")
        if dt == "bool" and kind in ("sub", "div", "pow"):
            raise JaxError("TypeError", "%s of bool" % kind)
        r = arith(kind, xs[0], xs[1], dt)
        r.weak = weak
        return r
    return f


def np_power(p, ins, x64):
    xs, dt, weak = promote_inputs(ins, x64)
    if dt == "bool":
        raise Skip("power of bool")
    if is_int(dt):
        if np.any(as_pyints(xs[1]) < 0):
            raise Skip("negative integer exponents")
        r = Result(int_binop(lambda a, b: a ** b, xs[0], xs[1], dt), dt)
    else:
        with np.errstate(all="ignore"):
            v = np.power(to_f64(xs[0]), to_f64(xs[1]))
        # An integer exponent may be computed by repeated squaring (jnp.power's integer path).
        rtol, atol = IPOW_TOL[dt]
        rtol = max(rtol * 5, TRANSC_TOL[dt][0])
        r = Result(round_to(v, dt), dt, rtol=rtol, atol=max(atol, TRANSC_TOL[dt][1]))
    r.weak = weak
    return r


def np_unary(kind, inexact):
    def f(p, ins, x64):
        xs, dt, weak = promote_inputs(ins, x64, inexact=inexact)
        if kind == "positive":
            r = Result(xs[0], dt)
        elif kind == "square":
            if dt == "bool":
                raise Skip("square of bool depends on the JAX version")
            r = integer_pow(xs[0], 2, dt)
        else:
            if dt == "bool":
                raise JaxError("TypeError", "%s of bool" % kind)
            r = unary(kind, xs[0], dt)
        r.weak = weak
        return r
    return f


def np_compare(kind):
    def f(p, ins, x64):
        xs, dt, _ = promote_inputs(ins, x64)
        try:
            np.broadcast_shapes(*(x.shape for x in xs))
        except ValueError:
            raise JaxError("ValueError", "incompatible shapes for broadcasting")
        r = compare(kind, xs[0], xs[1], dt)
        r.weak = False
        return r
    return f


def np_where(p, ins, x64):
    c = convert(ins[0]["a"], ins[0]["dtype"], "bool")
    xs, dt, weak = promote_inputs(ins[1:], x64)
    try:
        shape = np.broadcast_shapes(c.shape, xs[0].shape, xs[1].shape)
    except ValueError:
        raise JaxError("ValueError", "incompatible shapes for broadcasting")
    out = np.where(c, xs[0], xs[1]).astype(storage(dt))
    return Result(np.broadcast_to(out, shape).copy(), dt, weak=weak)


def np_axes(p, x):
    axis = p.get("axis")
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, int):
        axis = [axis]
    out = []
    for a in axis:
        if a < -x.ndim or a >= x.ndim:
            raise JaxError("IndexError", "axis %d out of range for rank %d" % (a, x.ndim))
        out.append(a % x.ndim if x.ndim else a)
    if len(set(out)) != len(out):
        raise JaxError("ValueError", "repeated axis")
    return tuple(out)


def np_sum(p, ins, x64):
    x, src = ins[0]["a"], ins[0]["dtype"]
    axes = np_axes(p, x)
    keep = bool(p.get("keepdims", False))
    if p.get("dtype"):
        dt = canonicalize(p["dtype"], x64)
    elif src == "bool" or src in ("int8", "int16"):
        dt = canonicalize("int64", x64)
    elif src in ("uint8", "uint16"):
        dt = canonicalize("uint64", x64)
    else:
        dt = src
    if dt == "bool":
        raise Skip("sum with dtype=bool")
    if dt in ("float16", "bfloat16"):
        # jnp converts the input to float32, sums, then rounds once to the 16-bit result.
        r = sum_in(convert(x, src, "float32"), "float32", axes, keepdims=keep)
        r.value = round_to(to_f64(r.value), dt)  # (reference ~exact: rounding twice is ok)
        r.dtype, r.rtol = dt, EPS[dt]
        return r
    return sum_in(convert(x, src, dt), dt, axes, keepdims=keep)


def np_max(p, ins, x64):
    x, dt = ins[0]["a"], ins[0]["dtype"]
    axes = np_axes(p, x)
    if any(x.shape[a] == 0 for a in axes):
        raise JaxError("ValueError", "zero-size array to reduction operation max")
    return max_in(x, dt, axes, keepdims=bool(p.get("keepdims", False)))


def np_mean(p, ins, x64):
    x, src = ins[0]["a"], ins[0]["dtype"]
    axes = np_axes(p, x)
    keep = bool(p.get("keepdims", False))
    dt = canonicalize(p["dtype"], x64) if p.get("dtype") else to_inexact(src, x64)
    if not is_float(dt):
        raise Skip("mean with an integer dtype")
    n = int(math.prod(x.shape[a] for a in axes)) if axes else 1
    # jnp.mean converts the input to the computation dtype (float32 for 16-bit results).
    acc = "float32" if dt in ("float16", "bfloat16") else dt
    f = to_f64(convert(x, src, acc)) if src != "bool" else x.astype(np.float64)
    with np.errstate(all="ignore"):
        s = np.sum(f, axis=axes, keepdims=keep)
        a = np.sum(np.abs(f), axis=axes, keepdims=keep)
        v = s / n if n else s * np.nan
    bound = np.where(np.isfinite(a), a / max(n, 1) * (max(n, 1) * EPS[acc]) * 2, 0.0) + 1e-30
    return Result(round_to(v, dt), dt, rtol=EPS[dt], atol_array=bound)


def np_reshape(p, ins, x64):
    x = ins[0]["a"]
    try:
        return Result(x.reshape(tuple(p["shape"])).copy(), ins[0]["dtype"])
    except ValueError as e:
        raise JaxError("Error", str(e))


def np_transpose(p, ins, x64):
    x = ins[0]["a"]
    axes = p.get("axes")
    try:
        return Result(np.transpose(x, axes).copy(), ins[0]["dtype"])
    except (ValueError, np.AxisError) as e:
        raise JaxError("ValueError", str(e))


def np_broadcast_to(p, ins, x64):
    x = ins[0]["a"]
    try:
        return Result(np.broadcast_to(x, tuple(p["shape"])).copy(), ins[0]["dtype"])
    except ValueError as e:
        raise JaxError("ValueError", str(e))


def np_matmul(p, ins, x64):
    xs, dt, _ = promote_inputs(ins, x64)
    a, b = xs
    if a.ndim == 0 or b.ndim == 0:
        raise JaxError("Error", "matmul of a rank-0 operand")
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise JaxError("ValueError", "matmul contracting sizes differ")
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise JaxError("ValueError", "matmul batch shapes do not broadcast")
    a3 = np.broadcast_to(a2, batch + a2.shape[-2:])
    b3 = np.broadcast_to(b2, batch + b2.shape[-2:])
    nb = len(batch)
    r = dot_general_values(a3, b3, [nb + 1], [nb], list(range(nb)), list(range(nb)), dt)
    v = r.value
    t = r.atol_array
    if a.ndim == 1:
        v = v[..., 0, :]
        t = t[..., 0, :] if t is not None else None
    if b.ndim == 1:
        v = v[..., 0]
        t = t[..., 0] if t is not None else None
    r.value, r.atol_array = v, t
    return r


def np_dot(p, ins, x64):
    xs, dt, _ = promote_inputs(ins, x64)
    a, b = xs
    if a.ndim == 0 or b.ndim == 0:
        return arith("mul", a, b, dt)
    if b.ndim == 1:
        if a.shape[-1] != b.shape[0]:
            raise JaxError("ValueError", "dot sizes differ")
        return dot_general_values(a, b, [a.ndim - 1], [0], [], [], dt)
    if a.shape[-1] != b.shape[-2]:
        raise JaxError("ValueError", "dot sizes differ")
    return dot_general_values(a, b, [a.ndim - 1], [b.ndim - 2], [], [], dt)


# ---- creation


def creation_dtype(p, x64, default):
    return canonicalize(p.get("dtype") or default, x64)


def fill(shape, value, dt):
    v = np.full(tuple(shape), value, dtype=np.float64)
    if is_int(dt):
        return Result(wrap_ints(as_pyints(v.astype(np.int64)), dt), dt)
    if dt == "bool":
        return Result(v != 0, dt)
    return Result(round_to(v, dt), dt)


def np_zeros(p, ins, x64):
    return fill(p["shape"], 0, creation_dtype(p, x64, "float32"))


def np_ones(p, ins, x64):
    return fill(p["shape"], 1, creation_dtype(p, x64, "float32"))


def np_full(p, ins, x64):
    r = fill(p["shape"], p["value"], creation_dtype(p, x64, "float64"))
    r.weak = not p.get("dtype")  # lax.full: a Python float fill without dtype is weak
    return r


def np_like(value_key):
    def f(p, ins, x64):
        x = ins[0]
        dt = canonicalize(p.get("dtype") or x["dtype"], x64)
        v = {"zero": 0, "one": 1}.get(value_key)
        return fill(x["a"].shape, p["value"] if v is None else v, dt)
    return f


def np_scalar(p, ins, x64):
    kind = p["kind"]
    if kind == "weak_float":
        dt, weak = canonicalize("float64", x64), True
    elif kind == "weak_int":
        dt, weak = canonicalize("int64", x64), True
    else:
        dt, weak = canonicalize(p["dtype"], x64), False
    r = fill((), p["value"], dt)
    r.weak = weak
    return r


SRC_DTYPE = {"double": "float64", "float": "float32", "int32": "int32", "int64": "int64",
             "bool": "bool"}


def np_array(p, ins, x64):
    """jnp.array of host values of C++ element type p["from"] (values given exactly)."""
    src = SRC_DTYPE[p["from"]]
    dt = canonicalize(p.get("dtype") or src, x64)
    vals = np.array(p["values"], dtype=np.float64).reshape(tuple(p["shape"]))
    if src == "bool":
        return Result(convert(vals != 0, "bool", dt), dt)
    if src in INTS:
        return Result(convert(vals.astype(np.int64), "int64", dt), dt)
    return Result(convert(vals, "float64", dt), dt)


def np_astype(p, ins, x64):
    dt = canonicalize(p["dtype"], x64)
    return Result(convert(ins[0]["a"], ins[0]["dtype"], dt), dt)


def np_arange(p, ins, x64):
    start, stop, step = p["start"], p["stop"], p["step"]
    integral = p["integral"]
    dt = canonicalize(p.get("dtype") or ("int64" if integral else "float64"), x64)
    if step == 0:
        raise JaxError("ValueError", "arange step 0")
    n = max(0, math.ceil((stop - start) / step))
    v = start + np.arange(n, dtype=np.float64) * step
    if is_int(dt):
        if integral:
            return Result(wrap_ints([start + i * step for i in range(n)], dt), dt)
        return Result(convert(v, "float64", dt), dt)
    e = EPS.get(dt, 0.0)
    return Result(round_to(v, dt), dt, rtol=2 * e, atol=4 * e * (abs(start) + n * abs(step)))


def np_linspace(p, ins, x64):
    start, stop, num, endpoint = p["start"], p["stop"], p["num"], p["endpoint"]
    dt = canonicalize(p.get("dtype") or "float64", x64)
    if num < 0:
        raise JaxError("ValueError", "negative num")
    v = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)
    if is_int(dt):
        raise Skip("integer linspace")
    e = EPS[dt]
    return Result(round_to(v, dt), dt, rtol=2 * e, atol=4 * e * (abs(start) + abs(stop)))


def np_eye(p, ins, x64):
    n, m, k = p["n"], p.get("m"), p.get("k", 0)
    dt = canonicalize(p.get("dtype") or "float32", x64)
    v = np.eye(n, n if m is None else m, k)
    return fill(v.shape, 0, dt) if v.size == 0 else Result(convert(v, "float64", dt), dt)


def np_result_type(p, ins, x64):
    dt, _ = result_type(ins, x64)
    return fill((), 0, dt)


def np_broadcast_shapes(p, ins, x64):
    try:
        s = np.broadcast_shapes(tuple(p["a"]), tuple(p["b"]))
    except ValueError:
        raise JaxError("ValueError", "shapes do not broadcast")
    return fill(s, 0, "float32")


OPS = {
    # lax
    "lax.add": lax_binary("add"), "lax.sub": lax_binary("sub"), "lax.mul": lax_binary("mul"),
    "lax.div": lax_binary("div"), "lax.max": lax_binary("max"), "lax.min": lax_binary("min"),
    "lax.pow": lax_binary("pow"),
    "lax.neg": lax_unary("neg"), "lax.exp": lax_unary("exp"), "lax.log": lax_unary("log"),
    "lax.sin": lax_unary("sin"), "lax.cos": lax_unary("cos"), "lax.tanh": lax_unary("tanh"),
    "lax.logistic": lax_unary("logistic"), "lax.sqrt": lax_unary("sqrt"),
    "lax.integer_pow": lax_integer_pow,
    "lax.eq": lax_compare("eq"), "lax.ne": lax_compare("ne"), "lax.lt": lax_compare("lt"),
    "lax.le": lax_compare("le"), "lax.gt": lax_compare("gt"), "lax.ge": lax_compare("ge"),
    "lax.select_n": lax_select_n, "lax.convert_element_type": lax_convert,
    "lax.broadcast_in_dim": lax_broadcast_in_dim, "lax.broadcast": lax_broadcast,
    "lax.reshape": lax_reshape, "lax.transpose": lax_transpose, "lax.iota": lax_iota,
    "lax.reduce_sum": lax_reduce_sum, "lax.reduce_max": lax_reduce_max,
    "lax.dot_general": lax_dot_general,
    # jax.numpy
    "np.add": np_binary("add"), "np.subtract": np_binary("sub"),
    "np.multiply": np_binary("mul"), "np.divide": np_binary("div", inexact=True),
    "np.maximum": np_binary("max"), "np.minimum": np_binary("min"), "np.power": np_power,
    "np.negative": np_unary("neg", False), "np.positive": np_unary("positive", False),
    "np.square": np_unary("square", False),
    "np.exp": np_unary("exp", True), "np.log": np_unary("log", True),
    "np.sin": np_unary("sin", True), "np.cos": np_unary("cos", True),
    "np.tanh": np_unary("tanh", True), "np.sqrt": np_unary("sqrt", True),
    "np.equal": np_compare("eq"), "np.not_equal": np_compare("ne"),
    "np.less": np_compare("lt"), "np.less_equal": np_compare("le"),
    "np.greater": np_compare("gt"), "np.greater_equal": np_compare("ge"),
    "np.where": np_where,
    "np.sum": np_sum, "np.max": np_max, "np.mean": np_mean,
    "np.reshape": np_reshape, "np.transpose": np_transpose, "np.broadcast_to": np_broadcast_to,
    "np.matmul": np_matmul, "np.dot": np_dot,
    "np.zeros": np_zeros, "np.ones": np_ones, "np.full": np_full,
    "np.zeros_like": np_like("zero"), "np.ones_like": np_like("one"),
    "np.full_like": np_like("value"),
    "np.scalar": np_scalar, "np.array": np_array, "np.astype": np_astype,
    "np.arange": np_arange, "np.linspace": np_linspace, "np.eye": np_eye,
    "np.result_type": np_result_type, "np.broadcast_shapes": np_broadcast_shapes,
}


def load_npy(path):
    """np.load for the harness's own files, without np.load's slow header tokenizer (the
    C++ writer itself is checked against np.load in test_npy)."""
    with open(path, "rb") as f:
        data = f.read()
    off = 10 if data[6] == 1 else 12
    hlen = int.from_bytes(data[8:off], "little")
    h = ast.literal_eval(data[off:off + hlen].decode("latin1"))
    shape = tuple(h["shape"])
    return np.frombuffer(data, dtype=np.dtype(h["descr"]), count=math.prod(shape),
                         offset=off + hlen).reshape(shape)


def clean(s):
    return " ".join(str(s).split())[:400]


def load_extensions():
    """Adds the ops of every oracle_*.py beside this script: each defines ops(base) -> {name: fn},
    where base is this module (for Result, JaxError, round_bf16 and the dtype helpers)."""
    import glob
    import importlib.util
    base = sys.modules[__name__]
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "oracle_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for k, fn in mod.ops(base).items():
            if k in OPS:
                raise RuntimeError("%s redefines oracle op %r" % (path, k))
            OPS[k] = fn


def main():
    load_extensions()
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)
    lines = []
    for c in cases:
        cid = c["id"]
        try:
            fn = OPS.get(c["op"])
            if fn is None:
                raise Skip("the oracle has no op %r" % c["op"])
            ins = []
            for i in c["inputs"]:
                a = load_npy(os.path.join(d, i["file"]))
                ins.append({"a": a, "dtype": i["dtype"], "weak": i["weak"]})
            r = fn(c.get("params") or {}, ins, bool(c.get("x64")))
            # (np.ascontiguousarray would turn rank 0 into shape (1,).)
            value = np.array(np.asarray(r.value).astype(storage(r.dtype)), order="C")
            np.save(os.path.join(d, "out%d.npy" % cid), value)
            has_t = 0
            if r.atol_array is not None:
                t = np.array(np.broadcast_to(
                    np.asarray(r.atol_array, np.float64), value.shape), order="C")
                np.save(os.path.join(d, "atol%d.npy" % cid), t)
                has_t = 1
            weak = "-" if r.weak is None else ("1" if r.weak else "0")
            lines.append("%d\tok\t%s\t%s\t%.17g\t%.17g\t%d" % (
                cid, r.dtype, weak, r.rtol, r.atol, has_t))
        except JaxError as e:
            lines.append("%d\terror\t%s\t%s" % (cid, e.kind, clean(e.why)))
        except Skip as e:
            lines.append("%d\tskip\t%s" % (cid, clean(e)))
        except Exception:  # a bug in this script: report it per case, keep going
            tb = traceback.format_exc().strip().splitlines()
            lines.append("%d\toracle_bug\t%s" % (cid, clean(" | ".join(tb[-3:]))))
    with open(os.path.join(d, "results.tsv"), "w") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))


if __name__ == "__main__":
    main()
