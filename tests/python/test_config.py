"""jax.config on the C++ flag registry: JAX's names, defaults, validation texts, environment
variables (in fresh processes), context managers, and the x64 flag's effect on dtypes."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp

FLAGS = ["jax_enable_x64", "jax_platforms", "jax_platform_name", "jax_default_matmul_precision",
         "jax_disable_jit", "jax_debug_nans", "jax_debug_infs", "jax_numpy_rank_promotion",
         "jax_numpy_dtype_promotion", "jax_threefry_partitionable", "jax_compilation_cache_dir",
         "jax_log_compiles", "jax_explain_cache_misses"]


def run(code, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          timeout=120)


def test_defaults_and_attributes():
    c = jax.config
    assert set(FLAGS) <= set(c.values)
    assert c.jax_enable_x64 is False and c.x64_enabled is False
    assert c.jax_platforms is None and c.jax_platform_name == ""
    assert c.jax_default_matmul_precision is None
    assert c.jax_numpy_rank_promotion == "allow" and c.jax_numpy_dtype_promotion == "standard"
    assert c.jax_threefry_partitionable is True and c.jax_compilation_cache_dir is None
    for name in FLAGS:
        assert c.read(name) == c.values[name] == getattr(c, name)
        help_, effect = c.describe(name)
        assert help_ and (effect.startswith("in effect") or effect.startswith("stored"))


def test_update_round_trips_and_errors_match_jax():
    c = jax.config
    c.update("jax_numpy_rank_promotion", "warn")
    assert c.jax_numpy_rank_promotion == "warn"
    c.update("jax_numpy_rank_promotion", "allow")
    c.update("jax_compilation_cache_dir", "/tmp/x")
    assert c.jax_compilation_cache_dir == "/tmp/x"
    c.update("jax_compilation_cache_dir", None)
    c.update("jax_debug_nans", 1)  # bool flags take bool(value), as JAX's
    assert c.jax_debug_nans is True
    c.update("jax_debug_nans", [])
    assert c.jax_debug_nans is False
    with pytest.raises(AttributeError, match="^Unrecognized config option: jax_nope$"):
        c.update("jax_nope", True)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
        c.read("jax_nope")
    with pytest.raises(ValueError, match=r"^new enum value must be in \['allow', 'warn', "
                                         r"'raise'\], got 2.5 of type <class 'float'>\.$"):
        c.update("jax_numpy_rank_promotion", 2.5)
    with pytest.raises(ValueError, match=r"must be in \['standard', 'strict'\], got STRICT of"):
        c.update("jax_numpy_dtype_promotion", "STRICT")
    with pytest.raises(TypeError, match=r"^new string config value must be None or of type "
                                        r"str, got 3 of type <class 'int'>\.$"):
        c.update("jax_compilation_cache_dir", 3)
    with pytest.raises(ValueError, match="platform 'tpu' is not available"):
        c.update("jax_platforms", "tpu")
    c.update("jax_platforms", "cpu")
    assert c.jax_platforms == "cpu"
    c.update("jax_platforms", None)
    c.update("jax_default_matmul_precision", "highest")
    assert c.jax_default_matmul_precision == "highest"
    c.update("jax_default_matmul_precision", None)
    assert c.values["jax_numpy_rank_promotion"] == "allow"


def test_context_managers_restore_and_validate_early():
    assert jax.config.jax_debug_nans is False
    with jax.debug_nans():
        assert jax.config.jax_debug_nans is True
        with jax.debug_nans(False):
            assert jax.config.jax_debug_nans is False
        assert jax.config.jax_debug_nans is True
    assert jax.config.jax_debug_nans is False
    with pytest.raises(ValueError, match="new enum value must be in"):
        jax.numpy_rank_promotion("loud")
    with pytest.raises(TypeError, match="requires an argument"):
        jax.numpy_rank_promotion()
    with jax.default_matmul_precision("float32"):
        assert jax.config.jax_default_matmul_precision == "float32"
    assert jax.config.jax_default_matmul_precision is None

    @jax.numpy_rank_promotion("raise")
    def f():
        return jax.config.jax_numpy_rank_promotion

    assert f() == "raise" and jax.config.jax_numpy_rank_promotion == "allow"
    with pytest.raises(RuntimeError):
        with jax.disable_jit():
            assert jax.config.jax_disable_jit is True
            raise RuntimeError("inside")
    assert jax.config.jax_disable_jit is False


def test_x64_flag_changes_dtypes():
    x = np.arange(3.0)
    assert jnp.asarray(x).dtype == jnp.float32
    with jax.experimental.enable_x64():
        assert jax.config.jax_enable_x64 is True
        assert jnp.asarray(x).dtype == jnp.float64
        np.testing.assert_array_equal(np.asarray(jnp.asarray(x) * 2), x * 2)
        with jax.experimental.disable_x64():
            assert jnp.asarray(x).dtype == jnp.float32
    assert jnp.asarray(x).dtype == jnp.float32 and jax.config.jax_enable_x64 is False


def test_environment_variables():
    out = run("import tessera as jax, tessera.numpy as jnp\n"
              "print(jax.config.jax_enable_x64, jnp.zeros(2).dtype,"
              " jax.config.jax_numpy_rank_promotion, jax.config.jax_debug_nans,"
              " jax.config.jax_platforms, jax.config.jax_compilation_cache_dir)",
              JAX_ENABLE_X64="1", JAX_NUMPY_RANK_PROMOTION="raise", JAX_DEBUG_NANS="t",
              JAX_PLATFORMS="cpu", JAX_COMPILATION_CACHE_DIR="/tmp/tc")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "float64", "raise", "True", "cpu", "/tmp/tc"]
    bad = run("import tessera", JAX_DEBUG_NANS="maybe")
    assert bad.returncode != 0
    assert "invalid truth value 'maybe' for environment 'JAX_DEBUG_NANS'" in bad.stderr
    bad = run("import tessera", JAX_NUMPY_RANK_PROMOTION="loud")
    assert bad.returncode != 0
    assert 'Invalid value "loud" for JAX flag jax_numpy_rank_promotion' in bad.stderr
    bad = run("import tessera", JAX_PLATFORMS="cuda")
    assert bad.returncode != 0 and "platform 'cuda' is not available" in bad.stderr
    # JAX_DISABLE_JIT: jitted functions run op by op (traced on every call, with concrete
    # arrays), until the flag is updated.
    out = run("import tessera as jax, tessera.numpy as jnp\n"
              "seen = []\n"
              "f = jax.jit(lambda x: seen.append(not x._is_tracer) or x * 2)\n"
              "f(jnp.ones(2)); f(jnp.ones(2))\n"
              "jax.config.update('jax_disable_jit', False)\n"
              "f(jnp.ones(2)); f(jnp.ones(2))\n"
              "print(jax.config.jax_disable_jit, seen)",
              JAX_DISABLE_JIT="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(maxsplit=1) == ["False", "[True, True, False]\n"]
