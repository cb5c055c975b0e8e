"""jax.random.multivariate_normal and jax.scipy.stats.multivariate_normal against NumPy/SciPy:
sample moments with fixed keys and bounds at the p < 1e-6 level, densities against
scipy.stats.multivariate_normal on fresh random inputs, jit/vmap/grad, JAX's errors."""
import numpy as np
import pytest
import scipy.stats as ss

import tessera as jax
import tessera.numpy as jnp
from tessera.scipy import stats as jstats


def spd(rng, n, batch=()):
    a = rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) / n + 0.5 * np.eye(n)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_sample_mean_and_covariance(method):
    rng = np.random.default_rng(0)
    n, m = 3, 1 << 16
    mean = rng.normal(size=n).astype(np.float32)
    cov = spd(rng, n).astype(np.float32)
    x = np.asarray(jax.random.multivariate_normal(jax.random.key(1), mean, cov, (m,),
                                                  method=method), np.float64)
    assert x.shape == (m, n) and x.dtype == np.float64
    sd = np.sqrt(np.diag(cov))
    # Mean within 6 standard errors; covariance entries within 6 of their standard errors
    # (var of a sample covariance of normals: (s_ij^2 + s_ii s_jj) / m).
    assert np.all(np.abs(x.mean(0) - mean) < 6 * sd / np.sqrt(m))
    c = np.cov(x.T)
    se = np.sqrt((cov.astype(np.float64) ** 2 + np.outer(np.diag(cov), np.diag(cov))) / m)
    assert np.all(np.abs(c - cov) < 6 * se)


def test_shapes_batching_dtype_and_errors():
    rng = np.random.default_rng(2)
    key = jax.random.key(3)
    mean = jnp.asarray(rng.normal(size=(4, 2)).astype(np.float32))
    cov = jnp.asarray(spd(rng, 2).astype(np.float32))
    assert jax.random.multivariate_normal(key, mean, cov).shape == (4, 2)
    assert jax.random.multivariate_normal(key, mean, cov, (5, 4)).shape == (5, 4, 2)
    assert jax.random.multivariate_normal(key, mean, cov).dtype == jnp.float32
    f = jax.jit(lambda k, m, c: jax.random.multivariate_normal(k, m, c))
    np.testing.assert_allclose(np.asarray(f(key, mean, cov)),
                               np.asarray(jax.random.multivariate_normal(key, mean, cov)),
                               rtol=1e-6, atol=1e-6)
    keys = jax.random.split(key, 3)
    v = jax.vmap(lambda k: jax.random.multivariate_normal(k, mean[0], cov))(keys)
    assert v.shape == (3, 2)
    with pytest.raises(ValueError, match="mean.ndim >= 1"):
        jax.random.multivariate_normal(key, 1.0, cov)
    with pytest.raises(ValueError, match=r"cov.shape == \(..., n, n\)"):
        jax.random.multivariate_normal(key, mean, jnp.ones((3, 3)))
    with pytest.raises(ValueError, match="method must be one of"):
        jax.random.multivariate_normal(key, mean, cov, method="qr")
    with pytest.raises(ValueError, match="broadcast"):
        jax.random.multivariate_normal(key, mean, cov, (3,))


def test_logpdf_matches_scipy_and_grad():
    rng = np.random.default_rng(4)
    for n in (1, 2, 5):
        mean = rng.normal(size=n)
        cov = spd(rng, n)
        x = rng.normal(size=(7, n))
        got = np.asarray(jstats.multivariate_normal.logpdf(jnp.asarray(x, jnp.float32),
                                                           jnp.asarray(mean, jnp.float32),
                                                           jnp.asarray(cov, jnp.float32)))
        want = ss.multivariate_normal(mean, cov).logpdf(x)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(
            np.asarray(jstats.multivariate_normal.pdf(x.astype(np.float32),
                                                      mean.astype(np.float32),
                                                      cov.astype(np.float32))),
            ss.multivariate_normal(mean, cov).pdf(x), rtol=1e-4, atol=1e-7)
    # Scalar mean (univariate) and scalar cov (isotropic).
    np.testing.assert_allclose(
        np.asarray(jstats.multivariate_normal.logpdf(jnp.float32(0.3), 0.1, 2.0)),
        ss.norm(0.1, np.sqrt(2.0)).logpdf(0.3), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(jstats.multivariate_normal.logpdf(jnp.asarray([0.3, -1.0]), jnp.zeros(2),
                                                     1.5)),
        ss.multivariate_normal(np.zeros(2), 1.5 * np.eye(2)).logpdf([0.3, -1.0]), rtol=1e-6)
    # The gradient in x is -cov^{-1} (x - mean).
    mean = rng.normal(size=3).astype(np.float32)
    cov = spd(rng, 3).astype(np.float32)
    x = rng.normal(size=3).astype(np.float32)
    g = jax.grad(lambda v: jstats.multivariate_normal.logpdf(v, mean, cov))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), -np.linalg.solve(cov, x - mean), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match="incompatible shapes"):
        jstats.multivariate_normal.logpdf(jnp.zeros(3), jnp.zeros(3), jnp.eye(2))
