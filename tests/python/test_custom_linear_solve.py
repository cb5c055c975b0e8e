"""lax.custom_linear_solve and lax.custom_root (the C++ primitive through the package) on fresh
random float64 systems: solutions against numpy.linalg.solve, derivatives (jvp, vjp, grad,
forward mode with transpose_solve, jvp of grad) against central differences of NumPy's solve,
vmap with each argument batched or not against a loop, jit against eager, has_aux,
symmetric=True with a conjugate-gradient while loop (never differentiated), pytree b, JAX's
errors; custom_root with Newton's method (scalar and vector), its implicit gradients against
central differences of a root found with NumPy."""
import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
import tessera.scipy.linalg as tsl
from tessera import lax


def general(rng, n):
    a = rng.uniform(-1, 1, size=(n, n))
    return a + (2 + 0.5 * n) * np.eye(n) * np.sign(rng.uniform(-1, 1, size=(n,)))


def spd(rng, n):
    m = rng.uniform(-1, 1, size=(n, n))
    return m @ m.T / n + np.eye(n)


def lu_solver(a, transpose=True):
    """custom_linear_solve of a·x = b with LU solves of stop_gradient(a)."""
    lu = tsl.lu_factor(lax.stop_gradient(a))
    mv = lambda v: a @ v  # noqa: E731
    sol = lambda _, v: tsl.lu_solve(lu, v)  # noqa: E731
    tsol = (lambda _, v: tsl.lu_solve(lu, v, trans=1)) if transpose else None
    return lambda b: lax.custom_linear_solve(mv, b, sol, tsol)  # noqa: E731


def cg(matvec, b, with_count=False):
    """Conjugate gradients in a while loop: not differentiable in reverse mode."""
    def cond(c):
        return jnp.logical_and(c[3] > 1e-28, c[4] < 200)

    def body(c):
        x, r, p, rs, k = c
        ap = matvec(p)
        alpha = rs / jnp.sum(p * ap)
        r2 = r - alpha * ap
        rs2 = jnp.sum(r2 * r2)
        return x + alpha * p, r2, r2 + (rs2 / rs) * p, rs2, k + 1

    x, _, _, _, k = lax.while_loop(cond, body, (jnp.zeros_like(b), b, b, jnp.sum(b * b),
                                                jnp.asarray(0, dtype="int32")))
    return (x, k) if with_count else x


def cg_solve(a, b):
    return lax.custom_linear_solve(lambda v: a @ v, b, cg, symmetric=True)


def fd(f, x, t, h=1e-6):
    """Central difference of f (NumPy in, NumPy out) at x in direction t."""
    return (np.asarray(f(x + h * t)) - np.asarray(f(x - h * t))) / (2 * h)


def fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1
        g[i] = fd(f, x, e, h)
    return g


def test_solves_like_numpy(rng, x64):
    for n in [1, 3, 6]:
        a, s = general(rng, n), spd(rng, n)
        b = rng.uniform(-1, 1, size=(n,))
        bm = rng.uniform(-1, 1, size=(n, 2))
        np.testing.assert_allclose(np.asarray(lu_solver(jnp.asarray(a))(jnp.asarray(b))),
                                   np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(lu_solver(jnp.asarray(a))(jnp.asarray(bm))),
                                   np.linalg.solve(a, bm), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(cg_solve(jnp.asarray(s), jnp.asarray(b))),
                                   np.linalg.solve(s, b), rtol=1e-8, atol=1e-10)


def test_derivatives_match_finite_differences(rng, x64):
    n = 4
    for kind in ["lu", "lu_no_transpose", "cg"]:
        a = spd(rng, n) if kind == "cg" else general(rng, n)
        b = rng.uniform(-1, 1, size=(n,))
        w = rng.uniform(-1, 1, size=(n,))
        da = rng.uniform(-1, 1, size=(n, n))
        if kind == "cg":
            da = da + da.T
        db = rng.uniform(-1, 1, size=(n,))

        def solve(x, y):
            if kind == "cg":
                return cg_solve(x, y)
            return lu_solver(x, transpose=kind == "lu")(y)

        # jvp in both arguments (forward mode works with and without transpose_solve).
        x, xt = tessera.jvp(solve, (jnp.asarray(a), jnp.asarray(b)),
                            (jnp.asarray(da), jnp.asarray(db)))
        np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-8)
        want = (np.linalg.solve(a + 1e-6 * da, b + 1e-6 * db)
                - np.linalg.solve(a - 1e-6 * da, b - 1e-6 * db)) / 2e-6
        np.testing.assert_allclose(np.asarray(xt), want, rtol=1e-5, atol=1e-6)
        if kind == "lu_no_transpose":
            with pytest.raises(TypeError, match="transpose_solve required for backwards mode "
                                                "automatic differentiation of "
                                                "custom_linear_solve"):
                tessera.grad(lambda y: jnp.sum(solve(jnp.asarray(a), y)))(jnp.asarray(b))
            continue
        # grad in a and b against NumPy central differences.
        loss = lambda x, y: jnp.sum(solve(x, y) * w)  # noqa: E731
        ga, gb = tessera.grad(loss, argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
        np.testing.assert_allclose(np.asarray(ga),
                                   fd_grad(lambda x: np.linalg.solve(x, b) @ w, a),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gb),
                                   fd_grad(lambda y: np.linalg.solve(a, y) @ w, b),
                                   rtol=1e-5, atol=1e-6)
        # vjp with a random cotangent.
        ct = rng.uniform(-1, 1, size=(n,))
        _, pull = tessera.vjp(lambda y: solve(jnp.asarray(a), y), jnp.asarray(b))
        (vb,) = pull(jnp.asarray(ct))
        np.testing.assert_allclose(np.asarray(vb), np.linalg.solve(a.T, ct), rtol=1e-8)


def test_jvp_of_grad(rng, x64):
    n = 3
    a, b, w = general(rng, n), rng.uniform(-1, 1, size=(n,)), rng.uniform(-1, 1, size=(n,))
    da = rng.uniform(-1, 1, size=(n, n))
    g = tessera.grad(lambda x: jnp.sum(lu_solver(x)(jnp.asarray(b)) * w))
    _, gt = tessera.jvp(g, (jnp.asarray(a),), (jnp.asarray(da),))
    # Reference: the gradient −(A⁻ᵀw)(A⁻¹b)ᵀ differentiated by central differences in NumPy.
    ref_g = lambda x: -np.outer(np.linalg.solve(x.T, w), np.linalg.solve(x, b))  # noqa: E731
    np.testing.assert_allclose(np.asarray(g(jnp.asarray(a))), ref_g(a), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(gt), fd(ref_g, a, da), rtol=1e-5, atol=1e-6)


def test_vmap_each_argument(rng, x64):
    n, B = 3, 4
    a = np.stack([general(rng, n) for _ in range(B)])
    s = np.stack([spd(rng, n) for _ in range(B)])
    b = rng.uniform(-1, 1, size=(B, n))
    funcs = {"lu": lambda x, y: lu_solver(x)(y), "cg": cg_solve}
    for name, f in funcs.items():
        m = s if name == "cg" else a
        for in_axes in [(0, 0), (0, None), (None, 0)]:
            ma = m if in_axes[0] == 0 else m[0]
            bb = b if in_axes[1] == 0 else b[0]
            got = tessera.vmap(f, in_axes=in_axes)(jnp.asarray(ma), jnp.asarray(bb))
            want = np.stack([np.linalg.solve(ma[i] if in_axes[0] == 0 else ma,
                                             bb[i] if in_axes[1] == 0 else bb)
                             for i in range(B)])
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-8, atol=1e-10,
                                       err_msg=f"{name} {in_axes}")
    # vmap of grad against a loop of grads.
    w = rng.uniform(-1, 1, size=(n,))
    g = tessera.grad(lambda x, y: jnp.sum(lu_solver(x)(y) * w))
    got = tessera.vmap(g)(jnp.asarray(a), jnp.asarray(b))
    want = np.stack([np.asarray(g(jnp.asarray(a[i]), jnp.asarray(b[i]))) for i in range(B)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)


def test_jit_matches_eager(rng, x64):
    n = 4
    a, s, b = general(rng, n), spd(rng, n), rng.uniform(-1, 1, size=(n,))
    f = lambda x, y: lu_solver(x)(y)  # noqa: E731
    np.testing.assert_allclose(np.asarray(tessera.jit(f)(jnp.asarray(a), jnp.asarray(b))),
                               np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(tessera.jit(cg_solve)(jnp.asarray(s), jnp.asarray(b))),
                               np.linalg.solve(s, b), rtol=1e-8)
    loss = lambda x: jnp.sum(f(x, jnp.asarray(b)))  # noqa: E731
    np.testing.assert_allclose(np.asarray(tessera.jit(tessera.grad(loss))(jnp.asarray(a))),
                               np.asarray(tessera.grad(loss)(jnp.asarray(a))), rtol=1e-10)
    text = str(tessera.make_jaxpr(f)(jnp.asarray(a), jnp.asarray(b)))
    assert "custom_linear_solve[" in text and "transpose_solve_jaxpr=" in text, text


def test_has_aux_and_pytree_b(rng, x64):
    n = 5
    s, b = spd(rng, n), rng.uniform(-1, 1, size=(n,))

    def f(x, y):
        return lax.custom_linear_solve(lambda v: x @ v, y,
                                       lambda mv, r: cg(mv, r, with_count=True),
                                       symmetric=True, has_aux=True)

    x, k = f(jnp.asarray(s), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(s, b), rtol=1e-8)
    assert k.dtype == np.int32 and 1 <= int(k) <= 200
    w = rng.uniform(-1, 1, size=(n,))
    gb = tessera.grad(lambda y: jnp.sum(f(jnp.asarray(s), y)[0] * w))(jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(gb), np.linalg.solve(s.T, w), rtol=1e-8)
    xj, kj = tessera.jit(f)(jnp.asarray(s), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(xj), np.asarray(x), rtol=1e-12)
    assert int(kj) == int(k)

    # b a dict of two blocks of a 5×5 system.
    a = general(rng, n)

    def join(d):
        return jnp.concatenate([d["u"], d["v"]])

    def split(v):
        return {"u": v[:2], "v": v[2:]}

    def block_solve(x, d):
        lu = tsl.lu_factor(lax.stop_gradient(x))
        return lax.custom_linear_solve(lambda e: split(x @ join(e)), d,
                                       lambda _, r: split(tsl.lu_solve(lu, join(r))),
                                       lambda _, r: split(tsl.lu_solve(lu, join(r), trans=1)))

    d = {"u": jnp.asarray(b[:2]), "v": jnp.asarray(b[2:])}
    out = block_solve(jnp.asarray(a), d)
    assert set(out) == {"u", "v"}
    np.testing.assert_allclose(np.asarray(join(out)), np.linalg.solve(a, b), rtol=1e-10)
    ga = tessera.grad(lambda x: jnp.sum(join(block_solve(x, d)) * w))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(ga), fd_grad(lambda x: np.linalg.solve(x, b) @ w, a),
                               rtol=1e-5, atol=1e-6)


def test_errors(x64):
    b = jnp.ones(3)
    ident = lambda _, r: r  # noqa: E731
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b, "
                                         r"got \[\(6,\)\] and \[\(3,\)\]"):
        lax.custom_linear_solve(lambda v: jnp.concatenate([v, v]), b, ident)
    with pytest.raises(TypeError, match=r"matvec\(\) output dtypes must match b"):
        lax.custom_linear_solve(lambda v: v.astype("float32"), b, ident)
    with pytest.raises(TypeError, match=r"matvec\(\) output pytree structure must match b"):
        lax.custom_linear_solve(lambda v: (v, v), b, ident)
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda v: v, b, lambda _, r: r[0])
    with pytest.raises(ValueError, match="a pytree tuple with auxiliary output was expected "
                                         "because has_aux was set to True"):
        lax.custom_linear_solve(lambda v: v, b, ident, has_aux=True)
    with pytest.raises(TypeError, match=r"f\(\) output pytree structure must match "
                                        r"initial_guess"):
        lax.custom_root(lambda x: (x, x), b, lambda f, x: x, lambda g, y: y)


def newton(f, x0):
    def body(_, x):
        _, d = tessera.jvp(f, (x,), (jnp.ones_like(x),))
        return x - f(x) / d
    return lax.fori_loop(0, 30, body, x0)


def test_custom_root_scalar(rng, x64):
    c = float(rng.uniform(0.5, 4.0))

    def sqrt(cc):
        return lax.custom_root(lambda x: x * x - cc, jnp.asarray(1.0), newton,
                               lambda g, y: y / g(jnp.ones_like(y)))

    np.testing.assert_allclose(float(sqrt(jnp.asarray(c))), np.sqrt(c), rtol=1e-12)
    d = (np.sqrt(c + 1e-6) - np.sqrt(c - 1e-6)) / 2e-6
    np.testing.assert_allclose(float(tessera.grad(sqrt)(jnp.asarray(c))), d, rtol=1e-7)
    np.testing.assert_allclose(float(tessera.jit(tessera.grad(sqrt))(jnp.asarray(c))), d,
                               rtol=1e-7)
    _, t = tessera.jvp(sqrt, (jnp.asarray(c),), (jnp.asarray(3.0),))
    np.testing.assert_allclose(float(t), 3 * d, rtol=1e-7)
    cs = rng.uniform(0.5, 4.0, size=(3,))
    np.testing.assert_allclose(np.asarray(tessera.vmap(sqrt)(jnp.asarray(cs))), np.sqrt(cs),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tessera.vmap(tessera.grad(sqrt))(jnp.asarray(cs))),
                               0.5 / np.sqrt(cs), rtol=1e-9)
    # has_aux: the solve also reports the residual.
    r, res = lax.custom_root(lambda x: x * x - c, jnp.asarray(1.0),
                             lambda f, x0: (newton(f, x0), jnp.abs(f(newton(f, x0)))),
                             lambda g, y: y / g(jnp.ones_like(y)), has_aux=True)
    np.testing.assert_allclose(float(r), np.sqrt(c), rtol=1e-12)
    assert float(res) < 1e-12


def test_custom_root_vector(rng, x64):
    n = 3
    A = spd(rng, n) + 2 * np.eye(n)
    c, w = rng.uniform(-1, 1, size=(n,)), rng.uniform(-1, 1, size=(n,))

    def root(a, cc):
        f = lambda x: a @ x + 0.1 * x ** 3 - cc  # noqa: E731

        def solve(ff, x0):
            return lax.fori_loop(0, 30, lambda _, x: x - jnp.linalg.solve(
                tessera.jacfwd(ff)(x), ff(x)), x0)

        def tangent_solve(g, y):
            return jnp.linalg.solve(tessera.jacfwd(g)(y), y)

        return lax.custom_root(f, jnp.zeros_like(cc), solve, tangent_solve)

    def root_np(a, cc):
        x = np.zeros(n)
        for _ in range(50):
            x = x - np.linalg.solve(a + np.diag(0.3 * x ** 2), a @ x + 0.1 * x ** 3 - cc)
        return x

    np.testing.assert_allclose(np.asarray(root(jnp.asarray(A), jnp.asarray(c))), root_np(A, c),
                               rtol=1e-10, atol=1e-12)
    loss = lambda a, cc: jnp.sum(root(a, cc) * w)  # noqa: E731
    ga, gc = tessera.grad(loss, argnums=(0, 1))(jnp.asarray(A), jnp.asarray(c))
    np.testing.assert_allclose(np.asarray(ga), fd_grad(lambda a: root_np(a, c) @ w, A),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gc), fd_grad(lambda cc: root_np(A, cc) @ w, c),
                               rtol=1e-5, atol=1e-6)
