"""jax.scipy.special's lpmn and lpmn_values (associated Legendre functions by their three-term
recurrences), sph_harm (needs complex dtypes) and fresnel (Gauss-Legendre quadrature and the
asymptotic expansions)."""
import math as _math

import numpy as _np

from tessera import numpy as _jnp
from tessera._src.custom_derivatives import custom_jvp as _custom_jvp
from tessera.scipy.special import _promote_args_inexact


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
