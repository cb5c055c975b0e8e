"""L-BFGS (Nocedal & Wright algorithm 7.4/7.5) as one lax.while_loop: the last `maxcor` pairs
(s, y) kept in ring buffers, the two-loop recursion for the direction with the initial scaling
gamma = s.y / y.y of the newest pair, and a strong-Wolfe line search. JAX marks its version
experimental; this one follows its options and status codes."""
from typing import Any, NamedTuple

import numpy as _np

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.api import value_and_grad as _value_and_grad
from tessera.scipy.optimize._line_search import line_search


class LBFGSResults(NamedTuple):
    """status: 0 converged, 1 maxiter, 2 maxfun, 3 maxgrad, 4 insufficient progress (ftol),
    5 line search failed."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _two_loop(g, s_hist, y_hist, rho_hist, gamma, k, maxcor):
    """-H g for the L-BFGS inverse-Hessian estimate; slot (k - 1 - i) % maxcor is the i-th newest
    pair, slots with no pair yet have rho = 0 and drop out."""
    n_used = _jnp.minimum(k, maxcor)
    q = -g
    alphas = []
    for i in range(maxcor):
        idx = (k - 1 - i) % maxcor
        used = i < n_used
        a = _jnp.where(used, rho_hist[idx] * _jnp.dot(s_hist[idx], q), 0.0)
        q = q - a * y_hist[idx]
        alphas.append(a)
    r = gamma * q
    for i in reversed(range(maxcor)):
        idx = (k - 1 - i) % maxcor
        used = i < n_used
        b = _jnp.where(used, rho_hist[idx] * _jnp.dot(y_hist[idx], r), 0.0)
        r = r + (alphas[i] - b) * s_hist[idx]
    return r


def minimize_lbfgs(fun, x0, maxiter=None, norm=_jnp.inf, maxcor=10, ftol=2.220446049250313e-09,
                   gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
    d = x0.shape[0]
    dtype = x0.dtype
    i32 = lambda v: _jnp.asarray(v, _jnp.int32)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = 200 * d
    if maxiter is None:
        maxiter = _np.inf
    f0, g0 = _value_and_grad(fun)(x0)
    f0 = _jnp.asarray(f0).astype(dtype)
    g0 = g0.astype(dtype)
    state = LBFGSResults(
        converged=_jnp.linalg.norm(g0, ord=norm) < gtol, failed=_jnp.asarray(False), k=i32(0),
        nfev=i32(1), ngev=i32(1), x_k=x0, f_k=f0, g_k=g0,
        s_history=_jnp.zeros((maxcor, d), dtype), y_history=_jnp.zeros((maxcor, d), dtype),
        rho_history=_jnp.zeros((maxcor,), dtype), gamma=_jnp.asarray(1.0, dtype),
        status=i32(0), ls_status=i32(0))

    def cond(st):
        return ~st.converged & ~st.failed

    def body(st):
        p = _two_loop(st.g_k, st.s_history, st.y_history, st.rho_history, st.gamma, st.k,
                      maxcor)
        ls = line_search(fun, st.x_k, p, old_fval=st.f_k, gfk=st.g_k, maxiter=maxls)
        s = ls.a_k.astype(dtype) * p
        x_new = st.x_k + s
        f_new = ls.f_k.astype(dtype)
        g_new = ls.g_k.astype(dtype)
        y = g_new - st.g_k
        sy = _jnp.dot(s, y)
        rho = _jnp.where(sy == 0, 0.0, 1.0 / sy).astype(dtype)
        gamma = _jnp.where(sy == 0, st.gamma, sy / _jnp.dot(y, y)).astype(dtype)
        slot = st.k % maxcor
        s_hist = st.s_history.at[slot].set(s)
        y_hist = st.y_history.at[slot].set(y)
        rho_hist = st.rho_history.at[slot].set(rho)
        converged = _jnp.linalg.norm(g_new, ord=norm) < gtol
        k = st.k + 1
        nfev = st.nfev + ls.nfev
        ngev = st.ngev + ls.ngev
        # the last matching condition wins, as JAX's: a failed line search over maxiter over
        # maxfun over maxgrad over too little decrease (f_k - f_{k+1} < ftol)
        status = _jnp.where(st.f_k - f_new < ftol, 4, 0)
        if maxgrad is not None:
            status = _jnp.where(st.ngev >= maxgrad, 3, status)
        if maxfun is not None:
            status = _jnp.where(st.nfev >= maxfun, 2, status)
        status = _jnp.where(st.k >= maxiter, 1, status)
        status = _jnp.where(ls.failed, 5, status)
        status = _jnp.where(converged, 0, status)
        failed = (status > 0) & ~converged
        return st._replace(converged=converged, failed=failed, k=k, nfev=nfev, ngev=ngev,
                           x_k=x_new, f_k=f_new, g_k=g_new, s_history=s_hist,
                           y_history=y_hist, rho_history=rho_hist, gamma=gamma,
                           status=status.astype(_jnp.int32),
                           ls_status=ls.status.astype(_jnp.int32))

    return _lax.while_loop(cond, body, state)
