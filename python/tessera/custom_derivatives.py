"""jax.custom_derivatives: custom_jvp, custom_vjp, SymbolicZero, CustomVJPPrimal,
closure_convert."""
from tessera._src.custom_derivatives import (CustomVJPPrimal, SymbolicZero, closure_convert,
                                             custom_jvp, custom_vjp,
                                             custom_vjp_primal_tree_values)

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_jvp", "custom_vjp",
           "custom_vjp_primal_tree_values"]
