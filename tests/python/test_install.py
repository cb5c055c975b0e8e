"""`pip install .` into a fresh virtual environment, then the installed package is used from
another directory, with nothing of the source or build tree on the path.

The README's command is `python3 -m venv --system-site-packages V && V/bin/pip install
--no-build-isolation --no-index .`; here the venv is made --without-pip and the same pip 23
runs from Debian's site-packages (`V/bin/python -m pip`): the install target is still the venv,
and creating the venv takes 0.2 s instead of ~7 s. setup.py builds in build-pip/ (kept between
runs; ccache reuses the objects of build/), so a repeated run mostly relinks and copies.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Runs in the venv's interpreter: the grad of sum(tanh(x) * x) at the given points, plus where
# the package, its extension and libtessera.so were loaded from.
CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tessera as jax
    import tessera.numpy as jnp

    x = np.asarray(json.loads(sys.argv[1]), dtype=np.float32)
    g = jax.grad(lambda v: jnp.sum(jnp.tanh(v) * v))(jnp.asarray(x))
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "libtessera" in l})
    print(json.dumps({"tessera": jax.__file__, "extension": jax._tessera.__file__,
                      "libtessera": libs, "dtype": str(g.dtype), "grad": np.asarray(g).tolist(),
                      "path": sys.path}))
""")


def _clean_env():
    env = dict(os.environ)
    for k in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE"):
        env.pop(k, None)
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(cmd, **kw):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    dt = time.perf_counter() - t0
    assert p.returncode == 0, (f"{' '.join(map(str, cmd))} failed ({p.returncode}) after "
                               f"{dt:.1f} s\n--- stdout ---\n{p.stdout[-6000:]}\n"
                               f"--- stderr ---\n{p.stderr[-6000:]}")
    return p, dt


def _inside(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([path, root]) == root


@pytest.mark.slow
def test_pip_install_into_venv_and_import_elsewhere(tmp_path):
    env = _clean_env()
    venv = tmp_path / "venv"
    _, t_venv = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                      str(venv)], env=env)
    py = str(venv / "bin" / "python")
    _, t_pip = _run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "."],
                    cwd=REPO, env=env, timeout=1800)
    print(f"test_install: venv {t_venv:.1f} s, pip install {t_pip:.1f} s")

    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                          capture_output=True, text=True, env=env, check=True).stdout.strip()
    pkg = os.path.join(site, "tessera")
    for name in ("__init__.py", "numpy", "libtessera.so.0"):
        assert os.path.exists(os.path.join(pkg, name)), f"{name} is not installed in {pkg}"

    # The installed extension finds libtessera.so.0 beside itself, not in a build tree.
    if shutil.which("readelf"):
        dyn = subprocess.run(["readelf", "-d", os.path.join(pkg, next(
            f for f in os.listdir(pkg) if f.startswith("_tessera") and f.endswith(".so")))],
            capture_output=True, text=True, check=True).stdout
        runpath = [l for l in dyn.splitlines() if "RUNPATH" in l or "RPATH" in l]
        assert runpath and all("[$ORIGIN]" in l for l in runpath), runpath

    seed = np.random.SeedSequence().entropy % 2**32
    print(f"test_install: seed {seed}")
    x = np.random.default_rng(seed).uniform(-3, 3, 7).astype(np.float32)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p, _ = _run([py, "-c", CHILD, json.dumps(x.tolist())], cwd=elsewhere, env=env, timeout=300)
    out = json.loads(p.stdout.strip().splitlines()[-1])

    for key in ("tessera", "extension"):
        assert _inside(out[key], site), f"{key} loaded from {out[key]}, not from {site}"
        assert not _inside(out[key], REPO), f"{key} loaded from the source tree: {out[key]}"
    assert len(out["libtessera"]) == 1 and _inside(out["libtessera"][0], pkg), out["libtessera"]
    assert not any(_inside(d, REPO) for d in out["path"] if d), out["path"]

    # d/dx sum(tanh(x) x) = tanh(x) + x (1 - tanh(x)^2), in float64.
    x64 = x.astype(np.float64)
    expected = np.tanh(x64) + x64 * (1 - np.tanh(x64) ** 2)
    assert out["dtype"] == "float32"
    np.testing.assert_allclose(out["grad"], expected, rtol=2e-6, atol=2e-6)
