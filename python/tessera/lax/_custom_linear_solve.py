"""jax.lax.custom_linear_solve and jax.lax.custom_root.

custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False)
returns x = solve(matvec, b) and differentiates it implicitly, as JAX does; solve is never
differentiated (the values it closes over, a factorization say, carry no derivative).
- Without transpose_solve (and not symmetric): a custom JVP, ẋ = solve(matvec, ḃ - ṁatvec(x))
  (ṁatvec: matvec's derivative in the values it closes over, at fixed x). Forward mode works
  for any solve; reverse mode transposes solve's own operations, so it works when solve is made
  of linear primitives (triangular solves, products, gathers), not for iterative loops (JAX
  raises there instead).
- With transpose_solve (or symmetric=True, transpose_solve = solve): a custom VJP whose
  cotangent is transpose_solve(vecmat, ḡ) — one solve with the transposed operator, as JAX's
  transpose rule — and -(∂matvec/∂θ)ᵀ of it at x for matvec's values. Tessera cannot transpose
  a custom VJP applied to a tangent, so forward mode raises here (JAX supports it): a known
  difference.

custom_root(f, initial_guess, solve, tangent_solve, has_aux=False) finds f(x) = 0 with `solve`
and differentiates by the implicit function theorem (tangent_solve(g, y) solves the linearized
equation g(x) = y).
"""
from tessera import tree_util
from tessera._src import api as _api
from tessera._src.custom_derivatives import closure_convert, custom_jvp, custom_vjp


def _leaves(x):
    return tree_util.tree_leaves(x)


def _sub(a, b):
    return tree_util.tree_map(lambda u, v: u - v, a, b)


def _stop(x):
    from tessera import lax
    return tree_util.tree_map(lax.stop_gradient, x)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """x = solve(matvec, b) with implicit derivatives (see the module docstring). b is any
    pytree of arrays; matvec maps such a pytree to one of the same structure."""
    if has_aux:
        _, aux = solve(matvec, b)
        aux = _stop(aux)

    def solve_only(mv, bb):
        out = solve(mv, bb)
        return out[0] if has_aux else out

    if symmetric and transpose_solve is None:
        transpose_solve = solve
    mv, mv_consts = closure_convert(matvec, b)
    sv, sv_consts = closure_convert(lambda bb: solve_only(matvec, bb), b)
    sv_consts = _stop(sv_consts)

    if transpose_solve is None:
        # Forward mode (and reverse mode by transposing solve's own operations, which works
        # for solves built of linear primitives such as triangular solves and products).
        @custom_jvp
        def f(bb, mvc):
            return sv(bb, *sv_consts)

        @f.defjvp
        def f_jvp(primals, tangents):
            bb, mvc = primals
            db, dmvc = tangents
            x = sv(bb, *sv_consts)
            rhs = db
            if mvc:
                _, mv_dot = _api.jvp(lambda *c: mv(x, *c), tuple(mvc), tuple(dmvc))
                rhs = _sub(db, mv_dot)
            return x, sv(rhs, *sv_consts)

        x = f(b, list(mv_consts))
        return (x, aux) if has_aux else x

    # Reverse mode through transpose_solve (JAX's transpose rule): the cotangent of b is
    # transpose_solve(vecmat, ct), that of matvec's values -(∂matvec/∂θ)ᵀ applied to it at x.
    def t_solve_only(bb):
        if symmetric:
            vecmat = matvec
        else:
            tr = _api.linear_transpose(matvec, b)

            def vecmat(y):
                return tr(y)[0]
        out = transpose_solve(vecmat, bb)
        return out[0] if has_aux else out

    tsv, tsv_consts = closure_convert(t_solve_only, b)
    tsv_consts = _stop(tsv_consts)

    @custom_vjp
    def g(bb, mvc):
        return sv(bb, *sv_consts)

    def g_fwd(bb, mvc):
        x = sv(bb, *sv_consts)
        return x, (x, mvc)

    def g_bwd(res, ct):
        x, mvc = res
        ct_b = tsv(ct, *tsv_consts)
        if not mvc:
            return (ct_b, [])
        _, pull = _api.vjp(lambda *c: mv(x, *c), *mvc)
        ct_c = pull(ct_b)
        return (ct_b, [tree_util.tree_map(lambda v: -v, c) for c in ct_c])

    g.defvjp(g_fwd, g_bwd)
    x = g(b, list(mv_consts))
    return (x, aux) if has_aux else x


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """x with f(x) = 0, found by solve(f, initial_guess); derivatives in the values f closes
    over by the implicit function theorem: ẋ = -tangent_solve(∂f/∂x, ∂f/∂θ·θ̇)."""
    if has_aux:
        _, aux = solve(f, initial_guess)
        aux = _stop(aux)
    fc, f_consts = closure_convert(f, initial_guess)
    root = solve(f, initial_guess)
    root = root[0] if has_aux else root

    @custom_jvp
    def g(consts, guess_root):
        return guess_root

    @g.defjvp
    def g_jvp(primals, tangents):
        consts, r = primals
        dconsts, _ = tangents
        if not consts:
            return r, tree_util.tree_map(lambda v: v * 0, r)
        _, f_dot = _api.jvp(lambda *c: fc(r, *c), tuple(consts), tuple(dconsts))

        def lin_f(y):
            return _api.jvp(lambda z: fc(z, *consts), (r,), (y,))[1]

        sol = tangent_solve(lin_f, f_dot)
        return r, tree_util.tree_map(lambda v: -v, sol)

    x = g(list(f_consts), _stop(root))
    return (x, aux) if has_aux else x
