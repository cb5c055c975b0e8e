"""Hardening of the Python layer (issue #12): no leak through Python rules, no aliasing of NumPy
memory that can become writeable, typed errors naming the op and value for careless inputs, and
strict TESSERA_* environment variables.

Leak checks count the device allocator's bytes_in_use (exact) and the process RSS (coarse);
workloads are small and loops short so the module runs in seconds.
"""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from tessera import lax


# ---------------------------------------------------------------------------------------------
# Leaks (defect class 5)
def _rss_mb():
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _in_use():
    return tessera.devices()[0].memory_stats()["bytes_in_use"]


def _growth(step, iters, warmup=10):
    """(bytes_in_use growth in bytes, RSS growth in MB) over `iters` calls after a warm-up."""
    for _ in range(warmup):
        step()
    gc.collect()
    b0, r0 = _in_use(), _rss_mb()
    for _ in range(iters):
        step()
    gc.collect()
    return _in_use() - b0, _rss_mb() - r0


@tessera.custom_vjp
def _sin_vjp(x):
    return jnp.sin(x)


def _sin_fwd(x):
    return jnp.sin(x), (jnp.cos(x),)  # a residual as large as the input


def _sin_bwd(res, g):
    (c,) = res
    return (g * c,)


_sin_vjp.defvjp(_sin_fwd, _sin_bwd)


@tessera.custom_jvp
def _sin_jvp(x):
    return jnp.sin(x)


@_sin_jvp.defjvp
def _sin_jvp_rule(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.sin(x), jnp.cos(x) * t


def test_grad_through_python_custom_vjp_does_not_leak():
    x = jnp.asarray(np.linspace(0.0, 1.0, 262144, dtype=np.float32))  # 1 MiB
    g = tessera.grad(lambda v: _sin_vjp(v).sum())
    np.testing.assert_allclose(np.asarray(g(x)), np.cos(np.asarray(x)), rtol=1e-6)
    leaked, rss = _growth(lambda: g(x), 1000)
    print(f"custom_vjp grad x1000: bytes_in_use +{leaked} B, RSS +{rss:.1f} MB")
    assert leaked < 2 * 2**20, leaked  # a leak of the residual would be ~1000 MiB
    assert rss < 50, rss


def test_transformation_workloads_do_not_leak():
    x = jnp.asarray(np.linspace(-1.0, 1.0, 16384, dtype=np.float32))  # 64 KiB
    xs = x.reshape(16, 1024)

    def loss(v):
        return jnp.sum(jnp.sin(v) * v)

    def scan_loss(v):
        def body(c, row):
            return c + jnp.sum(row * v[:1024]), row * 2.0
        c, ys = lax.scan(body, 0.0, xs)
        return c + ys.sum()

    def cond_loss(v):
        return lax.cond(v[0] < 0, lambda u: jnp.sum(u * u), lambda u: jnp.sum(u), v)

    workloads = {
        "grad": lambda: tessera.grad(loss)(x),
        "vjp": lambda: tessera.vjp(jnp.sin, x)[1](x),
        "jvp": lambda: tessera.jvp(jnp.sin, (x,), (x,)),
        "vmap": lambda: tessera.vmap(lambda r: jnp.sum(r * r))(xs),
        "custom_jvp": lambda: tessera.grad(lambda v: _sin_jvp(v).sum())(x),
        "custom_vjp": lambda: tessera.grad(lambda v: _sin_vjp(v).sum())(x),
        "custom_vjp_vmap": lambda: tessera.vmap(tessera.grad(lambda r: _sin_vjp(r).sum()))(xs),
        "scan": lambda: tessera.grad(scan_loss)(x),
        "cond": lambda: tessera.grad(cond_loss)(x),
        "checkpoint": lambda: tessera.grad(tessera.checkpoint(loss))(x),
        "make_jaxpr": lambda: tessera.make_jaxpr(loss)(x),
    }
    r0 = _rss_mb()
    for name, step in workloads.items():
        leaked, _ = _growth(step, 200, warmup=5)
        print(f"{name} x200: bytes_in_use +{leaked} B")
        assert leaked < 2**20, (name, leaked)  # one 64 KiB array per call would be 12.5 MiB
    assert _rss_mb() - r0 < 100


# ---------------------------------------------------------------------------------------------
# Aliasing of NumPy memory (defect class 7)
def _ptr(a):
    if isinstance(a, np.ndarray):
        return a.__array_interface__["data"][0]
    return a._unsafe_buffer_pointer()


def _attack(arr):
    """jnp.asarray(arr), then make arr writeable (when NumPy allows) and write through it."""
    want = np.array(arr, copy=True)
    x = jnp.asarray(arr)
    try:
        arr.setflags(write=True)
    except ValueError:
        return x, want  # NumPy refuses: the memory can never be written through arr
    arr[...] = 7
    return x, want


def test_read_only_numpy_that_can_become_writeable_is_copied(rng):
    owner = rng.standard_normal((4, 5)).astype(np.float32)
    owner.setflags(write=False)
    base = rng.standard_normal((8, 5)).astype(np.float32)
    view = base[2:6]
    view.setflags(write=False)
    base2 = rng.standard_normal((4, 5)).astype(np.float32)
    view2 = base2.view()
    view2.setflags(write=False)
    vv = view2.view()  # a read-only view of a read-only view of a writeable owner
    vv.setflags(write=False)
    ro_base = rng.standard_normal((4, 5)).astype(np.float32)
    ro_base.setflags(write=False)
    v_of_ro = ro_base.view()  # the owner is read-only, but an owner can be made writeable
    ba = bytearray(np.arange(20, dtype=np.float32).tobytes())
    from_ba = np.frombuffer(memoryview(ba).toreadonly(), np.float32)  # bytearray stays mutable
    for name, arr in [("owner", owner), ("view", view), ("view of view", vv),
                      ("view of read-only owner", v_of_ro), ("read-only bytearray", from_ba)]:
        x, want = _attack(arr)
        if name == "view of read-only owner":
            ro_base.setflags(write=True)
            ro_base[...] = 7
        if name == "read-only bytearray":
            ba[:8] = b"\xff" * 8
        np.testing.assert_array_equal(np.asarray(x), want, err_msg=name)


def test_immutable_memory_stays_zero_copy(rng):
    v = rng.standard_normal(1024).astype(np.float32)
    t = jnp.asarray(v)
    n = np.asarray(t)  # read-only view of the Array's buffer
    assert np.shares_memory(n, np.asarray(t)) and _ptr(n) == _ptr(t)
    with pytest.raises(ValueError):
        n.setflags(write=True)
    t2 = jnp.asarray(n)  # round trip: the same buffer
    assert _ptr(t2) == _ptr(t)
    t3 = jnp.asarray(np.asarray(t)[256:512])  # a view of the buffer: aliased too
    assert _ptr(t3) == _ptr(t) + 256 * 4
    t4 = jnp.asarray(np.frombuffer(memoryview(t), np.float32))  # buffer protocol round trip
    assert _ptr(t4) == _ptr(t)
    raw = np.arange(64, dtype=np.float32).tobytes()
    fb = np.frombuffer(raw, np.float32)
    if _ptr(fb) % 16 == 0:  # CPython's bytes payload is 16-byte aligned on 64-bit builds
        assert _ptr(jnp.asarray(fb)) == _ptr(fb)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(fb)), np.arange(64, dtype=np.float32))
    w = rng.standard_normal(256).astype(np.float32)  # DLPack: an explicit hand-over, aliased
    d = jnp.from_dlpack(w)
    assert _ptr(d) == _ptr(w)


# ---------------------------------------------------------------------------------------------
# Careless inputs raise typed errors naming the op and value (defect class 8)
def _raises(exc, fn, *fragments):
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    assert msg, f"{exc.__name__} without a message"
    assert "Unable to cast" not in msg and "incompatible function arguments" not in msg, msg
    for f in fragments:
        assert f in msg, (f, msg)
    return msg


BIG = 2**63


def test_int_overflow_in_shapes_indices_axes_and_sizes():
    x = jnp.ones((3, 4))
    cases = [
        ("zeros", lambda: jnp.zeros((BIG,))),
        ("ones", lambda: jnp.ones((2, -BIG - 1))),
        ("full", lambda: jnp.full((BIG,), 1.0)),
        ("getitem", lambda: x[BIG]),
        ("getitem", lambda: x[0, -BIG - 1]),
        ("getitem", lambda: x[BIG:]),
        ("getitem", lambda: x[:, ::BIG]),
        ("sum", lambda: jnp.sum(x, axis=BIG)),
        ("iota", lambda: lax.iota(jnp.int32, 2**64)),
        ("reshape", lambda: jnp.reshape(x, (BIG,))),
        ("reshape", lambda: lax.reshape(x, (BIG,))),
        ("slice", lambda: lax.slice(x, (0, 0), (BIG, 4))),
        ("pad", lambda: lax.pad(x, 0.0, [(0, 0, BIG), (0, 0, 0)])),
        ("pad", lambda: jnp.pad(x, ((BIG, 0), (0, 0)))),
        ("broadcast_to", lambda: jnp.broadcast_to(x, (BIG, 3, 4))),
        ("expand_dims", lambda: jnp.expand_dims(x, BIG)),
        ("transpose", lambda: jnp.transpose(x, (0, BIG))),
        ("arange", lambda: jnp.arange(BIG)),
        ("eye", lambda: jnp.eye(BIG)),
        ("concatenate", lambda: jnp.concatenate([x, x], axis=BIG)),
        ("stack", lambda: jnp.stack([x, x], axis=BIG)),
        ("cumsum", lambda: jnp.cumsum(x, axis=BIG)),
        ("argmax", lambda: jnp.argmax(x, axis=BIG)),
        ("roll", lambda: jnp.roll(x, BIG)),
        ("repeat", lambda: jnp.repeat(x, BIG)),
        ("tile", lambda: jnp.tile(x, (BIG,))),
        ("dynamic_slice", lambda: lax.dynamic_slice(x, (0, 0), (BIG, 1))),
        ("squeeze", lambda: lax.squeeze(x, (BIG,))),
        ("rev", lambda: lax.rev(x, (BIG,))),
    ]
    for op, fn in cases:
        _raises(OverflowError, fn, f"[{op}]", "2**63")


def test_huge_and_negative_shapes_raise_value_error():
    _raises(ValueError, lambda: jnp.zeros((2**40, 2**40)), "zeros")
    _raises(ValueError, lambda: jnp.zeros((2**62, 4)), "zeros")
    _raises(ValueError, lambda: jnp.ones((-1, 3)), "-1")
    _raises(ValueError, lambda: lax.iota(jnp.int32, 2**62), "iota")
    _raises(TypeError, lambda: lax.iota(jnp.int32, -1), "iota")  # JAX's TypeError
    _raises(ValueError, lambda: lax.pad(jnp.ones(3), 0.0, [(0, 0, 2**61)]), "pad")
    _raises(ValueError, lambda: jnp.broadcast_to(jnp.ones(()), (2**31, 2**31, 4)))
    _raises(ValueError, lambda: jnp.eye(2**32), "eye")  # a wrapped n * m crashed here
    _raises(ValueError, lambda: jnp.eye(2**40), "eye")
    _raises(ValueError, lambda: jnp.tri(2**32), "tri")


def test_non_integers_where_integers_are_required():
    x = jnp.ones((3, 4))
    _raises(TypeError, lambda: jnp.zeros(3.5), "[zeros]", "3.5")
    _raises(TypeError, lambda: jnp.zeros(None), "[zeros]")
    _raises(TypeError, lambda: jnp.zeros("abc"), "[zeros]")
    _raises(TypeError, lambda: jnp.zeros((2, "3")), "[zeros]", "'3'")
    _raises(TypeError, lambda: lax.iota(jnp.int32, 2.0), "[iota]")
    _raises(TypeError, lambda: jnp.sum(x, axis=1.0))
    _raises(TypeError, lambda: lax.slice(x, (0, 0), (1.5, 2)), "[slice]")


def test_einsum_malformed_subscripts_have_messages():
    a, b = jnp.ones((2, 3)), jnp.ones((3, 4))
    _raises(ValueError, lambda: jnp.einsum("i\u00e9,jk->ik", a, b), "einsum", "non-ASCII")
    _raises(ValueError, lambda: jnp.einsum("\u00e9", jnp.ones(3)), "einsum")
    for spec, ops in [("ij,jk->ik", (a,)), ("ij,jk", (a, b, b)), ("ij,jk->iz", (a, b)),
                      ("ijk,jk->ik", (a, b)), ("i1,jk->ik", (a, b)), ("ij,jk->->ik", (a, b)),
                      ("ij,jk->ii", (a, b)), ("", (a,))]:
        with pytest.raises((ValueError, TypeError)) as info:
            jnp.einsum(spec, *ops)
        assert str(info.value), spec


def test_careless_arguments_raise_typed_errors():
    x = jnp.ones(3)
    _raises(TypeError, lambda: jnp.sin(None))
    _raises(TypeError, lambda: jnp.arange(None), "[arange]")
    _raises(TypeError, lambda: jnp.arange(0.5, "x"), "[arange]")
    _raises(TypeError, lambda: jnp.add(x, "abc"))
    _raises(TypeError, lambda: jnp.zeros(3, dtype="not_a_dtype"))
    _raises(TypeError, lambda: jnp.asarray([1.0, None]))
    _raises(TypeError, lambda: tessera.grad(lambda v: v)(x))  # non-scalar output
    _raises(TypeError, lambda: tessera.grad(lambda v: jnp.sum(v))("abc"))
    with pytest.raises((TypeError, ValueError)) as info:
        tessera.vmap(lambda a, b: a + b, in_axes=(0,))(x, x)  # in_axes structure mismatch
    assert str(info.value)
    with pytest.raises((TypeError, ValueError)) as info:
        tessera.tree_util.tree_unflatten(tessera.tree_util.tree_structure((1, 2)), [1])
    assert str(info.value)


# ---------------------------------------------------------------------------------------------
# TESSERA_* environment variables
def _run(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          timeout=120)


_PATH_SETUP = f"import sys; sys.path[:0] = {[p for p in sys.path if p]!r}\n"


def test_memory_limit_env_units_and_garbage():
    code = _PATH_SETUP + ("import tessera, tessera.numpy as jnp\n"
                          "print(tessera.devices()[0].memory_stats()['bytes_limit'])\n")
    for value, want in [("4G", 4 * 2**30), ("512MiB", 512 * 2**20), ("1.5g", 3 * 2**29),
                        ("1000", 1000), ("0", 0)]:
        r = _run(code, TESSERA_CPU_MEMORY_LIMIT=value)
        assert r.returncode == 0, r.stderr
        assert int(r.stdout.split()[-1]) == want, (value, r.stdout)
    r = _run(_PATH_SETUP + "import tessera.numpy as jnp\nprint(jnp.zeros(3) + 1)\n",
             TESSERA_CPU_MEMORY_LIMIT="1K")
    assert r.returncode == 0, r.stderr
    r = _run(_PATH_SETUP + "import tessera.numpy as jnp\njnp.zeros(1024) + 1\n",
             TESSERA_CPU_MEMORY_LIMIT="1K")
    assert r.returncode != 0 and "MemoryError" in r.stderr, r.stderr
    for bad in ["abc", "-1", "4X", "1e9"]:
        r = _run(_PATH_SETUP + "import tessera.numpy as jnp\nprint(jnp.zeros(3) + 1)\n",
                 TESSERA_CPU_MEMORY_LIMIT=bad)
        assert r.returncode != 0, (bad, r.stdout)
        assert "ValueError" in r.stderr or "ImportError" in r.stderr, r.stderr
        assert "TESSERA_CPU_MEMORY_LIMIT" in r.stderr and f"'{bad}'" in r.stderr, r.stderr


def test_thread_device_and_x64_env_garbage_is_loud():
    code = _PATH_SETUP + "import tessera.numpy as jnp\nprint(float(jnp.sum(jnp.ones(3))))\n"
    for var, bad in [("TESSERA_NUM_THREADS", "lots"), ("TESSERA_NUM_THREADS", "0"),
                     ("TESSERA_NUM_CPU_DEVICES", "two"), ("JAX_ENABLE_X64", "maybe")]:
        r = _run(code, **{var: bad})
        assert r.returncode != 0, (var, bad, r.stdout)
        assert var in r.stderr and f"'{bad}'" in r.stderr, r.stderr
    r = _run(code, TESSERA_NUM_THREADS="2", JAX_ENABLE_X64="true")
    assert r.returncode == 0 and r.stdout.strip() == "3.0", r.stderr
