"""tessera.lax.cond / switch / while_loop / fori_loop / scan / map (JAX's API) on fresh random
inputs: an RNN written with scan differentiated against PyTorch autograd (float64), gradients of
cond / switch / fori_loop against float64 finite differences, vmap against Python loops, jvp of
while_loop, nested loops, Newton / bisection / RK4 against float64 NumPy, map with batch_size,
scan's length / reverse / unroll / pytrees, make_jaxpr text and JAX's error messages.

The seed comes from TESSERA_TEST_SEED (or the clock) and is printed with each test's output.
"""
import re

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax



def A(x):
    return np.asarray(x, dtype=np.float64)


def fd_grad(f, x, eps=1e-6):
    """Central differences of a float64 NumPy function of one array."""
    x = A(x)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


# ---------------------------------------------------------------- RNN: grad through scan vs torch

def test_rnn_scan_grad_matches_torch_autograd(rng, x64):
    torch = pytest.importorskip("torch")
    T, d, h = 7, 3, 5
    params = {"W": rng.normal(0, 0.5, (h, h)), "U": rng.normal(0, 0.5, (h, d)),
              "b": rng.normal(0, 0.1, h), "v": rng.normal(0, 0.5, h)}
    xs, targets, h0 = rng.normal(size=(T, d)), rng.normal(size=T), rng.normal(size=h)

    def loss(p, h0, xs, targets):
        def step(hc, x):
            hn = jnp.tanh(jnp.dot(p["W"], hc) + jnp.dot(p["U"], x) + p["b"])
            return hn, jnp.dot(p["v"], hn)
        hT, ys = lax.scan(step, h0, xs)
        return jnp.sum((ys - targets) ** 2) + 0.5 * jnp.sum(hT ** 2)

    tp = {k: jnp.asarray(v) for k, v in params.items()}
    val, (gp, gh0) = jax.value_and_grad(loss, argnums=(0, 1))(tp, jnp.asarray(h0),
                                                               jnp.asarray(xs), targets)

    P = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    H0 = torch.tensor(h0, dtype=torch.float64, requires_grad=True)
    hc, ys = H0, []
    for t in range(T):
        hc = torch.tanh(P["W"] @ hc + P["U"] @ torch.tensor(xs[t]) + P["b"])
        ys.append(P["v"] @ hc)
    ref = ((torch.stack(ys) - torch.tensor(targets)) ** 2).sum() + 0.5 * (hc ** 2).sum()
    ref.backward()
    assert gp["W"].dtype == np.float64
    np.testing.assert_allclose(float(val), ref.item(), rtol=1e-12)
    for k in params:
        np.testing.assert_allclose(A(gp[k]), P[k].grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(A(gh0), H0.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- gradients vs finite differences

def test_grad_of_cond_both_branches(rng, x64):
    y = rng.normal(size=4)

    def f(x):
        return lax.cond(jnp.sum(x) > 0,
                        lambda a, b: jnp.sum(jnp.sin(a) * b),
                        lambda a, b: jnp.sum(a ** 2 * jnp.cos(b)), x, y)

    def f_np(x):
        return np.sum(np.sin(x) * y) if x.sum() > 0 else np.sum(x ** 2 * np.cos(y))

    for sign in (1.0, -1.0):
        x = sign * np.abs(rng.normal(size=4)) + sign * 0.1
        np.testing.assert_allclose(float(f(jnp.asarray(x))), f_np(x), rtol=1e-12)
        g = jax.grad(f)(jnp.asarray(x))
        np.testing.assert_allclose(A(g), fd_grad(f_np, x), rtol=1e-7, atol=1e-8)


def test_grad_of_switch_clamps_index(rng, x64):
    branches_np = [lambda x: np.sum(np.sin(x)), lambda x: np.sum(x ** 3),
                   lambda x: np.sum(np.exp(x / 3))]
    branches = [lambda x: jnp.sum(jnp.sin(x)), lambda x: jnp.sum(x ** 3),
                lambda x: jnp.sum(jnp.exp(x / 3))]
    x = rng.normal(size=5)
    for index in (-3, 0, 1, 2, 9):
        ref = branches_np[min(max(index, 0), 2)]
        f = lambda x, i: lax.switch(i, branches, x)  # noqa: E731
        np.testing.assert_allclose(float(f(jnp.asarray(x), index)), ref(x), rtol=1e-12)
        g = jax.grad(f)(jnp.asarray(x), jnp.int32(index))
        np.testing.assert_allclose(A(g), fd_grad(ref, x), rtol=1e-7, atol=1e-8)


def test_grad_of_static_fori_loop(rng, x64):
    n = int(rng.integers(3, 8))

    def f(x):
        return jnp.sum(lax.fori_loop(0, n, lambda i, c: c * jnp.cos(c) + 0.1 * i, x))

    def f_np(x):
        for i in range(n):
            x = x * np.cos(x) + 0.1 * i
        return np.sum(x)

    x = rng.uniform(-1, 1, 4)
    np.testing.assert_allclose(float(f(jnp.asarray(x))), f_np(x), rtol=1e-12)
    np.testing.assert_allclose(A(jax.grad(f)(jnp.asarray(x))), fd_grad(f_np, x),
                               rtol=1e-7, atol=1e-8)
    # static bounds stage a scan (reverse-mode differentiable), traced bounds a while
    assert "scan" in str(jax.make_jaxpr(f)(jnp.asarray(x)))
    dyn = jax.make_jaxpr(lambda x, m: lax.fori_loop(0, m, lambda i, c: c * 2.0, x))
    text = str(dyn(jnp.asarray(x), 3))
    assert "while" in text and "scan" not in text


def test_grad_of_scan_with_pytree_carry_and_xs(rng, x64):
    xs = {"a": rng.normal(size=(6, 3)), "b": rng.normal(size=6)}

    def f(w):
        def step(c, x):
            s, p = c["s"], c["p"]
            s = s + jnp.sin(x["a"] * w) * x["b"]
            return {"s": s, "p": p * jnp.tanh(s)}, jnp.sum(s)
        c, ys = lax.scan(step, {"s": jnp.zeros(3), "p": jnp.ones(3)}, xs)
        return jnp.sum(c["p"]) + jnp.sum(ys ** 2)

    def f_np(w):
        s, p, tot = np.zeros(3), np.ones(3), 0.0
        for t in range(6):
            s = s + np.sin(xs["a"][t] * w) * xs["b"][t]
            p = p * np.tanh(s)
            tot += np.sum(s) ** 2
        return np.sum(p) + tot

    w = rng.normal(size=3)
    np.testing.assert_allclose(float(f(jnp.asarray(w))), f_np(w), rtol=1e-12)
    np.testing.assert_allclose(A(jax.grad(f)(jnp.asarray(w))), fd_grad(f_np, w),
                               rtol=1e-7, atol=1e-8)


def test_hessian_through_scan_and_cond(rng, x64):
    xs = rng.normal(size=4)

    def f(w):
        c, _ = lax.scan(lambda c, v: (c * jnp.sin(w * v) + v, None), w, xs)
        return lax.cond(jnp.sum(c) > 0, lambda c: jnp.sum(c ** 3), lambda c: jnp.sum(jnp.exp(c)),
                        c)

    def f_np(w):
        c = w.copy()
        for v in xs:
            c = c * np.sin(w * v) + v
        return np.sum(c ** 3) if np.sum(c) > 0 else np.sum(np.exp(c))

    w = rng.uniform(-1, 1, 3)
    H = A(jax.hessian(f)(jnp.asarray(w)))
    eps, n = 1e-4, len(w)
    ref = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            ref[i, j] = (f_np(w + ei + ej) - f_np(w + ei - ej) - f_np(w - ei + ej)
                         + f_np(w - ei - ej)) / (4 * eps * eps)
    np.testing.assert_allclose(H, ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- vmap vs Python loops

def test_vmap_of_grad_of_cond_and_switch_with_batched_index(rng):
    p = rng.normal(size=6).astype(np.float32)
    v = rng.normal(size=6).astype(np.float32)
    g = jax.vmap(jax.grad(lambda p, v: lax.cond(p > 0, lambda v: v ** 2, jnp.sin, v),
                          argnums=1))(p, v)
    np.testing.assert_allclose(A(g), np.where(p > 0, 2 * A(v), np.cos(A(v))), rtol=1e-5)
    idx = rng.integers(-2, 5, 6).astype(np.int32)
    g = jax.vmap(jax.grad(lambda i, v: lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * v], v),
                          argnums=1))(idx, v)
    ders = [np.cos, lambda v: -np.sin(v), lambda v: 2 * v]
    ref = [ders[min(max(int(i), 0), 2)](float(x)) for i, x in zip(idx, v)]
    np.testing.assert_allclose(A(g), ref, rtol=1e-5, atol=1e-6)


def test_vmap_cond_batched_and_unbatched_pred(rng):
    n = 9
    ps = rng.normal(size=n).astype(np.float32)
    xs = rng.normal(size=(n, 3)).astype(np.float32)
    x1 = xs[0]

    def f(p, x):
        return lax.cond(p > 0, lambda x: jnp.sin(x) * 2, lambda x: x * x - 1, x)

    def f_np(p, x):
        return np.sin(A(x)) * 2 if p > 0 else A(x) ** 2 - 1

    for in_axes, args in [((0, 0), (ps, xs)), ((None, 0), (ps[0], xs)), ((0, None), (ps, x1))]:
        out = jax.vmap(f, in_axes=in_axes)(*args)
        ref = [f_np(args[0] if in_axes[0] is None else args[0][i],
                    args[1] if in_axes[1] is None else args[1][i]) for i in range(n)]
        np.testing.assert_allclose(A(out), np.stack(ref), rtol=1e-5, atol=1e-6)


def test_vmap_switch_batched_and_unbatched_index(rng):
    n = 8
    idx = rng.integers(-2, 5, n).astype(np.int32)
    xs = rng.normal(size=(n, 2)).astype(np.float32)
    brs = [lambda x: x + 1, lambda x: jnp.cos(x), lambda x: x * 3]
    brs_np = [lambda x: x + 1, np.cos, lambda x: x * 3]
    out = jax.vmap(lambda i, x: lax.switch(i, brs, x))(idx, xs)
    ref = np.stack([brs_np[min(max(int(i), 0), 2)](A(x)) for i, x in zip(idx, xs)])
    np.testing.assert_allclose(A(out), ref, rtol=1e-5, atol=1e-6)
    out = jax.vmap(lambda i, x: lax.switch(i, brs, x), in_axes=(None, 0))(idx[0], xs)
    ref = np.stack([brs_np[min(max(int(idx[0]), 0), 2)](A(x)) for x in xs])
    np.testing.assert_allclose(A(out), ref, rtol=1e-5, atol=1e-6)


def test_vmap_while_loop_batched_predicate(rng):
    xs = rng.integers(1, 200, 12).astype(np.int32)

    def steps(x):  # doublings (plus one) until above 1000, and how many
        return lax.while_loop(lambda c: c[0] < 1000, lambda c: (c[0] * 2 + 1, c[1] + 1), (x, 0))

    vals, counts = jax.vmap(steps)(xs)
    for x, v, k in zip(xs, np.asarray(vals), np.asarray(counts)):
        x, c = int(x), 0
        while x < 1000:
            x, c = x * 2 + 1, c + 1
        assert (v, k) == (x, c)
    # unbatched predicate, batched carry
    ys = rng.normal(size=(5, 2)).astype(np.float32)
    out = jax.vmap(lambda y: lax.while_loop(lambda c: c[0] < 4,
                                            lambda c: (c[0] + 1, c[1] * 1.5 + 1), (0, y))[1])(ys)
    ref = A(ys)
    for _ in range(4):
        ref = ref * 1.5 + 1
    np.testing.assert_allclose(A(out), ref, rtol=1e-5)


def test_vmap_scan_over_batched_and_unbatched_args(rng):
    B, T, d = 4, 6, 3
    H0 = rng.normal(size=(B, d)).astype(np.float32)
    XS = rng.normal(size=(B, T, d)).astype(np.float32)

    def run(h0, xs):
        return lax.scan(lambda h, x: (jnp.tanh(h + x), jnp.sum(h * x)), h0, xs)

    def run_np(h0, xs):
        h, ys = A(h0), []
        for x in A(xs):
            ys.append(np.sum(h * x))
            h = np.tanh(h + x)
        return h, np.array(ys)

    for in_axes in [(0, 0), (None, 0), (0, None)]:
        args = (H0[0] if in_axes[0] is None else H0, XS[0] if in_axes[1] is None else XS)
        hT, ys = jax.vmap(run, in_axes=in_axes)(*args)
        for b in range(B):
            rh, ry = run_np(args[0] if in_axes[0] is None else args[0][b],
                            args[1] if in_axes[1] is None else args[1][b])
            np.testing.assert_allclose(A(hT)[b], rh, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(A(ys)[b], ry, rtol=1e-5, atol=1e-5)


def test_vmap_of_grad_through_scan(rng):
    W = rng.normal(size=(5, 3)).astype(np.float32)
    xs = rng.normal(size=(4, 3)).astype(np.float32)

    def f(w):
        c, _ = lax.scan(lambda c, x: (c * jnp.sin(w * x) + x, None), jnp.ones(3), xs)
        return jnp.sum(c)

    def f_np(w):
        c = np.ones(3)
        for x in A(xs):
            c = c * np.sin(w * x) + x
        return np.sum(c)

    g = jax.vmap(jax.grad(f))(W)
    for i in range(5):
        np.testing.assert_allclose(A(g)[i], fd_grad(f_np, W[i]), rtol=2e-4, atol=2e-4)


# ---------------------------------------------------------------- forward mode through while

def test_jvp_of_while_loop(rng, x64):
    n = int(rng.integers(3, 9))

    def f(x):
        return lax.while_loop(lambda c: c[0] < n,
                              lambda c: (c[0] + 1, c[1] * jnp.sin(c[1]) + 1.0), (0, x))[1]

    x, t = rng.uniform(0.5, 1.5, 3), rng.normal(size=3)
    out, tout = jax.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))
    y, dy = x.copy(), t.copy()
    for _ in range(n):
        y, dy = y * np.sin(y) + 1.0, dy * (np.sin(y) + y * np.cos(y))
    np.testing.assert_allclose(A(out), y, rtol=1e-12)
    np.testing.assert_allclose(A(tout), dy, rtol=1e-10, atol=1e-12)
    # vmap of jvp: tangents batched, loop trip count fixed
    T = rng.normal(size=(4, 3))
    _, touts = jax.vmap(lambda tt: jax.jvp(f, (jnp.asarray(x),), (tt,)))(jnp.asarray(T))
    for i in range(4):
        np.testing.assert_allclose(A(touts)[i], dy / t * T[i], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- nested loops

def test_scan_in_scan_and_its_grad(rng, x64):
    M = rng.normal(size=(4, 5))

    def f(m):
        def row(c, r):
            inner, ys = lax.scan(lambda a, v: (a * 0.9 + jnp.sin(v), a), 0.0, r)
            return c + inner, ys
        tot, yss = lax.scan(row, 0.0, m)
        return tot + jnp.sum(yss ** 2)

    def f_np(m):
        tot, acc = 0.0, 0.0
        for r in m:
            a = 0.0
            for v in r:
                acc += a ** 2
                a = a * 0.9 + np.sin(v)
            tot += a
        return tot + acc

    np.testing.assert_allclose(float(f(jnp.asarray(M))), f_np(M), rtol=1e-12)
    np.testing.assert_allclose(A(jax.grad(f)(jnp.asarray(M))), fd_grad(f_np, M),
                               rtol=1e-7, atol=1e-8)


def test_while_in_scan_and_cond_in_fori(rng):
    xs = rng.uniform(1, 500, 10).astype(np.float32)

    def halvings(c, x):
        v, k = lax.while_loop(lambda s: s[0] >= 1.0, lambda s: (s[0] / 2, s[1] + 1), (x, 0))
        return c + k, v

    total, vs = lax.scan(halvings, 0, xs)
    ref_k, ref_v = [], []
    for x in xs.astype(np.float64):
        k = 0
        while x >= 1.0:
            x, k = x / 2, k + 1
        ref_k.append(k)
        ref_v.append(x)
    assert int(total) == sum(ref_k)
    np.testing.assert_allclose(A(vs), ref_v, rtol=1e-6)
    # vmapped over rows: a batched while predicate inside the scan body
    X = rng.uniform(1, 500, (3, 4)).astype(np.float32)
    totals, _ = jax.vmap(lambda r: lax.scan(halvings, 0, r))(X)
    for r, tot in zip(X.astype(np.float64), np.asarray(totals)):
        k = 0
        for x in r:
            while x >= 1.0:
                x, k = x / 2, k + 1
        assert tot == k

    v = rng.normal(size=7).astype(np.float32)
    vj = jnp.asarray(v)

    def body(i, c):
        return lax.cond(i % 2 == 0, lambda c: c + vj[i], lambda c: c * vj[i], c)

    out = lax.fori_loop(0, 7, body, jnp.float32(1.0))
    ref = 1.0
    for i in range(7):
        ref = ref + v[i] if i % 2 == 0 else ref * v[i]
    np.testing.assert_allclose(float(out), ref, rtol=1e-5)
    # traced (batched) bounds: a while loop holding a cond, each member its own trip count
    ns = np.array([7, 3, 0, 5], np.int32)
    out = jax.vmap(lambda n: lax.fori_loop(0, n, body, jnp.float32(1.0)))(ns)
    for n, o in zip(ns, np.asarray(out)):
        r = 1.0
        for i in range(n):
            r = r + v[i] if i % 2 == 0 else r * v[i]
        np.testing.assert_allclose(o, r, rtol=1e-5)


# ---------------------------------------------------------------- numerical programs

def test_newton_sqrt_and_cube_root(rng, x64):
    a = rng.uniform(0.1, 100.0, 16)

    def newton(f, df, a, x0):
        def body(s):
            x, k = s
            return x - f(x, a) / df(x), k + 1

        def cond_fun(s):
            x, k = s
            return (jnp.max(jnp.abs(f(x, a))) > 1e-12 * jnp.max(a)) & (k < 100)
        return lax.while_loop(cond_fun, body, (x0, 0))

    x, k = newton(lambda x, a: x * x - a, lambda x: 2 * x, jnp.asarray(a), jnp.asarray(a))
    np.testing.assert_allclose(A(x), np.sqrt(a), rtol=1e-9)
    assert 0 < int(k) < 100
    x, k = newton(lambda x, a: x ** 3 - a, lambda x: 3 * x * x, jnp.asarray(a),
                  jnp.ones_like(jnp.asarray(a)) * 2.0)
    np.testing.assert_allclose(A(x), np.cbrt(a), rtol=1e-9)


def test_bisection_vmapped_over_intervals(rng, x64):
    n = 64
    c = rng.uniform(-50, 50, n)
    lo, hi = np.full(n, -5.0), np.full(n, 5.0)

    def bisect(c, lo, hi):
        def body(s):
            lo, hi, k = s
            mid = (lo + hi) / 2
            go_right = (mid ** 3 - c) < 0
            return jnp.where(go_right, mid, lo), jnp.where(go_right, hi, mid), k + 1
        lo, hi, k = lax.while_loop(lambda s: (s[1] - s[0]) > 1e-12 * (1 + jnp.abs(s[0])),
                                   body, (lo, hi, 0))
        return (lo + hi) / 2, k

    roots, iters = jax.vmap(bisect)(jnp.asarray(c), jnp.asarray(lo), jnp.asarray(hi))
    np.testing.assert_allclose(A(roots), np.cbrt(c), rtol=1e-11, atol=1e-11)
    # each member stops on its own: its count is the Python loop's
    for i in range(0, n, 9):
        a, b, k = lo[i], hi[i], 0
        while b - a > 1e-12 * (1 + abs(a)):
            m = (a + b) / 2
            a, b = (m, b) if m ** 3 - c[i] < 0 else (a, m)
            k += 1
        assert int(np.asarray(iters)[i]) == k


def rk4_np(y0, t0, h, n):
    f = lambda t, y: -y + np.sin(t)  # noqa: E731
    y, t, ys = y0, t0, []
    for _ in range(n):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y, t = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + h
        ys.append(y)
    return y, np.array(ys)


def test_rk4_integrator_fori_and_scan(rng, x64):
    y0, n, T = rng.normal(size=3), 200, 5.0
    h = T / n

    def step(t, y):
        f = lambda t, y: -y + jnp.sin(t)  # noqa: E731
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    yT = lax.fori_loop(0, n, lambda i, y: step(i * h, y), jnp.asarray(y0))
    (tT, yT2), traj = lax.scan(lambda c, _: ((c[0] + h, step(*c)), step(*c)),
                               (0.0, jnp.asarray(y0)), None, length=n)
    ref, ref_traj = rk4_np(y0, 0.0, h, n)
    np.testing.assert_allclose(A(yT), ref, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(A(yT2), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(A(traj), ref_traj, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(tT), T, rtol=1e-12)
    exact = (y0 + 0.5) * np.exp(-T) + (np.sin(T) - np.cos(T)) / 2
    np.testing.assert_allclose(A(yT), exact, rtol=1e-8, atol=1e-9)


# ---------------------------------------------------------------- map, scan options, pytrees

@pytest.mark.parametrize("batch_size", [None, 1, 3, 5, 10, 20])
def test_map_with_batch_size(rng, batch_size):
    xs = {"a": rng.normal(size=(10, 3)).astype(np.float32), "b": rng.normal(size=10)}
    def f(x):
        assert x["a"].shape == (3,)  # one element, also under the vmap of a batch
        return jnp.sum(jnp.sin(x["a"])) * x["b"], (x["a"] * 2, x["b"] - 1)

    s, (a2, b1) = lax.map(f, xs, batch_size=batch_size)
    ref = np.sum(np.sin(A(xs["a"])), axis=1) * A(np.float32(xs["b"]))
    np.testing.assert_allclose(A(s), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A(a2), 2 * A(xs["a"]), rtol=1e-6)
    np.testing.assert_allclose(A(b1), A(np.float32(xs["b"])) - 1, rtol=1e-6)
    assert s.shape == (10,) and a2.shape == (10, 3)
    text = str(jax.make_jaxpr(lambda xs: lax.map(f, xs, batch_size=batch_size))(xs))
    steps = 10 if batch_size is None else 10 // batch_size  # scan steps of batch_size each
    assert f"length={steps}" in text, text


def test_scan_without_xs_length_and_reverse(rng):
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=6)
    np.testing.assert_allclose(A(ys), 2.0 ** np.arange(6))
    assert float(c) == 64.0
    xs = rng.normal(size=(7, 2)).astype(np.float32)
    for reverse in (False, True):
        c, ys = lax.scan(lambda c, x: (c + x, c + x), jnp.zeros(2), xs, reverse=reverse)
        ref = np.cumsum(A(xs)[::-1], axis=0)[::-1] if reverse else np.cumsum(A(xs), axis=0)
        np.testing.assert_allclose(A(ys), ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(A(c), A(xs).sum(0), rtol=1e-5, atol=1e-6)
    # zero-length scan: the carry passes through, ys are empty with the body's shapes
    c, ys = lax.scan(lambda c, x: (c + x, x * 2), jnp.ones(2), jnp.zeros((0, 2)))
    assert ys.shape == (0, 2)
    np.testing.assert_allclose(A(c), np.ones(2))


@pytest.mark.parametrize("unroll", [1, 2, 3, 7, 10, True, False])
def test_scan_unroll_gives_same_results(rng, unroll):
    xs = rng.normal(size=(7, 3)).astype(np.float32)
    f = lambda c, x: (jnp.tanh(c * 0.5 + x), c * x)  # noqa: E731
    for reverse in (False, True):
        c, ys = lax.scan(f, jnp.ones(3), xs, reverse=reverse, unroll=unroll)
        h, ref = np.ones(3), [None] * 7
        for t in (range(6, -1, -1) if reverse else range(7)):
            ref[t] = h * A(xs[t])
            h = np.tanh(h * 0.5 + A(xs[t]))
        np.testing.assert_allclose(A(c), h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(A(ys), np.stack(ref), rtol=1e-5, atol=1e-6)
    g = jax.grad(lambda x: jnp.sum(lax.scan(f, jnp.ones(3), x, unroll=unroll)[1]))(xs)
    g1 = jax.grad(lambda x: jnp.sum(lax.scan(f, jnp.ones(3), x)[1]))(xs)
    np.testing.assert_allclose(A(g), A(g1), rtol=1e-5, atol=1e-6)


def test_pytree_carries_and_xs(rng):
    xs = (rng.normal(size=(5, 2)).astype(np.float32),
          {"k": rng.normal(size=5).astype(np.float32)})
    init = {"sum": jnp.zeros(2), "prod": (jnp.float32(1.0), [jnp.int32(0)])}

    def f(c, x):
        a, d = x
        new = {"sum": c["sum"] + a, "prod": (c["prod"][0] * d["k"], [c["prod"][1][0] + 1])}
        return new, {"y": a * d["k"], "n": c["prod"][1][0]}

    c, ys = lax.scan(f, init, xs)
    assert set(c) == {"sum", "prod"} and isinstance(c["prod"][1], list)
    np.testing.assert_allclose(A(c["sum"]), A(xs[0]).sum(0), rtol=1e-5)
    np.testing.assert_allclose(float(c["prod"][0]), np.prod(A(xs[1]["k"])), rtol=1e-5)
    assert int(c["prod"][1][0]) == 5
    np.testing.assert_allclose(A(ys["y"]), A(xs[0]) * A(xs[1]["k"])[:, None], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(ys["n"]), np.arange(5))
    # while_loop / fori_loop / cond keep the structure of dict and tuple carries
    out = lax.while_loop(lambda s: s["i"] < 3, lambda s: {"i": s["i"] + 1, "v": (s["v"][0] * 2,)},
                         {"i": 0, "v": (jnp.ones(2),)})
    assert int(out["i"]) == 3 and isinstance(out["v"], tuple)
    np.testing.assert_allclose(A(out["v"][0]), [8.0, 8.0])
    r = lax.cond(True, lambda p: {"a": p[0] + 1, "b": p[1]}, lambda p: {"a": p[0], "b": p[1] * 0},
                 (jnp.ones(2), jnp.ones(3)))
    np.testing.assert_allclose(A(r["a"]), [2.0, 2.0])
    np.testing.assert_allclose(A(r["b"]), np.ones(3))


def test_weak_typed_python_scalar_carries_are_promoted(rng):
    xs = rng.normal(size=6).astype(np.float32)
    c, ys = lax.scan(lambda c, x: (c + x, c), 0, xs)  # Python int carry, float body
    assert c.dtype == np.float32 and ys.dtype == np.float32
    np.testing.assert_allclose(float(c), A(xs).sum(), rtol=1e-5, atol=1e-5)
    out = lax.while_loop(lambda c: c < 10, lambda c: c + 1.5, 0)
    assert out.dtype == np.float32 and float(out) == 10.5
    out = lax.fori_loop(0, 4, lambda i, c: c + i * 0.5, 0)
    assert out.dtype == np.float32 and float(out) == 3.0
    # a weak float carry stays float32 when the body adds a strong float32
    c, _ = lax.scan(lambda c, x: (c + x, None), 1.0, xs)
    assert c.dtype == np.float32


def test_carry_types_are_the_cores_decision(rng):
    """The core promotes weak carries (tracing the body once more), makes a weak output of a
    strong carry strong, and reports every mismatching component, named by key path here."""
    xs = rng.normal(size=5).astype(np.float32)
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, None
    c, _ = lax.scan(body, 0, xs)
    assert len(calls) == 2 and c.dtype == np.float32 and not c.weak_type
    out = lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0)
    assert out.dtype == np.float32 and not out.weak_type  # JAX converts with weak_type=False
    c, _ = lax.scan(lambda c, x: (2.5, None), jnp.float32(1), xs)
    assert not c.weak_type and float(c) == 2.5
    out = lax.while_loop(lambda c: c < 2, lambda c: 3.0, jnp.float32(1))
    assert not out.weak_type and float(out) == 3.0
    with pytest.raises(TypeError) as e:
        lax.scan(lambda c, x: ({"a": c["a"].astype(jnp.int32), "b": c["b"][None]}, None),
                 {"a": jnp.zeros(2), "b": jnp.zeros(3)}, xs)
    msg = str(e.value)
    assert ("  * the input carry component c['a'] has type float32[2] but the corresponding "
            "output carry component has type int32[2], so the dtypes do not match;\n"
            "  * the input carry component c['b'] has type float32[3] but the corresponding "
            "output carry component has type float32[1,3], so the shapes do not match.\n") in msg
    with pytest.raises(TypeError, match=re.escape(
            "body_fun output and input must have identical types, got\n"
            "('ShapedArray(float32[2])', 'DIFFERENT ShapedArray(int32[]) vs. "
            "ShapedArray(float32[])').")):  # JAX's text: the tree of _show_diff strings
        lax.while_loop(lambda c: c[1] < 1, lambda c: (c[0], c[1].astype(jnp.int32)),
                       (jnp.zeros(2), jnp.float32(0)))


def test_fori_loop_bound_dtypes():
    # i is a weakly typed int (JAX's fori_loop with static bounds): it keeps an int16 carry.
    out = lax.fori_loop(0, jnp.int16(5), lambda i, c: (c[0] + 1, c[1] + i), (0, jnp.int16(0)))
    assert int(out[0]) == 5 and out[1].dtype == np.int16 and int(out[1]) == 10
    out = lax.fori_loop(jnp.int32(2), 6, lambda i, c: c + i, jnp.int32(0))
    assert int(out) == 2 + 3 + 4 + 5
    with pytest.raises(TypeError, match=re.escape(
            "lower and upper arguments to fori_loop must have equal types, got int32 and int16")):
        lax.fori_loop(jnp.int32(0), jnp.int16(3), lambda i, c: c, 0.0)
    assert float(lax.fori_loop(5, 2, lambda i, c: c + 1.0, 0.0)) == 0.0  # no iterations
    for unroll in (None, 1, 2, 3, True, False):
        out = lax.fori_loop(1, 6, lambda i, c: c * 2 + i, jnp.int32(1), unroll=unroll)
        assert int(out) == 89, unroll  # c -> 2c + i for i = 1..5: 1, 3, 8, 19, 42, 89
    with pytest.raises(ValueError, match="Can only use `unroll` in `fori_loop` if the loop "
                                         "bounds are statically known"):
        jax.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, c: c, 1.0, unroll=2))(3)


def test_make_jaxpr_shows_the_primitives():
    x = jnp.ones(3)
    t = str(jax.make_jaxpr(lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x))(x))
    assert re.search(r"\bscan\[", t) and "length=3" in t, t
    t = str(jax.make_jaxpr(lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x))(x))
    assert re.search(r"\bcond\[", t), t
    t = str(jax.make_jaxpr(lambda x: lax.while_loop(lambda c: c[0] < 5.0, lambda c: c * 2, x))(x))
    assert re.search(r"\bwhile\[", t), t
    t = str(jax.make_jaxpr(lambda x: lax.switch(1, [jnp.sin, jnp.cos, jnp.tan], x))(x))
    assert re.search(r"\bcond\[", t), t


# ---------------------------------------------------------------- JAX's errors

def test_scan_carry_type_errors():
    xs = jnp.ones((4, 3))
    with pytest.raises(TypeError) as e:
        lax.scan(lambda c, x: (c.astype(jnp.int32), x), jnp.zeros(3), xs)
    msg = str(e.value)
    assert msg.startswith("scan body function carry input and carry output must have equal "
                          "types (e.g. shapes and dtypes of arrays), but they differ:"), msg
    assert ("The input carry c has type float32[3] but the corresponding output carry "
            "component has type int32[3], so the dtypes do not match.") in msg, msg
    with pytest.raises(TypeError, match=re.escape(
            "has type float32[3] but the corresponding output carry component has type "
            "float32[1,3], so the shapes do not match")):
        lax.scan(lambda c, x: (c[None], x), jnp.zeros(3), xs)
    with pytest.raises(TypeError) as e:
        lax.scan(lambda carry, x: ((carry, carry), x), jnp.zeros(3), xs)
    msg = str(e.value)
    assert msg.startswith("scan body function carry input and carry output must have the same "
                          "pytree structure, but they differ:"), msg
    assert "the input carry carry is a" in msg.lower()
    with pytest.raises(TypeError) as e:
        lax.scan(lambda c, x: ({"a": c["a"], "b": c["a"]}, x), {"a": jnp.zeros(3)}, xs)
    assert "symmetric difference of key sets: {'b'}" in str(e.value)
    with pytest.raises(TypeError) as e:
        lax.scan(lambda c, x: ((c[0], c[1].astype(jnp.int32)), x), (jnp.zeros(3), 1.0), xs)
    assert "the input carry component c[1] has type float32[]" in str(e.value).lower()
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: c, jnp.zeros(3), xs)


def test_scan_argument_errors():
    with pytest.raises(ValueError, match=re.escape(
            "scan got values with different leading axis sizes: 3, 4.")):
        lax.scan(lambda c, x: (c, None), 0.0, (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match=re.escape(
            "scan got `length` argument of 5 which disagrees with leading axis sizes [3].")):
        lax.scan(lambda c, x: (c, None), 0.0, jnp.ones(3), length=5)
    with pytest.raises(ValueError, match=re.escape(
            "scan got no values to scan over and `length` not provided.")):
        lax.scan(lambda c, x: (c, None), 0.0, None)
    with pytest.raises(ValueError, match="scan got value with no leading axis to scan over"):
        lax.scan(lambda c, x: (c, None), 0.0, (jnp.ones(3), 2.0))
    with pytest.raises(ValueError, match=re.escape("`unroll` must be a `bool` or a positive")):
        lax.scan(lambda c, x: (c, None), 0.0, jnp.ones(3), unroll=0)


def test_cond_switch_while_type_errors():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=re.escape(
            "true_fun and false_fun output must have identical types, got\n"
            "DIFFERENT ShapedArray(float32[3]) vs. ShapedArray(float32[2]).")):
        lax.cond(True, lambda v: v, lambda v: v[:2], x)
    with pytest.raises(TypeError, match=re.escape(
            "true_fun and false_fun output must have same type structure")):
        lax.cond(True, lambda v: (v, v), lambda v: v, x)
    with pytest.raises(TypeError, match=re.escape("branch 0 and 2 outputs must have identical "
                                                  "types")):
        lax.switch(0, [lambda v: v, lambda v: v, lambda v: v.astype(jnp.int32)], x)
    with pytest.raises(TypeError, match=re.escape("Pred must be a scalar")):
        lax.cond(x > 0, lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match=re.escape("Index type must be an integer")):
        lax.switch(1.0, [lambda v: v, lambda v: v], x)
    with pytest.raises(TypeError, match=re.escape(
            "body_fun output and input must have identical types, got\n")):
        lax.while_loop(lambda c: c[0] < 3, lambda c: c.astype(jnp.int32), x)
    with pytest.raises(TypeError, match=re.escape(
            "body_fun output and input must have same type structure")):
        lax.while_loop(lambda c: True, lambda c: (c, c), x)
    with pytest.raises(TypeError, match=re.escape(
            "cond_fun must return a boolean scalar, but got output type(s) "
            "[ShapedArray(float32[])]")):
        lax.while_loop(lambda c: c[0], lambda c: c, x)
    # weak types join: a Python float branch output matches a float32 one
    out = lax.cond(False, lambda v: jnp.sum(v), lambda v: 1.0, x)
    assert out.dtype == np.float32 and float(out) == 1.0
    r = lax.switch(2, [lambda v: (1.0, 2.0), lambda v: (jnp.float32(1), 2.0),
                       lambda v: (3.0, jnp.float32(4))], x)
    assert [float(a) for a in r] == [3.0, 4.0] and not any(a.weak_type for a in r)
    assert lax.cond(True, lambda: 1.0, lambda: 2.0).weak_type  # weak when every branch is


def test_reverse_mode_through_dynamic_while_loop_raises():
    f = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)  # noqa: E731
    assert float(jax.jvp(f, (1.5,), (1.0,))[1]) == 8.0  # forward mode works: 1.5 * 2**3
    with pytest.raises(ValueError, match=re.escape(
            "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
            "with dynamic start/stop values.")):
        jax.grad(f)(1.5)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(lambda v: jnp.sum(jax.vmap(f)(v)))(jnp.ones(3))
