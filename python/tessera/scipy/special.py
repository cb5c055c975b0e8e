"""tessera.scipy.special: jax.scipy.special's functions (`jax.scipy.special.gammaln`, ...).

Each function is a short composition of tessera.lax primitives (lgamma, igamma, erf_inv,
bessel_i0e, betainc, ...) and jax.numpy, as JAX's own Python layer is; transformations (jit,
vmap, grad) come from the composition. Arguments are promoted as JAX's promote_args_inexact:
integers and bools become the default float (float32, float64 under jax_enable_x64). The custom
derivatives are JAX's: xlogy / xlog1py / x*log(x) at x = 0, logit, log_ndtr.
"""
import functools as _functools
import math as _math
import operator as _operator
from fractions import Fraction as _Fraction

import numpy as _np

from tessera import lax as _lax
from tessera import nn as _nn
from tessera import numpy as _jnp
from tessera._src.custom_derivatives import custom_jvp as _custom_jvp

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


def _promote_args_inexact(fun_name, *args):
    """JAX's promote_args_inexact: the arguments as Arrays of one inexact dtype (their jnp
    result type, or the default float when that is integer or bool)."""
    for a in args:
        if _jnp.iscomplexobj(a):
            raise TypeError(f"{fun_name}: complex inputs are not supported (Tessera has no "
                            "complex dtypes); pass real values")
        if isinstance(a, str) or (not hasattr(a, "dtype") and not isinstance(
                a, (int, float, bool, list, tuple, _np.generic))):
            raise TypeError(f"{fun_name}: expected array-like numeric arguments, got "
                            f"{type(a).__name__}")
    dtype = _jnp.result_type(*args)
    if not _is_float(dtype):
        dtype = _jnp.result_type(dtype, 1.0)
    return tuple(a.astype(dtype) if isinstance(a, _jnp.ndarray) and a.dtype != dtype
                 else _jnp.asarray(a, dtype) if not isinstance(a, _jnp.ndarray) else a
                 for a in args)


def _const(x, v):
    """v as a rank-0 Array of x's dtype."""
    return _jnp.asarray(v, x.dtype)


def _check_f32_f64(fun_name, x):
    """ndtr, ndtri and log_ndtr accept float32 and float64 only, as JAX's (no promotion)."""
    x = _jnp.asarray(x)
    if x.dtype not in (_jnp.float32, _jnp.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        f"types. ({fun_name} takes float32 or float64; convert with "
                        "x.astype(jnp.float32))")
    return x


# ---- gamma and beta functions ----

def gammaln(x):
    """log|Gamma(x)|."""
    x, = _promote_args_inexact("gammaln", x)
    return _lax.lgamma(x)


def gammasgn(x):
    """The sign of Gamma(x): +-1 at +-0, 1 at +inf, NaN at -inf, at negative integers and at
    NaN; for negative non-integers -1 where floor(x) is odd."""
    x, = _promote_args_inexact("gammasgn", x)
    floor_x = _jnp.floor(x)
    pole = ((x < 0) & (floor_x == x)) | _jnp.isnan(x)
    neg_odd = (x < 0) & (_jnp.remainder(floor_x, 2) != 0)
    one = _jnp.where(_jnp.signbit(x) & (x == 0), _const(x, -1), _const(x, 1))
    return _jnp.where(pole, _const(x, _np.nan), _jnp.where(neg_odd, _const(x, -1), one))


def gamma(x):
    """Gamma(x) = gammasgn(x) * exp(gammaln(x)): +-inf at +-0, NaN at negative integers."""
    x, = _promote_args_inexact("gamma", x)
    return gammasgn(x) * _lax.exp(_lax.lgamma(x))


def _lgamma_correction(x):
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 8 (Stirling's series)."""
    r = 1.0 / x
    r2 = r * r
    return r * (1.0 / 12 + r2 * (-1.0 / 360 + r2 * (1.0 / 1260 + r2 * (-1.0 / 1680 + r2 * (
        1.0 / 1188 + r2 * (-691.0 / 360360))))))


def betaln(a, b):
    """log|B(a, b)|. When an argument is >= 8 the lgamma terms that would cancel are combined
    analytically through Stirling's series, so large arguments keep their accuracy."""
    a, b = _promote_args_inexact("betaln", a, b)
    lo = _jnp.minimum(a, b)
    hi = _jnp.maximum(a, b)
    big = 8.0
    # both >= 8: 0.5 log(2 pi) + (lo - 1/2) log(lo/s) + (hi - 1/2) log(hi/s) - 0.5 log s + corr
    lo_b = _jnp.where(lo >= big, lo, _const(lo, big))
    hi_b = _jnp.where(lo >= big, hi, _const(hi, big))
    s_b = lo_b + hi_b
    both = (0.5 * _math.log(2 * _math.pi) - 0.5 * _jnp.log(s_b)
            + (lo_b - 0.5) * _jnp.log(lo_b / s_b) + (hi_b - 0.5) * _jnp.log1p(-lo_b / s_b)
            + _lgamma_correction(lo_b) + _lgamma_correction(hi_b) - _lgamma_correction(s_b))
    # 0 < lo < 8 <= hi: lgamma(lo) + Stirling for lgamma(hi) - lgamma(lo + hi)
    one_ok = (lo > 0) & (lo < big) & (hi >= big)
    lo_o = _jnp.where(one_ok, lo, _const(lo, 1))
    hi_o = _jnp.where(one_ok, hi, _const(hi, big))
    s_o = lo_o + hi_o
    one = (_lax.lgamma(lo_o) + (hi_o - 0.5) * _jnp.log1p(-lo_o / s_o) - lo_o * _jnp.log(s_o)
           + lo_o + _lgamma_correction(hi_o) - _lgamma_correction(s_o))
    direct = _lax.lgamma(a) + _lax.lgamma(b) - _lax.lgamma(a + b)
    return _jnp.where(lo >= big, both, _jnp.where(one_ok, one, direct))


def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), with its sign."""
    a, b = _promote_args_inexact("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * _lax.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = _promote_args_inexact("betainc", a, b, x)
    return _lax.betainc(a, b, x)


def factorial(n, exact=False):
    """n! = Gamma(n + 1) as a float; 0 for n < 0. exact=True is not supported (as JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = _promote_args_inexact("factorial", n)
    return _jnp.where(n < 0, _const(n, 0), _lax.exp(_lax.lgamma(n + 1)))


def poch(z, m):
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z); 1 where m == 0."""
    z, m = _promote_args_inexact("poch", z, m)
    return _jnp.where(m == 0, _const(z, 1), gamma(z + m) / gamma(z))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a Python int):
    d(d-1)/4 log(pi) + sum_j gammaln(a - j/2), j = 0..d-1."""
    try:
        d = _operator.index(d)
    except TypeError:
        raise TypeError(f"multigammaln: d must be a concrete Python integer, got "
                        f"{type(d).__name__}") from None
    a, = _promote_args_inexact("multigammaln", a)
    constant = 0.25 * d * (d - 1) * _math.log(_math.pi)
    offsets = _jnp.asarray(_np.arange(d) / 2.0, a.dtype)
    terms = _lax.lgamma(_jnp.expand_dims(a, -1) - offsets)
    return _jnp.sum(terms, axis=-1) + _const(a, constant)


def digamma(x):
    """psi(x) = d/dx log Gamma(x)."""
    x, = _promote_args_inexact("digamma", x)
    return _lax.digamma(x)


def polygamma(n, x):
    """The n-th derivative of digamma; n must have an integer dtype (as JAX asserts)."""
    if _is_float(_jnp.result_type(n)):
        raise TypeError(f"polygamma: n must be an integer array or Python int, got dtype "
                        f"{_jnp.result_type(n)}; pass n.astype(jnp.int32)")
    n, x = _promote_args_inexact("polygamma", n, x)
    return _lax.polygamma(n, x)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (q is required: no Riemann zeta, as JAX)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = _promote_args_inexact("zeta", x, q)
    return _lax.zeta(x, q)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = _promote_args_inexact("gammainc", a, x)
    return _lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = _promote_args_inexact("gammaincc", a, x)
    return _lax.igammac(a, x)


# ---- error function and the normal distribution ----

def erf(x):
    x, = _promote_args_inexact("erf", x)
    return _lax.erf(x)


def erfc(x):
    x, = _promote_args_inexact("erfc", x)
    return _lax.erfc(x)


def erfinv(x):
    x, = _promote_args_inexact("erfinv", x)
    return _lax.erf_inv(x)


def _ndtr(x):
    half_sqrt_2 = 0.5 * _math.sqrt(2.0)
    w = x * _const(x, half_sqrt_2)
    z = _jnp.abs(w)
    # erf near 0, erfc in the tails (1 - erf would cancel there).
    y = _jnp.where(z < half_sqrt_2, 1.0 + _lax.erf(w),
                   _jnp.where(w > 0, 2.0 - _lax.erfc(z), _lax.erfc(z)))
    return 0.5 * y


def ndtr(x):
    """The standard normal CDF, 0.5 * erfc(-x / sqrt(2)); float32/float64 inputs only."""
    return _ndtr(_check_f32_f64("ndtr", x))


# Cephes ndtri.c (S. Moshier) rational approximations, coefficients highest degree first; the
# Q polynomials have an implicit leading 1.
_NDTRI_P0 = [-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
             1.39312609387279679503e1, -1.23916583867381258016e0]
_NDTRI_Q0 = [1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
             -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
             1.59056225126211695515e1, -1.18331621121330003142e0]
_NDTRI_P1 = [4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
             4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
             -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4]
_NDTRI_Q1 = [1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
             1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
             -3.80806407691578277194e-2, -9.33259480895457427372e-4]
_NDTRI_P2 = [3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
             1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
             3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9]
_NDTRI_Q2 = [6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
             2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
             2.89247864745380683936e-6, 6.79019408009981274425e-9]


def _horner(x, coeffs, monic=False):
    """sum c_i x^(n-i) (highest degree first); monic adds an implicit leading 1."""
    acc = _jnp.ones_like(x) if monic else _const(x, coeffs[0])
    for c in (coeffs if monic else coeffs[1:]):
        acc = acc * x + _const(x, c)
    return acc


def _ndtri(p):
    exp_m2 = _math.exp(-2.0)
    upper = p > 1.0 - exp_m2
    # The tail probability (p or 1 - p), kept away from 0 so that unused branches stay finite.
    y = _jnp.where(upper, 1.0 - p, p)
    y = _jnp.where((y > 0) & (y <= 1), y, _const(y, 0.5))
    # central region: x = sqrt(2 pi) (w + w^3 P0(w^2) / Q0(w^2)), w = p - 1/2
    w = y - 0.5
    w2 = w * w
    central = (w + w * w2 * _horner(w2, _NDTRI_P0) / _horner(w2, _NDTRI_Q0, True)) * \
        _math.sqrt(2 * _math.pi)
    # tails: z = sqrt(-2 log y), x = z - log(z)/z - (1/z) P(1/z) / Q(1/z)
    z = _jnp.sqrt(-2.0 * _jnp.log(y))
    t = 1.0 / z
    near = t * _horner(t, _NDTRI_P1) / _horner(t, _NDTRI_Q1, True)
    far = t * _horner(t, _NDTRI_P2) / _horner(t, _NDTRI_Q2, True)
    tail = z - _jnp.log(z) / z - _jnp.where(z < 8.0, near, far)
    x = _jnp.where(~upper & (p > exp_m2), central, _jnp.where(upper, tail, -tail))
    x = _jnp.where(p == 0, _const(p, -_np.inf), _jnp.where(p == 1, _const(p, _np.inf), x))
    return _jnp.where((p < 0) | (p > 1) | _jnp.isnan(p), _const(p, _np.nan), x)


def ndtri(p):
    """The inverse of ndtr: x with ndtr(x) = p; -inf at 0, inf at 1, NaN outside [0, 1]."""
    return _ndtri(_check_f32_f64("ndtri", p))


# Below the lower bound log_ndtr uses the asymptotic series; above the upper bound
# log(1 - ndtr(-x)) ~ -ndtr(-x) (JAX's bounds: where ndtr underflows / rounds to 1).
_LOG_NDTR_BOUNDS = {"float32": (-10.0, 5.0), "float64": (-20.0, 8.0)}


def _norm_logpdf(x):
    return -0.5 * x * x - _const(x, 0.5 * _math.log(2 * _math.pi))


def _log_ndtr_lower(x, series_order):
    """log ndtr(x) for x << -1: log(phi(x) / -x) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))."""
    x2 = x * x
    log_scale = -0.5 * x2 - _jnp.log(-x) - _const(x, 0.5 * _math.log(2 * _math.pi))
    series = _jnp.ones_like(x)
    x2n = x2
    double_fact = 1
    for n in range(1, series_order + 1):
        double_fact *= 2 * n - 1
        term = _const(x, float(double_fact)) / x2n
        series = series - term if n % 2 else series + term
        x2n = x2n * x2
    return log_scale + _jnp.log(series)


@_functools.lru_cache(maxsize=None)
def _log_ndtr_fun(series_order):
    @_custom_jvp
    def f(x):
        lower, upper = _LOG_NDTR_BOUNDS[x.dtype.name]
        # Between the bounds: log(ndtr(x)) below 0, log1p(-ndtr(-x)) above (JAX takes the
        # log of ndtr there too, which loses the digits of a result near 0).
        mid = _jnp.minimum(_jnp.maximum(x, lower), upper)
        middle = _jnp.where(mid > 0, _jnp.log1p(-_ndtr(-mid)), _jnp.log(_ndtr(mid)))
        return _jnp.where(x > upper, -_ndtr(-x),
                          _jnp.where(x > lower, middle,
                                     _log_ndtr_lower(_jnp.minimum(x, lower), series_order)))

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        ans = f(x)
        return ans, t * _jnp.exp(_norm_logpdf(x) - ans)

    return f


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate in both tails (an asymptotic series below -10 in float32, -20 in
    float64); its derivative is exp(log phi(x) - log_ndtr(x)), as JAX's custom JVP."""
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _log_ndtr_fun(series_order)(_check_f32_f64("log_ndtr", x))


# ---- modified Bessel functions ----

def i0e(x):
    """exp(-|x|) I0(x)."""
    x, = _promote_args_inexact("i0e", x)
    return _lax.bessel_i0e(x)


def i0(x):
    """I0(x) = exp(|x|) i0e(x)."""
    x, = _promote_args_inexact("i0", x)
    return _jnp.exp(_jnp.abs(x)) * _lax.bessel_i0e(x)


def i1e(x):
    """exp(-|x|) I1(x)."""
    x, = _promote_args_inexact("i1e", x)
    return _lax.bessel_i1e(x)


def i1(x):
    """I1(x) = exp(|x|) i1e(x)."""
    x, = _promote_args_inexact("i1", x)
    return _jnp.exp(_jnp.abs(x)) * _lax.bessel_i1e(x)


# ---- logistic functions ----

@_custom_jvp
def logit(x):
    """log(x / (1 - x)); its derivative is 1 / (x (1 - x)) (JAX's custom JVP)."""
    x, = _promote_args_inexact("logit", x)
    return _jnp.log(x / (1.0 - x))


logit.defjvps(lambda g, ans, x: g / (x * (1.0 - x)))


def expit(x):
    """1 / (1 + exp(-x)) (lax.logistic)."""
    x, = _promote_args_inexact("expit", x)
    return _lax.logistic(x)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over axis, stable; with return_sign, (log|sum|, sign of the sum).
    A negative sum without return_sign gives NaN (as JAX)."""
    return _nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                         where=where)


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over axis (all axes by default, as scipy's)."""
    return _nn.softmax(x, axis=axis)


def log_softmax(x, axis=None):
    """x - logsumexp(x) over axis (all axes by default, as scipy's)."""
    return _nn.log_softmax(x, axis=axis)


# ---- information theory ----

@_custom_jvp
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (even for y == 0). Derivative (JAX's custom JVP):
    dx * log(y) + dy * x / y."""
    x, y = _promote_args_inexact("xlogy", x, y)
    return _jnp.where(x != 0, x * _jnp.log(y), _jnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlogy(x, y)
    return out, (x_dot * _jnp.log(y) + y_dot * x / y).astype(out.dtype)


@_custom_jvp
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (even for y == -1). Derivative (JAX's custom JVP):
    dx * log1p(y) + dy * x / (1 + y)."""
    x, y = _promote_args_inexact("xlog1py", x, y)
    return _jnp.where(x != 0, x * _jnp.log1p(y), _jnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlog1py(x, y)
    return out, (x_dot * _jnp.log1p(y) + y_dot * x / (1.0 + y)).astype(out.dtype)


@_custom_jvp
def _xlogx(x):
    """x log(x) with the derivative log(x) + 1 (-inf at 0, as JAX)."""
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return _xlogx(x), x_dot * (_jnp.log(x) + 1.0)


def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    x, = _promote_args_inexact("entr", x)
    return _jnp.where(x < 0, _const(x, -_np.inf), -_xlogx(x))


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 for p == 0, q >= 0; inf otherwise."""
    p, q = _promote_args_inexact("rel_entr", p, q)
    both_pos = (p > 0) & (q > 0)
    p_zero = (p == 0) & (q >= 0)
    safe_p = _jnp.where(both_pos, p, _const(p, 1))
    safe_q = _jnp.where(both_pos, q, _const(q, 1))
    val = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    return _jnp.where(both_pos, val, _jnp.where(p_zero, _const(p, 0), _const(p, _np.inf)))


def kl_div(p, q):
    """p log(p / q) - p + q for p, q > 0; q for p == 0, q >= 0; inf otherwise."""
    p, q = _promote_args_inexact("kl_div", p, q)
    return rel_entr(p, q) - p + q


# ---- Bernoulli numbers ----

def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2) as an array of the default float dtype;
    n is a concrete Python integer. Computed exactly (Akiyama-Tanigawa) and then rounded."""
    try:
        n = _operator.index(n)
    except TypeError:
        raise TypeError(f"bernoulli: n must be a concrete Python integer, got "
                        f"{type(n).__name__}") from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    out = []
    row = []
    for m in range(n + 1):
        row.append(_Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])  # B_m^+ (B_1 = +1/2)
    if n >= 1:
        out[1] = -out[1]
    return _jnp.asarray(_np.array([_fraction_to_float(v) for v in out]), _jnp.result_type(1.0))


def _fraction_to_float(v):
    try:
        return float(v)
    except OverflowError:  # |B_n| > 1.8e308 from n = 260 on
        return _math.copysign(_math.inf, v)


# ---- exponential integrals ----

_EULER = 0.5772156649015329


def _loop(cond_extra, body, state, max_iter):
    """lax.while_loop over (k, done, *rest) until every element is done or k == max_iter."""
    def cond(s):
        return (s[0] < max_iter) & ~_jnp.all(s[1]) & cond_extra(s)

    return _lax.while_loop(cond, body, state)


def _e1_positive(x):
    """E1(x) for x > 0: the power series -gamma - log x + sum (-1)^(k+1) x^k / (k k!) up to
    x = 1, the continued fraction e^-x / (x + 1 - 1 / (x + 3 - 4 / (x + 5 - ...))) (modified
    Lentz) above."""
    eps = _jnp.finfo(x.dtype).eps
    small = x <= 1
    xs = _jnp.where(small, x, 1.0)

    def sbody(s):
        k, done, term, total = s
        term = term * (-xs) / k
        add = _jnp.where(done, 0.0, -term / k)
        total = total + add
        return k + 1, done | (_jnp.abs(add) <= eps * _jnp.abs(total)), term, total

    init = (_jnp.asarray(1.0, x.dtype), ~small, _jnp.ones_like(x), -_EULER - _jnp.log(xs))
    series = _loop(lambda s: True, sbody, init, 60)[3]

    xl = _jnp.where(small, 2.0, x)
    tiny = _jnp.finfo(x.dtype).tiny / eps

    def cbody(s):
        i, done, b, c, d, h = s
        an = -i * i
        b = b + 2
        d = 1 / (an * d + b)
        c = b + an / c
        delta = c * d
        h = _jnp.where(done, h, h * delta)
        return i + 1, done | (_jnp.abs(delta - 1) <= eps), b, c, d, h

    b0 = xl + 1
    init = (_jnp.asarray(1.0, x.dtype), small, b0, _jnp.full_like(x, 1 / tiny), 1 / b0, 1 / b0)
    frac = _loop(lambda s: True, cbody, init, 500)[5] * _jnp.exp(-xl)
    return _jnp.where(small, series, frac)


def _ei_positive(x):
    """Ei(x) for x > 0: gamma + log x + sum x^k / (k k!) up to x = 40, the asymptotic
    e^x / x sum k! / x^k (cut at its smallest term) above."""
    eps = _jnp.finfo(x.dtype).eps
    big = x > 40
    xs = _jnp.where(big, 1.0, x)

    def sbody(s):
        k, done, term, total = s
        term = term * xs / k
        add = _jnp.where(done, 0.0, term / k)
        total = total + add
        return k + 1, done | (add <= eps * _jnp.abs(total)), term, total

    init = (_jnp.asarray(1.0, x.dtype), big, _jnp.ones_like(x), _EULER + _jnp.log(xs))
    series = _loop(lambda s: True, sbody, init, 400)[3]

    xl = _jnp.where(big, x, 50.0)

    def abody(s):
        k, done, term, total = s
        new = term * k / xl
        stop = done | (new >= term) | (new <= eps * total)
        total = total + _jnp.where(stop, 0.0, new)
        return k + 1, stop, _jnp.where(stop, term, new), total

    init = (_jnp.asarray(1.0, x.dtype), ~big, _jnp.ones_like(x), _jnp.ones_like(x))
    asym = _loop(lambda s: True, abody, init, 60)[3] * _jnp.exp(xl) / xl
    return _jnp.where(big, asym, series)


@_custom_jvp
def expi(x):
    """The exponential integral Ei(x) = -PV int_{-x}^inf e^-t / t dt (-E1(-x) for x < 0);
    -inf at 0. Derivative e^x / x."""
    x, = _promote_args_inexact("expi", x)
    xp = _jnp.where(x > 0, x, 1.0)
    xn = _jnp.where(x < 0, -x, 1.0)
    out = _jnp.where(x > 0, _ei_positive(xp), -_e1_positive(xn))
    out = _jnp.where(x == 0, _const(x, -_np.inf), out)
    return _jnp.where(_jnp.isnan(x), x, out)


@expi.defjvp
def _expi_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    out = expi(x)
    return out, (x_dot * _jnp.exp(x) / x).astype(out.dtype)


@_custom_jvp
def exp1(x):
    """The exponential integral E1(x) = int_1^inf e^(-x t) / t dt for x > 0; inf at 0, NaN for
    x < 0 (as SciPy's real exp1). Derivative -e^-x / x."""
    x, = _promote_args_inexact("exp1", x)
    xp = _jnp.where(x > 0, x, 1.0)
    out = _jnp.where(x > 0, _e1_positive(xp), _const(x, _np.nan))
    out = _jnp.where(x == 0, _const(x, _np.inf), out)
    return _jnp.where(_jnp.isnan(x), x, out)


@exp1.defjvp
def _exp1_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    out = exp1(x)
    return out, (-x_dot * _jnp.exp(-x) / x).astype(out.dtype)


def _expn_impl(n, x):
    eps = _jnp.finfo(x.dtype).eps
    nn = _jnp.maximum(n, 0.0)
    small = x <= 1
    # x <= 1: the series 1/(n-1) + sum ... with the term k = n - 1 replaced by the log term
    xs = _jnp.where(small & (x > 0), x, 0.5)
    psi = digamma(_jnp.maximum(nn, 1.0))  # -gamma + sum_{i<n} 1/i

    def sbody(s):
        k, done, fact, total = s
        fact = fact * (-xs) / k
        log_term = fact * (-_jnp.log(xs) + psi)
        add = _jnp.where(k == nn - 1, log_term, -fact / (k - nn + 1 + (k == nn - 1)))
        add = _jnp.where(done, 0.0, add)
        total = total + add
        return k + 1, done | ((_jnp.abs(add) <= eps * _jnp.abs(total)) & (k >= nn - 1)), fact, \
            total

    start = _jnp.where(nn == 1, -_jnp.log(xs) - _EULER, 1 / _jnp.where(nn == 1, 1.0, nn - 1))
    init = (_jnp.asarray(1.0, x.dtype), ~small, _jnp.ones_like(x), start)
    series = _loop(lambda s: True, sbody, init, 200)[3]

    xl = _jnp.where(small, 2.0, x)
    tiny = _jnp.finfo(x.dtype).tiny / eps

    def cbody(s):
        i, done, b, c, d, h = s
        an = -i * (nn - 1 + i)
        b = b + 2
        d = 1 / (an * d + b)
        c = b + an / c
        delta = c * d
        h = _jnp.where(done, h, h * delta)
        return i + 1, done | (_jnp.abs(delta - 1) <= eps), b, c, d, h

    b0 = xl + nn
    init = (_jnp.asarray(1.0, x.dtype), small, b0, _jnp.full_like(x, 1 / tiny), 1 / b0, 1 / b0)
    frac = _loop(lambda s: True, cbody, init, 500)[5] * _jnp.exp(-xl)
    out = _jnp.where(small, series, frac)
    out = _jnp.where(nn == 0, _jnp.exp(-x) / x, out)
    at_zero = _jnp.where(nn > 1, 1 / _jnp.where(nn > 1, nn - 1, 1.0), _np.inf)
    out = _jnp.where(x == 0, at_zero.astype(x.dtype), out)
    bad = (n < 0) | (x < 0) | (n != _jnp.floor(n)) | _jnp.isnan(x) | _jnp.isnan(n)
    return _jnp.where(bad, _const(x, _np.nan), out)


@_custom_jvp
def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt for integer
    n >= 0 and x >= 0 (NaN otherwise): a power series up to x = 1, a continued fraction above.
    Derivative in x: -E_{n-1}(x) (n's tangent is zero: n is an integer)."""
    n, x = _promote_args_inexact("expn", n, x)
    return _expn_impl(n, x)


@expn.defjvp
def _expn_jvp(primals, tangents):
    n, x = primals
    _, x_dot = tangents
    out = expn(n, x)
    prev = _jnp.where(n == 0, _jnp.exp(-x) * (x + 1) / (x * x),
                      _expn_impl(_jnp.maximum(n - 1, 0.0), x))
    return out, (-x_dot * prev).astype(out.dtype)


# ---- Spence's function (the dilogarithm) ----

def _bernoulli_dilog_coeffs(count):
    """B_{2k} / (2k + 1)! for k = 1 .. count, from the Bernoulli numbers' recurrence in exact
    rational arithmetic."""
    b = [_Fraction(1)]
    for m in range(1, 2 * count + 1):
        b.append(-sum(_Fraction(_math.comb(m + 1, j)) * b[j] for j in range(m)) / (m + 1))
    return [float(b[2 * k] / _math.factorial(2 * k + 1)) for k in range(1, count + 1)]


_DILOG_COEFFS = _bernoulli_dilog_coeffs(14)


def _li2_near_zero(u):
    """Li2(u) for u in [-1, 1/2]: sum_n B_n w^(n+1) / (n+1)! in w = -log(1 - u) (|w| <= log 2)."""
    w = -_jnp.log1p(-u)
    w2 = w * w
    total = _jnp.zeros_like(w)
    for c in reversed(_DILOG_COEFFS):
        total = (total + c) * w2
    return w - w2 / 4 + w * total


def _li2_real(u):
    """Li2(u) for real u <= 1, reduced to [-1, 1/2] by the reflection Li2(u) = pi^2/6 -
    log(u) log(1-u) - Li2(1-u) and the inversion Li2(u) = -pi^2/6 - log^2(-u)/2 - Li2(1/u)."""
    zeta2 = _math.pi ** 2 / 6
    upper = u > 0.5
    lower = u < -1
    mid = _jnp.where(upper | lower, 0.0, u)
    up = _jnp.where(upper, u, 0.75)
    lo = _jnp.where(lower, u, -2.0)
    v_up = zeta2 - _jnp.log(up) * _jnp.log1p(-up) - _li2_near_zero(1 - up)
    v_up = _jnp.where(up == 1, zeta2, v_up)
    inv = 1 / lo  # in [-1, 0)
    v_lo = -zeta2 - 0.5 * _jnp.log(-lo) ** 2 - _li2_near_zero(inv)
    return _jnp.where(upper, v_up, _jnp.where(lower, v_lo, _li2_near_zero(mid)))


@_custom_jvp
def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN for x < 0).
    Derivative log(x) / (1 - x) (-1 at x = 1)."""
    x, = _promote_args_inexact("spence", x)
    out = _li2_real(1 - _jnp.where(x >= 0, x, 1.0))
    return _jnp.where((x < 0) | _jnp.isnan(x), _const(x, _np.nan), out)


@spence.defjvp
def _spence_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    out = spence(x)
    one = x == 1
    slope = _jnp.where(one, -1.0, _jnp.log(x) / (1 - _jnp.where(one, 0.0, x)))
    return out, (x_dot * slope).astype(out.dtype)


# ---- hypergeometric functions ----

def _hyp1f1_series(a, b, x):
    """sum_k (a)_k / (b)_k x^k / k!, to relative precision eps (at most 500 terms)."""
    eps = _jnp.finfo(x.dtype).eps

    def body(s):
        k, done, term, total = s
        term = term * (a + k) / (b + k) * x / (k + 1)
        add = _jnp.where(done, 0.0, term)
        total = total + add
        return k + 1, done | (_jnp.abs(add) <= eps * _jnp.abs(total)), term, total

    init = (_jnp.asarray(0.0, x.dtype), _jnp.zeros(x.shape, bool), _jnp.ones_like(x),
            _jnp.ones_like(x))
    return _loop(lambda s: True, body, init, 500)[3]


def _hyp1f1_asymptotic(a, b, x):
    """Gamma(b) / Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k, for large positive x
    (cut at its smallest term)."""
    eps = _jnp.finfo(x.dtype).eps

    def body(s):
        k, done, term, total = s
        new = term * (b - a + k) * (1 - a + k) / ((k + 1) * x)
        stop = done | (_jnp.abs(new) >= _jnp.abs(term)) | (_jnp.abs(new) <= eps *
                                                            _jnp.abs(total))
        total = total + _jnp.where(done, 0.0, new)
        return k + 1, stop, _jnp.where(stop, term, new), total

    init = (_jnp.asarray(0.0, x.dtype), _jnp.zeros(x.shape, bool), _jnp.ones_like(x),
            _jnp.ones_like(x))
    total = _loop(lambda s: True, body, init, 250)[3]
    log_scale = gammaln(b) - gammaln(a) + x + (a - b) * _jnp.log(x)
    return gammasgn(b) * gammasgn(a) * _jnp.exp(log_scale) * total


def _hyp1f1_positive(a, b, x):
    big = x >= 100
    xs = _jnp.where(big, 1.0, x)
    xl = _jnp.where(big, x, 200.0)
    return _jnp.where(big, _hyp1f1_asymptotic(a, b, xl), _hyp1f1_series(a, b, xs))


def _hyp1f1_impl(a, b, x):
    # Kummer's transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) for x < 0 keeps the series'
    # terms from cancelling
    neg = x < 0
    aa = _jnp.where(neg, b - a, a)
    xx = _jnp.abs(x)
    val = _hyp1f1_positive(aa, b, xx)
    val = _jnp.where(neg, _jnp.exp(x) * val, val)
    return _jnp.where(a == 0, _jnp.ones_like(val),
                      _jnp.where(a == b, _jnp.exp(x),
                                 _jnp.where(b == 0, _const(val, _np.inf), val)))


def _hyp1f1_param_series(a, b, x, weight):
    """sum_{k>=1} (a)_k / (b)_k x^k / k! weight(k): the a- and b-derivative series."""
    eps = _jnp.finfo(x.dtype).eps

    def body(s):
        k, done, term, total = s
        add = _jnp.where(done, 0.0, term * weight(k))
        total = total + add
        term = term * (a + k) / (b + k) * x / (k + 1)
        return k + 1, done | ((_jnp.abs(add) <= eps * _jnp.abs(total)) & (k > 1)), term, total

    init = (_jnp.asarray(1.0, x.dtype), _jnp.zeros(x.shape, bool), a / b * x, _jnp.zeros_like(x))
    return _loop(lambda s: True, body, init, 500)[3]


@_custom_jvp
def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum (a)_k / (b)_k x^k / k!:
    the series for |x| < 100 (negative x through Kummer's transformation), the asymptotic
    expansion above. Conventions as JAX's: 1 for a = 0 (also a = b = 0), e^x for a = b, inf for
    b = 0. Derivatives: in x a/b 1F1(a+1; b+1; x); in a and b their series."""
    a, b, x = _promote_args_inexact("hyp1f1", a, b, x)
    a, b, x = _jnp.broadcast_arrays(a, b, x)
    return _hyp1f1_impl(a, b, x)


def _hyp1f1_jvp(primals, tangents):
    from tessera._src.custom_derivatives import SymbolicZero
    a, b, x = primals
    a_dot, b_dot, x_dot = tangents
    a, b, x = _promote_args_inexact("hyp1f1", a, b, x)
    a, b, x = _jnp.broadcast_arrays(a, b, x)
    out = _hyp1f1_impl(a, b, x)
    t = _jnp.zeros_like(out)
    if not isinstance(x_dot, SymbolicZero):
        t = t + x_dot * (a / b * _hyp1f1_impl(a + 1, b + 1, x))
    if not isinstance(a_dot, SymbolicZero):
        t = t + a_dot * _hyp1f1_param_series(a, b, x, lambda k: digamma(a + k) - digamma(a))
    if not isinstance(b_dot, SymbolicZero):
        t = t + b_dot * _hyp1f1_param_series(a, b, x, lambda k: digamma(b) - digamma(b + k))
    return out, t.astype(out.dtype)


hyp1f1.defjvp(_hyp1f1_jvp, symbolic_zeros=True)


def _hyp2f1_series(a, b, c, x):
    """sum_k (a)_k (b)_k / (c)_k x^k / k! for 0 <= x < 1 (a terminating polynomial when a or b
    is a non-positive integer), to relative precision eps, at most 20000 terms."""
    eps = _jnp.finfo(x.dtype).eps

    def body(s):
        k, done, term, total = s
        term = term * (a + k) * (b + k) / ((c + k) * (k + 1)) * x
        add = _jnp.where(done, 0.0, term)
        total = total + add
        return k + 1, done | (_jnp.abs(add) <= eps * _jnp.abs(total)), term, total

    init = (_jnp.asarray(0.0, x.dtype), _jnp.zeros(x.shape, bool), _jnp.ones_like(x),
            _jnp.ones_like(x))
    return _loop(lambda s: True, body, init, 20000)[3]


def _hyp2f1_unit(a, b, c, x):
    """0 <= x < 1: Euler's transformation (1-x)^(c-a-b) 2F1(c-a, c-b; c; x) when c - a - b
    <= -1 (its series converges faster), else the direct series."""
    d = c - a - b
    euler = d <= -1
    aa = _jnp.where(euler, c - a, a)
    bb = _jnp.where(euler, c - b, b)
    s = _hyp2f1_series(aa, bb, c, x)
    return _jnp.where(euler, (1 - x) ** d * s, s)


@_custom_jvp
def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) for real x <= 1, by its series (JAX's
    case analysis: 1 for x = 0 or a or b = 0; inf for c a non-positive integer, for x > 1 and for
    x = 1 with c - a - b <= 0; (1-x)^-a for b = c, (1-x)^-b for a = c; Gauss's sum at x = 1).
    Negative x go through Pfaff's transformation (1-x)^-a 2F1(a, c-b; c; x/(x-1)), which JAX
    does not do. Derivative in x: ab/c 2F1(a+1, b+1; c+1; x); a, b, c are not differentiated
    (their tangents must be zero)."""
    a, b, c, x = _promote_args_inexact("hyp2f1", a, b, c, x)
    a, b, c, x = _jnp.broadcast_arrays(a, b, c, x)
    return _hyp2f1_impl(a, b, c, x)


def _hyp2f1_impl(a, b, c, x):
    neg = x < 0
    z = _jnp.where(neg, x / (x - 1), _jnp.where((x >= 0) & (x < 1), x, 0.0))
    bb = _jnp.where(neg, c - b, b)
    val = _hyp2f1_unit(a, bb, c, z)
    val = _jnp.where(neg, (1 - x) ** (-a) * val, val)
    d = c - a - b
    inf = _const(val, _np.inf)
    gauss = _jnp.exp(gammaln(c) + gammaln(_jnp.where(d > 0, d, 1.0)) - gammaln(c - a)
                     - gammaln(c - b)) * gammasgn(c) * gammasgn(c - a) * gammasgn(c - b)
    c_pole = (c == 0) | ((c < 0) & (c == _jnp.floor(c)))
    out = _jnp.where(x == 1, _jnp.where(d <= 0, inf, gauss), val)
    out = _jnp.where((b == c) & (x < 1), (1 - x) ** (-a), out)
    out = _jnp.where((a == c) & (x < 1) & (b != c), (1 - x) ** (-b), out)
    out = _jnp.where(x > 1, inf, out)
    out = _jnp.where(c_pole, inf, out)
    return _jnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), _jnp.ones_like(out), out)


@hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    x_dot = tangents[3]
    a, b, c, x = _promote_args_inexact("hyp2f1", a, b, c, x)
    a, b, c, x = _jnp.broadcast_arrays(a, b, c, x)
    out = _hyp2f1_impl(a, b, c, x)
    slope = a * b / c * _hyp2f1_impl(a + 1, b + 1, c + 1, x)
    return out, (x_dot * slope).astype(out.dtype)


# ---- associated Legendre functions ----

def _legendre_table(m_max, n_max, z, is_normalized):
    """P_l^m(z) (with the Condon-Shortley phase (-1)^m, as SciPy) for 0 <= m <= m_max,
    0 <= l <= n_max, as a nested list [m][l] of arrays shaped like z; normalized:
    sqrt((2l+1)/(4 pi) (l-m)!/(l+m)!) P_l^m, computed by its own recurrences so that it does not
    overflow."""
    zero = _jnp.zeros_like(z)
    s = _jnp.sqrt(_jnp.maximum(1 - z * z, 0.0))
    table = [[zero] * (n_max + 1) for _ in range(m_max + 1)]
    diag = _jnp.ones_like(z) * (1 / _math.sqrt(4 * _math.pi) if is_normalized else 1.0)
    for m in range(m_max + 1):
        if m > 0:
            if is_normalized:
                diag = -_math.sqrt((2 * m + 1) / (2.0 * m)) * s * diag
            else:
                diag = -(2 * m - 1) * s * diag
        if m > n_max:
            break
        table[m][m] = diag
        if m + 1 <= n_max:
            f = _math.sqrt(2 * m + 3) if is_normalized else (2 * m + 1)
            table[m][m + 1] = f * z * diag
        for ll in range(m + 2, n_max + 1):
            if is_normalized:
                c1 = _math.sqrt((4 * ll * ll - 1) / (ll * ll - m * m))
                c2 = _math.sqrt(((2 * ll + 1) * ((ll - 1) ** 2 - m * m))
                                / ((2 * ll - 3) * (ll * ll - m * m)))
                table[m][ll] = c1 * z * table[m][ll - 1] - c2 * table[m][ll - 2]
            else:
                table[m][ll] = ((2 * ll - 1) * z * table[m][ll - 1]
                                - (ll + m - 1) * table[m][ll - 2]) / (ll - m)
    return table


def _check_lpmn(fun_name, m, n, z):
    if not isinstance(m, int) or not isinstance(n, int) or isinstance(m, bool) or \
            isinstance(n, bool):
        raise TypeError(f"{fun_name}: m and n must be Python ints (they set the output shape), "
                        f"got {type(m).__name__} and {type(n).__name__}")
    if m < 0 or n < 0:
        raise ValueError(f"{fun_name}: m and n must be non-negative, got m={m}, n={n}")
    if n < m:
        raise ValueError(f"Degree {n} must be greater than or equal to order {m}.")
    z = _jnp.asarray(z)
    if z.dtype not in (_jnp.float32, _jnp.float64):
        raise TypeError(f"z.dtype={z.dtype} is not supported, see docstring for supported "
                        f"types. ({fun_name} takes float32 or float64)")
    if z.ndim != 1:
        raise ValueError(f"z must be a 1D array. ({fun_name} got shape {z.shape})")
    return z


def lpmn_values(m, n, z, is_normalized):
    """The associated Legendre functions P_l^k(z), k <= m, l <= n, as an (m+1, n+1, len(z))
    array (0 for k > l); is_normalized: sqrt((2l+1)/(4 pi) (l-k)!/(l+k)!) P_l^k."""
    z = _check_lpmn("lpmn_values", m, n, z)
    table = _legendre_table(m, n, z, bool(is_normalized))
    return _jnp.stack([_jnp.stack(row, 0) for row in table], 0)


def lpmn(m, n, z):
    """(P, dP/dz): the associated Legendre functions P_l^k(z) (k <= m, l <= n, with SciPy's
    Condon-Shortley phase) and their derivatives, each (m+1, n+1, len(z)), for |z| < 1.
    Derivatives from (z^2 - 1) P_l^k' = l z P_l^k - (l + k) P_{l-1}^k."""
    z = _check_lpmn("lpmn", m, n, z)
    table = _legendre_table(m, n, z, False)
    zero = _jnp.zeros_like(z)
    deriv = []
    for k in range(m + 1):
        row = []
        for ll in range(n + 1):
            if ll < k or ll == 0:
                row.append(zero)
                continue
            prev = table[k][ll - 1] if ll - 1 >= k else zero
            row.append((ll * z * table[k][ll] - (ll + k) * prev) / (z * z - 1))
        deriv.append(_jnp.stack(row, 0))
    values = _jnp.stack([_jnp.stack(row, 0) for row in table], 0)
    return values, _jnp.stack(deriv, 0)


def sph_harm(m, n, theta, phi, n_max=None):
    raise NotImplementedError("jax.scipy.special.sph_harm returns complex values "
                              "(complex64/complex128), which Tessera does not have; the real "
                              "parts are lpmn_values(m, n, cos(phi), True) * cos(m * theta)")


def sph_harm_y(n, m, theta, phi, diff_n=0, n_max=None):
    raise NotImplementedError("jax.scipy.special.sph_harm_y returns complex values "
                              "(complex64/complex128), which Tessera does not have")


# ---- Fresnel integrals ----

_GL_NODES, _GL_WEIGHTS = _np.polynomial.legendre.leggauss(64)


def _sincos_pi_half_sq(x):
    """(sin, cos)(pi x^2 / 2) with x^2 reduced modulo 4 in double-length arithmetic (Dekker's
    product), so that large x keep their phase."""
    split = 134217729.0 if x.dtype == _jnp.float64 else 4097.0
    t = split * x
    hi = t - (t - x)
    lo = x - hi
    p = x * x
    err = ((hi * hi - p) + 2 * hi * lo) + lo * lo
    r = p - 4 * _jnp.floor(p / 4)
    r = r + err
    r = r - 4 * _jnp.floor(r / 4)
    ang = (_math.pi / 2) * r
    return _jnp.sin(ang), _jnp.cos(ang)


def _fresnel_impl(x):
    ax = _jnp.abs(x)
    big = ax > 5
    # |x| <= 5: 64-point Gauss-Legendre quadrature of the smooth integrands on [0, |x|]
    xs = _jnp.where(big, 0.0, ax)
    nodes = _jnp.asarray(_GL_NODES, x.dtype)
    weights = _jnp.asarray(_GL_WEIGHTS, x.dtype)
    t = 0.5 * xs[..., None] * (nodes + 1)
    ang = (_math.pi / 2) * t * t
    s_q = 0.5 * xs * _jnp.sum(weights * _jnp.sin(ang), axis=-1)
    c_q = 0.5 * xs * _jnp.sum(weights * _jnp.cos(ang), axis=-1)
    # |x| > 5: 1/2 plus the auxiliary functions f, g by their asymptotic series in
    # 1 / (pi x^2)^2 (cut at 12 terms, below eps from |x| = 5 on)
    xl = _jnp.where(big, ax, 10.0)
    u = 1 / (_math.pi * xl * xl)
    u2 = u * u
    f_sum = _jnp.zeros_like(xl)
    g_sum = _jnp.zeros_like(xl)
    f_c = [1.0]
    g_c = [1.0]
    for k in range(1, 12):
        f_c.append(f_c[-1] * -(4 * k - 3) * (4 * k - 1))
        g_c.append(g_c[-1] * -(4 * k - 1) * (4 * k + 1))
    for fc, gc in zip(reversed(f_c), reversed(g_c)):
        f_sum = f_sum * u2 + fc
        g_sum = g_sum * u2 + gc
    f = f_sum / (_math.pi * xl)
    g = g_sum * u / (_math.pi * xl)
    sn, cs = _sincos_pi_half_sq(xl)
    s_a = 0.5 - f * cs - g * sn
    c_a = 0.5 + f * sn - g * cs
    s = _jnp.where(big, s_a, s_q)
    c = _jnp.where(big, c_a, c_q)
    s = _jnp.where(_jnp.isinf(x), 0.5, s)
    c = _jnp.where(_jnp.isinf(x), 0.5, c)
    sign = _jnp.where(x < 0, -1.0, 1.0).astype(x.dtype)
    return sign * s, sign * c


@_custom_jvp
def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt: Gauss-Legendre
    quadrature up to |x| = 5, the asymptotic expansions above. Derivatives (sin, cos)(pi x^2/2)."""
    x, = _promote_args_inexact("fresnel", x)
    return _fresnel_impl(x)


@fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    x, = _promote_args_inexact("fresnel", x)
    s, c = _fresnel_impl(x)
    sn, cs = _sincos_pi_half_sq(x)
    return (s, c), (x_dot * sn, x_dot * cs)
