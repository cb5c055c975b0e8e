"""tessera.example_libraries: jax.example_libraries (``optimizers`` and ``stax``).

    import tessera.example_libraries.optimizers as optimizers
    from tessera.example_libraries import stax

Small example libraries written against the public API only (jnp, lax, random, nn,
tree_util), with JAX's names, signatures, state layouts and update rules, so programs written
for jax.example_libraries run unchanged.
"""
from tessera.example_libraries import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
