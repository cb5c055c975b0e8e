"""jax.scipy.signal (convolve, correlate, convolve2d, correlate2d, detrend) and
jax.scipy.cluster.vq.vq against SciPy on fresh random inputs, under jit, with grads against
float64 finite differences."""
import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.signal as ss

import tessera as jax
import tessera.numpy as jnp
from tessera.scipy import signal as tsig
from tessera.scipy.cluster.vq import vq

SHAPES = [((9,), (4,)), ((4,), (9,)), ((6, 7), (3, 2)), ((2, 3), (5, 6)), ((4, 4), (4, 4)),
          ((5, 4, 6), (2, 3, 3)), ((2, 1, 3), (3, 4, 5)), ((1,), (1,))]


def _fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def _names(ndim):
    return ["convolve", "correlate"] + (["convolve2d", "correlate2d"] if ndim == 2 else [])


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_vs_scipy_float32_jit(rng, shapes, mode):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    for name in _names(a.ndim):
        want = getattr(ss, name)(a.astype(np.float64), b.astype(np.float64), mode=mode)
        got = jax.jit(lambda x, y: getattr(tsig, name)(x, y, mode=mode))(jnp.asarray(a),
                                                                          jnp.asarray(b))
        assert got.dtype == jnp.float32, name
        assert got.shape == want.shape, (name, got.shape, want.shape)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4, err_msg=name)


def test_integer_inputs_stay_integer(rng):
    a = rng.integers(-9, 9, size=(12,)).astype(np.int32)
    b = rng.integers(-9, 9, size=(5,)).astype(np.int32)
    for name in ("convolve", "correlate"):
        got = getattr(tsig, name)(jnp.asarray(a), jnp.asarray(b), method="direct")
        assert got.dtype == jnp.int32
        np.testing.assert_array_equal(np.asarray(got), getattr(ss, name)(a, b))


def test_slice_loop_path_matches(rng, monkeypatch):
    a = rng.standard_normal((6, 8))
    b = rng.standard_normal((3, 4))
    want = ss.convolve(a, b, mode="same")
    monkeypatch.setattr(tsig, "_GATHER_LIMIT", 0)
    got = tsig.convolve(jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32), mode="same")
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
def test_grad_vs_fd(x64, rng, name):
    a = rng.standard_normal((5, 4))
    b = rng.standard_normal((2, 3))
    w = rng.standard_normal(getattr(ss, name)(a, b, mode="same").shape)
    f = lambda x, y: jnp.sum(getattr(tsig, name)(x, y, mode="same") * w)
    ga, gb = jax.grad(f, argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    ref = lambda x, y: np.sum(getattr(ss, name)(x, y, mode="same") * w)
    np.testing.assert_allclose(np.asarray(ga), _fd_grad(lambda x: ref(x, b), a), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(np.asarray(gb), _fd_grad(lambda y: ref(a, y), b), rtol=1e-6,
                               atol=1e-8)


def test_convolution_errors():
    with pytest.raises(ValueError, match="mode must be one of"):
        tsig.convolve(jnp.ones(3), jnp.ones(2), mode="circular")
    with pytest.raises(ValueError, match="same number of dimensions"):
        tsig.convolve(jnp.ones(3), jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        tsig.correlate(jnp.ones((3, 2)), jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="zero-size arrays"):
        tsig.convolve(jnp.ones(3), jnp.ones(0))
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        tsig.convolve(jnp.ones(3), jnp.ones(2), method="overlap-add")
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        tsig.convolve2d(jnp.ones((3, 3)), jnp.ones((2, 2)), boundary="wrap")
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        tsig.correlate2d(jnp.ones((3, 3)), jnp.ones((2, 2)), fillvalue=1)
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
        tsig.convolve2d(jnp.ones(3), jnp.ones(2))


def test_fft_functions_raise():
    x = jnp.ones(16)
    for call in (lambda: tsig.fftconvolve(x, x), lambda: tsig.stft(x), lambda: tsig.welch(x),
                 lambda: tsig.csd(x, x), lambda: tsig.istft(x),
                 lambda: tsig.convolve(x, x, method="fft")):
        with pytest.raises(NotImplementedError, match="complex dtypes"):
            call()


@pytest.mark.parametrize("kind", ["linear", "constant"])
@pytest.mark.parametrize("axis", [0, -1])
def test_detrend_vs_scipy(rng, kind, axis):
    data = rng.standard_normal((17, 5)) + np.arange(17)[:, None] * rng.standard_normal(5)
    data = data if axis == 0 else data.T
    bp = [4, 11] if kind == "linear" else 0
    want = ss.detrend(data, axis=axis, type=kind, bp=bp)
    got = jax.jit(lambda d: tsig.detrend(d, axis=axis, type=kind, bp=bp))(
        jnp.asarray(data, jnp.float32))
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_detrend_x64_int_and_errors(x64, rng):
    data = rng.integers(-20, 20, size=(3, 10))
    got = tsig.detrend(jnp.asarray(data))
    assert got.dtype == jnp.float64
    np.testing.assert_allclose(np.asarray(got), ss.detrend(data), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="Trend type must be"):
        tsig.detrend(jnp.ones(4), type="quadratic")
    with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
        tsig.detrend(jnp.ones(4), bp=7)


# ---- cluster.vq ----

@pytest.mark.parametrize("ndim", [1, 2])
def test_vq_vs_scipy(rng, ndim):
    shape_o, shape_c = ((40, 3), (6, 3)) if ndim == 2 else ((40,), (6,))
    obs = rng.standard_normal(shape_o)
    book = rng.standard_normal(shape_c)
    want_code, want_dist = svq.vq(obs, book)
    code, dist = jax.jit(vq)(jnp.asarray(obs, jnp.float32), jnp.asarray(book, jnp.float32))
    np.testing.assert_array_equal(np.asarray(code), want_code)
    assert dist.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(dist), want_dist, rtol=1e-5, atol=1e-6)


def test_vq_errors():
    with pytest.raises(ValueError, match="same rank"):
        vq(jnp.ones((3, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="ndim different than 1 or 2"):
        vq(jnp.ones((3, 2, 1)), jnp.ones((2, 2, 1)))
