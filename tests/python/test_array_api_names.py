"""Everyday names JAX programs use that Tessera lacked: jnp.mgrid/ogrid/r_/c_/s_/index_exp and
the print options, the array API's jnp.linalg names, `device=` on the creation functions,
Array.astype(copy=, device=) and __array_namespace__, jnp.issubdtype on key dtypes — against
NumPy on fresh random inputs."""
import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import random


def test_grids_match_numpy(rng):
    a, b = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    np.testing.assert_array_equal(np.asarray(jnp.mgrid[0:a, 1:b + 1]), np.mgrid[0:a, 1:b + 1])
    np.testing.assert_array_equal(np.asarray(jnp.mgrid[0:b]), np.mgrid[0:b])
    for g, w in zip(jnp.ogrid[0:a, 0:b:2], np.ogrid[0:a, 0:b:2]):
        np.testing.assert_array_equal(np.asarray(g), w)
    n = int(rng.integers(2, 7))
    got = np.asarray(jnp.mgrid[-1:1:complex(0, n), 0:3])
    np.testing.assert_allclose(got, np.mgrid[-1:1:complex(0, n), 0:3], rtol=1e-6)
    assert jnp.mgrid[0:2, 0:2].dtype == jnp.int32
    assert jnp.mgrid[0:1:3j].dtype == jnp.float32  # 32-bit default, as JAX


def test_concatenators_match_numpy(rng):
    x = rng.standard_normal(3).astype(np.float32)
    y = rng.standard_normal((2, 3)).astype(np.float32)
    cases = [
        lambda m, a: m.r_[1:4, 7, a],
        lambda m, a: m.c_[a, a * 2],
        lambda m, a: m.r_["0,2,1", a, a],
        lambda m, a: m.r_["-1,2,0", a, a],
        lambda m, a: m.r_["1,3", a, a],
        lambda m, a: m.r_[-1:1:5j, a],
    ]
    for f in cases:
        np.testing.assert_allclose(np.asarray(f(jnp, jnp.asarray(x))), f(np, x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.r_["1", jnp.asarray(y), jnp.asarray(y)]),
                               np.r_["1", y, y])
    with pytest.raises(NotImplementedError, match="matrix"):
        jnp.r_["r", x]
    assert jnp.s_[1:2, ::3] == np.s_[1:2, ::3] and jnp.index_exp[2] == np.index_exp[2]
    with jnp.printoptions(precision=2):
        assert "0.12" in repr(jnp.asarray([0.123456]))
    assert jnp.get_printoptions()["precision"] == np.get_printoptions()["precision"]


def test_linalg_array_api_names(rng):
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    y = rng.standard_normal((2, 4, 3)).astype(np.float32)
    m = rng.standard_normal((2, 3, 3)).astype(np.float32)
    la = jnp.linalg
    np.testing.assert_allclose(np.asarray(la.vecdot(x, y)), np.sum(x * y, -1), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(la.vecdot(x, y, axis=1)), np.sum(x * y, 1), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(np.asarray(la.diagonal(m, offset=1)),
                                  np.diagonal(m, 1, -2, -1))
    np.testing.assert_allclose(np.asarray(la.trace(m)), np.trace(m, axis1=-2, axis2=-1),
                               rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(la.matrix_transpose(x)), np.swapaxes(x, -1, -2))
    np.testing.assert_allclose(np.asarray(la.outer(x[0, 0], y[0, 1])),
                               np.outer(x[0, 0], y[0, 1]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(la.cross(x, y)), np.cross(x, y), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(la.matmul(m, x.transpose(0, 2, 1))),
                               m @ x.transpose(0, 2, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(la.tensordot(x, y, axes=((1, 2), (1, 2)))),
                               np.tensordot(x, y, axes=((1, 2), (1, 2))), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="one-dimensional"):
        la.outer(x, y)
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        la.cross(x[..., :2], y[..., :2])
    with pytest.raises(ValueError, match="at least 2"):
        la.matrix_transpose(x[0, 0])


def test_device_keyword_and_array_api_methods(rng):
    dev = jax.devices()[-1]
    x = rng.standard_normal(4).astype(np.float32)
    made = [jnp.zeros(3, device=dev), jnp.ones((2,), jnp.int8, device=dev),
            jnp.full(2, 7.0, device=dev), jnp.empty(2, device=dev), jnp.arange(4, device=dev),
            jnp.linspace(0, 1, 5, device=dev), jnp.eye(2, device=dev),
            jnp.asarray(x, device=dev), jnp.array(x, device=dev),
            jnp.zeros_like(x, device=dev), jnp.ones_like(x, device=dev),
            jnp.full_like(x, 2.0, device=dev), jnp.astype(jnp.asarray(x), jnp.int32, device=dev)]
    for a in made:
        assert a.devices() == {dev}
    np.testing.assert_array_equal(np.asarray(made[7]), x)
    np.testing.assert_array_equal(np.asarray(made[4]), np.arange(4))
    t = jnp.asarray(x)
    assert t.astype(jnp.float16, copy=True).dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(t.astype(jnp.int32)), x.astype(np.int32))
    assert t.__array_namespace__() is jnp


def test_issubdtype_knows_key_dtypes():
    k = random.key(0)
    assert jnp.issubdtype(k.dtype, jax.dtypes.prng_key)
    assert jnp.issubdtype(k.dtype, jax.dtypes.extended)
    assert not jnp.issubdtype(k.dtype, jnp.floating)
    assert not jnp.issubdtype(jnp.float32, jax.dtypes.prng_key)
    assert jnp.issubdtype(jnp.float32, jnp.floating)


def test_fft_frequency_helpers_and_complex_transforms(rng):
    for n in [1, 2, 5, 8, int(rng.integers(3, 40))]:
        d = float(rng.uniform(0.1, 2.0))
        np.testing.assert_allclose(np.asarray(jnp.fft.fftfreq(n, d)), np.fft.fftfreq(n, d),
                                   rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.fft.rfftfreq(n, d)), np.fft.rfftfreq(n, d),
                                   rtol=1e-6)
    assert jnp.fft.fftfreq(4).dtype == jnp.float32
    x = rng.standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.fft.fftshift(x)), np.fft.fftshift(x))
    np.testing.assert_array_equal(np.asarray(jnp.fft.ifftshift(x, axes=1)),
                                  np.fft.ifftshift(x, axes=1))
    np.testing.assert_array_equal(np.asarray(jnp.fft.ifftshift(jnp.fft.fftshift(x))), x)
    for name in ["fft", "rfft", "irfft", "fftn", "hfft"]:
        with pytest.raises(NotImplementedError, match="complex"):
            getattr(jnp.fft, name)(x)


def test_traced_shape_is_a_clear_error():
    assert jnp.zeros(jnp.int32(3)).shape == (3,)  # a concrete 0-d array is one size
    with pytest.raises(jax.errors.TracerIntegerConversionError, match=r"\[zeros\] shape"):
        jax.jit(lambda n: jnp.zeros(n))(3)
    with pytest.raises(jax.errors.TracerIntegerConversionError, match="traced value"):
        jax.jit(lambda s: jnp.ones(s))(jnp.array([2, 3]))


def test_integer_division_by_zero_is_jaxs(rng):
    """XLA's integer x / 0 is -1 (all ones unsigned) and x % 0 is x; on them JAX's floor_divide
    gives -2 for x != 0 (the sign test sees sign(0) = 0) and -1 for 0, while remainder and fmod
    divide by 1 instead of 0 (so 0)."""
    x = rng.integers(-50, 50, 20).astype(np.int32)
    x[:2] = [0, 7]
    z = np.zeros_like(x)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x) // 0), np.where(x == 0, -1, -2))
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(x, z)), np.where(x == 0, -1, -2))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x) % 0), z)
    np.testing.assert_array_equal(np.asarray(jnp.fmod(x, z)), z)
    q, r = jnp.divmod(jnp.asarray(x), 0)
    np.testing.assert_array_equal(np.asarray(r), z)
    u = np.array([7, 0], np.uint8)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(u) // 0), [255, 255])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(u) % 0), [0, 0])
    # nonzero divisors still follow NumPy
    y = rng.integers(1, 9, 20).astype(np.int32) * rng.choice([-1, 1], 20).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x) // y), x // y)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x) % y), x % y)
    np.testing.assert_array_equal(np.asarray(jnp.fmod(x, y)), np.fmod(x, y))


def test_platform_dependent_and_shards(rng):
    x = jnp.asarray(rng.standard_normal(3).astype(np.float32))
    got = jax.lax.platform_dependent(x, cpu=lambda v: v * 2, default=lambda v: v)
    np.testing.assert_array_equal(np.asarray(got), 2 * np.asarray(x))
    got = jax.jit(lambda v: jax.lax.platform_dependent(v, tpu=lambda u: u, default=jnp.sin))(x)
    np.testing.assert_allclose(np.asarray(got), np.sin(np.asarray(x)), rtol=1e-6)
    with pytest.raises(ValueError, match="Unsupported platform"):
        jax.lax.platform_dependent(x, gameboy=lambda v: v)
    with pytest.raises(NotImplementedError, match="no branch"):
        jax.lax.platform_dependent(x, cuda=lambda v: v)
    shards = x.addressable_shards
    assert len(shards) == 1 and shards[0].device == x.device and shards[0].replica_id == 0
    assert shards[0].index == (slice(None),)
    np.testing.assert_array_equal(np.asarray(shards[0].data), np.asarray(x))
    assert len(x.global_shards) == 1
