"""tessera.dlpack: jax.dlpack's names."""
from tessera import _tessera


def from_dlpack(external_array, device=None, copy=None):
    """Imports a DLPack producer (an object with __dlpack__, or a DLPack capsule) without
    copying when its memory is dense and 16-byte aligned."""
    return _tessera.from_dlpack(external_array)


def to_dlpack(x):
    """A DLPack capsule sharing x's memory (legacy API; prefer passing x itself)."""
    return x.__dlpack__()
