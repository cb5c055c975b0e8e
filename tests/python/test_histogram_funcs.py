"""jnp's histogram family, interp, vectorize and the array-function helpers
(numpy/_histogram_funcs.py) against NumPy on fresh random inputs (the seed is printed by the
`rng` fixture), under jit, vmap and grad where JAX allows them."""
import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera.errors import ConcretizationTypeError


def A(x):
    return np.asarray(x)


F32 = np.finfo(np.float32).eps


# ---- histogram ----
@pytest.mark.parametrize("bins", [1, 4, 10])
@pytest.mark.parametrize("with_range", [False, True])
def test_histogram_int_bins_matches_numpy(rng, bins, with_range):
    a = rng.normal(size=(7, 9)).astype(np.float32)
    rng_ = (-1.0, 1.5) if with_range else None
    h, e = jnp.histogram(jnp.asarray(a), bins=bins, range=rng_)
    nh, ne = np.histogram(a, bins=bins, range=rng_)
    assert h.dtype == np.float32 and e.dtype == np.float32
    assert h.shape == (bins,) and e.shape == (bins + 1,)
    np.testing.assert_array_equal(A(e), ne.astype(np.float32))
    np.testing.assert_array_equal(A(h), nh.astype(np.float32))
    np.testing.assert_array_equal(A(jnp.histogram_bin_edges(jnp.asarray(a), bins, rng_)),
                                  np.histogram_bin_edges(a, bins, rng_).astype(np.float32))


def test_histogram_weights_and_density(rng):
    a = rng.uniform(-3, 3, 40).astype(np.float32)
    w = rng.uniform(0.1, 2.0, 40).astype(np.float32)
    h, e = jnp.histogram(jnp.asarray(a), bins=6, weights=jnp.asarray(w))
    nh, ne = np.histogram(a, bins=6, weights=w)
    np.testing.assert_allclose(A(h), nh, rtol=1e-5, atol=1e-5)
    h, _ = jnp.histogram(jnp.asarray(a), bins=6, density=True)
    nh, _ = np.histogram(a, bins=6, density=True)
    np.testing.assert_allclose(A(h), nh, rtol=1e-5)
    widths = np.diff(ne)
    np.testing.assert_allclose(np.sum(A(h) * widths), 1.0, rtol=1e-5)
    h, _ = jnp.histogram(jnp.asarray(a), bins=6, weights=jnp.asarray(w), density=True)
    np.testing.assert_allclose(A(h), np.histogram(a, bins=6, weights=w, density=True)[0],
                               rtol=1e-5)
    # integer weights with float data: a float result (JAX's promote_dtypes_inexact)
    wi = rng.integers(0, 4, 40)
    h, _ = jnp.histogram(jnp.asarray(a), bins=6, weights=jnp.asarray(wi.astype(np.int32)))
    assert h.dtype == np.float32
    np.testing.assert_array_equal(A(h), np.histogram(a, bins=6, weights=wi)[0])


def test_histogram_values_on_edges_and_range_ends(rng):
    # integer-valued data on every edge of [0, 10] with 10 bins; 10 goes in the last bin
    a = rng.integers(-2, 13, 60).astype(np.float32)
    a[:3] = [0.0, 10.0, 10.0]
    a[3] = np.nan
    h, e = jnp.histogram(jnp.asarray(a), bins=10, range=(0, 10))
    nh, ne = np.histogram(a, bins=10, range=(0, 10))
    np.testing.assert_array_equal(A(e), ne)
    np.testing.assert_array_equal(A(h), nh)
    assert A(h)[-1] == np.sum((a >= 9) & (a <= 10))
    assert A(h).sum() == np.sum((a >= 0) & (a <= 10))  # outside and NaN: not counted
    # explicit, uneven edges; the last edge closes the last bin
    edges = np.array([-1.0, 0.0, 0.5, 4.0, 10.0], np.float32)
    h, e = jnp.histogram(jnp.asarray(a), bins=jnp.asarray(edges))
    np.testing.assert_array_equal(A(h), np.histogram(a, bins=edges)[0])
    np.testing.assert_array_equal(A(e), edges)


def test_histogram_empty_single_bin_and_constant_data(rng):
    h, e = jnp.histogram(jnp.zeros((0,), jnp.float32))
    nh, ne = np.histogram(np.zeros((0,), np.float32))
    np.testing.assert_array_equal(A(h), nh)
    np.testing.assert_array_equal(A(e), ne.astype(np.float32))
    c = np.full(5, rng.normal(), np.float32)  # min == max: the range widens by 0.5 each side
    h, e = jnp.histogram(jnp.asarray(c), bins=3)
    nh, ne = np.histogram(c, bins=3)
    np.testing.assert_array_equal(A(h), nh)
    np.testing.assert_array_equal(A(e), ne.astype(np.float32))
    x = rng.normal(size=11).astype(np.float32)
    h, e = jnp.histogram(jnp.asarray(x), bins=1)
    np.testing.assert_array_equal(A(h), [11.0])
    np.testing.assert_array_equal(A(e), [x.min(), x.max()])
    ints = rng.integers(0, 5, 20)
    h, e = jnp.histogram(jnp.asarray(ints.astype(np.int32)), bins=5)
    assert h.dtype == np.float32 and e.dtype == np.float32
    np.testing.assert_array_equal(A(h), np.histogram(ints, bins=5)[0])


def test_histogram_under_jit_vmap_and_grad(rng):
    a = (rng.normal(size=50) * 3).astype(np.float32)
    # int bins with the data's range: the edges are computed from traced min/max
    h, e = jax.jit(lambda x: jnp.histogram(x, bins=7))(jnp.asarray(a))
    ne = np.histogram_bin_edges(a, bins=7)
    np.testing.assert_allclose(A(e), ne, rtol=0, atol=8 * F32 * np.abs(a).max())
    np.testing.assert_array_equal(A(e)[[0, -1]], [a.min(), a.max()])
    np.testing.assert_array_equal(A(h), np.histogram(a, bins=A(e))[0])
    assert A(h).sum() == a.size
    # a static range and traced edges
    f = jax.jit(lambda x: jnp.histogram(x, bins=5, range=(-2.0, 2.0))[0])
    np.testing.assert_array_equal(A(f(jnp.asarray(a))), np.histogram(a, 5, range=(-2, 2))[0])
    edges = np.sort(rng.uniform(-4, 4, 6)).astype(np.float32)
    g = jax.jit(lambda x, b: jnp.histogram(x, bins=b)[0])
    np.testing.assert_array_equal(A(g(jnp.asarray(a), jnp.asarray(edges))),
                                  np.histogram(a, bins=edges)[0])
    rows = a.reshape(5, 10)
    got = jax.vmap(lambda x: jnp.histogram(x, bins=4, range=(-3.0, 3.0))[0])(jnp.asarray(rows))
    np.testing.assert_array_equal(A(got), [np.histogram(r, 4, range=(-3, 3))[0] for r in rows])
    # d/dw sum(c * hist(a, weights=w)) = c[bin of a_i]
    c = rng.normal(size=5).astype(np.float32)
    w = np.ones_like(a)
    grad = jax.grad(lambda w: jnp.sum(jnp.asarray(c) * jnp.histogram(
        jnp.asarray(a), bins=5, range=(-2.0, 2.0), weights=w)[0]))(jnp.asarray(w))
    b = np.digitize(a, np.histogram_bin_edges(a, 5, range=(-2, 2))) - 1
    b[a == 2.0] = 4
    want = np.where((a >= -2) & (a <= 2), c[np.clip(b, 0, 4)], 0.0)
    np.testing.assert_allclose(A(grad), want, rtol=1e-6)


def test_histogram_errors(rng):
    a = jnp.asarray(rng.normal(size=8).astype(np.float32))
    with pytest.raises(ValueError, match="weights should have the same shape"):
        jnp.histogram(a, weights=jnp.ones(3))
    with pytest.raises(NotImplementedError, match="string values for `bins`"):
        jnp.histogram(a, bins="auto")
    with pytest.raises(ValueError, match="must be positive"):
        jnp.histogram(a, bins=0)
    with pytest.raises(ValueError, match="`range` must be either None or a sequence"):
        jnp.histogram(a, range=(0.0, 1.0, 2.0))
    with pytest.raises(ValueError, match="max must be larger than min"):
        jnp.histogram(a, range=(1.0, 0.0))
    with pytest.raises(ValueError, match="increase monotonically"):
        jnp.histogram(a, bins=jnp.asarray([0.0, 2.0, 1.0]))
    with pytest.raises(ConcretizationTypeError, match="bins argument of jnp.histogram"):
        jax.jit(lambda x, n: jnp.histogram(x, bins=n))(a, jnp.asarray(3))
    with pytest.raises(TypeError, match="bins must be an integer"):
        jnp.histogram(a, bins=2.5)


def test_histogram_x64_dtype(rng, x64):
    a = rng.normal(size=30)
    h, e = jnp.histogram(jnp.asarray(a), bins=4)
    assert h.dtype == np.float64 and e.dtype == np.float64
    np.testing.assert_array_equal(A(e), np.histogram_bin_edges(a, 4))
    np.testing.assert_array_equal(A(h), np.histogram(a, 4)[0])


# ---- histogram2d / histogramdd ----
@pytest.mark.parametrize("bins", [5, (3, 4), "edges", "mixed"])
def test_histogram2d_matches_numpy(rng, bins):
    x = rng.normal(size=40).astype(np.float32)
    y = rng.uniform(-1, 1, 40).astype(np.float32)
    if bins == "edges":
        bins = np.array([-2.0, -0.5, 0.0, 0.7, 2.0], np.float32)
        jbins = jnp.asarray(bins)
    elif bins == "mixed":
        bins = [3, np.array([-1.0, 0.0, 0.25, 1.0], np.float32)]
        jbins = [3, jnp.asarray(bins[1])]
    else:
        jbins = bins
    H, xe, ye = jnp.histogram2d(jnp.asarray(x), jnp.asarray(y), bins=jbins)
    nH, nxe, nye = np.histogram2d(x, y, bins=bins)
    assert H.dtype == np.int32  # JAX: integer counts without weights or density
    np.testing.assert_array_equal(A(xe), nxe.astype(np.float32))
    np.testing.assert_array_equal(A(ye), nye.astype(np.float32))
    np.testing.assert_array_equal(A(H), nH)
    w = rng.uniform(0, 1, 40).astype(np.float32)
    H, _, _ = jnp.histogram2d(jnp.asarray(x), jnp.asarray(y), bins=jbins, weights=jnp.asarray(w))
    assert H.dtype == np.float32
    np.testing.assert_allclose(A(H), np.histogram2d(x, y, bins=bins, weights=w)[0], rtol=1e-5,
                               atol=1e-6)
    H, _, _ = jnp.histogram2d(jnp.asarray(x), jnp.asarray(y), bins=jbins, density=True)
    np.testing.assert_allclose(A(H), np.histogram2d(x, y, bins=bins, density=True)[0],
                               rtol=1e-5)


def test_histogram2d_range_edges_and_jit(rng):
    x = rng.integers(0, 5, 50).astype(np.float32)  # values on the edges of range (0, 4)
    y = rng.integers(0, 3, 50).astype(np.float32)
    r = [(0, 4), (0, 2)]
    f = jax.jit(lambda x, y: jnp.histogram2d(x, y, bins=(4, 2), range=r)[0])
    np.testing.assert_array_equal(A(f(jnp.asarray(x), jnp.asarray(y))),
                                  np.histogram2d(x, y, bins=(4, 2), range=r)[0])
    H, xe, ye = jax.jit(lambda x, y: jnp.histogram2d(x, y, bins=3))(jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(A(H), np.histogram2d(x, y, bins=[A(xe), A(ye)])[0])
    assert A(H).sum() == 50
    with pytest.raises(ValueError, match="same length"):
        jnp.histogram2d(jnp.asarray(x), jnp.asarray(y[:3]))


def test_histogramdd_matches_numpy(rng):
    s = rng.normal(size=(60, 3)).astype(np.float32)
    bins = (2, 3, 4)
    rngs = [(-1, 1), None, (-2, 0.5)]
    H, edges = jnp.histogramdd(jnp.asarray(s), bins=bins, range=rngs)
    nH, nedges = np.histogramdd(s, bins=bins, range=rngs)
    np.testing.assert_array_equal(A(H), nH)
    for e, ne in zip(edges, nedges):
        np.testing.assert_array_equal(A(e), ne.astype(np.float32))
    w = rng.uniform(0, 2, 60).astype(np.float32)
    H, _ = jnp.histogramdd(jnp.asarray(s), bins=3, weights=jnp.asarray(w), density=True)
    np.testing.assert_allclose(A(H), np.histogramdd(s, bins=3, weights=w, density=True)[0],
                               rtol=1e-5, atol=1e-6)
    H, _ = jnp.histogramdd(jnp.zeros((0, 2), jnp.float32), bins=2)
    np.testing.assert_array_equal(A(H), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="should have one weight for each sample"):
        jnp.histogramdd(jnp.asarray(s), weights=jnp.ones(5))
    with pytest.raises(ValueError, match="should be a bin for each dimension"):
        jnp.histogramdd(jnp.asarray(s), bins=(2, 3))
    with pytest.raises(ValueError, match="range must be a sequence of 3 pairs or Nones"):
        jnp.histogramdd(jnp.asarray(s), range=[(0, 1)])
    with pytest.raises(ValueError, match=r"shape \(N, D\)"):
        jnp.histogramdd(jnp.asarray(s[:, 0]))


# ---- interp ----
def _grid(rng, n=9):
    xp = np.sort(rng.choice(np.arange(-40, 40), n, replace=False) / 4).astype(np.float32)
    fp = rng.normal(size=n).astype(np.float32)
    return xp, fp


def test_interp_matches_numpy(rng):
    xp, fp = _grid(rng)
    x = rng.uniform(xp[0] - 2, xp[-1] + 2, (3, 11)).astype(np.float32)
    x[0, :3] = xp[:3]  # exactly on sample points
    x[1, 0], x[1, 1] = xp[0], xp[-1]  # the ends
    x[2, 0] = np.nan
    got = A(jnp.interp(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp)))
    want = np.interp(x, xp, fp).astype(np.float32)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.isnan(got[2, 0])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[0, :3], fp[:3])
    np.testing.assert_array_equal(got[1, :2], fp[[0, -1]])
    got = A(jnp.interp(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp), left=-7.0, right=9.0))
    np.testing.assert_allclose(got, np.interp(x, xp, fp, left=-7.0, right=9.0), rtol=1e-5,
                               atol=1e-5)
    # integer inputs: a float result
    got = jnp.interp(jnp.asarray([1, 2]), jnp.asarray([0, 4]), jnp.asarray([0, 8]))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(A(got), [2.0, 4.0])


def test_interp_extrapolate_and_period(rng):
    xp, fp = _grid(rng)
    x = np.array([xp[0] - 1.5, xp[-1] + 2.0], np.float32)
    got = A(jnp.interp(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp), left="extrapolate",
                       right="extrapolate"))
    s0 = (fp[1] - fp[0]) / (xp[1] - xp[0])
    s1 = (fp[-1] - fp[-2]) / (xp[-1] - xp[-2])
    np.testing.assert_allclose(got, [fp[0] - 1.5 * s0, fp[-1] + 2.0 * s1], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="'extrapolate'"):
        jnp.interp(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp), left="nearest")
    # period: xp unsorted and outside one period, x anywhere
    p = 360.0
    xpp = rng.choice(np.arange(-720, 720, 7), 10, replace=False).astype(np.float32)
    fpp = rng.normal(size=10).astype(np.float32)
    xq = (rng.integers(-4000, 4000, 25) / 4).astype(np.float32)  # exact modulo the period
    got = A(jnp.interp(jnp.asarray(xq), jnp.asarray(xpp), jnp.asarray(fpp), period=p))
    np.testing.assert_allclose(got, np.interp(xq, xpp, fpp, period=p), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="period must be a scalar"):
        jnp.interp(jnp.asarray(xq), jnp.asarray(xpp), jnp.asarray(fpp), period=[1.0, 2.0])
    with pytest.raises(ValueError, match="non-zero"):
        jnp.interp(jnp.asarray(xq), jnp.asarray(xpp), jnp.asarray(fpp), period=0.0)
    with pytest.raises(ValueError, match="one-dimensional arrays of equal size"):
        jnp.interp(jnp.asarray(xq), jnp.asarray(xpp), jnp.asarray(fpp[:3]))


def test_interp_jit_vmap_and_grad(rng):
    xp, fp = _grid(rng)
    x = rng.uniform(xp[0], xp[-1], 13).astype(np.float32)
    want = np.interp(x, xp, fp)
    f = jax.jit(jnp.interp)
    np.testing.assert_allclose(A(f(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp))), want,
                               rtol=1e-5, atol=1e-5)
    fps = rng.normal(size=(4, xp.size)).astype(np.float32)
    got = jax.vmap(lambda f: jnp.interp(jnp.asarray(x), jnp.asarray(xp), f))(jnp.asarray(fps))
    np.testing.assert_allclose(A(got), [np.interp(x, xp, r) for r in fps], rtol=1e-5, atol=1e-5)
    # d/dx: the slope of the segment holding x (strictly inside it)
    j = np.clip(np.searchsorted(xp, x, side="right"), 1, xp.size - 1)
    mid = (x > xp[j - 1]) & (x < xp[j])
    slope = (fp[j] - fp[j - 1]) / (xp[j] - xp[j - 1])
    gx = A(jax.vmap(jax.grad(lambda v: jnp.interp(v, jnp.asarray(xp), jnp.asarray(fp))))(
        jnp.asarray(x)))
    np.testing.assert_allclose(gx[mid], slope[mid], rtol=1e-4, atol=1e-5)
    # outside [xp[0], xp[-1]] the value is constant: zero slope
    g_out = jax.grad(lambda v: jnp.interp(v, jnp.asarray(xp), jnp.asarray(fp)))(
        jnp.asarray(xp[-1] + 3.0))
    assert float(g_out) == 0.0
    # d/dfp: the linear weights (1 - t, t) on the segment's two ends
    k = int(np.flatnonzero(mid)[0])
    t = (x[k] - xp[j[k] - 1]) / (xp[j[k]] - xp[j[k] - 1])
    gf = A(jax.grad(lambda f: jnp.interp(jnp.asarray(x[k]), jnp.asarray(xp), f))(jnp.asarray(fp)))
    want = np.zeros_like(fp)
    want[j[k] - 1], want[j[k]] = 1 - t, t
    np.testing.assert_allclose(gf, want, rtol=1e-4, atol=1e-6)


# ---- vectorize ----
def test_vectorize_elementwise_matches_numpy(rng):
    def f(a, b):
        return jnp.where(a > b, a - b, a * b) if isinstance(a, jnp.ndarray) else \
            (a - b if a > b else a * b)
    a = rng.normal(size=(3, 1, 4)).astype(np.float32)
    b = rng.normal(size=(5, 1)).astype(np.float32)
    got = A(jnp.vectorize(f)(jnp.asarray(a), jnp.asarray(b)))
    want = np.vectorize(f)(a, b)
    assert got.shape == (3, 5, 4)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # a scalar and a size-1 axis that no argument loops over
    got = A(jnp.vectorize(lambda u, v: u + 2 * v)(jnp.asarray(a[:1]), 1.5))
    np.testing.assert_allclose(got, a[:1] + 3.0, rtol=1e-6)
    assert got.shape == (1, 1, 4)


def test_vectorize_signature(rng):
    @jnp.vectorize
    def plain(x):
        return x * 2
    np.testing.assert_array_equal(A(plain(jnp.asarray([1.0, 2.0]))), [2.0, 4.0])

    @jnp.vectorize(signature="(n),(n)->()")
    def dot(u, v):
        assert u.ndim == 1 and v.ndim == 1
        return jnp.sum(u * v)
    u = rng.normal(size=(2, 1, 5)).astype(np.float32)
    v = rng.normal(size=(3, 5)).astype(np.float32)
    np.testing.assert_allclose(A(dot(jnp.asarray(u), jnp.asarray(v))),
                               np.vectorize(lambda p, q: np.sum(p * q), signature="(n),(n)->()")(u, v),
                               rtol=1e-5, atol=1e-5)
    mv = jnp.vectorize(lambda m, x: m @ x, signature="(n, k), (k) -> (n)")  # spaces allowed
    m = rng.normal(size=(4, 2, 3)).astype(np.float32)
    x = rng.normal(size=(3,)).astype(np.float32)
    np.testing.assert_allclose(A(mv(jnp.asarray(m), jnp.asarray(x))), m @ x, rtol=1e-5, atol=1e-5)
    stats = jnp.vectorize(lambda r: (jnp.mean(r), r - jnp.mean(r)), signature="(n)->(),(n)")
    mean, centred = stats(jnp.asarray(m))
    np.testing.assert_allclose(A(mean), m.mean(-1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(A(centred), m - m.mean(-1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_vectorize_excluded(rng):
    def poly(x, coeffs, *, shift=0.0):
        assert isinstance(coeffs, list)
        out = 0.0
        for c in coeffs:
            out = out * x + c
        return out + shift
    x = rng.normal(size=(2, 3)).astype(np.float32)
    coeffs = [1.0, -2.0, 0.5]
    got = A(jnp.vectorize(poly, excluded={1})(jnp.asarray(x), coeffs))
    np.testing.assert_allclose(got, np.polyval(coeffs, x), rtol=1e-5, atol=1e-5)
    got = A(jnp.vectorize(poly, excluded={"coeffs"})(jnp.asarray(x), coeffs=coeffs))
    np.testing.assert_allclose(got, np.polyval(coeffs, x), rtol=1e-5, atol=1e-5)
    # a keyword argument that is not excluded is vectorized like a positional one
    sh = rng.normal(size=(3,)).astype(np.float32)
    got = A(jnp.vectorize(poly, excluded={1})(jnp.asarray(x), coeffs, shift=jnp.asarray(sh)))
    np.testing.assert_allclose(got, np.polyval(coeffs, x) + sh, rtol=1e-5, atol=1e-5)
    # None is passed through
    got = A(jnp.vectorize(lambda a, b: a if b is None else a + b)(jnp.asarray(x), None))
    np.testing.assert_array_equal(got, x)


def test_vectorize_under_jit_and_grad(rng):
    f = jnp.vectorize(lambda u, v: jnp.sum(u * v) ** 2, signature="(n),(n)->()")
    u = rng.normal(size=(4, 3)).astype(np.float32)
    v = rng.normal(size=(3,)).astype(np.float32)
    want = (u.astype(np.float64) @ v) ** 2
    # A float32 dot that cancels is off by a few ulps of sum|u v|, not of |u . v|: the bound
    # scales with (|u| @ |v|)^2 (seed-dependent failures otherwise, e.g. 2.5e-5 relative).
    scale = float(((np.abs(u).astype(np.float64) @ np.abs(v)) ** 2).max())
    np.testing.assert_allclose(A(jax.jit(f)(jnp.asarray(u), jnp.asarray(v))), want, rtol=1e-5,
                               atol=1e-6 * scale)
    g = A(jax.grad(lambda a: jnp.sum(f(a, jnp.asarray(v))))(jnp.asarray(u)))
    np.testing.assert_allclose(g, 2 * (u @ v)[:, None] * v[None, :], rtol=1e-4, atol=1e-5)
    h = jnp.vectorize(jnp.sin)
    gx = A(jax.grad(lambda a: jnp.sum(h(a)))(jnp.asarray(u)))
    np.testing.assert_allclose(gx, np.cos(u), rtol=1e-5, atol=1e-6)


def test_vectorize_errors():
    one = jnp.ones(3)
    with pytest.raises(ValueError, match="not a valid gufunc signature: \\(n\\)->"):
        jnp.vectorize(jnp.sum, signature="(n)->")
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(jnp.sum, signature="n->()")
    mv = jnp.vectorize(lambda m, x: m @ x, signature="(n,k),(k)->(n)")
    with pytest.raises(ValueError, match=r"input with shape \(3,\) does not have enough "
                                         r"dimensions for all core dimensions \('n', 'k'\) on "
                                         r"vectorized function with excluded=frozenset\(\) and "
                                         r"signature='\(n,k\),\(k\)->\(n\)'"):
        mv(one, one)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'k': 4 vs 3"):
        mv(jnp.ones((2, 3)), jnp.ones(4))
    with pytest.raises(TypeError, match="wrong number of positional arguments: expected 2, got 1"):
        mv(jnp.ones((2, 3)))
    bad = jnp.vectorize(lambda x: x, signature="(n)->()")
    with pytest.raises(ValueError, match=r"output shape \(3,\) does not match core dimensions"):
        bad(one)
    two = jnp.vectorize(lambda x: x, signature="(n)->(n),()")
    with pytest.raises(TypeError, match="output must be a tuple"):
        two(one)
    with pytest.raises(TypeError, match="can only exclude integer or string arguments"):
        jnp.vectorize(jnp.sin, excluded={1.5})
    with pytest.raises(ValueError, match="contains negative numbers"):
        jnp.vectorize(jnp.sin, excluded={-1})
    with pytest.raises(TypeError, match="Pass them positionally, or add their names to excluded"):
        jnp.vectorize(lambda x, y: x, signature="(n),()->(n)")(one, y=1.0)


# ---- piecewise, fill_diagonal, place, apply_along_axis, apply_over_axes ----
def test_piecewise_matches_numpy(rng):
    x = rng.uniform(-3, 3, (4, 6)).astype(np.float32)
    conds = [x < -1, x > 1, (x > 0.5) & (x < 2)]  # overlapping: the last true one wins
    funcs = [lambda v: -v, lambda v: v * v, 7.0]
    np.testing.assert_allclose(A(jnp.piecewise(jnp.asarray(x), [jnp.asarray(c) for c in conds],
                                               funcs)),
                               np.piecewise(x, conds, funcs), rtol=1e-6)
    funcs = funcs + [lambda v: v + 100]  # the "otherwise" function
    np.testing.assert_allclose(A(jnp.piecewise(jnp.asarray(x), conds, funcs)),
                               np.piecewise(x, conds, funcs), rtol=1e-6)
    f = jax.jit(lambda a: jnp.piecewise(a, [a < 0], [lambda v: v * 3, lambda v: v - 1]))
    np.testing.assert_allclose(A(f(jnp.asarray(x))), np.where(x < 0, x * 3, x - 1), rtol=1e-6)
    g = A(jax.grad(lambda a: jnp.sum(jnp.piecewise(a, [a < 0], [lambda v: v * v, jnp.sin])))(
        jnp.asarray(x)))
    np.testing.assert_allclose(g, np.where(x < 0, 2 * x, np.cos(x)), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="with 3 condition\\(s\\), either 3 or 4 functions"):
        jnp.piecewise(jnp.asarray(x), conds, [1.0])


def test_fill_diagonal_matches_numpy(rng):
    for shape, wrap in (((4, 4), False), ((7, 3), False), ((7, 3), True), ((3, 5), False),
                        ((3, 3, 3), False)):
        a = rng.normal(size=shape).astype(np.float32)
        val = rng.normal(size=2).astype(np.float32)
        want = a.copy()
        np.fill_diagonal(want, val, wrap=wrap)
        got = jnp.fill_diagonal(jnp.asarray(a), jnp.asarray(val), wrap=wrap, inplace=False)
        np.testing.assert_array_equal(A(got), want)
    a = rng.normal(size=(3, 3)).astype(np.float32)
    want = a.copy()
    np.fill_diagonal(want, 5.0)
    f = jax.jit(lambda m, v: jnp.fill_diagonal(m, v, inplace=False))
    np.testing.assert_array_equal(A(f(jnp.asarray(a), 5.0)), want)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(jnp.asarray(a), 1.0)
    with pytest.raises(ValueError, match="at least 2-d"):
        jnp.fill_diagonal(jnp.ones(3), 1.0, inplace=False)
    with pytest.raises(ValueError, match="equal length"):
        jnp.fill_diagonal(jnp.ones((2, 3, 3)), 1.0, inplace=False)


def test_place_matches_numpy(rng):
    a = rng.normal(size=(3, 5)).astype(np.float32)
    mask = rng.random((3, 5)) < 0.5
    vals = rng.normal(size=3).astype(np.float32)  # fewer than the True count: repeated
    want = a.copy()
    np.place(want, mask, vals)
    got = jnp.place(jnp.asarray(a), jnp.asarray(mask), jnp.asarray(vals), inplace=False)
    np.testing.assert_array_equal(A(got), want)
    f = jax.jit(lambda x, m, v: jnp.place(x, m, v, inplace=False))
    np.testing.assert_array_equal(A(f(jnp.asarray(a), jnp.asarray(mask), jnp.asarray(vals))),
                                  want)
    with pytest.raises(ValueError, match="Pass inplace=False"):
        jnp.place(jnp.asarray(a), jnp.asarray(mask), jnp.asarray(vals))


def test_apply_along_and_over_axes(rng):
    a = rng.normal(size=(3, 4, 5)).astype(np.float32)
    for axis in (0, 1, 2, -1):
        got = A(jnp.apply_along_axis(lambda r: jnp.cumsum(r)[-1] - r[0], axis, jnp.asarray(a)))
        np.testing.assert_allclose(got, np.apply_along_axis(lambda r: np.cumsum(r)[-1] - r[0],
                                                            axis, a), rtol=1e-5, atol=1e-5)
    got = A(jnp.apply_along_axis(lambda r, k: r * k, 1, jnp.asarray(a), 3.0))
    np.testing.assert_allclose(got, a * 3, rtol=1e-6)
    got = A(jnp.apply_over_axes(jnp.sum, jnp.asarray(a), [0, 2]))
    np.testing.assert_allclose(got, np.apply_over_axes(np.sum, a, [0, 2]), rtol=1e-5, atol=1e-5)
    assert got.shape == (1, 4, 1)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.apply_along_axis(jnp.sum, 3, jnp.asarray(a))


def test_histogram_traced_range_and_histogramdd_under_jit(rng):
    a = rng.normal(size=40).astype(np.float32)
    # A range of traced scalars (JAX's asarray(range)) gives the edges of the same numbers.
    f = jax.jit(lambda x, lo, hi: jnp.histogram(x, bins=5, range=(lo, hi)))
    h, e = f(jnp.asarray(a), jnp.asarray(-1.5, jnp.float32), jnp.asarray(2.0, jnp.float32))
    np.testing.assert_allclose(A(e), np.histogram_bin_edges(a, 5, range=(-1.5, 2.0)),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(A(h), np.histogram(a, bins=A(e))[0])
    s = rng.normal(size=(30, 2)).astype(np.float32)
    H, edges = jax.jit(lambda x: jnp.histogramdd(x, bins=(3, 4), range=[(-2, 2), None]))(
        jnp.asarray(s))
    np.testing.assert_array_equal(A(H), np.histogramdd(s, bins=[A(e) for e in edges])[0])
    np.testing.assert_array_equal(A(edges[0]), np.linspace(-2, 2, 4).astype(np.float32))
    # d/dw of a weighted 2-D histogram: c at each point's bin.
    c = rng.normal(size=(3, 4)).astype(np.float32)
    g = A(jax.grad(lambda w: jnp.sum(jnp.asarray(c) * jnp.histogramdd(
        jnp.asarray(s), bins=(3, 4), range=[(-2, 2), (-2, 2)], weights=w)[0]))(
        jnp.ones(30, jnp.float32)))
    bx = np.clip(np.digitize(s[:, 0], np.linspace(-2, 2, 4)) - 1, 0, 2)
    by = np.clip(np.digitize(s[:, 1], np.linspace(-2, 2, 5)) - 1, 0, 3)
    inside = np.all((s >= -2) & (s <= 2), axis=1)
    np.testing.assert_allclose(g, np.where(inside, c[bx, by], 0.0), rtol=1e-6)
