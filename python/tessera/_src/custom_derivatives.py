"""jax.custom_jvp and jax.custom_vjp over Tessera's flat C++ core (custom_derivatives_flat.h).

The decorated function's differentiable arguments are flattened with tessera.tree_util; the core
stages the function, binds custom_jvp_call / custom_vjp_call and calls the user's rules through
flat adapters defined here, which rebuild the pytrees, pass the nondiff_argnums values first
(as JAX does: jvp(*nondiff, primals, tangents), fwd(*args), bwd(*nondiff, res, g)) and raise
JAX's structure errors. Shape/dtype checks of the rules' outputs are done by the core.
"""
import functools
import inspect

from tessera import _tessera
from tessera import tree_util

Array = _tessera.Array

__all__ = ["custom_jvp", "custom_vjp", "SymbolicZero", "CustomVJPPrimal",
           "custom_vjp_primal_tree_values", "closure_convert"]


class SymbolicZero:
    """A zero tangent that was never materialized (jax.custom_derivatives.SymbolicZero): what a
    custom_jvp rule defined with ``defjvp(rule, symbolic_zeros=True)`` receives for arguments
    that are not being differentiated. A rule may return one as an output tangent."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def aval(self):
        from tessera._src.api import ShapeDtypeStruct
        return ShapeDtypeStruct(self.shape, self.dtype)

    def instantiate(self):
        return _zeros(self.shape, self.dtype)

    def __repr__(self):
        return f"SymbolicZero({self.aval})"


class CustomVJPPrimal:
    """What a custom_vjp fwd rule defined with ``defvjp(fwd, bwd, symbolic_zeros=True)``
    receives for each differentiable argument leaf (jax.custom_derivatives.CustomVJPPrimal):
    the primal ``value`` and whether it is ``perturbed`` (being differentiated). Tessera's core
    does not tell the fwd rule which inputs carry tangents, so ``perturbed`` is conservatively
    True for every leaf (the bwd rule's cotangents for unperturbed inputs are discarded)."""

    __slots__ = ("value", "perturbed")

    def __init__(self, value, perturbed):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def custom_vjp_primal_tree_values(tree):
    """The values of a tree of CustomVJPPrimal leaves (what a symbolic_zeros fwd rule
    receives), as jax.custom_derivatives.custom_vjp_primal_tree_values."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_util.tree_map(value, tree)


def _ensure_arrays(leaves):
    return [x if isinstance(x, Array) else _tessera.asarray(x) for x in leaves]


def _fun_name(f):
    return getattr(f, "__name__", type(f).__name__)


def _resolve_args(fun, args, kwargs):
    """Positional arguments only, defaults applied (JAX binds the call to the signature)."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):  # no signature (some builtins): positional calls only
        if kwargs:
            raise TypeError(f"{_fun_name(fun)} has no signature to bind keyword arguments "
                            "to; pass them positionally") from None
        return tuple(args)
    try:
        ba = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"The function {_fun_name(fun)} was called with arguments that do not "
                        f"bind to its signature: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError("keyword-only arguments are not supported by custom_jvp/custom_vjp "
                        f"functions; got {sorted(ba.kwargs)} for {_fun_name(fun)}")
    return ba.args


class _Split:
    """The arguments of one call split into static nondiff values and differentiable pytrees."""

    def __init__(self, args, nondiff_argnums, fname):
        n = len(args)
        for i in nondiff_argnums:
            if not -n <= i < n:
                raise ValueError(f"{fname}: nondiff_argnums {nondiff_argnums} is out of range "
                                 f"for a function called with {n} positional arguments")
        nd = sorted({i % n for i in nondiff_argnums})
        self.n = n
        self.nondiff_pos = nd
        self.nondiff = [args[i] for i in nd]
        self.diff_pos = [i for i in range(n) if i not in set(nd)]
        diff = tuple(args[i] for i in self.diff_pos)
        leaves, self.in_tree = tree_util.tree_flatten(diff)
        self.leaves = _ensure_arrays(leaves)
        self.n_leaves = len(self.leaves)
        # Traced arrays among the nondiff values (custom_jvp only): they become extra operands
        # after the differentiable leaves (under stop_gradient, as in JAX), so the staged
        # function and the rule never close over a tracer.
        self.nd_leaves, self.nd_tree = tree_util.tree_flatten(self.nondiff)
        self.nd_traced = [k for k, leaf in enumerate(self.nd_leaves)
                          if isinstance(leaf, Array) and leaf._is_tracer]

    def pop_operands(self):
        """The call's operands: the differentiable leaves, then the traced nondiff values. The
        split keeps no reference to them afterwards: the rules that close over it end up in C++
        params (a staged custom_lin's bwd) that Python's gc cannot see, so a tracer kept here
        would keep its trace, and every residual staged in it, alive in a cycle through C++."""
        leaves, traced = self.leaves, [self.nd_leaves[k] for k in self.nd_traced]
        self.leaves = None
        for k in self.nd_traced:
            self.nd_leaves[k] = None
        if self.nd_traced:
            self.nondiff = None
        return leaves, traced

    def nondiff_values(self, leaves):
        """The nondiff values, traced ones taken from the operands after the diff leaves."""
        if not self.nd_traced:
            return self.nondiff
        nd = list(self.nd_leaves)
        for k, v in zip(self.nd_traced, list(leaves)[self.n_leaves:]):
            nd[k] = v
        return tree_util.tree_unflatten(self.nd_tree, nd)

    def diff_args(self, leaves):
        return tuple(tree_util.tree_unflatten(self.in_tree, list(leaves)[:self.n_leaves]))

    def all_args(self, leaves):
        full = [None] * self.n
        for i, v in zip(self.nondiff_pos, self.nondiff_values(leaves)):
            full[i] = v
        for i, v in zip(self.diff_pos, self.diff_args(leaves)):
            full[i] = v
        return full


def _flat_primal(fun, split, store):
    def flat(xs):
        out = fun(*split.all_args(xs))
        leaves, store["out_tree"] = tree_util.tree_flatten(out)
        leaves = _ensure_arrays(leaves)
        store["out_avals"] = [(x.shape, x.dtype) for x in leaves]
        return leaves

    return flat


class custom_jvp:
    """jax.custom_jvp: a function with a custom JVP rule, used by jvp, grad (through the JVP,
    as in JAX), vmap (the rule is vmapped too) and their compositions.

        @custom_jvp
        def f(x, y): ...

        @f.defjvp
        def f_jvp(primals, tangents):
            return primal_out, tangent_out
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the JVP rule jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out);
        returns jvp, so it can be used as a decorator. Zero tangents reach the rule as
        instantiated zeros, or as SymbolicZero objects when symbolic_zeros=True (the rule may
        then also return SymbolicZero output tangents)."""
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps):
        """Set one JVP per argument: jvps[i](tangent_i, primal_out, *primals) gives argument i's
        contribution to the output tangent (None: the argument contributes zero)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            zeros = tree_util.tree_map(_zeros_like, primal_out)
            parts = [zeros if rule is None else rule(t, primal_out, *primals)
                     for t, rule in zip(tangents, jvps)]
            tangent_out = tree_util.tree_map(_add_all, primal_out, *parts)
            return primal_out, tangent_out

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_args(self.fun, args, kwargs)
        split = _Split(args, self.nondiff_argnums, "custom_jvp")
        store = {}
        rule, rule_name = self.jvp, _fun_name(self.jvp)

        symbolic = self.symbolic_zeros

        def flat_jvp(ps, ts):
            primals = split.diff_args(ps)
            ts = list(ts)[:split.n_leaves]  # traced nondiff operands: no tangent (stopped)
            if symbolic:
                ts = [SymbolicZero(p.shape, p.dtype) if t is None else t for p, t in zip(ps, ts)]
            tangents = split.diff_args(ts)
            pair = rule(*split.nondiff_values(ps), primals, tangents)
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(f"Custom JVP rule {rule_name} for function {name} must produce a "
                                "pair (list or tuple of length two) representing primal and "
                                f"tangent outputs, but got {pair}.")
            primal_out, tangent_out = pair
            p_leaves, p_tree = tree_util.tree_flatten(primal_out)
            t_leaves, t_tree = tree_util.tree_flatten(tangent_out)
            zero_pos = {i for i, t in enumerate(t_leaves) if isinstance(t, SymbolicZero)}
            out_tree = store.get("out_tree")
            if out_tree is not None and p_tree != out_tree:
                raise TypeError(
                    f"Custom JVP rule {rule_name} for function {name} must produce a pair (list "
                    "or tuple of length two) where the first element represents the primal "
                    "output (equal in value to the output of the custom_jvp-decorated function "
                    f"{name}, and in particular of the same container/pytree structure), but "
                    "instead the JVP rule output's first element had container/pytree "
                    f"structure:\n    {p_tree}\nwhile the custom_jvp-decorated function {name} "
                    f"had output container/pytree structure:\n    {out_tree}.")
            if p_tree != t_tree:
                raise TypeError(f"Custom JVP rule {rule_name} for function {name} must produce "
                                "primal and tangent outputs with equal container (pytree) "
                                f"structures, but got {p_tree} and {t_tree} respectively.")
            t_out = [None if i in zero_pos else t for i, t in enumerate(t_leaves)]
            t_out = [None if t is None else (t if isinstance(t, Array) else _tessera.asarray(t))
                     for t in t_out]
            return _ensure_arrays(p_leaves), t_out

        leaves, traced = split.pop_operands()
        extra = [_tessera.lax.stop_gradient(x) for x in traced]
        del traced
        outs = _tessera.custom_jvp_call(_flat_primal(self.fun, split, store), flat_jvp,
                                        leaves + extra, symbolic)
        return tree_util.tree_unflatten(store["out_tree"], outs)


class custom_vjp:
    """jax.custom_vjp: a function with a custom reverse-mode rule (vjp, grad, linearize;
    grad(grad) when bwd is differentiable; vmap). Forward mode raises JAX's TypeError.

        @custom_vjp
        def f(x, y): ...
        def f_fwd(x, y): return out, residuals
        def f_bwd(res, g): return (ct_x, ct_y)
        f.defvjp(f_fwd, f_bwd)
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = None
        self.bwd = None
        self.symbolic_zeros = False

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Set fwd(*args) -> (out, residuals) and bwd(*nondiff_args, residuals, g) -> a tuple of
        cotangents, one per differentiable argument (None: zero). With symbolic_zeros=True, as
        in JAX, fwd receives a CustomVJPPrimal(value, perturbed) for each differentiable
        argument leaf, bwd receives SymbolicZero for output cotangents that are zero, and bwd
        may return SymbolicZero (or None) for a zero input cotangent. optimize_remat (an
        optimization of JAX's remat of fwd) is accepted and has no effect."""
        del optimize_remat
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_args(self.fun, args, kwargs)
        split = _Split(args, self.nondiff_argnums, "custom_vjp")
        if split.nd_traced:
            from tessera.errors import UnexpectedTracerError
            raise UnexpectedTracerError(
                "Found a JAX Tracer object passed as an argument to a custom_vjp function in a "
                "position indicated by nondiff_argnums as non-differentiable. Tracers cannot be "
                "passed as non-differentiable arguments to custom_vjp functions; instead, "
                "nondiff_argnums should only be used for arguments that can't be or contain JAX "
                "tracers, e.g. function-valued arguments. In particular, array-valued arguments "
                "should typically not be indicated as nondiff_argnums.")
        store = {}
        fwd, bwd = self.fwd, self.bwd
        fwd_name = _fun_name(fwd)
        symbolic = self.symbolic_zeros

        def flat_fwd(xs):
            if symbolic:
                xs = [CustomVJPPrimal(x, True) for x in xs]
            pair = fwd(*split.all_args(xs))
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                    "(list or tuple of length two) where the first element represents the "
                    "primal output (equal to the output of the custom_vjp-decorated function "
                    f"{name}) and the second element represents residuals (i.e. values stored "
                    "from the forward pass for use on the backward pass), but instead of a pair "
                    f"the fwd rule {fwd_name} produced {pair}.")
            out, res = pair
            o_leaves, o_tree = tree_util.tree_flatten(out)
            out_tree = store.get("out_tree")
            if out_tree is not None and o_tree != out_tree:
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                    "(list or tuple of length two) where the first element represents the "
                    "primal output (equal to the output of the custom_vjp-decorated function "
                    f"{name}) and the second element represents residuals (i.e. values stored "
                    "from the forward pass for use on the backward pass), but instead the fwd "
                    "rule output's first element had container/pytree structure:\n"
                    f"    {o_tree}\nwhile the custom_vjp-decorated function {name} had output "
                    f"container/pytree structure:\n    {out_tree}.")
            r_leaves, store["res_tree"] = tree_util.tree_flatten(res)
            return _ensure_arrays(o_leaves), _ensure_arrays(r_leaves)

        def flat_bwd(res, cts):
            py_res = tree_util.tree_unflatten(store["res_tree"], res)
            cts = [(SymbolicZero(*aval) if symbolic else _zeros(*aval)) if c is None else c
                   for c, aval in zip(cts, store["out_avals"])]
            g = tree_util.tree_unflatten(store["out_tree"], cts)
            return _flatten_bwd_out(bwd(*split.nondiff, py_res, g), split.in_tree)

        leaves, _ = split.pop_operands()
        outs = _tessera.custom_vjp_call(_flat_primal(self.fun, split, store), flat_fwd, flat_bwd,
                                        leaves)
        return tree_util.tree_unflatten(store["out_tree"], outs)


def _flatten_bwd_out(cts, in_tree):
    """bwd's tuple of cotangents as flat leaves (None for zeros), checked against the
    differentiable arguments' structure with JAX's message."""
    children = in_tree.children()
    if isinstance(cts, list) and len(cts) == len(children):
        cts = tuple(cts)
    ok = isinstance(cts, tuple) and len(cts) == len(children)
    out = []
    if ok:
        for ct, child in zip(cts, children):
            if ct is None:
                out += [None] * child.num_leaves
                continue
            leaves, tree = tree_util.tree_flatten(ct, is_leaf=lambda x: x is None)
            if tree != child:
                ok = False
                break
            out += leaves
    if not ok:
        got = tree_util.tree_structure(cts)
        raise TypeError("Custom VJP bwd rule must produce an output with the same container "
                        "(pytree) structure as the args tuple of the primal function, and in "
                        "particular must produce a tuple of length equal to the number of "
                        "arguments to the primal function, but got bwd output structure "
                        f"{got} for primal input structure {in_tree}.")
    return [None if x is None or isinstance(x, SymbolicZero) else
            (x if isinstance(x, Array) else _tessera.asarray(x)) for x in out]


def _zeros(shape, dtype):
    from tessera import numpy as jnp
    return jnp.zeros(shape, dtype)


def _zeros_like(x):
    from tessera import numpy as jnp
    return jnp.zeros_like(x)


def _add_all(_, *xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def closure_convert(fun, *example_args):
    """jax.closure_convert: (converted, consts) where converted(*args, *consts) == fun(*args)
    and consts are the traced values fun closes over (hoisted out of the closure), so that fun
    can be used inside custom_vjp / custom_jvp rules or passed as an argument. Only values that
    are tracers of an active transformation are hoisted; concrete arrays stay closed over."""
    leaves, in_tree = tree_util.tree_flatten(example_args)
    leaves = _ensure_arrays(leaves)
    store = {}

    def flat(xs):
        out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
        out_leaves, store["out_tree"] = tree_util.tree_flatten(out)
        return _ensure_arrays(out_leaves)

    jaxpr, consts = _tessera.closure_convert_flat(flat, leaves)
    tracer_consts = list(consts)
    n_in = len(leaves)

    def converted(*args):
        ls = tree_util.tree_leaves(args[:len(example_args)])
        cs = list(args[len(example_args):])
        if len(cs) != len(tracer_consts):
            raise TypeError(f"closure_convert: the converted function takes {len(example_args)} "
                            f"arguments and {len(tracer_consts)} hoisted constants, got "
                            f"{len(args)} arguments")
        outs = _tessera.eval_jaxpr_flat(jaxpr, cs + _ensure_arrays(ls)[:n_in])
        return tree_util.tree_unflatten(store["out_tree"], outs)

    return converted, tracer_consts
