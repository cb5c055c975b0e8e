"""jax.custom_derivatives: custom_jvp, custom_vjp, SymbolicZero, closure_convert."""
from tessera._src.custom_derivatives import (SymbolicZero, closure_convert, custom_jvp,
                                             custom_vjp)

__all__ = ["SymbolicZero", "closure_convert", "custom_jvp", "custom_vjp"]
