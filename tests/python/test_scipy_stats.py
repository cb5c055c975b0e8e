"""tessera.scipy.stats (jax.scipy.stats) against scipy.stats (Debian's python3-scipy) on fresh
random inputs and parameters (loc/scale included) in float32 and float64: every distribution's
functions, values outside the support (-inf log-density, 0 density, cdf 0/1), JAX's NaN for
invalid parameters, gradients of log-densities against central differences in float64, jit and
vmap against eager, and the module layout. The seed is TESSERA_TEST_SEED (or the clock)."""

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera.scipy import stats as jst

st = pytest.importorskip("scipy.stats")


def _u(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _ints(lo, hi):
    return lambda rng, n: rng.integers(lo, hi, n).astype(np.float64)


_LOC = _u(-3, 3)
_SCALE = _u(0.2, 4)
_Q = _u(0.001, 0.999)

# name -> (tessera distribution, scipy distribution, samplers of the shape parameters)
CONT = {
    "norm": (jst.norm, st.norm, []),
    "logistic": (jst.logistic, st.logistic, []),
    "uniform": (jst.uniform, st.uniform, []),
    "expon": (jst.expon, st.expon, []),
    "laplace": (jst.laplace, st.laplace, []),
    "cauchy": (jst.cauchy, st.cauchy, []),
    "t": (jst.t, st.t, [_u(0.5, 30)]),
    "gamma": (jst.gamma, st.gamma, [_u(0.3, 10)]),
    "chi2": (jst.chi2, st.chi2, [_u(0.5, 20)]),
    "beta": (jst.beta, st.beta, [_u(0.3, 8), _u(0.3, 8)]),
}
METHODS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
CASES = [(d, m) for d in sorted(CONT) for m in METHODS if hasattr(CONT[d][0], m)]


def _x_for(dist, rng, n, loc, scale, shapes):
    """Points covering the support (and some outside it, where the support is bounded)."""
    if dist in ("uniform", "beta"):
        return loc + scale * rng.uniform(-0.2, 1.2, n)
    if dist in ("expon", "gamma", "chi2"):
        return loc + scale * rng.uniform(-0.5, 12, n)
    return loc + scale * rng.uniform(-6, 6, n)


def _tol(dist, method, dtype):
    if dtype == np.float64:
        return 1e-9
    loose = {("gamma", "logcdf"), ("gamma", "logsf"), ("chi2", "logcdf"), ("chi2", "logsf"),
             ("beta", "logcdf"), ("beta", "logsf"), ("beta", "cdf"), ("beta", "sf"),
             ("gamma", "cdf"), ("gamma", "sf"), ("chi2", "cdf"), ("chi2", "sf"),
             # tan near pi/2 multiplies float32 rounding of pi * (q - 1/2) by ~1 / (pi q)
             ("cauchy", "ppf"), ("cauchy", "isf")}
    return 2e-4 if (dist, method) in loose else 3e-5


@pytest.mark.parametrize("dist,method", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_continuous_against_scipy(dist, method, dtype, rng, request):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    mine, ref, shape_samplers = CONT[dist]
    n = 200
    loc, scale = _LOC(rng, n), _SCALE(rng, n)
    if dist == "beta" and dtype == np.float32:
        # y = (x - loc) / scale rounded to float32 is ill-conditioned near the ends of [0, 1],
        # where the beta density and 1 - y are steep: keep y = x exact.
        loc, scale = np.zeros(n), np.ones(n)
    shapes = [s(rng, n) for s in shape_samplers]
    if method in ("ppf", "isf"):
        x = _Q(rng, n)
    else:
        x = _x_for(dist, rng, n, loc, scale, shapes)
    args = [a.astype(dtype) for a in [x, *shapes, loc, scale]]
    out = getattr(mine, method)(*args)
    assert out.dtype == dtype
    args64 = [a.astype(np.float64) for a in args]
    with np.errstate(all="ignore"):
        want = getattr(ref, method)(*args64)
    out = np.asarray(out, np.float64)
    rtol = _tol(dist, method, dtype)
    # Results near 0 of log-quantities are compared absolutely (log 1 = 0 cancels).
    atol = rtol * 10 if method.startswith("log") or method in ("ppf", "isf") else 1e-30
    if method in ("logcdf", "logsf") and dtype == np.float32:
        # log of a float32 probability: once it underflows only the order of magnitude is kept
        keep = want > -80
        out, want = out[keep], want[keep]
    np.testing.assert_allclose(out, want, rtol=rtol, atol=atol)


def test_outside_support():
    assert float(jst.uniform.logpdf(1.5)) == -np.inf and float(jst.uniform.pdf(-0.1)) == 0
    np.testing.assert_array_equal(np.asarray(jst.uniform.cdf(jnp.asarray([-1.0, 2.0, 0.25]))),
                                  [0.0, 1.0, 0.25])
    assert float(jst.expon.logpdf(-1.0)) == -np.inf and float(jst.expon.cdf(-1.0)) == 0
    assert float(jst.expon.sf(-1.0)) == 1 and float(jst.expon.logsf(-1.0)) == 0
    assert float(jst.expon.logcdf(-1.0)) == -np.inf
    assert float(jst.gamma.logpdf(-1.0, 2.0)) == -np.inf and float(jst.gamma.cdf(-1.0, 2.0)) == 0
    assert float(jst.gamma.sf(-1.0, 2.0)) == 1
    assert float(jst.chi2.logpdf(-1.0, 3.0)) == -np.inf and float(jst.chi2.pdf(-1.0, 3.0)) == 0
    assert float(jst.beta.logpdf(1.5, 2.0, 2.0)) == -np.inf
    assert float(jst.beta.cdf(1.5, 2.0, 2.0)) == 1 and float(jst.beta.cdf(-0.5, 2.0, 2.0)) == 0
    assert float(jst.norm.cdf(-np.inf)) == 0 and float(jst.norm.logcdf(np.inf)) == 0
    assert float(jst.norm.logpdf(np.inf)) == -np.inf
    np.testing.assert_array_equal(np.asarray(jst.norm.ppf(jnp.asarray([0.0, 1.0, 1.5]))),
                                  [-np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(np.asarray(jst.uniform.ppf(jnp.asarray([-0.1, 1.1, np.nan]))),
                                  [np.nan] * 3)
    np.testing.assert_array_equal(np.asarray(jst.expon.ppf(jnp.asarray([-0.1, 0.0, 1.0]))),
                                  [np.nan, 0.0, np.inf])
    # the far tails stay finite in log space
    assert float(jst.norm.logcdf(-1e3)) == pytest.approx(st.norm.logcdf(-1e3), rel=1e-6)
    assert float(jst.norm.logsf(1e3)) == pytest.approx(st.norm.logsf(1e3), rel=1e-6)
    assert float(jst.logistic.logcdf(-1e4)) == pytest.approx(-1e4, rel=1e-6)


def test_invalid_parameters_give_nan():
    # JAX's explicit NaN (beta) and the NaN of log(negative scale) elsewhere.
    assert np.isnan(float(jst.beta.logpdf(0.5, -1.0, 2.0)))
    assert np.isnan(float(jst.beta.logpdf(0.5, 1.0, 2.0, 0.0, -1.0)))
    assert np.isnan(float(jst.norm.logpdf(0.5, 0.0, -1.0)))
    assert np.isnan(float(jst.cauchy.logpdf(0.5, 0.0, -1.0)))
    assert np.isnan(float(jst.bernoulli.cdf(0.5, 1.5)))
    assert np.isnan(float(jst.bernoulli.ppf(0.5, -0.1)))
    assert np.isnan(float(jst.bernoulli.ppf(1.5, 0.3)))


# ---- discrete distributions ----

def test_poisson_against_scipy(rng, x64):
    k = _ints(-2, 30)(rng, 300)
    mu = rng.uniform(0.1, 20, 300)
    loc = _ints(-2, 3)(rng, 300)
    np.testing.assert_allclose(jst.poisson.logpmf(k, mu, loc), st.poisson.logpmf(k, mu, loc),
                               rtol=1e-11)
    np.testing.assert_allclose(jst.poisson.pmf(k, mu, loc), st.poisson.pmf(k, mu, loc),
                               rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(jst.poisson.cdf(k, mu, loc), st.poisson.cdf(k, mu, loc),
                               rtol=1e-9, atol=1e-300)
    kf = k + 0.5  # non-integer k: pmf 0, cdf of floor(k)
    assert np.all(np.asarray(jst.poisson.logpmf(kf, mu)) == -np.inf)
    np.testing.assert_allclose(jst.poisson.cdf(kf, mu), st.poisson.cdf(kf, mu), rtol=1e-9,
                               atol=1e-300)


def test_poisson_float32(rng):
    k = _ints(0, 30)(rng, 300).astype(np.float32)
    mu = rng.uniform(0.1, 20, 300).astype(np.float32)
    out = jst.poisson.logpmf(k, mu)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, st.poisson.logpmf(k, mu.astype(np.float64)), rtol=2e-5,
                               atol=2e-5)
    np.testing.assert_allclose(jst.poisson.cdf(k, mu), st.poisson.cdf(k, mu.astype(np.float64)),
                               rtol=2e-4, atol=1e-6)
    assert jst.poisson.pmf(np.int32(3), 2).dtype == np.float32


def test_bernoulli_against_scipy(rng, x64):
    k = _ints(-1, 3)(rng, 200)
    p = rng.uniform(0, 1, 200)
    np.testing.assert_allclose(jst.bernoulli.logpmf(k, p), st.bernoulli.logpmf(k, p), rtol=1e-12)
    np.testing.assert_allclose(jst.bernoulli.pmf(k, p), st.bernoulli.pmf(k, p), rtol=1e-12)
    kc = rng.uniform(-1, 2, 200)
    np.testing.assert_allclose(jst.bernoulli.cdf(kc, p), st.bernoulli.cdf(kc, p), rtol=1e-12)
    q = rng.uniform(0, 1, 200)
    np.testing.assert_array_equal(np.asarray(jst.bernoulli.ppf(q, p)), st.bernoulli.ppf(q, p))
    np.testing.assert_allclose(jst.bernoulli.logpmf(k, p, 1), st.bernoulli.logpmf(k, p, 1),
                               rtol=1e-12)
    # p at the ends: xlogy / xlog1py keep 0 * log 0 = 0
    np.testing.assert_array_equal(np.asarray(jst.bernoulli.pmf(jnp.asarray([0.0, 1.0]), 1.0)),
                                  [0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(jst.bernoulli.pmf(jnp.asarray([0.0, 1.0]), 0.0)),
                                  [1.0, 0.0])


def test_binom_against_scipy(rng, x64):
    n = _ints(0, 40)(rng, 300)
    k = _ints(-2, 45)(rng, 300)
    p = rng.uniform(0, 1, 300)
    np.testing.assert_allclose(jst.binom.logpmf(k, n, p), st.binom.logpmf(k, n, p), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(jst.binom.pmf(k, n, p), st.binom.pmf(k, n, p), rtol=1e-10,
                               atol=1e-300)
    np.testing.assert_allclose(jst.binom.pmf(k, n, p, 2), st.binom.pmf(k, n, p, 2), rtol=1e-10,
                               atol=1e-300)


# ---- derivatives and transformations ----

def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


GRADS = {
    "norm.logpdf_x": lambda v: jst.norm.logpdf(v, 0.5, 1.7),
    "norm.logpdf_scale": lambda v: jst.norm.logpdf(0.3, 0.5, v + 3),
    "norm.logcdf": lambda v: jst.norm.logcdf(v * 5, 0.5, 1.7),
    "norm.ppf": lambda v: jst.norm.ppf(0.5 + v / 7, 0.5, 1.7),
    "t.logpdf_df": lambda v: jst.t.logpdf(0.7, v + 3, 0.1, 2.0),
    "gamma.logpdf_a": lambda v: jst.gamma.logpdf(2.5, v + 3, 0.0, 1.5),
    "gamma.cdf_x": lambda v: jst.gamma.cdf(v + 3, 2.5),
    "beta.logpdf_x": lambda v: jst.beta.logpdf(0.5 + v / 7, 2.5, 1.5),
    "beta.logpdf_a": lambda v: jst.beta.logpdf(0.3, v + 3, 1.5),
    "logistic.logcdf": lambda v: jst.logistic.logcdf(v, 0.2, 1.3),
    "cauchy.logpdf": lambda v: jst.cauchy.logpdf(v, 0.2, 1.3),
    "laplace.cdf": lambda v: jst.laplace.cdf(v, 0.2, 1.3),
    "expon.logsf": lambda v: jst.expon.logsf(v + 3, 0.2, 1.3),
    "chi2.logpdf": lambda v: jst.chi2.logpdf(v + 3, 4.5),
    "poisson.logpmf_mu": lambda v: jst.poisson.logpmf(4.0, v + 3),
    "binom.logpmf_p": lambda v: jst.binom.logpmf(4.0, 10.0, 0.5 + v / 7),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_against_central_differences(name, rng, x64):
    f = GRADS[name]
    for v in rng.uniform(-2, 2, 4):
        g = float(jax.grad(f)(jnp.asarray(v)))
        want = _central(lambda u: float(f(jnp.asarray(u))), v)
        assert g == pytest.approx(want, rel=1e-5, abs=1e-8), (name, v)


def test_jit_and_vmap_match_eager(rng):
    x = rng.uniform(0.1, 3, (4, 5)).astype(np.float32)
    s = rng.uniform(0.5, 2, (4, 5)).astype(np.float32)
    funs = [lambda a, b: jst.norm.logcdf(a, 0.5, b), lambda a, b: jst.gamma.logpdf(a, b),
            lambda a, b: jst.beta.cdf(a / 3, b, 2.0), lambda a, b: jst.t.pdf(a, b * 3),
            lambda a, b: jst.poisson.logpmf(jnp.floor(a * 3), b),
            lambda a, b: jst.norm.ppf(a / 3.5, 0.0, b)]
    for f in funs:
        eager = np.asarray(f(x, s))
        np.testing.assert_allclose(jax.jit(f)(x, s), eager, rtol=2e-6)
        np.testing.assert_allclose(jax.vmap(f)(x, s), eager, rtol=2e-6)


def test_broadcasting_and_defaults(rng):
    x = rng.normal(size=(3, 1)).astype(np.float32)
    loc = rng.normal(size=(4,)).astype(np.float32)
    out = jst.norm.logpdf(x, loc)
    assert out.shape == (3, 4) and out.dtype == np.float32
    np.testing.assert_allclose(out, st.norm.logpdf(x, loc), rtol=1e-5)
    assert jst.norm.pdf(1).dtype == np.float32
    assert jst.expon.cdf(np.arange(3)).dtype == np.float32


def test_module_layout():
    import tessera.scipy.stats as mod
    from tessera.scipy.stats import norm
    assert jax.scipy.stats is mod and mod.norm is norm
    assert jax.scipy.stats.norm.logpdf is norm.logpdf
    for name in mod.__all__:
        assert hasattr(mod, name)
    with pytest.raises(TypeError, match="norm.logpdf.*complex"):
        jst.norm.logpdf(1j)
