"""jax.lax's windowed reductions: reduce_window (monoid detection as JAX's), padtype_to_pads and
PaddingType."""
import enum as _enum

from tessera import _tessera

_C = _tessera.lax


class PaddingType(_enum.Enum):
    """jax.lax.PaddingType."""
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) padding per dimension for 'VALID', 'SAME', 'SAME_LOWER' (a string in
    any case, or a PaddingType), as jax.lax.padtype_to_pads."""
    if isinstance(padding, PaddingType):
        padding = padding.name
    elif not isinstance(padding, str):
        raise TypeError(f"Unknown padding type: {padding}.")
    return [tuple(p) for p in _C.padtype_to_pads(tuple(in_shape), tuple(window_shape),
                                                  tuple(window_strides), padding)]


def _dilate_shape(shape, dilation):
    return tuple(0 if d == 0 else 1 + k * (d - 1) for d, k in zip(shape, dilation))


def _is_identity(x, kind):
    """Whether x is a concrete scalar equal to the identity of add / max / min (JAX's
    _get_monoid_window_reducer test)."""
    import numpy as np
    try:
        v = np.asarray(x)
    except Exception:  # a tracer: not concrete
        return False
    if v.shape != ():
        return False
    dt = v.dtype
    if kind == "add":
        return dt != np.bool_ and v == 0
    if dt == np.bool_:
        return bool(v) == (kind == "min")
    if np.issubdtype(dt, np.floating) or str(dt) == "bfloat16":
        return float(v) == (-np.inf if kind == "max" else np.inf)
    info = np.iinfo(dt)
    return int(v) == (info.min if kind == "max" else info.max)


def _monoid_kind(computation, flat_init):
    from tessera import lax
    if len(flat_init) != 1:
        return None
    for kind, fn in (("add", lax.add), ("max", lax.max), ("min", lax.min)):
        if computation is fn:
            return kind if _is_identity(flat_init[0], kind) else None
    return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window: operand and init_value are matching pytrees; computation(acc, x)
    combines rank-0 values of that structure. lax.add / lax.max / lax.min with their identity as
    init value bind reduce_window_sum / _max / _min (JAX's monoid detection); anything else the
    generic reduce_window. padding: 'VALID', 'SAME', 'SAME_LOWER', a PaddingType or
    (low, high) pairs."""
    from tessera import tree_util
    from tessera import numpy as jnp
    flat_ops, tree = tree_util.tree_flatten(operand)
    flat_init, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(flat_ops) == 0:
        raise ValueError("reduce_window must have at least one operand.")
    if len(flat_ops) != len(flat_init):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(flat_ops)} vs. {len(flat_init)}")
    flat_ops = [jnp.asarray(x) for x in flat_ops]
    dims = tuple(int(d) for d in window_dimensions)
    strides = (1,) * len(dims) if window_strides is None else tuple(int(s) for s in window_strides)
    bdil = (1,) * len(dims) if base_dilation is None else tuple(int(d) for d in base_dilation)
    wdil = (1,) * len(dims) if window_dilation is None else tuple(int(d) for d in window_dilation)
    if isinstance(padding, (str, PaddingType)):
        if len(dims) == flat_ops[0].ndim and len(strides) == len(dims) and len(wdil) == len(dims):
            pads = padtype_to_pads(flat_ops[0].shape, _dilate_shape(dims, wdil), strides, padding)
        else:  # the primitive's shape rule names the mismatch
            pads = [(0, 0)] * len(dims)
    else:
        pads = [tuple(int(p) for p in pair) for pair in padding]
    kind = _monoid_kind(computation, flat_init)
    if kind is not None:
        out = getattr(_C, "reduce_window_" + {"add": "sum"}.get(kind, kind))(
            flat_ops[0], dims, strides, pads, bdil, wdil)
        return tree_util.tree_unflatten(tree, [out])
    # Python scalars take their operand's dtype (weak typing); arrays keep theirs.
    inits = [jnp.asarray(v, dtype=x.dtype) if isinstance(v, (bool, int, float)) else v
             for v, x in zip(flat_init, flat_ops)]

    def body(accs, values):
        out = computation(tree_util.tree_unflatten(tree, accs),
                          tree_util.tree_unflatten(tree, values))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise ValueError("reduce_window output must have the same tree structure as the "
                             f"operands {tree} vs. {out_tree}")
        return out_leaves

    outs = _C.reduce_window_generic(flat_ops, inits, body, dims, strides, pads, bdil, wdil)
    return tree_util.tree_unflatten(tree, outs)
