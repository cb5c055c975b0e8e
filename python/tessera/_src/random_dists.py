"""jax.random's remaining distributions: Python's argument handling over tessera::random (C++).

The algorithms live in C++ (include/tessera/random_dists.h, src/api/random_dists.cpp and
random_discrete.cpp), written after JAX's jax/_src/random.py step by step: the same key splits in
the same order, the same uniform/normal/exponential draws, the same float operations, JAX's dtype
and shape rules and error texts. Here remain what C++ cannot see: JAX's checks and
canonicalization of Python dtype and shape arguments (their error texts name the Python values)
and Python ints for `d`, `n`, `m`. Where a sampler's bits reduce to uniform/bits/split and
correctly rounded arithmetic (triangular) its samples are JAX's bit for bit; elsewhere they
follow JAX's algorithm and key use exactly and equal JAX's in distribution.

gamma is JAX's Marsaglia-Tsang sampler with JAX's boosting for a < 1 (one key per element, one
while_loop per element under vmap); its derivative in `a` is JAX's implicit reparameterization
gradient (lax.random_gamma_grad) through a custom JVP, both in C++.
"""
import operator as _operator

import numpy as _np

from tessera import _tessera
from tessera._src import dtypes as _dtypes

_C = _tessera.random_dists

# ---------------------------------------------------------------- argument handling

def _dtype_name(dtype):
    d = _dtypes.dtype_arg(dtype)
    if isinstance(d, str):
        return d
    if d is float:
        return "float64"
    if d is int:
        return "int64"
    if d is bool:
        return "bool"
    return _np.dtype(d).name


def _is_kind(dtype, kind):
    try:
        name = _dtype_name(dtype)
    except TypeError:
        return False
    if name == "bfloat16":
        return kind is _np.floating or kind is _np.inexact
    if name.startswith("key"):
        return False
    return bool(_np.issubdtype(_np.dtype(name), kind))


def _float_dtype(name, dtype, kind="float"):
    """JAX's check and canonicalization of a float `dtype` argument."""
    if not _is_kind(dtype, _np.floating):
        raise ValueError(f"dtype argument to `{name}` must be a {kind} dtype, got {dtype}")
    return _dtypes.canonicalize_dtype(_dtypes.dtype_arg(dtype))


def _int_dtype(name, dtype):
    if not _is_kind(dtype, _np.integer):
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dtype}")
    return _dtypes.canonicalize_dtype(_dtypes.dtype_arg(dtype))


def _canonicalize_shape(shape):
    """core.canonicalize_shape: a sequence of integers (TypeError otherwise)."""
    try:
        return tuple(_operator.index(d) for d in shape)
    except TypeError:
        pass
    raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                    f"got {shape}.")


def _dt(dtype):
    return _dtypes.dtype_arg(dtype)


def _opt_shape(shape):
    return None if shape is None else _canonicalize_shape(shape)


# ---------------------------------------------------------------- gamma and its family

def gamma(key, a, shape=None, dtype=float):
    """jax.random.gamma: standard Gamma(a) samples (density x^(a-1) e^-x / Gamma(a)).

    JAX's Marsaglia-Tsang sampler with JAX's boost for a < 1 (Gamma(a+1) * U^(1/a), U = 1 -
    uniform), one key per element from split(key, prod(shape)), one rejection while_loop per
    element under vmap; the derivative in `a` is the implicit reparameterization gradient
    (lax.random_gamma_grad). Same keys, draws and operations as JAX; the normal draws are within
    an ulp or two of JAX's and the accept test can flip on such a difference, so samples are
    JAX's in distribution (and in practice nearly always to the last bit), not guaranteed
    bit-identical.
    """
    dtype = _float_dtype("gamma", dtype)
    return _C.gamma(key, a, _opt_shape(shape), _dt(dtype))


def loggamma(key, a, shape=None, dtype=float):
    """jax.random.loggamma: log of Gamma(a) samples, accurate for small a (the boost is applied
    in log space: log(d V) - Exponential / a). exp(loggamma(key, a)) matches gamma(key, a) to
    rounding. Equal to JAX's in distribution (as gamma)."""
    dtype = _float_dtype("gamma", dtype)  # JAX's text names `gamma` here too
    return _C.loggamma(key, a, _opt_shape(shape), _dt(dtype))


def beta(key, a, b, shape=None, dtype=float):
    """jax.random.beta: Beta(a, b) as G_a / (G_a + G_b) from two loggamma draws (keys split(key)
    in JAX's order), scaled by the larger log so small a, b keep precision. Equal to JAX's in
    distribution (as gamma)."""
    dtype = _float_dtype("beta", dtype)
    return _C.beta(key, a, b, _opt_shape(shape), _dt(dtype))


def dirichlet(key, alpha, shape=None, dtype=float):
    """jax.random.dirichlet: alpha has shape (..., n); the result has shape shape + (n,)
    (default alpha.shape): the softmax of loggamma(key, alpha) draws along the last axis. Equal
    to JAX's in distribution (as gamma)."""
    dtype = _float_dtype("dirichlet", dtype)
    return _C.dirichlet(key, alpha, _opt_shape(shape), _dt(dtype))


def chisquare(key, df, shape=None, dtype=float):
    """jax.random.chisquare: 2 * exp(loggamma(key, df / 2)). Equal to JAX's in distribution
    (as gamma)."""
    dtype = _float_dtype("chisquare", dtype)
    return _C.chisquare(key, df, _opt_shape(shape), _dt(dtype))


def t(key, df, shape=(), dtype=float):
    """jax.random.t: Student's t with df degrees of freedom, n * sqrt((df/2) / g) for
    n ~ normal, g ~ gamma(df/2) (keys split(key): normal first). As in JAX, `shape` defaults to
    () and must be broadcast-compatible with df. Equal to JAX's in distribution (as gamma)."""
    dtype = _float_dtype("t", dtype)
    return _C.t(key, df, _canonicalize_shape(shape), _dt(dtype))


def f(key, dfnum, dfden, shape=None, dtype=float):
    """jax.random.f: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden), keys
    split(key) = (denominator's, numerator's) as JAX. Equal to JAX's in distribution (as
    gamma)."""
    dtype = _float_dtype("f", dtype)
    return _C.f(key, dfnum, dfden, _opt_shape(shape), _dt(dtype))


def generalized_normal(key, p, shape=(), dtype=float):
    """jax.random.generalized_normal: density proportional to exp(-|x|^p), as
    rademacher * gamma(1/p)^(1/p) (keys split(key): gamma first). Equal to JAX's in
    distribution (as gamma)."""
    shape = _canonicalize_shape(shape)
    dtype = _float_dtype("generalized_normal", dtype)
    return _C.generalized_normal(key, p, shape, _dt(dtype))


def ball(key, d, p=2, shape=(), dtype=float):
    """jax.random.ball: uniform on the unit Lp ball in d dimensions, shape shape + (d,):
    g / (sum |g|^p + e)^(1/p) with g ~ generalized_normal(p) and e ~ exponential (Barthe et al.,
    keys split(key) as JAX). Equal to JAX's in distribution (as gamma)."""
    shape = _canonicalize_shape(shape)
    dtype = _float_dtype("ball", dtype)
    try:
        d = _operator.index(d)
    except TypeError:
        raise TypeError("The error occurred in jax.random.ball(): d must be a concrete "
                        f"integer, got {d!r}") from None
    return _C.ball(key, d, p, shape, _dt(dtype))


# ---------------------------------------------------------------- counts

def poisson(key, lam, shape=None, dtype=int):
    """jax.random.poisson: Poisson(lam) counts (lam >= 0; computed in float32 as JAX). JAX's
    algorithm: Knuth's product of uniforms where lam < 10 (or nan), Hormann's transformed
    rejection elsewhere, both run over the whole array with one key stream each (split per
    iteration) and merged by select; lam == 0 gives 0. Knuth's counts depend only on uniforms
    (bit-exact) and float32 log, the rejection branch also on lgamma: equal to JAX's in
    distribution, and sample for sample wherever those kernels round as XLA's do."""
    dtype = _int_dtype("poisson", dtype)
    return _C.poisson(key, lam, _opt_shape(shape), _dt(dtype))


def binomial(key, n, p, shape=None, dtype=float):
    """jax.random.binomial: Binomial(n, p) counts as floats (JAX's dtype). JAX's algorithm
    (TensorFlow's): q = min(p, 1 - p); inversion by sums of geometric draws where n q <= 10,
    Hormann's BTRS elsewhere, merged by select, then n - k where p > 1/2; nan p, p < 0, nan or
    negative n give nan, infinite n gives inf. Equal to JAX's in distribution (log and the
    rejection test are Tessera's float32 kernels)."""
    dtype = _float_dtype("binomial", dtype)
    return _C.binomial(key, n, p, _opt_shape(shape), _dt(dtype))


def geometric(key, p, shape=None, dtype=int):
    """jax.random.geometric: trials up to the first success, floor(log(u) / log1p(-p)) + 1.
    Equal to JAX's in distribution (uniform's bits are JAX's; log/log1p are Tessera's)."""
    dtype = _int_dtype("geometric", dtype)
    return _C.geometric(key, p, _opt_shape(shape), _dt(dtype))


# ---------------------------------------------------------------- closed forms

def lognormal(key, sigma=1.0, shape=None, dtype=float):
    """jax.random.lognormal: exp(sigma * normal). Equal to JAX's in distribution (normal is
    within an ulp or two of JAX's; exp is Tessera's kernel)."""
    if not _is_kind(dtype, _np.inexact):
        raise ValueError("dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    dtype = _dtypes.canonicalize_dtype(_dtypes.dtype_arg(dtype))
    return _C.lognormal(key, sigma, _opt_shape(shape), _dt(dtype))


def pareto(key, b, shape=None, dtype=float):
    """jax.random.pareto: exp(exponential / b), support [1, inf). Equal to JAX's in
    distribution (exponential's bits are JAX's; exp is Tessera's kernel)."""
    dtype = _float_dtype("pareto", dtype)
    return _C.pareto(key, b, _opt_shape(shape), _dt(dtype))


def maxwell(key, shape=(), dtype=float):
    """jax.random.maxwell: the norm of three standard normals (one-sided Maxwell). Equal to
    JAX's in distribution (normal within an ulp or two)."""
    dtype = _float_dtype("maxwell", dtype)
    return _C.maxwell(key, _canonicalize_shape(shape), _dt(dtype))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=float):
    """jax.random.double_sided_maxwell: sign * maxwell * scale + loc (keys split(key): maxwell
    first). As in JAX the output shape is shape + broadcast(loc, scale).shape, where an empty
    `shape` is first replaced by the parameters' shape. Equal to JAX's in distribution."""
    dtype = _float_dtype("double_sided_maxwell", dtype)
    return _C.double_sided_maxwell(key, loc, scale, _canonicalize_shape(shape), _dt(dtype))


def triangular(key, left, mode, right, shape=None, dtype=float):
    """jax.random.triangular: inverse-CDF sampling of the triangular distribution on
    [left, right] with peak `mode`. Bit-identical to JAX's for float32 parameters (one uniform,
    bit-exact, then +, -, *, / and sqrt, all correctly rounded)."""
    dtype = _float_dtype("triangular", dtype)
    return _C.triangular(key, left, mode, right, _opt_shape(shape), _dt(dtype))


def wald(key, mean, shape=None, dtype=float):
    """jax.random.wald: the inverse Gaussian with unit shape parameter (Michael, Schucany and
    Haas: one normal, one uniform, keys split(key)). Equal to JAX's in distribution."""
    dtype = _float_dtype("wald", dtype)
    return _C.wald(key, mean, _opt_shape(shape), _dt(dtype))


# ---------------------------------------------------------------- linear algebra

def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """jax.random.multivariate_normal: mean + A z with z standard normal of shape
    shape + mean.shape[-1:] and A a factor of cov (A A^T = cov): its Cholesky factor, or
    V sqrt(W) from eigh, or U sqrt(S) from svd, as JAX's `method`. Equal to JAX's in
    distribution (normal within an ulp or two of JAX's; LAPACK's factors)."""
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if dtype is None:
        dtype = _dtypes.canonicalize_dtype(_dtypes.dtype_arg(float))
        mean_dt = getattr(mean, "dtype", None)
        if mean_dt is not None and _is_kind(mean_dt, _np.floating):
            dtype = _dtypes.canonicalize_dtype(_dtypes.dtype_arg(mean_dt))
    else:
        dtype = _float_dtype("multivariate_normal", dtype)
    return _C.multivariate_normal(key, mean, cov, _opt_shape(shape), _dt(dtype), method)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """jax.random.orthogonal: Haar-distributed orthogonal matrices of shape (*shape, n, n), the
    Q of a standard normal matrix's QR decomposition with its columns multiplied by
    sign(diag(R)), as JAX's. m != n (semi-orthogonal) raises NotImplementedError."""
    n = _operator.index(n)
    if m is not None:
        m = _operator.index(m)
    shape = (_operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(
        _operator.index(d) for d in shape)
    return _C.orthogonal(key, n, shape, None if dtype is None else _dt(dtype), m)
