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


# exponential integrals, Spence's function, hypergeometric functions, Legendre functions and
# Fresnel integrals live in their own modules (imported last: they use the helpers above)
from tessera.scipy._special_expint import exp1, expi, expn, spence  # noqa: E402,F401
from tessera.scipy._special_hyp import hyp1f1, hyp2f1  # noqa: E402,F401
from tessera.scipy._special_legendre import (  # noqa: E402,F401
    fresnel, lpmn, lpmn_values, sph_harm, sph_harm_y)
