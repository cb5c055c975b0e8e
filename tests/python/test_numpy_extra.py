"""jnp's everyday extras (numpy/_extra.py), the lax extras and the jax-level names against NumPy
on fresh random inputs (the seed is printed by the `rng` fixture): several shapes and dtypes,
empty and 0-d inputs where allowed, jit and grad (grad vs central differences in float64), the
static-size rules of the set functions under jit, and the error cases. New-API names NumPy 1.24
lacks (vecdot, matvec, vecmat, unstack, bitwise_count, isdtype ...) are checked against a
direct NumPy expression."""
import numpy as np
import pytest

import tessera as jax
import tessera.lax as lax
import tessera.numpy as jnp
from tessera.errors import ConcretizationTypeError


def A(x):
    return np.asarray(x)


def close(x, y, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(A(x), y, rtol=rtol, atol=atol)


def fd_check(f, x, eps=1e-6, rtol=1e-5, atol=1e-6):
    """jax.grad(f)(x) against central differences, in float64."""
    g = A(jax.grad(lambda v: jnp.sum(f(v)))(jnp.asarray(x)))
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        num[i] = (float(A(jnp.sum(f(jnp.asarray(xp))))) -
                  float(A(jnp.sum(f(jnp.asarray(xm)))))) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=rtol, atol=atol)


# ---- statistics ----
@pytest.mark.parametrize("shape,axis", [((6,), None), ((4, 5), 0), ((4, 5), 1), ((2, 3, 4), -1),
                                        ((3, 4), (0, 1))])
def test_average(rng, shape, axis):
    a = rng.normal(size=shape).astype(np.float32)
    close(jnp.average(a, axis=axis), np.average(a, axis=axis))
    w = rng.uniform(0.5, 2, size=shape).astype(np.float32)
    close(jnp.average(a, axis=axis, weights=w), np.average(a, axis=axis, weights=w))
    avg, ws = jnp.average(a, axis=axis, weights=w, returned=True)
    navg, nws = np.average(a, axis=axis, weights=w, returned=True)
    close(avg, navg)
    close(ws, nws, rtol=1e-5)
    if isinstance(axis, int):
        w1 = rng.uniform(0.5, 2, size=shape[axis]).astype(np.float32)
        close(jnp.average(a, axis=axis, weights=w1), np.average(a, axis=axis, weights=w1))
        k = jnp.average(a, axis=axis, weights=w1, keepdims=True)
        assert k.shape == np.average(a, axis=axis, weights=w1, keepdims=True).shape


def test_average_dtypes_and_errors(rng):
    i = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    out = jnp.average(i)
    assert out.dtype == np.float32
    close(out, np.average(i))
    _, s = jnp.average(i, axis=1, returned=True)
    close(s, np.full(3, 4.0))
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(i, weights=np.ones(4))
    with pytest.raises(TypeError, match="1D weights expected"):
        jnp.average(i, axis=1, weights=np.ones((4, 1)))
    with pytest.raises(ValueError, match="Length of weights not compatible"):
        jnp.average(i, axis=1, weights=np.ones(3))


def test_average_grad_jit(x64, rng):
    a = rng.normal(size=(3, 4))
    w = rng.uniform(0.5, 2, 4)
    fd_check(lambda v: jnp.average(v, axis=1, weights=w), a)
    close(jax.jit(lambda v: jnp.average(v, axis=1, weights=w))(a), np.average(a, 1, w), 1e-12)


@pytest.mark.parametrize("shape", [(3, 7), (1, 5), (5,), (2, 2)])
@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_corrcoef(rng, shape, rowvar):
    m = rng.normal(size=shape).astype(np.float32)
    close(jnp.cov(m, rowvar=rowvar), np.cov(m, rowvar=rowvar), 1e-4, 1e-5)
    close(jnp.cov(m, rowvar=rowvar, bias=True), np.cov(m, rowvar=rowvar, bias=True), 1e-4, 1e-5)
    close(jnp.cov(m, rowvar=rowvar, ddof=0), np.cov(m, rowvar=rowvar, ddof=0), 1e-4, 1e-5)
    if m.ndim == 2 and m.shape[0] > 1 and m.shape[1] > 1:
        close(jnp.corrcoef(m, rowvar=rowvar), np.corrcoef(m, rowvar=rowvar), 1e-4, 1e-5)
    y = rng.normal(size=shape).astype(np.float32)
    close(jnp.cov(m, y, rowvar=rowvar), np.cov(m, y, rowvar=rowvar), 1e-4, 1e-5)


def test_cov_weights(rng):
    m = rng.normal(size=(3, 8))
    fw = rng.integers(1, 4, 8)
    aw = rng.uniform(0.2, 2, 8)
    close(jnp.cov(m, fweights=fw), np.cov(m, fweights=fw), 1e-5)
    close(jnp.cov(m, aweights=aw), np.cov(m, aweights=aw), 1e-5)
    close(jnp.cov(m, fweights=fw, aweights=aw), np.cov(m, fweights=fw, aweights=aw), 1e-5)
    close(jnp.cov(m, fweights=fw, aweights=aw, ddof=0),
          np.cov(m, fweights=fw, aweights=aw, ddof=0), 1e-5)
    i = rng.integers(0, 9, (2, 6))
    assert jnp.cov(i).dtype == np.float32
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        jnp.cov(np.ones((2, 2, 2)))
    with pytest.raises(TypeError):
        jnp.cov(m, fweights=np.ones(8) * 1.5)


def test_cov_grad(x64, rng):
    m = rng.normal(size=(2, 5))
    fd_check(lambda v: jnp.cov(v) * np.array([[1.0, 2.0], [3.0, 4.0]]), m)
    fd_check(lambda v: jnp.corrcoef(v) * np.array([[1.0, 2.0], [3.0, 4.0]]), m)


# ---- polynomials ----
@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_polyval(rng, n):
    p = rng.normal(size=n).astype(np.float32)
    for x in (rng.normal(size=(3, 4)).astype(np.float32), np.float32(0.7)):
        close(jnp.polyval(p, x), np.polyval(p, x), 1e-4, 1e-4)
    pi = rng.integers(-3, 4, n)
    out = jnp.polyval(pi.astype(np.int32), 3)
    assert out.dtype == np.float32 and out.shape == ()
    close(out, np.polyval(pi, 3))
    close(jax.jit(jnp.polyval)(p, np.float32(1.5)), np.polyval(p, 1.5), 1e-4)


def test_polyval_grad(x64, rng):
    p = rng.normal(size=4)
    x = rng.normal(size=3)
    fd_check(lambda v: jnp.polyval(v, x), p)
    fd_check(lambda v: jnp.polyval(p, v), x)


@pytest.mark.parametrize("n1,n2", [(3, 5), (5, 3), (4, 4), (1, 6)])
def test_polyadd_sub_mul(rng, n1, n2):
    a = rng.integers(-5, 5, n1).astype(np.int32)
    b = rng.integers(-5, 5, n2).astype(np.int32)
    r = jnp.polyadd(a, b)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(A(r), np.polyadd(a, b))
    np.testing.assert_array_equal(A(jnp.polysub(a, b)), np.polysub(a, b))
    m = jnp.polymul(a, b)
    assert m.dtype == np.float32
    close(m, np.convolve(a, b).astype(np.float32))
    af = rng.normal(size=n1).astype(np.float32)
    bf = rng.normal(size=n2).astype(np.float32)
    close(jnp.polyadd(af, bf), np.polyadd(af, bf))
    close(jnp.polymul(af, bf), np.polymul(af, bf), 1e-5)


def test_polymul_trim_and_2d_polyadd():
    x1, x2 = np.array([0, 2, 1, 0]), np.array([0, 0, 5, 0, 3])
    close(jnp.polymul(x1, x2, trim_leading_zeros=True), np.polymul(x1, x2))
    assert jnp.polymul(x1, x2).shape == (8,)
    x6 = jnp.asarray([[5, 7, 9], [8, 6, 4]])
    np.testing.assert_array_equal(A(jnp.polyadd(x6, jnp.asarray([2]))), [[5, 7, 9], [10, 8, 6]])


@pytest.mark.parametrize("m", [0, 1, 2, 3, 5])
def test_polyder_polyint(rng, m):
    p = rng.normal(size=5).astype(np.float32)
    close(jnp.polyder(p, m), np.polyder(p, m).astype(np.float32) if m < 5 else [], 1e-4)
    assert jnp.polyder(p, 7).shape == (0,)
    close(jnp.polyint(p, m), np.polyint(p, m), 1e-5)
    k = rng.normal(size=m)
    if m:
        close(jnp.polyint(p, m, k), np.polyint(p, m, k), 1e-5)
        close(jnp.polyint(p, m, 2.5), np.polyint(p, m, 2.5), 1e-5)
    pi = np.array([2, -5, 3, -1], np.int32)
    d = jnp.polyder(pi)
    assert d.dtype == np.float32
    close(d, [6, -10, 3])
    close(jnp.polyint(np.array([12, 12, 6]), 2, np.array([4, 5])), [1, 2, 3, 4, 5])


def test_poly_errors():
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        jnp.polyder(np.ones(3), -1)
    with pytest.raises(ValueError, match="Order of integral must be positive"):
        jnp.polyint(np.ones(3), -1)
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array"):
        jnp.polyint(np.ones(3), 2, np.ones(3))


# ---- trapezoid, cross, gradient ----
@pytest.mark.parametrize("shape,axis", [((7,), -1), ((4, 5), 0), ((3, 4, 5), 1)])
def test_trapezoid(rng, shape, axis):
    y = rng.normal(size=shape).astype(np.float32)
    close(jnp.trapezoid(y, axis=axis), np.trapz(y, axis=axis), 1e-5)
    close(jnp.trapezoid(y, dx=0.3, axis=axis), np.trapz(y, dx=0.3, axis=axis), 1e-5)
    x = np.sort(rng.uniform(0, 3, shape[axis])).astype(np.float32)
    close(jnp.trapezoid(y, x, axis=axis), np.trapz(y, x, axis=axis), 1e-4, 1e-5)
    xf = rng.uniform(0, 3, shape).astype(np.float32)
    close(jnp.trapezoid(y, xf, axis=axis), np.trapz(y, xf, axis=axis), 1e-4, 1e-5)
    assert jnp.trapezoid(np.arange(5, dtype=np.int32)).dtype == np.float32


def test_trapezoid_grad(x64, rng):
    fd_check(lambda v: jnp.trapezoid(v, np.array([0.0, 0.5, 2.0, 2.5])), rng.normal(size=4))


@pytest.mark.parametrize("n1,n2", [(3, 3), (2, 3), (3, 2), (2, 2)])
def test_cross(rng, n1, n2):
    a = rng.normal(size=(4, n1)).astype(np.float32)
    b = rng.normal(size=(4, n2)).astype(np.float32)
    close(jnp.cross(a, b), np.cross(a, b), 1e-5)
    close(jnp.cross(a[0], b[0]), np.cross(a[0], b[0]), 1e-5)
    at, bt = a.T.copy(), b.T.copy()
    close(jnp.cross(at, bt, axisa=0, axisb=0), np.cross(at, bt, axisa=0, axisb=0), 1e-5)
    if n1 == 3 and n2 == 3:
        close(jnp.cross(at, bt, axis=0), np.cross(at, bt, axis=0), 1e-5)
        close(jnp.cross(a, b, axisc=0), np.cross(a, b, axisc=0), 1e-5)
    ai = rng.integers(-4, 4, (2, 3)).astype(np.int32)
    r = jnp.cross(ai, ai[::-1])
    assert r.dtype == np.int32
    np.testing.assert_array_equal(A(r), np.cross(ai, ai[::-1]))
    with pytest.raises(ValueError, match="Dimension must be either 2 or 3"):
        jnp.cross(np.ones(4), np.ones(3))


def test_cross_grad(x64, rng):
    b = rng.normal(size=3)
    fd_check(lambda v: jnp.cross(v, b) * np.array([1.0, 2.0, 3.0]), rng.normal(size=3))


@pytest.mark.parametrize("shape", [(5,), (4, 6), (3, 4, 2)])
def test_gradient(rng, shape):
    f = rng.normal(size=shape).astype(np.float32)
    ours, theirs = jnp.gradient(f), np.gradient(f)
    if len(shape) == 1:
        ours, theirs = [ours], [theirs]
    for o, t in zip(ours, theirs):
        close(o, t, 1e-5)
    close(jnp.gradient(f, 0.5, axis=0), np.gradient(f, 0.5, axis=0), 1e-5)
    x = np.cumsum(rng.uniform(0.3, 1.2, shape[-1])).astype(np.float32)
    close(jnp.gradient(f, x, axis=-1), np.gradient(f, x, axis=-1), 1e-4, 1e-4)
    if len(shape) >= 2:
        o = jnp.gradient(f, 2.0, x, axis=(0, -1))
        t = np.gradient(f, 2.0, x, axis=(0, -1))
        for a, b in zip(o, t):
            close(a, b, 1e-4, 1e-4)
    fi = rng.integers(0, 9, 6)
    assert jnp.gradient(fi.astype(np.int32)).dtype == np.float32
    with pytest.raises(NotImplementedError):
        jnp.gradient(f, edge_order=2)
    with pytest.raises(ValueError, match="too small"):
        jnp.gradient(np.ones(1))


# ---- sequences ----
@pytest.mark.parametrize("num,endpoint", [(5, True), (5, False), (1, True), (0, True), (9, True)])
def test_logspace_geomspace(num, endpoint):
    close(jnp.logspace(0.5, 3, num, endpoint), np.logspace(0.5, 3, num, endpoint), 1e-5)
    close(jnp.logspace(1, 4, num, endpoint, base=2.0),
          np.logspace(1, 4, num, endpoint, base=2.0), 1e-5)
    close(jnp.geomspace(1, 1000, num, endpoint), np.geomspace(1, 1000, num, endpoint), 1e-5)
    close(jnp.geomspace(-2, -50, num, endpoint), np.geomspace(-2, -50, num, endpoint), 1e-5)
    close(jnp.geomspace(0.5, 3, num, endpoint), np.geomspace(0.5, 3, num, endpoint), 1e-5)


def test_logspace_arrays_and_dtypes(rng):
    s = np.array([0.0, 1.0])
    e = np.array([2.0, 3.0])
    close(jnp.logspace(s, e, 4), np.logspace(s, e, 4), 1e-5)
    close(jnp.logspace(s, e, 4, axis=1), np.logspace(s, e, 4, axis=1), 1e-5)
    close(jnp.geomspace(s + 1, e, 3, axis=-1), np.geomspace(s + 1, e, 3, axis=-1), 1e-5)
    assert jnp.logspace(0, 2, 3).dtype == np.float32
    assert jnp.logspace(0, 2, 3, dtype=jnp.int32).dtype == np.int32
    with pytest.raises(ValueError, match="cannot include zero"):
        jnp.geomspace(0, 10)


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("inc", [False, True])
def test_vander(rng, n, inc):
    x = rng.normal(size=n).astype(np.float32)
    close(jnp.vander(x, increasing=inc), np.vander(x, increasing=inc), 1e-5)
    close(jnp.vander(x, 3, increasing=inc), np.vander(x, 3, increasing=inc), 1e-5)
    xi = rng.integers(-3, 4, n).astype(np.int32)
    v = jnp.vander(xi, increasing=inc)
    assert v.dtype == np.int32
    np.testing.assert_array_equal(A(v), np.vander(xi, increasing=inc))
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.vander(np.ones((2, 2)))
    with pytest.raises(ValueError, match="nonnegative"):
        jnp.vander(x, -1)


# ---- set functions ----
@pytest.mark.parametrize("method", ["auto", "compare_all", "binary_search", "sort"])
def test_isin(rng, method):
    e = rng.integers(0, 10, (3, 5))
    t = rng.integers(0, 10, 6)
    np.testing.assert_array_equal(A(jnp.isin(e, t, method=method)), np.isin(e, t))
    np.testing.assert_array_equal(A(jnp.isin(e, t, invert=True, method=method)),
                                  np.isin(e, t, invert=True))
    np.testing.assert_array_equal(A(jnp.isin(e, np.zeros(0, np.int32))),
                                  np.zeros(e.shape, bool))
    np.testing.assert_array_equal(A(jnp.isin(3, t)), np.isin(3, t))
    np.testing.assert_array_equal(A(jax.jit(jnp.isin)(e, t)), np.isin(e, t))
    with pytest.raises(ValueError, match="not implemented"):
        jnp.isin(e, t, method="hash")


def _sets(rng):
    for n1, n2 in [(8, 6), (5, 0), (0, 4), (1, 1), (12, 12)]:
        yield (rng.integers(0, 8, n1).astype(np.int32), rng.integers(0, 8, n2).astype(np.int32))
    f1 = rng.integers(0, 5, 7).astype(np.float32) / 2
    yield f1, rng.integers(0, 5, 5).astype(np.float32) / 2


def test_set_functions_concrete(rng):
    for a, b in _sets(rng):
        for name in ("setdiff1d", "union1d", "intersect1d", "setxor1d"):
            ours = getattr(jnp, name)(a, b)
            theirs = getattr(np, name)(a, b)
            np.testing.assert_array_equal(A(ours), theirs, err_msg=name)
            assert ours.dtype == np.result_type(a, b)
        ua, ub = np.unique(a), np.unique(b)
        np.testing.assert_array_equal(A(jnp.setdiff1d(ua, ub, assume_unique=True)),
                                      np.setdiff1d(ua, ub, assume_unique=True))
        np.testing.assert_array_equal(A(jnp.intersect1d(ua, ub, assume_unique=True)),
                                      np.intersect1d(ua, ub, assume_unique=True))
        np.testing.assert_array_equal(A(jnp.setxor1d(ua, ub, assume_unique=True)),
                                      np.setxor1d(ua, ub, assume_unique=True))
        for x, y in zip(jnp.intersect1d(a, b, return_indices=True),
                           np.intersect1d(a, b, return_indices=True)):
            np.testing.assert_array_equal(A(x), y)
    # 2-D inputs are flattened
    a2 = rng.integers(0, 6, (3, 4))
    np.testing.assert_array_equal(A(jnp.union1d(a2, a2.T)), np.union1d(a2, a2.T))


def test_set_functions_size_under_jit(rng):
    a = rng.integers(0, 10, 9).astype(np.int32)
    b = rng.integers(0, 10, 7).astype(np.int32)
    for name in ("setdiff1d", "union1d", "intersect1d", "setxor1d"):
        ref = getattr(np, name)(a, b)
        f = getattr(jnp, name)
        for size in (0, len(ref), len(ref) + 3, max(len(ref) - 1, 0)):
            out = jax.jit(lambda x, y: f(x, y, size=size, fill_value=-1))(a, b)
            exp = np.concatenate([ref[:size], np.full(max(size - len(ref), 0), -1)])
            np.testing.assert_array_equal(A(out), exp, err_msg=f"{name} size={size}")
        with pytest.raises(ConcretizationTypeError):
            jax.jit(f)(a, b)
    # default fills: setdiff1d 0; union1d, intersect1d and setxor1d the smallest result
    ref = np.setxor1d(a, b)
    out = jnp.setxor1d(a, b, size=len(ref) + 2)
    np.testing.assert_array_equal(A(out)[len(ref):], [ref.min()] * 2 if len(ref) else [0, 0])
    ref = np.setdiff1d(a, b)
    np.testing.assert_array_equal(A(jnp.setdiff1d(a, b, size=len(ref) + 1))[-1], 0)
    ref = np.union1d(a, b)
    np.testing.assert_array_equal(A(jnp.union1d(a, b, size=len(ref) + 1))[-1], ref.min())
    v, i1, i2 = jax.jit(lambda x, y: jnp.intersect1d(x, y, return_indices=True, size=12))(a, b)
    rv, ri1, ri2 = np.intersect1d(a, b, return_indices=True)
    np.testing.assert_array_equal(A(v)[:len(rv)], rv)
    np.testing.assert_array_equal(A(i1)[:len(rv)], ri1)
    np.testing.assert_array_equal(A(i2)[:len(rv)], ri2)


# ---- bits ----
@pytest.mark.parametrize("shape,axis", [((13,), None), ((3, 10), 1), ((9, 4), 0), ((2, 3, 5), None),
                                        ((0,), None)])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(rng, shape, axis, bitorder):
    a = rng.integers(0, 2, shape).astype(np.uint8)
    p = jnp.packbits(a, axis=axis, bitorder=bitorder)
    np.testing.assert_array_equal(A(p), np.packbits(a, axis=axis, bitorder=bitorder))
    assert p.dtype == np.uint8
    np.testing.assert_array_equal(A(jnp.packbits(a.astype(bool), axis=axis, bitorder=bitorder)),
                                  np.packbits(a.astype(bool), axis=axis, bitorder=bitorder))
    b = rng.integers(0, 256, shape).astype(np.uint8)
    np.testing.assert_array_equal(A(jnp.unpackbits(b, axis=axis, bitorder=bitorder)),
                                  np.unpackbits(b, axis=axis, bitorder=bitorder))
    for count in (3, -2, 50):
        if b.size:
            np.testing.assert_array_equal(
                A(jnp.unpackbits(b, axis=axis, count=count, bitorder=bitorder)),
                np.unpackbits(b, axis=axis, count=count, bitorder=bitorder))


def test_bits_errors_and_jit(rng):
    with pytest.raises(TypeError):
        jnp.packbits(np.ones(3, np.float32))
    with pytest.raises(TypeError):
        jnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="'order' must be either"):
        jnp.packbits(np.ones(3, np.uint8), bitorder="middle")
    b = rng.integers(0, 256, (4, 3)).astype(np.uint8)
    np.testing.assert_array_equal(A(jax.jit(lambda v: jnp.unpackbits(v, axis=0))(b)),
                                  np.unpackbits(b, axis=0))


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_bitwise_count(rng, dt):
    info = np.iinfo(dt)
    x = rng.integers(info.min, int(info.max) + 1, 40, dtype=np.int64).astype(dt)
    x[:2] = [info.min, info.max]
    out = jnp.bitwise_count(x)
    assert out.dtype == np.uint8
    ref = [bin(abs(int(v)) if info.min < int(v) else abs(int(v)) % (1 << info.bits)).count("1")
           for v in x]
    np.testing.assert_array_equal(A(out), ref)
    with pytest.raises(TypeError):
        jnp.bitwise_count(np.ones(2, np.float32))


# ---- elementwise math ----
def test_i0(rng):
    x = rng.uniform(-8, 8, (3, 7)).astype(np.float32)
    close(jnp.i0(x), np.i0(x.astype(np.float64)), 1e-5)
    assert jnp.i0(np.arange(3, dtype=np.int32)).dtype == np.float32
    close(jnp.i0(np.float32(0.0)), 1.0)


def test_i0_grad(x64, rng):
    from scipy import special
    x = rng.uniform(-4, 4, 6)
    np.testing.assert_allclose(A(jax.vmap(jax.grad(jnp.i0))(x)), special.i1(x), rtol=1e-10)
    fd_check(jnp.i0, x, rtol=1e-6)


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.uint16])
def test_gcd_lcm(rng, dt):
    lo = 0 if np.dtype(dt).kind == "u" else -60
    a = rng.integers(lo, 60, (4, 5)).astype(dt)
    b = rng.integers(lo, 60, (5,)).astype(dt)
    a[0, :2] = 0
    b[1] = 0
    np.testing.assert_array_equal(A(jnp.gcd(a, b)), np.gcd(a, b))
    small = (a % 11).astype(dt), (b % 11).astype(dt)
    np.testing.assert_array_equal(A(jnp.lcm(*small)), np.lcm(*small))
    np.testing.assert_array_equal(A(jax.jit(jnp.gcd)(a, b)), np.gcd(a, b))
    assert jnp.gcd(a, b).dtype == dt
    np.testing.assert_array_equal(A(jnp.gcd(np.int32(12), 18)), 6)
    with pytest.raises(TypeError, match="must be integers"):
        jnp.gcd(np.ones(2, np.float32), 2)
    with pytest.raises(TypeError, match="must be integers"):
        jnp.lcm(2, np.ones(2, np.float32))


@pytest.mark.parametrize("dt", [np.float32, np.float16, "bfloat16"])
def test_frexp_ldexp(rng, dt):
    hd = np.float32 if dt == "bfloat16" else dt
    x = (rng.normal(size=50) * 10.0 ** rng.integers(-3, 4, 50)).astype(hd)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
    if dt == np.float32:
        x[6:9] = [1e-40, -3e-45, np.finfo(np.float32).max]
    xa = jnp.asarray(x).astype(dt)
    xh = A(xa).astype(hd)
    m, e = jnp.frexp(xa)
    nm, ne = np.frexp(xh)
    assert e.dtype == np.int32 and str(m.dtype) == str(xa.dtype)
    np.testing.assert_array_equal(A(m).astype(hd), nm)
    np.testing.assert_array_equal(A(e), ne)
    back = jnp.ldexp(m, e)
    np.testing.assert_array_equal(A(back).astype(hd), xh)
    k = rng.integers(-20, 20, 50)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(A(jnp.ldexp(xa, k.astype(np.int32))).astype(hd),
                                      np.ldexp(xh, k).astype(hd))


def test_frexp_ldexp_x64_extremes(x64, rng):
    x = rng.normal(size=20) * 10.0 ** rng.integers(-300, 300, 20)
    x[:3] = [5e-324, -1e-310, np.finfo(np.float64).max]
    m, e = jnp.frexp(x)
    nm, ne = np.frexp(x)
    np.testing.assert_array_equal(A(m), nm)
    np.testing.assert_array_equal(A(e), ne)
    k = rng.integers(-1100, 1100, 20)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(A(jnp.ldexp(x, k)), np.ldexp(x, k))
    f32 = np.array([1.5, 3.0], np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(A(jnp.ldexp(f32, np.array([200, -160]))),
                                      np.ldexp(f32, [200, -160]))
    assert jnp.ldexp(np.int32(3), 2).dtype == np.float64
    with pytest.raises(TypeError, match="integer"):
        jnp.ldexp(1.0, 2.5)


def test_modf_spacing_angle(rng):
    x = (rng.normal(size=30) * 100).astype(np.float32)
    x[:3] = [0.0, -0.0, -0.5]
    f, w = jnp.modf(x)
    nf, nw = np.modf(x)
    np.testing.assert_array_equal(A(f), nf)
    np.testing.assert_array_equal(A(w), nw)
    np.testing.assert_array_equal(np.signbit(A(w)), np.signbit(nw))
    assert jnp.modf(np.arange(3, dtype=np.int32))[0].dtype == np.float32
    s = x.copy()
    s[3:6] = [np.inf, np.nan, np.finfo(np.float32).max]
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_array_equal(A(jnp.spacing(s)), np.spacing(s))
    y = rng.normal(size=(3, 4)).astype(np.float32)
    y[0, :2] = [0.0, -0.0]
    close(jnp.angle(y), np.angle(y))
    close(jnp.angle(y, deg=True), np.angle(y, deg=True), 1e-5)
    assert jnp.angle(np.arange(2, dtype=np.int32)).dtype == np.float32


def test_modf_grad(x64, rng):
    fd_check(lambda v: jnp.modf(v)[0], rng.uniform(0.1, 0.9, 4) + rng.integers(-3, 3, 4))


# ---- dtype predicates ----
def test_can_cast_issubdtype_isdtype():
    for f, t in [("int8", "int16"), ("int32", "float32"), ("float64", "float32"),
                 ("uint8", "int8"), ("bool", "int8"), ("float16", "float32")]:
        for casting in ("safe", "same_kind", "unsafe"):
            assert jnp.can_cast(f, t, casting) == np.can_cast(f, t, casting)
    assert jnp.can_cast(jnp.float32, jnp.float64)
    assert jnp.can_cast(jnp.bfloat16, jnp.float32)
    assert not jnp.can_cast(jnp.float16, jnp.bfloat16)
    assert jnp.can_cast(jnp.int8, jnp.bfloat16)
    assert jnp.can_cast(jnp.bfloat16, jnp.float16, "same_kind")
    assert jnp.can_cast(jnp.ones(2, jnp.int32), jnp.int64)
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.issubdtype(jnp.bfloat16, jnp.inexact)
    assert not jnp.issubdtype(jnp.bfloat16, jnp.integer)
    assert jnp.issubdtype(jnp.int8, jnp.signedinteger)
    assert not jnp.issubdtype(jnp.uint8, jnp.signedinteger)
    assert jnp.issubdtype(np.dtype("int32"), np.integer)
    assert jnp.issubdtype(jnp.ones(2).dtype, jnp.float32)
    assert jnp.issubdtype(jnp.bfloat16, jnp.bfloat16)
    assert not jnp.issubdtype(jnp.float32, jnp.bfloat16)
    assert jnp.isdtype(jnp.float32, "real floating")
    assert jnp.isdtype(jnp.bfloat16, "real floating")
    assert jnp.isdtype(jnp.int8, ("bool", "integral"))
    assert jnp.isdtype(jnp.uint8, "unsigned integer") and not jnp.isdtype(jnp.uint8,
                                                                           "signed integer")
    assert jnp.isdtype(jnp.bool_, "bool") and not jnp.isdtype(jnp.bool_, "numeric")
    assert jnp.isdtype(jnp.int32, jnp.int32) and not jnp.isdtype(jnp.int32, jnp.int64)
    assert not jnp.isdtype(jnp.float32, "complex floating")
    with pytest.raises(ValueError, match="Unrecognized"):
        jnp.isdtype(jnp.float32, "floaty")


# ---- construction ----
def test_block(rng):
    a = rng.normal(size=(2, 2)).astype(np.float32)
    b = rng.normal(size=(2, 3)).astype(np.float32)
    c = rng.normal(size=(1, 5)).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.block([[a, b], [c]])), np.block([[a, b], [c]]))
    v = rng.normal(size=3).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.block([v, 1.0, v])), np.block([v, 1.0, v]))
    np.testing.assert_array_equal(A(jnp.block(v)), np.block(v))
    np.testing.assert_array_equal(A(jnp.block([[1, 2], [3, 4]])), np.block([[1, 2], [3, 4]]))
    d3 = rng.normal(size=(1, 2, 2))
    np.testing.assert_array_equal(A(jnp.block([[[d3, d3]]])).astype(np.float32),
                                  np.block([[[d3, d3]]]).astype(np.float32))
    with pytest.raises(ValueError, match="mismatched"):
        jnp.block([[a], b])
    with pytest.raises(TypeError, match="tuple"):
        jnp.block((a, b))
    with pytest.raises(ValueError, match="empty"):
        jnp.block([])
    g = jax.grad(lambda x: jnp.sum(jnp.block([[x, x * 2]]) ** 2))(jnp.asarray(a))
    close(g, 2 * a + 8 * a)


def test_fromfunction_frombuffer():
    out = jnp.fromfunction(lambda i, j: i * 10 + j, (3, 4))
    np.testing.assert_array_equal(A(out), np.fromfunction(lambda i, j: i * 10 + j, (3, 4)))
    assert out.dtype == np.float32
    out = jnp.fromfunction(lambda i, j, k: i - j * k, (2, 3, 2), dtype=jnp.int32)
    np.testing.assert_array_equal(A(out), np.fromfunction(lambda i, j, k: i - j * k, (2, 3, 2),
                                                          dtype=np.int32))
    np.testing.assert_array_equal(A(jnp.fromfunction(lambda i: i * 0 + 7, (4,), dtype=int)),
                                  [7] * 4)
    np.testing.assert_array_equal(A(jnp.fromfunction(lambda i, s: i * s, (3,), s=2)), [0, 2, 4])
    buf = np.arange(6, dtype=np.int16).tobytes()
    np.testing.assert_array_equal(A(jnp.frombuffer(buf, dtype=jnp.int16)), np.arange(6))
    np.testing.assert_array_equal(A(jnp.frombuffer(buf, dtype=np.int16, count=3, offset=4)),
                                  [2, 3, 4])
    assert jnp.frombuffer(np.ones(2).tobytes()).dtype == np.float32
    np.testing.assert_array_equal(A(jnp.frombuffer(b"\x00\x3f\x80\x3f", dtype=jnp.bfloat16)
                                    .astype(jnp.float32)), [0.5, 1.0])


# ---- array-API products, views ----
def test_matrix_transpose_permute_dims_rollaxis(rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(A(jnp.matrix_transpose(x)), np.swapaxes(x, -1, -2))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        jnp.matrix_transpose(np.ones(3))
    np.testing.assert_array_equal(A(jnp.permute_dims(x, (2, 0, 1))), x.transpose(2, 0, 1))
    for axis in range(-3, 3):
        for start in range(-3, 4):
            np.testing.assert_array_equal(A(jnp.rollaxis(x, axis, start)),
                                          np.rollaxis(x, axis, start))
    with pytest.raises(ValueError):
        jnp.rollaxis(x, 0, 5)


@pytest.mark.parametrize("s1,s2,axis", [((5,), (5,), -1), ((3, 5), (5,), -1), ((4, 3), (4, 1), 0),
                                        ((2, 3, 4), (3, 4), -1), ((0,), (0,), -1)])
def test_vecdot(rng, s1, s2, axis):
    x1 = rng.normal(size=s1).astype(np.float32)
    x2 = rng.normal(size=s2).astype(np.float32)
    ref = np.sum(np.moveaxis(x1, axis, -1) * np.moveaxis(x2, axis, -1), axis=-1)
    close(jnp.vecdot(x1, x2, axis=axis), ref, 1e-5)
    i1 = rng.integers(-4, 4, s1).astype(np.int32)
    i2 = rng.integers(-4, 4, s2).astype(np.int32)
    r = jnp.vecdot(i1, i2, axis=axis)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(
        A(r), np.sum(np.moveaxis(i1, axis, -1) * np.moveaxis(i2, axis, -1), axis=-1))
    assert jnp.vecdot(i1, i2, axis=axis, preferred_element_type=jnp.float32).dtype == np.float32


def test_vecdot_errors_grad(x64, rng):
    with pytest.raises(ValueError, match="axes must match"):
        jnp.vecdot(np.ones(3), np.ones(4))
    b = rng.normal(size=(2, 3))
    fd_check(lambda v: jnp.vecdot(v, b), rng.normal(size=(2, 3)))


@pytest.mark.parametrize("s1,s2", [((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (2, 4)),
                                   ((5, 1, 3, 4), (2, 4))])
def test_matvec_vecmat(rng, s1, s2):
    m = rng.normal(size=s1).astype(np.float32)
    v = rng.normal(size=s2).astype(np.float32)
    close(jnp.matvec(m, v), np.einsum("...ij,...j->...i", m, v), 1e-5)
    mt = np.swapaxes(m, -1, -2).copy()
    close(jnp.vecmat(v, mt), np.einsum("...i,...ij->...j", v, mt), 1e-5)
    close(jax.jit(jnp.matvec)(m, v), np.einsum("...ij,...j->...i", m, v), 1e-5)
    with pytest.raises(ValueError):
        jnp.matvec(v[..., 0], v)
    with pytest.raises(ValueError):
        jnp.vecmat(v, v[..., 0])


def test_matvec_grad(x64, rng):
    m = rng.normal(size=(3, 4))
    fd_check(lambda v: jnp.matvec(m, v) * np.arange(1.0, 4.0), rng.normal(size=4))
    fd_check(lambda v: jnp.vecmat(v, m) * np.arange(1.0, 5.0), rng.normal(size=3))


def test_unstack(rng):
    x = rng.normal(size=(3, 4, 2)).astype(np.float32)
    for axis in (0, 1, -1):
        out = jnp.unstack(x, axis=axis)
        assert isinstance(out, tuple) and len(out) == x.shape[axis]
        for o, r in zip(out, np.moveaxis(x, axis, 0)):
            np.testing.assert_array_equal(A(o), r)
    assert jnp.unstack(np.zeros((0, 3))) == ()
    with pytest.raises(ValueError, match="rank > 0"):
        jnp.unstack(np.float32(1))
    out = jax.jit(lambda v: jnp.unstack(v, axis=1))(x)
    np.testing.assert_array_equal(A(out[2]), x[:, 2])


# ---- editing ----
def test_trim_zeros(rng):
    for f in ([0, 0, 1, 2, 0, 3, 0], [0, 0, 0], [], [1, 2], [0, 5]):
        a = np.array(f, np.int32)
        for trim in ("fb", "f", "b", "FB"):
            np.testing.assert_array_equal(A(jnp.trim_zeros(a, trim)), np.trim_zeros(a, trim))
    with pytest.raises(ConcretizationTypeError):
        jax.jit(jnp.trim_zeros)(np.array([0, 1, 0]))


def test_delete(rng):
    x = rng.normal(size=(4, 5)).astype(np.float32)
    for obj in (0, -1, 3, [0, 2], np.array([4, 1, 1]), slice(1, 4), slice(None, None, 2), [],
                np.array([True, False, True, False, False])):
        for axis in (None, 1, -1):
            n = x.size if axis is None else x.shape[axis]
            if isinstance(obj, np.ndarray) and obj.dtype == bool and n != 5:
                continue
            np.testing.assert_array_equal(A(jnp.delete(x, obj, axis)), np.delete(x, obj, axis))
    with pytest.raises(IndexError):
        jnp.delete(x, 7, axis=1)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda i: jnp.delete(x, i, axis=1))(np.array([1, 3]))
    out = jax.jit(lambda i: jnp.delete(x, i, axis=1, assume_unique_indices=True))(
        np.array([3, -4]))
    np.testing.assert_array_equal(A(out), np.delete(x, [3, 1], axis=1))


def test_insert_append_resize(rng):
    x = rng.integers(0, 9, (3, 4)).astype(np.int32)
    cases = [(1, 99, None), (-1, [7, 8], None), ([0, 2], [5, 6], None), (2, 5, 1),
             (1, [[1], [2], [3]], 1), ([1, 1], [7, 8], 1), (slice(0, 3), [5, 6, 7], 1),
             (3, [1, 2, 3, 4], 0), (0, 9, 0), (np.array([4, 0]), 6, 1), ([], [], None)]
    for obj, vals, axis in cases:
        np.testing.assert_array_equal(A(jnp.insert(x, obj, vals, axis)),
                                      np.insert(x, obj, vals, axis), err_msg=str((obj, vals)))
    out = jax.jit(lambda i, v: jnp.insert(x, i, v, axis=1))(np.array([2, 0]), np.array([7, 8]))
    np.testing.assert_array_equal(A(out), np.insert(x, [2, 0], [7, 8], axis=1))
    with pytest.raises(ValueError, match="integer typed"):
        jnp.insert(x, np.array([1.5]), 1)
    np.testing.assert_array_equal(A(jnp.append(x, [1, 2])), np.append(x, [1, 2]))
    np.testing.assert_array_equal(A(jnp.append(x, x[:1], axis=0)), np.append(x, x[:1], axis=0))
    for shape in ((2, 7), 5, (0,), (4, 3, 2)):
        np.testing.assert_array_equal(A(jnp.resize(x, shape)), np.resize(x, shape))
    np.testing.assert_array_equal(A(jnp.resize(np.zeros(0, np.int32), (2, 2))), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        jnp.resize(x, (-1, 2))
    g = jax.grad(lambda v: jnp.sum(jnp.insert(v, 1, 5.0) ** 2))(jnp.asarray([1.0, 2.0]))
    close(g, [2.0, 4.0])


def test_mask_indices():
    for func, k in ((jnp.triu, 0), (jnp.triu, 1), (jnp.tril, -1)):
        ours = jnp.mask_indices(4, func, k)
        theirs = np.mask_indices(4, getattr(np, func.__name__), k)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(A(o), t)
    r, c = jnp.mask_indices(3, jnp.triu, size=8)
    assert r.shape == (8,)


# ---- convolution ----
@pytest.mark.parametrize("n,m", [(7, 3), (3, 7), (5, 5), (1, 4), (6, 1), (8, 2)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(rng, n, m, mode):
    a = rng.normal(size=n).astype(np.float32)
    v = rng.normal(size=m).astype(np.float32)
    close(jnp.convolve(a, v, mode), np.convolve(a, v, mode), 1e-5)
    close(jnp.correlate(a, v, mode), np.correlate(a, v, mode), 1e-5)
    ai = rng.integers(-5, 5, n).astype(np.int32)
    vi = rng.integers(-5, 5, m).astype(np.int32)
    out = jnp.convolve(ai, vi, mode)
    assert out.dtype == np.float32
    close(out, np.convolve(ai, vi, mode))
    out = jnp.correlate(ai, vi, mode, preferred_element_type=jnp.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(A(out), np.correlate(ai, vi, mode))


def test_convolve_errors_jit_grad(x64, rng):
    with pytest.raises(ValueError, match="only support 1-dimensional"):
        jnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="inputs cannot be empty"):
        jnp.correlate(np.ones(0), np.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(np.ones(3), np.ones(2), mode="wrap")
    a, v = rng.normal(size=6), rng.normal(size=3)
    close(jax.jit(lambda x, y: jnp.convolve(x, y, "same", precision="highest"))(a, v),
          np.convolve(a, v, "same"), 1e-12)
    w = np.arange(1.0, 9.0)
    fd_check(lambda x: jnp.convolve(x, v) * w, a)
    fd_check(lambda y: jnp.correlate(a, y, "full") * w, v)


def test_einsum_path(rng):
    a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    ours = jnp.einsum_path("ij,jk,kl->il", jnp.asarray(a), b, c)
    theirs = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="greedy")
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert jnp.einsum_path("ij,jk", a, b, optimize="optimal")[0] == ["einsum_path", (0, 1)]


# ---- frompyfunc / ufunc ----
def test_frompyfunc(rng):
    f = jnp.frompyfunc(lambda x, y: x * y + 1.0, 2, 1, identity=0.0)
    assert isinstance(f, jnp.ufunc) and f.nin == 2 and f.nout == 1
    x = rng.normal(size=(3, 1)).astype(np.float32)
    y = rng.normal(size=(4,)).astype(np.float32)
    close(f(x, y), x * y + 1)
    close(jax.jit(f)(x, y), x * y + 1)
    z = rng.normal(size=(4, 3)).astype(np.float32)
    ref = z[0]
    for row in z[1:]:
        ref = ref * row + 1
    close(f.reduce(z), ref, 1e-5)
    close(f.reduce(z, axis=0, keepdims=True), ref[None], 1e-5)
    ref1 = z[:, 0]
    for j in range(1, 3):
        ref1 = ref1 * z[:, j] + 1
    close(f.reduce(z, axis=1), ref1, 1e-5)
    close(f.reduce(z[:0], axis=0), np.zeros(3))
    acc = [z[0]]
    for row in z[1:]:
        acc.append(acc[-1] * row + 1)
    close(f.accumulate(z), np.stack(acc), 1e-5)
    close(f.outer(y, y), y[:, None] * y[None, :] + 1)
    close(jnp.frompyfunc(jnp.add, 2, 1).reduce(z, axis=None), z.sum(), 1e-5)
    g = jnp.frompyfunc(lambda x: (x + 1, x * 2), 1, 2)
    p, q = g(y)
    close(p, y + 1)
    close(q, y * 2)
    with pytest.raises(TypeError):
        f(x)
    with pytest.raises(ValueError, match="binary"):
        g.reduce(y)
    with pytest.raises(ValueError, match="no identity"):
        jnp.frompyfunc(jnp.add, 2, 1).reduce(np.zeros((0, 2)))


# ---- lax extras ----
def test_lax_full_and_like():
    a = lax.full((2, 3), 1.5)
    assert a.shape == (2, 3) and a.dtype == np.float32 and a.weak_type
    b = lax.full((2,), 2, jnp.int8)
    assert b.dtype == np.int8 and not b.weak_type
    np.testing.assert_array_equal(A(b), [2, 2])
    x = jnp.asarray(np.ones((2, 2), np.int16))
    c = lax.full_like(x, 7)
    assert c.dtype == np.int16 and c.shape == (2, 2)
    np.testing.assert_array_equal(A(c), 7)
    w = lax.full_like(jnp.asarray(1.0), 3)
    assert w.weak_type and w.dtype == np.float32
    d = lax.full_like(x, 2.5, jnp.float32, shape=(3,))
    assert d.dtype == np.float32 and d.shape == (3,)
    z = lax.zeros_like_array(x)
    assert z.dtype == np.int16
    np.testing.assert_array_equal(A(z), 0)
    with pytest.raises(TypeError, match="scalar fill_value"):
        lax.full((2,), np.ones(2))


def test_lax_collapse_batch_matmul_select(rng):
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(A(lax.collapse(x, 1, 3)), x.reshape(2, 12, 5))
    np.testing.assert_array_equal(A(lax.collapse(x, 2)), x.reshape(2, 3, 20))
    np.testing.assert_array_equal(A(lax.collapse(x, 0, -1)), x.reshape(24, 5))
    a = rng.normal(size=(3, 2, 4)).astype(np.float32)
    b = rng.normal(size=(3, 4, 5)).astype(np.float32)
    close(lax.batch_matmul(a, b), a @ b, 1e-5)
    with pytest.raises(ValueError, match="same ndim"):
        lax.batch_matmul(a, b[0])
    with pytest.raises(ValueError, match="at least 2D"):
        lax.batch_matmul(np.ones(3), np.ones(3))
    p = rng.normal(size=(3, 4)) > 0
    t = rng.normal(size=(3, 4)).astype(np.float32)
    f = rng.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_array_equal(A(lax.select(p, t, f)), np.where(p, t, f))
    with pytest.raises(TypeError, match="boolean"):
        lax.select(p.astype(np.int32), t, f)
    with pytest.raises(NotImplementedError, match="complex"):
        lax.complex(t, f)


def test_lax_optimization_barrier():
    tree = {"a": jnp.ones(2), "b": (jnp.zeros(3), 2.0)}
    out = lax.optimization_barrier(tree)
    assert set(out) == {"a", "b"} and isinstance(out["b"], tuple)
    np.testing.assert_array_equal(A(out["b"][0]), np.zeros(3))
    g = jax.grad(lambda v: jnp.sum(lax.optimization_barrier((v * 2, v))[0]))(jnp.ones(3))
    np.testing.assert_array_equal(A(g), [2, 2, 2])
    out = jax.jit(lambda v: lax.optimization_barrier(v) + 1)(jnp.ones(2))
    np.testing.assert_array_equal(A(out), [2, 2])


# ---- jax-level extras ----
def test_jax_level_names(capsys):
    def f(x):
        return x * 2

    g = jax.named_call(f, name="double")
    assert g.__name__ == "f"
    np.testing.assert_array_equal(A(jax.jit(g)(jnp.ones(2))), [2, 2])
    with jax.named_scope("block"):
        y = jnp.ones(2) + 1
    np.testing.assert_array_equal(A(y), [2, 2])
    with pytest.raises(TypeError, match="must be a string"):
        with jax.named_scope(3):
            pass
    with jax.ensure_compile_time_eval():
        v = jnp.sum(jnp.arange(4))
        assert int(v) == 6
        if v > 5:  # Python control flow on a value
            w = 1
    assert w == 1
    h = jax.jit(lambda x: x + 1)
    h(jnp.ones(2))
    jax.clear_caches()
    np.testing.assert_array_equal(A(h(jnp.ones(2))), [2, 2])
    t = jax.typeof(jnp.ones((2, 3)))
    assert t.shape == (2, 3) and t.dtype == np.float32 and not t.weak_type
    assert str(t) == "f32[2,3]"
    t = jax.typeof(1.0)
    assert t.shape == () and t.weak_type and str(t) == "f32[]"
    assert str(jax.typeof(np.arange(3, dtype=np.int8))) == "i8[3]"
    s = jax.print_environment_info(return_string=True)
    assert "numpy" in s and "python" in s
    jax.print_environment_info()
    assert "numpy" in capsys.readouterr().out


def test_names_exist():
    for n in ("average cov corrcoef polyval polyadd polysub polymul polyder polyint trapezoid "
              "cross logspace geomspace vander gradient isin setdiff1d union1d intersect1d "
              "setxor1d packbits unpackbits i0 gcd lcm frexp ldexp modf spacing angle can_cast "
              "issubdtype isdtype block fromfunction frombuffer matrix_transpose vecdot matvec "
              "vecmat unstack permute_dims bitwise_count trim_zeros delete insert append resize "
              "mask_indices rollaxis convolve correlate einsum_path frompyfunc ufunc").split():
        assert hasattr(jnp, n), n
    for n in ("full full_like zeros_like_array collapse batch_matmul optimization_barrier "
              "select complex").split():
        assert hasattr(lax, n), n
    for n in ("named_call named_scope ensure_compile_time_eval clear_caches typeof "
              "print_environment_info").split():
        assert hasattr(jax, n), n


def test_vmap(rng):
    """The compositions batch: vmap equals a loop of NumPy calls."""
    P = rng.normal(size=(4, 3)).astype(np.float32)
    X = rng.normal(size=(4, 5)).astype(np.float32)
    I = rng.integers(-30, 30, (4, 5)).astype(np.int32)
    J = rng.integers(-30, 30, (4, 5)).astype(np.int32)
    close(jax.vmap(jnp.polyval)(P, X), np.stack([np.polyval(p, x) for p, x in zip(P, X)]), 1e-4)
    close(jax.vmap(jnp.convolve)(X, P), np.stack([np.convolve(x, p) for p, x in zip(P, X)]))
    close(jax.vmap(jnp.cross)(P, P[::-1]), np.cross(P, P[::-1]))
    np.testing.assert_array_equal(A(jax.vmap(jnp.gcd)(I, J)), np.gcd(I, J))
    np.testing.assert_array_equal(A(jax.vmap(jnp.isin)(I % 5, J % 5)),
                                  np.stack([np.isin(a, b) for a, b in zip(I % 5, J % 5)]))
    np.testing.assert_array_equal(A(jax.vmap(lambda x: jnp.frexp(x)[1])(X)), np.frexp(X)[1])
    close(jax.vmap(jnp.gradient)(X), np.gradient(X, axis=1))
    close(jax.vmap(lambda a, v: jnp.insert(a, 2, v))(X, X[:, 0]),
          np.stack([np.insert(a, 2, a[0]) for a in X]))
    out = jax.vmap(lambda a, b: jnp.setdiff1d(a, b, size=5, fill_value=-9))(I % 5, J % 5)
    for o, a, b in zip(A(out), I % 5, J % 5):
        r = np.setdiff1d(a, b)
        np.testing.assert_array_equal(o, np.concatenate([r, [-9] * (5 - len(r))]))
