"""tessera.scipy.optimize: jax.scipy.optimize.minimize with method "BFGS" (and JAX's
experimental "l-bfgs-experimental-do-not-rely-on-this"), each a single lax.while_loop with a
strong-Wolfe line search, so minimize traces under jit and vmap."""
from typing import Any, NamedTuple

from tessera import numpy as _jnp
from tessera.scipy.optimize._bfgs import minimize_bfgs as _minimize_bfgs
from tessera.scipy.optimize._lbfgs import minimize_lbfgs as _minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """x: the solution; success: converged without a line-search failure; status: the solver's
    code (BFGS: 0 converged, 1 maxiter, 2+ line search failed); fun / jac: value and gradient at
    x; hess_inv: the inverse-Hessian estimate (None for L-BFGS); nfev / njev: function and
    gradient evaluations; nit: iterations."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimizes the scalar fun(x, *args) over a 1-D x from x0. method: "BFGS" or
    "l-bfgs-experimental-do-not-rely-on-this" (case-insensitive). tol is accepted and unused,
    as JAX's; options go to the solver (BFGS: maxiter, norm, gtol, line_search_maxiter)."""
    del tol
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got "
                        f"{args}")
    if not isinstance(method, str):
        raise TypeError(f"jax.scipy.optimize.minimize: method must be a string, got "
                        f"{type(method).__name__}")
    x0 = _jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"jax.scipy.optimize.minimize: x0 must be 1-D, got shape {x0.shape}; "
                         "ravel it (jax.flatten_util.ravel_pytree) and reshape inside fun")
    if not _jnp.issubdtype(x0.dtype, _jnp.floating):
        x0 = x0.astype(_jnp.result_type(x0.dtype, 1.0))
    fun_with_args = lambda x: fun(x, *args)
    kind = method.lower()
    if kind == "bfgs":
        r = _minimize_bfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                               fun=r.f_k, jac=r.g_k, hess_inv=r.H_k, nfev=r.nfev, njev=r.ngev,
                               nit=r.k)
    if kind == "l-bfgs-experimental-do-not-rely-on-this":
        r = _minimize_lbfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged, status=r.status, fun=r.f_k,
                               jac=r.g_k, hess_inv=None, nfev=r.nfev, njev=r.ngev, nit=r.k)
    raise ValueError(f"Method {method} not recognized")
