"""jax.scipy.special's exp1, expi, expn and spence: thin wrappers over the C++
tessera::scipy::special functions (src/api/scipy_special_expint.cpp: power series, continued
fractions and asymptotic series summed in lax.while_loops; the dilogarithm's Bernoulli series;
custom JVPs from the closed forms)."""
from tessera.scipy.special import _C, _args


def expi(x):
    """The exponential integral Ei(x) = -PV int_{-x}^inf e^-t / t dt (-E1(-x) for x < 0);
    -inf at 0. Derivative e^x / x."""
    return _C.expi(*_args("expi", x))


def exp1(x):
    """The exponential integral E1(x) = int_1^inf e^(-x t) / t dt for x > 0; inf at 0, NaN for
    x < 0 (as SciPy's real exp1). Derivative -e^-x / x."""
    return _C.exp1(*_args("exp1", x))


def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt for integer
    n >= 0 and x >= 0 (NaN otherwise): a power series up to x = 1, a continued fraction above.
    Derivative in x: -E_{n-1}(x) (n's tangent is zero: n is an integer)."""
    return _C.expn(*_args("expn", n, x))


def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN for x < 0).
    Derivative log(x) / (1 - x) (-1 at x = 1)."""
    return _C.spence(*_args("spence", x))
