"""SciPy references for tessera::scipy::special (tests/cpp/test_scipy_special.cpp).

Ops "sps.<name>": the inputs are float32/float64 arrays of one dtype (polygamma's order and
expn's n may be integers); the reference is scipy.special's function evaluated in float64 on
the exact input values and rounded once to the input dtype. Where JAX's conventions differ from
SciPy's (restated from jax.scipy.special's documentation and source, not from the C++ code) the
reference follows JAX:
  gammasgn: NaN at the poles (0, -1, ... excluded: +-1 at +-0), at -inf and NaN; 1 at +inf.
  digamma: NaN at the poles and at -inf. gamma: NaN at negative integers and -inf.
  xlogy / xlog1py: 0 wherever x == 0 (even for NaN y). rel_entr / kl_div: inf when an input
  is NaN (JAX's where-chain), i0 / i1 at +-inf: +-inf (SciPy's limits). gammaln(+-inf) = inf and
  gamma(-0) = -inf (XLA's lgamma; JAX's sign * exp(lgamma)). gammainc / gammaincc: XLA's
  igamma / igammac conventions (NaN / 1 for a <= 0). zeta: XLA's at q <= 0 and for huge x
  (oracle_special.zeta). spence(inf) = -inf (the limit; SciPy gives NaN).
Params: {"n": .., "m": .., "d": .., "axis": .., "keepdims": .., "normalized": ..} per op.

Tolerances (|got - want| <= atol + rtol |want|): TOL[name] = (float32 rtol, float64 rtol);
atol is rtol times the reference's scale (1 for bounded functions) so values crossing zero
compare absolutely.
"""

import math

import numpy as np

try:
    import scipy.special as ss
except ImportError:  # pragma: no cover - the C++ test skips when SciPy is missing
    ss = None

# (float32 rtol, float64 rtol). Float32 evaluates in float32 (a few ulps per operation, more
# where exp amplifies an lgamma or where a series accumulates); float64 carries its kernels'
# error and SciPy's own (1e-15 .. 1e-13; more for the iterative series).
TOL = {
    "gammaln": (2e-6, 1e-13), "gammasgn": (0, 0), "gamma": (3e-5, 1e-12),
    "betaln": (5e-6, 1e-12), "beta": (5e-5, 1e-12), "betainc": (5e-5, 1e-11),
    "gammainc": (2e-5, 1e-12), "gammaincc": (2e-5, 1e-12), "factorial": (3e-5, 1e-12),
    "poch": (1e-4, 1e-11), "multigammaln": (5e-6, 1e-13), "digamma": (1e-5, 1e-13),
    "polygamma": (5e-5, 1e-12), "zeta": (1e-5, 1e-12), "erf": (2e-6, 1e-15),
    "erfc": (1e-5, 1e-14), "erfinv": (1e-5, 1e-14), "ndtr": (1e-5, 1e-14),
    "ndtri": (1e-5, 1e-14), "log_ndtr": (1e-5, 1e-10), "i0": (5e-6, 1e-14),
    "i0e": (5e-6, 1e-14), "i1": (5e-6, 1e-14), "i1e": (5e-6, 1e-14), "logit": (5e-6, 1e-14),
    "expit": (2e-6, 1e-15), "xlogy": (2e-6, 1e-15), "xlog1py": (2e-6, 1e-15),
    "entr": (2e-6, 1e-15), "rel_entr": (5e-6, 1e-14), "kl_div": (5e-6, 1e-14),
    "logsumexp": (2e-6, 1e-14), "softmax": (5e-6, 1e-14), "log_softmax": (5e-6, 1e-14),
    "bernoulli": (1e-7, 1e-10), "exp1": (1e-5, 1e-13), "expi": (2e-5, 1e-13),
    "expn": (2e-5, 1e-12), "spence": (1e-5, 1e-13), "hyp1f1": (5e-4, 1e-9),
    "hyp2f1": (5e-4, 1e-10), "fresnel_s": (1e-5, 1e-13), "fresnel_c": (1e-5, 1e-13),
    "lpmn_values": (1e-5, 1e-13), "lpmn_d": (5e-5, 1e-11),
}

NAN = float("nan")
INF = float("inf")


def _is_pole(x):
    return (x <= 0) & (np.floor(x) == x)


def _gammasgn(x):
    with np.errstate(all="ignore"):
        fl = np.floor(x)
        neg_odd = (x < 0) & (np.mod(fl, 2) != 0)
        out = np.where(neg_odd, -1.0, 1.0)
        out = np.where(x == 0, np.where(np.signbit(x), -1.0, 1.0), out)
        pole = ((x < 0) & (fl == x)) | np.isnan(x)
        return np.where(pole, NAN, out)


def _gamma(x):
    with np.errstate(all="ignore"):
        v = ss.gamma(x)
        v = np.where((x == 0) & np.signbit(x), -INF, v)  # Gamma(-0) = -inf (JAX: sign * exp)
        return np.where(((x < 0) & (np.floor(x) == x)) | (x == -INF), NAN, v)


def _gammaln(x):
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), INF, ss.gammaln(x))


def _spence(x):
    with np.errstate(all="ignore"):
        return np.where(x == INF, -INF, ss.spence(x))


def _gammainc(a, x, upper):
    """XLA's igamma / igammac conventions (JAX's gammainc / gammaincc are lax.igamma /
    igammac): NaN (P) or 1 (Q) for a <= 0; NaN for x < 0 (P)."""
    with np.errstate(all="ignore"):
        v = ss.gammaincc(a, x) if upper else ss.gammainc(a, x)
        bad = (a <= 0) | np.isnan(a) | np.isnan(x)
        if upper:
            return np.where(bad, np.where(np.isnan(a) | np.isnan(x), NAN, 1.0),
                            np.where(x <= 0, 1.0, v))
        return np.where(bad | (x < 0), NAN, v)


def _zeta(x, q):
    """SciPy's Hurwitz zeta, with XLA's conventions (JAX's zeta is lax.zeta) from
    oracle_special.zeta where SciPy returns NaN or disagrees: q <= 0 and huge x."""
    import oracle_special
    with np.errstate(all="ignore"):
        v = np.array(ss.zeta(x, q), np.float64)
        fix = (q <= 0) | (x > 1e15) | np.isnan(v)
        for i in zip(*np.nonzero(fix)) if v.ndim else ([()] if fix else []):
            v[i] = oracle_special.zeta(float(x[i]), float(q[i]))
        return v


def _digamma(x):
    with np.errstate(all="ignore"):
        v = ss.digamma(x)
        return np.where(_is_pole(x) | (x == -INF), NAN, v)


def _xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, ss.xlogy(x, y))


def _xlog1py(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, ss.xlog1py(x, y))


def _rel_entr(p, q):
    with np.errstate(all="ignore"):
        return np.where(np.isnan(p) | np.isnan(q), INF, ss.rel_entr(p, q))


def _kl_div(p, q):
    with np.errstate(all="ignore"):
        # JAX: rel_entr(p, q) - p + q (NaN inputs: inf - p + q).
        return _rel_entr(p, q) - p + q


def _i0(x):
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), INF, ss.i0(x))


def _i1(x):
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), x, ss.i1(x))


def _logsumexp(p, a, *rest):
    """scipy's logsumexp; params axis, keepdims, "b": the next input is b, "where": the next
    input is JAX's where mask (excluded entries: b = 0), "sign": return_sign=True and this
    output (0: log|sum|, 1: the sign)."""
    rest = list(rest)
    b = rest.pop(0) if p.get("b") else None
    if p.get("where"):
        mask = rest.pop(0) != 0
        b = np.where(mask, 1.0 if b is None else b, 0.0)
    r = ss.logsumexp(a, axis=p.get("axis"), b=b, keepdims=p.get("keepdims", False),
                     return_sign="sign" in p)
    return r[p["sign"]] if "sign" in p else r


def _lpmn_table(m, n, z, normalized):
    """(values, derivatives) as (m+1, n+1, len(z)) from scipy.special.lpmn per z."""
    vals = np.zeros((m + 1, n + 1, len(z)))
    ders = np.zeros((m + 1, n + 1, len(z)))
    for i, zi in enumerate(z):
        p, d = ss.lpmn(m, n, float(zi))
        vals[:, :, i] = p
        ders[:, :, i] = d
    if normalized:
        for k in range(m + 1):
            for ll in range(n + 1):
                if ll >= k:
                    vals[k, ll] *= math.sqrt((2 * ll + 1) / (4 * math.pi) *
                                             math.factorial(ll - k) / math.factorial(ll + k))
    return vals, ders


def ops(base):
    B = base

    def f64(i):
        return np.asarray(B.to_f64(i["a"]), np.float64)

    def make(name, fn, dtype_index=0):
        def op(p, ins, x64):
            if ss is None:
                raise B.Skip("scipy is not installed")
            dt = "float64" if name == "bernoulli" and x64 else (
                "float32" if name == "bernoulli" else ins[dtype_index]["dtype"])
            args = [f64(i) for i in ins]
            with np.errstate(all="ignore"):
                v = np.asarray(fn(p, *args), np.float64)
            r32, r64 = TOL[name]
            rtol = r64 if dt == "float64" else r32
            finite = v[np.isfinite(v)]
            scale = 1.0
            if name in ("softmax", "log_softmax", "logsumexp", "lpmn_values", "lpmn_d",
                        "hyp1f1", "hyp2f1", "kl_div", "rel_entr", "xlogy", "xlog1py",
                        "entr", "log_ndtr", "expi", "spence"):
                scale = max(1.0, float(np.max(np.abs(finite)))) if finite.size else 1.0
            tiny = np.finfo(np.float32 if dt == "float32" else np.float64).tiny
            return B.Result(B.round_to(v, dt), dt, None, rtol, rtol * scale + tiny)
        return op

    table = {
        "gammaln": lambda p, x: _gammaln(x),
        "gammasgn": lambda p, x: _gammasgn(x),
        "gamma": lambda p, x: _gamma(x),
        "betaln": lambda p, a, b: ss.betaln(a, b),
        "beta": lambda p, a, b: ss.beta(a, b),
        "betainc": lambda p, a, b, x: ss.betainc(a, b, x),
        "gammainc": lambda p, a, x: _gammainc(a, x, False),
        "gammaincc": lambda p, a, x: _gammainc(a, x, True),
        "factorial": lambda p, n: np.where(n < 0, 0.0, ss.gamma(n + 1)),
        "poch": lambda p, z, m: ss.poch(z, m),
        "multigammaln": lambda p, a: np.vectorize(lambda v: ss.multigammaln(v, p["d"]))(a),
        "digamma": lambda p, x: _digamma(x),
        "polygamma": lambda p, n, x: ss.polygamma(n.astype(np.int64), x),
        "zeta": lambda p, x, q: _zeta(x, q),
        "erf": lambda p, x: ss.erf(x),
        "erfc": lambda p, x: ss.erfc(x),
        "erfinv": lambda p, x: ss.erfinv(x),
        "ndtr": lambda p, x: ss.ndtr(x),
        "ndtri": lambda p, x: ss.ndtri(x),
        "log_ndtr": lambda p, x: ss.log_ndtr(x),
        "i0": lambda p, x: _i0(x),
        "i0e": lambda p, x: ss.i0e(x),
        "i1": lambda p, x: _i1(x),
        "i1e": lambda p, x: ss.i1e(x),
        "logit": lambda p, x: ss.logit(x),
        "expit": lambda p, x: ss.expit(x),
        "xlogy": lambda p, x, y: _xlogy(x, y),
        "xlog1py": lambda p, x, y: _xlog1py(x, y),
        "entr": lambda p, x: ss.entr(x),
        "rel_entr": lambda p, a, b: _rel_entr(a, b),
        "kl_div": lambda p, a, b: _kl_div(a, b),
        "logsumexp": lambda p, a, *b: _logsumexp(p, a, *b),
        "softmax": lambda p, x: ss.softmax(x, axis=p.get("axis")),
        "log_softmax": lambda p, x: ss.log_softmax(x, axis=p.get("axis")),
        "bernoulli": lambda p: ss.bernoulli(p["n"]),
        "exp1": lambda p, x: np.where(x < 0, NAN, ss.exp1(np.where(x < 0, 1.0, x))),
        "expi": lambda p, x: ss.expi(x),
        "expn": lambda p, n, x: ss.expn(n, x),
        "spence": lambda p, x: _spence(x),
        "hyp1f1": lambda p, a, b, x: ss.hyp1f1(a, b, x),
        "hyp2f1": lambda p, a, b, c, x: ss.hyp2f1(a, b, c, x),
        "fresnel_s": lambda p, x: ss.fresnel(x)[0],
        "fresnel_c": lambda p, x: ss.fresnel(x)[1],
        "lpmn_values": lambda p, z: _lpmn_table(p["m"], p["n"], z, p["normalized"])[0],
        "lpmn_d": lambda p, z: _lpmn_table(p["m"], p["n"], z, False)[1],
    }
    out = {}
    for k, fn in table.items():
        idx = 1 if k in ("polygamma", "expn") else 0
        out["sps." + k] = make(k, fn, idx)
    return out
