"""jax.core's jaxpr objects: make_jaxpr(f)(x) is a ClosedJaxpr whose .jaxpr is a Jaxpr of
JaxprEqns over Vars and Literals (read-only views of the traced program)."""
from tessera._src.jaxpr_view import (  # noqa: F401
    ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray, Var)

__all__ = ["ClosedJaxpr", "DropVar", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "ShapedArray",
           "Var"]
