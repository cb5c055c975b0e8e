"""jax.lax control flow (cond, switch, while_loop, fori_loop, scan, map) over Tessera's flat C++
core (control_flow_flat.h, bound as tessera._tessera.control_flow).

The core stages each function argument into a sub-jaxpr and binds one primitive (cond, while,
scan), so every transformation sees the structure. This module handles the pytrees (with
tessera.tree_util), JAX's argument checks and its structure errors. The loop carries' types are
the core's decision (control_flow_flat.h: JAX's weak-type promotion, which stages a body once
more, the strong type of a weak output, which components mismatch); this module only words the
carry type errors with key paths, through the callback the core calls. The structure checks
run inside the flat adapters while the core stages the functions, so each function is traced
once (twice only when a carry is promoted).
"""
import inspect
import operator

import numpy as np

from tessera import _tessera
from tessera import tree_util

Array = _tessera.Array

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]

_no_operand_sentinel = object()


def _cf():
    return _tessera.control_flow


def _ensure_arrays(leaves):
    return [x if isinstance(x, Array) else _tessera.asarray(x) for x in leaves]


def _convert(x, dtype_name):
    return _tessera.lax.convert_element_type(x, dtype_name)


class _Aval:
    """The abstract value (shape, dtype, weak type) of an array, printed as JAX's ShapedArray."""

    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.weak = bool(weak)

    @classmethod
    def of(cls, x):
        return cls(x.shape, x._dtype_name, x.weak_type)

    def typematch(self, other):  # core.typematch: weak types are ignored
        return self.shape == other.shape and self.dtype == other.dtype

    def str_short(self):
        return f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self):
        return f"ShapedArray({self.str_short()}{', weak_type=True' if self.weak else ''})"


def _avals(leaves):
    return [_Aval.of(x) for x in leaves]


class _Retrace(Exception):
    """Raised from inside a staged function to restart the call with adjusted inputs."""

    def __init__(self, fix):
        super().__init__("internal: retrace")
        self.fix = fix


# ---------------------------------------------------------------- error messages (JAX's text)

def _show_diff(a1, a2):
    return repr(a1) if a1.typematch(a2) else f"DIFFERENT {a1!r} vs. {a2!r}"


def _check_tree_and_avals(what, tree1, avals1, tree2, avals2):
    if tree1 != tree2:
        raise TypeError(f"{what} must have same type structure, got {tree1} and {tree2}.")
    if not all(a.typematch(b) for a, b in zip(avals1, avals2)):
        diff = tree_util.tree_map(_show_diff, tree_util.tree_unflatten(tree1, avals1),
                                  tree_util.tree_unflatten(tree2, avals2))
        raise TypeError(f"{what} must have identical types, got\n{diff}.")


def _equality_errors(path, t1, t2):
    """(path, thing1, thing2, explanation) for each structural difference (JAX's wording)."""
    leaf1 = tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t1))
    leaf2 = tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t2))
    if leaf1 and leaf2:
        return
    if type(t1) != type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}",
               f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
        return
    kc1 = tree_util.flatten_one_level_with_keys(t1)[0]
    kc2 = tree_util.flatten_one_level_with_keys(t2)[0]
    k1, k2 = [k for k, _ in kc1], [k for k, _ in kc2]
    if len(kc1) != len(kc2) or k1 != k2:
        try:
            diff = " ".join(repr(getattr(k, "key", k)) for k in set(k1) ^ set(k2))
        except TypeError:
            diff = ""
        n1, n2 = len(kc1), len(kc2)
        yield (path, f"{type(t1)} with {n1} child{'ren' if n1 > 1 else ''}",
               f"{type(t2)} with {n2} child{'ren' if n2 > 1 else ''}",
               "the numbers of children do not match"
               + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    m1, m2 = tree_util.flatten_one_level(t1)[1], tree_util.flatten_one_level(t2)[1]
    if m1 != m2:
        yield (path, f"{type(t1)} with pytree metadata {m1}",
               f"{type(t2)} with pytree metadata {m2}", "the pytree node metadata does not match")
        return
    for (k, c1), (_, c2) in zip(kc1, kc2):
        yield from _equality_errors((*path, k), c1, c2)


def _capitalize(s):
    return s[0].upper() + s[1:]


def _join_diffs(diffs):
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0])}.\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _carry_component(body_fun):
    """How JAX's scan errors name a carry component at a key path: by the body's first
    parameter when it has one."""
    try:
        params = list(inspect.signature(body_fun).parameters)
        carry_name = params[0] if params else None
    except (ValueError, TypeError):
        carry_name = None
    if carry_name:
        def component(p):
            ks = tree_util.keystr(p)
            return f"the input carry component {carry_name}{ks}" if p else \
                f"the input carry {carry_name}"
    else:
        def component(p):
            return f"the input carry at path {tree_util.keystr(p)}" if p else "the input carry"
    return component


def _check_carry_structure(name, body_fun, in_tree, in_leaves, out_tree, out_leaves):
    """JAX's scan carry check of the pytree structure (the types are the core's check)."""
    if in_tree == out_tree:
        return
    component = _carry_component(body_fun)
    in_carry = tree_util.tree_unflatten(in_tree, list(in_leaves))
    try:
        out_carry = tree_util.tree_unflatten(out_tree, list(out_leaves))
    except Exception:
        out_carry = None
    if out_carry is None:
        differences = (f"the input tree structure is:\n{in_tree}\n"
                       f"the output tree structure is:\n{out_tree}\n")
    else:
        diffs = [f"{component(p)} is a {t1} but the corresponding component of the carry "
                 f"output is a {t2}, so {why}"
                 for p, t1, t2, why in _equality_errors((), in_carry, out_carry)]
        if not diffs:
            return
        differences = _join_diffs(diffs)
    raise TypeError(f"{name} function carry input and carry output must have the same "
                    f"pytree structure, but they differ:\n\n{differences}\n"
                    "Revise the function so that the carry output has the same pytree "
                    "structure as the carry input.")


def _core_avals(avals):
    return [_Aval(shape, dtype, weak) for shape, dtype, weak in avals]


def _scan_carry_type_error(name, body_fun, in_tree):
    """The core's carry type error callback for scan: JAX's _check_carry_type text, each
    mismatching component (decided by the core) named by its key path."""
    def raise_error(in_avals, out_avals, mismatches):
        in_avals, out_avals = _core_avals(in_avals), _core_avals(out_avals)
        component = _carry_component(body_fun)
        placeholder = tree_util.tree_unflatten(in_tree, list(range(len(in_avals))))
        paths = [p for p, _ in tree_util.tree_flatten_with_path(placeholder)[0]]
        diffs = []
        for k, dt, sh in mismatches:
            extra = (", so " * (dt or sh) + "the dtypes do not match" * dt
                     + " and also " * (dt and sh) + "the shapes do not match" * sh)
            diffs.append(f"{component(paths[k])} has type {in_avals[k].str_short()} but the "
                         "corresponding output carry component has type "
                         f"{out_avals[k].str_short()}{extra}")
        raise TypeError(f"{name} function carry input and carry output must have equal types "
                        f"(e.g. shapes and dtypes of arrays), but they differ:\n\n"
                        f"{_join_diffs(diffs)}\nRevise the function so that all output types "
                        "(e.g. shapes and dtypes) match the corresponding input types.")
    return raise_error


def _while_carry_type_error(in_tree):
    """The core's carry type error callback for while_loop: JAX's _check_tree_and_avals text
    over the carry's pytree."""
    def raise_error(in_avals, out_avals, mismatches):
        del mismatches  # every leaf is shown, the mismatching ones marked DIFFERENT
        _check_tree_and_avals("body_fun output and input", in_tree, _core_avals(out_avals),
                              in_tree, _core_avals(in_avals))
    return raise_error


# ---------------------------------------------------------------- cond / switch

def _run_branches(kind, branches, ops_tree, call):
    """Calls call(flat_branches) with adapters that rebuild the operands, flatten the outputs
    and check every branch against branch 0 (JAX's messages); outputs whose weak types differ
    across branches are made strong (a retrace each time that set grows)."""
    strong = set()
    while True:
        store = {}

        def make(k, fn):
            def flat(xs):
                out = fn(*tree_util.tree_unflatten(ops_tree, list(xs)))
                leaves, tree = tree_util.tree_flatten(out)
                leaves = _ensure_arrays(leaves)
                leaves = [_convert(x, x._dtype_name) if i in strong and x.weak_type else x
                          for i, x in enumerate(leaves)]
                store[k] = (tree, _avals(leaves))
                others = [j for j in store if j != 0] if k == 0 else [k] if 0 in store else []
                for j in others:
                    (t0, a0), (tj, aj) = store[0], store[j]
                    _check_tree_and_avals(kind(j), t0, a0, tj, aj)
                    weak_diff = {i for i, (x, y) in enumerate(zip(a0, aj)) if x.weak != y.weak}
                    if weak_diff - strong:
                        raise _Retrace(strong | weak_diff)
                return leaves
            return flat

        try:
            outs = call([make(k, b) for k, b in enumerate(branches)])
        except _Retrace as r:
            strong = r.fix
            continue
        tree = store[0][0] if 0 in store else next(iter(store.values()))[0]
        return tree_util.tree_unflatten(tree, outs)


def _check_operand_kw(operands, operand):
    if operand is not _no_operand_sentinel:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand} and positional operands {operands}")
        operands = (operand,)
    return operands


def _dtype_kind(x):
    return np.dtype(_tessera.asarray(x)._dtype_name.replace("bfloat16", "float32")).kind


def _cond_per_branch_signature(pred, true_operand, true_fun, false_operand, false_fun):
    """The former (deprecated) form of jax.lax.cond, which JAX still accepts:
    true_fun(true_operand) if pred else false_fun(false_operand)."""


def cond(*args, **kwargs):
    """jax.lax.cond(pred, true_fun, false_fun, *operands, operand=...): true_fun(*operands) if
    pred else false_fun(*operands). Both branches are staged; their outputs must have identical
    types. pred is a scalar bool or number (compared with zero); under vmap a batched pred
    evaluates both branches and selects. As in JAX, the former five-argument form
    cond(pred, true_operand, true_fun, false_operand, false_fun) is recognised too (when
    true_fun and false_fun sit at positions 2 and 4 and true_operand is not a function)."""
    try:
        bound = inspect.signature(_cond_per_branch_signature).bind(*args, **kwargs)
    except TypeError:
        bound = None
    if bound is None:
        return _cond(*args, **kwargs)
    pred, true_op, true_fun, false_op, false_fun = bound.args
    if callable(true_op) and callable(true_fun):  # the modern form with two operands
        return _cond(*args, **kwargs)
    if callable(true_fun) and callable(false_fun):
        return _cond(pred, lambda ops: true_fun(ops[0]), lambda ops: false_fun(ops[1]),
                     (true_op, false_op))
    return _cond(*args, **kwargs)


def _cond(pred, true_fun, false_fun, *operands, operand=_no_operand_sentinel):
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _check_operand_kw(operands, operand)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, (list, tuple)) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of "
                        + (f"type {type(pred)}" if isinstance(pred, (list, tuple))
                           else f"shape {np.shape(pred)}."))
    try:
        kind = _dtype_kind(pred)
    except Exception as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if kind not in "biuf":
        raise TypeError("Pred type must be either boolean or number, got "
                        f"{_tessera.asarray(pred)._dtype_name}.")
    ops, ops_tree = tree_util.tree_flatten(operands)
    ops = _ensure_arrays(ops)
    return _run_branches(lambda j: "true_fun and false_fun output", (true_fun, false_fun),
                         ops_tree,
                         lambda fs: _cf().cond(pred, fs[0], fs[1], ops))


def switch(index, branches, *operands, operand=_no_operand_sentinel):
    """jax.lax.switch: branches[clamp(0, index, len(branches) - 1)](*operands)."""
    branches = tuple(branches)
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _check_operand_kw(operands, operand)
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    try:
        kind = _dtype_kind(index)
    except Exception as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as "
                        f"{_tessera.asarray(index)._dtype_name}")
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    ops, ops_tree = tree_util.tree_flatten(operands)
    ops = _ensure_arrays(ops)
    return _run_branches(lambda j: f"branch 0 and {j} outputs", branches, ops_tree,
                         lambda fs: _cf().switch(index, fs, ops))


# ---------------------------------------------------------------- while_loop / fori_loop

def _loop_body(body_fun, call_body, init_tree):
    """A flat body: rebuilds the carry, calls call_body(carry_value, extra_leaves) and checks the
    output carry's structure against the input's (JAX's while_loop message)."""
    def flat(leaves, extra=()):
        carry = tree_util.tree_unflatten(init_tree, list(leaves))
        out = call_body(*extra, carry)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_leaves = _ensure_arrays(out_leaves)
        if out_tree != init_tree:
            raise TypeError(f"body_fun output and input must have same type structure, got "
                            f"{out_tree} and {init_tree}.")
        return out_leaves
    return flat


def while_loop(cond_fun, body_fun, init_val):
    """jax.lax.while_loop: `val = init_val; while cond_fun(val): val = body_fun(val)`. The carry
    keeps a fixed structure and types. Forward-mode differentiable and vmappable (a batched
    predicate runs until every member is done); reverse mode raises JAX's error."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    init_flat, init_tree = tree_util.tree_flatten(init_val)
    init_flat = _ensure_arrays(init_flat)

    def flat_cond(leaves):
        out = cond_fun(tree_util.tree_unflatten(init_tree, list(leaves)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if not tree_util.treedef_is_leaf(out_tree) or len(out_leaves) != 1:
            raise TypeError("cond_fun must return a boolean scalar, but got pytree "
                            f"{out_tree}.")
        p = _ensure_arrays(out_leaves)[0]
        if p.shape != () or p._dtype_name != "bool":
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"{_avals([p])}.")
        return [p]

    outs = _cf().while_loop(flat_cond, _loop_body(body_fun, body_fun, init_tree), init_flat,
                            _while_carry_type_error(init_tree))
    return tree_util.tree_unflatten(init_tree, outs)


def _is_weak(x):
    return isinstance(x, (int, float, complex)) and not isinstance(x, bool) or \
        (isinstance(x, Array) and x.weak_type)


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """jax.lax.fori_loop: `val = init_val; for i in range(lower, upper): val = body_fun(i, val)`.
    As in JAX, concrete bounds make it a scan over the carry (i, val) started from the Python
    int `int(lower)` (reverse-mode differentiable; `unroll` allowed), so the index `i` is a
    weakly typed integer of the default int dtype (`acc + i` keeps an int16 / int32 carry's
    type); traced bounds make it a while_loop over (lower, upper, val), the bounds converted to
    their common dtype."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lo, hi = _tessera.asarray(lower), _tessera.asarray(upper)
    lo_dt, hi_dt = lo._dtype_name, hi._dtype_name
    if lo_dt == hi_dt:
        dtype = lo_dt
    else:
        dtype = None
        if lo_dt.startswith("int") and hi_dt.startswith("int"):
            lw, hw = _is_weak(lower), _is_weak(upper)
            if lw and not hw:
                dtype = hi_dt
            elif hw and not lw:
                dtype = lo_dt
        if dtype is None:
            raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                            f"got {lo_dt} and {hi_dt}")
    if not (lo._is_tracer or hi._is_tracer):
        lo_i, hi_i = int(lo), int(hi)

        def scanned_fun(loop_carry, _):
            i, x = loop_carry
            return (i + 1, body_fun(i, x)), None

        (_, result), _ = scan(scanned_fun, (lo_i, init_val), None, length=max(hi_i - lo_i, 0),
                              unroll=False if unroll is None else unroll)
        return result
    if unroll is not None:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    if lo_dt != dtype:
        lower = _convert(lo, dtype)
    if hi_dt != dtype:
        upper = _convert(hi, dtype)

    def while_body_fun(loop_carry):
        i, u, x = loop_carry
        return i + 1, u, body_fun(i, x)

    _, _, result = while_loop(lambda c: c[0] < c[1], while_body_fun, (lower, upper, init_val))
    return result


# ---------------------------------------------------------------- scan / map

def _unroll_count(unroll):
    """JAX's unroll (a bool or a positive int) as the flat API's count (0: full unroll)."""
    if isinstance(unroll, (bool, np.bool_)):
        return 0 if unroll else 1
    try:
        n = operator.index(unroll)
    except TypeError:
        raise TypeError("The `unroll` argument to `scan` expects a concrete `int` or `bool` "
                        f"value, got {unroll!r}.") from None
    if n < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    return n


def _scan_length(xs_flat, length):
    lengths = []
    for x in xs_flat:
        shape = getattr(x, "shape", None)
        if not shape:
            bad = ", ".join(str(v) for v in xs_flat if not getattr(v, "shape", None))
            raise ValueError(f"scan got value with no leading axis to scan over: {bad}.")
        lengths.append(shape[0])
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError:
            raise TypeError("The `length` argument to `scan` expects a concrete `int` value, "
                            f"got {length!r}.") from None
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    if len(set(lengths)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in lengths)}.")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """jax.lax.scan: f(carry, x) -> (carry, y) over the leading axis of xs (any pytree; None
    with `length` for no inputs); returns (final carry, stacked ys). reverse scans from the end
    (ys stay in input order); unroll is a positive int or a bool (True: fully unrolled)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = tree_util.tree_flatten(xs)
    length = _scan_length(xs_flat, length)
    xs_flat = _ensure_arrays(xs_flat)
    n_unroll = _unroll_count(unroll)
    init_flat, init_tree = tree_util.tree_flatten(init)
    init_flat = _ensure_arrays(init_flat)
    nc = len(init_flat)
    store = {}

    def flat(leaves):
        leaves = list(leaves)
        carry = tree_util.tree_unflatten(init_tree, leaves[:nc])
        x = tree_util.tree_unflatten(xs_tree, leaves[nc:])
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            shown = tree_util.tree_map(
                lambda v: _Aval.of(v if isinstance(v, Array) else _tessera.asarray(v)), out)
            raise TypeError(f"scan body output must be a pair, got {shown}.")
        c_leaves, c_tree = tree_util.tree_flatten(out[0])
        y_leaves, y_tree = tree_util.tree_flatten(out[1])
        c_leaves, y_leaves = _ensure_arrays(c_leaves), _ensure_arrays(y_leaves)
        _check_carry_structure("scan body", f, init_tree, leaves[:nc], c_tree, c_leaves)
        store["y_tree"] = y_tree
        return c_leaves + y_leaves

    carry, ys = _cf().scan(flat, init_flat, xs_flat, length, bool(reverse), n_unroll,
                           _scan_carry_type_error("scan body", f, init_tree))
    return (tree_util.tree_unflatten(init_tree, carry),
            tree_util.tree_unflatten(store["y_tree"], ys))


def map(f, xs, *, batch_size=None):
    """jax.lax.map: f over the leading axis of xs (a pytree), outputs stacked. With batch_size
    the steps run batch_size at a time under vmap (the remainder in one more vmapped call)."""
    xs_flat, xs_tree = tree_util.tree_flatten(xs)
    _scan_length(xs_flat, None)
    xs_flat = _ensure_arrays(xs_flat)
    if batch_size is not None:
        batch_size = operator.index(batch_size)
        if batch_size < 1:
            raise ValueError(f"lax.map: batch_size must be a positive integer, got {batch_size}.")
    store = {}

    def flat(leaves):
        out = f(tree_util.tree_unflatten(xs_tree, list(leaves)))
        out_leaves, store["out_tree"] = tree_util.tree_flatten(out)
        return _ensure_arrays(out_leaves)

    outs = _cf().map(flat, xs_flat, batch_size)
    return tree_util.tree_unflatten(store["out_tree"], outs)
