"""tessera.numpy's ufuncs (numpy_ufuncs.h; bound in py_numpy.cpp): the unary and binary ones
and their aliases, rounding, divmod and the operators, against NumPy 1.24 on fresh random inputs
(broadcasting, empty and rank-0 arrays, NaN/inf), results compared after casting NumPy's float64
result to the dtype JAX gives (float32 defaults, Python scalars weakly typed). Helpers (the JAX
promotion reference, value generators, tolerances) come from test_numpy_api.py; the seed is
TESSERA_TEST_SEED (or the clock), printed by conftest's `rng`.
"""
import numpy as np
import pytest

import tessera.numpy as jnp
from test_numpy_api import (cast_expected, check, close, is_float, make, rand_values, ref_inexact,
                            ref_result_type, tol)


# ---------------------------------------------------------------------------------------------
# Unary ufuncs. rule: "inexact" (ints promote to float), "same" (dtype kept), "bool" (-> bool).
U = {
    "abs": (np.abs, "same"), "absolute": (np.absolute, "same"), "fabs": (np.fabs, "inexact"),
    "sign": (np.sign, "same"), "floor": (np.floor, "same"), "ceil": (np.ceil, "same"),
    "trunc": (np.trunc, "same"), "fix": (np.fix, "same"), "rint": (np.rint, "inexact"),
    "exp2": (np.exp2, "inexact"), "expm1": (np.expm1, "inexact"), "log1p": (np.log1p, "inexact"),
    "log2": (np.log2, "inexact"), "log10": (np.log10, "inexact"), "cbrt": (np.cbrt, "inexact"),
    "reciprocal": (lambda v: 1.0 / v, "inexact"), "tan": (np.tan, "inexact"),
    "arcsin": (np.arcsin, "inexact"), "arccos": (np.arccos, "inexact"),
    "arctan": (np.arctan, "inexact"), "sinh": (np.sinh, "inexact"), "cosh": (np.cosh, "inexact"),
    "arcsinh": (np.arcsinh, "inexact"), "arccosh": (np.arccosh, "inexact"),
    "arctanh": (np.arctanh, "inexact"), "deg2rad": (np.deg2rad, "inexact"),
    "rad2deg": (np.rad2deg, "inexact"), "degrees": (np.degrees, "inexact"),
    "radians": (np.radians, "inexact"), "sinc": (np.sinc, "inexact"),
    "isfinite": (np.isfinite, "bool"), "isinf": (np.isinf, "bool"), "isnan": (np.isnan, "bool"),
    "isposinf": (np.isposinf, "bool"), "isneginf": (np.isneginf, "bool"),
    "signbit": (np.signbit, "bool"), "logical_not": (np.logical_not, "bool"),
}
# jnp computes these with a strongly typed constant of the input's dtype (log2 = log(x) /
# log(2), deg2rad = x * (pi / 180), sinc selects constants), so a weak input gives a strong
# result in JAX.
STRONG_CONSTANT = {"log2", "log10", "deg2rad", "rad2deg", "degrees", "radians", "sinc"}
ALIASES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
           "acosh": "arccosh", "atanh": "arctanh", "bitwise_invert": "invert",
           "atan2": "arctan2", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift"}


def _unary_values(rng, op, shape, dtype):
    v = rand_values(rng, shape, dtype, specials=True)
    if dtype.startswith(("float", "bfloat")) and op in ("arcsin", "arccos", "arctanh"):
        v = cast_expected(np.tanh(np.asarray(v, np.float64)), dtype)  # mostly inside the domain
    if not dtype.startswith(("float", "bfloat")) and op in ("exp2", "sinh", "cosh", "expm1"):
        v = (v % 8).astype(dtype) if dtype != "bool" else v
    return v


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int8", "uint8",
                                   "bool", "py:float"])
@pytest.mark.parametrize("op", list(U))
def test_unary_ufuncs_vs_numpy(rng, op, dtype):
    ref, rule = U[op]
    for shape in [(), (7,), (3, 4), (0, 2)]:
        if dtype == "py:float":
            if shape:
                continue
            v = float(rng.standard_normal() * 2)
            a, av, name, weak = v, np.asarray(v), "float32", True
        else:
            av = _unary_values(rng, op, shape, dtype)
            a, name, weak = make(av, dtype), dtype, False
        if rule == "bool":
            out, out_weak = "bool", False
        elif rule == "inexact":
            out, out_weak = ref_inexact(name, weak)
        else:
            out, out_weak = name, weak
        if op in STRONG_CONSTANT:
            out_weak = False
        if op == "sign" and dtype == "bool":
            with pytest.raises(TypeError, match="sign"):  # lax.sign rejects bool, as in JAX
                jnp.sign(a)
            continue
        if op in ("isposinf", "isneginf", "signbit") and dtype == "bool":
            continue  # NumPy has no bool loop for these
        with np.errstate(all="ignore"):
            if is_float(out) or out == "bfloat16":
                src = cast_expected(np.asarray(av, np.float64), name).astype(np.float64) \
                    if is_float(name) or name == "bfloat16" else np.asarray(av, np.float64)
                expected = cast_expected(ref(src), out)
            elif rule == "bool":
                expected = ref(np.asarray(av))
            elif dtype == "bool":  # NumPy has no bool loops here; jnp leaves bools alone
                expected = ref(np.asarray(av).astype(np.int8)).astype(out)
            else:
                expected = ref(np.asarray(av)).astype(out)
        check(getattr(jnp, op)(a), expected, out, out_weak, **tol(out, transcendental=True))


def test_aliases_are_the_same_functions():
    for alias, name in ALIASES.items():
        assert getattr(jnp, alias) is getattr(jnp, name), alias


def test_round_vs_numpy(rng):
    for dtype in ["float32", "float16", "int32"]:
        for decimals in [-2, -1, 0, 1, 2, 3]:
            if dtype == "int32":
                v = rng.integers(-2000, 2000, size=(5, 3)).astype(np.int32)
                check(jnp.round(jnp.asarray(v), decimals), np.round(v, decimals), "int32", False)
                continue
            v = (rng.standard_normal((5, 3)) * 50).astype(dtype)
            # JAX rounds x * 10**d (half to even) in float32 (16-bit floats upcast), as NumPy
            # does for a float32 array: the reference rounds in float32, compared exactly. (A
            # float64 reference disagrees where the float32 product lands on a half: seed
            # 493129406, -49.9005f * 1000.)
            exp = np.round(v.astype(np.float32), decimals).astype(dtype)
            check(jnp.round(jnp.asarray(v), decimals), exp, dtype, False, rtol=0, atol=0)
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.round(jnp.asarray(halves))), np.round(halves))
    np.testing.assert_array_equal(np.asarray(jnp.around(jnp.asarray(halves))), np.round(halves))
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.round is not supported."):
        jnp.round(jnp.asarray(halves), out=jnp.asarray(halves))
    # Python's round(): jnp.round, then the default int dtype without ndigits (as jax.Array)
    check(round(jnp.asarray(halves)), np.round(halves).astype(np.int32), "int32", False)
    check(round(jnp.asarray(halves * 10), 1), np.round(halves * 10, 1), "float32", False)


# ---------------------------------------------------------------------------------------------
# Binary ufuncs with promotion and broadcasting.
B = {
    "logaddexp": (np.logaddexp, "inexact"), "logaddexp2": (np.logaddexp2, "inexact"),
    "float_power": (np.float_power, "inexact"), "arctan2": (np.arctan2, "inexact"),
    "hypot": (np.hypot, "inexact"), "copysign": (np.copysign, "inexact"),
    # jnp.heaviside: where(x < 0, 0, where(x > 0, 1, h0)), so NaN gives h0 (NumPy: NaN)
    "heaviside": (lambda x, h: np.where(x < 0, 0.0, np.where(x > 0, 1.0, h)), "inexact"), "nextafter": (None, "inexact"),
    "floor_divide": (np.floor_divide, "same"), "remainder": (np.remainder, "same"),
    "mod": (np.mod, "same"), "fmod": (np.fmod, "same"),
    "bitwise_and": (np.bitwise_and, "int"), "bitwise_or": (np.bitwise_or, "int"),
    "bitwise_xor": (np.bitwise_xor, "int"), "left_shift": (np.left_shift, "shift"),
    "right_shift": (np.right_shift, "shift"), "logical_and": (np.logical_and, "bool"),
    "logical_or": (np.logical_or, "bool"), "logical_xor": (np.logical_xor, "bool"),
}
B_PAIRS = [("float32", "float32"), ("float16", "float16"), ("bfloat16", "float32"),
           ("int32", "int32"), ("int8", "int16"), ("uint8", "int8"), ("uint8", "uint8"),
           ("bool", "bool"), ("int32", "py:float"), ("float32", "py:int"), ("int8", "py:int"),
           ("py:float", "float16")]
B_SHAPES = [((), ()), ((3,), ()), ((2, 3), (3,)), ((2, 1, 4), (3, 1)), ((0, 3), (1, 3)),
            ((4, 1), (1, 5))]


def _b_operand(rng, spec, shape, op, rhs):
    if spec.startswith("py:"):
        if spec == "py:int":
            v = int(rng.integers(1, 6))
            return v, np.asarray(v), ("int32", True)
        v = float(rng.uniform(0.5, 3.0))
        return v, np.asarray(v), ("float32", True)
    if B[op][1] == "shift" and rhs:
        bits = 8 * np.dtype(spec).itemsize
        v = rng.integers(0, bits, size=shape).astype(spec)
    elif op in ("floor_divide", "remainder", "mod", "fmod") and rhs:
        v = rand_values(rng, shape, spec, specials=False)
        if not is_float(spec) and spec != "bfloat16":
            v = np.where(v == 0, 3, v).astype(spec)  # integer division by zero: XLA != NumPy
    else:
        v = rand_values(rng, shape, spec,
                        specials=op not in ("floor_divide", "remainder", "mod", "fmod",
                                            "float_power"),
                        positive=op == "float_power" and not rhs)
    return make(v, spec), v, (spec, False)


@pytest.mark.parametrize("pair", B_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("op", list(B))
def test_binary_ufuncs_vs_numpy(rng, op, pair):
    ref, rule = B[op]
    kinds = {p if p.startswith("py:") else ("bool" if p == "bool" else
                                             "float" if is_float(p) or p == "bfloat16" else "int")
             for p in pair}
    if rule in ("int", "shift") and ({"float", "py:float"} & kinds):
        return
    if rule == "shift" and "bool" in kinds:
        return
    if rule in ("same",) and "bool" in kinds:
        return
    if rule == "inexact" and op == "float_power" and "bool" in kinds:
        return
    for ls, rs in B_SHAPES:
        ls = () if pair[0].startswith("py:") else ls
        rs = () if pair[1].startswith("py:") else rs
        a, av, at = _b_operand(rng, pair[0], ls, op, False)
        b, bv, bt = _b_operand(rng, pair[1], rs, op, True)
        name, weak = ref_result_type(at, bt)
        if rule == "bool":
            out, out_weak = "bool", False
        elif rule == "inexact":
            out, out_weak = ref_inexact(name, weak)
        else:
            out, out_weak = name, weak
        got = getattr(jnp, op)(a, b)
        if out_weak and op not in ("arctan2", "nextafter", "remainder", "mod", "fmod"):
            # The composite ones (floor_divide's float path subtracts a strongly typed 1,
            # logaddexp/hypot/heaviside select constants) may drop the weak flag in JAX too:
            # only the dtype is checked for them.
            out_weak = got.weak_type
        with np.errstate(all="ignore"):
            if op == "nextafter":
                ac = cast_expected(np.asarray(av, np.float64), out)
                bc = cast_expected(np.asarray(bv, np.float64), out)
                if out == "bfloat16":
                    continue  # no NumPy bfloat16 nextafter reference
                expected = np.nextafter(ac.astype(out), bc.astype(out))
            elif is_float(out) or out == "bfloat16":
                ac = cast_expected(np.asarray(av, np.float64), out).astype(np.float64)
                bc = cast_expected(np.asarray(bv, np.float64), out).astype(np.float64)
                expected = cast_expected(ref(ac, bc), out)
            elif rule == "bool":
                expected = ref(np.asarray(av), np.asarray(bv))
            else:
                expected = ref(np.asarray(av).astype(out), np.asarray(bv).astype(out))
        t = tol(out, transcendental=True)
        if op in ("floor_divide", "remainder", "mod", "fmod") and is_float(out):
            t = dict(rtol=1e-5, atol=1e-5)  # x - floor(x/y)*y rounds differently near 0
        if op == "floor_divide" and out in ("float16", "bfloat16"):
            # The quotient is rounded to the half type before the floor (as in JAX): within a
            # rounding of an integer it floors to the neighbour of the exact floor.
            t = dict(rtol=1e-5, atol=1.0)
        check(got, expected, out, out_weak, **t)


def test_divmod_and_operators(rng):
    a = rng.integers(-20, 20, size=(4, 3)).astype(np.int32)
    b = rng.integers(-5, 5, size=(3,))
    b = np.where(b == 0, 2, b).astype(np.int32)  # no division by zero (XLA's differs from NumPy)
    x, y = jnp.asarray(a), jnp.asarray(b)
    q, r = jnp.divmod(x, y)
    np.testing.assert_array_equal(np.asarray(q), a // b)
    np.testing.assert_array_equal(np.asarray(r), a % b)
    q, r = divmod(x, y)
    np.testing.assert_array_equal(np.asarray(q), a // b)
    np.testing.assert_array_equal(np.asarray(x % y), a % b)
    np.testing.assert_array_equal(np.asarray(7 % y), 7 % b)
    np.testing.assert_array_equal(np.asarray(x // y), a // b)
    np.testing.assert_array_equal(np.asarray(100 // y), 100 // b)
    np.testing.assert_array_equal(np.asarray(x & y), a & b)
    np.testing.assert_array_equal(np.asarray(x | 5), a | 5)
    np.testing.assert_array_equal(np.asarray(3 ^ x), 3 ^ a)
    np.testing.assert_array_equal(np.asarray(~x), ~a)
    np.testing.assert_array_equal(np.asarray(x << 2), a << 2)
    np.testing.assert_array_equal(np.asarray(x >> 1), a >> 1)
    np.testing.assert_array_equal(np.asarray(abs(x)), np.abs(a))
    f = rng.standard_normal(5).astype(np.float32)
    close(jnp.asarray(f) % 0.7, np.mod(f, np.float32(0.7)), "float32")
