"""tessera.checkpoint / remat, checkpoint_name, checkpoint_policies and saved_residuals (JAX's
jax.checkpoint API) on fresh random inputs: gradients through checkpoint equal gradients without
it and float64 finite differences for every policy; the policies decide the saved residuals;
checkpoint composes with grad(grad), vmap(grad), jvp, linearize; static_argnums, prevent_cse,
decorator forms and make_jaxpr text follow JAX.

The seed comes from TESSERA_TEST_SEED (or the clock) and is printed with each test's output.
"""
import functools

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera.ad_checkpoint import checkpoint_name


cp = jax.checkpoint_policies


def A(x):
    return np.asarray(x, dtype=np.float64)


def model(x, w):
    h1 = checkpoint_name(jnp.tanh(x @ w), "h1")
    h2 = checkpoint_name(jnp.sin(h1 @ w), "h2")
    return jnp.sum(h2 * h2)


def model_np(x, w):
    h1 = np.tanh(x @ w)
    h2 = np.sin(h1 @ w)
    return np.sum(h2 * h2)


POLICIES = {
    "default": None,
    "everything_saveable": cp.everything_saveable,
    "nothing_saveable": cp.nothing_saveable,
    "dots_saveable": cp.dots_saveable,
    "checkpoint_dots": cp.checkpoint_dots,
    "dots_with_no_batch_dims_saveable": cp.dots_with_no_batch_dims_saveable,
    "save_only_these_names": cp.save_only_these_names("h1"),
    "save_any_names_but_these": cp.save_any_names_but_these("h1"),
    "save_anything_except_these_names": cp.save_anything_except_these_names("h2"),
    "save_from_both_policies": cp.save_from_both_policies(cp.dots_saveable,
                                                          cp.save_only_these_names("h2")),
    "custom_python_policy": lambda prim, *avals, **params: prim.name == "tanh",
}


def fd_grad(f, args, i, h=1e-6):
    args = [A(a) for a in args]
    g = np.zeros_like(args[i])
    for idx in np.ndindex(args[i].shape):
        p = [a.copy() for a in args]
        m = [a.copy() for a in args]
        p[i][idx] += h
        m[i][idx] -= h
        g[idx] = (f(*p) - f(*m)) / (2 * h)
    return g


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_grad_equals_plain_and_finite_differences(rng, name):
    policy = POLICIES[name]
    x = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (5, 5)).astype(np.float32)
    f = jax.checkpoint(model, policy=policy)
    gx, gw = jax.grad(f, argnums=(0, 1))(x, w)
    px, pw = jax.grad(model, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(A(gx), A(px), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(A(gw), A(pw), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(A(f(x, w)), model_np(A(x), A(w)), rtol=1e-5)
    np.testing.assert_allclose(A(gx), fd_grad(model_np, [x, w], 0), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(A(gw), fd_grad(model_np, [x, w], 1), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["default", "everything_saveable", "dots_saveable",
                                  "save_only_these_names", "custom_python_policy"])
def test_float64_grad_matches_finite_differences(rng, name):
    jax.config.update("jax_enable_x64", True)
    try:
        x = rng.uniform(-1, 1, (3, 4))
        w = rng.uniform(-1, 1, (4, 4))
        gx, gw = jax.grad(jax.remat(model, policy=POLICIES[name]), argnums=(0, 1))(
            jnp.asarray(x), jnp.asarray(w))
        assert gx.dtype == np.float64
        np.testing.assert_allclose(A(gx), fd_grad(model_np, [x, w], 0), rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose(A(gw), fd_grad(model_np, [x, w], 1), rtol=1e-7, atol=1e-8)
    finally:
        jax.config.update("jax_enable_x64", False)


def sources(f, *args, **kwargs):
    return sorted(src for _aval, src in jax.ad_checkpoint.saved_residuals(f, *args, **kwargs))


def test_saved_residuals_follow_the_policy(rng):
    x = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (5, 5)).astype(np.float32)
    args_only = ["from the argument w", "from the argument x"]
    assert sources(jax.checkpoint(model), x, w) == args_only
    assert sources(jax.checkpoint(model, policy=cp.nothing_saveable), x, w) == args_only
    assert sources(jax.checkpoint(model, policy=cp.save_only_these_names("h1")), x, w) == \
        sorted(args_only + ["named 'h1'"])
    assert sources(jax.checkpoint(model, policy=cp.save_any_names_but_these("h1")), x, w) == \
        sorted(args_only + ["named 'h2'"])
    dots = jax.ad_checkpoint.saved_residuals(jax.checkpoint(model, policy=cp.dots_saveable), x, w)
    assert sorted(s for _, s in dots) == sorted(args_only + ["output of dot_general"] * 2)
    for aval, s in dots:
        if s == "output of dot_general":
            assert aval.shape == (4, 5) and aval.dtype == np.float32
    n_nothing = len(jax.ad_checkpoint.saved_residuals(jax.checkpoint(model), x, w))
    n_every = len(jax.ad_checkpoint.saved_residuals(
        jax.checkpoint(model, policy=cp.everything_saveable), x, w))
    n_plain = len(jax.ad_checkpoint.saved_residuals(model, x, w))
    assert n_nothing == 2 < n_every == n_plain
    # linearize through the remat: its linear function is the plain JVP.
    _, f_lin = jax.linearize(jax.checkpoint(model, policy=cp.save_only_these_names("h1")), x, w)
    tx = rng.uniform(-1, 1, x.shape).astype(np.float32)
    tw = rng.uniform(-1, 1, w.shape).astype(np.float32)
    _, t_plain = jax.jvp(model, (x, w), (tx, tw))
    np.testing.assert_allclose(A(f_lin(tx, tw)), A(t_plain), rtol=1e-4, atol=1e-5)
    # Pytree and keyword arguments are named by their paths.
    srcs = sources(lambda p, *, scale: jnp.sum(jnp.sin(p["a"] * scale)),
                   {"a": x}, scale=w[:1, :])
    assert "from the argument p['a']" in srcs and "from the argument scale" in srcs


def test_print_saved_residuals(rng, capsys):
    x = rng.uniform(-1, 1, (3,)).astype(np.float32)
    jax.ad_checkpoint.print_saved_residuals(jax.checkpoint(lambda v: jnp.sin(jnp.sin(v))), x)
    assert capsys.readouterr().out == "f32[3] from the argument v\n"
    jax.ad_checkpoint.print_saved_residuals(
        jax.checkpoint(lambda v: jnp.sin(checkpoint_name(jnp.sin(v), "s")),
                       policy=cp.save_only_these_names("s")), x)
    assert capsys.readouterr().out.splitlines() == ["f32[3] from the argument v",
                                                    "f32[3] named 's'"]


def test_dots_with_no_batch_dims(rng):
    a = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (2, 4, 3)).astype(np.float32)
    m = rng.uniform(-1, 1, (3, 3)).astype(np.float32)

    def f(a, b):
        c = jnp.einsum("bij,bjk->bik", a, b)
        d = jnp.sin(c.reshape(6, 3)) @ m
        return jnp.sum(jnp.sin(d))

    res = jax.ad_checkpoint.saved_residuals(
        jax.checkpoint(f, policy=cp.dots_with_no_batch_dims_saveable), a, b)
    dots = [aval.shape for aval, s in res if s == "output of dot_general"]
    assert dots == [(6, 3)]
    res = jax.ad_checkpoint.saved_residuals(jax.checkpoint(f, policy=cp.dots_saveable), a, b)
    assert sum(s == "output of dot_general" for _, s in res) == 2
    seen = []

    def spy(prim, *avals, **params):
        if prim.name == "dot_general":
            seen.append(params["dimension_numbers"])
        return False

    jax.grad(jax.checkpoint(f, policy=spy))(a, b)
    # JAX's dimension_numbers: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)).
    assert {tuple(map(tuple, d[1])) for d in seen} == {((0,), (0,)), ((), ())}


def f1(x):
    return np.sin(np.sin(x)) * x


def df1(x):
    return np.cos(np.sin(x)) * np.cos(x) * x + np.sin(np.sin(x))


@pytest.mark.parametrize("name", ["default", "everything_saveable", "save_only_these_names"])
def test_grad_of_grad(rng, name):
    jax.config.update("jax_enable_x64", True)
    try:
        f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)) * x, policy=POLICIES[name])
        for x0 in rng.uniform(-2, 2, 3):
            x = jnp.asarray(np.float64(x0))
            np.testing.assert_allclose(float(jax.grad(f)(x)), df1(x0), rtol=1e-10)
            h = 1e-5
            np.testing.assert_allclose(float(jax.grad(jax.grad(f))(x)),
                                       (df1(x0 + h) - df1(x0 - h)) / (2 * h), rtol=1e-6, atol=1e-7)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_vmap_of_grad(rng):
    xs = rng.uniform(-2, 2, (5, 3)).astype(np.float32)
    f = jax.checkpoint(lambda x: jnp.sum(jnp.sin(jnp.sin(x)) * x))
    g = jax.vmap(jax.grad(f))(xs)
    np.testing.assert_allclose(A(g), df1(A(xs)), rtol=1e-5, atol=1e-5)
    y = jax.vmap(f)(xs)
    np.testing.assert_allclose(A(y), f1(A(xs)).sum(1), rtol=1e-5, atol=1e-5)


def test_jvp(rng):
    x = rng.uniform(-2, 2, (6,)).astype(np.float32)
    t = rng.uniform(-1, 1, (6,)).astype(np.float32)
    y, ty = jax.jvp(jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)) * v), (x,), (t,))
    np.testing.assert_allclose(A(ty), df1(A(x)) * A(t), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(A(y), f1(A(x)), rtol=1e-5, atol=1e-6)


def test_static_argnums_and_decorators(rng):
    x = rng.uniform(-2, 2, (4,)).astype(np.float32)

    @functools.partial(jax.checkpoint, static_argnums=(1,))
    def f(v, training):
        if training:  # a Python branch on a static argument
            return jnp.sum(jnp.sin(v))
        return jnp.sum(jnp.cos(v))

    np.testing.assert_allclose(A(jax.grad(f)(x, True)), np.cos(A(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A(jax.grad(f)(x, False)), -np.sin(A(x)), rtol=1e-5, atol=1e-6)

    @jax.checkpoint
    def g(v, scale=2.0):
        return jnp.sum(jnp.sin(v) * scale)

    np.testing.assert_allclose(A(jax.grad(g)(x)), 2 * np.cos(A(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(A(jax.grad(g)(x, scale=3.0)), 3 * np.cos(A(x)), rtol=1e-5,
                               atol=1e-6)
    assert g.__name__ == "g"
    h = functools.partial(jax.remat, policy=cp.dots_saveable, prevent_cse=False)(
        lambda v: jnp.sum(jnp.tanh(v)))
    np.testing.assert_allclose(A(jax.grad(h)(x)), 1 - np.tanh(A(x)) ** 2, rtol=1e-5, atol=1e-6)
    # Pytree outputs.
    k = jax.checkpoint(lambda d: {"s": jnp.sin(d["a"]), "c": (jnp.cos(d["a"]),)})
    out = k({"a": x})
    np.testing.assert_allclose(A(out["c"][0]), np.cos(A(x)), rtol=1e-6)
    with pytest.raises(TypeError, match="static_argnums"):
        jax.checkpoint(f, static_argnums="1")
    with pytest.raises(ValueError, match="static_argnums"):
        jax.checkpoint(f, static_argnums=(3,))(x, True)


def test_make_jaxpr_text(rng):
    x = rng.uniform(-2, 2, (3,)).astype(np.float32)
    f = jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))
    s = str(jax.make_jaxpr(f)(x))
    assert "checkpoint[" in s and "differentiated=False" in s
    assert "jaxpr={ lambda ; " in s and "policy=None" in s and "prevent_cse=True" in s
    assert s.count("sin") == 2
    s2 = str(jax.make_jaxpr(jax.checkpoint(f, policy=cp.dots_saveable, prevent_cse=False))(x))
    assert "policy=dots_saveable" in s2 and "prevent_cse=False" in s2
    s3 = str(jax.make_jaxpr(jax.grad(lambda v: jnp.sum(f(v))))(x))
    assert "differentiated=True" in s3
    s4 = str(jax.make_jaxpr(lambda v: checkpoint_name(v, "a"))(x))
    assert "name[name=a]" in s4


def test_closure_and_errors(rng):
    x = rng.uniform(-2, 2, (7,)).astype(np.float32)

    def outer(w):
        return jax.checkpoint(lambda v: jnp.sum(jnp.sin(v * w)))(x)

    w0 = np.float32(0.7)
    np.testing.assert_allclose(float(jax.grad(outer)(w0)), np.sum(np.cos(A(x) * 0.7) * A(x)),
                               rtol=1e-4)

    def bad_policy(prim, *avals, **params):
        return "yes"

    with pytest.raises(TypeError, match="must return a bool"):
        jax.grad(jax.checkpoint(lambda v: jnp.sum(jnp.sin(v)), policy=bad_policy))(x)
    with pytest.raises(TypeError):
        checkpoint_name(x, 3)


def test_inside_scan_body(rng):
    from tessera import lax
    c0 = rng.uniform(-1, 1, (3,)).astype(np.float32)
    xs = rng.uniform(-2, 2, (5, 3)).astype(np.float32)

    def make_loss(use_remat, policy=None):
        def step(c, x):
            return jnp.sin(jnp.sin(c) * x)

        if use_remat:
            step = jax.checkpoint(step, policy=policy)

        def loss(c, xs):
            def body(c, x):
                y = step(c, x)
                return y, y
            c, ys = lax.scan(body, c, xs)
            return jnp.sum(c) + jnp.sum(ys)
        return loss

    def loss_np(c, xs):
        total = 0.0
        for x in xs:
            c = np.sin(np.sin(c) * x)
            total += c.sum()
        return total + c.sum()

    want_c = fd_grad(loss_np, [c0, xs], 0)
    want_x = fd_grad(loss_np, [c0, xs], 1)
    for policy in [None, cp.everything_saveable, cp.dots_saveable]:
        gc, gx = jax.grad(make_loss(True, policy), argnums=(0, 1))(c0, xs)
        np.testing.assert_allclose(A(gc), want_c, rtol=1e-3, atol=2e-4)
        np.testing.assert_allclose(A(gx), want_x, rtol=1e-3, atol=2e-4)
    res = jax.ad_checkpoint.saved_residuals
    n_plain = len(res(make_loss(False), c0, xs))
    n_remat = len(res(make_loss(True), c0, xs))
    n_all = len(res(make_loss(True, cp.everything_saveable), c0, xs))
    print("residuals: plain", n_plain, "remat", n_remat, "everything", n_all)
    assert n_remat < n_plain == n_all
