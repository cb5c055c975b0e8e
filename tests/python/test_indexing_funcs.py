"""jnp's index functions (numpy/_indexing_funcs.py) against NumPy on fresh random inputs, under
jit and grad where JAX allows them."""
import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera.errors import ConcretizationTypeError


def A(x):
    return np.asarray(x)


def test_nonzero_argwhere_flatnonzero(rng):
    x = rng.integers(-1, 2, (4, 5)) * (rng.random((4, 5)) < 0.6)
    for got, want in zip(jnp.nonzero(jnp.asarray(x)), np.nonzero(x)):
        np.testing.assert_array_equal(A(got), want)
    np.testing.assert_array_equal(A(jnp.argwhere(jnp.asarray(x))), np.argwhere(x))
    np.testing.assert_array_equal(A(jnp.flatnonzero(jnp.asarray(x))), np.flatnonzero(x))
    k = int(np.count_nonzero(x))
    for size in (0, k // 2, k, k + 3):
        got = jax.jit(lambda a: jnp.nonzero(a, size=size, fill_value=-1))(jnp.asarray(x))
        for g, w in zip(got, np.nonzero(x)):
            want = np.full(size, -1)
            want[:min(size, k)] = w[:size]
            np.testing.assert_array_equal(A(g), want)
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        jax.jit(jnp.nonzero)(jnp.asarray(x))
    np.testing.assert_array_equal(A(jnp.where(jnp.asarray(x))[1]), np.where(x)[1])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_and_digitize(rng, side):
    a = np.sort(rng.integers(0, 10, 25).astype(np.float32))
    a[-2:] = np.nan
    v = rng.integers(-2, 12, (3, 7)).astype(np.float32)
    v[0, 0] = np.nan
    for method in ("scan", "sort", "compare_all"):
        np.testing.assert_array_equal(
            A(jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), side=side, method=method)),
            np.searchsorted(a, v, side=side))
    b = np.unique(rng.integers(0, 10, 6)).astype(np.float32)
    x = rng.uniform(-1, 11, 20).astype(np.float32)
    for right in (False, True):
        np.testing.assert_array_equal(A(jnp.digitize(jnp.asarray(x), jnp.asarray(b), right)),
                                      np.digitize(x, b, right))
        np.testing.assert_array_equal(A(jnp.digitize(jnp.asarray(x), jnp.asarray(b[::-1]), right)),
                                      np.digitize(x, b[::-1], right))
        # Values tied with the edges, increasing and decreasing bins.
        xt = rng.integers(-1, 11, 30).astype(np.float32)
        for bb in (b, b[::-1]):
            np.testing.assert_array_equal(A(jnp.digitize(jnp.asarray(xt), jnp.asarray(bb), right)),
                                          np.digitize(xt, bb, right))
    with pytest.raises(ValueError, match="side"):
        jnp.searchsorted(jnp.asarray(a), 1.0, side="middle")


def test_bincount(rng):
    x = rng.integers(0, 8, 30)
    w = rng.normal(size=30).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.bincount(jnp.asarray(x))), np.bincount(x))
    np.testing.assert_allclose(A(jnp.bincount(jnp.asarray(x), jnp.asarray(w), minlength=12)),
                               np.bincount(x, w, minlength=12), rtol=1e-6, atol=1e-6)
    f = jax.jit(lambda a: jnp.bincount(a, length=5))  # static length: larger values dropped
    np.testing.assert_array_equal(A(f(jnp.asarray(x))), np.bincount(x, minlength=8)[:5])
    # Negative values count in bin 0, as JAX's (NumPy raises).
    xn = np.array([-3, 0, 2, -1, 2], np.int32)
    np.testing.assert_array_equal(A(jnp.bincount(jnp.asarray(xn))), [3, 0, 2])


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_unique_matches_numpy(rng, dtype):
    x = rng.integers(0, 6, (4, 5)).astype(dtype)
    if dtype == np.float32:
        x[0, :2] = np.nan
    got = jnp.unique(jnp.asarray(x), return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                     equal_nan=True)
    np.testing.assert_array_equal(A(got[0]), want[0])
    np.testing.assert_array_equal(A(got[1]), want[1])
    np.testing.assert_array_equal(A(got[2]).ravel(), want[2].ravel())
    np.testing.assert_array_equal(A(got[3]), want[3])
    u = jax.jit(lambda a: jnp.unique(a, size=8, fill_value=-7))(jnp.asarray(x))
    w = np.full(8, -7, dtype)
    w[:len(want[0])] = want[0][:8]
    np.testing.assert_array_equal(A(u), w)


def test_partition_select_choose_compress_extract(rng):
    x = rng.normal(size=(4, 9)).astype(np.float32)
    p = A(jnp.partition(jnp.asarray(x), 3, axis=-1))
    np.testing.assert_array_equal(p[:, 3], np.partition(x, 3, axis=-1)[:, 3])
    assert np.all(p[:, :3] <= p[:, 3:4]) and np.all(p[:, 4:] >= p[:, 3:4])
    ap = A(jnp.argpartition(jnp.asarray(x), 3, axis=-1))
    np.testing.assert_array_equal(np.take_along_axis(x, ap, -1)[:, 3], p[:, 3])
    conds = [x > 1, x < -1]
    np.testing.assert_array_equal(A(jnp.select([jnp.asarray(c) for c in conds],
                                               [jnp.asarray(x), jnp.asarray(-x)], 5.0)),
                                  np.select(conds, [x, -x], 5.0))
    idx = rng.integers(0, 3, (4, 9))
    ch = [x, 2 * x, 3 * x]
    np.testing.assert_array_equal(A(jnp.choose(jnp.asarray(idx), [jnp.asarray(c) for c in ch])),
                                  np.choose(idx, ch))
    np.testing.assert_array_equal(A(jnp.choose(jnp.asarray(idx + 3), ch, mode="wrap")),
                                  np.choose(idx + 3, ch, mode="wrap"))
    c = rng.random(9) < 0.5
    np.testing.assert_array_equal(A(jnp.compress(jnp.asarray(c), jnp.asarray(x), axis=1)),
                                  np.compress(c, x, axis=1))
    np.testing.assert_array_equal(A(jnp.compress(jnp.asarray(c[:5]), jnp.asarray(x))),
                                  np.compress(c[:5], x))
    m = x > 0
    np.testing.assert_array_equal(A(jnp.extract(jnp.asarray(m), jnp.asarray(x))), np.extract(m, x))


def test_diff_and_ediff1d(rng):
    x = rng.normal(size=(3, 6)).astype(np.float32)
    for n in (0, 1, 2):
        for axis in (0, 1, -1):
            np.testing.assert_allclose(A(jnp.diff(jnp.asarray(x), n=n, axis=axis)),
                                       np.diff(x, n=n, axis=axis), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(A(jnp.diff(jnp.asarray(x), prepend=0.0, append=1.0)),
                               np.diff(x, prepend=0.0, append=1.0), rtol=1e-6, atol=1e-6)
    b = rng.random(7) < 0.5
    np.testing.assert_array_equal(A(jnp.diff(jnp.asarray(b))), np.diff(b))
    np.testing.assert_allclose(A(jnp.ediff1d(jnp.asarray(x), to_end=[9.0], to_begin=-1.0)),
                               np.ediff1d(x, to_end=[9.0], to_begin=-1.0), rtol=1e-6)
    g = A(jax.grad(lambda a: jnp.sum(jnp.diff(a) ** 2))(jnp.asarray(x[0])))
    d = np.diff(x[0])
    want = np.zeros(6)
    want[1:] += 2 * d
    want[:-1] -= 2 * d
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_index_arithmetic(rng):
    shape = (3, 4, 5)
    flat = rng.integers(0, 60, 10)
    for got, want in zip(jnp.unravel_index(jnp.asarray(flat), shape), np.unravel_index(flat, shape)):
        np.testing.assert_array_equal(A(got), want)
    coords = np.unravel_index(flat, shape)
    np.testing.assert_array_equal(
        A(jnp.ravel_multi_index(tuple(jnp.asarray(c) for c in coords), shape)), flat)
    np.testing.assert_array_equal(
        A(jnp.ravel_multi_index(tuple(jnp.asarray(c) for c in coords), shape, order="F")),
        np.ravel_multi_index(coords, shape, order="F"))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((jnp.asarray([3]), jnp.asarray([0]), jnp.asarray([0])), shape)
    np.testing.assert_array_equal(A(jnp.indices((2, 3))), np.indices((2, 3)))
    for got, want in zip(jnp.ix_(jnp.asarray([0, 2]), jnp.asarray([1, 3, 4])), np.ix_([0, 2], [1, 3, 4])):
        np.testing.assert_array_equal(A(got), want)
    for f in ("tril_indices", "triu_indices"):
        for got, want in zip(getattr(jnp, f)(4, 1, 5), getattr(np, f)(4, 1, 5)):
            np.testing.assert_array_equal(A(got), want)
    for got, want in zip(jnp.diag_indices(3, 3), np.diag_indices(3, 3)):
        np.testing.assert_array_equal(A(got), want)
    m = rng.normal(size=(4, 4)).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.asarray(m)[jnp.triu_indices_from(jnp.asarray(m))]),
                                  m[np.triu_indices_from(m)])


def test_put_and_put_along_axis(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    ind = np.array([0, 5, 11])
    v = np.array([1.0, 2.0, 3.0], np.float32)
    want = x.copy()
    np.put(want, ind, v)
    np.testing.assert_array_equal(A(jnp.put(jnp.asarray(x), jnp.asarray(ind), jnp.asarray(v),
                                            inplace=False)), want)
    with pytest.raises(ValueError, match="in-place"):
        jnp.put(jnp.asarray(x), jnp.asarray(ind), jnp.asarray(v))
    idx = np.argsort(x, axis=1)[:, :1]
    want = x.copy()
    np.put_along_axis(want, idx, 0.0, axis=1)
    np.testing.assert_array_equal(A(jnp.put_along_axis(jnp.asarray(x), jnp.asarray(idx), 0.0,
                                                       axis=1, inplace=False)), want)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_unique_axis_matches_numpy(rng, axis):
    # few distinct values along short slices, so that slices repeat
    x = rng.integers(0, 2, (6, 4, 3)).astype(np.float32)
    x = np.take(x, rng.integers(0, x.shape[axis], x.shape[axis]), axis=axis)  # duplicates
    got = jnp.unique(jnp.asarray(x), return_index=True, return_inverse=True,
                     return_counts=True, axis=axis)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(A(g), w.reshape(A(g).shape))
    assert A(got[2]).shape == (x.shape[axis],)
    np.testing.assert_array_equal(A(jnp.unique(jnp.asarray(x), axis=axis)), want[0])
    # the inverse rebuilds x
    np.testing.assert_array_equal(np.take(A(got[0]), A(got[2]), axis=axis), x)


def test_unique_axis_int_size_and_jit(rng):
    x = rng.integers(-2, 2, (9, 2)).astype(np.int32)
    x[5] = x[1]
    want, counts = np.unique(x, axis=0, return_counts=True)
    k = len(want)
    f = jax.jit(lambda a: jnp.unique(a, axis=0, size=k + 2, fill_value=7, return_counts=True))
    u, c = f(jnp.asarray(x))
    np.testing.assert_array_equal(A(u)[:k], want)
    np.testing.assert_array_equal(A(u)[k:], np.full((2, 2), 7))
    np.testing.assert_array_equal(A(c), np.concatenate([counts, [0, 0]]))
    u = jax.jit(lambda a: jnp.unique(a, axis=0, size=2))(jnp.asarray(x))  # truncated
    np.testing.assert_array_equal(A(u), want[:2])
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        jax.jit(lambda a: jnp.unique(a, axis=0))(jnp.asarray(x))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.unique(jnp.asarray(x), axis=2)
    e = jnp.unique(jnp.zeros((0, 3), jnp.float32), axis=0)
    assert e.shape == (0, 3)


def test_index_funcs_are_the_cpp_ones_and_keep_jax_errors(rng):
    # One implementation: the Python names wrap tessera._tessera.index_funcs.
    from tessera import _tessera
    x = rng.integers(0, 5, 12).astype(np.int32)
    np.testing.assert_array_equal(A(jnp.bincount(jnp.asarray(x))),
                                  A(_tessera.index_funcs.bincount(jnp.asarray(x))))
    # Value-dependent sizes under jit: JAX's ConcretizationTypeError (a TypeError).
    for f in (jnp.unique, jnp.bincount, jnp.flatnonzero, jnp.argwhere,
              lambda a: jnp.compress(a > 1, a), lambda a: jnp.unique(a.reshape(3, 4), axis=0)):
        with pytest.raises(ConcretizationTypeError, match="must be statically specified"):
            jax.jit(f)(jnp.asarray(x))
    assert issubclass(ConcretizationTypeError, TypeError)
    # JAX: choose needs an integer index array (ValueError).
    with pytest.raises(ValueError, match="`a` array must be integer typed"):
        jnp.choose(jnp.asarray([0.0, 1.0]), [jnp.zeros(2), jnp.ones(2)])
    # mode='raise' reads the indices: JAX's text under jit.
    ch = [jnp.zeros(12), jnp.ones(12)]
    with pytest.raises(ConcretizationTypeError, match="jit-compiled with mode='raise'"):
        jax.jit(lambda a: jnp.choose(a % 2, ch))(jnp.asarray(x))
    with pytest.raises(ConcretizationTypeError, match="jit-compiled with mode='raise'"):
        jax.jit(lambda a: jnp.ravel_multi_index((a,), (5,)))(jnp.asarray(x))
    # JAX: a zero-size input padded to a nonzero size needs fill_value.
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(jnp.zeros((0,), jnp.int32), size=3)


def test_unique_size_pads_as_jax(rng):
    x = rng.integers(-3, 4, 15).astype(np.int32)
    vals, index, counts = np.unique(x, return_index=True, return_counts=True)
    k = len(vals)
    got = jax.jit(lambda a: jnp.unique(a, return_index=True, return_counts=True, size=k + 2))(
        jnp.asarray(x))
    # Padding: the smallest value, its first index (JAX's perm[0]) and count 0.
    np.testing.assert_array_equal(A(got[0]), np.concatenate([vals, [vals[0]] * 2]))
    np.testing.assert_array_equal(A(got[1]), np.concatenate([index, [index[0]] * 2]))
    np.testing.assert_array_equal(A(got[2]), np.concatenate([counts, [0, 0]]))
    # Truncated: the smallest values with exact counts.
    got = jnp.unique(jnp.asarray(x), return_counts=True, size=k - 1)
    np.testing.assert_array_equal(A(got[1]), counts[:k - 1])
