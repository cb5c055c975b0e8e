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


def test_num_cpu_devices_env():
    code = ("import tessera\n"
            "print(len(tessera.devices()), tessera.device_count(), tessera.local_device_count(),"
            " [repr(d) for d in tessera.devices()][-1])\n"
            "try:\n"
            "    tessera.device_put(1.0, tessera.devices()[2])\n"
            "except NotImplementedError as e:\n"
            "    print('refused', 'CpuDevice(id=2)' in str(e))\n")
    env = dict(os.environ, TESSERA_NUM_CPU_DEVICES="4")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0] == "4 4 4 CpuDevice(id=3)"
    assert lines[1] == "refused True"


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
