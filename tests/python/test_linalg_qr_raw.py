"""QR's raw and pivoted forms: lax.linalg.geqrf / geqp3 / householder_product,
lax.linalg.qr(pivoting=True), jnp.linalg.qr(mode='raw') and jax.scipy.linalg.qr(mode=...,
pivoting=...) against NumPy and SciPy (scipy.linalg.lapack.dgeqrf/dgeqp3/dorgqr,
scipy.linalg.qr, numpy.linalg.qr) on fresh random inputs (square, tall, wide, batched, empty,
1x1; float32 and float64), reconstruction identities, jit against eager, vmap against a loop,
the derivative rules (none for the raw primitives, as JAX; pivoted qr against float64 central
differences) and the errors."""
import numpy as np
import pytest
import scipy.linalg as sla
from scipy.linalg import lapack

import tessera as jax
import tessera.numpy as jnp
import tessera.scipy.linalg as jsl
from tessera.lax import linalg as lax_linalg

DTYPES = [np.float32, np.float64]
SHAPES = [(1, 1), (4, 4), (6, 3), (3, 6), (5, 1)]


def _tol(dtype, n):
    return (1e-11 if np.dtype(dtype) == np.float64 else 3e-5) * 4 * n


def _close(got, want, dtype, n=4):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=_tol(dtype, n), atol=_tol(dtype, n))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_raw_primitives_match_lapack(rng, x64, dtype, shape):
    a = rng.uniform(-2, 2, shape).astype(dtype)
    a64 = a.astype(np.float64)
    n = max(shape)
    h, taus = lax_linalg.geqrf(a)
    assert h.dtype == dtype and taus.dtype == dtype
    hs, ts, _, _ = lapack.dgeqrf(a64)
    _close(h, hs, dtype, n)
    _close(taus, ts, dtype, n)
    h3, jpvt, t3 = lax_linalg.geqp3(a, np.zeros(shape[1], np.int32))
    # Pivots in the input's precision (see tests/oracle/oracle_linalg_qr.py: float32's downdated
    # column norms may pick another column than float64 near a tie).
    h3s, jps, t3s, _, _ = (lapack.sgeqp3 if dtype == np.float32 else lapack.dgeqp3)(a)
    np.testing.assert_array_equal(np.asarray(jpvt), jps)  # 1-based, as LAPACK's
    _close(h3, h3s, dtype, n)
    _close(t3, t3s, dtype, n)
    if shape[0] >= shape[1]:
        q = lax_linalg.householder_product(h, taus)
        qs, _, _ = lapack.dorgqr(hs, ts)
        _close(q, qs, dtype, n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(2, 5, 3), (2, 3, 5)])
def test_pivoted_qr_matches_scipy(rng, x64, dtype, shape):
    a = rng.uniform(-2, 2, shape).astype(dtype)
    n = max(shape)
    for mode in ("full", "economic", "r", "raw"):
        got = jsl.qr(a, mode=mode, pivoting=True)
        for b in np.ndindex(shape[:-2]):
            want = sla.qr(a[b], mode=mode, pivoting=True)  # in a's precision: the pivots
            if mode == "raw":
                (h, tau), r, p = got
                (hs, ts), rs, ps = want
                pairs = [(h[b], hs), (tau[b], ts), (r[b], rs)]
            else:
                pairs = [(x[b], y) for x, y in zip(got[:-1], want[:-1])]
                p, ps = got[-1], want[-1]
            np.testing.assert_array_equal(np.asarray(p)[b], ps)
            assert np.asarray(p).dtype == np.int32
            for x, y in pairs:
                assert x.shape == y.shape, mode
                _close(x, y, dtype, n)
    q, r, p = lax_linalg.qr(a, pivoting=True, full_matrices=False)
    ap = np.take_along_axis(a.astype(np.float64), np.asarray(p)[..., None, :], -1)
    _close(np.asarray(q, np.float64) @ np.asarray(r, np.float64), ap, dtype, n)
    d = np.abs(np.diagonal(np.asarray(r), axis1=-2, axis2=-1))
    assert np.all(d[..., 1:] <= d[..., :-1] * (1 + 1e-6))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(2, 5, 3), (0, 3), (3, 0)])
def test_raw_modes_match_numpy_and_scipy(rng, x64, dtype, shape):
    a = rng.uniform(-2, 2, shape).astype(dtype)
    n = max(shape) if min(shape) else 1
    res = jnp.linalg.qr(a, mode="raw")
    h, tau = res
    assert type(res).__name__ == "QRResult"
    if a.size:
        hn, tn = np.linalg.qr(a.astype(np.float64), mode="raw")
    else:
        hn, tn = np.swapaxes(a, -1, -2), np.zeros(shape[:-2] + (min(shape[-2:]),))
    assert h.shape == hn.shape and tau.shape == tn.shape  # h is (..., n, m): NumPy's layout
    _close(h, hn, dtype, n)
    _close(tau, tn, dtype, n)
    if len(shape) == 2 and a.size:
        for piv in (False, True):
            got = jsl.qr(a, mode="raw", pivoting=piv)
            want = sla.qr(a if piv else a.astype(np.float64), mode="raw", pivoting=piv)
            assert len(got) == len(want) and len(got[0]) == 2
            _close(got[0][0], want[0][0], dtype, n)
            _close(got[0][1], want[0][1], dtype, n)
            _close(got[1], want[1], dtype, n)
            if piv:
                np.testing.assert_array_equal(np.asarray(got[2]), want[2])


def test_empty_and_1x1():
    q, r, p = lax_linalg.qr(np.zeros((0, 3), np.float32), pivoting=True)
    assert q.shape == (0, 0) and r.shape == (0, 3)
    np.testing.assert_array_equal(np.asarray(p), [0, 0, 0])  # JAX's empty-matrix convention
    h, taus = lax_linalg.geqrf(np.array([[-2.5]], np.float32))
    np.testing.assert_array_equal(np.asarray(h), [[-2.5]])
    np.testing.assert_array_equal(np.asarray(taus), [0.0])
    q = lax_linalg.householder_product(np.zeros((3, 2), np.float32), np.zeros(0, np.float32))
    np.testing.assert_array_equal(np.asarray(q), np.eye(3, 2))


def test_geqp3_fixed_columns(rng, x64):
    a = rng.standard_normal((6, 5))
    jpvt = np.array([0, 1, 0, 1, 0], np.int32)
    h, piv, taus = lax_linalg.geqp3(a, jpvt)
    assert set(np.asarray(piv)[:2]) == {2, 4}
    q = lax_linalg.householder_product(h, taus)
    np.testing.assert_allclose(np.asarray(q) @ np.triu(np.asarray(h)[:5]),
                               a[:, np.asarray(piv) - 1], atol=1e-12)


def test_vmap_and_jit(rng):
    a = rng.standard_normal((3, 5, 4)).astype(np.float32)
    t = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
    fns = [
        lambda x, u: lax_linalg.geqrf(x)[0],
        lambda x, u: lax_linalg.geqrf(x)[1],
        lambda x, u: lax_linalg.geqp3(x, jnp.zeros(4, jnp.int32))[1],
        lambda x, u: lax_linalg.householder_product(x, u),
        lambda x, u: lax_linalg.qr(x, pivoting=True)[0],
        lambda x, u: lax_linalg.qr(x, pivoting=True, full_matrices=False)[2],
        lambda x, u: jnp.linalg.qr(x, mode="raw")[0],
        lambda x, u: jsl.qr(x, mode="raw", pivoting=True)[0][0],
    ]
    for i, f in enumerate(fns):
        loop = np.stack([np.asarray(f(a[b], t[b])) for b in range(3)])
        np.testing.assert_allclose(np.asarray(jax.vmap(f)(a, t)), loop, rtol=1e-5, atol=1e-5,
                                   err_msg=f"function {i}")
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(a[0], t[0])), np.asarray(f(a[0], t[0])))


def test_derivatives(rng, x64):
    a = rng.standard_normal((5, 3))
    for f in (lambda x: jnp.sum(lax_linalg.geqrf(x)[0]),
              lambda x: jnp.sum(lax_linalg.geqp3(x, jnp.zeros(3, jnp.int32))[0]),
              lambda x: jnp.sum(lax_linalg.householder_product(x, jnp.ones(2))),
              lambda x: jnp.sum(jnp.linalg.qr(x, mode="raw")[0])):
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            jax.grad(f)(a)
    # Pivoted qr: the gradient through the permuted matrix, on columns of well-separated norms
    # (a locally constant permutation), sign-normalized so the function is smooth.
    x = a * np.array([1.0, 16.0, 4.0])
    cq = rng.standard_normal((5, 3))
    cr = rng.standard_normal((3, 3))

    def f(x):
        q, r, _ = lax_linalg.qr(x, pivoting=True, full_matrices=False)
        s = jnp.sign(jnp.diagonal(r))
        return jnp.sum(q * s[None, :] * cq) + jnp.sum(r * s[:, None] * cr)

    g = np.asarray(jax.grad(f)(x))
    fd = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += 1e-6
        m[i] -= 1e-6
        fd[i] = (float(f(p)) - float(f(m))) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5)
    with pytest.raises(NotImplementedError, match="Unimplemented case of QR"):
        jax.grad(lambda x: jnp.sum(lax_linalg.qr(x, pivoting=True)[1]))(a.T)


def test_errors():
    m = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match="ndims >= 2"):
        lax_linalg.geqrf(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="Type mismatch for pivoted QR decomposition"):
        lax_linalg.geqp3(m, np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="int32"):
        lax_linalg.geqp3(m, np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="Type mismatch for Householder product"):
        lax_linalg.householder_product(m, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        lax_linalg.householder_product(m.T, np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        jsl.qr(m, mode="reduced", pivoting=True)
    with pytest.raises(TypeError, match="complex64"):
        lax_linalg.geqrf(np.zeros((2, 2), np.int32))
