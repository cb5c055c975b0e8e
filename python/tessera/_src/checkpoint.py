"""jax.checkpoint / jax.remat, checkpoint_name, the policies (jax.checkpoint_policies) and
saved_residuals / print_saved_residuals over Tessera's flat C++ core (tessera/checkpoint.h).

The decorated function's arguments (minus static_argnums) and keyword arguments are flattened
with tessera.tree_util; the core stages the function into one `checkpoint` equation. A policy
is a Python callable policy(prim, *avals, **params) -> bool as in JAX. The built-in policies
carry a native handle (`_tessera_policy`) so the core never calls back into Python for them;
any other callable is wrapped and called with a Primitive stand-in (compare with
`prim is tessera.ad_checkpoint.name_p` or `prim.name == "dot_general"`), ShapeDtypeStructs and
the equation's params (dot_general's also as JAX's `dimension_numbers`).
"""
import functools
import inspect
import types

from tessera import _tessera
from tessera import tree_util

Array = _tessera.Array

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "saved_residuals",
           "print_saved_residuals", "name_p", "dot_general_p"]


class Primitive:
    """The primitive a policy is asked about (one instance per name: compare with `is`)."""

    __slots__ = ("name",)
    _registry = {}

    def __new__(cls, name):
        p = cls._registry.get(name)
        if p is None:
            p = object.__new__(cls)
            p.name = name
            cls._registry[name] = p
        return p

    def __repr__(self):
        return self.name

    __str__ = __repr__


name_p = Primitive("name")
dot_general_p = Primitive("dot_general")


def _tag(fn, handle):
    fn._tessera_policy = handle
    return fn


# ---- policies (JAX's semantics) ----

def everything_saveable(*_, **__):
    """Save every value the backward pass needs (differentiation without checkpoint)."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing but the inputs (the default of checkpoint)."""
    return False


def dots_saveable(prim, *_, **__):
    """Save the outputs of matrix multiplies (dot_general), nothing else."""
    return prim is dot_general_p


def dot_with_no_batch_dims_saveable(prim, *_, **params):
    """Save the outputs of dot_generals without batch dimensions, nothing else."""
    if prim is dot_general_p:
        (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
        return not lhs_b and not rhs_b
    return False


_tag(everything_saveable, _tessera.checkpoint_policy("everything_saveable"))
_tag(nothing_saveable, _tessera.checkpoint_policy("nothing_saveable"))
_tag(dots_saveable, _tessera.checkpoint_policy("dots_saveable"))
_tag(dot_with_no_batch_dims_saveable,
     _tessera.checkpoint_policy("dots_with_no_batch_dims_saveable"))


def _check_names(fname, names):
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"{fname} takes names (str), got {n!r}")
    return list(names)


def save_anything_except_these_names(*names_not_to_save):
    """Save any value (not only named ones) except those named with one of the names."""
    names = frozenset(_check_names("save_anything_except_these_names", names_not_to_save))

    def policy(prim, *_, **params):
        if prim is name_p:
            return params["name"] not in names
        return True

    return _tag(policy, _tessera.checkpoint_names_policy(
        "save_anything_except_these_names", sorted(names)))


def save_any_names_but_these(*names_not_to_save):
    """Save only named values, except those named with one of the names."""
    names = frozenset(_check_names("save_any_names_but_these", names_not_to_save))

    def policy(prim, *_, **params):
        if prim is name_p:
            return params["name"] not in names
        return False

    return _tag(policy, _tessera.checkpoint_names_policy(
        "save_any_names_but_these", sorted(names)))


def save_only_these_names(*names_which_can_be_saved):
    """Save only the values named with one of the names."""
    names = frozenset(_check_names("save_only_these_names", names_which_can_be_saved))

    def policy(prim, *_, **params):
        if prim is name_p:
            return params["name"] in names
        return False

    return _tag(policy, _tessera.checkpoint_names_policy("save_only_these_names", sorted(names)))


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""

    def policy(prim, *args, **params):
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got:"
                f" {out1} and {out2}. Please write a custom policy function directly,"
                " rather than using this helper function.")
        return out1 or out2

    nothing = nothing_saveable._tessera_policy
    return _tag(policy, _tessera.checkpoint_both_policies(_policy_handle(policy_1) or nothing,
                                                          _policy_handle(policy_2) or nothing))


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dot_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dot_with_no_batch_dims_saveable,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
)


def _policy_handle(policy):
    """The native policy for a Python policy (None: the default, nothing saveable)."""
    if policy is None:
        return None
    handle = getattr(policy, "_tessera_policy", None)
    if handle is not None:
        return handle
    if not callable(policy):
        raise TypeError(f"checkpoint policy must be a callable or None, got {policy!r}")
    from tessera._src.api import ShapeDtypeStruct

    def adapter(prim_name, avals, params):
        out = policy(Primitive(prim_name), *[ShapeDtypeStruct(s, d) for s, d in avals],
                     **dict(params))
        if not isinstance(out, (bool,)) and type(out).__name__ != "bool_":
            raise TypeError(f"checkpoint policy {getattr(policy, '__name__', policy)!r} must "
                            f"return a bool, got {out!r}")
        return bool(out)

    return _tessera.checkpoint_callable_policy(adapter, getattr(policy, "__name__", "policy"))


def _ensure_arrays(leaves):
    return [x if isinstance(x, Array) else _tessera.asarray(x) for x in leaves]


def _normalize_static_argnums(static_argnums):
    if type(static_argnums) is int:
        return (static_argnums,)
    if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be "
                        f"an int, tuple of ints or, bool, but got value {static_argnums}")
    return static_argnums


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """jax.checkpoint (alias jax.remat): ``fun`` whose differentiation (grad, vjp, linearize)
    saves only what ``policy`` allows (default: only the inputs) and recomputes the rest.

        @tessera.checkpoint
        def f(x): ...

        g = tessera.checkpoint(f, policy=tessera.checkpoint_policies.dots_saveable)

        @functools.partial(tessera.checkpoint, static_argnums=(1,))
        def h(x, training): ...
    """
    static_argnums = _normalize_static_argnums(static_argnums)
    handle = _policy_handle(policy)
    prevent_cse = bool(prevent_cse)

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        n = len(args)
        if not all(-n <= d < n for d in static_argnums):
            raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can "
                             "only take integer values greater than or equal to `-len(args)` and "
                             f"less than `len(args)`, but got {static_argnums}")
        static = frozenset(d % n for d in static_argnums) if n else frozenset()
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, in_tree = tree_util.tree_flatten((dyn, kwargs))
        leaves = _ensure_arrays(leaves)
        store = {}

        def flat(xs):
            dyn_args, kw = tree_util.tree_unflatten(in_tree, list(xs))
            it = iter(dyn_args)
            full = [args[i] if i in static else next(it) for i in range(n)]
            out = fun(*full, **kw)
            out_leaves, store["out_tree"] = tree_util.tree_flatten(out)
            return _ensure_arrays(out_leaves)

        outs = _tessera.checkpoint(flat, leaves, handle, prevent_cse)
        return tree_util.tree_unflatten(store["out_tree"], list(outs))

    return fun_remat


remat = checkpoint


def checkpoint_name(x, name):
    """Identity on the pytree ``x``, naming its values ``name`` for the names policies."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name takes a str name, got {name!r}")
    return tree_util.tree_map(lambda leaf: _tessera.checkpoint_name(leaf, name), x)


def _positional_names(f, n):
    """The parameter names of n positional arguments of f (``args[k]`` beyond *args)."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for p in params:
        if p.kind in positional and len(names) < n:
            names.append(p.name)
        elif p.kind == inspect.Parameter.VAR_POSITIONAL:
            names += [f"{p.name}[{k}]" for k in range(n - len(names))]
    return names + [f"args[{i}]" for i in range(len(names), n)]


def _arg_names(f, args, kwargs):
    """JAX's names of the flattened arguments: the parameter name, then the leaf's path."""
    pos = _positional_names(f, len(args))
    names = []
    for path, _leaf in tree_util.tree_flatten_with_path((args, kwargs))[0]:
        top = path[1]
        base = pos[top.idx] if path[0].idx == 0 else str(top.key)
        names.append(base + tree_util.keystr(tuple(path[2:])))
    return names


def _residuals(f, args, kwargs):
    """[(shape, dtype_name, aval_str, source)] for saved_residuals / print_saved_residuals."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    leaves = _ensure_arrays(leaves)

    def flat(xs):
        a, kw = tree_util.tree_unflatten(in_tree, list(xs))
        return _ensure_arrays(tree_util.tree_leaves(f(*a, **kw)))

    try:
        names = _arg_names(f, args, kwargs)
    except Exception:  # noqa: BLE001 - names are a nicety; fall back to flat indices
        names = None
    out = []
    for shape, dtype, aval_str, kind, idx, _name, where in _tessera.saved_residuals(flat, leaves):
        if kind == "argument" and names is not None and 0 <= idx < len(names):
            where = f"from the argument {names[idx]}"
        out.append((shape, dtype, aval_str, where))
    return out


def saved_residuals(f, *args, **kwargs):
    """The residuals grad/vjp of f at args saves: a list of (ShapeDtypeStruct, source)."""
    from tessera._src.api import ShapeDtypeStruct

    return [(ShapeDtypeStruct(shape, dtype), where)
            for shape, dtype, _s, where in _residuals(f, args, kwargs)]


def print_saved_residuals(f, *args, **kwargs):
    """Prints one line per saved residual: ``f32[3] from the argument x``."""
    for _shape, _dtype, aval_str, where in _residuals(f, args, kwargs):
        print(f"{aval_str} {where}")
