"""Makes the source tree's python/ importable when no regular `tessera` package is.

An installed or build-tree `tessera` (a regular package with __init__.py) wins; otherwise
python/ goes first on sys.path. Nothing here imports tessera or its compiled extension at
import time.

Shared fixtures: `rng` (a NumPy Generator seeded from TESSERA_TEST_SEED, or the clock, and the
test's id; the seed is printed with each test's output) and `x64` (jax_enable_x64 on for one
test). A test module may define its own to override them.
"""
import importlib.util
import os
import sys
import time
import zlib

import numpy as np
import pytest

_PYTHON_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))

_spec = importlib.util.find_spec("tessera")
if (_spec is None or _spec.origin is None) and _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)


SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


@pytest.fixture
def x64():
    import tessera
    old = tessera.config.jax_enable_x64
    tessera.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        tessera.config.update("jax_enable_x64", old)
