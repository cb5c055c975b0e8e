"""Array.__getitem__ (NumPy's basic indexing) against NumPy on random index expressions, the
errors JAX raises, dynamic (traced) indices, and indexing under grad/vmap/make_jaxpr.

The seed comes from TESSERA_TEST_SEED (or the clock) and is printed with each test's output.
"""
import os
import time
import zlib

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from tessera import lax

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


def _rand_shape(rng, max_rank=4):
    rank = int(rng.integers(0, max_rank + 1))
    return tuple(int(rng.integers(0, 6)) if rng.random() < 0.1 else int(rng.integers(1, 6))
                 for _ in range(rank))


def _rand_slice(rng, n):
    def bound():
        r = rng.random()
        if r < 0.3:
            return None
        return int(rng.integers(-n - 3, n + 4))
    step = None
    r = rng.random()
    if r < 0.4:
        step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
    return slice(bound(), bound(), step)


def _rand_index(rng, shape, dynamic=False):
    """A random basic index for `shape`: (tessera index, NumPy index). k dims are indexed by
    ints or slices; an optional ellipsis splits them into leading and trailing dims; None items
    go anywhere."""
    rank = len(shape)
    k = int(rng.integers(0, rank + 1))
    ellipsis_at = int(rng.integers(0, k + 1)) if rng.random() < 0.3 else None
    if ellipsis_at is None:
        dims = list(range(k))
    else:
        dims = list(range(ellipsis_at)) + list(range(rank - (k - ellipsis_at), rank))
    items, ref = [], []
    for d in dims:
        n = shape[d]
        if rng.random() < 0.4 and n > 0:
            i = int(rng.integers(-n, n))
            kind = rng.random()
            if dynamic and kind < 0.3:
                items.append(jnp.asarray(np.int32(i)))
            elif kind < 0.5:
                items.append(np.int32(i))
            else:
                items.append(i)
            ref.append(i)
        else:
            s = _rand_slice(rng, n)
            items.append(s)
            ref.append(s)
    if ellipsis_at is not None:
        items.insert(ellipsis_at, Ellipsis)
        ref.insert(ellipsis_at, Ellipsis)
    for _ in range(int(rng.integers(0, 3)) if rng.random() < 0.4 else 0):
        at = int(rng.integers(0, len(items) + 1))
        items.insert(at, None)
        ref.insert(at, None)
    if len(items) == 1 and rng.random() < 0.5:
        return items[0], ref[0]
    return tuple(items), tuple(ref)


def _check(got, expected):
    assert isinstance(got, tessera.Array)
    exp = np.asarray(expected)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    assert str(got.dtype) == str(exp.dtype)
    np.testing.assert_array_equal(np.asarray(got), exp)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "uint8", "float16"])
def test_random_basic_indices_match_numpy(rng, dtype):
    for _ in range(150):
        shape = _rand_shape(rng)
        v = (rng.standard_normal(shape) * 10).astype(dtype) if dtype != "bool" else \
            rng.random(shape) < 0.5
        x = jnp.asarray(v)
        idx, ref = _rand_index(rng, shape, dynamic=True)
        _check(x[idx], v[ref])


def test_bfloat16_indexing_keeps_dtype(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.astype(jnp.asarray(v), jnp.bfloat16)
    y = x[1, ::-2]
    assert str(y.dtype) == "bfloat16" and y.shape == (2,)
    np.testing.assert_array_equal(np.asarray(jnp.astype(y, jnp.float32)),
                                  np.asarray(jnp.astype(x, jnp.float32))[1, ::-2])


def test_special_index_forms(rng):
    v = rng.standard_normal((4, 5, 3)).astype(np.float32)
    x = jnp.asarray(v)

    class Idx:
        def __index__(self):
            return 2

    for idx in [(), Ellipsis, (Ellipsis, None), (None, Ellipsis, 0), (Idx(), slice(None, None, -1)),
                (np.int64(-1),), (slice(Idx(), None),), (1, Ellipsis, 2), (None, None, 0, None),
                (slice(10, -10, -1),), (slice(-100, 100, 2), 0), np.array(2), (np.array(-1), 1)]:
        _check(x[idx], v[idx])
    assert x[()] .shape == v.shape


def test_dynamic_index_clamps_and_wraps_as_jax(rng):
    v = rng.standard_normal((4, 3)).astype(np.float32)
    x = jnp.asarray(v)
    # JAX: a traced/array index is normalized (negative + size) and then clamped into range.
    _check(x[jnp.asarray(np.int32(-1))], v[-1])
    _check(x[jnp.asarray(np.int32(10))], v[3])
    _check(x[jnp.asarray(np.int32(-10))], v[0])
    _check(x[1, jnp.asarray(np.int32(2))], v[1, 2])


def test_index_errors():
    x = jnp.zeros((3, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        x[3]
    with pytest.raises(IndexError, match="out of bounds"):
        x[0, -5]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    # integer arrays, lists and masks index (test_indexing_advanced.py); a mask of the wrong
    # length names the mismatch
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[jnp.asarray(np.array([True, False]))]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[1.0]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[jnp.asarray(np.float32(1))]
    with pytest.raises(TypeError, match="slice indices"):
        x[0:1.5]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError, match="valid indices"):
        x["a"]


def test_iteration_uses_indexing(rng):
    v = rng.standard_normal((3, 2)).astype(np.float32)
    rows = list(jnp.asarray(v))
    assert len(rows) == 3
    for r, e in zip(rows, v):
        _check(r, e)
    # bfloat16 rows stay bfloat16
    b = jnp.astype(jnp.asarray(v), jnp.bfloat16)
    assert all(str(r.dtype) == "bfloat16" for r in b)
    with pytest.raises(TypeError, match="0-d"):
        iter(jnp.asarray(1.0)).__next__()


def test_iteration_over_tracers():
    # grad of a function that unpacks its traced argument (a, b = x)
    def f(x):
        a, b, c = x
        return a * b + jnp.sin(c)
    x = np.array([0.5, -1.5, 0.3], np.float32)
    g = tessera.grad(f)(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), [x[1], x[0], np.cos(x[2])], rtol=1e-6)
    out = tessera.vmap(lambda r: sum(e * e for e in r))(jnp.asarray(np.ones((4, 3), np.float32)))
    np.testing.assert_allclose(np.asarray(out), np.full(4, 3.0))


def test_grad_through_slices(rng):
    v = rng.standard_normal(6).astype(np.float32)
    x = jnp.asarray(v)
    g = tessera.grad(lambda x: jnp.sum(x[1:3] ** 2))(x)
    exp = np.zeros(6, np.float32)
    exp[1:3] = 2 * v[1:3]
    np.testing.assert_allclose(np.asarray(g), exp, rtol=1e-6)
    w = rng.standard_normal(6).astype(np.float32)
    g = tessera.grad(lambda x: jnp.sum(x[::-1] * jnp.asarray(w)))(x)
    np.testing.assert_allclose(np.asarray(g), w[::-1], rtol=1e-6)
    # strided, negative step and new axes in 2-D; dynamic index
    m = rng.standard_normal((4, 5)).astype(np.float32)
    g = tessera.grad(lambda x: jnp.sum(x[::-2, None, 1:4:2] * 3.0))(jnp.asarray(m))
    exp = np.zeros_like(m)
    exp[::-2, 1:4:2] = 3.0
    np.testing.assert_allclose(np.asarray(g), exp)
    g = tessera.grad(lambda x, i: jnp.sum(x[i]), argnums=0)(jnp.asarray(m),
                                                            jnp.asarray(np.int32(2)))
    exp = np.zeros_like(m)
    exp[2] = 1.0
    np.testing.assert_allclose(np.asarray(g), exp)


def test_jvp_through_indexing(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    t = rng.standard_normal((3, 4)).astype(np.float32)
    y, ty = tessera.jvp(lambda x: x[1:, ::-1], (jnp.asarray(v),), (jnp.asarray(t),))
    np.testing.assert_array_equal(np.asarray(y), v[1:, ::-1])
    np.testing.assert_array_equal(np.asarray(ty), t[1:, ::-1])


def test_vmap_of_indexing(rng):
    v = rng.standard_normal((5, 4, 3)).astype(np.float32)
    x = jnp.asarray(v)
    out = tessera.vmap(lambda r: r[::-2, None, 1])(x)
    _check(out, np.stack([r[::-2, None, 1] for r in v]))
    out = tessera.vmap(lambda r: r[..., 0], in_axes=1)(x)
    _check(out, np.stack([v[:, i][..., 0] for i in range(4)]))
    # a batched dynamic index
    idx = np.array([0, 3, -1, 2, 1], np.int32)
    out = tessera.vmap(lambda r, i: r[i])(x, jnp.asarray(idx))
    _check(out, np.stack([v[b][idx[b]] for b in range(5)]))


def test_make_jaxpr_of_slice_with_new_axis():
    jaxpr = tessera.make_jaxpr(lambda x: x[1:3, None])(jnp.zeros((5, 4)))
    prims = jaxpr.eqn_primitives()
    assert "slice" in prims, str(jaxpr)
    assert "reshape" in prims, str(jaxpr)
    assert jaxpr.out_avals[0][0] == (2, 1, 4)
    text = str(jaxpr)
    assert "slice" in text and "f32[2,1,4]" in text
    # a plain x[:] stages nothing
    assert tessera.make_jaxpr(lambda x: x[:])(jnp.zeros((5, 4))).num_eqns == 0
    # a traced index stages a dynamic_slice
    prims = tessera.make_jaxpr(lambda x, i: x[i])(jnp.zeros((5, 4)), 1).eqn_primitives()
    assert "dynamic_slice" in prims


def test_lax_dynamic_slicing_matches_numpy(rng):
    v = rng.standard_normal((5, 6)).astype(np.float32)
    x = jnp.asarray(v)
    _check(lax.dynamic_slice(x, (1, 2), (2, 3)), v[1:3, 2:5])
    _check(lax.dynamic_slice(x, (4, 5), (2, 3)), v[3:5, 3:6])  # clamped
    _check(lax.dynamic_slice_in_dim(x, -2, 2, axis=1), v[:, 4:6])
    _check(lax.dynamic_index_in_dim(x, 3, keepdims=False), v[3])
    u = rng.standard_normal((2, 2)).astype(np.float32)
    e = v.copy()
    e[3:5, 1:3] = u
    _check(lax.dynamic_update_slice(x, jnp.asarray(u), (3, 1)), e)
    e = v.copy()
    e[2] = u[0].repeat(3)
    _check(lax.dynamic_update_index_in_dim(x, jnp.asarray(u[0].repeat(3)), 2, 0), e)


def test_lax_dynamic_update_slice_in_dim(rng):
    v = rng.standard_normal((5, 6)).astype(np.float32)
    u = rng.standard_normal((5, 2)).astype(np.float32)
    e = v.copy()
    e[:, 4:6] = u  # start 5 is clamped to 4 so that the update fits
    _check(lax.dynamic_update_slice_in_dim(jnp.asarray(v), jnp.asarray(u), 5, 1), e)
    e = v.copy()
    e[:, 1:3] = u
    i = jnp.asarray(np.int32(-5))  # negative: counts from the end (6 - 5 = 1)
    _check(lax.dynamic_update_slice_in_dim(jnp.asarray(v), jnp.asarray(u), i, 1), e)
    # grad flows to both the operand (outside the window) and the update
    go, gu = tessera.grad(lambda a, b: jnp.sum(lax.dynamic_update_slice_in_dim(a, b, 1, 1) * 2.0),
                          argnums=(0, 1))(jnp.asarray(v), jnp.asarray(u))
    exp = np.full_like(v, 2.0)
    exp[:, 1:3] = 0
    np.testing.assert_array_equal(np.asarray(go), exp)
    np.testing.assert_array_equal(np.asarray(gu), np.full_like(u, 2.0))
