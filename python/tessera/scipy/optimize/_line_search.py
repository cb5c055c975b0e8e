"""A strong-Wolfe line search (Nocedal & Wright, "Numerical Optimization", algorithms 3.5 and
3.6) written with lax.while_loop and jnp.where selections, so it traces under jit: the bracketing
phase doubles the step until the sufficient-decrease condition fails or the slope turns
non-negative, then a zoom phase shrinks the bracket by cubic, quadratic or bisection steps.
JAX's jax.scipy.optimize BFGS uses the same search (internal there)."""
from typing import Any, NamedTuple

import numpy as _np

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.api import value_and_grad as _value_and_grad


class LineSearchResults(NamedTuple):
    """failed: no step meeting the strong Wolfe conditions was found; nit: bracketing iterations;
    nfev / ngev: function and gradient evaluations; k: the final iteration counter; a_k: the step
    length; f_k / g_k: value and gradient at x + a_k p; status: 0 ok, 1 zoom failed, 3 maxiter."""
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _pick(cond, new, old):
    """Field-wise jnp.where(cond, new[key], old[key]) over the keys of new."""
    return {key: _jnp.where(cond, val, old[key]) for key, val in new.items()}


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc)."""
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb = fb - fa - fpa * db
    rc = fc - fa - fpa * dc
    A = (dc * dc * rb - db * db * rc) / denom
    B = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-B + _jnp.sqrt(B * B - 3.0 * A * fpa)) / (3.0 * A)


def _quad_min(a, fa, fpa, b, fb):
    """The minimizer of the parabola through (a, fa) with slope fpa at a and through (b, fb)."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curv)


def _zoom(phi_dphi, armijo_fails, curvature_ok, lo, hi, g0, skip, dtype):
    """Algorithm 3.6: lo = (a, phi, dphi) has the lower value, the bracket [lo, hi] holds a
    point meeting the strong Wolfe conditions. Does nothing when skip."""
    tiny = 1e-5 if _np.dtype(dtype).itemsize < 8 else 1e-10
    f = lambda v: _jnp.asarray(v, dtype)
    s = dict(done=_jnp.asarray(False), failed=_jnp.asarray(False), j=_jnp.asarray(0, _jnp.int32),
             a_lo=f(lo[0]), phi_lo=f(lo[1]), dphi_lo=f(lo[2]),
             a_hi=f(hi[0]), phi_hi=f(hi[1]), dphi_hi=f(hi[2]),
             a_rec=f((lo[0] + hi[0]) / 2), phi_rec=f((lo[1] + hi[1]) / 2),
             a_star=f(1.0), phi_star=f(lo[1]), dphi_star=f(lo[2]), g_star=g0,
             nfev=_jnp.asarray(0, _jnp.int32), ngev=_jnp.asarray(0, _jnp.int32))

    def cond(s):
        return ~s["done"] & ~skip & ~s["failed"]

    def body(s):
        s = dict(s)
        width = s["a_hi"] - s["a_lo"]
        left = _jnp.minimum(s["a_hi"], s["a_lo"])
        right = _jnp.maximum(s["a_hi"], s["a_lo"])
        # the bracket's length (JAX compares the signed a_hi - a_lo, which fails every zoom
        # entered with a_lo > a_hi; SciPy's zoom, like this one, measures |a_hi - a_lo|)
        s["failed"] = s["failed"] | (_jnp.abs(width) <= tiny)
        cubic = _cubic_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"],
                           s["a_rec"], s["phi_rec"])
        width = _jnp.abs(width)
        cubic_ok = (s["j"] > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
        quad = _quad_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        quad_ok = ~cubic_ok & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
        a_j = _jnp.where(cubic_ok, cubic,
                         _jnp.where(quad_ok, quad, (s["a_lo"] + s["a_hi"]) / 2))
        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j = phi_j.astype(dtype)
        dphi_j = dphi_j.astype(dtype)
        s["nfev"] = s["nfev"] + 1
        s["ngev"] = s["ngev"] + 1
        # a_j too high (or not below lo): it becomes the new hi end
        to_hi = armijo_fails(a_j, phi_j) | (phi_j >= s["phi_lo"])
        # a_j meets both conditions: done
        found = curvature_ok(dphi_j) & ~to_hi
        # otherwise a_j becomes lo; if the slope points back past hi the old lo becomes hi
        flip = (dphi_j * (s["a_hi"] - s["a_lo"]) >= 0) & ~to_hi & ~found
        to_lo = ~to_hi & ~found
        s.update(_pick(to_hi, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s["a_hi"],
                                   phi_rec=s["phi_hi"]), s))
        s["done"] = s["done"] | found
        s.update(_pick(found, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), s))
        s.update(_pick(flip, dict(a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"],
                                  a_rec=s["a_hi"], phi_rec=s["phi_hi"]), s))
        s.update(_pick(to_lo & ~flip, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"]), s))
        s.update(_pick(to_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s))
        s["j"] = s["j"] + 1
        s["failed"] = s["failed"] | (s["j"] >= 30)
        return s

    return _lax.while_loop(cond, body, s)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """An inexact line search along the descent direction pk from xk whose step satisfies the
    strong Wolfe conditions f(xk + a pk) <= f(xk) + c1 a f'(xk; pk) and
    |f'(xk + a pk; pk)| <= c2 |f'(xk; pk)|. old_fval / gfk: f and its gradient at xk when known;
    old_old_fval: the previous iterate's value, which sets the first trial step as SciPy's.
    Returns LineSearchResults."""
    xk = _jnp.asarray(xk)
    pk = _jnp.asarray(pk)
    dtype = _jnp.result_type(xk, pk)
    if not _jnp.issubdtype(dtype, _jnp.floating):
        dtype = _jnp.result_type(dtype, 1.0)
    xk = xk.astype(dtype)
    pk = pk.astype(dtype)
    f_ = lambda v: _jnp.asarray(v, dtype)

    def phi_dphi(t):
        val, g = _value_and_grad(f)(xk + f_(t) * pk)
        return _jnp.asarray(val).astype(dtype), _jnp.dot(g, pk).astype(dtype), g.astype(dtype)

    have_start = old_fval is not None and gfk is not None
    if have_start:
        phi0 = f_(old_fval)
        gfk = _jnp.asarray(gfk).astype(dtype)
        dphi0 = _jnp.dot(gfk, pk)
    else:
        phi0, dphi0, gfk = phi_dphi(0.0)
    if old_old_fval is not None:
        guess = 1.01 * 2 * (phi0 - f_(old_old_fval)) / dphi0
        a_first = _jnp.where(guess > 1, f_(1.0), guess)
    else:
        a_first = f_(1.0)

    def armijo_fails(a, phi):
        return phi > phi0 + c1 * a * dphi0

    def curvature_ok(dphi):
        return _jnp.abs(dphi) <= -c2 * dphi0

    n0 = 0 if have_start else 1
    s = dict(done=_jnp.asarray(False), failed=_jnp.asarray(False), i=_jnp.asarray(1, _jnp.int32),
             a_prev=f_(0.0), phi_prev=phi0, dphi_prev=dphi0,
             nfev=_jnp.asarray(n0, _jnp.int32), ngev=_jnp.asarray(n0, _jnp.int32),
             a_star=f_(0.0), phi_star=phi0, dphi_star=dphi0, g_star=gfk)

    def cond(s):
        return ~s["done"] & (s["i"] <= maxiter) & ~s["failed"]

    def body(s):
        s = dict(s)
        a_i = _jnp.where(s["i"] == 1, a_first, s["a_prev"] * 2)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        s["nfev"] = s["nfev"] + 1
        s["ngev"] = s["ngev"] + 1
        # the bracket [a_prev, a_i] holds an acceptable step, a_prev is the lower end
        zoom_up = armijo_fails(a_i, phi_i) | ((phi_i >= s["phi_prev"]) & (s["i"] > 1))
        accept = curvature_ok(dphi_i) & ~zoom_up
        # the slope turned non-negative: the bracket with a_i as the lower end
        zoom_down = (dphi_i >= 0) & ~zoom_up & ~accept
        prev = (s["a_prev"], s["phi_prev"], s["dphi_prev"])
        cur = (a_i, phi_i, dphi_i)
        z1 = _zoom(phi_dphi, armijo_fails, curvature_ok, prev, cur, gfk, ~zoom_up, dtype)
        z2 = _zoom(phi_dphi, armijo_fails, curvature_ok, cur, prev, gfk, ~zoom_down, dtype)
        s["nfev"] = s["nfev"] + z1["nfev"] + z2["nfev"]
        s["ngev"] = s["ngev"] + z1["ngev"] + z2["ngev"]
        keys = ("a_star", "phi_star", "dphi_star", "g_star")
        s["done"] = s["done"] | zoom_up | accept | zoom_down
        s["failed"] = s["failed"] | (zoom_up & z1["failed"]) | (zoom_down & z2["failed"])
        s.update(_pick(zoom_up, {k: z1[k] for k in keys}, s))
        s.update(_pick(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i),
                       s))
        s.update(_pick(zoom_down, {k: z2[k] for k in keys}, s))
        s.update(i=s["i"] + 1, a_prev=a_i, phi_prev=phi_i, dphi_prev=dphi_i)
        return s

    s = _lax.while_loop(cond, body, s)
    status = _jnp.where(s["failed"], 1, _jnp.where(s["i"] > maxiter, 3, 0))
    a_k = s["a_star"]
    if _np.dtype(dtype).itemsize < 8:
        # below 64 bits a vanishing step would stall the caller: keep it at least 1e-8
        a_k = _jnp.where(_jnp.abs(a_k) < 1e-8, _jnp.sign(a_k) * f_(1e-8), a_k)
    return LineSearchResults(failed=s["failed"] | ~s["done"], nit=s["i"] - 1, nfev=s["nfev"],
                             ngev=s["ngev"], k=s["i"], a_k=a_k, f_k=s["phi_star"],
                             g_k=s["g_star"], status=status)
