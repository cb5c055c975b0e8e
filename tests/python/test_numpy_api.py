"""tessera.numpy against NumPy (the oracle for values) and JAX's documented type promotion (a
reference lattice written here, independent of Tessera's), on fresh random inputs.

Each result is compared with NumPy's result cast to the dtype JAX gives (32-bit defaults, Python
scalars weakly typed). bfloat16 values are rounded by a bit-level reference (round to nearest
even) since NumPy 1.24 has no bfloat16. The seed comes from TESSERA_TEST_SEED (or the clock) and
is printed with every test's captured output.
"""
import os
import subprocess
import sys
import time
import warnings
import zlib

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))
print(f"test_numpy_api: TESSERA_TEST_SEED={SEED}")


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


@pytest.fixture
def x64():
    """Enables x64 for one test and always restores the previous setting."""
    old = tessera.config.jax_enable_x64
    tessera.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        tessera.config.update("jax_enable_x64", old)


# ---------------------------------------------------------------------------------------------
# Reference: JAX's type promotion lattice (jax/_src/dtypes.py, documented in "Type promotion
# semantics"). "i*" and "f*" are the weak (Python) int and float types.
_LATTICE = {
    "bool": ["i*"], "i*": ["uint8", "int8"],
    "uint8": ["uint16", "int16"], "uint16": ["uint32", "int32"], "uint32": ["uint64", "int64"],
    "uint64": ["f*"], "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["f*"],
    "f*": ["float16", "bfloat16"], "float16": ["float32"], "bfloat16": ["float32"],
    "float32": ["float64"], "float64": [],
}


def _upset(t, memo={}):
    if t not in memo:
        s = {t}
        for c in _LATTICE[t]:
            s |= _upset(c)
        memo[t] = frozenset(s)
    return memo[t]


def _canon(name, x64=False):
    if x64:
        return name
    return {"int64": "int32", "uint64": "uint32", "float64": "float32"}.get(name, name)


def ref_result_type(*types, x64=False):
    """types: (dtype name, weak) pairs -> (canonical dtype name, weak) as JAX's result_type."""
    names = [t for t, _ in types]
    weaks = [w for _, w in types]
    if all(n == names[0] for n in names):
        out, weak = names[0], all(weaks)
    else:
        lattice_types = set()
        for n, w in types:
            if w:
                lattice_types.add("f*" if n.startswith(("float", "bfloat")) else "i*")
            else:
                lattice_types.add(n)
        common = frozenset.intersection(*(_upset(t) for t in lattice_types))
        out = next(t for t in common if _upset(t) == common)
        weak = out in ("i*", "f*")
        if out == "i*":
            out = "int64"
        elif out == "f*":
            out = "float64"
    weak = weak and out != "bool"
    return _canon(out, x64), weak


def ref_inexact(name, weak, x64=False):
    """JAX's promote_dtypes_inexact for one operand."""
    if name.startswith(("float", "bfloat")):
        return name, weak
    return _canon("float64", x64), weak


def round_bf16(a):
    """float64/float32 values rounded to bfloat16 (nearest even), returned as float32."""
    f = np.asarray(a, np.float32).copy()
    u = f.view(np.uint32)
    nan = np.isnan(f)
    u += np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))
    u &= np.uint32(0xFFFF0000)
    f[nan] = np.nan
    return f


# ---------------------------------------------------------------------------------------------
# Helpers
FLOATS = ("float16", "bfloat16", "float32")


def is_float(name):
    return name in FLOATS or name == "float64"


def to_np(x):
    """The values of a Tessera Array as NumPy (bfloat16 through an explicit float32 astype, so
    these sweeps do not depend on np.asarray of bfloat16, tested separately)."""
    assert isinstance(x, tessera.Array), type(x)
    if str(x.dtype) == "bfloat16":
        x = jnp.astype(x, jnp.float32)
    return np.asarray(x)


def rand_values(rng, shape, name, specials=True, positive=False, small_int=False):
    """NumPy values for an array of dtype `name` (bfloat16: already rounded float32 values)."""
    if name == "bool":
        return rng.random(shape) < 0.5
    if name.startswith("uint"):
        hi = 4 if small_int else 40
        return rng.integers(0, hi, size=shape).astype(name)
    if name.startswith("int"):
        lo, hi = (0, 4) if small_int else ((1, 20) if positive else (-20, 20))
        return rng.integers(lo, hi, size=shape).astype(name)
    v = rng.standard_normal(shape) * 3
    if positive:
        v = np.abs(v) + 0.1
    if specials and v.size >= 4:
        flat = v.reshape(-1)
        k = rng.integers(0, flat.size, size=2)
        flat[k[0]] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
    if name == "bfloat16":
        return round_bf16(v)
    return v.astype(name)


def make(values, name):
    if name == "bfloat16":  # (asarray(x, dtype=bfloat16) of NumPy input is tested on its own)
        return jnp.astype(jnp.asarray(np.asarray(values, np.float32)), jnp.bfloat16)
    return jnp.asarray(values)


def cast_expected(v, name):
    """NumPy values rounded to dtype `name` (the reference result after JAX's promotion)."""
    if name == "bfloat16":
        return round_bf16(v)
    with np.errstate(all="ignore"):
        return np.asarray(v).astype(name)


def tol(name, transcendental=False):
    if name == "bfloat16":
        return dict(rtol=1.6e-2, atol=1e-2)
    if name == "float16":
        return dict(rtol=2e-3, atol=1e-3)
    if name == "float32":
        return dict(rtol=1e-5, atol=1e-6) if transcendental else dict(rtol=2e-7, atol=0)
    if name == "float64":
        return dict(rtol=1e-12, atol=1e-14)
    return dict(rtol=0, atol=0)


def close(got, expected, name=None, **t):
    """Values and shape (dtype checked by the caller or by `name`)."""
    g = to_np(got)
    exp = np.asarray(expected)
    assert g.shape == exp.shape, (g.shape, exp.shape)
    if name is not None:
        assert str(got.dtype) == name, (got.dtype, name)
    if g.dtype.kind == "f" or exp.dtype.kind == "f":
        np.testing.assert_allclose(g.astype(np.float64), exp.astype(np.float64), equal_nan=True,
                                   **(t or dict(rtol=1e-5, atol=1e-6)))
    else:
        np.testing.assert_array_equal(g, exp)


def check(got, expected, name, weak, **tolerance):
    assert isinstance(got, tessera.Array), type(got)
    assert str(got.dtype) == name, (got.dtype, name)
    assert got.weak_type == weak, (got.weak_type, weak, repr(got))
    exp = np.asarray(expected)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    g = to_np(got)
    if is_float(name):
        np.testing.assert_allclose(g.astype(np.float64), exp.astype(np.float64), equal_nan=True,
                                   **(tolerance or tol(name)))
    else:
        np.testing.assert_array_equal(g, exp)


# ---------------------------------------------------------------------------------------------
# Binary elementwise functions: dtype pairs x broadcasting shapes.
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}

# (lhs, rhs): dtype names, or "py:int"/"py:float"/"py:bool" for Python scalars.
PAIRS = [
    ("float32", "float32"), ("int32", "int32"), ("int8", "int8"), ("uint8", "uint8"),
    ("bool", "bool"), ("float16", "float16"), ("bfloat16", "bfloat16"),
    ("int8", "int16"), ("uint8", "int8"), ("int32", "float16"), ("bool", "int32"),
    ("float16", "bfloat16"), ("bfloat16", "float32"), ("uint8", "float16"), ("uint8", "uint32"),
    ("float32", "py:float"), ("int32", "py:float"), ("int8", "py:int"), ("bool", "py:int"),
    ("float16", "py:float"), ("uint8", "py:int"), ("py:float", "bfloat16"), ("int8", "py:bool"),
    ("py:int", "float32"),
]
SHAPES = [((), ()), ((3,), ()), ((), (4,)), ((2, 3), (3,)), ((2, 1, 4), (3, 1)), ((0, 3), (1, 3)),
          ((5,), (5,)), ((4, 1), (1, 5))]


def _operand(rng, spec, shape, op, is_rhs):
    """(tessera operand, reference float64/int values, (dtype name, weak))."""
    power = op == "power"
    if spec.startswith("py:"):
        kind = spec[3:]
        if kind == "bool":
            v = bool(rng.random() < 0.5)
            return v, np.asarray(v), ("bool", False)
        if kind == "int":
            v = int(rng.integers(0, 4) if power and is_rhs else rng.integers(1, 20) if power
                    else rng.integers(0, 30))
            return v, np.asarray(v), ("int32", True)
        v = float(rng.uniform(-1.5, 2.5) if power and is_rhs else rng.uniform(0.1, 5) if power
                  else rng.standard_normal() * 3)
        return v, np.asarray(v), ("float32", True)
    if power and is_rhs:
        vals = rand_values(rng, shape, spec, specials=False, small_int=True)
        if is_float(spec) or spec == "bfloat16":
            vals = cast_expected(rng.uniform(-1.5, 2.5, size=shape), spec)
    else:
        vals = rand_values(rng, shape, spec, specials=not power, positive=power)
    return make(vals, spec), vals, (spec, False)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_vs_numpy(rng, op, pair):
    for lshape, rshape in SHAPES:
        if pair[0].startswith("py:"):
            lshape = ()
        if pair[1].startswith("py:"):
            rshape = ()
        if op == "power" and (pair[0] == "bool" or pair[1] == "bool" or "py:bool" in pair):
            continue
        a, av, at = _operand(rng, pair[0], lshape, op, False)
        b, bv, bt = _operand(rng, pair[1], rshape, op, True)
        name, weak = ref_result_type(at, bt)
        if op in COMPARISONS:
            out_name, out_weak = "bool", False
        elif op == "divide":
            out_name, out_weak = ref_inexact(name, weak)
        else:
            out_name, out_weak = name, weak
        if op == "subtract" and name == "bool":
            with pytest.raises(TypeError, match="subtract"):  # as JAX (and NumPy)
                jnp.subtract(a, b)
            continue
        got = getattr(jnp, op)(a, b)
        # JAX converts both operands to the promoted dtype (the inexact one for divide), then
        # computes: the reference rounds the operands first, computes in float64 (or in the
        # integer dtype, wrapping around as JAX does) and rounds the result.
        conv = name if op in COMPARISONS else out_name
        with np.errstate(all="ignore"):
            if is_float(conv):
                ac = cast_expected(av.astype(np.float64), conv).astype(np.float64)
                bc = cast_expected(bv.astype(np.float64), conv).astype(np.float64)
            else:
                ac, bc = av.astype(conv), bv.astype(conv)
            expected = BINARY[op](ac, bc)
            if is_float(out_name):
                expected = cast_expected(expected, out_name)
        t = tol(out_name, transcendental=(op == "power"))
        if out_name == "float16" and op != "power":
            t = dict(rtol=1e-3, atol=0)  # f16 arithmetic may round through float32
        check(got, expected, out_name, out_weak, **t)


# ---------------------------------------------------------------------------------------------
UNARY = {
    "negative": np.negative, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sqrt": np.sqrt, "square": np.square, "positive": np.positive,
}
INEXACT_UNARY = {"exp", "log", "sin", "cos", "tanh", "sqrt"}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int8", "py:float",
                                   "py:int"])
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_vs_numpy(rng, op, dtype):
    for shape in [(), (7,), (3, 4), (0, 2)]:
        if dtype.startswith("py:"):
            if shape != ():
                continue
            v = float(rng.standard_normal() * 2) if dtype == "py:float" else int(rng.integers(-5, 6))
            a, av, (name, weak) = v, np.asarray(v), ("float32" if dtype == "py:float" else "int32",
                                                     True)
        else:
            av = rand_values(rng, shape, dtype, specials=True)
            if dtype.startswith("int"):
                av = (av % 10).astype(dtype)  # exp of int inputs stays finite in float16 ranges
            a, name, weak = make(av, dtype), dtype, False
        out_name, out_weak = ref_inexact(name, weak) if op in INEXACT_UNARY else (name, weak)
        with np.errstate(all="ignore"):
            if is_float(out_name):
                expected = cast_expected(UNARY[op](np.asarray(av, np.float64)), out_name)
            else:
                expected = UNARY[op](np.asarray(av).astype(out_name))
        check(getattr(jnp, op)(a), expected, out_name, out_weak,
              **tol(out_name, transcendental=op in INEXACT_UNARY))


def test_special_values(rng):
    x = jnp.asarray(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0], np.float32))
    with np.errstate(all="ignore"):
        xv = np.asarray(x)
        for name in ["exp", "log", "sqrt", "tanh", "sin", "cos", "negative", "square"]:
            # allclose checks NaN and inf positions exactly and finite values to 1e-6
            np.testing.assert_allclose(to_np(getattr(jnp, name)(x)), getattr(np, name)(xv),
                                       rtol=1e-6, atol=0)
        np.testing.assert_array_equal(to_np(x / 0.0), xv / np.float32(0.0))
        np.testing.assert_array_equal(to_np(jnp.maximum(x, 0.5)), np.maximum(xv, np.float32(0.5)))
        np.testing.assert_array_equal(to_np(jnp.minimum(x, 0.5)), np.minimum(xv, np.float32(0.5)))
    assert np.isnan(to_np(jnp.max(x)))  # NaN propagates through max like np.max
    assert np.isnan(to_np(jnp.sum(x)))
    assert to_np(jnp.sum(jnp.asarray(np.array([np.inf, 1.0], np.float32)))) == np.inf
    np.testing.assert_array_equal(to_np(x == x), xv == xv)  # NaN != NaN
    np.testing.assert_array_equal(to_np(x != x), xv != xv)


# ---------------------------------------------------------------------------------------------
# where
@pytest.mark.parametrize("types", [("float32", "float32"), ("int8", "float16"), ("int32", "py:float"),
                                   ("py:int", "py:int"), ("bfloat16", "py:float"),
                                   ("uint8", "int8")])
def test_where(rng, types):
    for cshape, xshape, yshape in [((), (), ()), ((4,), (4,), ()), ((2, 3), (3,), (2, 1)),
                                   ((0,), (0,), (1,))]:
        cond = rng.random(cshape) < 0.5
        ops = []
        for spec, shape in zip(types, (xshape, yshape)):
            if spec.startswith("py:"):
                v = float(rng.standard_normal()) if spec == "py:float" else int(rng.integers(-9, 9))
                ops.append((v, np.asarray(v), ("float32" if spec == "py:float" else "int32", True)))
            else:
                vals = rand_values(rng, shape, spec)
                ops.append((make(vals, spec), vals, (spec, False)))
        name, weak = ref_result_type(ops[0][2], ops[1][2])
        expected = np.where(cond, ops[0][1].astype(np.float64), ops[1][1].astype(np.float64))
        c = jnp.asarray(cond)
        got = jnp.where(c, ops[0][0], ops[1][0])
        check(got, cast_expected(expected, name), name, weak)


# ---------------------------------------------------------------------------------------------
# Reductions
def _sum_dtype(name):
    if name in ("bool", "int8", "int16", "int32"):
        return "int32"
    if name in ("uint8", "uint16", "uint32"):
        return "uint32"
    return name


AXES = [None, 0, -1, (0, 2), (1,), (), (2, 0, 1)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int8", "uint8",
                                   "bool"])
@pytest.mark.parametrize("red", ["sum", "mean", "max"])
def test_reductions(rng, red, dtype):
    for shape in [(3, 4, 5), (2, 0, 3)]:
        vals = rand_values(rng, shape, dtype, specials=False)
        x = make(vals, dtype)
        for axis in AXES:
            reduced = range(3) if axis is None else np.atleast_1d(np.asarray(axis, dtype=int))
            empty = any(shape[a] == 0 for a in reduced)
            nd_axis = axis
            for keepdims in (False, True):
                if red == "max" and empty:
                    with pytest.raises(ValueError, match="max"):
                        jnp.max(x, axis=axis, keepdims=keepdims)
                    continue
                v64 = vals.astype(np.float64)
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # NumPy: mean of empty slice
                    if red == "sum":
                        out_name = _sum_dtype(dtype)
                        ref = np.sum(v64, axis=nd_axis, keepdims=keepdims)
                        got = jnp.sum(x, axis=axis, keepdims=keepdims)
                        meth = x.sum(axis=axis, keepdims=keepdims)
                    elif red == "mean":
                        out_name = dtype if is_float(dtype) else "float32"
                        ref = np.mean(v64, axis=nd_axis, keepdims=keepdims)
                        got = jnp.mean(x, axis=axis, keepdims=keepdims)
                        meth = x.mean(axis=axis, keepdims=keepdims)
                    else:
                        out_name = dtype
                        ref = np.max(v64, axis=nd_axis, keepdims=keepdims)
                        got = jnp.max(x, axis=axis, keepdims=keepdims)
                        meth = x.max(axis=axis, keepdims=keepdims)
                n = max(1, vals.size // max(1, np.size(ref)))
                t = tol(out_name)
                if is_float(out_name) and red != "max":
                    scale = np.sum(np.abs(v64), axis=nd_axis, keepdims=keepdims) / (
                        n if red == "mean" else 1)
                    eps = {"float32": 2**-23, "float16": 2**-10, "bfloat16": 2**-7}[out_name]
                    t = dict(rtol=0, atol=float(np.max(scale, initial=0)) * eps * (n + 2) + 1e-30)
                check(got, cast_expected(ref, out_name), out_name, False, **t)
                check(meth, cast_expected(ref, out_name), out_name, False, **t)


@pytest.mark.parametrize("src,dt", [("int8", "float32"), ("float32", "int32"), ("uint8", "int8"),
                                    ("bool", "float16"), ("float16", "float32")])
def test_reduction_dtype_argument(rng, src, dt):
    vals = rand_values(rng, (4, 5), src, specials=False)
    x = make(vals, src)
    conv = cast_expected(vals.astype(np.float64), dt) if is_float(dt) else vals.astype(dt)
    got = jnp.sum(x, axis=1, dtype=getattr(jnp, dt))
    ref = np.sum(conv.astype(np.float64) if is_float(dt) else conv, axis=1).astype(dt)
    check(got, ref, dt, False, **(tol(dt) if dt != "float16" else dict(rtol=3e-3, atol=1e-2)))
    if is_float(dt):
        got = jnp.mean(x, axis=0, dtype=dt)
        check(got, cast_expected(np.mean(conv.astype(np.float64), axis=0), dt), dt, False,
              rtol=3e-3, atol=1e-3)


def test_empty_reductions():
    e = jnp.zeros((0, 3))
    check(jnp.sum(e, axis=0), np.zeros(3, np.float32), "float32", False)
    check(jnp.sum(e), np.float32(0), "float32", False)
    assert np.isnan(to_np(jnp.mean(jnp.zeros((0,)))))
    with pytest.raises(ValueError, match="zero-size"):
        jnp.max(e)
    check(jnp.max(e, axis=1), np.zeros((0,), np.float32), "float32", False)


# ---------------------------------------------------------------------------------------------
# Shapes and products
def test_reshape_transpose_broadcast(rng):
    for _ in range(20):
        nd = int(rng.integers(1, 5))
        shape = tuple(int(s) for s in rng.integers(1, 4, size=nd))
        v = rng.standard_normal(shape).astype(np.float32)
        x = jnp.asarray(v)
        perm = tuple(int(p) for p in rng.permutation(nd))
        check(jnp.transpose(x, perm), np.transpose(v, perm), "float32", False)
        check(x.transpose(perm), np.transpose(v, perm), "float32", False)
        check(jnp.transpose(x), v.T, "float32", False)
        check(x.T, v.T, "float32", False)
        new = (v.size,) if rng.random() < 0.5 else (-1, shape[-1])
        check(jnp.reshape(x, new), v.reshape(new), "float32", False)
        check(x.reshape(new), v.reshape(new), "float32", False)
        check(x.reshape(*new), v.reshape(new), "float32", False)
        bshape = (2,) + shape
        check(jnp.broadcast_to(x, bshape), np.broadcast_to(v, bshape), "float32", False)
    check(jnp.reshape(jnp.zeros((0, 3)), (3, 0)), np.zeros((3, 0), np.float32), "float32", False)
    check(jnp.broadcast_to(2.5, (2, 2)), np.full((2, 2), 2.5, np.float32), "float32", True)
    with pytest.raises(ValueError):
        jnp.broadcast_to(jnp.ones(3), (4,))


@pytest.mark.parametrize("dts", [("float32", "float32"), ("int32", "int32"), ("int8", "float32"),
                                 ("float16", "float16"), ("bfloat16", "bfloat16"), ("bool", "int8")])
def test_matmul_dot(rng, dts):
    cases = [((3,), (3,)), ((2, 3), (3, 4)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3, 4)),
             ((5, 2, 3), (5, 3, 1)), ((1, 2, 3), (4, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]
    name, weak = ref_result_type((dts[0], False), (dts[1], False))
    for sa, sb in cases:
        a = rand_values(rng, sa, dts[0], specials=False)
        b = rand_values(rng, sb, dts[1], specials=False)
        A, B = make(a, dts[0]), make(b, dts[1])
        ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
        scale = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
        eps = {"float32": 2**-22, "float16": 2**-9, "bfloat16": 2**-6}.get(name, 0)
        t = dict(rtol=eps, atol=float(np.max(scale, initial=0)) * eps * 4)
        exp = cast_expected(ref, name) if is_float(name) else ref.astype(name)
        check(jnp.matmul(A, B), exp, name, weak, **t)
        check(A @ B, exp, name, weak, **t)
        if len(sa) <= 2 and len(sb) <= 2:
            check(jnp.dot(A, B), exp, name, weak, **t)
            check(A.dot(B), exp, name, weak, **t)
    # dot with a scalar multiplies (np.dot's rule); dot of N-d by 1-d contracts the last axis
    a = rng.standard_normal((2, 3)).astype(np.float32)
    check(jnp.dot(2.0, jnp.asarray(a)), a * 2, "float32", False)
    b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    v = rng.standard_normal(4).astype(np.float32)
    check(jnp.dot(jnp.asarray(b), jnp.asarray(v)), np.dot(b, v), "float32", False,
          rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2, 3\)"):
        jnp.matmul(jnp.ones((2, 3)), jnp.ones((2, 3)))


@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16", "int32", "int8", "uint8", "bool"])
def test_astype(rng, src):
    vals = rand_values(rng, (3, 5), src, specials=False)
    if is_float(src):
        vals = cast_expected(np.clip(vals.astype(np.float64), -100, 100), src)
    x = make(vals, src)
    for dst in ["float32", "float16", "bfloat16", "int32", "int8", "uint8", "bool"]:
        if dst == "uint8" and (is_float(src) or src.startswith("int")):
            v = np.abs(vals.astype(np.float64)) if is_float(src) else np.abs(vals)
            x2 = make(cast_expected(v, src) if is_float(src) else v.astype(src), src)
        else:
            v, x2 = vals, x
        v64 = np.asarray(v).astype(np.float64)
        if dst == "bool":
            exp = v64 != 0
        elif is_float(dst):
            exp = cast_expected(v64, dst)
        else:
            exp = np.trunc(v64).astype(np.int64).astype(dst)
        got = x2.astype(getattr(jnp, "bool_" if dst == "bool" else dst))
        check(got, exp, dst, False)
        check(jnp.astype(x2, dst), exp, dst, False)


# ---------------------------------------------------------------------------------------------
# Creation
def test_creation_functions(rng):
    n, m = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    check(jnp.zeros((n, m)), np.zeros((n, m), np.float32), "float32", False)
    check(jnp.zeros(n, jnp.int8), np.zeros(n, np.int8), "int8", False)
    check(jnp.ones((n,)), np.ones(n, np.float32), "float32", False)
    check(jnp.ones((2, n), dtype="int32"), np.ones((2, n), np.int32), "int32", False)
    check(jnp.ones(3, jnp.bfloat16), np.ones(3, np.float32), "bfloat16", False)
    fill = float(rng.standard_normal())
    check(jnp.full((n, m), fill), np.full((n, m), fill, np.float32), "float32", True)
    check(jnp.full((n,), 7), np.full((n,), 7, np.int32), "int32", True)
    check(jnp.full((n,), 7, dtype=jnp.float16), np.full((n,), 7, np.float16), "float16", False)
    row = rng.standard_normal(m).astype(np.float32)
    check(jnp.full((n, m), jnp.asarray(row)), np.broadcast_to(row, (n, m)), "float32", False)
    for args in [(5,), (2, 11, 3), (10, 2, -3), (0,), (-3,)]:
        check(jnp.arange(*args), np.arange(*args).astype(np.int32), "int32", False)
    check(jnp.arange(5, dtype=jnp.float32), np.arange(5, dtype=np.float32), "float32", False)
    for args in [(0.0, 1.0, 0.1), (-2.5, 3.0, 0.5), (4.5,)]:
        check(jnp.arange(*args), np.arange(*args).astype(np.float32), "float32", False,
              rtol=0, atol=1e-6)
    for start, stop, num, endpoint in [(0, 1, 5, True), (0, 1, 4, False), (-3.5, 2, 7, True),
                                       (2, 2, 3, True), (0, 1, 1, True), (0, 1, 0, True)]:
        got = jnp.linspace(start, stop, num, endpoint=endpoint)
        check(got, np.linspace(start, stop, num, endpoint=endpoint).astype(np.float32), "float32",
              False, rtol=0, atol=1e-6)
    got, step = jnp.linspace(0, 2, 5, retstep=True)
    assert step == pytest.approx(np.linspace(0, 2, 5, retstep=True)[1])
    for N, M, k, dt in [(3, None, 0, None), (2, 4, 1, None), (4, 3, -1, "int32"), (3, 3, 5, None),
                        (0, None, 0, None)]:
        exp = np.eye(N, M, k).astype(dt or np.float32)
        check(jnp.eye(N, M, k, dtype=dt), exp, str(exp.dtype), False)


@pytest.mark.parametrize("fn", ["asarray", "array"])
def test_asarray_array_canonicalization(rng, fn):
    f = getattr(jnp, fn)
    cases = [
        ([1, 2, 3], "int32", False), ([1.0, 2], "float32", False), ([[True], [False]], "bool", False),
        (3, "int32", True), (2.5, "float32", True), (True, "bool", False),
        (np.arange(4, dtype=np.int64), "int32", False), (np.arange(3.0), "float32", False),
        (np.arange(3, dtype=np.uint64), "uint32", False), (np.float32(1.5), "float32", False),
        (np.int8(-3), "int8", False), (np.float16(0.5), "float16", False),
        (np.array([1, 2], np.uint16), "uint16", False), ((1, 2.5), "float32", False),
    ]
    for obj, name, weak in cases:
        got = f(obj)
        check(got, np.asarray(obj).astype(name), name, weak)
    v = rng.standard_normal((2, 3))
    check(f(v, dtype=jnp.float16), v.astype(np.float16), "float16", False)
    check(f(v, dtype=jnp.bfloat16), round_bf16(v), "bfloat16", False)
    check(f(list(v.tolist()), dtype="float32"), v.astype(np.float32), "float32", False)
    x = jnp.asarray(v)
    check(f(x), v.astype(np.float32), "float32", False)
    check(jnp.array(x, ndmin=4), v.astype(np.float32)[None, None], "float32", False)


def test_numpy_float64_scalar_is_strongly_typed():
    # JAX: only Python's own int/float/complex are weak; np.float64(1.5) is a strong float64.
    assert not jnp.asarray(np.float64(1.5)).weak_type
    y = jnp.asarray([1.0, 2.0], jnp.float16) + np.float64(1.0)
    assert str(y.dtype) == "float32"  # f16 + f64 -> f64 -> float32 (x64 off)


def test_asarray_of_a_list_of_arrays_stacks(rng):
    v = rng.standard_normal((2, 3)).astype(np.float32)
    rows = [jnp.asarray(v[0]), jnp.asarray(v[1])]
    check(jnp.asarray(rows), v, "float32", False)
    check(jnp.array(rows), v, "float32", False)


def test_asarray_of_a_list_of_tracers_stacks():
    g = tessera.grad(lambda a: jnp.sum(jnp.asarray([a, a * 2.0])))(1.5)
    assert float(g) == 3.0


# ---------------------------------------------------------------------------------------------
# Operators (NumPy arrays and scalars on either side)
OPERATORS = {
    "+": (lambda a, b: a + b, "add"), "-": (lambda a, b: a - b, "subtract"),
    "*": (lambda a, b: a * b, "multiply"), "/": (lambda a, b: a / b, "divide"),
    "**": (lambda a, b: a ** b, "power"), "==": (lambda a, b: a == b, "equal"),
    "!=": (lambda a, b: a != b, "not_equal"), "<": (lambda a, b: a < b, "less"),
    "<=": (lambda a, b: a <= b, "less_equal"), ">": (lambda a, b: a > b, "greater"),
    ">=": (lambda a, b: a >= b, "greater_equal"),
}


@pytest.mark.parametrize("sym", list(OPERATORS))
def test_operators_and_reflected(rng, sym):
    op, fname = OPERATORS[sym]
    f = getattr(jnp, fname)
    xv = (np.abs(rng.standard_normal((2, 3))) + 0.5).astype(np.float32)
    yv = (np.abs(rng.standard_normal((3,))) + 0.5).astype(np.float32)
    x, y = jnp.asarray(xv), jnp.asarray(yv)
    s = float(rng.uniform(0.5, 2))
    i8 = jnp.asarray(rng.integers(1, 5, size=(3,)).astype(np.int8))
    combos = [
        (x, y, xv, yv), (x, s, xv, s), (s, x, s, xv), (yv, x, yv, xv), (x, yv, xv, yv),
        (np.float32(s), x, np.float32(s), xv), (2, x, 2, xv), (x, 2, xv, 2), (i8, 3, None, None),
        (3, i8, None, None), (np.int32(2), i8, None, None),
    ]
    for a, b, av, bv in combos:
        got = op(a, b)
        assert isinstance(got, tessera.Array), (sym, type(a), type(b), type(got))
        ref = f(a, b)
        assert got.dtype == ref.dtype and got.weak_type == ref.weak_type
        np.testing.assert_array_equal(to_np(got), to_np(ref))
        if av is not None:
            with np.errstate(all="ignore"):
                exp = op(np.asarray(av, np.float64), np.asarray(bv, np.float64))
            np.testing.assert_allclose(to_np(got).astype(np.float64), exp, rtol=2e-6, atol=1e-6)
    # matmul and unary operators
    mv = rng.standard_normal((3, 4)).astype(np.float32)
    for a, b in [(x, jnp.asarray(mv)), (xv, jnp.asarray(mv)), (x, mv)]:
        got = a @ b
        assert isinstance(got, tessera.Array)
        np.testing.assert_allclose(to_np(got), np.asarray(a) @ np.asarray(b), rtol=1e-5, atol=1e-5)
    check(-x, -xv, "float32", False)
    check(+x, xv, "float32", False)
    # int8 array with a NumPy int32 scalar on either side: NumPy scalars are strongly typed
    assert str((np.int32(1) + i8).dtype) == "int32" and str((i8 + np.int32(1)).dtype) == "int32"
    assert str((i8 + 1).dtype) == "int8"


def test_hash_and_bool():
    with pytest.raises(TypeError):
        hash(jnp.ones(2))
    assert bool(jnp.asarray(1.0)) and not bool(jnp.asarray(0))
    with pytest.raises((ValueError, TypeError)):
        bool(jnp.ones(3))


# ---------------------------------------------------------------------------------------------
# Properties, methods, iteration, __array__, repr
def test_properties_and_methods(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    assert x.shape == (3, 4) and x.ndim == 2 and x.size == 12 and x.dtype == np.float32
    assert x.dtype == jnp.float32 and len(x) == 3
    check(x.T, v.T, "float32", False)
    check(x.astype(jnp.int32), v.astype(np.int32), "int32", False)
    assert x.tolist() == v.tolist()
    assert x.sum().item() == pytest.approx(float(v.astype(np.float64).sum()), rel=1e-5, abs=1e-5)
    assert x.max(axis=0).tolist() == v.max(axis=0).tolist()
    s = jnp.asarray(v[1, 2])
    assert s.item() == float(v[1, 2]) and float(s) == float(v[1, 2]) and s.ndim == 0
    assert isinstance(s.item(), float)
    assert isinstance(jnp.asarray(3).item(), int) and int(jnp.asarray(7)) == 7
    assert jnp.asarray([True, False]).tolist() == [True, False]
    assert x.item(5) == float(v.reshape(-1)[5])
    rows = list(x)
    assert len(rows) == 3
    for r, rv in zip(rows, v):
        check(r, rv, "float32", False)
    with pytest.raises(TypeError):
        iter(jnp.asarray(1.0)).__next__()
    with pytest.raises(TypeError):
        len(jnp.asarray(1.0))
    a = x.__array__()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    np.testing.assert_array_equal(a, v)
    np.testing.assert_array_equal(x.__array__(np.float64), v.astype(np.float64))
    c = np.array(x)  # np.array copies: a writeable array
    assert c.flags.writeable
    c[0, 0] = 123.0
    assert to_np(x)[0, 0] == v[0, 0]


def _ref_repr(a, weak=False):
    """JAX's Array.__repr__ (jax/_src/array.py), from NumPy's array2string."""
    prefix = "Array("
    dt = f"dtype={a.dtype.name}" + (", weak_type=True)" if weak else ")")
    width = np.get_printoptions()["linewidth"]
    if a.size == 0:
        s = f"[], shape={a.shape}"
    else:
        s = np.array2string(a, prefix=prefix, suffix=",", separator=", ", max_line_width=width)
    last = len(s) - s.rfind("\n") + 1
    sep = " " if last + len(dt) + 1 <= width else " " * len(prefix)
    return f"{prefix}{s},{sep}{dt}"


def test_repr_matches_jax_format(rng):
    assert repr(jnp.asarray([1.0, 2.0])) == "Array([1., 2.], dtype=float32)"
    assert repr(jnp.asarray(3.0)) == "Array(3., dtype=float32, weak_type=True)"
    assert repr(jnp.asarray([1, 2], jnp.int8)) == "Array([1, 2], dtype=int8)"
    assert repr(jnp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"
    assert str(jnp.asarray([1.0, 2.0])) == "[1. 2.]"
    for shape in [(), (3,), (2, 3), (7, 7), (2, 3, 4), (1500,), (40, 40), (0,), (1,)]:
        for dt in ["float32", "int32", "bool", "float16", "uint8", "int8"]:
            if dt == "float16":
                continue  # float16 digits are checked on their own below (a known bug)
            if dt == "float32":
                # magnitudes within a factor 1e3 and >= 1e-4: NumPy's positional format (the
                # scientific format's digit padding is a known bug, checked below)
                k = float(10.0 ** rng.integers(-2, 4))
                a = (rng.uniform(1, 9, shape) * k * rng.choice([-1, 1], shape)).astype(dt)
            else:
                a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 6)).astype(dt)
            if dt == "float32" and a.size > 3:
                a.reshape(-1)[:2] = [np.nan, -np.inf]
            assert repr(jnp.asarray(a)) == _ref_repr(a), (shape, dt)
    assert repr(jnp.asarray(2) * 1.5) == _ref_repr(np.float32(3.0), weak=True)


def test_repr_float32_scientific_digits():
    """NumPy's scientific format prints every element with the longest's digits: the extra ones
    are the value's correctly rounded digits (3.0000001e-01), not zeros."""
    a = np.array([0.3, 1.2345678e-05], np.float32)
    assert repr(jnp.asarray(a)) == _ref_repr(a)


def test_repr_float16_small_values():
    for a in [np.array([1.5, -2.25, 0.0], np.float16), np.array(3.5, np.float16),
              np.array([[1.0, 2.0], [3.0, 4.0]], np.float16)]:
        assert repr(jnp.asarray(a)) == _ref_repr(a)


@pytest.mark.parametrize("a", [np.array(12528, np.float16), np.array([12528.0, 1000.0], np.float16),
                               np.array([7.367e-05, 1.031e-03], np.float16)],
                         ids=["rank0", "positional", "scientific"])
def test_repr_float16_digits(a):
    """float16 in arrays: integer parts print exactly (12528., where the shortest unique digits
    would give 12530.), and scientific elements with their rounded extra digits (7.367e-05)."""
    assert repr(jnp.asarray(a)) == _ref_repr(a)


# ---------------------------------------------------------------------------------------------
# x64 and bfloat16
def test_x64_mode(rng, x64):
    v = rng.standard_normal(4)
    x = jnp.asarray(v)
    assert str(x.dtype) == "float64"
    np.testing.assert_array_equal(to_np(x), v)
    assert str(jnp.arange(3).dtype) == "int64" and str(jnp.zeros(2).dtype) == "float64"
    assert str(jnp.asarray(1.5).dtype) == "float64" and jnp.asarray(1.5).weak_type
    assert str((jnp.asarray([1.0], jnp.float32) + 1.0).dtype) == "float32"
    y = jnp.asarray([1, 2], jnp.int32) + 2.5
    assert (str(y.dtype), y.weak_type) == ("float64", True)
    assert str(jnp.sum(jnp.asarray([1, 2], jnp.int32)).dtype) == "int64"
    check(jnp.sin(x), np.sin(v), "float64", False, rtol=1e-14, atol=1e-15)
    check(x * x + 1.0, v * v + 1.0, "float64", False)
    assert ref_result_type(("int8", False), ("float32", True), x64=True) == ("float64", True)


def test_x64_restored():
    # Runs after test_x64_mode in file order: the fixture restored the 32-bit defaults.
    assert not tessera.config.jax_enable_x64
    assert str(jnp.asarray(np.arange(3.0)).dtype) == "float32"
    with pytest.raises(AttributeError):
        tessera.config.update("jax_no_such_option", True)


def test_bfloat16_round_trips(rng):
    v = rng.standard_normal(50) * 10.0 ** rng.integers(-3, 4, size=50)
    b = jnp.asarray(v, dtype=jnp.bfloat16)
    assert b.dtype == jnp.bfloat16 and str(b.dtype) == "bfloat16"
    exp = round_bf16(v)
    np.testing.assert_array_equal(to_np(b), exp)
    back = jnp.asarray(exp, dtype=jnp.bfloat16)  # values already bfloat16: exact
    np.testing.assert_array_equal(to_np(back), exp)
    np.testing.assert_array_equal(to_np(b.astype(jnp.float32).astype(jnp.bfloat16)), exp)
    arr = b.__array__()  # bfloat16 -> a float32 copy with the same values
    assert arr.dtype == np.float32
    np.testing.assert_array_equal(arr, exp)
    assert str((b + 1.0).dtype) == "bfloat16"
    assert str((b + jnp.ones(50, jnp.float16)).dtype) == "float32"
    assert str((b * 2).dtype) == "bfloat16"
    check(b * b, round_bf16(exp.astype(np.float64) ** 2), "bfloat16", False)


def test_bfloat16_asarray_of_rank0_numpy_array():
    assert jnp.asarray(np.asarray(1.5, np.float32), dtype=jnp.bfloat16).shape == ()
    assert jnp.asarray(np.float32(1.5), dtype=jnp.bfloat16).shape == ()


_BF16_SCRIPT = r"""
import numpy as np, tessera.numpy as jnp
b = jnp.asarray([1.5, 2.25, -3.0], jnp.bfloat16)
a = np.asarray(b)
assert a.dtype == np.float32 and a.tolist() == [1.5, 2.25, -3.0], a
assert b.tolist() == [1.5, 2.25, -3.0]
assert jnp.asarray(2.5, jnp.bfloat16).item() == 2.5
assert [float(r) for r in b] == [1.5, 2.25, -3.0]
print("ok")
"""


def _run_isolated(script):
    """Runs a script in a fresh interpreter (this once aborted the process: isolate it)."""
    import tessera as _t
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(_t.__file__)))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=60)


def test_bfloat16_np_asarray_gives_float32_copy():
    r = _run_isolated(_BF16_SCRIPT)
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])
