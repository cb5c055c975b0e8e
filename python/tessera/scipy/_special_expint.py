"""jax.scipy.special's exp1, expi, expn (power series up to x = 1 or 40, continued fractions
or asymptotic series beyond, each summed in a lax.while_loop to relative precision eps) and
spence (the dilogarithm by its Bernoulli-number series after reflection and inversion); their
derivatives are custom JVPs from the closed forms."""
import math as _math
from fractions import Fraction as _Fraction

import numpy as _np

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.custom_derivatives import custom_jvp as _custom_jvp
from tessera.scipy.special import _const, _promote_args_inexact, digamma


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
