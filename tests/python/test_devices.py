"""Device and process queries as JAX's (jax.devices, device_count, local_device_count,
default_backend, process_index, process_count, device_get), with TESSERA_NUM_CPU_DEVICES."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp


def test_single_process_queries():
    devs = tessera.devices()
    assert len(devs) == tessera.device_count() == tessera.local_device_count() >= 1
    assert tessera.local_devices() == devs
    assert [d.id for d in devs] == list(range(len(devs)))
    assert all(d.platform == "cpu" for d in devs)
    assert tessera.default_backend() == "cpu"
    assert tessera.process_index() == 0 and tessera.process_count() == 1
    with pytest.raises(RuntimeError, match="Unknown backend gpu"):
        tessera.devices("gpu")
    with pytest.raises(ValueError, match="process_index 3"):
        tessera.local_devices(process_index=3)


def test_device_get_returns_numpy_leaves(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    tree = {"x": jnp.asarray(a), "y": [jnp.arange(5), 7, "s"], "z": None}
    got = tessera.device_get(tree)
    assert isinstance(got["x"], np.ndarray) and got["x"].dtype == np.float32
    np.testing.assert_array_equal(got["x"], a)
    assert isinstance(got["y"][0], np.ndarray) and got["y"][0].dtype == np.int32
    np.testing.assert_array_equal(got["y"][0], np.arange(5))
    assert got["y"][1:] == [7, "s"] and got["z"] is None


def _run_with_four_devices(code):
    env = dict(os.environ, TESSERA_NUM_CPU_DEVICES="4")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")


def test_num_cpu_devices_env():
    lines = _run_with_four_devices(
        "import tessera\n"
        "print(len(tessera.devices()), tessera.device_count(), tessera.local_device_count(),"
        " [repr(d) for d in tessera.devices()][-1])\n")
    assert lines[0] == "4 4 4 CpuDevice(id=3)"


# Placement as JAX's: device_put commits, uncommitted operands follow committed ones, outputs land
# on the inputs' device (per-device memory_stats), mixing committed devices is a ValueError naming
# both; grad and vmap keep the device. Values are checked against NumPy.
_PLACEMENT = r"""
import numpy as np
import tessera, tessera.numpy as jnp
from tessera.sharding import SingleDeviceSharding
d = tessera.devices()
rng = np.random.default_rng(%(seed)d)
a = rng.standard_normal((3, 4)).astype(np.float32)
b = rng.standard_normal(4).astype(np.float32)
x = tessera.device_put(a, d[2])
assert x.device == d[2] and x.committed and x.sharding == SingleDeviceSharding(d[2])
u = jnp.asarray(b)
assert u.device == d[0] and not u.committed
before = [dev.memory_stats()["bytes_in_use"] for dev in d]
y = jnp.tanh(x) @ jnp.ones((4, 5)) + u.sum()
after = [dev.memory_stats()["bytes_in_use"] for dev in d]
assert y.device == d[2] and y.committed, (y.device, y.committed)
# float32 sums: the error scales with the magnitudes summed, not the (cancelled) result.
bound = 8 * np.finfo(np.float32).eps * (np.abs(np.tanh(a)).sum(1, keepdims=True) + np.abs(b).sum())
np.testing.assert_allclose(np.asarray(y), np.tanh(a) @ np.ones((4, 5)) + b.sum(), rtol=1e-5,
                           atol=float(bound.max()))
assert after[0] == before[0], (before, after)
assert after[2] - before[2] >= y.nbytes, (before, after)
assert not u.committed and u.device == d[0]
g = tessera.grad(lambda v: jnp.sum(jnp.sin(v) * v))(x)
assert g.device == d[2] and g.committed
np.testing.assert_allclose(np.asarray(g), np.cos(a) * a + np.sin(a), rtol=1e-5, atol=1e-6)
v = tessera.vmap(lambda r: r @ r)(x)
assert v.device == d[2]
w = tessera.device_put(a, SingleDeviceSharding(d[1]))
assert w.device == d[1] and w.committed
try:
    x + w
    print("no error")
except ValueError as e:
    m = str(e)
    print("mixed", "cpu:2" in m and "cpu:1" in m and "device_put" in m and "add" in m)
z = tessera.device_put(x, d[1]) + w
assert z.device == d[1]
n = tessera.device_put(x)
assert n.device == d[2] and n.committed  # no device: an Array stays where it is
t = tessera.device_put({"p": a, "q": [b]}, d[3])
assert t["p"].device == d[3] and t["q"][0].device == d[3] and t["q"][0].committed
print("ok")
"""


def test_placement_follows_committed_inputs(rng):
    lines = _run_with_four_devices(_PLACEMENT % {"seed": int(rng.integers(2**31))})
    assert lines[:2] == ["mixed True", "ok"], lines


def test_array_device_devices_sharding(rng):
    from tessera.sharding import SingleDeviceSharding
    x = jnp.asarray(rng.standard_normal(3).astype(np.float32))
    d0 = tessera.devices()[0]
    y = x * 2 + 1
    for a in (x, y, jnp.zeros((2, 2))):
        assert a.device == d0
        assert a.devices() == {d0}
        assert a.sharding == SingleDeviceSharding(d0)
        assert a.sharding.device_set == {d0} and a.sharding.is_fully_replicated
    assert repr(x.sharding) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert len({x.sharding, y.sharding}) == 1

    def f(v):
        return v.device

    with pytest.raises(tessera.errors.ConcretizationTypeError, match="'device' of a traced"):
        tessera.vmap(f)(jnp.ones((2, 3)))
