"""tessera.random: jax.random's names and signatures over tessera::random (C++).

    import tessera as jax
    key = jax.random.key(0)
    k1, k2 = jax.random.split(key)
    x = jax.random.normal(k1, (3,))

Keys are typed (``key``: dtype key<fry>) or raw (``PRNGKey``: uint32[2]); the bits are JAX's for
both settings of ``jax_threefry_partitionable`` (``jax.config.update`` or the
``threefry_partitionable`` context manager).
"""
from tessera import _tessera
from tessera._src import array as _array  # noqa: F401  (installs Array's methods)
from tessera._src.dtypes import dtype_arg as _dt

_C = _tessera.random

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "clone", "split", "fold_in",
    "bits", "uniform", "normal", "truncated_normal", "bernoulli", "randint", "categorical",
    "gumbel", "exponential", "laplace", "logistic", "cauchy", "rademacher", "rayleigh",
    "weibull_min", "permutation", "choice", "orthogonal",
]

_IMPLS = ("threefry2x32", "fry", None)


def _impl(impl):
    if impl not in _IMPLS:
        raise ValueError(f'unrecognized PRNG implementation "{impl}"; Tessera has '
                         '"threefry2x32" only')


def PRNGKey(seed, *, impl=None):
    """A raw key, uint32[2], from an integer seed (jax.random.PRNGKey)."""
    _impl(impl)
    return _C.PRNGKey(seed)


def key(seed, *, impl=None):
    """A typed key<fry> scalar from an integer seed (jax.random.key)."""
    _impl(impl)
    return _C.key(seed)


def key_data(keys):
    return _C.key_data(keys)


def wrap_key_data(key_bits_array, *, impl=None):
    _impl(impl)
    return _C.wrap_key_data(key_bits_array, "threefry2x32")


def key_impl(keys):
    return _C.key_impl(keys)


def clone(key):
    return _C.clone(key)


def split(key, num=2):
    return _C.split(key, num)


def fold_in(key, data):
    return _C.fold_in(key, data)


def bits(key, shape=(), dtype=None):
    return _C.bits(key, shape, _dt(dtype))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    return _C.uniform(key, shape, _dt(dtype), minval, maxval)


def normal(key, shape=(), dtype=None):
    return _C.normal(key, shape, _dt(dtype))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    return _C.truncated_normal(key, lower, upper, shape, _dt(dtype))


def bernoulli(key, p=0.5, shape=None):
    return _C.bernoulli(key, p, shape)


def randint(key, shape, minval, maxval, dtype=None):
    return _C.randint(key, shape, minval, maxval, _dt(dtype))


def categorical(key, logits, axis=-1, shape=None):
    return _C.categorical(key, logits, axis, shape)


def gumbel(key, shape=(), dtype=None):
    return _C.gumbel(key, shape, _dt(dtype))


def exponential(key, shape=(), dtype=None):
    return _C.exponential(key, shape, _dt(dtype))


def laplace(key, shape=(), dtype=None):
    return _C.laplace(key, shape, _dt(dtype))


def logistic(key, shape=(), dtype=None):
    return _C.logistic(key, shape, _dt(dtype))


def cauchy(key, shape=(), dtype=None):
    return _C.cauchy(key, shape, _dt(dtype))


def rademacher(key, shape=(), dtype=None):
    return _C.rademacher(key, shape, _dt(dtype))


def rayleigh(key, scale, shape=None, dtype=None):
    return _C.rayleigh(key, scale, shape, _dt(dtype))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    return _C.weibull_min(key, scale, concentration, shape, _dt(dtype))


def permutation(key, x, axis=0, independent=False):
    return _C.permutation(key, x, axis, independent)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    return _C.choice(key, a, shape, replace, p, axis)


from tessera._src.random_dists import (  # noqa: E402
    ball, beta, binomial, chisquare, dirichlet, double_sided_maxwell, f, gamma,
    generalized_normal, geometric, loggamma, lognormal, maxwell, multivariate_normal, orthogonal,
    pareto, poisson, t, triangular, wald)

__all__ += [
    "gamma", "loggamma", "beta", "dirichlet", "chisquare", "t", "f", "generalized_normal",
    "ball", "poisson", "binomial", "lognormal", "pareto", "maxwell", "double_sided_maxwell",
    "geometric", "triangular", "wald", "multivariate_normal",
]

from tessera._src.random_multinomial import multinomial  # noqa: E402

__all__ += ["multinomial"]
