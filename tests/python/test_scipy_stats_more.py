"""The jax.scipy.stats distributions betabinom ... wrapcauchy, and mode, rankdata, sem and
gaussian_kde, against scipy.stats on fresh random inputs: float32 under jit, float64 under
jax_enable_x64, grads against float64 finite differences."""
import numpy as np
import pytest
import scipy.stats as sst

import tessera as jax
import tessera.numpy as jnp
import tessera.random as jrandom
from tessera.scipy import stats as tst

N = 40


def _u(rng, lo, hi, n=N):
    return rng.uniform(lo, hi, size=n)


def _int(rng, lo, hi, n=N):
    return rng.integers(lo, hi, size=n).astype(np.float64)


# name -> (methods, argument sampler(rng) -> tuple of np arrays, scipy args builder)
def _cases():
    return {
        "betabinom": (["logpmf", "pmf"],
                      lambda r: (_int(r, -1, 12), _int(r, 1, 10), _u(r, 0.3, 4), _u(r, 0.3, 4),
                                 _int(r, -1, 2))),
        "gennorm": (["logpdf", "pdf", "cdf"], lambda r: (_u(r, -3, 3), _u(r, 0.5, 4))),
        "geom": (["logpmf", "pmf"], lambda r: (_int(r, -1, 10), _u(r, 0.05, 0.95),
                                               _int(r, -1, 2))),
        "gumbel_l": (["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"],
                     lambda r: (_u(r, -4, 3), _u(r, -1, 1), _u(r, 0.5, 2))),
        "gumbel_r": (["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"],
                     lambda r: (_u(r, -3, 4), _u(r, -1, 1), _u(r, 0.5, 2))),
        "nbinom": (["logpmf", "pmf"], lambda r: (_int(r, -1, 15), _u(r, 0.5, 6),
                                                 _u(r, 0.1, 0.9), _int(r, -1, 2))),
        "pareto": (["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"],
                   lambda r: (_u(r, 0, 6), _u(r, 0.5, 4), _u(r, -1, 1), _u(r, 0.5, 2))),
        "truncnorm": (["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"],
                      lambda r: _truncnorm_args(r)),
        "vonmises": (["logpdf", "pdf"], lambda r: (_u(r, -3.1, 3.1), _u(r, 0.1, 30))),
        "wrapcauchy": (["logpdf", "pdf"], lambda r: (_u(r, 0, 6.28), _u(r, 0.05, 0.95))),
    }


def _truncnorm_args(r):
    a = _u(r, -3, 2)
    b = a + _u(r, 0.2, 3)
    loc, scale = _u(r, -1, 1), _u(r, 0.5, 2)
    x = loc + scale * _u(r, -3.5, 5)
    return x, a, b, loc, scale


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_distribution_float32_jit(rng, name):
    methods, sample = CASES[name]
    args = sample(rng)
    for method in methods:
        want = getattr(getattr(sst, name), method)(*args)
        fn = jax.jit(getattr(getattr(tst, name), method))
        got = fn(*[jnp.asarray(a, jnp.float32) for a in args])
        assert got.dtype == jnp.float32, (name, method)
        np.testing.assert_allclose(np.asarray(got), want.astype(np.float32), rtol=2e-4,
                                   atol=2e-5, err_msg=f"{name}.{method}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_distribution_x64(x64, rng, name):
    methods, sample = CASES[name]
    args = sample(rng)
    for method in methods:
        want = getattr(getattr(sst, name), method)(*args)
        got = getattr(getattr(tst, name), method)(*[jnp.asarray(a) for a in args])
        assert got.dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-8, atol=1e-12,
                                   err_msg=f"{name}.{method}")


def test_ppf_vs_scipy(x64, rng):
    q = _u(rng, 0.001, 0.999)
    loc, scale, b = _u(rng, -1, 1), _u(rng, 0.5, 2), _u(rng, 0.5, 3)
    for name, extra in (("gumbel_l", ()), ("gumbel_r", ()), ("pareto", (b,))):
        want = getattr(sst, name).ppf(q, *extra, loc, scale)
        got = getattr(tst, name).ppf(jnp.asarray(q), *[jnp.asarray(e) for e in extra],
                                     jnp.asarray(loc), jnp.asarray(scale))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, err_msg=name)
        out = getattr(tst, name).ppf(jnp.asarray([-0.5, 1.5]), *[e[:2] for e in extra])
        assert np.all(np.isnan(np.asarray(out)))


def test_truncnorm_far_tails(x64):
    # bounds deep in either tail, where Phi(b) - Phi(a) underflows when computed naively
    for a, b in ((-40.0, -38.0), (38.0, 40.0), (-1.0, 30.0)):
        x = np.linspace(a, b, 7)[1:-1]
        np.testing.assert_allclose(np.asarray(tst.truncnorm.logpdf(jnp.asarray(x), a, b)),
                                   sst.truncnorm.logpdf(x, a, b), rtol=1e-7)


def test_out_of_support_values(x64):
    assert np.isnan(float(tst.betabinom.logpmf(1.0, 3.0, -1.0, 2.0)))
    assert float(tst.geom.logpmf(0.0, 0.5)) == -np.inf
    assert float(tst.pareto.logpdf(0.5, 2.0)) == -np.inf
    assert np.isnan(float(tst.vonmises.logpdf(0.3, -1.0)))
    assert float(tst.wrapcauchy.logpdf(7.0, 0.5)) == -np.inf
    assert np.isnan(float(tst.wrapcauchy.logpdf(1.0, 1.5)))


def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("name,args,argnum", [
    ("gennorm.logpdf", (0.7, 1.6), 1), ("gumbel_r.logcdf", (0.3, 0.2, 1.3), 0),
    ("gumbel_l.logsf", (0.3, 0.2, 1.3), 2), ("pareto.logpdf", (2.5, 1.7, 0.1, 1.2), 1),
    ("truncnorm.logpdf", (0.4, -0.5, 1.5, 0.1, 0.9), 1), ("vonmises.logpdf", (0.6, 2.5), 1),
    ("wrapcauchy.logpdf", (1.2, 0.4), 1), ("nbinom.logpmf", (3.0, 2.5, 0.4), 2),
    ("betabinom.logpmf", (3.0, 7.0, 1.5, 2.5), 3), ("truncnorm.logcdf", (0.4, -0.5, 1.5), 0),
])
def test_grad_vs_fd(x64, name, args, argnum):
    dist, method = name.split(".")
    ours = getattr(getattr(tst, dist), method)
    ref = getattr(getattr(sst, dist), method)
    g = jax.grad(ours, argnums=argnum)(*[jnp.asarray(a) for a in args])

    def f(v):
        a = list(args)
        a[argnum] = v
        return float(ref(*a))
    np.testing.assert_allclose(float(g), _fd(f, args[argnum]), rtol=1e-5, atol=1e-8)


# ---- dirichlet and multinomial ----

def test_dirichlet_vs_scipy(rng):
    k = 4
    alpha = rng.uniform(0.5, 3, size=k)
    x = rng.dirichlet(np.ones(k), size=6).T  # (k, 6), columns on the simplex
    want = np.array([sst.dirichlet.logpdf(x[:, i], alpha) for i in range(6)])
    got = jax.jit(tst.dirichlet.logpdf)(jnp.asarray(x, jnp.float32),
                                        jnp.asarray(alpha, jnp.float32))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    # K - 1 components: the last is 1 - sum
    got = tst.dirichlet.pdf(jnp.asarray(x[:-1, 0]), jnp.asarray(alpha))
    np.testing.assert_allclose(float(got), sst.dirichlet.pdf(x[:, 0], alpha), rtol=1e-4)
    assert float(tst.dirichlet.logpdf(jnp.asarray([0.5, 0.6, -0.1]), jnp.ones(3))) == -np.inf
    with pytest.raises(ValueError, match="must be one-dimensional"):
        tst.dirichlet.logpdf(jnp.ones(2), jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="one entry fewer"):
        tst.dirichlet.logpdf(jnp.ones(5), jnp.ones(3))


def test_multinomial_vs_scipy(x64, rng):
    p = rng.dirichlet(np.ones(5))
    x = rng.multinomial(12, p, size=8)
    got = jax.jit(tst.multinomial.logpmf)(jnp.asarray(x), 12, jnp.asarray(p))
    np.testing.assert_allclose(np.asarray(got), sst.multinomial.logpmf(x, 12, p), rtol=1e-10)
    assert float(tst.multinomial.logpmf(jnp.asarray([1, 2]), 4, jnp.asarray([.5, .5]))) == -np.inf
    np.testing.assert_allclose(float(tst.multinomial.pmf(jnp.asarray(x[0]), 12, jnp.asarray(p))),
                               sst.multinomial.pmf(x[0], 12, p), rtol=1e-10)
    with pytest.raises(ValueError, match="must be of integer type"):
        tst.multinomial.logpmf(jnp.asarray([1.0, 2.0]), 3, jnp.asarray([0.5, 0.5]))


# ---- mode, rankdata, sem ----

@pytest.mark.parametrize("axis", [0, 1, None])
def test_mode_vs_scipy(rng, axis):
    a = rng.integers(0, 5, size=(7, 9))
    want = sst.mode(a, axis=axis, keepdims=False)
    got = jax.jit(lambda a: tst.mode(a, axis=axis))(jnp.asarray(a, jnp.int32))
    np.testing.assert_array_equal(np.asarray(got.mode), want.mode)
    np.testing.assert_array_equal(np.asarray(got.count), want.count)
    got = tst.mode(jnp.asarray(a, jnp.float32), axis=axis, keepdims=True)
    want = sst.mode(a.astype(np.float32), axis=axis, keepdims=True)
    np.testing.assert_array_equal(np.asarray(got.mode), want.mode)
    with pytest.raises(NotImplementedError, match="nan_policy"):
        tst.mode(jnp.asarray(a), nan_policy="omit")


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_rankdata_vs_scipy(rng, method, axis):
    a = rng.integers(0, 6, size=(5, 8)).astype(np.float32)
    want = sst.rankdata(a, method=method, axis=axis)
    got = jax.jit(lambda a: tst.rankdata(a, method=method, axis=axis))(jnp.asarray(a))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_rankdata_errors():
    with pytest.raises(ValueError, match="unknown method"):
        tst.rankdata(jnp.ones(3), method="median")


@pytest.mark.parametrize("axis", [0, 1, None])
def test_sem_vs_scipy(rng, axis):
    a = rng.standard_normal((6, 9))
    for ddof in (0, 1):
        want = sst.sem(a, axis=axis, ddof=ddof)
        got = jax.jit(lambda a: tst.sem(a, axis=axis, ddof=ddof))(jnp.asarray(a, jnp.float32))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    a[1, 2] = a[4, 0] = np.nan
    if axis is not None:
        want = sst.sem(a, axis=axis, nan_policy="omit")
        got = tst.sem(jnp.asarray(a, jnp.float32), axis=axis, nan_policy="omit")
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


# ---- gaussian_kde ----

@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("bw", [None, "silverman", 0.4])
@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_kde_vs_scipy(x64, rng, d, bw, weighted):
    data = rng.standard_normal((d, 30))
    w = rng.uniform(0.2, 2, size=30) if weighted else None
    ref = sst.gaussian_kde(data, bw_method=bw, weights=w)
    kde = tst.gaussian_kde(jnp.asarray(data), bw_method=bw,
                           weights=None if w is None else jnp.asarray(w))
    pts = rng.standard_normal((d, 11)) * 1.5
    np.testing.assert_allclose(np.asarray(kde.covariance), ref.covariance, rtol=1e-10)
    np.testing.assert_allclose(float(kde.neff), ref.neff, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda k, p: k.evaluate(p))(kde,
                                                                              jnp.asarray(pts))),
                               ref.evaluate(pts), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(kde.logpdf(jnp.asarray(pts))), ref.logpdf(pts),
                               rtol=1e-9)
    mean, cov = rng.standard_normal(d), np.eye(d) * 0.7
    np.testing.assert_allclose(float(kde.integrate_gaussian(jnp.asarray(mean), jnp.asarray(cov))),
                               ref.integrate_gaussian(mean, cov), rtol=1e-9)
    other = rng.standard_normal((d, 12)) + 0.5
    np.testing.assert_allclose(float(kde.integrate_kde(tst.gaussian_kde(jnp.asarray(other)))),
                               ref.integrate_kde(sst.gaussian_kde(other)), rtol=1e-9)
    if d == 1:
        lo, hi = -0.5, 0.8
        np.testing.assert_allclose(float(kde.integrate_box_1d(lo, hi)),
                                   ref.integrate_box_1d(lo, hi), rtol=1e-9)
    else:
        with pytest.raises(ValueError, match="only handles 1D"):
            kde.integrate_box_1d(0.0, 1.0)


def test_gaussian_kde_resample_moments(x64, rng):
    data = rng.standard_normal((2, 25)) * np.array([[1.0], [3.0]]) + np.array([[2.0], [-1.0]])
    kde = tst.gaussian_kde(jnp.asarray(data))
    s = np.asarray(kde.resample(jrandom.PRNGKey(0), (200000,)))
    assert s.shape == (2, 200000)
    # mixture mean = data mean; covariance = data (biased) covariance + kernel covariance.
    # Standard errors at 2e5 draws (variances <= ~12): means <= 0.008, covariances <= 0.04;
    # the bounds are >= 6 of them (p < 1e-6 for any data the rng draws).
    np.testing.assert_allclose(s.mean(1), data.mean(1), atol=0.05)
    want_cov = np.cov(data, bias=True) + np.asarray(kde.covariance)
    np.testing.assert_allclose(np.cov(s), want_cov, rtol=0.08, atol=0.08)


def test_gaussian_kde_errors():
    with pytest.raises(ValueError, match="multiple elements"):
        tst.gaussian_kde(jnp.ones(1))
    with pytest.raises(ValueError, match="bw_method"):
        tst.gaussian_kde(jnp.arange(5.0), bw_method="wide")
    with pytest.raises(ValueError, match="should be of length n"):
        tst.gaussian_kde(jnp.arange(5.0), weights=jnp.ones(3))
    with pytest.raises(NotImplementedError):
        tst.gaussian_kde(jnp.arange(5.0)).integrate_box(0.0, 1.0)
