"""jax.scipy.special exp1, expi, expn, spence, hyp1f1, hyp2f1, lpmn, lpmn_values, fresnel
against scipy.special on fresh random inputs (float64 under jax_enable_x64, float32 under
jit), derivatives against float64 finite differences. SciPy 1.10 is itself inexact in places
(hyp2f1 for x < -1 to ~1e-10, expi near its root to ~1e-12): elements that miss SciPy are
judged against mpmath at 40 digits instead (_close_or_mpmath)."""
import math

import numpy as np
import pytest
import scipy.special as ss

import tessera as jax
import tessera.numpy as jnp
from tessera.scipy import special as ts


def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def _close(got, want, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol,
                               equal_nan=True)


def _close_or_mpmath(got, want, rtol, mp_fun, *args, kappa=None):
    """got within rtol of SciPy's want, or, where it is not, within rtol of mpmath's value.
    kappa: the function's relative condition number at args (near a root the error of any
    evaluation in got's dtype is about eps * kappa), which widens rtol by 8 eps kappa."""
    mp = pytest.importorskip("mpmath")
    eps = np.finfo(np.asarray(got).dtype).eps
    got = np.asarray(got, np.float64)
    if kappa is not None:
        with np.errstate(all="ignore"):
            rtol = rtol + 8 * eps * np.nan_to_num(kappa, posinf=0)
    args = np.broadcast_arrays(*[np.asarray(a, np.float64) for a in args])
    def close(ref):
        with np.errstate(invalid="ignore"):
            return ((np.isnan(got) & np.isnan(ref)) | (got == ref)
                    | (np.abs(got - ref) <= rtol * np.abs(ref)))
    miss = ~close(want)
    ref = np.array(want, np.float64, copy=True)
    with mp.workdps(40):
        for i in zip(*np.nonzero(miss)):
            ref[i] = float(mp.re(mp_fun(*[mp.mpf(float(a[i])) for a in args])))
    ok = close(ref)
    assert ok.all(), f"{np.count_nonzero(~ok)} beyond tolerance: got {got[~ok]}, want {ref[~ok]}"


def test_exp_integrals_x64(x64, rng):
    x = np.concatenate([rng.uniform(-60, 60, 200), rng.uniform(0, 2, 50),
                        [0.0, 1e-9, 1.0, 40.0, 300.0, 700.0, -1.0, np.nan]])
    import mpmath as mp
    with np.errstate(all="ignore"):  # expi's root at 0.3725: kappa = |x Ei'(x) / Ei(x)|
        kappa = np.abs(np.exp(x) / ss.expi(x))
    _close_or_mpmath(ts.expi(jnp.asarray(x)), ss.expi(x), 1e-12, mp.ei, x, kappa=kappa)
    _close_or_mpmath(ts.exp1(jnp.asarray(x)), ss.exp1(x), 1e-12, mp.e1, x)
    xa = np.abs(x)
    for n in [0, 1, 2, 3, 6, int(rng.integers(7, 30))]:
        _close_or_mpmath(ts.expn(n, jnp.asarray(xa)), ss.expn(n, xa), 1e-12,
                         lambda v, n=n: mp.expint(n, v), xa)
    assert np.isnan(float(ts.expn(-1, 1.0))) and np.isnan(float(ts.expn(2, -1.0)))
    ns = rng.integers(0, 12, size=40)
    xs = rng.uniform(0.01, 20, size=40)
    _close(ts.expn(jnp.asarray(ns), jnp.asarray(xs)), ss.expn(ns, xs), 1e-12)


def test_exp_integrals_float32_jit(rng):
    x = rng.uniform(-30, 60, 100).astype(np.float32)
    import mpmath as mp
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):  # expi's root at 0.3725: kappa = |x Ei'(x) / Ei(x)|
        kappa = {"expi": np.abs(np.exp(x64) / ss.expi(x64)), "exp1": None}
    for name, mp_fun in (("expi", mp.ei), ("exp1", mp.e1)):
        got = jax.jit(getattr(ts, name))(jnp.asarray(x))
        assert got.dtype == jnp.float32
        _close_or_mpmath(got, getattr(ss, name)(x64), 2e-5, mp_fun, x64, kappa=kappa[name])
    got = jax.jit(ts.expn)(jnp.asarray(3, jnp.int32), jnp.asarray(np.abs(x)))
    assert got.dtype == jnp.float32
    _close(got, ss.expn(3, np.abs(x).astype(np.float64)), 2e-5, 1e-30)


def test_exp_integrals_grads(x64, rng):
    for x in rng.uniform(0.2, 8, 3):
        _close(jax.grad(ts.expi)(x), _fd(ss.expi, x), 1e-6)
        _close(jax.grad(ts.expi)(-x), _fd(ss.expi, -x), 1e-6)
        _close(jax.grad(ts.exp1)(x), _fd(ss.exp1, x), 1e-6)
        for n in (0, 1, 4):
            _close(jax.grad(ts.expn, argnums=1)(float(n), x), _fd(lambda v: ss.expn(n, v), x),
                   1e-6)


def test_spence(x64, rng):
    x = np.concatenate([rng.uniform(0, 3, 200), rng.uniform(3, 1e4, 50),
                        [0.0, 0.5, 1.0, 2.0, -1.0, np.nan]])
    _close(ts.spence(jnp.asarray(x)), ss.spence(x), 1e-12, 1e-15)
    got = jax.jit(ts.spence)(jnp.asarray(x[:100], jnp.float32))
    assert got.dtype == jnp.float32
    _close(got, ss.spence(x[:100].astype(np.float32).astype(np.float64)), 1e-5, 1e-6)
    for v in list(rng.uniform(0.1, 4, 3)) + [1.0]:
        _close(jax.grad(ts.spence)(v), _fd(ss.spence, v), 1e-6)


def test_hyp1f1(x64, rng):
    a, b = rng.uniform(0.1, 5, 300), rng.uniform(0.1, 5, 300)
    x = rng.uniform(-30, 60, 300)
    _close(ts.hyp1f1(jnp.asarray(a), jnp.asarray(b), jnp.asarray(x)), ss.hyp1f1(a, b, x), 1e-11)
    xl = rng.uniform(100, 300, 30)
    _close(ts.hyp1f1(jnp.asarray(a[:30]), jnp.asarray(b[:30]), jnp.asarray(xl)),
           ss.hyp1f1(a[:30], b[:30], xl), 1e-11)
    # JAX's conventions: a = 0 -> 1 (also for b = 0), a = b -> e^x, b = 0 -> inf
    np.testing.assert_array_equal(np.asarray(ts.hyp1f1(jnp.asarray([0.0, 0.0, 2.0, 1.5]),
                                                       jnp.asarray([0.0, 3.0, 2.0, 0.0]), 1.5)),
                                  [1.0, 1.0, math.exp(1.5), np.inf])


def test_hyp1f1_float32_jit(rng):
    a = rng.uniform(0.2, 3, 50).astype(np.float32)
    b = rng.uniform(0.2, 3, 50).astype(np.float32)
    x = rng.uniform(0, 20, 50).astype(np.float32)
    got = jax.jit(ts.hyp1f1)(jnp.asarray(a), jnp.asarray(b), jnp.asarray(x))
    assert got.dtype == jnp.float32
    _close(got, ss.hyp1f1(a.astype(np.float64), b.astype(np.float64), x.astype(np.float64)),
           1e-4)


def test_hyp1f1_grads(x64, rng):
    a, b, x = rng.uniform(0.3, 3), rng.uniform(0.3, 3), rng.uniform(0.1, 10)
    g = jax.grad(ts.hyp1f1, argnums=(0, 1, 2))(a, b, x)
    _close(g[0], _fd(lambda v: ss.hyp1f1(v, b, x), a), 1e-6)
    _close(g[1], _fd(lambda v: ss.hyp1f1(a, v, x), b), 1e-6)
    _close(g[2], _fd(lambda v: ss.hyp1f1(a, b, v), x), 1e-6)


def test_hyp2f1(x64, rng):
    a, b, c = rng.uniform(0.1, 5, 300), rng.uniform(0.1, 5, 300), rng.uniform(0.1, 6, 300)
    x = rng.uniform(-3, 0.95, 300)
    import mpmath as mp
    _close_or_mpmath(ts.hyp2f1(*[jnp.asarray(v) for v in (a, b, c, x)]), ss.hyp2f1(a, b, c, x),
                     1e-10, mp.hyp2f1, a, b, c, x)
    # terminating polynomials, x = 1 (Gauss's sum), x > 1, and the b = c / a = c shortcuts
    cases = [(-3.0, 2.0, 4.0, 0.7), (2.0, -4.0, 1.5, 0.9), (1.0, 1.0, 3.0, 1.0),
             (0.5, 1.2, 4.0, 1.0), (1.0, 2.0, 3.0, 1.5), (1.3, 2.0, 2.0, 0.6),
             (2.0, 0.7, 2.0, -0.4), (0.0, 2.0, 3.0, 0.4)]
    for case in cases:
        _close(ts.hyp2f1(*case), ss.hyp2f1(*case), 1e-12)
    got = jax.jit(ts.hyp2f1)(*[jnp.asarray(v[:40], jnp.float32) for v in (a, b, c)],
                             jnp.asarray(np.clip(x[:40], 0, 0.8), jnp.float32))
    assert got.dtype == jnp.float32
    _close(got, ss.hyp2f1(*[v[:40].astype(np.float32).astype(np.float64) for v in (a, b, c)],
                          np.clip(x[:40], 0, 0.8).astype(np.float32).astype(np.float64)), 1e-4)
    for xv in (rng.uniform(-2, -0.1), rng.uniform(0.1, 0.9)):
        _close(jax.grad(ts.hyp2f1, argnums=3)(1.3, 0.7, 2.2, xv),
               _fd(lambda v: ss.hyp2f1(1.3, 0.7, 2.2, v), xv), 1e-6)


@pytest.mark.parametrize("m,n", [(0, 0), (2, 2), (3, 6), (1, 8)])
def test_lpmn_vs_scipy(x64, rng, m, n):
    z = rng.uniform(-0.99, 0.99, 9)
    p, d = jax.jit(lambda z: ts.lpmn(m, n, z))(jnp.asarray(z))
    assert p.shape == d.shape == (m + 1, n + 1, 9)
    pn = ts.lpmn_values(m, n, jnp.asarray(z), True)
    pu = ts.lpmn_values(m, n, jnp.asarray(z), False)
    for i, zz in enumerate(z):
        P, D = ss.lpmn(m, n, zz)
        _close(np.asarray(p)[:, :, i], P, 1e-10, 1e-12)
        _close(np.asarray(pu)[:, :, i], P, 1e-10, 1e-12)
        _close(np.asarray(d)[:, :, i], D, 1e-9, 1e-10)
        norm = np.array([[math.sqrt((2 * ll + 1) / (4 * math.pi) * math.factorial(ll - k)
                                    / math.factorial(ll + k)) if ll >= k else 0.0
                          for ll in range(n + 1)] for k in range(m + 1)])
        _close(np.asarray(pn)[:, :, i], norm * P, 1e-10, 1e-12)


def test_lpmn_float32_and_errors():
    z = jnp.asarray([-0.5, 0.1, 0.7], jnp.float32)
    p, _ = ts.lpmn(2, 3, z)
    assert p.dtype == jnp.float32
    _close(np.asarray(p)[:, :, 1], ss.lpmn(2, 3, np.float32(0.1))[0], 1e-5, 1e-6)
    with pytest.raises(ValueError, match="must be greater than or equal to order"):
        ts.lpmn(3, 2, z)
    with pytest.raises(ValueError, match="z must be a 1D array"):
        ts.lpmn_values(1, 2, jnp.zeros((2, 2)), False)
    with pytest.raises(TypeError, match="is not supported"):
        ts.lpmn(1, 2, jnp.asarray([1, 2]))
    with pytest.raises(NotImplementedError, match="complex"):
        ts.sph_harm(jnp.asarray([1]), jnp.asarray([2]), z, z)


def test_fresnel(x64, rng):
    x = np.concatenate([rng.uniform(-12, 12, 300), rng.uniform(5, 1e4, 20),
                        [0.0, 4.99, 5.01, -7e4, np.inf, -np.inf]])
    s, c = ts.fresnel(jnp.asarray(x))
    sw, cw = ss.fresnel(x)
    _close(s, sw, 0, 1e-11)
    _close(c, cw, 0, 1e-11)
    x32 = x.astype(np.float32)
    s, c = jax.jit(ts.fresnel)(jnp.asarray(x32))
    assert s.dtype == c.dtype == jnp.float32
    sw, cw = ss.fresnel(x32.astype(np.float64))
    # float32's quadrature angles (up to 39 rad near |x| = 5) carry ~eps * 39 each: measured
    # worst 2.3e-6 over 2.2M points of [-12, 12] and [5, 1e4]
    _close(s, sw, 0, 4e-6)
    _close(c, cw, 0, 4e-6)
    for v in rng.uniform(-7, 7, 3):
        gs = jax.grad(lambda t: ts.fresnel(t)[0])(v)
        gc = jax.grad(lambda t: ts.fresnel(t)[1])(v)
        _close(gs, _fd(lambda t: ss.fresnel(t)[0], v), 1e-6, 1e-9)
        _close(gc, _fd(lambda t: ss.fresnel(t)[1], v), 1e-6, 1e-9)


def test_vmap_matches_loop(x64, rng):
    # the while_loop-based functions batch their loops: vmap equals a loop of single calls
    x = rng.uniform(0.1, 30, (3, 4))
    a, b, c = rng.uniform(0.2, 3, 3)
    funs = {"expi": ts.expi, "exp1": ts.exp1, "spence": ts.spence,
            "expn": lambda v: ts.expn(3, v), "hyp1f1": lambda v: ts.hyp1f1(a, b, v),
            "hyp2f1": lambda v: ts.hyp2f1(a, b, c, v / 31), "fresnel": lambda v: ts.fresnel(v)[1]}
    for name, f in funs.items():
        got = np.asarray(jax.vmap(f)(jnp.asarray(x)))
        want = np.stack([np.asarray(f(jnp.asarray(row))) for row in x])
        np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=name)
