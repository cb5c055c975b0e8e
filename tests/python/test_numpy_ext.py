"""tessera.numpy's ufuncs, reductions/statistics, manipulation, padding, products and norms
against NumPy 1.24 on fresh random inputs (broadcasting, empty and rank-0 arrays, NaN/inf),
results compared after casting NumPy's float64 result to the dtype JAX gives (float32 defaults,
Python scalars weakly typed). Helpers (the JAX promotion reference, value generators,
tolerances) come from test_numpy_api.py. The seed is TESSERA_TEST_SEED (or the clock).
"""
import os
import time
import zlib

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from test_numpy_api import (cast_expected, check, is_float, make, rand_values, ref_inexact,
                            ref_result_type, to_np, tol, x64)  # noqa: F401 (x64: a fixture)

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


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
            # NumPy rounds x * 10**d (half to even) in the array's dtype; JAX does the same in
            # float32 for 16-bit floats: compare to a float64 rounding with one ulp of slack.
            exp = cast_expected(np.round(v.astype(np.float64), decimals), dtype)
            check(jnp.round(jnp.asarray(v), decimals), exp, dtype, False,
                  **(dict(rtol=2e-3, atol=0) if dtype == "float16" else dict(rtol=1e-6, atol=0)))
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


# ---------------------------------------------------------------------------------------------
# Reductions
def _sum_dtype(d):
    return {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
            "uint16": "uint32"}.get(d, d)


def _axes(rng, ndim):
    choices = [None]
    if ndim:
        choices += [int(rng.integers(-ndim, ndim)), tuple(sorted(set(
            int(a) for a in rng.integers(0, ndim, size=int(rng.integers(1, ndim + 1))))))]
    return choices


RED_SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var", "std", "ptp", "all",
                                "any", "count_nonzero"])
def test_reductions_vs_numpy(rng, op, dtype):
    for shape in RED_SHAPES:
        v = rand_values(rng, shape, dtype, specials=op not in ("ptp",), small_int=op == "prod")
        x = jnp.asarray(v)
        v64 = v.astype(np.float64) if dtype != "bool" else v
        for axis in _axes(rng, len(shape)):
            for keepdims in (False, True):
                kw = dict(axis=axis, keepdims=keepdims)
                n_red = int(np.prod([shape[a] for a in (range(len(shape)) if axis is None else
                                                        np.atleast_1d(axis))] or [1]))
                if op == "ptp" and dtype == "bool":
                    with pytest.raises(TypeError, match="bool"):
                        jnp.ptp(x, **kw)
                    continue
                if op in ("max", "min", "ptp") and n_red == 0:
                    with pytest.raises(ValueError):
                        getattr(jnp, op)(x, **kw)
                    continue
                with np.errstate(all="ignore"), _nowarn():
                    if op in ("sum", "prod"):
                        out = _sum_dtype(dtype)
                        exp = getattr(np, op)(v64, **kw).astype(np.float64 if is_float(out) else out)
                    elif op in ("max", "min", "ptp"):
                        out = dtype
                        exp = getattr(np, op)(v, **kw)
                    elif op in ("mean", "var", "std"):
                        out = dtype if is_float(dtype) else "float32"
                        exp = getattr(np, op)(v64.astype(np.float64), **kw)
                    elif op in ("all", "any"):
                        out = "bool"
                        exp = getattr(np, op)(v, **kw)
                    else:
                        out = "int32"
                        exp = np.count_nonzero(v, **kw)
                got = getattr(jnp, op)(x, **kw)
                meth = getattr(x, op)(**kw) if op != "count_nonzero" else got
                t = tol(out)
                if out == "float16":
                    t = dict(rtol=1e-2, atol=1e-2)
                if out == "float32" and op in ("sum", "var", "std", "mean", "prod"):
                    t = dict(rtol=1e-5, atol=1e-5)  # float32 accumulation vs float64
                for r in (got, meth):
                    check(r, cast_expected(exp, out), out, False, **t)


class _nowarn:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *a):
        return self._w.__exit__(*a)


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any",
                                "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
                                "nanstd"])
def test_reductions_with_where_and_initial(rng, op):
    for shape, mshape in [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((5,), ())]:
        v = rng.standard_normal(shape).astype(np.float32)
        if op.startswith("nan"):
            v[rng.random(shape) < 0.3] = np.nan
        if op in ("all", "any"):
            v = (rng.random(shape) < 0.7).astype(np.float32)
        m = rng.random(mshape) < 0.6
        x = jnp.asarray(v)
        for axis in _axes(rng, len(shape)):
            kw = dict(axis=axis, where=jnp.asarray(m))
            nkw = dict(axis=axis, where=np.broadcast_to(m, shape))
            if op in ("sum", "prod", "max", "min", "nansum", "nanprod", "nanmax", "nanmin"):
                init = float(rng.standard_normal())
                kw["initial"] = nkw["initial"] = init
            with np.errstate(all="ignore"), _nowarn():
                exp = getattr(np, op)(v.astype(np.float64), **nkw)
            if op in ("all", "any"):
                check(getattr(jnp, op)(x, **kw), exp, "bool", False)
            else:
                check(getattr(jnp, op)(x, **kw), cast_expected(exp, "float32"), "float32", False,
                      rtol=1e-5, atol=1e-6)
    # max/min with a mask need initial (as JAX)
    with pytest.raises(ValueError):
        jnp.max(jnp.ones((3,)), where=jnp.asarray(np.array([True, False, True])))


def test_ddof_and_correction(rng):
    v = rng.standard_normal((4, 6)).astype(np.float32)
    x = jnp.asarray(v)
    for ddof in (0, 1, 2):
        close(jnp.var(x, axis=1, ddof=ddof), np.var(v.astype(np.float64), axis=1, ddof=ddof),
              "float32")
        close(jnp.std(x, ddof=ddof), np.std(v.astype(np.float64), ddof=ddof), "float32")
        close(x.var(0, ddof=ddof), np.var(v.astype(np.float64), 0, ddof=ddof), "float32")
        close(jnp.nanstd(x, axis=0, ddof=ddof), np.nanstd(v, axis=0, ddof=ddof), "float32")
    close(jnp.var(x, correction=1), np.var(v.astype(np.float64), ddof=1), "float32")
    with pytest.raises(ValueError):
        jnp.var(x, ddof=1, correction=1)
    one = jnp.asarray(np.ones((1,), np.float32))
    assert np.isnan(float(jnp.var(one, ddof=1)))


def test_promote_integers_and_dtype_argument(rng):
    v = rng.integers(-5, 5, size=(3, 4)).astype(np.int8)
    x = jnp.asarray(v)
    assert jnp.sum(x).dtype == np.int32
    assert jnp.sum(x, promote_integers=False).dtype == np.int8
    assert jnp.sum(x, dtype=jnp.float32).dtype == np.float32
    close(jnp.sum(x, dtype="float16"), np.sum(v).astype(np.float16), "float16")
    close(jnp.prod(jnp.asarray(v[:, :2]), axis=1, dtype=jnp.int16),
          np.prod(v[:, :2].astype(np.int16), axis=1), "int16")
    close(jnp.mean(x, dtype=jnp.float16), np.mean(v.astype(np.float64)).astype(np.float16),
          "float16", rtol=1e-3, atol=1e-3)


def test_nan_reductions_vs_numpy(rng):
    for shape in [(5,), (3, 4), (2, 3, 4), (0, 3)]:
        v = rng.standard_normal(shape).astype(np.float32)
        v[rng.random(shape) < 0.3] = np.nan
        if len(shape) >= 2 and shape[0]:
            v[0] = np.nan  # an all-NaN row
        x = jnp.asarray(v)
        for axis in _axes(rng, len(shape)):
            for op in ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"]:
                n_red = int(np.prod([shape[a] for a in (range(len(shape)) if axis is None else
                                                        np.atleast_1d(axis))] or [1]))
                if op in ("nanmax", "nanmin") and n_red == 0:
                    continue
                with np.errstate(all="ignore"), _nowarn():
                    exp = getattr(np, op)(v.astype(np.float64), axis=axis)
                check(getattr(jnp, op)(x, axis=axis), cast_expected(exp, "float32"), "float32",
                      False, rtol=1e-5, atol=1e-6)
    iv = rng.integers(-3, 3, size=(3, 4)).astype(np.int32)
    check(jnp.nansum(jnp.asarray(iv), axis=0), np.sum(iv, axis=0), "int32", False)


def test_argmax_argmin_vs_numpy(rng):
    for shape in [(5,), (3, 4), (2, 3, 4), (1,)]:
        for dtype in ["float32", "int32", "uint8", "bool", "float16"]:
            v = rand_values(rng, shape, dtype, specials=False)
            if dtype == "float32" and v.size > 2:
                v.reshape(-1)[int(rng.integers(0, v.size))] = np.nan
            x = jnp.asarray(v)
            axes = [None] + list(range(-len(shape), len(shape)))
            for axis in axes:
                for keepdims in (False, True):
                    for op in ("argmax", "argmin"):
                        exp = getattr(np, op)(v, axis=axis, keepdims=keepdims)
                        check(getattr(jnp, op)(x, axis=axis, keepdims=keepdims), exp, "int32",
                              False)
                        check(getattr(x, op)(axis, keepdims=keepdims), exp, "int32", False)
    v = rng.standard_normal((4, 5)).astype(np.float32)
    v[rng.random((4, 5)) < 0.4] = np.nan
    v[:, 1] = np.nan
    v[:, 0] = rng.standard_normal(4)  # no all-NaN row
    x = jnp.asarray(v)
    for op in ("nanargmax", "nanargmin"):
        exp = getattr(np, op)(v, axis=1)
        check(getattr(jnp, op)(x, axis=1), exp, "int32", False)
        # an all-NaN slice gives -1 (NumPy raises)
        np.testing.assert_array_equal(np.asarray(getattr(jnp, op)(x, axis=0))[1], -1)
    with pytest.raises(ValueError):
        jnp.argmax(jnp.zeros((0, 3)), axis=0)


def test_out_argument_raises_as_jax():
    x = jnp.ones((2, 3))
    for name in ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "ptp", "all",
                 "any", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                 "argmax", "argmin"]:
        with pytest.raises(NotImplementedError) as e:
            getattr(jnp, name)(x, out=x)
        assert str(e.value) == f"The 'out' argument to jnp.{name} is not supported."
    with pytest.raises(NotImplementedError, match="jnp.stack"):
        jnp.stack([x, x], out=x)
    with pytest.raises(NotImplementedError, match="jnp.einsum"):
        jnp.einsum("ij->i", x, out=x)


def test_comparisons_and_cleaning(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = a + rng.standard_normal((3, 4)).astype(np.float32) * 1e-6
    b[0, 0] = np.nan
    a[0, 0] = np.nan
    a[1, 1] = b[1, 1] = np.inf
    a[2, 2], b[2, 2] = np.inf, -np.inf
    for eq in (False, True):
        for rtol, atol in [(1e-5, 1e-8), (0, 0), (1e-3, 1e-3)]:
            check(jnp.isclose(jnp.asarray(a), jnp.asarray(b), rtol, atol, eq),
                  np.isclose(a, b, rtol, atol, eq), "bool", False)
            check(jnp.allclose(jnp.asarray(a), jnp.asarray(b), rtol=rtol, atol=atol, equal_nan=eq),
                  np.allclose(a, b, rtol, atol, eq), "bool", False)
    check(jnp.isclose(jnp.asarray(a), 0.5), np.isclose(a, np.float32(0.5)), "bool", False)
    iv = rng.integers(0, 3, size=(4,)).astype(np.int32)
    check(jnp.isclose(jnp.asarray(iv), jnp.asarray(iv[::-1])), np.isclose(iv, iv[::-1]), "bool",
          False)
    for eq in (False, True):
        check(jnp.array_equal(jnp.asarray(a), jnp.asarray(a.copy()), equal_nan=eq),
              np.array_equal(a, a.copy(), equal_nan=eq), "bool", False)
    check(jnp.array_equal(jnp.ones(3), jnp.ones(4)), False, "bool", False)
    check(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 3))), True, "bool", False)
    check(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 4))), False, "bool", False)
    v = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    check(jnp.nan_to_num(jnp.asarray(v)), np.nan_to_num(v), "float32", False)
    check(jnp.nan_to_num(jnp.asarray(v), nan=-1.0, posinf=9.0, neginf=-9.0),
          np.nan_to_num(v, nan=-1.0, posinf=9.0, neginf=-9.0), "float32", False)
    check(jnp.nan_to_num(jnp.asarray(iv)), iv, "int32", False)


def test_clip_vs_numpy(rng):
    v = rng.standard_normal((4, 5)).astype(np.float32)
    v[0, 0] = np.nan
    x = jnp.asarray(v)
    lo = rng.standard_normal((5,)).astype(np.float32) - 1
    check(jnp.clip(x, -0.5, 0.5), np.clip(v, -0.5, 0.5), "float32", False)
    check(jnp.clip(x, min=jnp.asarray(lo)), np.maximum(v, lo), "float32", False)
    check(jnp.clip(x, max=0.1), np.minimum(v, np.float32(0.1)), "float32", False)
    check(jnp.clip(x), v, "float32", False)
    check(x.clip(-1, 1), np.clip(v, -1, 1), "float32", False)
    check(jnp.clip(a=x, a_min=-1, a_max=1), np.clip(v, -1, 1), "float32", False)
    iv = rng.integers(-10, 10, size=(6,)).astype(np.int32)
    check(jnp.clip(jnp.asarray(iv), -3, 4), np.clip(iv, -3, 4), "int32", False)


# ---------------------------------------------------------------------------------------------
# Manipulation
def test_axes_functions_vs_numpy(rng):
    v = rng.standard_normal((2, 1, 3, 1)).astype(np.float32)
    x = jnp.asarray(v)
    close(jnp.swapaxes(x, 0, -2), np.swapaxes(v, 0, -2))
    close(x.swapaxes(1, 2), v.swapaxes(1, 2))
    close(jnp.moveaxis(x, 0, -1), np.moveaxis(v, 0, -1))
    close(jnp.moveaxis(x, (0, 2), (3, 0)), np.moveaxis(v, (0, 2), (3, 0)))
    close(jnp.squeeze(x), np.squeeze(v))
    close(jnp.squeeze(x, axis=(1, 3)), np.squeeze(v, axis=(1, 3)))
    close(x.squeeze(-1), v.squeeze(-1))
    close(jnp.expand_dims(x, (0, -1)), np.expand_dims(v, (0, -1)))
    close(jnp.ravel(x), np.ravel(v))
    close(x.flatten(), v.flatten())
    close(x.ravel(), v.ravel())
    close(x.mT, np.swapaxes(v, -1, -2))
    for f in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for s in [(), (3,), (2, 3), (2, 3, 4)]:
            u = rng.standard_normal(s).astype(np.float32)
            close(getattr(jnp, f)(jnp.asarray(u)), getattr(np, f)(u))
        outs = getattr(jnp, f)(jnp.ones(2), jnp.ones(()))
        assert isinstance(outs, list) and len(outs) == 2
    a, b = jnp.broadcast_arrays(jnp.ones((3, 1)), jnp.zeros((4,)))
    assert a.shape == b.shape == (3, 4)
    assert jnp.broadcast_shapes((3, 1), (1, 4)) == (3, 4)
    with pytest.raises(ValueError):
        jnp.squeeze(x, axis=0)


def test_join_and_split_vs_numpy(rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.integers(0, 5, size=(4, 3)).astype(np.int32)
    c = rng.standard_normal((2, 3)).astype(np.float16)
    check(jnp.concatenate([jnp.asarray(a), jnp.asarray(b)]), np.concatenate([a, b]).astype(np.float32),
          "float32", False)
    check(jnp.concatenate([jnp.asarray(a), jnp.asarray(c)], axis=1),
          np.concatenate([a, c.astype(np.float32)], axis=1), "float32", False)
    check(jnp.concatenate([jnp.asarray(a), jnp.asarray(b)], axis=None),
          np.concatenate([a, b], axis=None).astype(np.float32), "float32", False)
    check(jnp.concatenate([jnp.asarray(b), jnp.asarray(b)], dtype=jnp.float16),
          np.concatenate([b, b]).astype(np.float16), "float16", False)
    check(jnp.concatenate(jnp.asarray(b)), np.concatenate(b), "int32", False)
    for axis in (0, 1, 2, -1):
        check(jnp.stack([jnp.asarray(a), jnp.asarray(c)], axis=axis),
              np.stack([a, c.astype(np.float32)], axis=axis), "float32", False)
    for f in ("hstack", "vstack", "dstack", "column_stack"):
        for shapes in [[(3,), (3,)], [(2, 3), (2, 3)], [(), ()]] if f != "column_stack" else \
                [[(3,), (3,)], [(3, 2), (3,)]]:
            us = [rng.standard_normal(s).astype(np.float32) for s in shapes]
            close(getattr(jnp, f)([jnp.asarray(u) for u in us]), getattr(np, f)(us))
    v = rng.standard_normal((6, 4, 2)).astype(np.float32)
    x = jnp.asarray(v)
    for ios, axis in [(3, 0), (2, 1), ([1, 4], 0), ([0, 2, 2, 10], 1), ((1,), -1)]:
        got = jnp.split(x, ios, axis=axis)
        exp = np.split(v, ios, axis=axis)
        assert len(got) == len(exp)
        for g, e in zip(got, exp):
            close(g, e)
    for n in (4, 5):
        for g, e in zip(jnp.array_split(x, n), np.array_split(v, n)):
            close(g, e)
    for f, n in [("hsplit", 2), ("vsplit", 3), ("dsplit", 2), ("hsplit", [1, 3])]:
        for g, e in zip(getattr(jnp, f)(x, n), getattr(np, f)(v, n)):
            close(g, e)
    with pytest.raises(ValueError):
        jnp.split(x, 4)


def test_tile_repeat_flip_roll_rot90_vs_numpy(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    for reps in [2, (2, 1), (1, 2, 3), (0, 2)]:
        close(jnp.tile(x, reps), np.tile(v, reps))
    for reps, axis in [(2, None), (3, 0), ([1, 0, 2], 0), ([1, 2, 0, 1], 1), (0, 1)]:
        close(jnp.repeat(x, reps, axis=axis), np.repeat(v, reps, axis=axis))
        close(x.repeat(reps, axis), np.repeat(v, reps, axis=axis))
    close(jnp.repeat(x, 2, axis=0, total_repeat_length=4), np.repeat(v, 2, axis=0)[:4])
    close(jnp.repeat(x, 1, axis=1, total_repeat_length=6),
          np.concatenate([v, np.repeat(v[:, -1:], 2, axis=1)], axis=1))
    for axis in [None, 0, 1, (0, 1), -1]:
        close(jnp.flip(x, axis), np.flip(v, axis))
    close(jnp.fliplr(x), np.fliplr(v))
    close(jnp.flipud(x), np.flipud(v))
    for shift, axis in [(2, None), (-7, None), (1, 0), (-1, 1), ((1, 2), (0, 1)), (3, (0, 1)),
                        ((1, 2), None)]:
        close(jnp.roll(x, shift, axis), np.roll(v, shift, axis))
    for k in range(-2, 6):
        close(jnp.rot90(x, k), np.rot90(v, k))
    u = rng.standard_normal((2, 3, 4)).astype(np.float32)
    close(jnp.rot90(jnp.asarray(u), 1, axes=(2, 0)), np.rot90(u, 1, axes=(2, 0)))


PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum",
             "minimum", "mean", "empty"]


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_vs_numpy(rng, mode):
    for shape in [(5,), (3, 4), (2, 3, 2)]:
        for dtype in ["float32", "int32"]:
            v = rand_values(rng, shape, dtype, specials=False)
            x = jnp.asarray(v)
            widths = [2, (1, 3), [(0, 2)] + [(1, 0)] * (len(shape) - 1),
                      [(int(rng.integers(0, 4)), int(rng.integers(0, 4))) for _ in shape]]
            if mode == "wrap":
                widths = [w for w in widths if not isinstance(w, int)] + [1]
            if mode == "linear_ramp" and dtype == "int32":
                continue  # test_pad_linear_ramp_integers_floor
            for pw in widths:
                if mode == "wrap":
                    # Periodic, as JAX (NumPy 1.24 repeats the wrong element when an asymmetric
                    # pad exceeds the axis): index with positions modulo the axis length.
                    pairs = np.broadcast_to(np.asarray(pw), (len(shape), 2))
                    exp = v[np.ix_(*[np.arange(-b, n + a) % n
                                     for (b, a), n in zip(pairs, shape)])]
                else:
                    exp = np.pad(v, pw, mode=mode)
                got = jnp.pad(x, pw, mode=mode)
                if mode == "empty":
                    assert got.shape == exp.shape and str(got.dtype) == dtype
                    continue
                if mode == "mean" and dtype == "int32":
                    exp = np.pad(v, pw, mode=mode)  # NumPy rounds the mean for integers
                check(got, exp, dtype, False, rtol=1e-6, atol=1e-6)


def test_pad_linear_ramp_integers_floor(rng):
    v = rng.integers(-20, 20, size=(4, 3)).astype(np.int32)
    for pw, ev in [(3, 0), ((2, 3), 7), (((1, 4), (3, 2)), -5)]:
        check(jnp.pad(jnp.asarray(v), pw, mode="linear_ramp", end_values=ev),
              np.pad(v, pw, mode="linear_ramp", end_values=ev), "int32", False)


def test_pad_options_vs_numpy(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    for cv in [1.5, (1.0, 2.0), ((1, 2), (3, 4))]:
        close(jnp.pad(x, ((1, 2), (2, 1)), constant_values=cv),
              np.pad(v, ((1, 2), (2, 1)), constant_values=cv))
    close(jnp.pad(x, 2, constant_values=jnp.asarray(np.float32(-7))),
          np.pad(v, 2, constant_values=-7))
    for ev in [3.0, (1.0, -1.0), ((1, 2), (3, 4))]:
        close(jnp.pad(x, ((2, 1), (1, 3)), mode="linear_ramp", end_values=ev),
              np.pad(v, ((2, 1), (1, 3)), mode="linear_ramp", end_values=ev), rtol=1e-5, atol=1e-5)
    for mode in ("reflect", "symmetric"):
        close(jnp.pad(x, ((2, 3), (1, 2)), mode=mode, reflect_type="odd"),
              np.pad(v, ((2, 3), (1, 2)), mode=mode, reflect_type="odd"), rtol=1e-5, atol=1e-5)
    for mode in ("maximum", "minimum", "mean"):
        for sl in [1, 2, (1, 3), ((1, 2), (3, 1)), 10]:
            close(jnp.pad(x, ((2, 1), (1, 2)), mode=mode, stat_length=sl),
                  np.pad(v, ((2, 1), (1, 2)), mode=mode, stat_length=sl), rtol=1e-5, atol=1e-6)
    iv = rng.integers(-9, 9, size=(4, 3)).astype(np.int32)
    check(jnp.pad(jnp.asarray(iv), 2, mode="mean", stat_length=2),
          np.pad(iv, 2, mode="mean", stat_length=2), "int32", False)
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(ValueError):
        jnp.pad(x, 1, mode="bogus")
    # grad through pad: the cotangent of the interior
    g = tessera.grad(lambda a: jnp.sum(jnp.pad(a, 1, mode="constant") * 2.0))(x)
    close(g, np.full_like(v, 2.0))


def test_diagonals_and_triangles_vs_numpy(rng):
    v = rng.standard_normal((4, 5)).astype(np.float32)
    x = jnp.asarray(v)
    u = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for off in range(-4, 6):
        close(jnp.diagonal(x, off), np.diagonal(v, off))
        close(jnp.trace(x, off), np.trace(v.astype(np.float64), off).astype(np.float32))
        close(jnp.tril(x, off), np.tril(v, off))
        close(jnp.triu(x, off), np.triu(v, off))
        close(jnp.tri(3, 4, off), np.tri(3, 4, off, dtype=np.float32), "float32")
    close(jnp.diagonal(jnp.asarray(u), 1, 2, 0), np.diagonal(u, 1, 2, 0))
    close(jnp.asarray(u).diagonal(0, 1, 2), u.diagonal(0, 1, 2))
    close(jnp.asarray(u).trace(axis1=1, axis2=2), u.astype(np.float64).trace(axis1=1, axis2=2),
          rtol=1e-5, atol=1e-5)
    w = rng.standard_normal(4).astype(np.float32)
    for k in (-2, 0, 1):
        close(jnp.diag(jnp.asarray(w), k), np.diag(w, k))
        close(jnp.diag(x, k), np.diag(v, k))
    iv = rng.integers(0, 5, size=(3, 3)).astype(np.int8)
    check(jnp.trace(jnp.asarray(iv)), np.trace(iv.astype(np.int32)), "int32", False)
    close(jnp.tril(jnp.asarray(u), -1), np.tril(u, -1))
    assert jnp.tri(3, dtype=jnp.int32).dtype == np.int32


def test_meshgrid_vs_numpy(rng):
    a = rng.standard_normal(3).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    c = rng.standard_normal(2).astype(np.float32)
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            got = jnp.meshgrid(jnp.asarray(a), jnp.asarray(b), jnp.asarray(c), indexing=indexing,
                               sparse=sparse)
            exp = np.meshgrid(a, b, c, indexing=indexing, sparse=sparse)
            assert len(got) == 3
            for g, e in zip(got, exp):
                close(g, e)
    with pytest.raises(ValueError):
        jnp.meshgrid(jnp.asarray(a), indexing="yx")


def test_products_vs_numpy(rng):
    def r(*s):
        return rng.standard_normal(s).astype(np.float32)
    t = dict(rtol=1e-5, atol=1e-5)
    a, b = r(2, 3, 4), r(4, 3, 5)
    close(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), axes=([1, 2], [1, 0])),
          np.tensordot(a, b, axes=([1, 2], [1, 0])), **t)
    close(jnp.tensordot(jnp.asarray(a[0]), jnp.asarray(a[1]), 2), np.tensordot(a[0], a[1], 2), **t)
    close(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), 1), np.tensordot(a, b, 1), **t)
    close(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), 0), np.tensordot(a, b, 0), **t)
    u, w = r(3), r(4)
    close(jnp.outer(jnp.asarray(u), jnp.asarray(w)), np.outer(u, w), **t)
    close(jnp.outer(jnp.asarray(a[0]), jnp.asarray(w)), np.outer(a[0], w), **t)
    m = r(5, 4)
    close(jnp.inner(jnp.asarray(a), jnp.asarray(m)), np.inner(a, m), **t)
    close(jnp.inner(jnp.asarray(u), jnp.asarray(u)), np.inner(u, u), **t)
    close(jnp.vdot(jnp.asarray(a[0]), jnp.asarray(a[1])), np.vdot(a[0], a[1]), **t)
    k1, k2 = r(2, 3), r(3, 2)
    close(jnp.kron(jnp.asarray(k1), jnp.asarray(k2)), np.kron(k1, k2), **t)
    close(jnp.kron(jnp.asarray(u), jnp.asarray(k1)), np.kron(u, k1), **t)
    g = rng.integers(-3, 3, size=(3, 4)).astype(np.int8)
    check(jnp.tensordot(jnp.asarray(g), jnp.asarray(g.T), 1, preferred_element_type=jnp.int32),
          np.tensordot(g.astype(np.int32), g.T.astype(np.int32), 1), "int32", False)


EINSUM_SPECS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("ij->ji", [(3, 4)]), ("bhqd,bhkd->bhqk",
                                                                  [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)]),
    ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 2)]), ("i,i", [(5,), (5,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("...j,j", [(2, 3, 4), (4,)]), ("i...->...", [(3, 2, 2)]),
    ("a,b,c->abc", [(2,), (3,), (4,)]), ("ijj->i", [(2, 3, 3)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_SPECS, ids=[s for s, _ in EINSUM_SPECS])
def test_einsum_vs_numpy(rng, spec, shapes):
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = jnp.einsum(spec, *[jnp.asarray(o) for o in ops])
    exp = np.einsum(spec, *[o.astype(np.float64) for o in ops])
    close(got, exp.astype(np.float32), "float32", rtol=1e-5, atol=1e-5)


def test_einsum_sublist_form_and_dtypes(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    close(jnp.einsum(jnp.asarray(a), [0, 1], jnp.asarray(b), [1, 2], [0, 2]),
          np.einsum(a, [0, 1], b, [1, 2], [0, 2]), rtol=1e-5, atol=1e-5)
    close(jnp.einsum(jnp.asarray(a), [Ellipsis, 1], [Ellipsis]),
          np.einsum(a, [Ellipsis, 1], [Ellipsis]), rtol=1e-5, atol=1e-5)
    ia = rng.integers(-3, 3, size=(3, 4)).astype(np.int8)
    check(jnp.einsum("ij,ij->i", jnp.asarray(ia), jnp.asarray(ia),
                     preferred_element_type=jnp.int32),
          np.einsum("ij,ij->i", ia.astype(np.int32), ia.astype(np.int32)), "int32", False)
    check(jnp.einsum("ij,j->i", jnp.asarray(a), jnp.asarray(b[:, 0].astype(np.float16))),
          a @ b[:, 0].astype(np.float16).astype(np.float32), "float32", False, rtol=1e-5,
          atol=1e-5)


def test_linalg_norm_vs_numpy(rng):
    v = rng.standard_normal(6).astype(np.float32)
    m = rng.standard_normal((3, 4)).astype(np.float32)
    u = rng.standard_normal((2, 3, 4)).astype(np.float32)
    t = dict(rtol=1e-5, atol=1e-6)
    for ord in [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1]:
        close(jnp.linalg.norm(jnp.asarray(v), ord), np.linalg.norm(v.astype(np.float64), ord),
              "float32", **t)
        close(jnp.linalg.norm(jnp.asarray(u), ord, axis=1),
              np.linalg.norm(u.astype(np.float64), ord, axis=1), "float32", **t)
    for ord in [None, "fro", 1, -1, np.inf, -np.inf]:
        close(jnp.linalg.norm(jnp.asarray(m), ord), np.linalg.norm(m.astype(np.float64), ord),
              "float32", **t)
        close(jnp.linalg.norm(jnp.asarray(u), ord, axis=(2, 0), keepdims=True),
              np.linalg.norm(u.astype(np.float64), ord, axis=(2, 0), keepdims=True), "float32",
              **t)
    close(jnp.linalg.norm(jnp.asarray(u)), np.linalg.norm(u.astype(np.float64)), "float32", **t)
    close(jnp.linalg.vector_norm(jnp.asarray(u)), np.linalg.norm(u.reshape(-1).astype(np.float64)),
          "float32", **t)
    close(jnp.linalg.vector_norm(jnp.asarray(u), ord=1, axis=-1),
          np.linalg.norm(u.astype(np.float64), 1, axis=-1), "float32", **t)
    close(jnp.linalg.matrix_norm(jnp.asarray(u)),
          np.linalg.norm(u.astype(np.float64), axis=(-2, -1)), "float32", **t)
    iv = rng.integers(-4, 4, size=(5,)).astype(np.int32)
    close(jnp.linalg.norm(jnp.asarray(iv)), np.linalg.norm(iv), "float32", **t)
    with pytest.raises(ValueError):
        jnp.linalg.norm(jnp.asarray(m), 2)
    # grad of the 2-norm is x / |x|
    g = tessera.grad(jnp.linalg.norm)(jnp.asarray(v))
    close(g, v / np.linalg.norm(v), **t)


def test_where_forms(rng):
    c = rng.random((3, 4)) < 0.5
    a = rng.standard_normal((3, 4)).astype(np.float32)
    check(jnp.where(jnp.asarray(c), jnp.asarray(a), 0.0), np.where(c, a, np.float32(0)),
          "float32", False)
    with pytest.raises(NotImplementedError, match="nonzero"):
        jnp.where(jnp.asarray(c))
    with pytest.raises(ValueError, match="Either both or neither"):
        jnp.where(jnp.asarray(c), jnp.asarray(a))


def test_array_methods_mirror_numpy(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    close(x.min(axis=0), v.min(axis=0))
    close(x.min(initial=-10.0), min(v.min(), -10.0))
    close(x.prod(1), v.astype(np.float64).prod(1), rtol=1e-5)
    close(x.std(), v.astype(np.float64).std(), rtol=1e-5)
    close(x.ptp(1), v.ptp(1))
    check(x.all(), bool(v.all()), "bool", False)
    check((x > 0).any(axis=1), (v > 0).any(axis=1), "bool", False)
    close(x.round(1), np.round(v.astype(np.float64), 1).astype(np.float32), rtol=1e-6)
    close(x.sum(where=jnp.asarray(v > 0)), v[v > 0].astype(np.float64).sum(), rtol=1e-5)
    close(x.mean(where=jnp.asarray(v > 0)), v[v > 0].astype(np.float64).mean(), rtol=1e-5)
    close(x.max(where=jnp.asarray(v > 0), initial=0.0), np.max(v, where=v > 0, initial=0.0))


def test_asarray_stacks_nested_lists(rng):
    v = rng.standard_normal((2, 2, 3)).astype(np.float32)
    rows = [[jnp.asarray(v[0, 0]), v[0, 1]], [jnp.asarray(v[1, 0]), jnp.asarray(v[1, 1])]]
    check(jnp.asarray(rows), v, "float32", False)
    check(jnp.array(rows, dtype=jnp.float16), v.astype(np.float16), "float16", False)
    # promotion across elements, Python scalars weak
    check(jnp.asarray([jnp.asarray(np.int8(1)), 2]), np.array([1, 2], np.int8), "int8", False)
    check(jnp.asarray([jnp.asarray(np.int32(1)), 2.5]), np.array([1, 2.5], np.float32), "float32",
          False)
    # vmap/grad through the stacking
    out = tessera.vmap(lambda r: jnp.asarray([r[0], r[1] * 2.0]))(jnp.asarray(v[0]))
    close(out, np.stack([v[0][:, 0], v[0][:, 1] * 2], axis=1))


def test_grads_of_statistics_match_finite_differences(rng):
    v = rng.standard_normal((3, 4)).astype(np.float64)

    def numgrad(f, x, eps=1e-3):
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            d = np.zeros_like(x)
            d[i] = eps
            g[i] = (f(x + d) - f(x - d)) / (2 * eps)
        return g

    for jf, nf in [(lambda a: jnp.std(a, axis=1).sum(), lambda a: np.std(a, axis=1).sum()),
                   (lambda a: jnp.var(a, ddof=1), lambda a: np.var(a, ddof=1)),
                   (lambda a: jnp.linalg.norm(a, 1, axis=0).sum(),
                    lambda a: np.linalg.norm(a, 1, axis=0).sum()),
                   (lambda a: jnp.einsum("ij,kj->", a, a), lambda a: np.einsum("ij,kj->", a, a)),
                   (lambda a: jnp.sum(jnp.roll(a, 1, 0) * jnp.flip(a)),
                    lambda a: np.sum(np.roll(a, 1, 0) * np.flip(a)))]:
        g = tessera.grad(jf)(jnp.asarray(v.astype(np.float32)))
        close(g, numgrad(nf, v), rtol=2e-3, atol=2e-3)


def test_x64_reductions_use_64_bit_defaults(rng, x64):
    v = rng.standard_normal((4, 5))
    x = jnp.asarray(v)
    assert x.dtype == np.float64
    check(jnp.var(x, axis=0, ddof=1), np.var(v, axis=0, ddof=1), "float64", False)
    check(jnp.linalg.norm(x, 1), np.linalg.norm(v, 1), "float64", False)
    check(jnp.argmax(x, axis=1), np.argmax(v, axis=1), "int64", False)
    iv = rng.integers(-5, 5, size=(4, 5)).astype(np.int8)
    check(jnp.sum(jnp.asarray(iv), axis=0), iv.sum(0, dtype=np.int64), "int64", False)
    check(jnp.count_nonzero(jnp.asarray(iv)), np.count_nonzero(iv), "int64", False)


def test_x64_integer_statistics_dtypes(rng, x64):
    # jnp's to_inexact_dtype maps bool and integers up to 32 bits to float32 and 64-bit
    # integers to float64, also under x64 (jax/_src/dtypes.py's _dtype_to_inexact table).
    iv = rng.integers(-5, 5, size=(4, 5)).astype(np.int8)
    check(jnp.mean(jnp.asarray(iv)), np.mean(iv), "float32", False)
    check(jnp.var(jnp.asarray(iv), axis=0), np.var(iv, axis=0), "float32", False)
    lv = rng.integers(-5, 5, size=(4, 5)).astype(np.int64)
    check(jnp.mean(jnp.asarray(lv)), np.mean(lv), "float64", False)
    check(jnp.std(jnp.asarray(lv), axis=1), np.std(lv, axis=1), "float64", False)

def test_reshape_order_vs_numpy(rng):
    v = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for shape in [(4, 6), (-1, 2), (24,), (3, 2, 4)]:
        for order in ("C", "F"):
            got = jnp.reshape(jnp.asarray(v), shape, order=order)
            np.testing.assert_array_equal(np.asarray(got), np.reshape(v, shape, order=order))
            np.testing.assert_array_equal(np.asarray(jnp.asarray(v).reshape(shape, order=order)),
                                          v.reshape(shape, order=order))
    with pytest.raises(NotImplementedError, match="order=A"):
        jnp.reshape(jnp.asarray(v), (24,), order="A")
    with pytest.raises(ValueError, match="order"):
        jnp.reshape(jnp.asarray(v), (24,), order="K")
