"""Tessera's exceptions, as jax.errors: ConcretizationTypeError subclasses TypeError,
TracerBoolConversionError subclasses ConcretizationTypeError, TracerIntegerConversionError and
TracerArrayConversionError subclass TypeError."""
from tessera._tessera import (ConcretizationTypeError, TracerArrayConversionError,
                              TracerBoolConversionError, TracerIntegerConversionError,
                              UnexpectedTracerError)

__all__ = ["ConcretizationTypeError", "UnexpectedTracerError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "TracerArrayConversionError"]
