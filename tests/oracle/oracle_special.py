"""mpmath references for the special-function primitives (src/prims/special.cpp).

Each op evaluates the function elementwise with mpmath at 50 significant digits (zeta at 80:
mpmath's Hurwitz zeta loses digits for large q at lower precision) from the exact input values,
and rounds the result once to the result dtype. XLA's conventions at the edges of the domains
(restated here from XLA/JAX's implementations, independently of the C++ code):
  digamma: NaN at x = 0, -1, -2, ... and at -inf; lgamma: +inf at those poles and at +-inf;
  erf_inv: +-inf at +-1, NaN beyond; polygamma(m, x): NaN unless m is a non-negative integer;
  zeta(x, q): NaN for x < 1, inf at x = 1; at q = 0, -1, ... inf for even integer x, else NaN;
  NaN for q <= 0 with non-integer x (integer x: the sum (q + k)^-x);
  igamma: NaN for a <= 0 or x < 0, 0 at x = 0, 1 at x = inf;
  igammac: 1 for a <= 0 or x <= 0, 0 at x = inf; igamma_grad_a: NaN for a <= 0 or x < 0, 0 at
  x = 0 (and at x = inf); bessel_i0e/i1e: exp(-|x|) I0/I1, 0 at +-inf (i1e odd);
  betainc(a, b, x): NaN for a <= 0, b <= 0 or x outside [0, 1], 0 at x = 0, 1 at x = 1;
  random_gamma_grad(a, x) = -(dP/da) / (dP/dx): NaN for a <= 0 or x < 0, 0 at x = 0.

Tolerances (|got - want| <= atol + rtol |want|, want rounded once from the exact value):
Tessera computes every dtype in double and rounds once (16-bit floats through float32), so
float32 and the 16-bit floats may differ from the reference by one unit in the last place
(except float32 erf and erf_inv: F32_RTOL)
(rtol two ulps: 2^-22, 2^-9, 2^-6; atol the dtype's smallest subnormal). float64 carries the
kernels' own error: rtol per function below (1e-15 .. 1e-14, a few to 45 ulps; the measured
errors are printed by tests/cpp/test_special.cpp).
"""

import math

import mpmath as mp
import numpy as np

F64_RTOL = {
    "erf": 1e-15, "erfc": 1e-15, "erf_inv": 2e-15, "lgamma": 2e-15, "digamma": 4e-15,
    "polygamma": 4e-15, "zeta": 4e-15, "igamma": 4e-15, "igammac": 4e-15,
    "igamma_grad_a": 1e-14, "bessel_i0e": 4e-15, "bessel_i1e": 4e-15, "betainc": 1e-13,
    "random_gamma_grad": 1e-12,
}
# float32 erf and erf_inv are vectorized approximations, not double rounded once
# (src/prims/vec_math_special.h): erf within 2 ulp; erf_inv is XLA's formula (Giles'
# polynomials after w = -log1p(-x*x)), a few ulp for |x| <= 0.99 and up to ~65 ulp above.
F32_RTOL = {"erf": 2.0**-21, "erf_inv": 2.0**-17}
SMALL_TOL = {
    "float16": (2.0**-9, 2.0**-24),
    "bfloat16": (2.0**-6, 2.0**-133),
    "float32": (2.0**-22, 2.0**-149),
}

NAN = float("nan")
INF = float("inf")


def _is_int(v):
    return math.isfinite(v) and v == math.floor(v)


def _f(v):
    """An mpmath value -> float (beyond double's range: +-inf or 0, as rounding gives)."""
    return float(v)


def erf(x):
    if math.isnan(x):
        return NAN
    if abs(x) > 10:  # 1 - erf(10) ~ 2e-45: rounds to +-1 in every dtype
        return math.copysign(1.0, x)
    return _f(mp.erf(x))


def erfc(x):
    if math.isnan(x):
        return NAN
    if x > 40:  # erfc(40) ~ 1e-697: 0 in every dtype
        return 0.0
    if x < -10:
        return 2.0
    return _f(mp.erfc(x))


def erf_inv(x):
    if math.isnan(x) or abs(x) > 1:
        return NAN
    if abs(x) == 1:
        return math.copysign(INF, x)
    return _f(mp.erfinv(x))


def lgamma(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x) or (x <= 0 and _is_int(x)):
        return INF
    return _f(mp.log(abs(mp.gamma(x))))


def digamma(x):
    if math.isnan(x) or x == -INF or (x <= 0 and _is_int(x)):
        return NAN
    if x == INF:
        return INF
    return _f(mp.digamma(x))


def zeta(s, q):
    if math.isnan(s) or math.isnan(q) or s < 1:
        return NAN
    if s == 1:
        return INF
    if q <= 0:
        if q == -INF or q == math.floor(q):  # (XLA: floor(-inf) == -inf, a "pole")
            return INF if _is_int(s) and s % 2 == 0 else NAN
        if not _is_int(s):
            return NAN
    if s == INF:
        return 0.0 if q > 1 else 1.0 if q == 1 else INF if q > 0 else NAN
    if q == INF:
        return 0.0
    if q < 0:
        return _f(_zeta_mp(s, q))
    with mp.workdps(80):
        return _f(mp.zeta(s, q))


def polygamma(m, x):
    if math.isnan(m) or math.isnan(x) or m < 0 or not _is_int(m):
        return NAN
    if m == 0:
        return digamma(x)
    if x == INF:
        return 0.0
    if x <= 0 and (x == -INF or _is_int(x)):  # zeta(m + 1, x) at its poles
        return INF if int(m) % 2 == 1 else NAN
    mi = int(m)
    with mp.workdps(80):
        if x > 0:
            return _f(mp.polygamma(mi, x))
        return _f((1 if mi % 2 == 1 else -1) * mp.factorial(mi) * _zeta_mp(mi + 1, x))


def _zeta_mp(s, q):
    """zeta(s, q) for q < 0 (integer s): the defining sum, shifted past the negative terms."""
    with mp.workdps(80):
        n = int(math.ceil(-q)) + 1
        return mp.fsum(mp.power(mp.mpf(q) + k, -s) for k in range(n)) + mp.zeta(s, mp.mpf(q) + n)


def _lower(a, x):
    return mp.gammainc(a, 0, x, regularized=True)


def _upper(a, x):
    return mp.gammainc(a, x, mp.inf, regularized=True)


def igamma(a, x):
    if math.isnan(a) or math.isnan(x) or x < 0 or a <= 0:
        return NAN
    if x == 0:
        return 0.0
    if x == INF:
        return 1.0
    if a == INF:
        return 0.0
    return _f(_lower(a, x))


def igammac(a, x):
    if math.isnan(a) or math.isnan(x):
        return NAN
    if x <= 0 or a <= 0:
        return 1.0
    if x == INF:
        return 0.0
    if a == INF:
        return 1.0
    return _f(_upper(a, x))


def igamma_grad_a(a, x):
    if math.isnan(a) or math.isnan(x) or x < 0 or a <= 0:
        return NAN
    if x == 0 or x == INF or a == INF:
        return 0.0
    # Differentiate the smaller of P and Q = 1 - P: near 1, the other one cancels.
    if x > a:
        return _f(-mp.diff(lambda t: _upper(t, x), a))
    return _f(mp.diff(lambda t: _lower(t, x), a))


def bessel_i0e(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0.0
    return _f(mp.besseli(0, x) * mp.exp(-abs(mp.mpf(x))))


def bessel_i1e(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return math.copysign(0.0, x)
    return _f(mp.besseli(1, x) * mp.exp(-abs(mp.mpf(x))))


def betainc(a, b, x):
    if any(math.isnan(v) for v in (a, b, x)) or a <= 0 or b <= 0 or x < 0 or x > 1:
        return NAN
    if x == 0:
        return 0.0
    if x == 1:
        return 1.0
    return _f(mp.betainc(a, b, 0, x, regularized=True))


def random_gamma_grad(a, x):
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return NAN
    if x == 0 or x == INF:
        return 0.0
    pdf = mp.exp((a - 1) * mp.log(x) - x - mp.loggamma(a))
    # dP/da of the smaller of P and Q (the other cancels near 1).
    if x > a:
        dpda = -mp.diff(lambda t: _upper(t, x), a)
    else:
        dpda = mp.diff(lambda t: _lower(t, x), a)
    return _f(-dpda / pdf)


UNARY = {"erf": erf, "erfc": erfc, "erf_inv": erf_inv, "lgamma": lgamma, "digamma": digamma,
         "bessel_i0e": bessel_i0e, "bessel_i1e": bessel_i1e}
BINARY = {"polygamma": polygamma, "zeta": zeta, "igamma": igamma, "igammac": igammac,
          "igamma_grad_a": igamma_grad_a, "random_gamma_grad": random_gamma_grad}
TERNARY = {"betainc": betainc}


def ops(base):
    def result(name, values, dt):
        rtol, atol = (F64_RTOL[name], 1e-300) if dt == "float64" else SMALL_TOL[dt]
        if dt == "float32" and name in F32_RTOL:
            rtol = F32_RTOL[name]
        return base.Result(base.round_to(values, dt), dt, rtol=rtol, atol=atol)

    def check_float(name, ins):
        for i in ins:
            if not base.is_float(i["dtype"]):
                raise base.JaxError("TypeError", "lax.%s requires floating operands, got %s"
                                    % (name, i["dtype"]))

    def unary(name, fn):
        def f(p, ins, x64):
            check_float(name, ins)
            x = np.asarray(ins[0]["a"], np.float64)
            mp.mp.dps = 50
            v = np.array([fn(float(e)) for e in x.ravel()], np.float64).reshape(x.shape)
            return result(name, v, ins[0]["dtype"])
        return f

    def binary(name, fn):
        def f(p, ins, x64):
            if name == "polygamma" and len(ins) == 1:  # the order m given as a param
                m = np.full((), float(p["m"]))
                ins = [{"a": m.astype(base.storage(ins[0]["dtype"])), "dtype": ins[0]["dtype"],
                        "weak": False}] + list(ins)
            check_float(name, ins)
            base.check_same_dtype(name, ins)
            base.lax_shapes(name, ins)
            a, b = np.broadcast_arrays(np.asarray(ins[0]["a"], np.float64),
                                       np.asarray(ins[1]["a"], np.float64))
            mp.mp.dps = 50
            v = np.array([fn(float(u), float(w)) for u, w in zip(a.ravel(), b.ravel())],
                         np.float64).reshape(a.shape)
            return result(name, v, ins[0]["dtype"])
        return f

    def ternary(name, fn):
        def f(p, ins, x64):
            check_float(name, ins)
            base.check_same_dtype(name, ins)
            base.lax_shapes(name, ins)
            a, b, x = np.broadcast_arrays(*[np.asarray(i["a"], np.float64) for i in ins])
            mp.mp.dps = 50
            v = np.array([fn(float(u), float(w), float(z))
                          for u, w, z in zip(a.ravel(), b.ravel(), x.ravel())],
                         np.float64).reshape(a.shape)
            return result(name, v, ins[0]["dtype"])
        return f

    out = {"lax." + k: unary(k, fn) for k, fn in UNARY.items()}
    out.update({"lax." + k: ternary(k, fn) for k, fn in TERNARY.items()})
    out.update({"lax." + k: binary(k, fn) for k, fn in BINARY.items()})
    return out
