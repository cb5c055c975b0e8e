"""Tessera's exceptions, as jax.errors: ConcretizationTypeError subclasses TypeError."""
from tessera._tessera import ConcretizationTypeError, UnexpectedTracerError

TracerBoolConversionError = ConcretizationTypeError
TracerIntegerConversionError = ConcretizationTypeError
TracerArrayConversionError = ConcretizationTypeError

__all__ = ["ConcretizationTypeError", "UnexpectedTracerError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "TracerArrayConversionError"]
