"""tessera.lax's elementwise math, special functions, bitwise ops, reductions (lax.reduce with
a Python computation), slicing, concatenation and padding against NumPy, math, torch 1.13 and
mpmath references on fresh random inputs. The seed is TESSERA_TEST_SEED (or the clock)."""
import math
import os
import time
import zlib

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from tessera import lax
from test_numpy_api import round_bf16

torch = pytest.importorskip("torch")

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


def arr(v, dtype):
    if dtype == "bfloat16":
        return jnp.astype(jnp.asarray(np.asarray(v, np.float32)), jnp.bfloat16)
    return jnp.asarray(np.asarray(v).astype(dtype))


def rounded(v, dtype):
    v = np.asarray(v, np.float64)
    if dtype == "bfloat16":
        return round_bf16(v).astype(np.float64)
    with np.errstate(all="ignore"):
        return v.astype(dtype).astype(np.float64)


def vals(got):
    if str(got.dtype) == "bfloat16":
        got = jnp.astype(got, jnp.float32)
    return np.asarray(got)


TOL = {"float32": dict(rtol=2e-6, atol=1e-6), "float16": dict(rtol=2e-3, atol=1e-3),
       "bfloat16": dict(rtol=1.6e-2, atol=1e-2)}


def check(got, expected, dtype, **t):
    assert str(got.dtype) == dtype, (got.dtype, dtype)
    exp = np.asarray(expected)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    g = vals(got)
    if dtype in TOL:
        np.testing.assert_allclose(g.astype(np.float64), exp.astype(np.float64), equal_nan=True,
                                   **(t or TOL[dtype]))
    else:
        np.testing.assert_array_equal(g, exp)


def _torch(f):
    return lambda v: f(torch.from_numpy(np.asarray(v, np.float64))).numpy()


def _vec(f, pole=np.nan):
    def g(v):
        v = np.asarray(v, np.float64)
        out = np.empty_like(v)
        for i in np.ndindex(v.shape):
            try:
                out[i] = f(float(v[i]))
            except (ValueError, OverflowError):  # math raises at poles (lgamma: +inf there)
                out[i] = pole if np.isfinite(v[i]) else np.nan
        return out
    return g


def _round_away(v):
    return np.where(np.isfinite(v), np.sign(v) * np.floor(np.abs(v) + 0.5), v)


# name: (reference on float64, domain sampler)
UNARY = {
    "abs": (np.abs, None), "sign": (np.sign, None), "floor": (np.floor, None),
    "ceil": (np.ceil, None), "exp2": (np.exp2, None), "expm1": (np.expm1, None),
    "log1p": (np.log1p, "gt-1"), "rsqrt": (lambda v: 1 / np.sqrt(v), "pos"),
    "cbrt": (np.cbrt, None), "tan": (np.tan, None), "asin": (np.arcsin, "unit"),
    "acos": (np.arccos, "unit"), "atan": (np.arctan, None), "sinh": (np.sinh, None),
    "cosh": (np.cosh, None), "asinh": (np.arcsinh, None), "acosh": (np.arccosh, "ge1"),
    "atanh": (np.arctanh, "unit"), "square": (np.square, None),
    "reciprocal": (lambda v: 1 / v, None), "erf": (_vec(math.erf), None),
    "erfc": (_vec(math.erfc), None), "erf_inv": (_torch(torch.special.erfinv), "unit"),
    "lgamma": (_vec(math.lgamma, pole=np.inf), None), "digamma": (_torch(torch.special.digamma), None),
    "is_finite": (np.isfinite, None),
}


def _sample(rng, shape, domain):
    v = rng.standard_normal(shape) * 3
    if domain == "pos":
        v = np.abs(v) + 0.05
    elif domain == "unit":
        v = np.tanh(v) * 0.999
    elif domain == "ge1":
        v = 1 + np.abs(v)
    elif domain == "gt-1":
        v = np.abs(v) - 0.9
    return v


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_vs_reference(rng, op, dtype):
    ref, domain = UNARY[op]
    for shape in [(), (9,), (3, 4), (0, 2)]:
        v = _sample(rng, shape, domain)
        if op in ("lgamma", "digamma") and v.size:
            v.reshape(-1)[0] = -2.0  # a pole
        if v.size >= 3 and op not in ("erf_inv",):
            flat = v.reshape(-1)
            flat[1] = rng.choice([np.nan, np.inf, -np.inf])
        x = rounded(v, dtype)
        got = getattr(lax, op)(arr(x, dtype))
        with np.errstate(all="ignore"):
            exp = ref(x)
        if op == "is_finite":
            check(got, exp, "bool")
            continue
        t = dict(TOL[dtype])
        if op in ("lgamma", "digamma", "tan", "erf_inv") and dtype == "float32":
            t = dict(rtol=2e-5, atol=2e-5)  # polynomial approximations
        check(got, rounded(exp, dtype), dtype, **t)


def test_round_methods(rng):
    v = np.concatenate([rng.standard_normal(20) * 4, [0.5, 1.5, 2.5, -0.5, -2.5, np.nan, np.inf,
                                                       -0.0]]).astype(np.float32)
    x = jnp.asarray(v)
    check(lax.round(x), _round_away(v.astype(np.float64)), "float32")
    check(lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), _round_away(v.astype(np.float64)),
          "float32")
    check(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint(v), "float32")
    check(lax.round(x, 1), np.rint(v), "float32")
    assert int(lax.RoundingMethod.TO_NEAREST_EVEN) == 1


def test_integer_elementwise_semantics(rng):
    for dtype in ["int8", "int32", "uint8", "uint32", "int16"]:
        info = np.iinfo(dtype)
        v = rng.integers(max(info.min, -1000), min(info.max, 1000), size=(20,)).astype(dtype)
        v[:2] = [info.min, info.max]
        x = jnp.asarray(v)
        if dtype.startswith("int"):
            with np.errstate(all="ignore"):
                check(lax.abs(x), np.abs(v), dtype)  # abs(MIN) wraps to MIN, as XLA
            check(lax.sign(x), np.sign(v), dtype)
        check(lax.square(x), (v.astype(np.int64) ** 2).astype(dtype), dtype)
        d = rng.integers(max(info.min, -9), 10, size=(20,)).astype(dtype)
        d[2] = 0
        y = jnp.asarray(d)
        # rem: the sign of the dividend; x % 0 == x; MIN % -1 == 0 (XLA)
        exp = np.empty_like(v)
        for i in range(v.size):
            a, b = int(v[i]), int(d[i])
            exp[i] = a if b == 0 else int(math.fmod(a, b))
        check(lax.rem(x, y), exp, dtype)
        if dtype.startswith("int"):
            m = jnp.asarray(np.array([info.min], dtype))
            check(lax.rem(m, jnp.asarray(np.array([-1], dtype))), np.array([0], dtype), dtype)
        lo, hi = np.array(-5).astype(dtype), np.array(7, dtype)
        check(lax.clamp(jnp.asarray(lo), x, jnp.asarray(hi)), np.clip(v, lo, hi), dtype)


def test_float_binary_vs_reference(rng):
    for dtype in ["float32", "float16", "bfloat16"]:
        a = rounded(rng.standard_normal((3, 4)) * 3, dtype)
        b = rounded(rng.standard_normal((3, 4)) * 3, dtype)
        b[0, 0] = 0.0
        a[1, 1] = np.nan
        x, y = arr(a, dtype), arr(b, dtype)
        check(lax.atan2(x, y), rounded(np.arctan2(a, b), dtype), dtype)
        with np.errstate(all="ignore"):
            check(lax.rem(x, y), rounded(np.fmod(a, b), dtype), dtype)
        if dtype != "bfloat16":
            check(lax.nextafter(x, y), np.nextafter(a.astype(dtype), b.astype(dtype)), dtype)
        lo = rounded(np.full((3, 4), -1.0), dtype)
        check(lax.clamp(arr(lo, dtype), x, arr(-lo, dtype)), np.clip(a, -1, 1), dtype)
        half = arr(np.float32(0.5), dtype)
        check(lax.clamp(-half, x, half), np.clip(a, -0.5, 0.5), dtype)
        with pytest.raises(TypeError, match="clamp"):  # lax does not promote
            lax.clamp(arr(np.float32(-1), "float32" if dtype != "float32" else "float16"), x,
                      arr(np.float32(1), dtype))


def test_special_binary_vs_torch_and_mpmath(rng):
    import mpmath
    a = np.abs(rng.standard_normal(8)) * 3 + 0.2
    x = np.abs(rng.standard_normal(8)) * 3 + 0.1
    A, X = jnp.asarray(a.astype(np.float32)), jnp.asarray(x.astype(np.float32))
    af, xf = a.astype(np.float32).astype(np.float64), x.astype(np.float32).astype(np.float64)
    t = dict(rtol=2e-5, atol=2e-6)
    check(lax.igamma(A, X), torch.special.gammainc(torch.tensor(af), torch.tensor(xf)).numpy(),
          "float32", **t)
    check(lax.igammac(A, X), torch.special.gammaincc(torch.tensor(af), torch.tensor(xf)).numpy(),
          "float32", **t)
    q = xf + 0.5
    s = af + 1.1
    check(lax.zeta(jnp.asarray(s.astype(np.float32)), jnp.asarray(q.astype(np.float32))),
          torch.special.zeta(torch.tensor(s.astype(np.float32).astype(np.float64)),
                             torch.tensor(q.astype(np.float32).astype(np.float64))).numpy(),
          "float32", rtol=1e-4, atol=1e-6)
    m = np.array([0, 1, 2, 3, 1, 2, 0, 4], np.float32)
    check(lax.polygamma(jnp.asarray(m), X),
          np.array([float(mpmath.polygamma(int(mi), xi)) for mi, xi in zip(m, xf)]),
          "float32", rtol=1e-4, atol=1e-5)
    grad_a = np.array([float(mpmath.diff(lambda s: mpmath.gammainc(s, 0, xi, regularized=True),
                                         ai)) for ai, xi in zip(af, xf)])
    check(lax.igamma_grad_a(A, X), grad_a, "float32", rtol=1e-3, atol=1e-5)


def test_bessel_betainc_gamma_grad_vs_torch_and_mpmath(rng):
    import mpmath
    x = rng.standard_normal(16) * 8
    X = jnp.asarray(x.astype(np.float32))
    xf = x.astype(np.float32).astype(np.float64)
    t = dict(rtol=2e-6, atol=1e-7)
    check(lax.bessel_i0e(X), torch.special.i0e(torch.tensor(xf)).numpy(), "float32", **t)
    check(lax.bessel_i1e(X), torch.special.i1e(torch.tensor(xf)).numpy(), "float32", **t)
    a = np.abs(rng.standard_normal(8)) * 3 + 0.3
    b = np.abs(rng.standard_normal(8)) * 3 + 0.3
    u = rng.uniform(0.01, 0.99, 8)
    A, B, U = (jnp.asarray(v.astype(np.float32)) for v in (a, b, u))
    af, bf, uf = (v.astype(np.float32).astype(np.float64) for v in (a, b, u))
    want = [float(mpmath.betainc(p, q, 0, z, regularized=True)) for p, q, z in zip(af, bf, uf)]
    check(lax.betainc(A, B, U), np.array(want), "float32", rtol=1e-5, atol=1e-6)
    # d sample / d a at fixed P(a, x): -(dP/da) / (dP/dx).
    xs = (uf * 3).astype(np.float32)
    xd = xs.astype(np.float64)
    pdf = [float(mpmath.exp((p - 1) * mpmath.log(z) - z - mpmath.loggamma(p)))
           for p, z in zip(af, xd)]
    dpda = [float(mpmath.diff(lambda s: mpmath.gammainc(s, 0, z, regularized=True), p))
            for p, z in zip(af, xd)]
    got = lax.random_gamma_grad(A, jnp.asarray(xs))
    check(got, -np.array(dpda) / np.array(pdf), "float32", rtol=1e-3, atol=1e-5)
    with pytest.raises(TypeError, match="regularized_incomplete_beta"):
        lax.betainc(A, B, jnp.asarray(np.arange(8, dtype=np.int32)))


def _bits(dtype):
    return 8 * np.dtype(dtype).itemsize


def test_bitwise_vs_python(rng):
    for dtype in ["int8", "uint8", "int16", "uint16", "int32", "uint32"]:
        info = np.iinfo(dtype)
        v = rng.integers(info.min, int(info.max) + 1, size=(16,), dtype=np.int64).astype(dtype)
        w = rng.integers(info.min, int(info.max) + 1, size=(16,), dtype=np.int64).astype(dtype)
        x, y = jnp.asarray(v), jnp.asarray(w)
        check(lax.bitwise_not(x), ~v, dtype)
        check(lax.bitwise_and(x, y), v & w, dtype)
        check(lax.bitwise_or(x, y), v | w, dtype)
        check(lax.bitwise_xor(x, y), v ^ w, dtype)
        nb = _bits(dtype)
        mask = (1 << nb) - 1
        u = v.astype(np.int64) & mask
        check(lax.population_count(x), np.array([bin(int(e)).count("1") for e in u]).astype(dtype),
              dtype)
        check(lax.clz(x), np.array([nb - int(e).bit_length() for e in u]).astype(dtype), dtype)
        s = rng.integers(0, nb + 3, size=(16,)).astype(dtype)  # includes shifts >= the width
        sh = jnp.asarray(s)
        left = np.array([(int(a) << int(k)) & mask if k < nb else 0 for a, k in zip(u, s)])
        logical = np.array([int(a) >> int(k) if k < nb else 0 for a, k in zip(u, s)])
        # arithmetic: the bit pattern read as signed (unsigned dtypes too, as XLA's ashr)
        signed = [int(a) - (1 << nb) if int(a) >> (nb - 1) else int(a) for a in u]
        arith = np.array([(a >> min(int(k), nb - 1)) & mask for a, k in zip(signed, s)])
        check(lax.shift_left(x, sh), left.astype(np.uint64).astype(dtype), dtype)
        check(lax.shift_right_logical(x, sh), logical.astype(np.uint64).astype(dtype), dtype)
        check(lax.shift_right_arithmetic(x, sh), arith.astype(np.uint64).astype(dtype), dtype)
    b = rng.random((5,)) < 0.5
    c = rng.random((5,)) < 0.5
    check(lax.bitwise_and(jnp.asarray(b), jnp.asarray(c)), b & c, "bool")
    check(lax.bitwise_not(jnp.asarray(b)), ~b, "bool")
    with pytest.raises(TypeError):
        lax.population_count(jnp.ones(3))


def test_bitcast_and_reduce_precision(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    check(lax.bitcast_convert_type(x, jnp.int32), v.view(np.int32), "int32")
    check(lax.bitcast_convert_type(x, np.uint8), v.view(np.uint8).reshape(3, 4, 4), "uint8")
    h = v.astype(np.float16)
    pairs = h.view(np.uint16).reshape(3, 2, 2)
    check(lax.bitcast_convert_type(jnp.asarray(pairs), "float32"),
          pairs.reshape(3, 4).view(np.float32).reshape(3, 2), "float32")
    check(lax.bitcast_convert_type(jnp.asarray(v.view(np.int32)), jnp.float32), v, "float32")
    w = np.concatenate([rng.standard_normal(30) * 10, [np.nan, np.inf, -np.inf, 0.0]]).astype(
        np.float32)
    y = jnp.asarray(w)
    check(lax.reduce_precision(y, 8, 7), round_bf16(w), "float32", rtol=0, atol=0)
    check(lax.reduce_precision(y, 5, 10), w.astype(np.float16).astype(np.float32), "float32",
          rtol=0, atol=0)
    check(lax.reduce_precision(y, 8, 23), w, "float32", rtol=0, atol=0)


def test_strict_dtypes_raise():
    with pytest.raises(TypeError):
        lax.atan2(jnp.ones(3), jnp.ones(3, jnp.float16))
    with pytest.raises(TypeError):
        lax.erf(jnp.ones(3, jnp.int32))
    with pytest.raises(TypeError):
        lax.shift_left(jnp.ones(3), jnp.ones(3))


# ---------------------------------------------------------------------------------------------
# Reductions
def test_monoid_reductions_vs_numpy(rng):
    v = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x = jnp.asarray(v)
    for axes in [(0,), (1, 2), (), (0, 1, 2)]:
        check(lax.reduce_prod(x, axes), np.prod(v.astype(np.float64), axis=axes), "float32",
              rtol=1e-5, atol=1e-6)
        check(lax.reduce_min(x, axes), np.min(v, axis=axes) if axes else v, "float32")
        check(lax.reduce_max(x, axes), np.max(v, axis=axes) if axes else v, "float32")
    iv = rng.integers(-100, 100, size=(4, 6)).astype(np.int32)
    ix = jnp.asarray(iv)
    for axes in [(0,), (1,), (0, 1)]:
        check(lax.reduce_and(ix, axes), np.bitwise_and.reduce(iv, axis=axes), "int32")
        check(lax.reduce_or(ix, axes), np.bitwise_or.reduce(iv, axis=axes), "int32")
        check(lax.reduce_xor(ix, axes), np.bitwise_xor.reduce(iv, axis=axes), "int32")
    b = rng.random((4, 6)) < 0.5
    check(lax.reduce_and(jnp.asarray(b), (1,)), b.all(1), "bool")
    check(lax.reduce_or(jnp.asarray(b), (0,)), b.any(0), "bool")
    check(lax.reduce_xor(jnp.asarray(b), (0,)), np.logical_xor.reduce(b, 0), "bool")
    check(lax.reduce_min(jnp.zeros((0, 3)), (0,)), np.full(3, np.inf), "float32")


def test_argmax_argmin_index_dtype(rng):
    v = rng.standard_normal((4, 5)).astype(np.float32)
    v[2, 3] = np.nan
    x = jnp.asarray(v)
    for axis in (0, 1):
        for dt in ("int32", "int8", "uint16"):
            check(lax.argmax(x, axis, dt), np.argmax(v, axis).astype(dt), dt)
            check(lax.argmin(x, axis, np.dtype(dt)), np.argmin(v, axis).astype(dt), dt)


def test_generic_reduce_with_python_computation(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    # a body that is no single monoid: the generic reduce primitive, traced once. (XLA's
    # reduce may combine partial results in any order: the body must be associative.)
    calls = []

    def body(acc, e):
        calls.append(1)
        return lax.abs(acc) + lax.abs(e)

    out = lax.reduce(x, 0.0, body, (1,))
    check(out, np.sum(np.abs(v.astype(np.float64)), axis=1), "float32", rtol=1e-5, atol=1e-6)
    check(lax.reduce(x, np.float32(0.25), lax.max, (0,)), np.maximum(v.max(0), 0.25), "float32")
    assert len(calls) == 1
    jaxpr = tessera.make_jaxpr(lambda a: lax.reduce(a, 0.0, body, (1,)))(x)
    assert jaxpr.eqn_primitives() == ["reduce"], str(jaxpr)
    # a monoid with its identity binds the monoid's primitive, as JAX
    prims = tessera.make_jaxpr(lambda a: lax.reduce(a, -np.inf, lax.max, (0,)))(x).eqn_primitives()
    assert prims == ["reduce_max"]
    prims = tessera.make_jaxpr(lambda a: lax.reduce(a, 0.0, lax.add, (0,)))(x).eqn_primitives()
    assert prims == ["reduce_sum"]
    # a pytree of operands: a (max, argmax) pair reduction
    idx = jnp.asarray(np.broadcast_to(np.arange(4, dtype=np.int32), (3, 4)).copy())

    def pick(a, b):
        (av, ai), (bv, bi) = a, b
        take_b = lax.gt(bv, av)
        return (lax.select_n(take_b, av, bv), lax.select_n(take_b, ai, bi))

    mx, am = lax.reduce((x, idx), (jnp.asarray(np.float32(-np.inf)), jnp.asarray(np.int32(0))),
                        pick, (1,))
    check(mx, v.max(1), "float32")
    check(am, v.argmax(1).astype(np.int32), "int32")
    with pytest.raises(ValueError, match="structure"):
        lax.reduce((x, x), 0.0, lambda a, b: a, (0,))
    with pytest.raises(TypeError, match="structure"):
        lax.reduce(x, 0.0, lambda a, b: (a, b), (0,))

    def boom(a, b):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):  # the Python exception propagates unchanged
        lax.reduce(x, 0.0, boom, (0,))
    check(lax.reduce(x, 0.0, lax.add, (0,)), v.sum(0), "float32", rtol=1e-5, atol=1e-6)


def test_reduction_grads(rng):
    v = rng.standard_normal(5).astype(np.float32) + 2.0
    g = tessera.grad(lambda a: lax.reduce_prod(a, (0,)))(jnp.asarray(v))
    np.testing.assert_allclose(np.asarray(g), np.prod(v) / v, rtol=1e-5)
    g = tessera.grad(lambda a: lax.reduce_min(a, (0,)))(jnp.asarray(v))
    np.testing.assert_array_equal(np.asarray(g), (v == v.min()).astype(np.float32))


# ---------------------------------------------------------------------------------------------
# Slicing, concatenation, padding
def _ref_pad(v, value, config):
    out = v
    for ax, (lo, hi, interior) in enumerate(config):
        n = out.shape[ax]
        size = n + max(n - 1, 0) * interior
        shape = list(out.shape)
        shape[ax] = size
        dil = np.full(shape, value, out.dtype)
        sl = [slice(None)] * out.ndim
        sl[ax] = slice(0, size, interior + 1)
        dil[tuple(sl)] = out
        before = [(0, 0)] * out.ndim
        before[ax] = (max(lo, 0), max(hi, 0))
        dil = np.pad(dil, before, constant_values=value)
        crop = [slice(None)] * out.ndim
        crop[ax] = slice(-min(lo, 0), dil.shape[ax] + min(hi, 0))
        out = dil[tuple(crop)]
    return out


def test_pad_vs_reference(rng):
    for shape in [(5,), (3, 4), (2, 3, 2), (0, 3)]:
        v = rng.standard_normal(shape).astype(np.float32)
        for _ in range(6):
            cfg = [(int(rng.integers(-2, 3)), int(rng.integers(-2, 3)), int(rng.integers(0, 3)))
                   for _ in shape]
            size_ok = all(n + max(n - 1, 0) * i + lo + hi >= 0 for n, (lo, hi, i) in zip(shape, cfg))
            if not size_ok:
                with pytest.raises((ValueError, TypeError)):
                    lax.pad(jnp.asarray(v), -1.0, cfg)
                continue
            check(lax.pad(jnp.asarray(v), np.float32(-1.0), cfg), _ref_pad(v, -1.0, cfg),
                  "float32")
    iv = rng.integers(0, 9, size=(3,)).astype(np.int32)
    check(lax.pad(jnp.asarray(iv), jnp.asarray(np.int32(7)), [(1, 2, 1)]),
          _ref_pad(iv, 7, [(1, 2, 1)]), "int32")
    # the padding value is an operand: grad flows to it
    g = tessera.grad(lambda p: jnp.sum(lax.pad(jnp.ones(3), p, [(2, 1, 1)])))(jnp.asarray(0.5))
    assert float(g) == 5.0


def test_slice_family_vs_numpy(rng):
    v = rng.standard_normal((4, 5, 6)).astype(np.float32)
    x = jnp.asarray(v)
    check(lax.slice(x, (1, 0, 2), (3, 5, 6)), v[1:3, 0:5, 2:6], "float32")
    check(lax.slice(x, (0, 1, 0), (4, 5, 6), (2, 3, 4)), v[0:4:2, 1:5:3, 0:6:4], "float32")
    check(lax.slice_in_dim(x, 1, 4, 2, axis=2), v[:, :, 1:4:2], "float32")
    check(lax.slice_in_dim(x, -3, None, axis=1), v[:, -3:], "float32")
    check(lax.slice_in_dim(x, None, -1), v[:-1], "float32")
    check(lax.index_in_dim(x, -1, axis=1), v[:, -1:], "float32")
    check(lax.index_in_dim(x, 2, axis=2, keepdims=False), v[:, :, 2], "float32")
    check(lax.rev(x, (0, 2)), v[::-1, :, ::-1], "float32")
    check(lax.squeeze(jnp.asarray(v[:, :1, None]), (1, -2)), v[:, 0], "float32")
    check(lax.expand_dims(x, (0, 4)), v[None, :, :, :, None], "float32")
    w = rng.standard_normal((4, 2, 6)).astype(np.float32)
    check(lax.concatenate([x, jnp.asarray(w), x], 1), np.concatenate([v, w, v], 1), "float32")
    with pytest.raises(TypeError):
        lax.concatenate([x, jnp.asarray(w.astype(np.float16))], 1)
    with pytest.raises((ValueError, TypeError)):
        lax.squeeze(x, (0,))
    with pytest.raises(IndexError):
        lax.index_in_dim(x, 4)
    # transpose rules: grads through each
    ct = rng.standard_normal((4, 2, 6)).astype(np.float32)
    g = tessera.grad(lambda a: jnp.sum(lax.slice(a, (0, 1, 0), (4, 5, 6), (1, 2, 1)) *
                                       jnp.asarray(ct)))(x)
    exp = np.zeros_like(v)
    exp[:, 1:5:2] = ct
    np.testing.assert_allclose(np.asarray(g), exp)
    g = tessera.grad(lambda a: jnp.sum(lax.concatenate([a, a * 2.0], 0)))(x)
    np.testing.assert_allclose(np.asarray(g), np.full_like(v, 3.0))
    out = tessera.vmap(lambda a: lax.rev(lax.slice_in_dim(a, 1, 5), (0,)))(x)
    check(out, v[:, 1:5][:, ::-1], "float32")


def test_iota_large_shapes_every_dimension():
    """Iotas big enough to be split over threads, with rows crossing the tasks' boundaries,
    along every dimension (inner sizes 1 and > 1), in wrapping and float dtypes, against NumPy."""
    for shape in [(3, 70_001), (70_001, 3), (5, 40_000, 2), (1 << 18,)]:
        for dim in range(len(shape)):
            for dt in [np.int32, np.uint8, np.int16, np.float32]:
                got = np.asarray(tessera.lax.broadcasted_iota(dt, shape, dim))
                idx = np.arange(shape[dim], dtype=np.int64)
                if np.issubdtype(dt, np.integer):  # XLA's iota wraps in narrow integers
                    idx = idx.astype(np.uint64).astype(dt)
                else:
                    idx = idx.astype(dt)
                bshape = [1] * len(shape)
                bshape[dim] = shape[dim]
                want = np.broadcast_to(idx.reshape(bshape), shape)
                assert got.dtype == dt and np.array_equal(got, want), (shape, dim, dt)
