"""The transformations with JAX's names and signatures, over Tessera's flat C++ core.

Each flattens its arguments with tessera.tree_util, hands the C++ core a function from a list
of Arrays to a list of Arrays, and unflattens the results. Python exceptions raised by the user's
function propagate unchanged; the trace context is restored by the C++ side on the way out.
"""
import functools
import inspect

import numpy as _np

from tessera import _tessera
from tessera import tree_util
from tessera._src import array as _array  # noqa: F401  (installs Array's methods)
from tessera._src import dtypes as _dtypes

Array = _tessera.Array


def _ensure_arrays(leaves):
    return [x if isinstance(x, Array) else _tessera.asarray(x) for x in leaves]


def _argnums_tuple(argnums, nargs, fname):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -nargs <= i < nargs:
            raise ValueError(f"{fname}: argnums {argnums} is out of range for a function "
                             f"called with {nargs} positional arguments")
    return single, tuple(i % nargs for i in nums)


def _flat_call(fun, args, kwargs, nums, in_trees, has_aux, out_store):
    """The flat function of the selected arguments' leaves."""
    sizes = [t.num_leaves for t in in_trees]

    def flat(leaves):
        new_args = list(args)
        pos = 0
        for i, t, n in zip(nums, in_trees, sizes):
            new_args[i] = tree_util.tree_unflatten(t, leaves[pos:pos + n])
            pos += n
        out = fun(*new_args, **kwargs)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("with has_aux=True the function must return a pair (out, aux), "
                                f"got {type(out).__name__}")
            out, aux = out
            out_leaves, out_tree = tree_util.tree_flatten(out)
            aux_leaves, aux_tree = tree_util.tree_flatten(aux)
            out_store["tree"], out_store["aux_tree"] = out_tree, aux_tree
            out_store["n_main"] = len(out_leaves)
            out_store["n_aux"] = len(aux_leaves)
            return _ensure_arrays(out_leaves) + _ensure_arrays(aux_leaves)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_store["tree"] = out_tree
        out_store["n_main"] = len(out_leaves)
        return _ensure_arrays(out_leaves)

    return flat


def _selected(args, nums):
    leaves, trees = [], []
    for i in nums:
        l, t = tree_util.tree_flatten(args[i])
        leaves += _ensure_arrays(l)
        trees.append(t)
    return leaves, trees


def _split_grads(grads, in_trees, single):
    out, pos = [], 0
    for t in in_trees:
        n = t.num_leaves
        out.append(tree_util.tree_unflatten(t, grads[pos:pos + n]))
        pos += n
    return out[0] if single else tuple(out)


def _check_holomorphic(holomorphic, name):
    # JAX requires complex inputs for holomorphic=True; Tessera has no complex dtypes, so every
    # input is real and JAX's TypeError applies.
    if holomorphic:
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype; "
                        "Tessera has no complex dtypes, so use holomorphic=False")


# ---- grad / value_and_grad ----
def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """jax.value_and_grad: returns (value, grads), or ((value, aux), grads) with has_aux."""
    _check_holomorphic(holomorphic, "grad")

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), "value_and_grad")
        leaves, in_trees = _selected(args, nums)
        store = {}
        flat = _flat_call(fun, args, kwargs, nums, in_trees, has_aux, store)
        outs, grads = _tessera.value_and_grad(flat, leaves, allow_int, "grad")
        if store["n_main"] != 1:
            raise TypeError("Gradient only defined for scalar-output functions. Output was "
                            f"{store['tree']}")
        value = tree_util.tree_unflatten(store["tree"], outs[:1])
        g = _split_grads(grads, in_trees, single)
        if has_aux:
            aux = tree_util.tree_unflatten(store["aux_tree"], outs[1:])
            return (value, aux), g
        return value, g

    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """jax.grad: the gradient of a scalar function with respect to argnums."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        (value_aux, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value_aux[1]
        return g

    return grad_f


# ---- jvp / vjp / linearize / linear_transpose ----
def _all_args_flat(fun, args, has_aux=False):
    leaves, tree = tree_util.tree_flatten(tuple(args))
    store = {}

    def flat(xs):
        new_args = tree_util.tree_unflatten(tree, xs)
        out = fun(*new_args)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("with has_aux=True the function must return a pair (out, aux)")
            out, aux = out
            ol, ot = tree_util.tree_flatten(out)
            al, at = tree_util.tree_flatten(aux)
            store.update(tree=ot, aux_tree=at, n_main=len(ol))
            return _ensure_arrays(ol) + _ensure_arrays(al)
        ol, ot = tree_util.tree_flatten(out)
        store.update(tree=ot, n_main=len(ol))
        return _ensure_arrays(ol)

    return _ensure_arrays(leaves), tree, flat, store


def jvp(fun, primals, tangents, has_aux=False):
    """jax.jvp: (fun(*primals), the tangent of the output)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    if len(primals) != len(tangents):
        raise ValueError("jvp called with different primal and tangent structures: "
                         f"{len(primals)} primals and {len(tangents)} tangents")
    leaves, tree, flat, store = _all_args_flat(fun, primals, has_aux)
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if t_tree != tree:
        raise ValueError("primal and tangent arguments to jvp must have the same tree "
                         f"structure; primals have {tree} and tangents have {t_tree}")
    outs, touts = _tessera.jvp(flat, leaves, _ensure_arrays(t_leaves))
    n = store["n_main"]
    out = tree_util.tree_unflatten(store["tree"], outs[:n])
    tout = tree_util.tree_unflatten(store["tree"], touts[:n])
    if has_aux:
        return out, tout, tree_util.tree_unflatten(store["aux_tree"], outs[n:])
    return out, tout


def linearize(fun, *primals, has_aux=False):
    """jax.linearize: (fun(*primals), f_jvp) where f_jvp(*tangents) applies the linear map."""
    leaves, tree, flat, store = _all_args_flat(fun, primals, has_aux)
    lin = _tessera.linearize(flat, leaves)
    outs = lin.outs
    n = store["n_main"]
    out = tree_util.tree_unflatten(store["tree"], outs[:n])
    out_tree = store["tree"]

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
        if t_tree != tree:
            raise ValueError(f"linearized function called on tangents of structure {t_tree}, "
                             f"expected {tree}")
        touts = lin.jvp(_ensure_arrays(t_leaves))
        return tree_util.tree_unflatten(out_tree, touts[:n])

    if has_aux:
        return out, f_jvp, tree_util.tree_unflatten(store["aux_tree"], outs[n:])
    return out, f_jvp


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """jax.vjp: (fun(*primals), f_vjp) where f_vjp(ct) returns a tuple of cotangents, one per
    primal; with has_aux, (out, f_vjp, aux)."""
    leaves, tree, flat, store = _all_args_flat(fun, primals, has_aux)
    lin = _tessera.linearize(flat, leaves)
    outs = lin.outs
    n, n_all = store["n_main"], len(outs)
    out_tree = store["tree"]
    out = tree_util.tree_unflatten(out_tree, outs[:n])

    def f_vjp(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError("unexpected tree structure of the cotangent: expected "
                             f"{out_tree}, got {ct_tree}")
        cts = _ensure_arrays(ct_leaves) + [None] * (n_all - n)
        in_cts = lin.vjp(cts)
        return tuple(tree_util.tree_unflatten(tree, in_cts))

    if has_aux:
        return out, f_vjp, tree_util.tree_unflatten(store["aux_tree"], outs[n:])
    return out, f_vjp


def linear_transpose(fun, *primals, reduce_axes=()):
    """jax.linear_transpose: the transpose of a linear function, given example primals."""
    leaves, tree, flat, store = _all_args_flat(fun, primals)
    ft = _tessera.linear_transpose(flat, leaves)
    out_tree = store["tree"]

    def transposed(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(f"cotangent tree structure {ct_tree} does not match the "
                             f"function's output {out_tree}")
        return tuple(tree_util.tree_unflatten(tree, ft(_ensure_arrays(ct_leaves))))

    return transposed


# ---- jacobians ----
def _jacobian(kind, fun, argnums, has_aux, allow_int):
    @functools.wraps(fun)
    def jac_f(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), kind)
        leaves, in_trees = _selected(args, nums)
        store = {}
        flat = _flat_call(fun, args, kwargs, nums, in_trees, has_aux, store)
        # The flat function returns the outputs then the aux leaves; only the outputs are
        # differentiated (the core asks for the aux count once the function has run), the aux
        # values come back as they are.
        jacobian = _tessera.jacfwd if kind == "jacfwd" else _tessera.jacrev
        jac, outs = jacobian(flat, leaves, lambda: store["n_aux"] if has_aux else 0)
        n_out = store["n_main"]
        n_in = len(leaves)
        rows = []
        for i in range(n_out):
            row = jac[i * n_in:(i + 1) * n_in]
            if single:
                rows.append(tree_util.tree_unflatten(in_trees[0], row))
            else:
                rows.append(_split_grads(row, in_trees, False))
        if has_aux:
            aux = tree_util.tree_unflatten(store["aux_tree"], outs[n_out:])
            return tree_util.tree_unflatten(store["tree"], rows), aux
        return tree_util.tree_unflatten(store["tree"], rows)

    return jac_f


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """jax.jacfwd: the Jacobian by forward mode; leaves of shape out.shape + in.shape."""
    _check_holomorphic(holomorphic, "jacfwd")
    return _jacobian("jacfwd", fun, argnums, has_aux, False)


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """jax.jacrev: the Jacobian by reverse mode."""
    _check_holomorphic(holomorphic, "jacrev")
    return _jacobian("jacrev", fun, argnums, has_aux, allow_int)


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """jax.hessian = jacfwd(jacrev(fun)); with has_aux, (hessian, aux)."""
    _check_holomorphic(holomorphic, "hessian")
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)


# ---- vmap ----
def _broadcast_prefix(prefix, tree, what):
    """One axis per leaf of `tree`, from `prefix` (a tree prefix of it with int/None leaves)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_util.tree_leaves(tree))
    if isinstance(prefix, list):
        prefix = tuple(prefix)
    ptree = tree_util.tree_structure(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = ptree.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {prefix} for value tree "
                         f"{tree_util.tree_structure(tree)}") from e
    axes = tree_util.tree_leaves(prefix, is_leaf=lambda x: x is None)
    out = []
    for ax, sub in zip(axes, subtrees):
        if ax is not None and not isinstance(ax, int):
            raise TypeError(f"vmap {what} must be an int, None, or a tree of them; got {ax!r}")
        out += [ax] * len(tree_util.tree_leaves(sub))
    return out


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """jax.vmap: maps fun over the axes in_axes of its arguments (int, None or a pytree
    prefix), stacking results along out_axes."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                             f"corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        # Keyword arguments are mapped over their leading axis, as in JAX.
        kw_keys = sorted(kwargs)
        leaves, tree = tree_util.tree_flatten((tuple(args), tuple(kwargs[k] for k in kw_keys)))
        axes = (_broadcast_prefix(in_axes, tuple(args), "in_axes") +
                [0] * len(tree_util.tree_leaves(tuple(kwargs[k] for k in kw_keys))))
        store = {}

        def flat(xs):
            a, kv = tree_util.tree_unflatten(tree, xs)
            out = fun(*a, **dict(zip(kw_keys, kv)))
            ol, ot = tree_util.tree_flatten(out)
            store["tree"] = ot
            return _ensure_arrays(ol)

        def out_axes_for(n):
            tree_out = tree_util.tree_unflatten(store["tree"], [0] * n)
            return _broadcast_prefix(out_axes, tree_out, "out_axes")

        outs = _tessera.vmap(flat, _ensure_arrays(leaves), axes, out_axes_for, axis_size,
                             axis_name or "")
        return tree_util.tree_unflatten(store["tree"], outs)

    return vmap_f


# ---- staging ----
class ShapeDtypeStruct:
    """jax.ShapeDtypeStruct: a shape and dtype standing for an array (eval_shape, make_jaxpr)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = _dtypes.dtype_of_name(_tessera.canonical_dtype_name(
            dtype.name if isinstance(dtype, (_dtypes._ScalarType, _dtypes._BFloat16DType)) else dtype))
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(_np.prod(self.shape, dtype=_np.int64)))

    def __repr__(self):
        w = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype}{w})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape and
                self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, str(self.dtype), self.weak_type))


def _abstractify(leaves):
    out = []
    for x in leaves:
        if isinstance(x, ShapeDtypeStruct):
            out.append(_tessera.abstract_placeholder(x.shape, str(x.dtype), x.weak_type))
        elif hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (Array, _np.ndarray, _np.generic)):
            out.append(_tessera.abstract_placeholder(tuple(x.shape), str(x.dtype), False))
        else:
            out.append(x if isinstance(x, Array) else _tessera.asarray(x))
    return out


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """jax.make_jaxpr: make_jaxpr(f)(*args) is the ClosedJaxpr of f, printed in JAX's format."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    @functools.wraps(fun)
    def make_jaxpr_f(*args, **kwargs):
        dyn = [i for i in range(len(args)) if i not in static_argnums]
        leaves, tree = tree_util.tree_flatten(tuple(args[i] for i in dyn))
        store = {}

        def flat(xs):
            vals = tree_util.tree_unflatten(tree, xs)
            full = list(args)
            for i, v in zip(dyn, vals):
                full[i] = v
            out = fun(*full, **kwargs)
            ol, ot = tree_util.tree_flatten(out)
            store["tree"] = ot
            return _ensure_arrays(ol)

        from tessera._src.jit import leaf_names, src_info
        try:
            sig = inspect.signature(fun)
        except (TypeError, ValueError):
            sig = None
        debug = (src_info(fun), leaf_names(sig, dyn, [args[i] for i in dyn]))
        closed = _tessera.make_jaxpr(flat, _abstractify(leaves), debug)
        if return_shape:
            shapes = [ShapeDtypeStruct(s, d, w) for (s, d, w) in closed.out_avals]
            return closed, tree_util.tree_unflatten(store["tree"], shapes)
        return closed

    return make_jaxpr_f


def eval_shape(fun, *args, **kwargs):
    """jax.eval_shape: the output's ShapeDtypeStructs, computing nothing."""
    closed, shape = make_jaxpr(lambda *a: fun(*a, **kwargs), return_shape=True)(*args)
    return shape
