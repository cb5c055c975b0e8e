"""numpy/_more.py (window functions, fmax/fmin, poly/polydiv/polyfit, unwrap, the array-API
unique family, copy, diagflat, isscalar), lax/_more.py (split, broadcast_to_rank, approx_max_k,
approx_min_k, conj), tree_util.Partial and random.multinomial against NumPy on fresh random
inputs (the `rng` fixture prints its seed), under jit and grad where they apply, and their
errors."""
import numpy as np
import pytest

import tessera as jax
import tessera.lax as lax
import tessera.numpy as jnp
import tessera.random as random
from tessera.tree_util import Partial


def A(x):
    return np.asarray(x)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_vs_numpy(name):
    for m in [0, 1, 2, 3, 8, 31]:
        got = getattr(jnp, name)(m)
        assert got.dtype == jnp.float32
        np.testing.assert_allclose(A(got), getattr(np, name)(m), atol=2e-6)


def test_kaiser_vs_numpy(rng):
    beta = float(rng.uniform(0, 10))
    for m in [1, 4, 9, 20]:
        np.testing.assert_allclose(A(jnp.kaiser(m, beta)), np.kaiser(m, beta), rtol=2e-5,
                                   atol=1e-6)
    with pytest.raises(TypeError, match="concrete int"):
        jnp.hanning(2.5)


def test_fmax_fmin_ignore_nans(rng, x64):
    x = rng.standard_normal(40)
    y = rng.standard_normal(40)
    x[rng.random(40) < 0.3] = np.nan
    y[rng.random(40) < 0.3] = np.nan
    np.testing.assert_array_equal(A(jnp.fmax(x, y)), np.fmax(x, y))
    np.testing.assert_array_equal(A(jnp.fmin(x, y)), np.fmin(x, y))
    np.testing.assert_array_equal(A(jax.jit(jnp.fmax)(x, y)), np.fmax(x, y))
    i = rng.integers(-5, 5, 10)
    j = rng.integers(-5, 5, 10)
    np.testing.assert_array_equal(A(jnp.fmin(i, j)), np.fmin(i, j))


def test_poly_polydiv_polyfit(rng, x64):
    r = rng.standard_normal(4)
    np.testing.assert_allclose(A(jnp.poly(r)), np.poly(r), rtol=1e-10, atol=1e-12)
    s = rng.standard_normal((3, 3))
    s = s + s.T
    np.testing.assert_allclose(A(jnp.poly(s)), np.poly(s), rtol=1e-8, atol=1e-10)
    u = rng.standard_normal(6)
    v = rng.standard_normal(3)
    q, rem = jnp.polydiv(u, v)
    nq, nr = np.polydiv(u, v)
    np.testing.assert_allclose(A(q), nq, rtol=1e-10)
    np.testing.assert_allclose(A(rem)[-len(nr):], nr, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(A(rem)[:-len(nr)], 0, atol=1e-12)
    x = np.sort(rng.uniform(-1, 1, 25))
    y = np.stack([np.polyval(rng.standard_normal(4), x) + 0.01 * rng.standard_normal(25)
                  for _ in range(2)], axis=1)
    for deg in [0, 1, 3]:
        np.testing.assert_allclose(A(jnp.polyfit(x, y[:, 0], deg)), np.polyfit(x, y[:, 0], deg),
                                   rtol=1e-8, atol=1e-10)
    w = rng.uniform(0.5, 2, 25)
    np.testing.assert_allclose(A(jnp.polyfit(x, y, 2, w=w)), np.polyfit(x, y, 2, w=w),
                               rtol=1e-8, atol=1e-10)
    with pytest.raises(NotImplementedError, match="complex"):
        jnp.roots(r)


def test_unwrap_vs_numpy(rng, x64):
    p = np.cumsum(rng.uniform(-3, 3, (3, 30)), axis=1)
    wrapped = np.mod(p, 2 * np.pi)
    for axis in [-1, 0]:
        np.testing.assert_allclose(A(jnp.unwrap(wrapped, axis=axis)),
                                   np.unwrap(wrapped, axis=axis), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(A(jnp.unwrap(wrapped, discont=4.0, period=5.0)),
                               np.unwrap(wrapped, discont=4.0, period=5.0), rtol=1e-10,
                               atol=1e-10)


def test_unique_family_vs_numpy(rng):
    x = rng.integers(0, 6, 30)
    v, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    r = jnp.unique_all(x)
    np.testing.assert_array_equal(A(r.values), v)
    np.testing.assert_array_equal(A(r.indices), idx)
    np.testing.assert_array_equal(A(r.inverse_indices), inv)
    np.testing.assert_array_equal(A(r.counts), cnt)
    c = jnp.unique_counts(x)
    np.testing.assert_array_equal(A(c.counts), cnt)
    np.testing.assert_array_equal(A(jnp.unique_inverse(x).inverse_indices), inv)
    np.testing.assert_array_equal(A(jnp.unique_values(x)), v)
    got = jax.jit(lambda a: jnp.unique_values(a, size=8, fill_value=-1))(x)
    np.testing.assert_array_equal(A(got), np.concatenate([v, -np.ones(8 - len(v), int)]))


def test_copy_diagflat_isscalar_iterable(rng):
    a = rng.standard_normal((2, 2)).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.copy(a)), a)
    for k in [-1, 0, 2]:
        np.testing.assert_array_equal(A(jnp.diagflat(a, k)), np.diagflat(a, k))
    assert jnp.isscalar(1.5) and jnp.isscalar(np.float32(1)) and jnp.isscalar(jnp.zeros(()))
    assert not jnp.isscalar(jnp.zeros(2)) and not jnp.isscalar([1])
    assert jnp.iterable([1]) and not jnp.iterable(3)
    np.testing.assert_array_equal(A(jnp.fromstring("1 2 3", sep=" ")), [1, 2, 3])


def test_lax_split_and_broadcast_to_rank(rng):
    x = rng.standard_normal((3, 7)).astype(np.float32)
    parts = lax.split(x, [2, 0, 5], axis=1)
    for got, want in zip(parts, np.split(x, [2, 2], axis=1)):
        np.testing.assert_array_equal(A(got), want)
    g = jax.grad(lambda v: jnp.sum(lax.split(v, [1, 2])[1] ** 2))(x)
    want = np.zeros_like(x)
    want[1:] = 2 * x[1:]
    np.testing.assert_allclose(A(g), want, rtol=1e-6)
    with pytest.raises(ValueError, match="Sum of sizes"):
        lax.split(x, [1, 1])
    assert lax.broadcast_to_rank(x, 4).shape == (1, 1, 3, 7)
    assert lax.broadcast_to_rank(x, 1).shape == (3, 7)
    np.testing.assert_array_equal(A(lax.conj(x)), x)


def test_approx_max_min_k_exact(rng):
    x = rng.standard_normal((4, 9, 5)).astype(np.float32)
    for d in [0, 1, -1]:
        v, i = lax.approx_max_k(x, 3, reduction_dimension=d)
        want = -np.sort(-x, axis=d)
        np.testing.assert_array_equal(A(v), np.take(want, range(3), axis=d))
        np.testing.assert_array_equal(np.take_along_axis(x, A(i), axis=d), A(v))
        v, i = lax.approx_min_k(x, 2, reduction_dimension=d)
        np.testing.assert_array_equal(A(v), np.take(np.sort(x, axis=d), range(2), axis=d))
        np.testing.assert_array_equal(np.take_along_axis(x, A(i), axis=d), A(v))
    with pytest.raises(ValueError, match="k must be"):
        lax.approx_max_k(x, 10, reduction_dimension=0)


def test_partial_is_a_pytree():
    p = Partial(jnp.add, jnp.ones(2))
    assert len(jax.tree_util.tree_leaves(p)) == 1
    np.testing.assert_array_equal(A(jax.jit(lambda q, x: q(x))(p, jnp.arange(2.0))), [1.0, 2.0])
    q = jax.jit(lambda x: Partial(jnp.multiply, x))(jnp.full(2, 3.0))
    assert isinstance(q, Partial)
    np.testing.assert_array_equal(A(q(2.0)), [6.0, 6.0])
    assert float(jax.grad(lambda a: Partial(jnp.multiply, a)(3.0))(2.0)) == 3.0
    leaves, tree = jax.tree_util.tree_flatten(Partial(jnp.where, True, y=jnp.zeros(1)))
    assert len(leaves) == 2
    assert jax.tree_util.tree_unflatten(tree, leaves).func is jnp.where


def test_multinomial_moments_and_counts():
    p = np.array([0.2, 0.5, 0.3])
    n, draws = 50, 20000
    c = A(random.multinomial(random.PRNGKey(7), n, jnp.asarray(p), shape=(draws, 3)))
    assert c.dtype == np.float32
    np.testing.assert_array_equal(c.sum(1), n)
    assert (c >= 0).all()
    # Mean n p, variance n p (1 - p); 6-sigma bounds on the sample mean (p < 1e-6 overall).
    sd = np.sqrt(n * p * (1 - p) / draws)
    assert np.all(np.abs(c.mean(0) - n * p) < 6 * sd), (c.mean(0), n * p)
    var = c.var(0)
    assert np.all(np.abs(var / (n * p * (1 - p)) - 1) < 0.1), var
    # Batched n and p under jit; a zero-probability category never gets a count.
    got = A(jax.jit(lambda k: random.multinomial(
        k, jnp.array([5.0, 10.0]), jnp.array([[0.5, 0.5], [0.0, 1.0]])))(random.PRNGKey(1)))
    assert got.shape == (2, 2)
    np.testing.assert_array_equal(got.sum(1), [5, 10])
    assert got[1, 0] == 0
    with pytest.raises(ValueError, match="categories"):
        random.multinomial(random.PRNGKey(0), 3, jnp.ones(3) / 3, shape=(4, 2))


def test_dtypes_module_and_broadcast_shapes():
    assert jax.dtypes.result_type(jnp.ones(2, jnp.int8), 2.0) == jnp.float32
    assert jax.dtypes.result_type(1.0, return_weak_type_flag=True) == (jnp.float32, True)
    assert jax.dtypes.result_type(jnp.ones(2), return_weak_type_flag=True)[1] is False
    assert jax.dtypes.issubdtype(random.key(0).dtype, jax.dtypes.prng_key)
    assert jax.dtypes.issubdtype(random.key(0).dtype, jax.dtypes.extended)
    assert not jax.dtypes.issubdtype(jnp.float32, jax.dtypes.prng_key)
    assert jax.dtypes.issubdtype(jnp.bfloat16, jnp.floating)
    assert jax.dtypes.scalar_type_of(jnp.ones(2, jnp.int8)) is int
    assert jax.dtypes.scalar_type_of(jnp.ones(2, jnp.bfloat16)) is float
    assert jax.dtypes.is_weakly_typed(3.0) and not jax.dtypes.is_weakly_typed(jnp.ones(2))
    assert jnp.zeros(2, jax.dtypes.bfloat16).dtype == jnp.bfloat16
    assert lax.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))


def test_array_sort_search_take_methods(rng):
    """jax.Array's sort, argsort, argpartition, searchsorted, nonzero, compress and take methods
    are the jnp functions."""
    a = rng.standard_normal(9).astype(np.float32)
    x = jnp.asarray(a)
    np.testing.assert_array_equal(A(x.sort()), np.sort(a))
    np.testing.assert_array_equal(A(x.argsort()), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(A(x.argsort(descending=True)), np.argsort(-a, kind="stable"))
    s = np.sort(a)
    np.testing.assert_array_equal(A(jnp.asarray(s).searchsorted(a, side="right")),
                                  np.searchsorted(s, a, side="right"))
    np.testing.assert_array_equal(A(x.nonzero()[0]), np.nonzero(a)[0])
    np.testing.assert_array_equal(A(x.compress(a > 0)), a[a > 0])
    np.testing.assert_array_equal(A(x.take(np.array([0, 3]))), a[[0, 3]])
    k = A(x.argpartition(4))
    assert np.all(a[k[:4]] <= a[k[4]]) and np.all(a[k[5:]] >= a[k[4]])
    m = jnp.asarray(rng.standard_normal((3, 4)).astype(np.float32))
    np.testing.assert_array_equal(A(m.sort(axis=0)), np.sort(A(m), axis=0))
    np.testing.assert_array_equal(A(jax.jit(lambda v: v.sort())(x)), np.sort(a))
