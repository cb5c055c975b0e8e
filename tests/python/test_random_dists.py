"""tessera.random's distributions written in Python over tessera.lax (gamma, loggamma, beta,
dirichlet, chisquare, t, f, generalized_normal, ball, poisson, binomial, lognormal, pareto,
maxwell, double_sided_maxwell, geometric, triangular, wald).

References: scipy.stats (Debian's python3-scipy) for the distributions' moments, CDFs and PMFs;
scipy.special.gammainc for the implicit gradient of gamma samples; NumPy recomputations of JAX's
algorithms (jax/_src/random.py) from tessera.random's bit-exact split/uniform and its normal.
Every statistical test uses a FIXED key and a bound at the p < 1e-6 level, so none can flake:
sample means and variances within 6 standard errors of the analytic values, Kolmogorov-Smirnov
statistics below sqrt(-ln(1e-6 / 2) / 2) / sqrt(n), chi-square statistics on binned counts below
the chi2(dof) quantile at 1 - 1e-6.
"""

import math

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp

scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")

random = jax.random

N = 1 << 18  # KS bound ~0.0053: a 2% scale error (~0.008) is caught
KS_C = math.sqrt(-math.log(1e-6 / 2) / 2)  # ~2.69: KS statistic bound * sqrt(n)


def _key(i):
    return random.fold_in(random.key(20240518), i)


def _np(x):
    return np.asarray(x)


# ---------------------------------------------------------------- statistical checks

def check_moments(x, dist, what=""):
    """Sample mean and variance within 6 standard errors of `dist`'s (a frozen scipy.stats
    distribution with finite fourth moment)."""
    x = np.asarray(x, np.float64).ravel()
    n = x.size
    mean, var, _, kurt = (float(v) for v in dist.stats(moments="mvsk"))
    se_mean = math.sqrt(var / n)
    assert abs(x.mean() - mean) < 6 * se_mean, (what, x.mean(), mean, se_mean)
    se_var = var * math.sqrt((kurt + 2) / n)  # Var(s^2) ~ sigma^4 (excess kurtosis + 2) / n
    assert abs(x.var() - var) < 6 * se_var, (what, x.var(), var, se_var)


def check_ks(x, cdf, what=""):
    x = np.asarray(x, np.float64).ravel()
    stat = scipy_stats.kstest(x, cdf).statistic
    assert stat < KS_C / math.sqrt(x.size), (what, stat, KS_C / math.sqrt(x.size))


def check_ks_on_grid(x, cdf, grid, what=""):
    """The KS distance measured only at the points of `grid` (at most the full statistic, so
    the same bound holds): for samples whose float rounding piles mass onto an atom (Beta with
    tiny parameters rounds a quarter of its samples to exactly 1.0 in float32)."""
    x = np.sort(np.asarray(x, np.float64).ravel())
    ecdf = np.searchsorted(x, grid, side="right") / x.size
    stat = np.max(np.abs(ecdf - cdf(grid)))
    assert stat < KS_C / math.sqrt(x.size), (what, stat, KS_C / math.sqrt(x.size))


def check_continuous(x, dist, what="", moments=True):
    assert np.all(np.isfinite(np.asarray(x))), what
    if moments:
        check_moments(x, dist, what)
    check_ks(x, dist.cdf, what)


def check_discrete(x, dist, what=""):
    """Chi-square of binned counts against dist.pmf (bins with expected count >= 20; the two
    tails lumped), below the 1 - 1e-6 quantile; and the moments."""
    x = np.asarray(x).ravel()
    assert np.all(x == np.round(x)), what
    n = x.size
    lo, hi = dist.ppf(1e-9), dist.ppf(1 - 1e-9)
    ks = np.arange(max(lo, dist.support()[0]), hi + 1)
    expected = n * dist.pmf(ks)
    keep = expected >= 20
    ks, expected = ks[keep], expected[keep]
    observed = np.array([(x == k).sum() for k in ks], np.float64)
    # lump both tails into one bin
    tail_obs = n - observed.sum()
    tail_exp = n - expected.sum()
    stat = ((observed - expected) ** 2 / expected).sum()
    dof = len(ks) - 1
    if tail_exp >= 20:
        stat += (tail_obs - tail_exp) ** 2 / tail_exp
        dof += 1
    else:
        assert tail_obs <= max(20, 10 * tail_exp), (what, tail_obs, tail_exp)
    assert stat < scipy_stats.chi2.isf(1e-6, dof), (what, stat, dof)
    check_moments(x, dist, what)


# ---------------------------------------------------------------- gamma and loggamma

@pytest.mark.parametrize("a", [0.2, 1.0, 3.7, 60.0])
def test_gamma_statistics(a):
    x = random.gamma(_key(1), a, (N,))
    assert x.shape == (N,) and x.dtype == jnp.float32
    check_continuous(x, scipy_stats.gamma(a), f"gamma({a})")


@pytest.mark.parametrize("a", [0.05, 0.7, 5.0])
def test_loggamma_statistics_and_exp_matches_gamma(a):
    lx = random.loggamma(_key(2), a, (N,))
    assert lx.dtype == jnp.float32
    check_continuous(lx, scipy_stats.loggamma(a), f"loggamma({a})")
    # JAX's contract: exp(loggamma(key, a)) == gamma(key, a) up to rounding (same draws).
    g = _np(random.gamma(_key(2), a, (N,)))
    e = np.exp(_np(lx).astype(np.float64))
    ok = g > 1e-30  # below that gamma's float32 result is subnormal or flushed
    np.testing.assert_allclose(e[ok], g[ok], rtol=2e-5)


def test_loggamma_small_a_keeps_precision():
    # a = 1e-3: most Gamma(a) samples underflow float32, their logs do not.
    lx = _np(random.loggamma(_key(3), 1e-3, (4096,)))
    assert np.all(np.isfinite(lx)) and np.median(lx) < -200
    a = 1e-3

    def cdf(y):  # P(log X <= y) = gammainc(a, e^y) ~ e^(a y) / Gamma(a + 1) for e^y << 1
        y = np.asarray(y, np.float64)
        tiny = y < -20
        return np.where(tiny, np.exp(a * y - scipy_special.gammaln(a + 1)),
                        scipy_special.gammainc(a, np.exp(np.where(tiny, 0.0, y))))

    check_ks(lx, cdf, "loggamma(1e-3)")


def _gamma_one_reference(key, alpha):
    """JAX's _gamma_one recomputed in NumPy float32 from tessera.random's split/normal/uniform
    (scalar keys): the same key splits, draws and accept test."""
    f32 = np.float32
    alpha = f32(alpha)
    boost = alpha >= 1
    alpha_b = alpha if boost else f32(alpha + f32(1))
    d = f32(alpha_b - f32(1.0 / 3.0))
    c = f32(f32(1.0 / 3.0) / np.sqrt(d))
    ks = random.split(key)
    key, subkey = ks[0], ks[1]
    X, V, U = f32(0), f32(1), f32(2)

    def rejected(X, V, U):
        return (U >= f32(1) - f32(0.0331) * (X * X)) and (
            np.log(U) >= X * f32(0.5) + d * ((f32(1) - V) + np.log(V)))

    while rejected(X, V, U):
        k3 = random.split(key, 3)
        key, xkey, ukey = k3[0], k3[1], k3[2]
        x, v = f32(0), f32(-1)
        while v <= 0:
            k2 = random.split(xkey)
            xkey = k2[0]
            x = f32(_np(random.normal(k2[1], ())))
            v = f32(1) + x * c
        X, V = x * x, v * v * v
        U = f32(_np(random.uniform(ukey, ())))
    if boost:
        return d * V
    u = f32(1) - f32(_np(random.uniform(subkey, ())))
    return d * V * np.power(u, f32(1) / alpha)


def test_gamma_follows_jax_algorithm_and_key_splits():
    alphas = np.array([0.3, 1.0, 2.5, 9.0, 0.05, 4.0], np.float32)
    key = _key(4)
    got = _np(random.gamma(key, jnp.asarray(alphas)))
    keys = random.split(key, alphas.size)  # one key per element, as JAX's _gamma_impl
    want = np.array([_gamma_one_reference(keys[i], a) for i, a in enumerate(alphas)])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_gamma_shape_dtype_and_broadcasting():
    a = jnp.array([0.5, 1.0, 2.0])
    x = random.gamma(_key(5), a, (4, 3))
    assert x.shape == (4, 3) and x.dtype == jnp.float32
    # broadcasting the parameter first gives the same samples (one key per output element)
    np.testing.assert_array_equal(_np(x), _np(random.gamma(_key(5), jnp.broadcast_to(a, (4, 3)))))
    assert random.gamma(_key(5), a).shape == (3,)
    assert random.gamma(_key(5), 2.0).shape == ()
    assert random.gamma(_key(5), 2.0, (0, 2)).shape == (0, 2)
    # raw uint32[2] keys give the same numbers as typed keys
    np.testing.assert_array_equal(_np(random.gamma(random.PRNGKey(7), a)),
                                  _np(random.gamma(random.key(7), a)))
    assert random.gamma(_key(5), 2.0, dtype=jnp.bfloat16).dtype == jnp.bfloat16


def test_gamma_float64(x64):
    x = random.gamma(_key(6), 2.5, (N // 4,), dtype=jnp.float64)
    assert x.dtype == jnp.float64
    assert random.gamma(_key(6), 2.5).dtype == jnp.float64  # dtype=float follows x64
    check_continuous(x, scipy_stats.gamma(2.5), "gamma float64")


def test_gamma_without_x64_truncates_float64():
    assert random.gamma(_key(6), 2.5, dtype=jnp.float64).dtype == jnp.float32


# ---------------------------------------------------------------- gamma's gradient

def _implicit_dx_da(a, x, h=1e-6):
    """dx/da of x = F^-1(u; a) at fixed u: -(dF/da) / (dF/dx), F = regularized gammainc."""
    dF_da = (scipy_special.gammainc(a + h, x) - scipy_special.gammainc(a - h, x)) / (2 * h)
    return -dF_da / scipy_stats.gamma.pdf(x, a)


def test_gamma_grad_matches_implicit_function(x64):
    a = jnp.array([0.15, 0.6, 1.0, 2.5, 8.0, 40.0])
    key = _key(7)
    x = _np(random.gamma(key, a))
    g = _np(jax.grad(lambda a: random.gamma(key, a).sum())(a))
    np.testing.assert_allclose(g, _implicit_dx_da(_np(a), x), rtol=1e-5)
    # loggamma: d log(x) / da = (dx/da) / x
    gl = _np(jax.grad(lambda a: random.loggamma(key, a).sum())(a))
    np.testing.assert_allclose(gl, _implicit_dx_da(_np(a), x) / x, rtol=1e-5)
    # under jit, and the forward mode
    gj = _np(jax.jit(jax.grad(lambda a: random.gamma(key, a).sum()))(a))
    np.testing.assert_allclose(gj, g, rtol=1e-12)
    _, tangent = jax.jvp(lambda a: random.gamma(key, a), (a,), (jnp.ones_like(a),))
    np.testing.assert_allclose(_np(tangent), g, rtol=1e-12)


def test_gamma_grad_float32_and_broadcast_parameter():
    key = _key(8)
    # a scalar parameter broadcast to shape (64,): the gradient sums the 64 implicit derivatives
    g = float(jax.grad(lambda a: random.gamma(key, a, (64,)).sum())(jnp.float32(1.7)))
    x = _np(random.gamma(key, 1.7, (64,))).astype(np.float64)
    want = _implicit_dx_da(1.7, x).sum()
    assert abs(g - want) < 1e-3 * abs(want)
    # derived samplers differentiate through gamma: the chi-square mean's derivative in df
    df = jnp.float32(3.0)
    gc = float(jax.grad(lambda d: random.chisquare(key, d, (4096,)).mean())(df))
    assert abs(gc - 1.0) < 0.1  # E[chi2(df)] = df


# ---------------------------------------------------------------- samplers built on gamma

def test_beta():
    x = random.beta(_key(10), 2.0, 3.5, (N,))
    check_continuous(x, scipy_stats.beta(2.0, 3.5), "beta(2, 3.5)")
    small = _np(random.beta(_key(11), 0.05, 0.08, (N,)))
    assert np.all((small >= 0) & (small <= 1))
    grid = np.concatenate([np.logspace(-30, -1, 300), np.linspace(0.1, 1 - 1e-4, 300)])
    check_ks_on_grid(small, scipy_stats.beta(0.05, 0.08).cdf, grid, "beta(0.05, 0.08)")
    b = random.beta(_key(12), jnp.array([1.0, 2.0, 3.0]), jnp.ones((4, 1)))
    assert b.shape == (4, 3)


def test_dirichlet():
    alpha = np.array([0.5, 2.0, 3.5], np.float32)
    x = _np(random.dirichlet(_key(13), jnp.asarray(alpha), (N,)))
    assert x.shape == (N, 3) and x.dtype == np.float32
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    s = alpha.sum()
    for i, ai in enumerate(alpha):  # each coordinate is Beta(alpha_i, sum - alpha_i)
        check_continuous(x[:, i], scipy_stats.beta(ai, s - ai), f"dirichlet[{i}]")
    assert random.dirichlet(_key(13), jnp.ones((2, 4))).shape == (2, 4)
    assert random.dirichlet(_key(13), jnp.ones((2, 4)), (5, 2)).shape == (5, 2, 4)
    # tiny concentrations stay on the simplex (loggamma + a stable softmax)
    tiny = _np(random.dirichlet(_key(14), jnp.full((5,), 1e-3), (256,)))
    assert np.all(np.isfinite(tiny)) and np.allclose(tiny.sum(-1), 1.0, rtol=1e-5)


def test_chisquare_t_f():
    check_continuous(random.chisquare(_key(15), 3.0, (N,)), scipy_stats.chi2(3.0), "chi2(3)")
    check_continuous(random.chisquare(_key(16), 0.4, (N,)), scipy_stats.chi2(0.4), "chi2(0.4)")
    check_continuous(random.t(_key(17), 9.0, (N,)), scipy_stats.t(9.0), "t(9)")
    check_ks(random.t(_key(18), 1.5, (N,)), scipy_stats.t(1.5).cdf, "t(1.5)")
    check_continuous(random.f(_key(19), 6.0, 20.0, (N,)), scipy_stats.f(6.0, 20.0), "f(6, 20)")
    check_ks(random.f(_key(20), 2.0, 3.0, (N,)), scipy_stats.f(2.0, 3.0).cdf, "f(2, 3)")


def test_generalized_normal_and_ball():
    for i, p in enumerate([0.7, 1.0, 2.0, 5.0]):
        x = random.generalized_normal(_key(21 + i), p, (N,))
        assert x.shape == (N,) and x.dtype == jnp.float32
        check_continuous(x, scipy_stats.gennorm(p), f"generalized_normal({p})")
    for i, (d, p) in enumerate([(3, 2.0), (2, 1.0), (5, 4.0)]):
        x = _np(random.ball(_key(30 + i), d, p, (N // 2,))).astype(np.float64)
        assert x.shape == (N // 2, d)
        r = (np.abs(x) ** p).sum(-1) ** (1 / p)
        assert np.all(r <= 1 + 1e-5)
        # uniform on the unit Lp ball: P(|x|_p <= s) = s^d for every p
        check_ks(r ** d, scipy_stats.uniform().cdf, f"ball(d={d}, p={p}) radius")
        # and symmetric in each coordinate
        assert abs((x[:, 0] > 0).mean() - 0.5) < 6 * 0.5 / math.sqrt(N // 2)
    assert random.ball(_key(33), 4).shape == (4,)


# ---------------------------------------------------------------- discrete samplers

@pytest.mark.parametrize("lam", [0.4, 3.0, 9.5, 10.0, 47.0, 1000.0])
def test_poisson(lam):
    x = random.poisson(_key(40), lam, (N,))
    assert x.dtype == jnp.int32 and x.shape == (N,)
    check_discrete(x, scipy_stats.poisson(lam), f"poisson({lam})")


def test_poisson_parameters_and_edges():
    lam = jnp.array([0.0, 2.0, 30.0])
    x = _np(random.poisson(_key(41), lam, (1000, 3)))
    assert x.shape == (1000, 3)
    assert np.all(x[:, 0] == 0) and np.all(x >= 0)
    assert abs(x[:, 1].mean() - 2.0) < 6 * math.sqrt(2.0 / 1000)
    assert abs(x[:, 2].mean() - 30.0) < 6 * math.sqrt(30.0 / 1000)
    assert random.poisson(_key(41), lam).shape == (3,)
    assert random.poisson(_key(41), 3.0, (2,), dtype=jnp.int16).dtype == jnp.int16


@pytest.mark.parametrize("n,p", [(20, 0.3), (7, 0.9), (60, 0.5), (1000, 0.02), (500, 0.75)])
def test_binomial(n, p):
    x = random.binomial(_key(42), n, p, (N,))
    assert x.dtype == jnp.float32 and x.shape == (N,)
    check_discrete(x, scipy_stats.binom(n, p), f"binomial({n}, {p})")


def test_binomial_edge_cases():
    n = jnp.array([10.0, 10.0, -1.0, jnp.nan, jnp.inf, 0.0, 10.0])
    p = jnp.array([0.0, 1.0, 0.5, 0.5, 0.5, 0.5, jnp.nan])
    x = _np(random.binomial(_key(43), n, p))
    assert x[0] == 0 and x[1] == 10 and x[5] == 0
    assert np.isnan(x[2]) and np.isnan(x[3]) and np.isnan(x[6]) and x[4] == np.inf
    assert random.binomial(_key(43), 5, jnp.full((2, 3), 0.5)).shape == (2, 3)


def test_geometric():
    for i, p in enumerate([0.05, 0.3, 0.8]):
        x = random.geometric(_key(44 + i), p, (N,))
        assert x.dtype == jnp.int32
        check_discrete(x, scipy_stats.geom(p), f"geometric({p})")


# ---------------------------------------------------------------- closed-form samplers

def test_checks_detect_two_percent_errors():
    """The statistical checks have the power to see small errors at this N: samples scaled by
    2% (a wrong scale parameter) or drawn at a 2% larger rate must fail them, while the true
    samples pass (the previous N = 2^16 missed a 2% lognormal scale error)."""
    x = np.asarray(random.lognormal(_key(90), 1.0, (N,)), np.float64)
    check_continuous(x, scipy_stats.lognorm(1.0), "lognormal(1)")
    with pytest.raises(AssertionError):
        check_continuous(1.02 * x, scipy_stats.lognorm(1.0), "lognormal(1) scaled by 1.02")
    g = np.asarray(random.gamma(_key(91), 2.0, (N,)), np.float64)
    check_continuous(g, scipy_stats.gamma(2.0), "gamma(2)")
    with pytest.raises(AssertionError):
        check_ks(1.02 * g, scipy_stats.gamma(2.0).cdf, "gamma(2) scaled by 1.02")
    lam = np.float32(10.0)
    k = np.asarray(random.poisson(_key(92), lam * 1.02, (N,)))
    check_discrete(k, scipy_stats.poisson(10.2), "poisson(10.2)")
    with pytest.raises(AssertionError):
        check_discrete(k, scipy_stats.poisson(10.0), "poisson(10.2) against poisson(10)")


def test_lognormal_pareto_maxwell_wald():
    check_continuous(random.lognormal(_key(50), 0.5, (N,)), scipy_stats.lognorm(0.5),
                     "lognormal(0.5)")
    assert random.lognormal(_key(50)).shape == ()
    check_continuous(random.pareto(_key(51), 5.0, (N,)), scipy_stats.pareto(5.0), "pareto(5)")
    check_ks(random.pareto(_key(52), 1.2, (N,)), scipy_stats.pareto(1.2).cdf, "pareto(1.2)")
    check_continuous(random.maxwell(_key(53), (N,)), scipy_stats.maxwell(), "maxwell")
    check_continuous(random.wald(_key(54), 1.5, (N,)), scipy_stats.invgauss(1.5), "wald(1.5)")


def test_double_sided_maxwell():
    x = _np(random.double_sided_maxwell(_key(55), 1.0, 2.0, (N,))).astype(np.float64)
    z = (x - 1.0) / 2.0
    check_continuous(np.abs(z), scipy_stats.maxwell(), "|double_sided_maxwell|")
    assert abs((z > 0).mean() - 0.5) < 6 * 0.5 / math.sqrt(N)
    # JAX's shape rule: shape + broadcast(loc, scale).shape, an empty shape replaced first
    assert random.double_sided_maxwell(_key(55), 0.0, 1.0, (4,)).shape == (4,)
    assert random.double_sided_maxwell(_key(55), jnp.zeros(2), 1.0, (4,)).shape == (4, 2)
    assert random.double_sided_maxwell(_key(55), jnp.zeros(2), 1.0).shape == (2, 2)


def test_triangular_is_jax_inverse_cdf_bit_for_bit():
    left, mode, right = -1.0, 0.5, 3.0
    key = _key(56)
    x = _np(random.triangular(key, left, mode, right, (N,)))
    check_continuous(x, scipy_stats.triang((mode - left) / (right - left), loc=left,
                                           scale=right - left), "triangular")
    # JAX's float32 operations on the (bit-exact) uniform draws
    f32 = np.float32
    u = _np(random.uniform(key, (N,)))
    lf, md, rt = f32(left), f32(mode), f32(right)
    fc = (md - lf) / (rt - lf)
    out1 = lf + np.sqrt(u * (rt - lf) * (md - lf))
    out2 = rt - np.sqrt((f32(1) - u) * (rt - lf) * (rt - md))
    np.testing.assert_array_equal(x, np.where(u < fc, out1, out2))
    assert random.triangular(key, jnp.zeros(3), 0.5, jnp.ones((2, 1))).shape == (2, 3)


# ---------------------------------------------------------------- transformations

SAMPLERS = {
    "gamma": lambda k, a: random.gamma(k, a, (5,)),
    "loggamma": lambda k, a: random.loggamma(k, a, (5,)),
    "beta": lambda k, a: random.beta(k, a, 2.0, (5,)),
    "dirichlet": lambda k, a: random.dirichlet(k, jnp.stack([a, a + 1.0]), (5,)),
    "chisquare": lambda k, a: random.chisquare(k, a, (5,)),
    "t": lambda k, a: random.t(k, a, (5,)),
    "f": lambda k, a: random.f(k, a, 3.0, (5,)),
    "poisson": lambda k, a: random.poisson(k, a * 7.0, (5,)),
    "binomial": lambda k, a: random.binomial(k, a * 30.0, 0.4, (5,)),
    "lognormal": lambda k, a: random.lognormal(k, a, (5,)),
    "pareto": lambda k, a: random.pareto(k, a, (5,)),
    "geometric": lambda k, a: random.geometric(k, a / 4.0, (5,)),
    "triangular": lambda k, a: random.triangular(k, 0.0, a / 4.0, 1.0, (5,)),
    "wald": lambda k, a: random.wald(k, a, (5,)),
    "generalized_normal": lambda k, a: random.generalized_normal(k, 1.5, (5,)) * a,
    "ball": lambda k, a: random.ball(k, 3, 2, (5,)) * a,
    "maxwell": lambda k, a: random.maxwell(k, (5,)) * a,
    "double_sided_maxwell": lambda k, a: random.double_sided_maxwell(k, a, 1.0, (5,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_and_vmap_equal_eager(name):
    f = SAMPLERS[name]
    key = _key(60)
    a = jnp.float32(2.5)
    eager = _np(f(key, a))
    np.testing.assert_array_equal(_np(jax.jit(f)(key, a)), eager)
    keys = random.split(key, 3)
    per_key = np.stack([_np(f(keys[i], a)) for i in range(3)])
    np.testing.assert_array_equal(_np(jax.vmap(f, (0, None))(keys, a)), per_key)
    params = jnp.array([0.7, 1.5, 3.0])
    per_param = np.stack([_np(f(key, params[i])) for i in range(3)])
    np.testing.assert_array_equal(_np(jax.vmap(f, (None, 0))(key, params)), per_param)
    np.testing.assert_array_equal(_np(jax.jit(jax.vmap(f))(keys, params)),
                                  np.stack([_np(f(keys[i], params[i])) for i in range(3)]))


def test_same_key_same_numbers_and_keys_matter():
    a = _np(random.gamma(_key(61), 1.3, (64,)))
    np.testing.assert_array_equal(a, _np(random.gamma(_key(61), 1.3, (64,))))
    assert not np.array_equal(a, _np(random.gamma(_key(62), 1.3, (64,))))


# ---------------------------------------------------------------- argument errors (JAX's texts)

def test_errors():
    key = _key(70)
    msg = ("gamma parameter shapes must be broadcast-compatible with shape argument, and the "
           "result of broadcasting the shapes must equal the shape argument, but got result "
           r"\(2, 3\) for shape argument \(3,\)\.")
    with pytest.raises(ValueError, match=msg):
        random.gamma(key, jnp.ones((2, 1)), (3,))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting"):
        random.gamma(key, jnp.ones(3), (2, 4))
    with pytest.raises(ValueError, match="dtype argument to `gamma` must be a float dtype"):
        random.gamma(key, 1.0, dtype=jnp.int32)
    with pytest.raises(ValueError, match="dtype argument to `beta` must be a float dtype"):
        random.beta(key, 1.0, 1.0, dtype=int)
    with pytest.raises(ValueError, match="dtype argument to `geometric` must be an int dtype"):
        random.geometric(key, 0.5, dtype=jnp.float32)
    with pytest.raises(ValueError, match="dtype argument to `poisson` must be an int dtype"):
        random.poisson(key, 1.0, dtype=jnp.float32)
    with pytest.raises(ValueError, match="must be a float or complex dtype"):
        random.lognormal(key, 1.0, dtype=jnp.int32)
    with pytest.raises(ValueError,
                       match=r"dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0"):
        random.dirichlet(key, 1.0)
    with pytest.raises(ValueError, match="dirichlet parameter shapes must be broadcast-compatible"):
        random.dirichlet(key, jnp.ones((2, 3)), (3, 1))
    with pytest.raises(ValueError, match="t parameter shapes"):  # JAX: t's shape defaults to ()
        random.t(key, jnp.ones(3))
    with pytest.raises(ValueError, match="binomial parameter shapes"):
        random.binomial(key, jnp.ones(3), 0.5, (2, 1))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
        random.gamma(key, 1.0, 3)
    with pytest.raises(TypeError, match=r"gamma accepts a single key, but was given a key array "
                                        r"of shape \(2,\) != \(\)\. Use jax.vmap for batching\."):
        random.gamma(random.split(key), 1.0)
