"""jax.scipy.special's hyp1f1 and hyp2f1: their series summed in a lax.while_loop to relative
precision eps, with JAX's special cases, Kummer's (1F1, x < 0), Euler's and Pfaff's (2F1)
transformations and 1F1's asymptotic expansion for x >= 100."""
import numpy as _np

from tessera import numpy as _jnp
from tessera._src.custom_derivatives import custom_jvp as _custom_jvp
from tessera.scipy._special_expint import _loop
from tessera.scipy.special import _const, _promote_args_inexact, digamma, gammaln, gammasgn


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
