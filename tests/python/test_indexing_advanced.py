"""Integer-array (advanced) indexing, boolean masks, x.at[...] updates, take and
take_along_axis, compared with NumPy on fresh random inputs; a time-boxed generator of random
index expressions mixing every kind of index (its seed is printed by conftest)."""
import time

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax


def A(x):
    return np.asarray(x)


def random_key(rng, shape):
    """A random index expression over `shape`: ints, slices (any step), None, an ellipsis,
    integer arrays (broadcasting) and at most one boolean mask."""
    key, d, used_ellipsis, used_mask = [], 0, False, False
    while d < len(shape):
        r = rng.integers(0, 7)
        n = shape[d]
        if r == 0 and n > 0:
            key.append(int(rng.integers(-n, n)))
            d += 1
        elif r == 1:
            lo, hi = sorted(rng.integers(-n - 1, n + 2, 2))
            step = int(rng.choice([1, 1, 2, -1, -2, 3]))
            key.append(slice(int(lo), int(hi), step) if step > 0 else slice(int(hi), int(lo), step))
            d += 1
        elif r == 2:
            key.append(None)
        elif r == 3 and not used_ellipsis:
            used_ellipsis = True
            key.append(Ellipsis)  # the rest of the key indexes the remaining dims: it is empty
        elif r in (4, 5) and n > 0:
            ishape = tuple(int(s) for s in rng.integers(1, 3, rng.integers(0, 3)))
            key.append(rng.integers(-n, n, ishape))
            d += 1
        elif r == 6 and not used_mask and n > 0:
            used_mask = True
            key.append(rng.random(n) < 0.5)
            d += 1
        else:
            key.append(slice(None))
            d += 1
    return tuple(key)


def test_random_index_expressions_match_numpy(rng):
    deadline = time.time() + 8.0
    checked = 0
    while time.time() < deadline and checked < 3000:
        shape = tuple(int(s) for s in rng.integers(1, 5, rng.integers(1, 4)))
        x = rng.normal(size=shape).astype(np.float32)
        key = random_key(rng, shape)
        try:
            want = x[key]
        except IndexError:
            continue  # broadcasting mismatches and too many indices: NumPy's errors
        got = jnp.asarray(x)[key]
        assert got.shape == want.shape, (shape, key)
        np.testing.assert_array_equal(A(got), want, err_msg=str((shape, key)))
        checked += 1
    assert checked > 200


@pytest.mark.parametrize("key", [
    (np.array([0, 2, -1]),),
    (np.array([0, 2]), slice(None), np.array([1, 3])),          # separated: advanced axes first
    (slice(None), np.array([0, 2]), np.array([1, 3])),          # adjacent: in place
    (1, slice(None), np.array([0, 1])),                          # an int counts as advanced
    (np.array([[0], [1]]), np.array([[0, 1, 2]])),               # broadcasting index arrays
    (Ellipsis, np.array([3, 0])),
    (None, np.array([1]), None, slice(None, None, -1)),
])
def test_advanced_axis_placement(rng, key):
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.asarray(x)[key]), x[key])


def test_boolean_masks_on_concrete_arrays(rng):
    x = rng.normal(size=(4, 5)).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.asarray(x)[x > 0]), x[x > 0])
    m = x[:, 0] > 0
    np.testing.assert_array_equal(A(jnp.asarray(x)[m, 1:]), x[m, 1:])
    with pytest.raises(IndexError, match="boolean indices must be concrete"):
        jax.jit(lambda a: a[a > 0])(jnp.asarray(x))
    with pytest.raises(IndexError, match="did not match"):
        jnp.asarray(x)[np.ones(3, bool)]


@pytest.mark.parametrize("shape", [(200_003,), (300, 701), (3, 0), (2, 3, 40_000), (1,)])
@pytest.mark.parametrize("density", [0.0, 0.003, 0.5, 1.0])
def test_large_masks_across_chunks_match_numpy(rng, shape, density):
    # Masks longer than the mask kernel's 2^16-element chunks, sparse and dense, rank 1-3, and
    # a mask over leading dims only (the rest gathered as windows).
    x = rng.normal(size=shape).astype(np.float32)
    m = rng.random(size=shape) < density
    X = jnp.asarray(x)
    np.testing.assert_array_equal(A(X[jnp.asarray(m)]), x[m])
    np.testing.assert_array_equal(A(X[m]), x[m])
    if x.ndim > 1:
        lead = m.any(axis=tuple(range(1, m.ndim)))
        np.testing.assert_array_equal(A(X[lead]), x[lead])
    idx = np.nonzero(m)
    got = jnp.nonzero(jnp.asarray(m))
    for g, w in zip(got, idx):
        np.testing.assert_array_equal(A(g), w)


def test_indexing_an_empty_axis():
    # Empty selections from an empty axis are empty (NumPy's answer: x[x > 0] of an empty x);
    # a non-empty integer index into it is JAX's IndexError.
    x = jnp.zeros((0, 3))
    assert A(x[x[:, 0] > 0]).shape == (0, 3)
    assert A(x[jnp.zeros((0,), jnp.int32), 1:]).shape == (0, 2)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        x[jnp.asarray([0])]


def test_out_of_bounds_follow_jax(rng):
    x = rng.normal(size=(5,)).astype(np.float32)
    X = jnp.asarray(x)
    idx = np.array([0, 7, -9, 4])
    np.testing.assert_array_equal(A(X[jnp.asarray(idx)]), x[np.clip(np.where(idx < 0, idx + 5, idx), 0, 4)])
    got = A(X.at[jnp.asarray(idx)].get(mode="fill", fill_value=-1.0))
    np.testing.assert_array_equal(got, np.where((idx >= -5) & (idx < 5), x[np.clip(idx, -5, 4)], -1.0))
    # take fills with NaN by default
    t = A(jnp.take(X, jnp.asarray([1, 9])))
    assert t[0] == x[1] and np.isnan(t[1])
    # updates out of bounds are dropped
    np.testing.assert_array_equal(A(X.at[jnp.asarray([7, 1])].set(0.0)), np.where(np.arange(5) == 1, 0, x))


@pytest.mark.parametrize("op", ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"])
def test_at_updates_with_duplicates_match_numpy(rng, op):
    x = rng.uniform(0.5, 2.0, size=(6, 3)).astype(np.float32)
    idx = rng.integers(-6, 6, 10)
    v = rng.uniform(0.5, 2.0, size=(10, 3)).astype(np.float32)
    got = A(getattr(jnp.asarray(x).at[jnp.asarray(idx)], op)(jnp.asarray(v)))
    want = x.astype(np.float64).copy()
    for i, row in zip(np.where(idx < 0, idx + 6, idx), v.astype(np.float64)):
        if op == "set":
            want[i] = row
        elif op == "add":
            want[i] += row
        elif op == "subtract":
            want[i] -= row
        elif op in ("multiply", "divide", "power"):
            want[i] = want[i] * row if op == "multiply" else want[i]
        elif op == "min":
            want[i] = np.minimum(want[i], row)
        else:
            want[i] = np.maximum(want[i], row)
    if op in ("divide", "power"):
        prod = np.ones_like(want)
        for i, row in zip(np.where(idx < 0, idx + 6, idx), v.astype(np.float64)):
            prod[i] *= row
        want = x / prod if op == "divide" else x.astype(np.float64) ** prod
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=2e-6, atol=1e-6)


def test_large_at_adds_match_numpy_add_at(rng):
    # Many more update elements than table elements (an embedding gradient): the kernel splits
    # the points into chunks fixed by the sizes. Integers wrap exactly as the sequential sum;
    # floats stay close to it; jit runs the same kernel (the same bits).
    rows, dim, n = 300, 16, 70000
    ids = rng.integers(-rows, rows, n)
    xi = rng.integers(-2**31, 2**31, (rows, dim), dtype=np.int64).astype(np.int32)
    ui = rng.integers(-2**31, 2**31, (n, dim), dtype=np.int64).astype(np.int32)
    want = xi.copy()
    np.add.at(want, np.where(ids < 0, ids + rows, ids), ui)
    np.testing.assert_array_equal(A(jnp.asarray(xi).at[ids].add(ui)), want)
    xf = rng.normal(size=(rows, dim)).astype(np.float32)
    uf = rng.normal(size=(n, dim)).astype(np.float32)
    want = xf.astype(np.float64)
    np.add.at(want, np.where(ids < 0, ids + rows, ids), uf.astype(np.float64))
    got = A(jnp.asarray(xf).at[ids].add(uf))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-4)
    f = jax.jit(lambda x, i, u: x.at[i].add(u))
    np.testing.assert_array_equal(A(f(jnp.asarray(xf), jnp.asarray(ids), jnp.asarray(uf))), got)


def test_at_slices_and_scalars(rng):
    x = rng.normal(size=(4, 6)).astype(np.float32)
    want = x.copy()
    want[1:3, ::2] = 5.0
    np.testing.assert_array_equal(A(jnp.asarray(x).at[1:3, ::2].set(5.0)), want)
    want = x.copy()
    want[..., -1] += np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(A(jnp.asarray(x).at[..., -1].add(jnp.arange(4.0))), want)
    np.testing.assert_array_equal(A(jnp.asarray(x).at[2].get()), x[2])
    # JAX's scatter_apply: func once per occurrence of an index (row 0 twice: times 4).
    np.testing.assert_array_equal(A(jnp.asarray(x).at[[0, 0]].apply(lambda v: v * 2)),
                                  np.where(np.arange(4)[:, None] == 0, x * 4, x))


def test_at_apply_once_per_occurrence_matches_numpy_ufunc_at(rng):
    for _ in range(5):
        x = rng.normal(size=(7, 3)).astype(np.float32)
        idx = rng.integers(-7, 7, size=rng.integers(0, 12))
        want = x.copy()
        np.negative.at(want, idx)  # NumPy's unbuffered ufunc.at: once per occurrence
        got = jnp.asarray(x).at[idx].apply(jnp.negative)
        np.testing.assert_array_equal(A(got), want)
        want = x.copy()
        np.square.at(want, (idx, 1))
        f = jax.jit(lambda a, i: a.at[i, 1].apply(jnp.square))
        np.testing.assert_allclose(A(f(jnp.asarray(x), jnp.asarray(idx))), want, rtol=1e-6)
    # Out-of-bounds occurrences are dropped (the default mode), unique_indices applies once.
    x = np.arange(5.0, dtype=np.float32)
    np.testing.assert_array_equal(A(jnp.asarray(x).at[np.array([1, 1, 9])].apply(lambda v: v + 1)),
                                  [0, 3, 2, 3, 4])
    np.testing.assert_array_equal(
        A(jnp.asarray(x).at[np.array([1, 3])].apply(lambda v: v * 10, unique_indices=True)),
        [0, 10, 2, 30, 4])


def test_take_and_take_along_axis_match_numpy(rng):
    x = rng.normal(size=(3, 5, 4)).astype(np.float32)
    i = rng.integers(0, 5, (2, 3))
    for axis in (None, 0, 1, -1):
        n = x.size if axis is None else x.shape[axis]
        j = rng.integers(0, n, (2, 3))
        np.testing.assert_array_equal(A(jnp.take(jnp.asarray(x), jnp.asarray(j), axis=axis)),
                                      np.take(x, j, axis=axis))
    k = rng.integers(0, 5, (3, 2, 4))
    np.testing.assert_array_equal(A(jnp.take_along_axis(jnp.asarray(x), jnp.asarray(k), axis=1)),
                                  np.take_along_axis(x, k, axis=1))
    k = np.argsort(x, axis=-1)
    np.testing.assert_array_equal(A(jnp.take_along_axis(jnp.asarray(x), jnp.asarray(k), axis=-1)),
                                  np.take_along_axis(x, k, axis=-1))
    del i


def test_gradients_vmap_and_jit_through_indexing(rng, x64):
    x = rng.normal(size=(5, 3))
    idx = np.array([0, 3, 3, 1])

    def f(a):
        return jnp.sum(jnp.sin(a[jnp.asarray(idx)]) * jnp.arange(1.0, 4.0))

    g = A(jax.grad(f)(jnp.asarray(x)))
    want = np.zeros_like(x)
    for i in idx:
        want[i] += np.cos(x[i]) * np.arange(1.0, 4.0)
    np.testing.assert_allclose(g, want, rtol=1e-12)

    def h(a):
        return jnp.sum(a.at[jnp.asarray(idx)].add(a[0] ** 2) ** 2)

    eps = 1e-6
    fd = np.zeros_like(x)
    for p in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[p] = eps
        fd[p] = (float(h(jnp.asarray(x + e))) - float(h(jnp.asarray(x - e)))) / (2 * eps)
    np.testing.assert_allclose(A(jax.grad(h)(jnp.asarray(x))), fd, rtol=1e-6, atol=1e-8)
    # per-example gathers and scatters
    xs = rng.normal(size=(4, 6))
    ks = rng.integers(0, 6, 4)
    np.testing.assert_array_equal(A(jax.vmap(lambda a, k: a[k])(jnp.asarray(xs), jnp.asarray(ks))),
                                  xs[np.arange(4), ks])
    out = A(jax.vmap(lambda a, k: a.at[k].add(1.0))(jnp.asarray(xs), jnp.asarray(ks)))
    want = xs.copy()
    want[np.arange(4), ks] += 1.0
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(A(jax.jit(lambda a, k: a[k, ::-1])(jnp.asarray(xs), jnp.asarray(ks % 4))),
                                  xs[ks % 4, ::-1])


def test_lax_gather_and_scatters_match_numpy(rng):
    x = rng.normal(size=(5, 4)).astype(np.float32)
    ids = rng.integers(-1, 6, 7)
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))
    got = A(lax.gather(jnp.asarray(x), jnp.asarray(ids[:, None]), dn, (1, 4)))
    np.testing.assert_array_equal(got, x[np.clip(ids, 0, 4)])  # promise_in_bounds clamps
    got = A(lax.gather(jnp.asarray(x), jnp.asarray(ids[:, None]), dn, (1, 4), mode="fill",
                       fill_value=-3.0))
    ok = (ids >= 0) & (ids < 5)
    np.testing.assert_array_equal(got, np.where(ok[:, None], x[np.clip(ids, 0, 4)], -3.0))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    u = rng.normal(size=(7, 4)).astype(np.float32)
    for f, combine in [(lax.scatter_add, np.add), (lax.scatter_sub, np.subtract),
                       (lax.scatter_mul, np.multiply), (lax.scatter_min, np.minimum),
                       (lax.scatter_max, np.maximum)]:
        want = x.copy()
        for i, row in zip(ids, u):
            if 0 <= i < 5:  # fill_or_drop drops the rest
                want[i] = combine(want[i], row)
        got = A(f(jnp.asarray(x), jnp.asarray(ids[:, None]), jnp.asarray(u), sdn))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="GatherDimensionNumbers"):
        lax.gather(jnp.asarray(x), jnp.asarray(ids[:, None]), (1,), (1, 4))
    assert lax.GatherScatterMode.from_any("drop") is lax.GatherScatterMode.FILL_OR_DROP


@pytest.mark.parametrize("name,init,combine", [
    ("segment_sum", 0.0, np.add), ("segment_prod", 1.0, np.multiply),
    ("segment_max", -np.inf, np.maximum), ("segment_min", np.inf, np.minimum)])
def test_segment_reductions_match_a_numpy_loop(rng, name, init, combine):
    data = rng.uniform(0.5, 1.5, size=(12, 3)).astype(np.float32)
    ids = rng.integers(-1, 6, 12)  # -1 and 5 (with num_segments=5) are dropped
    got = A(getattr(jax.ops, name)(jnp.asarray(data), jnp.asarray(ids), num_segments=5))
    want = np.full((5, 3), init, np.float64)
    for i, row in zip(ids, data.astype(np.float64)):
        if 0 <= i < 5:
            want[i] = combine(want[i], row)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6)
    # num_segments from concrete ids; under jit it must be static (JAX: a concretization error)
    assert getattr(jax.ops, name)(jnp.asarray(data), jnp.asarray(np.abs(ids))).shape[0] == \
        np.abs(ids).max() + 1
    with pytest.raises(jax.errors.ConcretizationTypeError, match="num_segments"):
        jax.jit(lambda d, i: getattr(jax.ops, name)(d, i))(jnp.asarray(data), jnp.asarray(ids))
    f = jax.jit(lambda d, i: getattr(jax.ops, name)(d, i, num_segments=5))
    np.testing.assert_allclose(A(f(jnp.asarray(data), jnp.asarray(ids))), got)


def test_lax_top_k_matches_numpy(rng):
    x = rng.integers(-4, 4, (5, 200)).astype(np.float32)  # many ties
    x[0, :3] = np.nan
    v, i = lax.top_k(jnp.asarray(x), 7)
    key = np.where(np.isnan(x), np.inf, x)
    order = np.argsort(-key, axis=-1, kind="stable")[:, :7]  # ties: the lower index first
    np.testing.assert_array_equal(A(i), order)
    np.testing.assert_array_equal(A(v), np.take_along_axis(x, order, -1))
    g = A(jax.grad(lambda a: jnp.sum(lax.top_k(a, 2)[0]))(jnp.asarray(np.arange(5.0))))
    np.testing.assert_array_equal(g, [0, 0, 0, 1, 1])
