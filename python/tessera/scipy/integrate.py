"""tessera.scipy.integrate: jax.scipy.integrate.trapezoid, the composite trapezoidal rule."""
from tessera import numpy as _jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along axis by the trapezoidal rule, with sample points x (1-D of
    y.shape[axis] points, or y's shape) or the uniform spacing dx."""
    return _jnp.trapezoid(y, x=x, dx=dx, axis=axis)
