"""Zero-copy interop of tessera Arrays with NumPy (buffer protocol, __array__, asarray aliasing),
memoryview, DLPack (NumPy and torch, both directions) and JAX's weak typing of Python vs NumPy
scalars. Fresh random inputs; the seed (TESSERA_TEST_SEED or the clock) is printed.

Conversions that once crashed the interpreter (a C++ exception thrown through pybind11 2.10's
getbuffer) run in a fresh subprocess, so that a regression fails one test instead of the suite.
"""
import gc
import os
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest
import torch
import torch.utils.dlpack

import tessera
import tessera.numpy as jnp

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))
print(f"test_interop: TESSERA_TEST_SEED={SEED}")

from_dlpack = tessera._tessera.from_dlpack


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


def ptr(a):
    """The data pointer of a NumPy array / torch tensor / tessera Array."""
    if isinstance(a, tessera.Array):
        return a._unsafe_buffer_pointer()
    if isinstance(a, torch.Tensor):
        return a.data_ptr()
    return a.__array_interface__["data"][0]


DTYPES = ["float32", "float16", "int32", "int8", "uint8", "int16", "uint32", "bool"]


def rand(rng, shape, dt):
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt.startswith(("int", "uint")):
        return rng.integers(0, 100, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


# ---------------------------------------------------------------------------------------------
# NumPy views of Arrays
@pytest.mark.parametrize("dt", DTYPES)
def test_np_asarray_is_a_read_only_view(rng, dt):
    v = rand(rng, (3, 5), dt)
    x = jnp.asarray(v)
    a = np.asarray(x)
    assert a.dtype == np.dtype(dt) and a.shape == (3, 5)
    np.testing.assert_array_equal(a, v)
    assert ptr(a) == ptr(x)  # zero copy
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = a[1, 1]
    with pytest.raises(ValueError):
        a.flags.writeable = True  # cannot be made writeable either
    b = x.__array__()
    assert ptr(b) == ptr(x) and not b.flags.writeable
    c = np.array(x)  # a copy, writeable
    assert ptr(c) != ptr(x) and c.flags.writeable
    np.testing.assert_array_equal(c, v)


def test_view_outlives_the_array(rng):
    v = rng.standard_normal(1000).astype(np.float32)
    x = jnp.asarray(v) * 2.0
    a = np.asarray(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(a, v * np.float32(2))  # the view keeps the buffer alive


def test_memoryview(rng):
    v = rng.standard_normal((2, 3)).astype(np.float32)
    x = jnp.asarray(v)
    m = memoryview(x)
    assert m.readonly and m.shape == (2, 3) and m.format == "f" and m.itemsize == 4
    assert m.strides == (12, 4) and m.nbytes == 24
    assert m.tolist() == v.tolist()
    with pytest.raises(TypeError):
        m[0, 0] = 1.0
    np.testing.assert_array_equal(np.frombuffer(m, np.float32).reshape(2, 3), v)
    mb = memoryview(jnp.asarray([True, False]))
    assert mb.format == "?" and mb.tolist() == [True, False]
    mi = memoryview(jnp.asarray(np.arange(4, dtype=np.int8)))
    assert mi.tolist() == [0, 1, 2, 3]


def test_numpy_functions_accept_arrays(rng):
    v = rng.standard_normal((4, 3)).astype(np.float32)
    x = jnp.asarray(v)
    s = np.sin(x)
    assert isinstance(s, np.ndarray)
    np.testing.assert_array_equal(s, np.sin(v))
    np.testing.assert_array_equal(np.concatenate([x, x]), np.concatenate([v, v]))
    np.testing.assert_array_equal(np.add(x, 1.0), v + np.float32(1.0))


def test_numpy_reductions_accept_arrays(rng):
    v = rng.standard_normal((4, 3)).astype(np.float32)
    x = jnp.asarray(v)
    # float32 sums in another order differ by a few ulp of sum(|v|), not of the (possibly
    # cancelled) result: the bound scales with the magnitudes summed.
    bound = 8 * float(np.finfo(np.float32).eps) * float(np.abs(v).sum())
    assert float(np.sum(x)) == pytest.approx(float(v.sum()), rel=1e-5, abs=bound)
    assert float(np.mean(x)) == pytest.approx(float(v.mean()), rel=1e-5, abs=bound / v.size)
    assert float(np.max(x)) == float(v.max())


# ---------------------------------------------------------------------------------------------
# Arrays from NumPy
def test_asarray_aliases_read_only_numpy(rng):
    for dt in DTYPES:
        v = rand(rng, (4, 6), dt)
        v.flags.writeable = False
        # An owner can be made writeable again (setflags(write=True)): copied (issue 12).
        x = jnp.asarray(v)
        assert ptr(x) != ptr(v), dt
        np.testing.assert_array_equal(np.asarray(x), v)
        # Memory that can never become writeable (bytes) is aliased: zero copy.
        b = np.frombuffer(v.tobytes(), dtype=v.dtype).reshape(v.shape)
        xb = jnp.asarray(b)
        assert ptr(xb) == ptr(b), dt
        np.testing.assert_array_equal(np.asarray(xb), v)
    v = np.frombuffer(rng.standard_normal(16).astype(np.float32).tobytes(), np.float32)
    x = jnp.asarray(v)
    assert ptr(x) == ptr(v)
    del v
    gc.collect()
    y = x + 1.0  # the Array keeps the NumPy memory alive
    assert y.shape == (16,)


def test_asarray_copies_writeable_numpy(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    keep = v.copy()
    x = jnp.asarray(v)
    assert ptr(x) != ptr(v)
    v[...] = 0.0  # later writes through NumPy do not change the Array
    np.testing.assert_array_equal(np.asarray(x), keep)
    y = jnp.array(keep)
    keep[0, 0] = 42.0
    assert float(np.asarray(y)[0, 0]) != 42.0


def test_asarray_converts_non_contiguous_and_64_bit(rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    for view in [base[:, ::2], base.T, base[1:4, 2:5], base[::-1]]:
        view.flags.writeable = False
        x = jnp.asarray(view)
        assert x.shape == view.shape and str(x.dtype) == "float32"
        np.testing.assert_array_equal(np.asarray(x), view)
    d = rng.standard_normal((3, 3))
    x = jnp.asarray(d)
    assert str(x.dtype) == "float32" and ptr(x) != ptr(d)
    np.testing.assert_array_equal(np.asarray(x), d.astype(np.float32))
    i = rng.integers(-5, 5, size=7)
    assert str(jnp.asarray(i).dtype) == "int32"
    np.testing.assert_array_equal(np.asarray(jnp.asarray(i)), i.astype(np.int32))
    # unaligned read-only memory (offset 1 byte): copied, values right
    raw = np.zeros(4 * 10 + 1, np.uint8)
    un = raw[1:].view(np.float32)
    un[:] = np.arange(10, dtype=np.float32)
    un.flags.writeable = False
    np.testing.assert_array_equal(np.asarray(jnp.asarray(un)), np.arange(10, dtype=np.float32))


def test_asarray_x64_keeps_float64_and_aliases(rng):
    old = tessera.config.jax_enable_x64
    tessera.config.update("jax_enable_x64", True)
    try:
        d = np.frombuffer(rng.standard_normal(5).tobytes(), np.float64)
        x = jnp.asarray(d)
        assert str(x.dtype) == "float64" and ptr(x) == ptr(d)
        np.testing.assert_array_equal(np.asarray(x), d)
    finally:
        tessera.config.update("jax_enable_x64", old)
    assert str(jnp.asarray(np.arange(3.0)).dtype) == "float32"


# ---------------------------------------------------------------------------------------------
# DLPack
@pytest.mark.parametrize("dt", ["float32", "float16", "int32", "int8", "uint8", "int64"])
def test_dlpack_numpy(rng, dt):
    v = rand(rng, (3, 4), dt)
    x = jnp.asarray(v)
    a = np.from_dlpack(x)
    assert ptr(a) == ptr(x)
    assert a.dtype == x.dtype
    np.testing.assert_array_equal(a, v.astype(str(x.dtype)))
    v2 = rand(rng, (2, 5), dt)
    y = from_dlpack(v2)  # NumPy exports DLPack too
    assert ptr(y) == ptr(v2) and y.shape == (2, 5)
    np.testing.assert_array_equal(np.asarray(y), v2)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.int32, torch.int8, torch.uint8,
                                torch.int64, torch.float16])
def test_dlpack_torch_both_ways(rng, dt):
    t = torch.from_numpy(rand(rng, (4, 3), "float32") * 10).to(dt)
    x = from_dlpack(t)
    assert ptr(x) == ptr(t)
    assert str(x.dtype) == str(t.dtype).replace("torch.", "")
    np.testing.assert_array_equal(np.asarray(x), t.numpy())
    x2 = from_dlpack(torch.utils.dlpack.to_dlpack(t))  # a raw capsule
    assert ptr(x2) == ptr(t)
    back = torch.from_dlpack(x)
    assert ptr(back) == ptr(x) and back.dtype == t.dtype and torch.equal(back, t)
    back2 = torch.utils.dlpack.from_dlpack(jnp.asarray(np.asarray(x)))
    assert torch.equal(back2, t)


def test_dlpack_lifetimes_and_strides(rng):
    v = rng.standard_normal((5, 4)).astype(np.float32)
    x = jnp.asarray(v) * 3.0
    t = torch.from_dlpack(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), v * np.float32(3))  # torch keeps the buffer alive
    src = torch.from_numpy(v.copy())
    y = from_dlpack(src)
    del src
    gc.collect()
    np.testing.assert_array_equal(np.asarray(y), v)  # the Array keeps torch's memory alive
    tt = torch.from_numpy(v.copy()).t()  # strided: copied into a dense Array
    z = from_dlpack(tt)
    assert z.shape == (4, 5)
    np.testing.assert_array_equal(np.asarray(z), v.T)
    r = from_dlpack(torch.from_numpy(v.copy())[:, 1])
    np.testing.assert_array_equal(np.asarray(r), v[:, 1])
    # the imported Array computes like any other
    np.testing.assert_allclose(np.asarray(jnp.sum(z, axis=1)), v.T.sum(axis=1), rtol=1e-5)


def test_dlpack_bfloat16_with_torch(rng):
    t = torch.from_numpy(rng.standard_normal(6).astype(np.float32)).to(torch.bfloat16)
    x = from_dlpack(t)
    assert x.dtype == jnp.bfloat16 and ptr(x) == ptr(t)
    np.testing.assert_array_equal(np.asarray(x.astype(jnp.float32)), t.float().numpy())
    back = torch.from_dlpack(x)
    assert back.dtype == torch.bfloat16 and torch.equal(back, t)


def test_dlpack_device():
    assert jnp.ones(2).__dlpack_device__() == (1, 0)  # kDLCPU


def test_jnp_from_dlpack():
    t = torch.arange(3, dtype=torch.float32)
    x = jnp.from_dlpack(t)
    assert ptr(x) == ptr(t) and x.tolist() == [0.0, 1.0, 2.0]
    v = np.arange(4, dtype=np.int32)
    assert ptr(jnp.from_dlpack(v)) == ptr(v)


# ---------------------------------------------------------------------------------------------
# bfloat16 and float0 to NumPy
def test_bfloat16_array_dunder_gives_float32_values(rng):
    v = rng.standard_normal(20).astype(np.float32)
    b = jnp.asarray(v, dtype=jnp.bfloat16)
    a = b.__array__()
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, np.asarray(b.astype(jnp.float32)))
    np.testing.assert_allclose(a, v, rtol=2**-8)
    assert b.__array__(np.float64).dtype == np.float64


_ISOLATED = {
    "bfloat16": r"""
import numpy as np, tessera.numpy as jnp
b = jnp.asarray(np.float32([1.5, -2.25]), dtype=jnp.bfloat16)
a = np.asarray(b)
assert a.dtype == np.float32 and a.tolist() == [1.5, -2.25]
try:
    memoryview(b)
except BufferError:
    pass
print("ok")
""",
    "float0": r"""
import numpy as np, tessera as jax, tessera.numpy as jnp
g = jax.grad(lambda x, n: jnp.sum(x) * n, argnums=1, allow_int=True)(jnp.ones(2), jnp.asarray(3))
a = np.asarray(g)
assert a.shape == ()
print("ok")
""",
    "tracer_in_vmap": r"""
import numpy as np, tessera as jax, tessera.numpy as jnp
def f(x):
    try:
        np.asarray(x)
    except TypeError:
        pass
    return x * 2
for _ in range(3):
    jax.vmap(f)(jnp.ones((2, 3)))
    out = [i * 2 for i in range(10)]  # ordinary Python keeps working afterwards
assert out[-1] == 18
print("ok")
""",
    "leaked_tracer": r"""
import numpy as np, tessera as jax, tessera.numpy as jnp
store = []
jax.vmap(lambda x: store.append(x) or x)(jnp.ones((2, 3)))
try:
    np.asarray(store[0])
except TypeError:
    pass
print("ok")
""",
}


def _run_isolated(script):
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("case", list(_ISOLATED))
def test_np_asarray_of_unbufferable_arrays_does_not_crash(case):
    r = _run_isolated(_ISOLATED[case])
    assert r.returncode == 0 and r.stdout.strip().endswith("ok") and not r.stderr.strip(), \
        (r.returncode, r.stdout[-1000:], r.stderr[-2000:])


# ---------------------------------------------------------------------------------------------
# Weak typing of Python scalars vs NumPy scalars (JAX's rules)
def test_python_scalars_weak_numpy_scalars_strong(rng):
    i8 = jnp.asarray(rng.integers(-5, 5, size=4).astype(np.int8))
    f16 = jnp.asarray(rng.standard_normal(4).astype(np.float16))
    bf = jnp.ones(4, jnp.bfloat16)
    cases = [
        (i8 + 1, "int8", False), (i8 + np.int32(1), "int32", False), (np.int32(1) + i8, "int32", False),
        (i8 + np.int8(1), "int8", False), (i8 * 2.5, "float32", True), (i8 + np.float32(1), "float32", False),
        (i8 + np.uint8(1), "int16", False), (f16 + 1.0, "float16", False), (f16 + np.float32(1), "float32", False),
        (f16 * 3, "float16", False), (bf + 1.0, "bfloat16", False), (bf + np.float16(1), "float32", False),
        (i8 + True, "int8", False), (jnp.asarray(2.0) + 1, "float32", True),
        (jnp.asarray(2) + np.int16(1), "int16", False), (jnp.asarray(2) * 1.5, "float32", True),
        (jnp.asarray(np.int16(3)), "int16", False), (jnp.asarray(3), "int32", True),
        (jnp.asarray(np.array([1, 2], np.uint8)) + np.int64(1), "int32", False),
    ]
    for k, (got, name, weak) in enumerate(cases):
        assert (str(got.dtype), got.weak_type) == (name, weak), (k, repr(got))
    np.testing.assert_array_equal(np.asarray(i8 + np.int32(7)),
                                  np.asarray(i8).astype(np.int32) + 7)
    assert str(jnp.result_type(jnp.int8, 1.0)) == "float32"
    assert str(jnp.result_type(np.int8, np.int32(1))) == "int32"
