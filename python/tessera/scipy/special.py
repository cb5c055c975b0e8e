"""tessera.scipy.special: jax.scipy.special's functions (`jax.scipy.special.gammaln`, ...).

Every function is the C++ tessera::scipy::special function of the same name
(include/tessera/scipy_special.h, src/api/scipy_special*.cpp), which computes it as a
composition of lax primitives (so jit, vmap and grad work through it), promotes its arguments as
JAX's promote_args_inexact (integers and bools become the default float) and carries JAX's
custom derivatives (xlogy / xlog1py / x*log(x) at x = 0, logit, log_ndtr, ...). This module
keeps what C++ cannot see: Python scalars and sequences, complex inputs, keyword names and
defaults, Python-int parameters.
"""
import operator as _operator

import numpy as _np

from tessera import _tessera
from tessera import numpy as _jnp

_C = _tessera.scipy_special

__all__ = [
    "bernoulli", "beta", "betainc", "betaln", "digamma", "entr", "erf", "erfc", "erfinv",
    "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn", "i0", "i0e",
    "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln",
    "ndtr", "ndtri", "poch", "polygamma", "rel_entr", "softmax", "xlog1py", "xlogy", "zeta",
    "exp1", "expi", "expn", "fresnel", "hyp1f1", "hyp2f1", "lpmn", "lpmn_values", "spence",
    "sph_harm", "sph_harm_y",
]


# ---- argument promotion ----

def _is_float(dtype):
    return getattr(dtype, "kind", "") == "f" or getattr(dtype, "name", "") == "bfloat16"


def _check_real_args(fun_name, *args):
    """The checks C++ cannot make on Python values (also tessera.scipy.stats's): no complex
    values (Tessera has no complex dtypes) and nothing that is not array-like."""
    for a in args:
        if _jnp.iscomplexobj(a):
            raise TypeError(f"{fun_name}: complex inputs are not supported (Tessera has no "
                            "complex dtypes); pass real values")
        if isinstance(a, str) or (not hasattr(a, "dtype") and not isinstance(
                a, (int, float, bool, list, tuple, _np.generic))):
            raise TypeError(f"{fun_name}: expected array-like numeric arguments, got "
                            f"{type(a).__name__}")
    return args


def _promote_args_inexact(fun_name, *args):
    """JAX's promote_args_inexact: the arguments as Arrays of one inexact dtype (their jnp
    result type, or the float dtype JAX's to_inexact_dtype gives an integer or bool one)."""
    _check_real_args(fun_name, *args)
    dtype = _jnp.result_type(*args)
    if not _is_float(dtype):
        # JAX's dtypes.to_inexact_dtype: 64-bit integers become float64 (canonicalized), every
        # narrower integer and bool float32 — also under x64 (int32 -> float32)
        wide = _np.dtype(dtype).itemsize == 8 and _np.dtype(dtype).kind in "iu"
        dtype = _jnp.result_type(_np.float64 if wide else _np.float32)
    return tuple(a.astype(dtype) if isinstance(a, _jnp.ndarray) and a.dtype != dtype
                 else _jnp.asarray(a, dtype) if not isinstance(a, _jnp.ndarray) else a
                 for a in args)


def _const(x, v):
    """v as a rank-0 Array of x's dtype."""
    return _jnp.asarray(v, x.dtype)


def _args(fun_name, *args):
    """The arguments as C++ receives them: promoted here (jnp's result type, the default float
    for integers and bools), so that Python scalars, sequences and NumPy values follow this
    module's rules; C++ then sees one inexact dtype."""
    return _promote_args_inexact(fun_name, *args)


def _unary(name, doc):
    def f(x):
        return getattr(_C, name)(*_args(name, x))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


# ---- gamma and beta functions ----

gammaln = _unary("gammaln", "log|Gamma(x)|.")
gammasgn = _unary("gammasgn", """The sign of Gamma(x): +-1 at +-0, 1 at +inf, NaN at -inf, at
    negative integers and at NaN; for negative non-integers -1 where floor(x) is odd.""")
gamma = _unary("gamma", "Gamma(x) = gammasgn(x) * exp(gammaln(x)): +-inf at +-0, NaN at "
               "negative integers.")
digamma = _unary("digamma", "psi(x) = d/dx log Gamma(x).")


def betaln(a, b):
    """log|B(a, b)|. When an argument is >= 8 the lgamma terms that would cancel are combined
    analytically through Stirling's series, so large arguments keep their accuracy."""
    return _C.betaln(*_args("betaln", a, b))


def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), with its sign."""
    return _C.beta(*_args("beta", a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return _C.betainc(*_args("betainc", a, b, x))


def factorial(n, exact=False):
    """n! = Gamma(n + 1) as a float; 0 for n < 0. exact=True is not supported (as JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    return _C.factorial(*_args("factorial", n), False)


def poch(z, m):
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z); 1 where m == 0."""
    return _C.poch(*_args("poch", z, m))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a Python int):
    d(d-1)/4 log(pi) + sum_j gammaln(a - j/2), j = 0..d-1."""
    try:
        d = _operator.index(d)
    except TypeError:
        raise TypeError(f"multigammaln: d must be a concrete Python integer, got "
                        f"{type(d).__name__}") from None
    return _C.multigammaln(*_args("multigammaln", a), d)


def polygamma(n, x):
    """The n-th derivative of digamma; n must have an integer dtype (as JAX asserts)."""
    if _is_float(_jnp.result_type(n)):
        raise TypeError(f"polygamma: n must be an integer array or Python int, got dtype "
                        f"{_jnp.result_type(n)}; pass n.astype(jnp.int32)")
    _, x = _args("polygamma", n, x)
    return _C.polygamma(_jnp.asarray(n), x)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (q is required: no Riemann zeta, as JAX)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    return _C.zeta(*_args("zeta", x, q))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return _C.gammainc(*_args("gammainc", a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _C.gammaincc(*_args("gammaincc", a, x))


# ---- error function and the normal distribution ----

erf = _unary("erf", "The error function 2/sqrt(pi) int_0^x exp(-t^2) dt.")
erfc = _unary("erfc", "1 - erf(x), accurate for large x.")
erfinv = _unary("erfinv", "The inverse of erf.")


def ndtr(x):
    """The standard normal CDF, 0.5 * erfc(-x / sqrt(2)); float32/float64 inputs only."""
    return _C.ndtr(_jnp.asarray(x))


def ndtri(p):
    """The inverse of ndtr: x with ndtr(x) = p; -inf at 0, inf at 1, NaN outside [0, 1]."""
    return _C.ndtri(_jnp.asarray(p))


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate in both tails (an asymptotic series below -10 in float32, -20 in
    float64); its derivative is exp(log phi(x) - log_ndtr(x)), as JAX's custom JVP."""
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _C.log_ndtr(_jnp.asarray(x), series_order)


# ---- modified Bessel functions ----

i0e = _unary("i0e", "exp(-|x|) I0(x).")
i0 = _unary("i0", "I0(x) = exp(|x|) i0e(x).")
i1e = _unary("i1e", "exp(-|x|) I1(x).")
i1 = _unary("i1", "I1(x) = exp(|x|) i1e(x).")


# ---- logistic functions ----

logit = _unary("logit", "log(x / (1 - x)); its derivative is 1 / (x (1 - x)) (JAX's custom "
               "JVP).")
expit = _unary("expit", "1 / (1 + exp(-x)) (lax.logistic).")


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over axis, stable; with return_sign, (log|sum|, sign of the sum).
    A negative sum without return_sign gives NaN (as JAX)."""
    return _C.logsumexp(a, axis, b, bool(keepdims), bool(return_sign), where)


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over axis (all axes by default, as scipy's)."""
    return _C.softmax(x, axis)


def log_softmax(x, axis=None):
    """x - logsumexp(x) over axis (all axes by default, as scipy's)."""
    return _C.log_softmax(x, axis)


# ---- information theory ----

def xlogy(x, y):
    """x * log(y), 0 where x == 0 (even for y == 0). Derivative (JAX's custom JVP):
    dx * log(y) + dy * x / y."""
    return _C.xlogy(*_args("xlogy", x, y))


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (even for y == -1). Derivative (JAX's custom JVP):
    dx * log1p(y) + dy * x / (1 + y)."""
    return _C.xlog1py(*_args("xlog1py", x, y))


entr = _unary("entr", "-x log(x) for x > 0, 0 at 0, -inf for x < 0.")


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 for p == 0, q >= 0; inf otherwise."""
    return _C.rel_entr(*_args("rel_entr", p, q))


def kl_div(p, q):
    """p log(p / q) - p + q for p, q > 0; q for p == 0, q >= 0; inf otherwise."""
    return _C.kl_div(*_args("kl_div", p, q))


# ---- Bernoulli numbers ----

def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2) as an array of the default float dtype;
    n is a concrete Python integer."""
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError(f"bernoulli: n must be a concrete Python integer, got "
                        f"{type(n).__name__}") from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    return _C.bernoulli(n)


# exponential integrals, Spence's function, hypergeometric functions, Legendre functions and
# Fresnel integrals live in their own modules (imported last: they use the helpers above)
from tessera.scipy._special_expint import exp1, expi, expn, spence  # noqa: E402,F401
from tessera.scipy._special_hyp import hyp1f1, hyp2f1  # noqa: E402,F401
from tessera.scipy._special_legendre import (  # noqa: E402,F401
    fresnel, lpmn, lpmn_values, sph_harm, sph_harm_y)
