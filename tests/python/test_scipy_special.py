"""tessera.scipy.special (jax.scipy.special) against scipy.special (Debian's python3-scipy) on
fresh random inputs in float32 and float64, against mpmath where SciPy 1.10 is itself inexact
(betaln of large arguments), JAX's pinned edge values (gamma's poles and signs, xlogy(0, 0),
entr below 0, ndtri's boundaries, log_ndtr at +-1e30), JAX's custom derivatives (xlogy at x = 0,
logit, log_ndtr) and gradients against central differences in float64, dtype promotion, jit and
vmap against eager, and the errors. The seed is TESSERA_TEST_SEED (or the clock)."""

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
import tessera.scipy.special as jsp

ss = pytest.importorskip("scipy.special")


def _u(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _noninteger(lo, hi):
    """Uniform values kept 0.05 away from the integers (the poles of gamma and friends)."""
    def draw(rng, n):
        x = rng.uniform(lo, hi, n)
        frac = x - np.floor(x)
        return np.where(frac < 0.05, x + 0.05, np.where(frac > 0.95, x - 0.05, x))
    return draw


def _mixed(rng, n):
    """Magnitudes from 1e-3 to 1e3 of both signs."""
    return rng.choice([-1, 1], n) * 10.0 ** rng.uniform(-3, 3, n)


# name -> (tessera function, scipy reference, samplers for each argument, rtol f32, rtol f64)
UNARY = {
    "gammaln": (jsp.gammaln, ss.gammaln, [_noninteger(-20, 40)], 2e-5, 1e-12),
    "gamma": (jsp.gamma, ss.gamma, [_noninteger(-10, 30)], 3e-5, 1e-12),
    "gammasgn": (jsp.gammasgn, ss.gammasgn, [_noninteger(-10, 10)], 0, 0),
    "digamma": (jsp.digamma, ss.digamma, [_noninteger(-10, 40)], 5e-5, 1e-11),
    "erf": (jsp.erf, ss.erf, [_u(-5, 5)], 1e-6, 1e-14),
    "erfc": (jsp.erfc, ss.erfc, [_u(-3, 9)], 2e-5, 1e-13),
    "erfinv": (jsp.erfinv, ss.erfinv, [_u(-0.999, 0.999)], 1e-5, 1e-13),
    "expit": (jsp.expit, ss.expit, [_u(-80, 80)], 1e-6, 1e-14),
    "logit": (jsp.logit, ss.logit, [_u(0.001, 0.999)], 1e-5, 1e-13),
    "ndtr": (jsp.ndtr, ss.ndtr, [_u(-12, 9)], 2e-5, 1e-13),
    "ndtri": (jsp.ndtri, ss.ndtri, [_u(0, 1)], 2e-5, 1e-14),
    "ndtri_tail": (jsp.ndtri, ss.ndtri, [lambda rng, n: 10.0 ** rng.uniform(-37, -2, n)],
                   1e-5, 1e-14),
    "log_ndtr": (jsp.log_ndtr, ss.log_ndtr, [_u(-30, 5)], 2e-5, 1e-10),
    "i0": (jsp.i0, ss.i0, [_u(-30, 30)], 2e-5, 1e-13),
    "i0e": (jsp.i0e, ss.i0e, [_mixed], 1e-5, 1e-13),
    "i1": (jsp.i1, ss.i1, [_u(-30, 30)], 2e-5, 1e-13),
    "i1e": (jsp.i1e, ss.i1e, [_mixed], 1e-5, 1e-13),
    "entr": (jsp.entr, ss.entr, [_mixed], 1e-5, 1e-13),
    "factorial": (jsp.factorial, ss.factorial, [_u(-3, 30)], 3e-5, 1e-12),
}

BINARY = {
    "betaln": (jsp.betaln, ss.betaln, [_u(0.01, 30), _u(0.01, 30)], 2e-5, 1e-12),
    "beta": (jsp.beta, ss.beta, [_noninteger(-5, 10), _u(0.1, 10)], 3e-4, 1e-11),
    "gammainc": (jsp.gammainc, ss.gammainc, [_u(0.1, 20), _u(0, 30)], 5e-5, 1e-10),
    "gammaincc": (jsp.gammaincc, ss.gammaincc, [_u(0.1, 20), _u(0, 10)], 5e-5, 1e-10),
    "zeta": (jsp.zeta, ss.zeta, [_u(1.1, 20), _u(0.1, 20)], 5e-5, 1e-12),
    "xlogy": (jsp.xlogy, ss.xlogy, [_mixed, _u(0, 100)], 1e-5, 1e-13),
    "xlog1py": (jsp.xlog1py, ss.xlog1py, [_mixed, _u(-1, 100)], 1e-5, 1e-13),
    "rel_entr": (jsp.rel_entr, ss.rel_entr, [_mixed, _mixed], 1e-5, 1e-13),
    "kl_div": (jsp.kl_div, ss.kl_div, [_mixed, _mixed], 1e-4, 1e-12),
    "poch": (jsp.poch, ss.poch, [_u(0.1, 10), _u(-0.05, 5)], 1e-4, 1e-11),
}


# Results that cancel to near 0 are compared with an absolute tolerance of rtol times the size
# of the cancelling terms.
CANCEL_SCALE = {
    "logit": lambda x: np.abs(np.log(x)) + np.abs(np.log1p(-x)),
    "betaln": lambda a, b: (np.abs(ss.gammaln(a)) + np.abs(ss.gammaln(b))
                            + np.abs(ss.gammaln(a + b))),
    "rel_entr": lambda p, q: (np.abs(p * np.log(np.abs(p) + 1e-300))
                              + np.abs(p * np.log(np.abs(q) + 1e-300))),
    "kl_div": lambda p, q: (np.abs(p * np.log(np.abs(p) + 1e-300))
                            + np.abs(p * np.log(np.abs(q) + 1e-300)) + np.abs(p) + np.abs(q)),
    # gammaln's roots (1, 2 and one or two in every negative unit interval): eps times the
    # terms' size (x psi(x), and log(pi / |sin pi x|) - gammaln(1 - x) from the reflection)
    "gammaln": lambda x: 1 + np.abs(x * ss.digamma(x))
    + np.where(x < 0.5, np.abs(ss.gammaln(1 - x)) + np.abs(np.log(np.abs(np.sin(np.pi * x)))), 0),
    # digamma's roots (x0 = 1.4616 and one in every negative unit interval): the error is
    # absolute, eps times the terms' size (x psi'(x), and pi cot(pi x) from the reflection)
    "digamma": lambda x: 1 + np.abs(x * ss.polygamma(1, x))
    + np.where(x < 0.5, np.pi / np.abs(np.tan(np.pi * x)), 0),
}

# Relative condition numbers: a function evaluated in the dtype has relative error about eps
# times this (a + b near a pole of gamma makes beta arbitrarily ill-conditioned: float32's
# a + b alone then errs by up to 1e-3 relative; measured error <= 1.6 eps * kappa over 2M
# points). The tolerance adds 8 eps kappa to rtol.
CONDITION = {
    "beta": lambda a, b: (np.abs(ss.gammaln(a)) + np.abs(ss.gammaln(b))
                          + np.abs(ss.gammaln(a + b)) + np.abs(a * ss.digamma(a))
                          + np.abs(b * ss.digamma(b)) + np.abs((a + b) * ss.digamma(a + b))),
}


def _compare(name, fun, ref, samplers, rtol, rng, dtype, n=300):
    args = [s(rng, n).astype(dtype) for s in samplers]
    out = fun(*args)
    assert out.dtype == dtype
    args64 = [a.astype(np.float64) for a in args]
    want = ref(*args64)
    atol = 1e-30 if dtype == np.float64 else 1e-37
    if name in CONDITION:
        with np.errstate(all="ignore"):
            kappa = np.nan_to_num(CONDITION[name](*args64), posinf=0)
        rtol = rtol + 8 * np.finfo(dtype).eps * kappa
    if name in CANCEL_SCALE:
        with np.errstate(all="ignore"):
            atol = atol + rtol * np.nan_to_num(CANCEL_SCALE[name](*args64), posinf=0)
        out, want = np.asarray(out, np.float64), np.broadcast_to(want, np.shape(out))
        finite = np.isfinite(want)
        np.testing.assert_array_equal(out[~finite], want[~finite])
        with np.errstate(invalid="ignore"):
            err = np.abs(out - want)
        np.testing.assert_array_less(err[finite], (atol + rtol * np.abs(want))[finite] + 1e-300)
        return
    if np.ndim(rtol):
        out, want = np.asarray(out, np.float64), np.broadcast_to(want, np.shape(out))
        both_nan = np.isnan(out) & np.isnan(want)
        with np.errstate(invalid="ignore"):
            ok = both_nan | (out == want) | (np.abs(out - want) <= atol + rtol * np.abs(want))
        assert ok.all(), (f"{name}: {np.count_nonzero(~ok)} of {ok.size} beyond tolerance: "
                          f"got {out[~ok][:5]}, want {want[~ok][:5]}")
        return
    np.testing.assert_allclose(np.asarray(out, np.float64), want, rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32(name, rng):
    fun, ref, samplers, rtol, _ = UNARY[name]
    _compare(name, fun, ref, samplers, rtol, rng, np.float32)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64(name, rng, x64):
    fun, ref, samplers, _, rtol = UNARY[name]
    _compare(name, fun, ref, samplers, rtol, rng, np.float64)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float32(name, rng):
    fun, ref, samplers, rtol, _ = BINARY[name]
    _compare(name, fun, ref, samplers, rtol, rng, np.float32)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float64(name, rng, x64):
    fun, ref, samplers, _, rtol = BINARY[name]
    _compare(name, fun, ref, samplers, rtol, rng, np.float64)


def test_betainc_against_scipy(rng, x64):
    a, b, x = rng.uniform(0.1, 10, 200), rng.uniform(0.1, 10, 200), rng.uniform(0, 1, 200)
    np.testing.assert_allclose(jsp.betainc(a, b, x), ss.betainc(a, b, x), rtol=1e-9,
                               atol=1e-300)
    out32 = jsp.betainc(a.astype(np.float32), b.astype(np.float32), x.astype(np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, ss.betainc(a, b, x.astype(np.float32)), rtol=1e-4,
                               atol=1e-6)


def test_polygamma_against_scipy(rng, x64):
    n = rng.integers(0, 5, 200)
    x = rng.uniform(0.1, 20, 200)
    np.testing.assert_allclose(jsp.polygamma(n, x), ss.polygamma(n, x), rtol=1e-10)
    np.testing.assert_allclose(jsp.polygamma(3, x), ss.polygamma(3, x), rtol=1e-10)


def test_poch_negative_arguments_against_scipy(rng, x64):
    """z and z + m on both sides of the poles (float64: float32 rounding of z + m near a pole
    is amplified by the pole)."""
    z = _noninteger(-5, 10)(rng, 300)
    m = _noninteger(-3, 5)(rng, 300)
    m = np.where(np.abs((z + m) - np.round(z + m)) < 0.05, m + 0.1, m)
    np.testing.assert_allclose(jsp.poch(z, m), ss.poch(z, m), rtol=1e-11)
    np.testing.assert_array_equal(np.asarray(jsp.poch(z, 0.0)), np.ones(300))


def test_multigammaln_against_scipy(rng, x64):
    for d in (1, 2, 5):
        a = rng.uniform(d / 2 + 0.1, 50, (4, 7))
        out = jsp.multigammaln(a, d)
        assert out.shape == (4, 7)
        np.testing.assert_allclose(out, ss.multigammaln(a, d), rtol=1e-12)


def test_bernoulli_against_scipy(x64):
    for n in (0, 1, 2, 7, 40):
        np.testing.assert_allclose(jsp.bernoulli(n), ss.bernoulli(n), rtol=1e-10)
    exact = {4: -1 / 30, 6: 1 / 42, 12: -691 / 2730, 20: -174611 / 330}  # SciPy is inexact
    out = np.asarray(jsp.bernoulli(20))
    for k, v in exact.items():
        assert out[k] == pytest.approx(v, rel=1e-15)
    assert jsp.bernoulli(5).dtype == np.float64


def test_betaln_large_arguments_against_mpmath(rng, x64):
    """SciPy 1.10's betaln loses ~8 digits for a huge, b small; mpmath is exact."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    a = 10.0 ** rng.uniform(1, 25, 40)
    b = np.concatenate([rng.uniform(0.01, 8, 20), 10.0 ** rng.uniform(1, 25, 20)])
    want = np.array([float(mp.log(mp.beta(mp.mpf(x), mp.mpf(y)))) for x, y in zip(a, b)])
    np.testing.assert_allclose(jsp.betaln(a, b), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(jsp.betaln(b, a), want, rtol=1e-12, atol=1e-13)


def test_betaln_float32_extremes():
    out = np.asarray(jsp.betaln(np.float32([1e30, 1e30, 0.5]), np.float32([1e30, 2.0, 1e30])))
    want = ss.betaln([1e30, 1e30, 0.5], [1e30, 2.0, 1e30])
    np.testing.assert_allclose(out, want, rtol=1e-5)


# ---- JAX's edge values ----

def test_gamma_poles_and_signs():
    x = jnp.asarray([0.0, -0.0, -1.0, -2.0, -np.inf, np.inf, np.nan, -0.5, -1.5, 5.0])
    out = np.asarray(jsp.gamma(x))
    np.testing.assert_array_equal(out[:7], [np.inf, -np.inf, np.nan, np.nan, np.nan, np.inf,
                                            np.nan])
    np.testing.assert_allclose(out[7:], ss.gamma([-0.5, -1.5, 5.0]), rtol=1e-6)
    sgn = np.asarray(jsp.gammasgn(x))
    np.testing.assert_array_equal(sgn, [1, -1, np.nan, np.nan, np.nan, 1, np.nan, -1, 1, 1])
    np.testing.assert_array_equal(np.asarray(jsp.gammaln(jnp.asarray([0.0, -1.0, np.inf]))),
                                  [np.inf, np.inf, np.inf])
    np.testing.assert_allclose(np.asarray(jsp.factorial(jnp.asarray([-1.0, 0.0, 5.0]))),
                               [0, 1, 120], rtol=1e-6)


def test_xlogy_xlog1py_entropy_edges():
    z = np.asarray(jsp.xlogy(jnp.asarray([0.0, 0.0, 2.0, 1.0]),
                             jnp.asarray([0.0, -1.0, 0.0, -1.0])))
    np.testing.assert_array_equal(z, [0.0, 0.0, -np.inf, np.nan])
    z = np.asarray(jsp.xlog1py(jnp.asarray([0.0, 1.0]), jnp.asarray([-1.0, -1.0])))
    np.testing.assert_array_equal(z, [0.0, -np.inf])
    np.testing.assert_array_equal(np.asarray(jsp.entr(jnp.asarray([-1.0, 0.0, np.inf]))),
                                  [-np.inf, 0.0, -np.inf])
    p = np.array([0.0, 0.0, 1.0, -1.0, 1.0])
    q = np.array([0.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_allclose(np.asarray(jsp.rel_entr(p, q)), ss.rel_entr(p, q), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jsp.kl_div(p, q)), ss.kl_div(p, q), rtol=1e-6)
    # JAX's masks send NaN to the "otherwise" case: inf (SciPy gives NaN).
    assert float(jsp.rel_entr(np.nan, 1.0)) == np.inf


def test_ndtri_and_log_ndtr_boundaries():
    out = np.asarray(jsp.ndtri(jnp.asarray([0.0, 1.0, -0.1, 1.1, np.nan, 0.5])))
    np.testing.assert_array_equal(out, [-np.inf, np.inf, np.nan, np.nan, np.nan, 0.0])
    x = jnp.asarray([-1e30, -np.inf, 1e30, np.inf, 0.0, -1e3])
    out = np.asarray(jsp.log_ndtr(x))
    assert out[0] == -np.inf  # -x^2 / 2 overflows float32
    np.testing.assert_array_equal(out[1:4], [-np.inf, 0.0, 0.0])
    assert out[4] == pytest.approx(np.log(0.5), rel=1e-6)
    assert out[5] == pytest.approx(ss.log_ndtr(-1e3), rel=1e-6)
    np.testing.assert_array_equal(np.asarray(jsp.ndtr(jnp.asarray([-np.inf, np.inf, -1e30, 1e30]))),
                                  [0, 1, 0, 1])


def test_log_ndtr_extremes_float64(x64):
    x = np.array([-1e30, -1e5, 1e30, 38.0])
    np.testing.assert_allclose(jsp.log_ndtr(x), ss.log_ndtr(x), rtol=1e-12)


def test_extreme_inputs_stay_finite_or_exact():
    big = jnp.asarray([-1e30, 1e30])
    np.testing.assert_array_equal(np.asarray(jsp.expit(big)), [0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(jsp.erf(big)), [-1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(jsp.erfc(big)), [2.0, 0.0])
    np.testing.assert_allclose(np.asarray(jsp.i0e(big)), ss.i0e([-1e30, 1e30]), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jsp.logit(jnp.asarray([0.0, 1.0]))),
                                  [-np.inf, np.inf])
    np.testing.assert_array_equal(np.asarray(jsp.erfinv(jnp.asarray([-1.0, 1.0]))),
                                  [-np.inf, np.inf])
    assert float(jsp.gammaln(jnp.asarray(1e30))) == pytest.approx(ss.gammaln(1e30), rel=1e-5)


# ---- logsumexp / softmax (scipy signatures) ----

def test_logsumexp_against_scipy(rng, x64):
    a = rng.normal(size=(4, 5)) * 30
    b = rng.normal(size=(4, 5))
    np.testing.assert_allclose(jsp.logsumexp(a), ss.logsumexp(a), rtol=1e-13)
    np.testing.assert_allclose(jsp.logsumexp(a, axis=1, keepdims=True),
                               ss.logsumexp(a, axis=1, keepdims=True), rtol=1e-13)
    out, sign = jsp.logsumexp(a, axis=0, b=b, return_sign=True)
    want, want_sign = ss.logsumexp(a, axis=0, b=b, return_sign=True)
    np.testing.assert_allclose(out, want, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(sign), want_sign)
    mask = rng.uniform(size=(4, 5)) > 0.3
    mask[:, 0] = True
    np.testing.assert_allclose(jsp.logsumexp(a, axis=1, where=mask),
                               [ss.logsumexp(r[m]) for r, m in zip(a, mask)], rtol=1e-13)


def test_softmax_default_axis_is_all(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(jsp.softmax(x), ss.softmax(x), rtol=1e-5)
    np.testing.assert_allclose(jsp.softmax(x, axis=0), ss.softmax(x, axis=0), rtol=1e-5)
    np.testing.assert_allclose(jsp.log_softmax(x), ss.log_softmax(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jsp.log_softmax(x, axis=1), ss.log_softmax(x, axis=1),
                               rtol=1e-5, atol=1e-6)


# ---- dtypes ----

def test_promotion():
    assert jsp.gammaln(3).dtype == np.float32
    assert jsp.gammaln(np.arange(4, dtype=np.int32) + 1).dtype == np.float32
    assert jsp.erf(np.array([True, False])).dtype == np.float32
    assert jsp.xlogy(np.int32(2), np.float16(3)).dtype == np.float16
    assert jsp.betainc(1, 2, np.float16(0.5)).dtype == np.float16
    assert jsp.gammaln(jnp.asarray([1.5], jnp.bfloat16)).dtype == jnp.bfloat16
    assert jsp.i0(np.float32(1)).dtype == np.float32


def test_promotion_x64(x64):
    assert jsp.gammaln(np.arange(1, 4)).dtype == np.float64
    # JAX's to_inexact_dtype: int32 -> float32 even under x64, int64 -> float64
    assert jsp.digamma(np.int32(3)).dtype == np.float32
    assert jsp.digamma(np.int64(3)).dtype == np.float64
    assert jsp.gammaln(3).dtype == np.float64  # a Python int is int64 under x64
    assert jsp.expit(np.float32(1)).dtype == np.float32
    assert jsp.ndtri(0.3).dtype == np.float64


# ---- derivatives ----

def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


GRADS = {
    "gammaln": (jsp.gammaln, _noninteger(0.2, 20)),
    "gamma": (jsp.gamma, _noninteger(-4, 6)),
    "digamma": (jsp.digamma, _u(0.5, 20)),
    "erf": (jsp.erf, _u(-3, 3)),
    "erfinv": (jsp.erfinv, _u(-0.9, 0.9)),
    "ndtr": (jsp.ndtr, _u(-6, 6)),
    "ndtri": (jsp.ndtri, _u(0.001, 0.999)),
    "log_ndtr": (jsp.log_ndtr, _u(-30, 10)),
    "logit": (jsp.logit, _u(0.01, 0.99)),
    "expit": (jsp.expit, _u(-10, 10)),
    "i0": (jsp.i0, _u(-10, 10)),
    "i1e": (jsp.i1e, _u(-10, 10)),
    "entr": (jsp.entr, _u(0.01, 5)),
    "betaln_a": (lambda a: jsp.betaln(a, 3.5), _u(0.1, 30)),
    "betaln_b": (lambda b: jsp.betaln(40.0, b), _u(0.1, 30)),
    "xlogy_x": (lambda x: jsp.xlogy(x, 2.5), _u(-3, 3)),
    "xlogy_y": (lambda y: jsp.xlogy(1.5, y), _u(0.1, 3)),
    "xlog1py_y": (lambda y: jsp.xlog1py(1.5, y), _u(-0.9, 3)),
    "gammainc_x": (lambda x: jsp.gammainc(2.5, x), _u(0.1, 10)),
    "gammaincc_a": (lambda a: jsp.gammaincc(a, 3.0), _u(0.5, 10)),
    "kl_div_q": (lambda q: jsp.kl_div(0.7, q), _u(0.1, 3)),
    "multigammaln": (lambda a: jsp.multigammaln(a, 3), _u(1.5, 20)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_against_central_differences(name, rng, x64):
    f, sampler = GRADS[name]
    for x in sampler(rng, 5):
        g = float(jax.grad(lambda v: f(v))(jnp.asarray(x)))
        want = float(_central(lambda v: float(f(jnp.asarray(v))), x))
        assert g == pytest.approx(want, rel=1e-5, abs=1e-7), (name, x)


def test_custom_jvps_at_zero(x64):
    # xlogy: d/dx = log(y), d/dy = x / y, also at x = 0 (where the primal is the constant 0).
    gx, gy = jax.grad(jsp.xlogy, argnums=(0, 1))(0.0, 2.0)
    assert float(gx) == pytest.approx(np.log(2.0)) and float(gy) == 0.0
    gx, gy = jax.grad(jsp.xlog1py, argnums=(0, 1))(0.0, 1.0)
    assert float(gx) == pytest.approx(np.log(2.0)) and float(gy) == 0.0
    # entr = -x log x: derivative -(log x + 1), -inf... +inf at 0 as JAX's.
    assert float(jax.grad(jsp.entr)(0.0)) == np.inf
    assert float(jax.grad(jsp.rel_entr)(1.0, 2.0)) == pytest.approx(np.log(0.5) + 1)
    # log_ndtr's derivative stays finite and accurate far in the lower tail.
    g = float(jax.grad(jsp.log_ndtr)(-100.0))
    assert g == pytest.approx(100.01, rel=1e-3)
    y, t = jax.jvp(jsp.logit, (0.25,), (1.0,))
    assert float(t) == pytest.approx(1 / (0.25 * 0.75))


# ---- transformations ----

def test_jit_and_vmap_match_eager(rng):
    x = rng.uniform(0.1, 5, (3, 4)).astype(np.float32)
    y = rng.uniform(0.1, 5, (3, 4)).astype(np.float32)
    for f in (lambda a, b: jsp.betaln(a, b), lambda a, b: jsp.xlogy(a, b),
              lambda a, b: jsp.gammainc(a, b), lambda a, b: jsp.log_ndtr(a - b),
              lambda a, b: jsp.ndtri(a / 6), lambda a, b: jsp.gamma(a) * jsp.i1(b)):
        eager = np.asarray(f(x, y))
        np.testing.assert_allclose(jax.jit(f)(x, y), eager, rtol=2e-6)
        np.testing.assert_allclose(jax.vmap(f)(x, y), eager, rtol=2e-6)
    np.testing.assert_allclose(jax.vmap(lambda a: jsp.logsumexp(a))(x),
                               ss.logsumexp(x, axis=1), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(lambda a: jsp.multigammaln(a, 2))(x + 1),
                               ss.multigammaln(x.astype(np.float64) + 1, 2), rtol=1e-5)


def test_grad_under_jit_and_vmap(x64):
    x = jnp.asarray([0.5, 1.5, 4.0])
    g = jax.jit(jax.vmap(jax.grad(jsp.gammaln)))(x)
    np.testing.assert_allclose(g, ss.digamma([0.5, 1.5, 4.0]), rtol=1e-12)


# ---- module layout and errors ----

def test_module_layout():
    import tessera.scipy.special as mod
    from tessera.scipy import special, stats  # noqa: F401
    assert jax.scipy.special is mod is special
    for name in mod.__all__:
        assert callable(getattr(jax.scipy.special, name)), name


def test_errors():
    with pytest.raises(NotImplementedError, match="Riemann zeta"):
        jsp.zeta(2.0)
    with pytest.raises(TypeError, match="polygamma.*integer"):
        jsp.polygamma(1.0, 2.0)
    with pytest.raises(TypeError, match="not supported"):
        jsp.ndtr(np.int32(1))
    with pytest.raises(TypeError, match="not supported"):
        jsp.ndtri(np.float16(0.5))
    with pytest.raises(TypeError, match="series_order must be a Python integer"):
        jsp.log_ndtr(1.0, series_order=2.0)
    with pytest.raises(ValueError, match="series_order must be <= 30"):
        jsp.log_ndtr(1.0, series_order=31)
    with pytest.raises(ValueError, match="non-negative"):
        jsp.log_ndtr(1.0, series_order=-1)
    with pytest.raises(NotImplementedError, match="exact=True"):
        jsp.factorial(3, exact=True)
    with pytest.raises(TypeError, match="multigammaln.*integer"):
        jsp.multigammaln(3.0, 2.5)
    with pytest.raises(TypeError, match="gammaln.*complex"):
        jsp.gammaln(1 + 2j)
    with pytest.raises(ValueError, match="non-negative"):
        jsp.bernoulli(-1)
