"""jax.sharding's Mesh / PartitionSpec / NamedSharding, jax.make_mesh and jax.shard_map
(tessera/_src/mesh.py, shard_map.py) against NumPy. The tests adapt to the device count; the
last one runs the whole file again under TESSERA_NUM_CPU_DEVICES=8 (a 2 x 4 mesh)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax
from tessera.experimental.shard_map import shard_map as exp_shard_map
from tessera.sharding import Mesh, NamedSharding, PartitionSpec as P


def _mesh2():
    n = jax.device_count()
    a = 2 if n % 2 == 0 else 1
    return jax.make_mesh((a, n // a), ("x", "y"))


def test_mesh_and_named_sharding():
    n = jax.device_count()
    m = jax.make_mesh((n,), ("d",))
    assert m.shape == {"d": n} and m.axis_names == ("d",) and m.size == n
    assert list(m.devices.flat) == jax.devices()
    assert m == Mesh(np.array(jax.devices()), ("d",)) and hash(m) == hash(Mesh(jax.devices(), "d"))
    with pytest.raises(ValueError, match="must equal the product of mesh_shape"):
        jax.make_mesh((n + 1,), ("d",))
    with pytest.raises(ValueError, match="ndim of its first argument"):
        Mesh(np.array(jax.devices()), ("a", "b"))
    m2 = _mesh2()
    s = NamedSharding(m2, P("x", "y"))
    ax, ay = m2.shape["x"], m2.shape["y"]
    assert s.shard_shape((4 * ax, 6 * ay)) == (4, 6)
    assert s.num_devices == n and s.device_set == set(jax.devices())
    assert NamedSharding(m2, P()).is_fully_replicated
    assert s.is_fully_replicated == (n == 1)
    assert NamedSharding(m2, P("x", None)) == NamedSharding(m2, P("x"))
    with pytest.raises(ValueError, match="not in the mesh"):
        NamedSharding(m2, P("z"))
    with pytest.raises(ValueError, match="more than once"):
        NamedSharding(m2, P("x", "x"))
    if ay > 1:
        with pytest.raises(ValueError, match="not divisible"):
            s.shard_shape((4 * ax, 6 * ay + 1))
    x = np.arange(24.0 * n).reshape(4 * ax, 6 * ay)
    np.testing.assert_array_equal(np.asarray(jax.device_put(x, s)), x)
    assert repr(P("x", None, ("x", "y"))) == "PartitionSpec('x', None, ('x', 'y'))"


def test_sharded_matmul_with_psum_under_jit_and_grad(rng):
    m = _mesh2()
    ax, ay = m.shape["x"], m.shape["y"]
    a = rng.standard_normal((4 * ax, 3 * ay)).astype(np.float32)
    b = rng.standard_normal((3 * ay, 5)).astype(np.float32)

    def mm(ab, bb):
        assert ab.shape == (4, 3) and bb.shape == (3, 5)  # the per-shard blocks
        return lax.psum(ab @ bb, "y")

    f = jax.jit(jax.shard_map(mm, mesh=m, in_specs=(P("x", "y"), P("y", None)),
                              out_specs=P("x", None)))
    np.testing.assert_allclose(np.asarray(f(a, b)), a @ b, rtol=1e-5, atol=1e-5)
    ga = jax.grad(lambda a_: jnp.sum(f(a_, b) ** 2))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(ga), 2 * (a @ b) @ b.T, rtol=1e-4, atol=1e-4)


def test_collectives_see_the_mesh_axes(rng):
    m = _mesh2()
    ax, ay = m.shape["x"], m.shape["y"]
    x = rng.standard_normal((2 * ax, 3 * ay)).astype(np.float32)

    def body(blk):
        g = lax.all_gather(blk, "y", axis=1, tiled=True)  # every y-shard sees its row block
        i = lax.axis_index("y")
        shifted = lax.ppermute(blk, "y", [(j, (j + 1) % ay) for j in range(ay)])
        return g, i + jnp.zeros((1,), jnp.int32), shifted

    g, idx, sh = jax.shard_map(body, mesh=m, in_specs=P("x", "y"),
                               out_specs=(P("x", None), P(("x", "y")), P("x", "y")),
                               check_vma=False)(x)
    np.testing.assert_array_equal(np.asarray(g), x)  # gathered then replicated over y
    np.testing.assert_array_equal(np.asarray(idx), np.tile(np.arange(ay), ax))
    blocks = x.reshape(2 * ax, ay, 3)
    np.testing.assert_array_equal(np.asarray(sh), np.roll(blocks, 1, axis=1).reshape(x.shape))


def test_pytree_specs_current_mesh_and_experimental_form(rng):
    m = _mesh2()
    n = m.size
    x = rng.standard_normal((2 * n,)).astype(np.float32)
    y = rng.standard_normal((3,)).astype(np.float32)

    def body(d):
        return {"s": lax.psum(jnp.sum(d["a"]) + 0 * jnp.sum(d["b"]), ("x", "y")),
                "a2": d["a"] * 2}

    with m:
        out = jax.shard_map(body, in_specs=({"a": P(("x", "y")), "b": P()},),
                            out_specs={"s": P(), "a2": P(("x", "y"))})({"a": x, "b": y})
    np.testing.assert_allclose(float(out["s"]), x.sum(), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(out["a2"]), 2 * x)
    f = exp_shard_map(lambda v: v + 1, m, P(("y", "x")), P(("y", "x")))
    np.testing.assert_array_equal(np.asarray(f(x)), x + 1)


def test_errors_and_unchecked_replication():
    m = _mesh2()
    n = m.size
    with pytest.raises(ValueError, match="require replication"):
        jax.shard_map(lambda v: v * 2, mesh=m, in_specs=P(("x", "y")), out_specs=P())(
            jnp.arange(2.0 * n))
    # unchecked: the shard at index 0 of the left-out axes
    got = jax.shard_map(lambda v: v * 2, mesh=m, in_specs=P(("x", "y")), out_specs=P(),
                        check_vma=False)(jnp.arange(2.0 * n))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 2.0])
    if n > 1:
        with pytest.raises(ValueError, match="not evenly divisible"):
            jax.shard_map(lambda v: v, mesh=m, in_specs=P(("x", "y")),
                          out_specs=P(("x", "y")))(jnp.arange(2.0 * n + 1))
    with pytest.raises(ValueError, match="not in the mesh"):
        jax.shard_map(lambda v: v, mesh=m, in_specs=P("q"), out_specs=P())(jnp.ones(4))
    with pytest.raises(ValueError, match="no mesh"):
        jax.shard_map(lambda v: v, in_specs=P(), out_specs=P())(jnp.ones(4))
    with pytest.raises(ValueError, match="longer than the rank|of length"):
        jax.shard_map(lambda v: v, mesh=m, in_specs=P("x", "y"), out_specs=P())(jnp.ones(4))


@pytest.mark.skipif(jax.device_count() != 1, reason="already the multi-device run")
def test_again_on_eight_cpu_devices():
    env = dict(os.environ, TESSERA_NUM_CPU_DEVICES="8", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          os.path.abspath(__file__)], env=env, capture_output=True, text=True,
                         timeout=300, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "1 skipped" in out.stdout and "5 passed" in out.stdout, out.stdout[-500:]
