"""tessera.nn.initializers: jax.nn.initializers (``jax.nn.initializers.glorot_uniform()``, ...).

    import tessera as jax
    init = jax.nn.initializers.he_normal(in_axis=-2, out_axis=-1)
    w = init(jax.random.key(0), (784, 256), jax.numpy.bfloat16)

Every initializer is the C++ tessera::nn::initializers one of the same name
(include/tessera/nn_initializers.h): JAX's composition of jax.random and jnp arithmetic in the
requested dtype, so the values are JAX's for the same key and jit/vmap/grad see ordinary
primitives. This module gives them jax.nn.initializers' signatures: each factory returns
``init(key, shape, dtype=<the factory's dtype>)``. dtypes default to ``jnp.float_`` and are
canonicalized when the initializer is called (float32 unless x64 is on), as JAX's.

Not here: ``delta_orthogonal``, and the complex branches of ``variance_scaling`` (Tessera has
no complex dtypes). Where JAX's Python arithmetic raises ZeroDivisionError (a fan-based
initializer on a shape with a zero-size dimension), Tessera raises ValueError.
"""
import typing as _typing

from tessera import _tessera
from tessera import numpy as _jnp
from tessera._src.dtypes import dtype_arg as _dt

_C = _tessera.nn.initializers

__all__ = [
    "Initializer", "constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
    "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
    "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal",
    "xavier_uniform", "zeros",
]


@_typing.runtime_checkable
class Initializer(_typing.Protocol):
    """What every initializer is: ``init(key, shape, dtype=jnp.float_) -> Array``."""

    @staticmethod
    def __call__(key, shape, dtype=_jnp.float_):
        raise NotImplementedError


def _init(c_init, default_dtype, name):
    """The C++ initializer as a function with JAX's signature."""

    def init(key, shape, dtype=default_dtype):
        return c_init(key, shape, _dt(dtype))

    init.__name__ = init.__qualname__ = name
    return init


def zeros(key, shape, dtype=_jnp.float_):
    """An array of zeros of ``shape`` and ``dtype``; the key is ignored."""
    return _C.zeros(key, shape, _dt(dtype))


def ones(key, shape, dtype=_jnp.float_):
    """An array of ones of ``shape`` and ``dtype``; the key is ignored."""
    return _C.ones(key, shape, _dt(dtype))


def constant(value, dtype=_jnp.float_):
    """Builds an initializer of arrays full of ``value`` (``jnp.full(shape, value, dtype)``)."""
    return _init(_C.constant(value, _dt(dtype)), dtype, "init")


def uniform(scale=1e-2, dtype=_jnp.float_):
    """Builds an initializer of values uniform in ``[0, scale)``."""
    return _init(_C.uniform(scale, _dt(dtype)), dtype, "init")


def normal(stddev=1e-2, dtype=_jnp.float_):
    """Builds an initializer of normal values with mean 0 and standard deviation ``stddev``."""
    return _init(_C.normal(stddev, _dt(dtype)), dtype, "init")


def orthogonal(scale=1.0, column_axis=-1, dtype=_jnp.float_):
    """Builds an initializer of (scaled) orthogonal matrices: the Q of a standard normal
    matrix's QR decomposition, sign-corrected by diag(R), with the columns on ``column_axis``."""
    return _init(_C.orthogonal(scale, int(column_axis), _dt(dtype)), dtype, "init")


def truncated_normal(stddev=1e-2, dtype=_jnp.float_, lower=-2.0, upper=2.0):
    """Builds an initializer of ``stddev`` times a standard normal truncated to
    ``(lower, upper)`` (the bounds apply before the scaling; ``stddev`` is not corrected for the
    truncation, as in JAX)."""
    return _init(_C.truncated_normal(stddev, _dt(dtype), lower, upper), dtype, "init")


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weights shape: the in/out sizes times the receptive field (the
    product of the axes not in in_axis, out_axis or batch_axis)."""
    return _C.compute_fans(tuple(shape), in_axis, out_axis, batch_axis)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=_jnp.float_):
    """Builds an initializer of variance ``scale / n``: n is the fan by ``mode`` ("fan_in",
    "fan_out", "fan_avg" or "fan_geo_avg"), the distribution "truncated_normal" (truncated at
    two standard deviations, rescaled to the variance), "normal" or "uniform". A bad mode or
    distribution raises ValueError when the initializer is called, as in JAX."""
    return _init(_C.variance_scaling(float(scale), str(mode), str(distribution), in_axis,
                                     out_axis, batch_axis, _dt(dtype)), dtype, "init")


def _named(c_factory, name, doc):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_jnp.float_):
        return _init(c_factory(in_axis, out_axis, batch_axis, _dt(dtype)), dtype, "init")

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"Builds a {doc} initializer: variance_scaling{_C_ARGS[name]}."
    return factory


_C_ARGS = {
    "glorot_uniform": "(1.0, 'fan_avg', 'uniform')",
    "glorot_normal": "(1.0, 'fan_avg', 'truncated_normal')",
    "lecun_uniform": "(1.0, 'fan_in', 'uniform')",
    "lecun_normal": "(1.0, 'fan_in', 'truncated_normal')",
    "he_uniform": "(2.0, 'fan_in', 'uniform')",
    "he_normal": "(2.0, 'fan_in', 'truncated_normal')",
}
glorot_uniform = _named(_C.glorot_uniform, "glorot_uniform", "Glorot (Xavier) uniform")
glorot_normal = _named(_C.glorot_normal, "glorot_normal", "Glorot (Xavier) normal")
lecun_uniform = _named(_C.lecun_uniform, "lecun_uniform", "LeCun uniform")
lecun_normal = _named(_C.lecun_normal, "lecun_normal", "LeCun normal")
he_uniform = _named(_C.he_uniform, "he_uniform", "He (Kaiming) uniform")
he_normal = _named(_C.he_normal, "he_normal", "He (Kaiming) normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal
