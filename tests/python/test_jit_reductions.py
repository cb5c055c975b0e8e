"""Row reductions fused under tessera.jit (one kernel per softmax / layer norm / logsumexp):
bitwise equal to eager evaluation — a fused reduction folds in the eager kernel's order — and
close to NumPy float64 references, for the shapes and dtypes JAX programs use; the compiled
plan shows one fused kernel with its stages and no eager reduction. The seed is
TESSERA_TEST_SEED (or the clock), printed by conftest's `rng`."""
import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax


def softmax(x, axis=-1):
    m = jnp.max(x, axis=axis, keepdims=True)
    e = jnp.exp(x - lax.stop_gradient(m))
    return e / jnp.sum(e, axis=axis, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean(jnp.square(x - m), axis=-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + eps) * g + b


def logsumexp(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    return jnp.log(jnp.sum(jnp.exp(x - m), axis=-1)) + m[..., 0]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def executable_text(f, *args):
    text = jax.jit(f).lower(*args).compile().as_text()
    return text[text.index("executable"):]


@pytest.mark.parametrize("shape", [(4, 7), (33, 300), (2, 3, 513), (5, 4096), (1, 1)])
def test_softmax_is_one_kernel_and_eager_bitwise(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32) * 4
    got = jax.jit(softmax)(x)
    same(got, softmax(x))
    e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(got), e / e.sum(-1, keepdims=True), rtol=2e-6,
                               atol=1e-7)
    exe = executable_text(softmax, x)
    if x.shape[-1] > 1:
        assert exe.count("= fused ") == 1, exe
        assert "stage 1 -> r1 = add" in exe, exe
    assert "reduce_" not in exe, exe


def test_layer_norm_and_logsumexp(rng):
    x = (rng.standard_normal((64, 1024)) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(1024).astype(np.float32)
    b = rng.standard_normal(1024).astype(np.float32)
    got = jax.jit(layer_norm)(x, g, b)
    same(got, layer_norm(x, g, b))
    xd = x.astype(np.float64)
    m = xd.mean(-1, keepdims=True)
    ref = (xd - m) / np.sqrt(((xd - m) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-4, atol=1e-4)
    assert executable_text(layer_norm, x, g, b).count("= fused ") == 1
    y = rng.standard_normal((8, 3, 50)).astype(np.float32)
    lse = jax.jit(logsumexp)(y)
    same(lse, logsumexp(y))
    yd = y.astype(np.float64)
    np.testing.assert_allclose(np.asarray(lse), np.log(np.exp(yd).sum(-1)), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.float32, np.bool_])
def test_every_reducer_under_jit_equals_eager(rng, dtype):
    if dtype is np.bool_:
        x = rng.standard_normal((6, 77)) > 0.8

        def f(a):
            return jnp.any(a, axis=1) ^ jnp.all(~a | a, axis=1) | jnp.any(a & ~a, axis=-1)
    else:
        x = (rng.standard_normal((6, 77)) * 20).astype(dtype)

        def f(a):
            return (jnp.sum(a * 2, axis=1) + jnp.max(a, axis=1) - jnp.min(a - 1, axis=1)
                    + jnp.prod(a * 0 + 1, axis=1))
    same(jax.jit(f)(x), f(x))


def test_reductions_compose_with_grad_and_vmap(rng):
    x = rng.standard_normal((16, 40)).astype(np.float32)
    w = rng.standard_normal((40,)).astype(np.float32)

    def loss(w, x):
        return jnp.sum(softmax(x * w) ** 2)

    same(jax.jit(jax.grad(loss))(w, x), jax.grad(loss)(w, x))
    same(jax.jit(jax.vmap(softmax))(x), jax.vmap(softmax)(x))
    batched = jax.jit(jax.vmap(lambda r: jnp.sum(jnp.exp(r)), in_axes=0))(x)
    same(batched, jnp.sum(jnp.exp(x), axis=1))


def test_nan_inf_and_empty_rows():
    x = np.array([[1.0, np.nan, 2.0], [-np.inf, 0.0, 1.0], [np.inf, np.inf, 1.0]], np.float32)
    def f(a):
        return jnp.max(a, axis=1), jnp.sum(jnp.exp(a), axis=1)

    for got, want in zip(jax.jit(f)(x), f(x)):
        same(got, want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)[0]), np.max(x, axis=1))
    e = np.zeros((3, 0), np.float32)
    same(jax.jit(lambda a: jnp.sum(a * 2, axis=1) + 1)(e), np.ones(3, np.float32))


def test_sibling_kernels_share_their_input(rng):
    # Two row reductions and a map of one input: one kernel with three results (x read once).
    x = rng.standard_normal((32, 200)).astype(np.float32)

    def f(a):
        e = jnp.exp(a - jnp.max(a, axis=1, keepdims=True))
        return e / jnp.sum(e, axis=1, keepdims=True), jnp.tanh(a) * 2, a + 1

    for got, want in zip(jax.jit(f)(x), f(x)):
        same(got, want)
    exe = executable_text(f, x)
    assert exe.count("= fused ") == 1, exe
    cost = jax.jit(f).lower(x).compile().cost_analysis()
    assert cost["fusion.0 bytes accessed"] == 4 * x.size * 4, cost  # x once, three results
