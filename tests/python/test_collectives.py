"""lax's collectives over vmap's named axes (psum, pmean, pmax, pmin, all_gather, axis_index,
psum_scatter, ppermute, pshuffle) and jax.pmap, against NumPy over the stacked members on fresh
random inputs (the `rng` fixture prints its seed): pytrees, nested and multiple axes, jit inside
and outside, grad against closed forms, and JAX's errors (NameError for unbound names; pmap's
device-count check)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax


def A(x):
    return np.asarray(x)


def test_reductions_and_pytrees(rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    out = jax.vmap(lambda v: {"s": lax.psum(v, "i"), "m": lax.pmean(v, "i"),
                              "hi": lax.pmax(v, "i"), "lo": lax.pmin(v, "i")},
                   axis_name="i")(x)
    np.testing.assert_allclose(A(out["s"]), np.broadcast_to(x.sum(0), x.shape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(A(out["m"]), np.broadcast_to(x.mean(0), x.shape), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(A(out["hi"]), np.broadcast_to(x.max(0), x.shape))
    np.testing.assert_array_equal(A(out["lo"]), np.broadcast_to(x.min(0), x.shape))
    tree = jax.vmap(lambda a, b: lax.psum((a, {"b": b}), "i"), axis_name="i")(x, x[:, 0])
    np.testing.assert_allclose(A(tree[1]["b"]), np.full(5, x[:, 0].sum()), rtol=1e-5, atol=1e-5)
    # lax.psum(1, name) is the axis size.
    np.testing.assert_array_equal(A(jax.vmap(lambda v: lax.psum(1, "i"), axis_name="i")(x)),
                                  np.full(5, 5))


def test_gather_index_scatter_permute(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    g = jax.vmap(lambda v: lax.all_gather(v, "i", axis=1), axis_name="i")(x)
    np.testing.assert_array_equal(A(g), np.broadcast_to(x.T, (4, 3, 4)))
    np.testing.assert_array_equal(A(jax.vmap(lambda v: lax.axis_index("i"), axis_name="i")(x)),
                                  np.arange(4))
    y = rng.standard_normal((4, 8)).astype(np.float32)
    s = jax.vmap(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(y)
    np.testing.assert_allclose(A(s), y.sum(0).reshape(4, 2), rtol=1e-5, atol=1e-5)
    p = jax.vmap(lambda v: lax.ppermute(v, "i", [(0, 2), (2, 0), (1, 3)]), axis_name="i")(x)
    np.testing.assert_array_equal(A(p), np.stack([x[2], np.zeros(3), x[0], x[1]]))
    q = jax.vmap(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0]), axis_name="i")(x)
    np.testing.assert_array_equal(A(q), x[::-1])


def test_batch_norm_style_statistics_under_jit_and_grad(rng):
    x = rng.standard_normal((6, 4)).astype(np.float32)

    def normalize(v):
        mu = lax.pmean(v, "batch")
        var = lax.pmean((v - mu) ** 2, "batch")
        return (v - mu) / jnp.sqrt(var + 1e-5)

    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    for f in (jax.vmap(normalize, axis_name="batch"),
              jax.jit(jax.vmap(normalize, axis_name="batch")),
              jax.vmap(jax.jit(normalize), axis_name="batch")):
        np.testing.assert_allclose(A(f(x)), want, rtol=1e-4, atol=1e-5)
    # The gradient of sum_k v_k * psum(v) over members is 2 * psum(v).
    g = jax.grad(lambda a: jnp.sum(jax.vmap(lambda v: jnp.sum(v * lax.psum(v, "i")),
                                            axis_name="i")(a)))(x)
    np.testing.assert_allclose(A(g), np.broadcast_to(2 * x.sum(0), x.shape), rtol=1e-5, atol=1e-5)


def test_nested_and_multiple_axes(rng):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    f = jax.vmap(jax.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(A(f(x)), np.broadcast_to(x.sum((0, 1)), x.shape), rtol=1e-5,
                               atol=1e-6)
    f = jax.vmap(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(A(f(x)), np.broadcast_to(x.sum(0), x.shape), rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(jnp.ones(3), "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        jax.vmap(lambda v: lax.pmax(v, "k"), axis_name="i")(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="unique"):
        jax.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]), axis_name="i")(jnp.ones(2))


def test_pmap_one_device_and_device_count_check():
    x = jnp.arange(3.0)[None]
    np.testing.assert_array_equal(A(jax.pmap(lambda v: v * 2)(x)), [[0.0, 2.0, 4.0]])
    np.testing.assert_array_equal(
        A(jax.pmap(lambda v, n: lax.psum(v, "d") * n, axis_name="d",
                   static_broadcasted_argnums=1)(x, 3)), [[0.0, 3.0, 6.0]])
    if jax.local_device_count() == 1:
        with pytest.raises(ValueError, match="requires 2 logical devices"):
            jax.pmap(lambda v: v)(jnp.ones((2, 3)))


def test_pmap_over_four_cpu_devices():
    code = ("import json, numpy as np, tessera as jax, tessera.numpy as jnp\n"
            "from tessera import lax\n"
            "x = jnp.arange(8.0).reshape(4, 2)\n"
            "y = jax.pmap(lambda v: v - lax.pmean(v, 'd'), axis_name='d')(x)\n"
            "g = jax.grad(lambda a: jax.pmap(lambda v: lax.psum(v * v, 'd'), "
            "axis_name='d')(a).sum())(x)\n"
            "print(json.dumps([np.asarray(y).tolist(), np.asarray(g).tolist()]))\n")
    env = dict(os.environ, TESSERA_NUM_CPU_DEVICES="4", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    y, g = json.loads(out.stdout.strip().splitlines()[-1])
    x = np.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose(y, x - x.mean(0))
    np.testing.assert_allclose(g, 8 * x)
