"""tessera.custom_jvp / tessera.custom_vjp (JAX's API) on fresh random inputs, against float64
NumPy closed forms, finite differences and per-example loops.

The seed comes from TESSERA_TEST_SEED (or the clock) and is printed with each test's output.
"""
import os
import re
import time
import zlib

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))
print(f"test_custom_derivatives: TESSERA_TEST_SEED={SEED}")


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


def f32(rng, *shape, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def A(x):
    return np.asarray(x, dtype=np.float64)


def sig(x):
    return 1.0 / (1.0 + np.exp(-A(x)))


# ---------------------------------------------------------------- custom_jvp

@jax.custom_jvp
def log1pexp(x):
    return jnp.log1p(jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return log1pexp(x), t * (1.0 / (1.0 + jnp.exp(-x)))


def naive_log1pexp(x):
    return jnp.log1p(jnp.exp(x))


def test_log1pexp_stable_grad_where_naive_is_nan():
    assert float(jax.grad(log1pexp)(100.0)) == 1.0
    assert np.isnan(float(jax.grad(naive_log1pexp)(100.0)))
    assert log1pexp_jvp.__name__ == "log1pexp_jvp"  # defjvp returns the rule (decorator use)
    assert log1pexp.__name__ == "log1pexp"


def test_log1pexp_values_grad_and_jvp(rng):
    x = f32(rng, 11)
    np.testing.assert_allclose(A(log1pexp(x)), np.log1p(np.exp(A(x))), rtol=1e-5, atol=1e-6)
    g = jax.grad(lambda v: jnp.sum(log1pexp(v)))(x)
    h = 1e-6
    fd = (np.log1p(np.exp(A(x) + h)) - np.log1p(np.exp(A(x) - h))) / (2 * h)
    np.testing.assert_allclose(A(g), fd, rtol=1e-5, atol=1e-6)
    t = f32(rng, 11)
    y, yt = jax.jvp(log1pexp, (x,), (t,))
    np.testing.assert_allclose(A(y), np.log1p(np.exp(A(x))), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A(yt), A(t) * sig(x), rtol=1e-5, atol=1e-6)
    # jvp at 100 is the tangent itself (the naive derivative is nan).
    big = np.full(3, 100.0, np.float32)
    np.testing.assert_array_equal(A(jax.jvp(log1pexp, (big,), (t[:3],))[1]), A(t[:3]))


def test_log1pexp_second_derivative(rng):
    x = f32(rng, 9)
    g1 = jax.grad(lambda v: jnp.sum(log1pexp(v)))
    g2 = jax.grad(lambda v: jnp.sum(g1(v)))(x)
    np.testing.assert_allclose(A(g2), sig(x) * (1 - sig(x)), rtol=1e-4, atol=1e-6)


def test_log1pexp_vmap(rng):
    xs = f32(rng, 4, 5)
    loss = lambda v: jnp.sum(log1pexp(v))  # noqa: E731
    ys = jax.vmap(log1pexp)(xs)
    gs = jax.vmap(jax.grad(loss))(xs)
    gsum = jax.grad(lambda m: jnp.sum(jax.vmap(log1pexp)(m)))(xs)
    want_y = np.stack([A(log1pexp(r)) for r in xs])
    want_g = np.stack([A(jax.grad(loss)(r)) for r in xs])
    np.testing.assert_allclose(A(ys), want_y, rtol=1e-6)
    np.testing.assert_allclose(A(gs), want_g, rtol=1e-6)
    np.testing.assert_allclose(A(gsum), want_g, rtol=1e-6)
    np.testing.assert_allclose(A(gs), sig(xs), rtol=1e-5, atol=1e-6)
    big = np.full((3, 2), 100.0, np.float32)
    np.testing.assert_array_equal(A(jax.vmap(jax.grad(loss))(big)), np.ones((3, 2)))


def test_defjvps(rng):
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    # Deliberately not the true derivative in y (3x the true one) so the rules are seen used.
    f.defjvps(lambda t, ans, x, y: jnp.cos(x) * y * t,
              lambda t, ans, x, y: 3.0 * jnp.sin(x) * t)
    x, y = f32(rng, 6), f32(rng, 6)
    tx, ty = f32(rng, 6), f32(rng, 6)
    out, tout = jax.jvp(f, (x, y), (tx, ty))
    np.testing.assert_allclose(A(out), np.sin(A(x)) * A(y), rtol=1e-5, atol=1e-6)
    want = np.cos(A(x)) * A(y) * A(tx) + 3 * np.sin(A(x)) * A(ty)
    np.testing.assert_allclose(A(tout), want, rtol=1e-5, atol=1e-5)
    gx, gy = jax.grad(lambda a, b: jnp.sum(f(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(A(gx), np.cos(A(x)) * A(y), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A(gy), 3 * np.sin(A(x)), rtol=1e-5, atol=1e-6)

    # None: that argument contributes a zero tangent.
    @jax.custom_jvp
    def g(x, y):
        return x * y

    g.defjvps(None, lambda t, ans, x, y: x * t)
    gx, gy = jax.grad(lambda a, b: jnp.sum(g(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(A(gx), np.zeros(6))
    np.testing.assert_allclose(A(gy), A(x), rtol=1e-6)


def test_custom_jvp_pytrees_and_nondiff_argnums(rng):
    @jax.custom_jvp
    def f(p):
        return {"s": jnp.sin(p["a"]) * p["b"][0], "c": p["b"][1]}

    @f.defjvp
    def f_jvp(primals, tangents):
        (p,), (t,) = primals, tangents
        out = f(p)
        # 2 instead of cos(a) in the first term.
        return out, {"s": 2.0 * t["a"] * p["b"][0] + jnp.sin(p["a"]) * t["b"][0],
                     "c": t["b"][1]}

    a, b0, b1 = f32(rng, 4), f32(rng, 4), f32(rng, 3)
    grads = jax.grad(lambda p: jnp.sum(f(p)["s"]) + jnp.sum(f(p)["c"]))(
        {"a": a, "b": (b0, b1)})
    np.testing.assert_allclose(A(grads["a"]), 2 * A(b0), rtol=1e-6)
    np.testing.assert_allclose(A(grads["b"][0]), np.sin(A(a)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(A(grads["b"][1]), np.ones(3))

    # nondiff_argnums: the static value comes first to the rule.
    seen = []

    def app(fn, x):
        return fn(x)

    app = jax.custom_jvp(app, nondiff_argnums=(0,))

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        seen.append(fn)
        x, = primals
        t, = tangents
        return app(fn, x), 5.0 * t

    x = f32(rng, 5)
    np.testing.assert_allclose(A(app(jnp.tanh, x)), np.tanh(A(x)), rtol=1e-5, atol=1e-6)
    g = jax.grad(lambda v: jnp.sum(app(jnp.tanh, v)))(x)
    np.testing.assert_array_equal(A(g), np.full(5, 5.0))
    assert seen and all(s is jnp.tanh for s in seen)
    with pytest.raises(TypeError,
                       match=re.escape("Can't use ``defjvps`` with ``nondiff_argnums``.")):
        app.defjvps(None)


def test_custom_jvp_errors_and_jaxpr(rng):
    x = f32(rng, 3)

    @jax.custom_jvp
    def f(x):
        return x * 2.0

    with pytest.raises(AttributeError,
                       match="No JVP defined for custom_jvp function f using defjvp."):
        f(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return tangents[0]

    with pytest.raises(TypeError, match=re.escape(
            "Custom JVP rule f_jvp for function f must produce a pair (list or tuple of length "
            "two) representing primal and tangent outputs, but got")):
        jax.jvp(f, (x,), (x,))

    f.defjvp(lambda ps, ts: (ps[0] * 2.0, (ts[0], ts[0])))
    with pytest.raises(TypeError, match=re.escape(
            "must produce primal and tangent outputs with equal container (pytree) structures, "
            "but got PyTreeDef(*) and PyTreeDef((*, *)) respectively.")):
        jax.jvp(f, (x,), (x,))

    text = str(jax.make_jaxpr(log1pexp)(x))
    assert "custom_jvp_call[" in text and "log1p" in text, text
    gtext = str(jax.make_jaxpr(jax.grad(lambda v: jnp.sum(log1pexp(v))))(x))
    # Under grad the rule is traced: its sigmoid 1 / (1 + exp(-x)) appears (the rule's primal
    # output calls log1pexp, a custom_jvp_call of its own, as in JAX's documentation example).
    assert "neg" in gtext and "div" in gtext, gtext


# ---------------------------------------------------------------- custom_vjp

@jax.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (None, None, jnp.clip(g, lo, hi))


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@jax.custom_vjp
def custom_sin(x):
    return jnp.sin(x)


custom_sin.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda cos_x, g: (g * cos_x,))


def test_clip_gradient_uses_bwd(rng):
    x = f32(rng, 7)
    np.testing.assert_array_equal(A(clip_gradient(-1.0, 1.0, x)), A(x))
    g = jax.grad(lambda v: jnp.sum(clip_gradient(-1.0, 1.0, v) * 5.0))(x)
    np.testing.assert_array_equal(A(g), np.ones(7))  # true derivative 5, clipped to 1
    u = f32(rng, 7, lo=-3, hi=3)
    y, f_vjp = jax.vjp(lambda v: clip_gradient(-0.5, 0.5, v), x)
    (c,) = f_vjp(u)
    np.testing.assert_array_equal(A(c), np.clip(A(u), -0.5, 0.5))
    # The lo/hi arguments get zero cotangents (None from bwd).
    glo = jax.grad(lambda lo: jnp.sum(clip_gradient(lo, 1.0, x)))(-1.0)
    assert float(glo) == 0.0


def test_grad_of_grad_with_differentiable_bwd(rng):
    x = f32(rng, 8, lo=-3, hi=3)
    g1 = jax.grad(lambda v: jnp.sum(custom_sin(v)))
    np.testing.assert_allclose(A(g1(x)), np.cos(A(x)), rtol=1e-5, atol=1e-6)
    g2 = jax.grad(lambda v: jnp.sum(g1(v)))(x)
    np.testing.assert_allclose(A(g2), -np.sin(A(x)), rtol=1e-5, atol=1e-6)


def test_custom_vjp_vmap(rng):
    xs = f32(rng, 4, 3, lo=-3, hi=3)
    np.testing.assert_allclose(A(jax.vmap(custom_sin)(xs)), np.sin(A(xs)), rtol=1e-5, atol=1e-6)
    loss = lambda v: jnp.sum(clip_gradient(-1.0, 1.0, v) * 3.0)  # noqa: E731
    loss_sin = lambda v: jnp.sum(custom_sin(v) * 3.0)  # noqa: E731
    vg = jax.vmap(jax.grad(loss))(xs)
    gv = jax.grad(lambda m: jnp.sum(jax.vmap(lambda v: clip_gradient(-1.0, 1.0, v))(m) * 3.0))(xs)
    gs = jax.grad(lambda m: jnp.sum(jax.vmap(custom_sin)(m) * 3.0))(xs)
    want_c = np.stack([A(jax.grad(loss)(r)) for r in xs])
    want_s = np.stack([A(jax.grad(loss_sin)(r)) for r in xs])
    np.testing.assert_array_equal(A(vg), want_c)
    np.testing.assert_array_equal(A(gv), want_c)
    np.testing.assert_array_equal(want_c, np.ones((4, 3)))
    np.testing.assert_allclose(A(gs), want_s, rtol=1e-6)
    np.testing.assert_allclose(want_s, 3 * np.cos(A(xs)), rtol=1e-5, atol=1e-5)
    # Batched along axis 1.
    gt = jax.grad(lambda m: jnp.sum(jax.vmap(custom_sin, in_axes=1)(m)))(xs)
    np.testing.assert_allclose(A(gt), np.cos(A(xs)), rtol=1e-5, atol=1e-6)


def test_residuals_dict_and_several_arguments(rng):
    # f(x, y) = x*y + sin(x), residuals a dict; bwd takes the output cotangent as a pytree.
    @jax.custom_vjp
    def f(x, y):
        return {"out": x * y + jnp.sin(x), "y": y}

    def f_fwd(x, y):
        return f(x, y), {"x": x, "y": y, "cos": jnp.cos(x)}

    def f_bwd(res, g):
        go = g["out"]
        return go * (res["y"] + res["cos"]), go * res["x"] + g["y"]

    f.defvjp(f_fwd, f_bwd)
    x, y = f32(rng, 5), f32(rng, 5)
    gx, gy = jax.grad(lambda a, b: jnp.sum(f(a, b)["out"]) + 2.0 * jnp.sum(f(a, b)["y"]),
                      argnums=(0, 1))(x, y)
    np.testing.assert_allclose(A(gx), A(y) + np.cos(A(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A(gy), A(x) + 2.0, rtol=1e-5, atol=1e-6)
    # Under vmap over x only: y's cotangent sums over the batch.
    xs = f32(rng, 3, 5)
    gyb = jax.grad(lambda b: jnp.sum(jax.vmap(f, in_axes=(0, None))(xs, b)["out"]))(y)
    np.testing.assert_allclose(A(gyb), A(xs).sum(0), rtol=1e-5, atol=1e-5)


def test_custom_vjp_nondiff_argnums(rng):
    seen = []

    def scale_grad(k, x):
        return x * 1.0

    scale_grad = jax.custom_vjp(scale_grad, nondiff_argnums=(0,))

    def sg_fwd(k, x):
        return x * 1.0, None

    def sg_bwd(k, res, g):
        seen.append(k)
        return (g * k,)

    scale_grad.defvjp(sg_fwd, sg_bwd)
    x = f32(rng, 4)
    k = float(rng.uniform(2, 5))
    np.testing.assert_array_equal(A(scale_grad(k, x)), A(x))
    g = jax.grad(lambda v: jnp.sum(scale_grad(k, v)))(x)
    np.testing.assert_allclose(A(g), np.full(4, k), rtol=1e-6)
    assert seen == [k]


def test_keyword_and_default_arguments(rng):
    @jax.custom_vjp
    def f(x, y=2.0):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (3.0 * g * r[1], None))
    x, y = f32(rng, 4), f32(rng, 4)
    np.testing.assert_allclose(A(f(x, y=y)), A(x) * A(y), rtol=1e-6)
    np.testing.assert_allclose(A(jax.grad(lambda a: jnp.sum(f(a, y=y)))(x)), 3 * A(y), rtol=1e-6)
    np.testing.assert_allclose(A(jax.grad(lambda a: jnp.sum(f(a)))(x)), np.full(4, 6.0), rtol=1e-6)

    def boom(r, g):
        raise ValueError("boom from bwd")

    f.defvjp(lambda x, y: (x * y, None), boom)
    with pytest.raises(ValueError, match="boom from bwd"):  # rule exceptions pass unchanged
        jax.grad(lambda a: jnp.sum(f(a)))(x)


def test_custom_vjp_errors_and_jaxpr(rng):
    x = f32(rng, 3)
    with pytest.raises(TypeError, match=re.escape(
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function.")):
        jax.jvp(custom_sin, (x,), (x,))

    @jax.custom_vjp
    def two(v):
        return v

    with pytest.raises(AttributeError,
                       match="No VJP defined for custom_vjp function two using defvjp."):
        two(x)
    two.defvjp(lambda v: (v, None), lambda _, g: (g, g))
    np.testing.assert_array_equal(A(two(x)), A(x))  # the primal call does not check bwd
    with pytest.raises(TypeError, match=re.escape(
            "Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must produce "
            "a tuple of length equal to the number of arguments to the primal function, but got "
            "bwd output structure PyTreeDef((*, *)) for primal input structure PyTreeDef((*,)).")):
        jax.grad(lambda v: jnp.sum(two(v)))(x)
    two.defvjp(lambda v: (v, None), lambda _, g: 2.0 * g)  # not a tuple
    with pytest.raises(TypeError, match="Custom VJP bwd rule .* must produce a tuple"):
        jax.grad(lambda v: jnp.sum(two(v)))(x)
    two.defvjp(lambda v: v, lambda _, g: (g,))  # fwd not a pair
    with pytest.raises(TypeError, match="must produce a pair"):
        jax.grad(lambda v: jnp.sum(two(v)))(x)

    text = str(jax.make_jaxpr(custom_sin)(x))
    assert "custom_vjp_call[" in text and "sin" in text, text


# ---------------------------------------------------------------- symbolic zeros, closure_convert

def test_symbolic_zeros_reach_the_rule(rng):
    seen = []

    @jax.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen.append((type(tx).__name__, type(ty).__name__))
        out = x * y
        parts = []
        if not isinstance(tx, jax.custom_derivatives.SymbolicZero):
            parts.append(tx * y)
        if not isinstance(ty, jax.custom_derivatives.SymbolicZero):
            parts.append(x * ty)
        if not parts:
            return out, jax.custom_derivatives.SymbolicZero(out.shape, out.dtype)
        t = parts[0]
        for p in parts[1:]:
            t = t + p
        return out, t

    f.defjvp(f_jvp, symbolic_zeros=True)
    x, y = f32(rng, 5), f32(rng, 5)
    g = jax.grad(lambda a: jnp.sum(f(a, y)))(x)
    np.testing.assert_allclose(np.asarray(g), y, rtol=1e-6)
    assert seen[-1] == ("Array", "SymbolicZero") or seen[-1][1] == "SymbolicZero"
    # Tangent in y only.
    _, t = jax.jvp(lambda b: f(x, b), (y,), (np.ones(5, np.float32),))
    np.testing.assert_allclose(np.asarray(t), x, rtol=1e-6)
    assert seen[-1][0] == "SymbolicZero"
    z = jax.custom_derivatives.SymbolicZero((5,), jnp.float32)
    assert z.shape == (5,) and "SymbolicZero" in repr(z)


def test_closure_convert_hoists_traced_values(rng):
    w = f32(rng, 4)
    x0 = f32(rng, 4)

    def outer(a):
        def inner(x):
            return jnp.sin(a * x)  # closes over the traced a

        conv, consts = jax.closure_convert(inner, x0)
        assert len(consts) == 1  # a is hoisted
        return jnp.sum(conv(x0, *consts))

    got = jax.grad(outer)(w)
    want = np.cos(A(w) * A(x0)) * A(x0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    # Outside any transformation nothing is traced: nothing is hoisted.
    conv, consts = jax.closure_convert(lambda x: x * w, x0)
    assert consts == []
    np.testing.assert_allclose(np.asarray(conv(x0)), A(x0) * A(w), rtol=1e-6)


def test_custom_calls_applied_to_linear_values_transpose_through_their_body(rng):
    """A custom_vjp (or custom_jvp) function called on tangents inside a custom_jvp rule is
    linear there; reverse mode transposes its body (JAX inlines the primal function in that
    case), and forward mode evaluates it."""
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    A = jnp.asarray(a, jnp.float32)

    @jax.custom_vjp
    def lin(r):
        return jnp.linalg.solve(A, r)

    lin.defvjp(lambda r: (lin(r), None), lambda res, ct: (jnp.linalg.solve(A.T, ct),))

    @jax.custom_jvp
    def smooth(r):
        return r * 2.0

    smooth.defjvp(lambda p, t: (smooth(p[0]), smooth(t[0])))

    @jax.custom_jvp
    def f(b):
        return lin(b)

    @f.defjvp
    def f_jvp(primals, tangents):
        return lin(primals[0]), smooth(lin(tangents[0]))

    b = jnp.asarray(rng.standard_normal(3), jnp.float32)
    _, t = jax.jvp(f, (b,), (b,))
    np.testing.assert_allclose(np.asarray(t), 2 * np.linalg.solve(a, np.asarray(b)), rtol=1e-4)
    g = jax.grad(lambda v: jnp.sum(f(v) * jnp.arange(1.0, 4.0)))(b)
    np.testing.assert_allclose(np.asarray(g), 2 * np.linalg.solve(a.T, np.arange(1.0, 4.0)),
                               rtol=1e-4)
