"""jax.scipy.special's lpmn, lpmn_values, fresnel and sph_harm / sph_harm_y: thin wrappers over
the C++ tessera::scipy::special functions (src/api/scipy_special_legendre.cpp: the associated
Legendre recurrences, Gauss-Legendre quadrature and asymptotic expansions for the Fresnel
integrals; the spherical harmonics need complex dtypes, which Tessera does not have)."""
from tessera import numpy as _jnp
from tessera.scipy.special import _C, _args


def _check_order(fun_name, m, n):
    if not isinstance(m, int) or not isinstance(n, int) or isinstance(m, bool) or \
            isinstance(n, bool):
        raise TypeError(f"{fun_name}: m and n must be Python ints (they set the output shape), "
                        f"got {type(m).__name__} and {type(n).__name__}")


def lpmn_values(m, n, z, is_normalized):
    """The associated Legendre functions P_l^k(z), k <= m, l <= n, as an (m+1, n+1, len(z))
    array (0 for k > l); is_normalized: sqrt((2l+1)/(4 pi) (l-k)!/(l+k)!) P_l^k."""
    _check_order("lpmn_values", m, n)
    return _C.lpmn_values(m, n, _jnp.asarray(z), bool(is_normalized))


def lpmn(m, n, z):
    """(P, dP/dz): the associated Legendre functions P_l^k(z) (k <= m, l <= n, with SciPy's
    Condon-Shortley phase) and their derivatives, each (m+1, n+1, len(z)), for |z| < 1."""
    _check_order("lpmn", m, n)
    return _C.lpmn(m, n, _jnp.asarray(z))


def sph_harm(m, n, theta, phi, n_max=None):
    """Needs complex64/complex128 results, which Tessera does not have: NotImplementedError."""
    return _C.sph_harm(m, n, theta, phi, n_max)


def sph_harm_y(n, m, theta, phi, diff_n=0, n_max=None):
    """Needs complex64/complex128 results, which Tessera does not have: NotImplementedError."""
    return _C.sph_harm_y(n, m, theta, phi, diff_n, n_max)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt: Gauss-Legendre
    quadrature up to |x| = 5, the asymptotic expansions above. Derivatives (sin, cos)(pi x^2/2)."""
    return _C.fresnel(*_args("fresnel", x))
