"""jax.lax.custom_linear_solve and jax.lax.custom_root: thin wrappers over the C++ core
(tessera/lax_linear_solve.h, the custom_linear_solve primitive of
src/prims/custom_linear_solve.cpp).

custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False)
returns x = solve(matvec, b) and differentiates it implicitly, as JAX does: one primitive
carries matvec, its transpose vecmat, solve and transpose_solve as jaxprs; its JVP is
ẋ = solve(ḃ − ṁatvec(x)) and its transpose solves the transposed system with
transpose_solve(vecmat, ·), so jvp, grad, vjp, linearize and their compositions (jvp of grad)
all work. solve is never differentiated (it may be an iterative loop). Reverse mode needs
transpose_solve (or symmetric=True, where it defaults to solve) and raises JAX's TypeError
otherwise.

custom_root(f, initial_guess, solve, tangent_solve, has_aux=False) finds f(x) = 0 with `solve`
and differentiates by the implicit function theorem (tangent_solve(g, y) solves the linearized
equation g(x) = y).

The functions here only map pytrees to the flat lists the core takes and raise JAX's structure
errors; the staging, the shape checks and every rule are C++.
"""
from tessera import _tessera, tree_util


def _structured(fn_name, expected_name, expected_tree, has_aux, aux_box):
    """Flattens a user function's result, checking its structure against expected_tree
    (JAX's _check_tree): with has_aux the result is (value, aux) and aux's leaves follow."""
    def flatten(out):
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise ValueError(
                    f"{fn_name}() produced a pytree with structure "
                    f"{tree_util.tree_structure(out)}, but a pytree tuple with auxiliary "
                    f"output was expected because has_aux was set to True.")
            out, aux = out
        leaves, tree = tree_util.tree_flatten(out)
        if tree != expected_tree:
            raise TypeError(f"{fn_name}() output pytree structure must match {expected_name}, "
                            f"got {tree} and {expected_tree}.")
        if has_aux:
            aux_leaves, aux_box[0] = tree_util.tree_flatten(aux)
            leaves = leaves + aux_leaves
        return leaves
    return flatten


def _typed_op(op, tree):
    """The core's operator over flat lists as a function of pytrees of b's structure."""
    def apply(x):
        return tree_util.tree_unflatten(tree, op(tree_util.tree_leaves(x)))
    return apply


def _split(out, n, tree, has_aux, aux_box):
    x = tree_util.tree_unflatten(tree, out[:n])
    if has_aux:
        return x, tree_util.tree_unflatten(aux_box[0], out[n:])
    return x


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """x = solve(matvec, b) with implicit derivatives (see the module docstring). b is any
    pytree of arrays; matvec maps such a pytree to one of the same structure."""
    b_flat, tree = tree_util.tree_flatten(b)
    aux_box = [None]
    unflat = lambda xs: tree_util.tree_unflatten(tree, list(xs))  # noqa: E731
    mv_out = _structured("matvec", "b", tree, False, aux_box)
    s_out = _structured("solve", "b", tree, has_aux, aux_box)
    ts_out = _structured("transpose_solve", "b", tree, has_aux, aux_box)

    def flat_matvec(xs):
        return mv_out(matvec(unflat(xs)))

    def flat_solve(op, xs):
        return s_out(solve(_typed_op(op, tree), unflat(xs)))

    flat_tsolve = None
    if transpose_solve is not None:
        def flat_tsolve(op, xs):
            return ts_out(transpose_solve(_typed_op(op, tree), unflat(xs)))

    out = _tessera.custom_linear_solve_flat(flat_matvec, b_flat, flat_solve, flat_tsolve,
                                            bool(symmetric), bool(has_aux))
    return _split(out, len(b_flat), tree, has_aux, aux_box)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """x with f(x) = 0, found by solve(f, initial_guess); derivatives in the values f closes
    over by the implicit function theorem: ẋ = -tangent_solve(∂f/∂x, ∂f/∂θ·θ̇)."""
    g_flat, tree = tree_util.tree_flatten(initial_guess)
    aux_box = [None]
    unflat = lambda xs: tree_util.tree_unflatten(tree, list(xs))  # noqa: E731
    f_out = _structured("f", "initial_guess", tree, False, aux_box)
    s_out = _structured("solve", "initial_guess", tree, has_aux, aux_box)
    ts_out = _structured("tangent_solve", "x", tree, False, aux_box)

    def flat_f(xs):
        return f_out(f(unflat(xs)))

    def flat_solve(op, xs):
        return s_out(solve(_typed_op(op, tree), unflat(xs)))

    def flat_tangent_solve(op, ys):
        return ts_out(tangent_solve(_typed_op(op, tree), unflat(ys)))

    out = _tessera.custom_root_flat(flat_f, g_flat, flat_solve, flat_tangent_solve,
                                    bool(has_aux))
    return _split(out, len(g_flat), tree, has_aux, aux_box)
