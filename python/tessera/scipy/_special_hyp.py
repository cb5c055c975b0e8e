"""jax.scipy.special's hyp1f1 and hyp2f1: thin wrappers over the C++ tessera::scipy::special
functions (src/api/scipy_special_hyp.cpp: the series summed in lax.while_loops with JAX's special
cases, Kummer's, Euler's and Pfaff's transformations and 1F1's asymptotic expansion)."""
from tessera.scipy.special import _C, _args


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum (a)_k / (b)_k x^k / k!:
    the series for |x| < 100 (negative x through Kummer's transformation), the asymptotic
    expansion above. Conventions as JAX's: 1 for a = 0 (also a = b = 0), e^x for a = b, inf for
    b = 0. Derivatives: in x a/b 1F1(a+1; b+1; x); in a and b their series."""
    return _C.hyp1f1(*_args("hyp1f1", a, b, x))


def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) for real x <= 1, by its series (JAX's
    case analysis: 1 for x = 0 or a or b = 0; inf for c a non-positive integer, for x > 1 and for
    x = 1 with c - a - b <= 0; (1-x)^-a for b = c, (1-x)^-b for a = c; Gauss's sum at x = 1).
    Negative x go through Pfaff's transformation (1-x)^-a 2F1(a, c-b; c; x/(x-1)), which JAX
    does not do. Derivative in x: ab/c 2F1(a+1, b+1; c+1; x); a, b, c are not differentiated
    (their tangents must be zero)."""
    return _C.hyp2f1(*_args("hyp2f1", a, b, c, x))
