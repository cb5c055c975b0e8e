"""Makes the source tree's python/ importable when no regular `tessera` package is.

An installed or build-tree `tessera` (a regular package with __init__.py) wins; otherwise
python/ goes first on sys.path. Nothing here imports tessera or its compiled extension.
"""
import importlib.util
import os
import sys

_PYTHON_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))

_spec = importlib.util.find_spec("tessera")
if (_spec is None or _spec.origin is None) and _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)
