"""BFGS (Nocedal & Wright algorithm 6.1) as one lax.while_loop: the dense inverse-Hessian
estimate H, the search direction -H g, a strong-Wolfe line search, and the rank-two update
H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T (skipped when rho = 1 / y.s is not finite)."""
from typing import Any, NamedTuple

from tessera import lax as _lax
from tessera import numpy as _jnp
from tessera._src.api import value_and_grad as _value_and_grad
from tessera.scipy.optimize._line_search import line_search


class _BFGSResults(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _norm(g, ord):
    return _jnp.linalg.norm(g, ord=ord)


def minimize_bfgs(fun, x0, maxiter=None, norm=_jnp.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimizes fun from the 1-D x0; stops when the gradient's `norm`-norm is below gtol, after
    maxiter iterations (default 200 * x0.size) or when a line search fails. status: 0 converged,
    1 maxiter, 2 + the line search's status when it failed."""
    d = x0.shape[0]
    dtype = x0.dtype
    i32 = lambda v: _jnp.asarray(v, _jnp.int32)
    if maxiter is None:
        maxiter = x0.size * 200
    f0, g0 = _value_and_grad(fun)(x0)
    f0 = _jnp.asarray(f0).astype(dtype)
    g0 = g0.astype(dtype)
    state = _BFGSResults(
        converged=_norm(g0, norm) < gtol, failed=_jnp.asarray(False), k=i32(0), nfev=i32(1),
        ngev=i32(1), nhev=i32(0), x_k=x0, f_k=f0, g_k=g0, H_k=_jnp.eye(d, dtype=dtype),
        old_old_fval=f0 + _jnp.linalg.norm(g0) / 2, status=i32(0), line_search_status=i32(0))

    def cond(st):
        return ~st.converged & ~st.failed & (st.k < maxiter)

    def body(st):
        p = -(st.H_k @ st.g_k)
        ls = line_search(fun, st.x_k, p, old_fval=st.f_k, old_old_fval=st.old_old_fval,
                         gfk=st.g_k, maxiter=line_search_maxiter)
        s = ls.a_k.astype(dtype) * p
        x_new = st.x_k + s
        g_new = ls.g_k.astype(dtype)
        y = g_new - st.g_k
        rho = 1.0 / _jnp.dot(y, s)
        w = _jnp.eye(d, dtype=dtype) - rho * (s[:, None] * y[None, :])
        H_new = w @ st.H_k @ w.T + rho * (s[:, None] * s[None, :])
        H_new = _jnp.where(_jnp.isfinite(rho), H_new, st.H_k)
        return st._replace(
            nfev=st.nfev + ls.nfev, ngev=st.ngev + ls.ngev, failed=ls.failed,
            line_search_status=ls.status.astype(_jnp.int32),
            converged=_norm(g_new, norm) < gtol, k=st.k + 1, x_k=x_new,
            f_k=ls.f_k.astype(dtype), g_k=g_new, H_k=H_new, old_old_fval=st.f_k)

    state = _lax.while_loop(cond, body, state)
    status = _jnp.where(state.converged, 0,
                        _jnp.where(state.k == maxiter, 1,
                                   _jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status.astype(_jnp.int32))
