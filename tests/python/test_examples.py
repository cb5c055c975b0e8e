"""Runs each JAX-style example in examples/python with /usr/bin/python3 (the interpreter running
these tests) in a subprocess; each checks its own results and exits non-zero on failure.

PYTHONPATH is passed through, with the directory holding the imported tessera package first, so
the examples import the same build of tessera as the tests.
"""
import os
import pathlib
import subprocess
import sys
import time

import pytest

import tessera

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
SEED = os.environ.get("TESSERA_TEST_SEED", str(time.time_ns() % (2**31)))


@pytest.mark.parametrize("name", ["linear_regression.py", "per_example_grads.py", "mlp_step.py",
                                  "attention_layernorm.py", "control_flow.py"])
def test_example_runs_and_checks_pass(name):
    path = EXAMPLES / name
    assert path.is_file(), path
    text = path.read_text()
    # written for JAX: only the two imports name tessera
    assert "import tessera as jax\n" in text and "import tessera.numpy as jnp\n" in text
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [pkg_parent, env.get("PYTHONPATH")] if p)
    env["TESSERA_TEST_SEED"] = SEED
    print(f"seed: TESSERA_TEST_SEED={SEED}")
    r = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                       timeout=120)
    print(r.stdout)
    print(r.stderr)
    assert r.returncode == 0, f"{name} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert r.stdout.rstrip().endswith("OK")
