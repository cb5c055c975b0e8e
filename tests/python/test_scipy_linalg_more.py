"""jax.scipy.linalg block_diag, toeplitz, hilbert, polar, expm_frechet, eigh_tridiagonal
against scipy.linalg on fresh random inputs (float32 under jit, float64), grads against float64
finite differences; the Schur-based functions raise NotImplementedError."""
import numpy as np
import pytest
import scipy.linalg as sl

import tessera as jax
import tessera.numpy as jnp
from tessera.scipy import linalg as tl


def test_block_diag_vs_scipy(rng):
    parts = [rng.standard_normal((2, 3)), rng.standard_normal(4), np.float64(rng.standard_normal()),
             rng.standard_normal((3, 1))]
    got = jax.jit(tl.block_diag)(*[jnp.asarray(p, jnp.float32) for p in parts])
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(got), sl.block_diag(*parts), rtol=1e-6)
    got = tl.block_diag(jnp.asarray([[1, 2]], jnp.int32), jnp.asarray([[3]], jnp.int32))
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(got), sl.block_diag([[1, 2]], [[3]]))
    assert tl.block_diag().shape == (1, 0)
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        tl.block_diag(jnp.ones((2, 2, 2)))


def test_toeplitz_vs_scipy(rng):
    c, r = rng.standard_normal(5), rng.standard_normal(3)
    got = jax.jit(tl.toeplitz)(jnp.asarray(c, jnp.float32), jnp.asarray(r, jnp.float32))
    np.testing.assert_allclose(np.asarray(got), sl.toeplitz(c, r), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tl.toeplitz(jnp.asarray(c))), sl.toeplitz(c),
                               rtol=1e-6)
    # batched: leading axes broadcast
    cb, rb = rng.standard_normal((2, 1, 4)), rng.standard_normal((3, 6))
    got = np.asarray(tl.toeplitz(jnp.asarray(cb), jnp.asarray(rb)))
    assert got.shape == (2, 3, 4, 6)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(got[i, j], sl.toeplitz(cb[i, 0], rb[j]), rtol=1e-6)


def test_hilbert():
    np.testing.assert_allclose(np.asarray(tl.hilbert(6)), sl.hilbert(6), rtol=1e-6)
    assert tl.hilbert(3).dtype == jnp.float32


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 5)])
@pytest.mark.parametrize("side", ["right", "left"])
def test_polar_vs_scipy(x64, rng, shape, side):
    a = rng.standard_normal(shape)
    u, p = jax.jit(lambda a: tl.polar(a, side=side))(jnp.asarray(a))
    uw, pw = sl.polar(a, side=side)
    np.testing.assert_allclose(np.asarray(p), pw, rtol=1e-9, atol=1e-10)
    recon = np.asarray(u) @ np.asarray(p) if side == "right" else np.asarray(p) @ np.asarray(u)
    np.testing.assert_allclose(recon, a, rtol=1e-9, atol=1e-10)
    if shape[0] >= shape[1]:
        np.testing.assert_allclose(np.asarray(u), uw, rtol=1e-8, atol=1e-9)


def test_polar_errors():
    with pytest.raises(ValueError, match="Unknown polar decomposition method"):
        tl.polar(jnp.eye(2), method="newton")
    with pytest.raises(ValueError, match="must be 'right' or 'left'"):
        tl.polar(jnp.eye(2), side="up")


def test_expm_frechet_vs_scipy(x64, rng):
    A = rng.standard_normal((5, 5)) * 0.7
    E = rng.standard_normal((5, 5))
    ea, L = jax.jit(tl.expm_frechet)(jnp.asarray(A), jnp.asarray(E))
    eaw, Lw = sl.expm_frechet(A, E)
    np.testing.assert_allclose(np.asarray(ea), eaw, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(L), Lw, rtol=1e-9, atol=1e-11)
    # L is the directional derivative of expm: central differences
    h = 1e-6
    fd = (sl.expm(A + h * E) - sl.expm(A - h * E)) / (2 * h)
    np.testing.assert_allclose(np.asarray(tl.expm_frechet(jnp.asarray(A), jnp.asarray(E),
                                                          compute_expm=False)), fd, rtol=1e-6,
                               atol=1e-8)
    with pytest.raises(ValueError, match="same shape"):
        tl.expm_frechet(jnp.eye(2), jnp.eye(3))
    with pytest.raises(ValueError, match="square"):
        tl.expm_frechet(jnp.ones((2, 3)), jnp.ones((2, 3)))


def test_expm_frechet_float32(rng):
    A = rng.standard_normal((3, 3)).astype(np.float32) * 0.5
    E = rng.standard_normal((3, 3)).astype(np.float32)
    ea, L = tl.expm_frechet(jnp.asarray(A), jnp.asarray(E))
    assert L.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(L), sl.expm_frechet(A.astype(np.float64),
                                                              E.astype(np.float64))[1],
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_eigh_tridiagonal_vs_scipy(x64, rng, n):
    d, e = rng.standard_normal(n), rng.standard_normal(n - 1)
    got = jax.jit(lambda d, e: tl.eigh_tridiagonal(d, e, eigvals_only=True))(jnp.asarray(d),
                                                                             jnp.asarray(e))
    want = sl.eigh_tridiagonal(d, e, eigvals_only=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    if n > 2:
        lo, hi = 1, n - 2
        got = tl.eigh_tridiagonal(jnp.asarray(d), jnp.asarray(e), eigvals_only=True,
                                  select="i", select_range=(lo, hi))
        np.testing.assert_allclose(np.asarray(got), want[lo:hi + 1], rtol=1e-12, atol=1e-12)


def test_eigh_tridiagonal_float32_and_clusters(rng):
    # repeated diagonal and tiny couplings give clustered eigenvalues
    d = np.repeat(rng.standard_normal(3), 4).astype(np.float32)
    e = (rng.standard_normal(11) * 1e-3).astype(np.float32)
    got = tl.eigh_tridiagonal(jnp.asarray(d), jnp.asarray(e), eigvals_only=True)
    assert got.dtype == jnp.float32
    want = sl.eigh_tridiagonal(d.astype(np.float64), e.astype(np.float64), eigvals_only=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_eigh_tridiagonal_errors():
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        tl.eigh_tridiagonal(jnp.ones(3), jnp.ones(2))
    with pytest.raises(NotImplementedError, match="select='v'"):
        tl.eigh_tridiagonal(jnp.ones(3), jnp.ones(2), eigvals_only=True, select="v",
                            select_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="n - 1"):
        tl.eigh_tridiagonal(jnp.ones(3), jnp.ones(3), eigvals_only=True)


def test_grads(x64, rng):
    a = rng.standard_normal((3, 3))
    w = rng.standard_normal((3, 3))
    f = lambda m: jnp.sum(tl.polar(m)[1] * w)
    ref = lambda m: np.sum(sl.polar(m)[1] * w)
    g = np.asarray(jax.grad(f)(jnp.asarray(a)))
    eps = 1e-6
    fd = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        da = np.zeros_like(a)
        da[i] = eps
        fd[i] = (ref(a + da) - ref(a - da)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
    c = rng.standard_normal(4)
    gt = jax.grad(lambda c: jnp.sum(tl.toeplitz(c) * w[0, 0]))(jnp.asarray(c))
    np.testing.assert_allclose(np.asarray(gt), w[0, 0] * np.array([4, 6, 4, 2]), rtol=1e-12)


@pytest.mark.parametrize("name", ["funm", "sqrtm", "schur", "rsf2csf", "hessenberg"])
def test_schur_based_raise(name):
    args = {"funm": (jnp.eye(2), jnp.exp), "rsf2csf": (jnp.eye(2), jnp.eye(2))}.get(
        name, (jnp.eye(2),))
    with pytest.raises(NotImplementedError, match="complex"):
        getattr(tl, name)(*args)
