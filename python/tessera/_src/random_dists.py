"""jax.random's remaining distributions, written over tessera.lax and tessera.random's C++ samplers.

Each function follows JAX's algorithm (jax/_src/random.py) step by step: the same key splits in
the same order, the same uniform/normal/exponential draws, the same float operations in the
same order, JAX's dtype and shape rules and JAX's error texts. Where a sampler's bits reduce to
uniform/bits/split (bit-exact with JAX by construction) and elementwise IEEE operations, its
samples are JAX's bit for bit; where they go through `normal` (within an ulp or two of JAX's),
log/exp/pow/lgamma (Tessera's own float32 kernels) or a rejection loop whose accept test can
flip on a last-bit difference, they follow JAX's algorithm and key use exactly but are only
guaranteed equal in distribution. Each docstring says which.

gamma is JAX's Marsaglia-Tsang sampler with JAX's boosting for a < 1: one key per element
(split of the key into prod(shape) keys), one while_loop per element, vmapped, as JAX lowers
`random_gamma_p`; its derivative in `a` is JAX's implicit reparameterization gradient
(lax.random_gamma_grad) through a custom_jvp.

multivariate_normal factors the covariance with tessera.numpy.linalg (cholesky, eigh or svd, as
JAX's `method`); orthogonal lives in random.py (qr).
"""
import functools as _functools
import math as _math
import operator as _operator

import numpy as _np

from tessera import _tessera
from tessera._src import dtypes as _dtypes

_INT32_MAX = int(_np.iinfo(_np.int32).max)


# ---------------------------------------------------------------- helpers

def _jnp():
    from tessera import numpy as jnp
    return jnp


def _lax():
    from tessera import lax
    return lax


def _rnd():
    from tessera import random
    return random


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


def _shape_of(x):
    return tuple(_np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _broadcast_shapes(*shapes):
    try:
        return tuple(_np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def _check_shape(name, shape, *param_shapes):
    """JAX's _check_shape: the parameters broadcast against `shape` must give `shape`."""
    if param_shapes:
        shape_ = _broadcast_shapes(tuple(shape), *param_shapes)
        if tuple(shape) != shape_:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
                "the result of broadcasting the shapes must equal the shape argument, but got "
                f"result {shape_} for shape argument {tuple(shape)}.")


def _typed_key(key, name):
    """A single key as a typed key<fry> scalar (raw uint32[2] keys are wrapped, as JAX's
    _check_prng_key does)."""
    random = _rnd()
    arr = _tessera.asarray(key)
    if arr.dtype != _dtypes.key_dtype:
        if not _is_kind(arr.dtype, _np.unsignedinteger) and not _is_kind(arr.dtype, _np.integer):
            raise TypeError(f"unexpected PRNG key type {type(key)}")
        arr = random.wrap_key_data(arr)
    if arr.ndim:
        raise TypeError(f"{name} accepts a single key, but was given a key array of shape "
                        f"{tuple(arr.shape)} != (). Use jax.vmap for batching.")
    return arr


def _select(pred, on_true, on_false):
    """lax.select: on_true where pred, else on_false (same shapes)."""
    return _lax().select_n(pred, on_false, on_true)


def _const(dtype, value):
    return _tessera.asarray(value, _dtypes.dtype_arg(dtype))


def _convert(x, dtype):
    return _lax().convert_element_type(x, _dtypes.dtype_arg(dtype))


def _broadcast_to(x, shape):
    jnp = _jnp()
    x = _tessera.asarray(x)
    return x if tuple(x.shape) == tuple(shape) else jnp.broadcast_to(x, tuple(shape))


def _split(key, num=2):
    return _rnd().split(key, num)


def _uniform(key, shape, dtype, minval=0.0, maxval=1.0):
    return _rnd().uniform(key, tuple(shape), _dtypes.dtype_arg(dtype), minval, maxval)


def _normal(key, shape, dtype):
    return _rnd().normal(key, tuple(shape), _dtypes.dtype_arg(dtype))


def _exponential(key, shape, dtype):
    return _rnd().exponential(key, tuple(shape), _dtypes.dtype_arg(dtype))


def _float_of(x):
    """promote_dtypes_inexact for one argument: integers become the default float."""
    x = _tessera.asarray(x)
    if _is_kind(x.dtype, _np.floating):
        return x
    return _convert(x, _dtypes.canonicalize_dtype(float))


# ---------------------------------------------------------------- gamma

def _gamma_one(key, alpha, log_space):
    """One Marsaglia-Tsang sample for a scalar key and a scalar alpha (JAX's _gamma_one)."""
    lax = _lax()
    dtype = alpha.dtype
    zero, one, minus_one = _const(dtype, 0), _const(dtype, 1), _const(dtype, -1)
    one_over_two, one_over_three = _const(dtype, 0.5), _const(dtype, 1.0 / 3.0)
    squeeze_const = _const(dtype, 0.0331)

    # alpha < 1 is boosted to alpha + 1: Gamma(alpha) ~ Gamma(alpha + 1) * U^(1 / alpha).
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = _select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kxvu):
        _, x, v, u = kxvu  # x and v here are X = x^2 and V = v^3
        return lax.bitwise_and(
            lax.ge(u, lax.sub(one, lax.mul(squeeze_const, lax.mul(x, x)))),
            lax.ge(lax.log(u), lax.add(lax.mul(x, one_over_two),
                                       lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))))

    def next_kxv(kxv):
        keys = _split(kxv[0])
        x = _normal(keys[1], (), dtype)
        return keys[0], x, lax.add(one, lax.mul(x, c))

    def body_fn(kxvu):
        keys = _split(kxvu[0], 3)
        k, x_key, u_key = keys[0], keys[1], keys[2]
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                                 (x_key, zero, minus_one))
        big_x = lax.mul(x, x)
        big_v = lax.mul(lax.mul(v, v), v)
        u = _uniform(u_key, (), dtype)
        return k, big_x, big_v, u

    keys = _split(key)
    key, subkey = keys[0], keys[1]
    # the initial state makes cond_fn true
    _, _, v, _ = lax.while_loop(cond_fn, body_fn, (key, zero, one, _const(dtype, 2)))
    if log_space:
        log_samples = lax.neg(_exponential(subkey, (), dtype))
        log_boost = _select(lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = lax.sub(one, _uniform(subkey, (), dtype))
    boost = _select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_sample(key, a, log_space):
    """JAX's _gamma_impl for one key: split into prod(a.shape) keys, one sampler each."""
    from tessera._src.api import vmap
    jnp = _jnp()
    shape = tuple(a.shape)
    n = _math.prod(shape)
    if n == 0:
        return jnp.zeros(shape, a.dtype)
    keys = _split(key, n)
    alphas = jnp.reshape(a, (n,))
    samples = vmap(_functools.partial(_gamma_one, log_space=log_space))(keys, alphas)
    return jnp.reshape(samples, shape)


def _gamma_grad(sample, a, log_space):
    lax = _lax()
    if log_space:
        # d log(x) = dx / x; exp(log x) can round to 0: use the smallest normal instead.
        x = lax.exp(sample)
        tiny = _const(x.dtype, _dtypes.finfo(x.dtype).tiny)
        x = _select(lax.eq(x, _const(x.dtype, 0)), _broadcast_to(tiny, x.shape), x)
        return lax.div(lax.random_gamma_grad(a, x), x)
    return lax.random_gamma_grad(a, sample)


def _make_gamma_p():
    from tessera._src.custom_derivatives import custom_jvp

    @_functools.partial(custom_jvp, nondiff_argnums=(0, 2))
    def gamma_p(key, a, log_space):
        return _gamma_sample(key, a, log_space)

    @gamma_p.defjvp
    def gamma_p_jvp(key, log_space, primals, tangents):
        (a,), (a_dot,) = primals, tangents
        out = gamma_p(key, a, log_space)
        return out, _lax().mul(a_dot, _gamma_grad(out, a, log_space))

    return gamma_p


_gamma_p = None


def _gamma(name, key, a, shape, dtype, log_space):
    global _gamma_p
    if _gamma_p is None:
        _gamma_p = _make_gamma_p()
    key = _typed_key(key, name)
    if shape is None:
        shape = _shape_of(a)
    else:
        _check_shape("gamma", shape, _shape_of(a))
    a = _broadcast_to(_convert(a, dtype), shape)
    return _gamma_p(key, a, log_space)


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
    if shape is not None:
        shape = _canonicalize_shape(shape)
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=float):
    """jax.random.loggamma: log of Gamma(a) samples, accurate for small a (the boost is applied
    in log space: log(d V) - Exponential / a). exp(loggamma(key, a)) matches gamma(key, a) to
    rounding. Equal to JAX's in distribution (as gamma)."""
    dtype = _float_dtype("gamma", dtype)  # JAX's text names `gamma` here too
    if shape is not None:
        shape = _canonicalize_shape(shape)
    return _gamma("loggamma", key, a, shape, dtype, True)


# ---------------------------------------------------------------- built on gamma

def _softmax_last(x):
    jnp, lax = _jnp(), _lax()
    x_max = jnp.max(x, -1, keepdims=True)
    unnormalized = jnp.exp(x - lax.stop_gradient(x_max))
    return unnormalized / unnormalized.sum(-1, keepdims=True)


def beta(key, a, b, shape=None, dtype=float):
    """jax.random.beta: Beta(a, b) as G_a / (G_a + G_b) from two loggamma draws (keys split(key)
    in JAX's order), scaled by the larger log so small a, b keep precision. Equal to JAX's in
    distribution (as gamma)."""
    key = _typed_key(key, "beta")
    dtype = _float_dtype("beta", dtype)
    if shape is None:
        shape = _broadcast_shapes(_shape_of(a), _shape_of(b))
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("beta", shape, _shape_of(a), _shape_of(b))
    lax = _lax()
    a = _convert(a, dtype)
    b = _convert(b, dtype)
    keys = _split(key)
    a = _broadcast_to(a, shape)
    b = _broadcast_to(b, shape)
    log_gamma_a = loggamma(keys[0], a, shape, dtype)
    log_gamma_b = loggamma(keys[1], b, shape, dtype)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = lax.exp(log_gamma_a - log_max)
    gamma_b_scaled = lax.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def dirichlet(key, alpha, shape=None, dtype=float):
    """jax.random.dirichlet: alpha has shape (..., n); the result has shape shape + (n,)
    (default alpha.shape): the softmax of loggamma(key, alpha) draws along the last axis. Equal
    to JAX's in distribution (as gamma)."""
    key = _typed_key(key, "dirichlet")
    dtype = _float_dtype("dirichlet", dtype)
    if shape is not None:
        shape = _canonicalize_shape(shape)
    alpha_shape = _shape_of(alpha)
    if not len(alpha_shape) >= 1:
        raise ValueError("dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        _check_shape("dirichlet", shape, alpha_shape[:-1])
    alpha = _convert(alpha, dtype)
    log_gamma_samples = loggamma(key, alpha, tuple(shape) + alpha_shape[-1:], dtype)
    return _softmax_last(log_gamma_samples)


def chisquare(key, df, shape=None, dtype=float):
    """jax.random.chisquare: 2 * exp(loggamma(key, df / 2)). Equal to JAX's in distribution
    (as gamma)."""
    key = _typed_key(key, "chisquare")
    dtype = _float_dtype("chisquare", dtype)
    if shape is None:
        shape = _shape_of(df)
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("chisquare", shape, _shape_of(df))
    lax = _lax()
    df = _convert(df, dtype)
    two = _const(dtype, 2)
    half_df = lax.div(df, two)
    log_g = loggamma(key, half_df, shape, dtype)
    return lax.mul(lax.exp(log_g), two)


def t(key, df, shape=(), dtype=float):
    """jax.random.t: Student's t with df degrees of freedom, n * sqrt((df/2) / g) for
    n ~ normal, g ~ gamma(df/2) (keys split(key): normal first). As in JAX, `shape` defaults to
    () and must be broadcast-compatible with df. Equal to JAX's in distribution (as gamma)."""
    key = _typed_key(key, "t")
    dtype = _float_dtype("t", dtype)
    shape = _canonicalize_shape(shape)
    _check_shape("t", shape, _shape_of(df))
    lax = _lax()
    df = _convert(df, dtype)
    keys = _split(key)
    n = _normal(keys[0], shape, dtype)
    half_df = lax.div(df, _const(dtype, 2))
    g = gamma(keys[1], half_df, shape, dtype)
    return n * lax.sqrt(half_df / g)


def f(key, dfnum, dfden, shape=None, dtype=float):
    """jax.random.f: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden), keys
    split(key) = (denominator's, numerator's) as JAX. Equal to JAX's in distribution (as
    gamma)."""
    key = _typed_key(key, "f")
    dtype = _float_dtype("f", dtype)
    if shape is None:
        shape = _broadcast_shapes(_shape_of(dfden), _shape_of(dfnum))
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("f", shape, _shape_of(dfden), _shape_of(dfnum))
    lax = _lax()
    dfden = _convert(dfden, dtype)
    dfnum = _convert(dfnum, dtype)
    keys = _split(key)
    chi2_dfn = chisquare(keys[1], dfnum, shape, dtype)
    chi2_dfd = chisquare(keys[0], dfden, shape, dtype)
    dfden = _broadcast_to(dfden, shape)
    dfnum = _broadcast_to(dfnum, shape)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


def generalized_normal(key, p, shape=(), dtype=float):
    """jax.random.generalized_normal: density proportional to exp(-|x|^p), as
    rademacher * gamma(1/p)^(1/p) (keys split(key): gamma first). Equal to JAX's in
    distribution (as gamma)."""
    shape = _canonicalize_shape(shape)
    key = _typed_key(key, "generalized_normal")
    dtype = _float_dtype("generalized_normal", dtype)
    _check_shape("generalized_normal", shape)
    keys = _split(key)
    g = gamma(keys[0], 1 / p, shape, dtype)
    r = _rnd().rademacher(keys[1], shape, _dtypes.dtype_arg(dtype))
    return r * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=float):
    """jax.random.ball: uniform on the unit Lp ball in d dimensions, shape shape + (d,):
    g / (sum |g|^p + e)^(1/p) with g ~ generalized_normal(p) and e ~ exponential (Barthe et al.,
    keys split(key) as JAX). Equal to JAX's in distribution (as gamma)."""
    shape = _canonicalize_shape(shape)
    key = _typed_key(key, "ball")
    dtype = _float_dtype("ball", dtype)
    _check_shape("ball", shape)
    try:
        d = _operator.index(d)
    except TypeError:
        raise TypeError("The error occurred in jax.random.ball(): d must be a concrete "
                        f"integer, got {d!r}") from None
    jnp = _jnp()
    keys = _split(key)
    g = generalized_normal(keys[0], p, (*shape, d), dtype)
    e = _exponential(keys[1], shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# ---------------------------------------------------------------- poisson

def _poisson_knuth(key, lam, shape, dtype, max_iters):
    # Knuth: count uniforms until their product drops below exp(-lam).
    lax, jnp = _lax(), _jnp()
    neg_lam = lax.neg(lam)

    def body_fn(carry):
        i, k, rng, log_prod = carry
        keys = _split(rng)
        rng, subkey = keys[0], keys[1]
        k = _select(lax.gt(log_prod, neg_lam), k + 1, k)
        u = _uniform(subkey, shape, _np.float32)
        return i + 1, k, rng, log_prod + lax.log(u)

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.logical_and(lax.gt(log_prod, neg_lam).any(), i < max_iters)

    k_init = jnp.zeros(shape, dtype)
    log_rate_init = jnp.zeros(shape, _np.float32)
    k = lax.while_loop(cond_fn, body_fn, (_const("int32", 0), k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    # Hormann's transformed rejection (PTRS).
    lax, jnp = _lax(), _jnp()
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry):
        i, k_out, accepted, k0 = carry
        keys = _split(k0, 3)
        u = _uniform(keys[1], shape, lam.dtype) - 0.5
        v = _uniform(keys[2], shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t_ = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t_
        accept = accept1 | (~reject & accept2)
        k_out = _select(accept, k, k_out)
        accepted = accepted | accept
        return i + 1, k_out, accepted, keys[0]

    def cond_fn(carry):
        i, _, accepted, _ = carry
        return jnp.logical_and((~accepted).any(), i < max_iters)

    k_init = jnp.full(shape, -1, lam.dtype)
    accepted = jnp.zeros(shape, bool)
    k = lax.while_loop(cond_fn, body_fn, (_const("int32", 0), k_init, accepted, key))[1]
    return k.astype(dtype)


def poisson(key, lam, shape=None, dtype=int):
    """jax.random.poisson: Poisson(lam) counts (lam >= 0; computed in float32 as JAX). JAX's
    algorithm: Knuth's product of uniforms where lam < 10 (or nan), Hormann's transformed
    rejection elsewhere, both run over the whole array with one key stream each (split per
    iteration) and merged by select; lam == 0 gives 0. Knuth's counts depend only on uniforms
    (bit-exact) and float32 log, the rejection branch also on lgamma: equal to JAX's in
    distribution, and sample for sample wherever those kernels round as XLA's do."""
    key = _typed_key(key, "poisson")
    if not _is_kind(dtype, _np.integer):
        raise ValueError(f"dtype argument to `poisson` must be an int dtype, got {dtype}")
    dtype = _dtypes.canonicalize_dtype(_dtypes.dtype_arg(dtype))
    if shape is not None:
        shape = _canonicalize_shape(shape)
    else:
        shape = _shape_of(lam)
    lam = _broadcast_to(lam, shape)
    lam = _convert(lam, _np.float32)
    use_knuth = (lam != lam) | (lam < 10)
    lam_knuth = _select(use_knuth, lam, _broadcast_to(_const("float32", 0.0), shape))
    lam_rejection = _select(use_knuth, _broadcast_to(_const("float32", 1e5), shape), lam)
    max_iters = _const("int32", min(int(_np.iinfo(dtype).max), _INT32_MAX))
    result = _select(use_knuth,
                        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return _select(lam == 0, _broadcast_to(_const(dtype, 0), shape), result)


# ---------------------------------------------------------------- binomial

_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287]


def _stirling_approx_tail(k):
    lax, jnp = _lax(), _jnp()
    vals = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_tail_values = k <= 9
    k = lax.clamp(_const(k.dtype, 0.0), k, _const(k.dtype, 9.0))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = lax.floor(k)
    return _select(use_tail_values, vals[k.astype(_np.int32)], approx)


def _binomial_inversion(key, count, prob, shape, max_iters):
    lax, jnp = _lax(), _jnp()
    log1minusprob = lax.log1p(-prob)

    def body_fn(carry):
        i, num_geom, geom_sum, k0 = carry
        keys = _split(k0)  # JAX uses (subkey, key) = split(key) here
        num_geom_out = _select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(keys[0], shape, prob.dtype)
        geom = lax.ceil(lax.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, keys[1]

    def cond_fn(carry):
        i, geom_sum = carry[0], carry[2]
        return jnp.logical_and((geom_sum <= count).any(), i < max_iters)

    zeros = jnp.zeros(shape, prob.dtype)
    k = lax.while_loop(cond_fn, body_fn, (_const("int32", 0), zeros, zeros, key))[1]
    return k - 1


def _btrs(key, count, prob, shape, max_iters):
    # Hormann's BTRS transformed rejection.
    lax, jnp = _lax(), _jnp()
    stddev = lax.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = lax.floor((count + 1) * prob)

    def body_fn(carry):
        i, k_out, accepted, k0 = carry
        keys = _split(k0, 3)
        u = _uniform(keys[1], shape, prob.dtype)
        v = _uniform(keys[2], shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = lax.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = lax.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * lax.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * lax.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * lax.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | (~reject & accept2)
        k_out = _select(accept, k, k_out)
        return i + 1, k_out, accepted | accept, keys[0]

    def cond_fn(carry):
        i, accepted = carry[0], carry[2]
        return jnp.logical_and((~accepted).any(), i < max_iters)

    k_init = jnp.full(shape, -1, prob.dtype)
    carry = (_const("int32", 0), k_init, jnp.zeros(shape, bool), key)
    return lax.while_loop(cond_fn, body_fn, carry)[1]


def binomial(key, n, p, shape=None, dtype=float):
    """jax.random.binomial: Binomial(n, p) counts as floats (JAX's dtype). JAX's algorithm
    (TensorFlow's): q = min(p, 1 - p); inversion by sums of geometric draws where n q <= 10,
    Hormann's BTRS elsewhere, merged by select, then n - k where p > 1/2; nan p, p < 0, nan or
    negative n give nan, infinite n gives inf. Equal to JAX's in distribution (log and the
    rejection test are Tessera's float32 kernels)."""
    key = _typed_key(key, "binomial")
    dtype = _float_dtype("binomial", dtype)
    lax, jnp = _lax(), _jnp()
    if shape is None:
        shape = _broadcast_shapes(_shape_of(n), _shape_of(p))
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("binomial", shape, _shape_of(n), _shape_of(p))
    prob = _float_of(p)
    count = _convert(n, prob.dtype)
    count = _broadcast_to(count, shape)
    prob = _broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = _select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = (count != count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = q != q
    q_l_0 = q < 0.0
    q = _select(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = lax.floor(count)
    count_inv = _select(use_inversion, count, jnp.full_like(count, 0.0))
    count_btrs = _select(use_inversion, jnp.full_like(count, 1e4), count)
    q_btrs = _select(use_inversion, jnp.full_like(q, 0.5), q)
    max_iters = _const("int32", _INT32_MAX)
    samples = _select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, max_iters))
    samples = _convert(samples, dtype)
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = _select(invalid, jnp.full_like(samples, _np.nan), samples)
    samples = _select(count_inf & ~invalid, jnp.full_like(samples, _np.inf), samples)
    return _select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      _convert(count, dtype) - samples)


# ---------------------------------------------------------------- closed forms

def lognormal(key, sigma=1.0, shape=None, dtype=float):
    """jax.random.lognormal: exp(sigma * normal). Equal to JAX's in distribution (normal is
    within an ulp or two of JAX's; exp is Tessera's kernel)."""
    key = _typed_key(key, "lognormal")
    if not _is_kind(dtype, _np.inexact):
        raise ValueError("dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    dtype = _dtypes.canonicalize_dtype(_dtypes.dtype_arg(dtype))
    if shape is None:
        shape = _shape_of(sigma)
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("triangular", shape, _shape_of(sigma))  # (sic) JAX's text
    sigma = _broadcast_to(_convert(sigma, dtype), shape)
    return _lax().exp(_normal(key, shape, dtype) * sigma)


def pareto(key, b, shape=None, dtype=float):
    """jax.random.pareto: exp(exponential / b), support [1, inf). Equal to JAX's in
    distribution (exponential's bits are JAX's; exp is Tessera's kernel)."""
    key = _typed_key(key, "pareto")
    dtype = _float_dtype("pareto", dtype)
    if shape is None:
        shape = _shape_of(b)
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("pareto", shape)  # JAX does not check b against shape here
    b = _convert(b, dtype)
    return _lax().exp(_exponential(key, shape, dtype) / b)


def maxwell(key, shape=(), dtype=float):
    """jax.random.maxwell: the norm of three standard normals (one-sided Maxwell). Equal to
    JAX's in distribution (normal within an ulp or two)."""
    key = _typed_key(key, "maxwell")
    dtype = _float_dtype("maxwell", dtype)
    shape = _canonicalize_shape(shape)
    norm_rvs = _normal(key, shape + (3,), dtype)
    return _jnp().linalg.norm(norm_rvs, axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=float):
    """jax.random.double_sided_maxwell: sign * maxwell * scale + loc (keys split(key): maxwell
    first). As in JAX the output shape is shape + broadcast(loc, scale).shape, where an empty
    `shape` is first replaced by the parameters' shape. Equal to JAX's in distribution."""
    key = _typed_key(key, "double_sided_maxwell")
    dtype = _float_dtype("double_sided_maxwell", dtype, kind="float")
    shape = _canonicalize_shape(shape)
    params_shapes = _broadcast_shapes(_shape_of(loc), _shape_of(scale))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    keys = _split(key)
    maxwell_rvs = maxwell(keys[0], shape, dtype)
    random_sign = _rnd().rademacher(keys[1], shape, _dtypes.dtype_arg(dtype))
    return random_sign * maxwell_rvs * scale + loc


def geometric(key, p, shape=None, dtype=int):
    """jax.random.geometric: trials up to the first success, floor(log(u) / log1p(-p)) + 1.
    Equal to JAX's in distribution (uniform's bits are JAX's; log/log1p are Tessera's)."""
    key = _typed_key(key, "geometric")
    dtype = _int_dtype("geometric", dtype)
    if shape is None:
        shape = _shape_of(p)
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("geometric", shape, _shape_of(p))
    lax = _lax()
    p = _float_of(p)
    u = _uniform(key, shape, p.dtype)
    log_one_minus_p = _broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)


def triangular(key, left, mode, right, shape=None, dtype=float):
    """jax.random.triangular: inverse-CDF sampling of the triangular distribution on
    [left, right] with peak `mode`. Bit-identical to JAX's for float32 parameters (one uniform,
    bit-exact, then +, -, *, / and sqrt, all correctly rounded)."""
    key = _typed_key(key, "triangular")
    dtype = _float_dtype("triangular", dtype)
    if shape is None:
        shape = _broadcast_shapes(_shape_of(left), _shape_of(mode), _shape_of(right))
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("triangular", shape, _shape_of(left), _shape_of(mode), _shape_of(right))
    lax = _lax()
    left = _broadcast_to(_convert(left, dtype), shape)
    mode = _broadcast_to(_convert(mode, dtype), shape)
    right = _broadcast_to(_convert(right, dtype), shape)
    fc = (mode - left) / (right - left)
    u = _uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return _select(u < fc, out1, out2)


def wald(key, mean, shape=None, dtype=float):
    """jax.random.wald: the inverse Gaussian with unit shape parameter (Michael, Schucany and
    Haas: one normal, one uniform, keys split(key)). Equal to JAX's in distribution."""
    key = _typed_key(key, "wald")
    dtype = _float_dtype("wald", dtype)
    if shape is None:
        shape = _shape_of(mean)
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("wald", shape, _shape_of(mean))
    lax = _lax()
    keys = _split(key, 2)
    mean = _broadcast_to(_convert(mean, dtype), shape)
    v = _normal(keys[0], shape, dtype)
    z = _uniform(keys[1], shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return _select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """jax.random.multivariate_normal: mean + A z with z standard normal of shape
    shape + mean.shape[-1:] and A a factor of cov (A A^T = cov): its Cholesky factor, or
    V sqrt(W) from eigh, or U sqrt(S) from svd, as JAX's `method`. Equal to JAX's in
    distribution (normal within an ulp or two of JAX's; LAPACK's factors)."""
    jnp = _jnp()
    la = jnp.linalg
    key = _typed_key(key, "multivariate_normal")
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if dtype is None:
        dtype = _dtypes.canonicalize_dtype(_dtypes.dtype_arg(float))
        mean_dt = getattr(mean, "dtype", None)
        if mean_dt is not None and _is_kind(mean_dt, _np.floating):
            dtype = _dtypes.canonicalize_dtype(_dtypes.dtype_arg(mean_dt))
    else:
        dtype = _float_dtype("multivariate_normal", dtype)
    mean = _convert(mean, dtype)
    cov = _convert(cov, dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    n = mean.shape[-1]
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but "
                         f"got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = _broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("multivariate_normal", shape, tuple(mean.shape[:-1]),
                     tuple(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = la.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = la.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = la.cholesky(cov)
    z = _normal(key, tuple(shape) + (n,), dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)
