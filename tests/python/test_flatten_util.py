"""tessera.flatten_util.ravel_pytree (jax.flatten_util) from Python.

References: NumPy concatenation of the raveled leaves in tree_flatten order (fresh random
pytrees of nested dicts, lists, tuples, None and scalars); JAX's promotion table for the flat
dtype (written out per case below); the leaves' own values and dtypes after unravel; grad
through unravel against the raveled tree gradient and against central differences in float64;
jit equal to eager; vmap of unravel equal to the loop."""

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera.flatten_util import ravel_pytree


def random_tree(rng, dtype=np.float32):
    """A nested pytree with leaves of assorted shapes (a 0-d one, a size-0 one) and a None."""
    def arr(shape):
        return jnp.asarray(rng.standard_normal(shape).astype(dtype))
    return {
        "dense": [arr((3, 4)), arr((4,))],
        "conv": (arr((2, 1, 3)), {"scale": arr(())}),
        "empty": arr((0, 2)),
        "none": None,
        "z": [arr((int(rng.integers(1, 5)),))],
    }


def np_ravel(tree):
    leaves = jax.tree_util.tree_leaves(tree)
    return np.concatenate([np.asarray(x, np.float64).ravel() for x in leaves])


def assert_trees_equal(a, b):
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        assert jnp.shape(x) == jnp.shape(y)
        assert jnp.asarray(x).dtype == jnp.asarray(y).dtype
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_round_trip_random_trees(rng):
    for _ in range(3):
        tree = random_tree(rng)
        flat, unravel = ravel_pytree(tree)
        assert flat.ndim == 1 and flat.dtype == jnp.float32
        np.testing.assert_array_equal(np.asarray(flat, np.float64), np_ravel(tree))
        assert_trees_equal(unravel(flat), tree)
        # unravel of another vector puts each segment in place of its leaf
        v = rng.standard_normal(flat.shape[0]).astype(np.float32)
        got = unravel(jnp.asarray(v))
        np.testing.assert_array_equal(np_ravel(got), v.astype(np.float64))


def test_single_leaf_and_scalars():
    flat, unravel = ravel_pytree(jnp.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(flat), np.arange(6.0))
    assert unravel(flat).shape == (2, 3)
    # Python scalars: int32 and float32 leaves (weak types are not kept) promote to float32.
    flat, unravel = ravel_pytree((1, 2.5, [True]))
    assert flat.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(flat), [1.0, 2.5, 1.0])
    back = unravel(flat)
    assert [x.dtype for x in jax.tree_util.tree_leaves(back)] == [jnp.int32, jnp.float32,
                                                                 jnp.bool_]
    assert int(back[0]) == 1 and float(back[1]) == 2.5 and bool(back[2][0]) is True


def test_empty_tree():
    for tree in [(), {}, [None, ()], None]:
        flat, unravel = ravel_pytree(tree)
        assert flat.shape == (0,) and flat.dtype == jnp.float32
        assert unravel(flat) == tree


# (leaf dtypes, the promoted flat dtype as JAX's table gives it, x64 off)
PROMOTIONS = [
    ((jnp.float32, jnp.int32), jnp.float32),
    ((jnp.int8, jnp.uint8), jnp.int16),
    ((jnp.bfloat16, jnp.float16), jnp.float32),
    ((jnp.bfloat16, jnp.int8), jnp.bfloat16),
    ((jnp.bool_, jnp.int16, jnp.uint8), jnp.int16),
    ((jnp.uint32, jnp.int32), jnp.int32),  # int64 canonicalized to int32 without x64
]


@pytest.mark.parametrize("dtypes,expected", PROMOTIONS, ids=lambda v: str(v))
def test_mixed_dtypes_promote_and_cast_back(rng, dtypes, expected):
    leaves = []
    for k, dt in enumerate(dtypes):
        vals = rng.integers(0, 2, size=(k + 2,)) if dt == jnp.bool_ else \
            rng.integers(0, 100, size=(k + 2,))
        leaves.append(jnp.asarray(vals).astype(dt))
    tree = {"leaves": leaves}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == expected
    np.testing.assert_array_equal(
        np.asarray(flat.astype(jnp.float32)),
        np.concatenate([np.asarray(x.astype(jnp.float32)) for x in leaves]))
    back = unravel(flat)
    for x, y in zip(back["leaves"], leaves):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(np.asarray(x.astype(jnp.float32)),
                                      np.asarray(y.astype(jnp.float32)))
    # the mixed-dtype unravel wants exactly the promoted dtype
    other = jnp.float16 if expected != jnp.float16 else jnp.float32
    with pytest.raises(TypeError, match="unravel function given array of dtype"):
        unravel(flat.astype(other))


def test_single_dtype_unravel_is_dtype_polymorphic(rng):
    # All leaves int32: unravel does not cast, so a float32 vector gives float32 leaves
    # (JAX, jax-ml/jax#7809: a tangent of another dtype unravels as itself).
    tree = [jnp.arange(3), {"a": jnp.arange(4).reshape(2, 2)}]
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == jnp.int32
    v = rng.standard_normal(7).astype(np.float32)
    back = unravel(jnp.asarray(v))
    assert back[0].dtype == jnp.float32 and back[1]["a"].shape == (2, 2)
    np.testing.assert_array_equal(np.asarray(back[1]["a"]).ravel(), v[3:])


def test_x64_float64(x64, rng):
    tree = (jnp.asarray(rng.standard_normal(3)), jnp.asarray(rng.standard_normal(2), jnp.float32))
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == jnp.float64
    back = unravel(flat)
    assert back[0].dtype == jnp.float64 and back[1].dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(back[0]), np.asarray(tree[0]))


def test_bad_size_raises(rng):
    flat, unravel = ravel_pytree(random_tree(rng))
    with pytest.raises(ValueError, match="unravel function given array of shape"):
        unravel(jnp.zeros(flat.shape[0] + 1))
    with pytest.raises(ValueError, match="1-d"):
        unravel(jnp.zeros((1, flat.shape[0])))


def test_unravel_hashable_and_equal(rng):
    t1, t2 = random_tree(rng), random_tree(rng)
    t2["z"] = [t1["z"][0] + 1.0]  # same structure and shapes, other values
    _, u1 = ravel_pytree(t1)
    _, u2 = ravel_pytree(t2)
    assert u1 == u2 and hash(u1) == hash(u2)
    _, u3 = ravel_pytree([t1["z"][0]])
    assert u1 != u3


def test_jit(rng):
    tree = random_tree(rng)
    flat, unravel = ravel_pytree(tree)
    jit_flat = jax.jit(lambda t: ravel_pytree(t)[0])(tree)
    np.testing.assert_array_equal(np.asarray(jit_flat), np.asarray(flat))
    v = jnp.asarray(rng.standard_normal(flat.shape[0]).astype(np.float32))
    assert_trees_equal(jax.jit(unravel)(v), unravel(v))
    # unravel as a static argument (hashable), applied inside jit
    twice = jax.jit(lambda u, x: u(2.0 * x), static_argnums=0)
    assert_trees_equal(twice(unravel, v), unravel(2.0 * v))


def test_vmap_unravel_equals_loop(rng):
    tree = random_tree(rng)
    flat, unravel = ravel_pytree(tree)
    batch = rng.standard_normal((4, flat.shape[0])).astype(np.float32)
    got = jax.vmap(unravel)(jnp.asarray(batch))
    for b in range(4):
        assert_trees_equal(jax.tree_util.tree_map(lambda x: x[b], got),
                           unravel(jnp.asarray(batch[b])))
    # and vmap of ravel over a batched tree: row b is the ravel of tree b
    stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *[unravel(jnp.asarray(r))
                                                                  for r in batch])
    flats = jax.vmap(lambda t: ravel_pytree(t)[0])(stacked)
    np.testing.assert_array_equal(np.asarray(flats), batch)


def loss(tree):
    # A smooth nonlinear function of every leaf.
    return sum(jnp.sum(jnp.sin(x) * x + 0.5 * x ** 2)
               for x in jax.tree_util.tree_leaves(tree))


def test_grad_through_unravel_matches_tree_grad(rng):
    tree = random_tree(rng)
    flat, unravel = ravel_pytree(tree)
    g_flat = jax.grad(lambda v: loss(unravel(v)))(flat)
    g_tree = jax.grad(loss)(tree)
    np.testing.assert_allclose(np.asarray(g_flat), np_ravel(g_tree), rtol=1e-6, atol=1e-6)
    # and the analytic derivative, sin(x) + x cos(x) + x
    x = np.asarray(flat, np.float64)
    np.testing.assert_allclose(np.asarray(g_flat), np.sin(x) + x * np.cos(x) + x,
                               rtol=1e-5, atol=1e-5)


def test_grad_through_unravel_finite_differences(x64, rng):
    tree = {"a": jnp.asarray(rng.standard_normal((2, 3))), "b": jnp.asarray(rng.standard_normal(2))}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == jnp.float64

    def f(v):
        t = unravel(v)
        return jnp.sum(jnp.tanh(t["a"]) @ jnp.ones(3) * t["b"])
    g = np.asarray(jax.grad(f)(flat))
    x = np.asarray(flat)
    h = 1e-6
    fd = np.array([(float(f(jnp.asarray(x + h * e))) - float(f(jnp.asarray(x - h * e)))) / (2 * h)
                   for e in np.eye(x.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_grad_through_ravel(rng):
    # d/dtree of <w, ravel(tree)> is w unraveled.
    tree = random_tree(rng)
    flat, unravel = ravel_pytree(tree)
    w = jnp.asarray(rng.standard_normal(flat.shape[0]).astype(np.float32))
    g = jax.grad(lambda t: jnp.vdot(w, ravel_pytree(t)[0]))(tree)
    assert_trees_equal(g, unravel(w))


def test_attribute_import():
    assert jax.flatten_util.ravel_pytree is ravel_pytree
