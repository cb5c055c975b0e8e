"""jax.Array's attributes and methods for real arrays, against NumPy on random values, and the
complex-part functions of jnp (Tessera has no complex dtypes: every array is real)."""

import os
import warnings

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp

SEED = int.from_bytes(os.urandom(4), "little")


def rng():
    print(f"seed {SEED}")
    return np.random.default_rng(SEED)


DTYPES = [np.float32, np.int32, np.uint8, np.int16, np.bool_, np.float16]


@pytest.mark.parametrize("dt", DTYPES)
def test_sizes_and_complex_parts_match_numpy(dt):
    r = rng()
    a = (r.standard_normal((3, 4)) * 10).astype(dt)
    x = jnp.asarray(a)
    assert x.itemsize == a.itemsize and x.nbytes == a.nbytes
    assert x.on_device_size_in_bytes() == a.nbytes
    for got, want in [(x.real, a.real), (x.imag, a.imag), (x.conj(), a.conj()),
                      (x.conjugate(), a.conjugate()), (jnp.real(x), np.real(a)),
                      (jnp.imag(x), np.imag(a)), (jnp.conj(x), np.conj(a)),
                      (jnp.isreal(x), np.isreal(a)), (jnp.iscomplex(x), np.iscomplex(a))]:
        # JAX keeps the dtype (NumPy's conj of bool gives int8); values are NumPy's.
        assert np.asarray(got).dtype == (np.bool_ if want.dtype == np.bool_ else a.dtype) or \
            (want.dtype == np.int8 and a.dtype == np.bool_ and np.asarray(got).dtype == np.bool_)
        np.testing.assert_array_equal(np.asarray(got), want)
    assert jnp.isrealobj(x) and not jnp.iscomplexobj(x)
    assert jnp.iscomplexobj(np.ones(2, np.complex64)) and jnp.iscomplexobj(1j)


def test_single_device_attributes():
    x = jnp.asarray(rng().standard_normal(5).astype(np.float32))
    assert x.is_fully_addressable and x.is_fully_replicated
    assert x.addressable_data(0) is x
    with pytest.raises(IndexError, match="one addressable shard"):
        x.addressable_data(1)
    assert x.copy_to_host_async() is None
    y = x.to_device(jax.devices()[0])
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert y.committed
    assert complex(jnp.asarray(2.5)) == 2.5 + 0j


def test_view_reinterprets_bytes_like_numpy():
    a = rng().standard_normal(6).astype(np.float32)
    x = jnp.asarray(a)
    np.testing.assert_array_equal(np.asarray(x.view(jnp.int32)), a.view(np.int32))
    np.testing.assert_array_equal(np.asarray(x.view(np.uint32)), a.view(np.uint32))
    assert x.view() is x


def test_complex_input_is_refused_with_the_missing_dtype_named():
    with pytest.raises(TypeError, match="no complex64 / complex128 dtypes"):
        jnp.real(1j)


def test_explicit_64_bit_dtype_warns_as_jax():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x = jnp.array([1.5], dtype=jnp.float64)
        jnp.zeros(2, dtype=np.int64)
        jnp.ones(2, dtype="float32")  # no warning: available
        jnp.asarray([1], dtype=int)  # Python scalar types: no warning (default dtype)
    msgs = [str(m.message) for m in w]
    assert x.dtype == jnp.float32
    assert msgs == [
        "Explicitly requested dtype float64 requested in array is not available, and will be "
        "truncated to dtype float32. To enable more dtypes, set the jax_enable_x64 "
        "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
        "https://github.com/jax-ml/jax#current-gotchas for more.",
        "Explicitly requested dtype int64 requested in zeros is not available, and will be "
        "truncated to dtype int32. To enable more dtypes, set the jax_enable_x64 "
        "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
        "https://github.com/jax-ml/jax#current-gotchas for more."]
    assert all(m.category is UserWarning for m in w)
    with jax.experimental.enable_x64():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert jnp.array([1.5], dtype=jnp.float64).dtype == jnp.float64


def test_numpy_dtype_objects_warn_too():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x = jnp.zeros(3, np.dtype("float64"))
        y = jnp.asarray([1, 2], dtype=np.int64)
        jnp.ones(2, float)  # Python's float is the default dtype: no warning
    assert x.dtype == jnp.float32 and y.dtype == jnp.int32
    msgs = [str(m.message) for m in w]
    assert len(msgs) == 2
    assert msgs[0].startswith("Explicitly requested dtype float64 requested in zeros ")
    assert msgs[1].startswith("Explicitly requested dtype int64 requested in asarray ")


def test_errors_speak_python():
    with pytest.raises(ValueError, match=r"use jnp\.any or all$"):
        bool(jnp.ones(3))
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda v: v, in_axes=3)(jnp.ones(2))
    assert "nullopt" not in str(e.value)
    with pytest.raises(TypeError) as e:
        jax.lax.tanh(jnp.arange(3))
    assert "tessera::" not in str(e.value) and "::" not in str(e.value)
    assert jnp.ones(3)[jnp.ones(3) > 0].shape == (3,)  # a concrete mask indexes
    with pytest.raises(IndexError, match="boolean indices must be concrete") as e:
        jax.jit(lambda a: a[a > 0])(jnp.ones(3))
    assert "::" not in str(e.value)
