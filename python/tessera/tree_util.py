"""Pytrees, as jax.tree_util: flatten nested containers to a list of leaves plus a PyTreeDef.

Nodes are tuple, list, dict (children in sorted key order), None (a node with no children),
namedtuples, collections.OrderedDict / defaultdict, and registered classes; everything else
is a leaf. A PyTreeDef prints, compares and hashes as JAX's does (and as tessera's C++
TreeDef prints). This module is pure Python and imports nothing else from tessera.

Internally a structure is a nested tuple ``(registration, node_data, children)`` with ``None``
for a leaf, so equality is tuple equality (node data compared with ``==``) and flatten /
unflatten are one recursive call per node with a dict lookup by exact type.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator

__all__ = [
    "PyTreeDef", "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey",
    "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
    "tree_reduce", "tree_reduce_associative", "tree_all", "tree_transpose", "tree_broadcast",
    "tree_leaves_checked", "tree_flatten_with_path", "tree_leaves_with_path",
    "tree_map_with_path", "keystr", "all_leaves", "build_tree", "treedef_tuple",
    "treedef_children", "treedef_is_leaf", "treedef_is_strict_leaf", "register_pytree_node",
    "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_dataclass", "register_static",
    "broadcast_prefix", "flatten_one_level", "flatten_one_level_with_keys",
    "generate_key_paths", "check_same_structure",
]


# ---- registry ----
class _Registration:
    """How one node type flattens; compared by identity inside structures."""

    __slots__ = ("type", "kind", "flatten", "unflatten", "flatten_with_keys")

    def __init__(self, type_, kind, flatten=None, unflatten=None, flatten_with_keys=None):
        self.type = type_
        self.kind = kind  # "None", "tuple", "list", "dict", "namedtuple" or "custom"
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys

    def __repr__(self):
        return f"<pytree node {self.kind} {self.type!r}>"


_NONE = _Registration(type(None), "None")
_TUPLE = _Registration(tuple, "tuple")
_LIST = _Registration(list, "list")
_DICT = _Registration(dict, "dict")
_NAMEDTUPLE = _Registration(None, "namedtuple")  # node_data is the namedtuple class
_NONE_NODE = (_NONE, None, ())

_registry = {type(None): _NONE, tuple: _TUPLE, list: _LIST, dict: _DICT}
_registry_get = _registry.get


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except Exception as e:  # as JAX: keys without an order raise ValueError
        raise ValueError(
            "[tree_flatten] Comparator raised exception while sorting pytree dictionary keys "
            f"{list(d)!r}; dict keys must be mutually comparable (e.g. all str), or use a "
            "registered container") from e


def _custom_flatten(reg, x):
    out = reg.flatten(x)
    try:
        children, aux = out
    except (TypeError, ValueError):
        raise ValueError(
            f"[tree_flatten] the flatten function of {reg.type.__name__} should return a "
            f"(children, aux_data) tuple, got {_short_repr(out)}") from None
    return children, aux


def _custom_flatten_with_keys(reg, x):
    if reg.flatten_with_keys is None:
        children, aux = _custom_flatten(reg, x)
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
    out = reg.flatten_with_keys(x)
    try:
        key_children, aux = out
        key_children = [(k, c) for k, c in key_children]
    except (TypeError, ValueError):
        raise ValueError(
            f"[tree_flatten_with_path] the flatten_with_keys function of {reg.type.__name__} "
            f"should return a (((key, child), ...), aux_data) tuple, got {_short_repr(out)}"
        ) from None
    return key_children, aux


# ---- flatten / unflatten (the hot path) ----
def _flatten(x, leaves):
    reg = _registry_get(type(x))
    if reg is None:
        if isinstance(x, tuple) and hasattr(type(x), "_fields"):
            return (_NAMEDTUPLE, type(x), _flatten_children(x, leaves))
        leaves.append(x)
        return None
    if reg is _TUPLE or reg is _LIST:
        return (reg, None, _flatten_children(x, leaves))
    if reg is _DICT:
        keys = _sorted_keys(x)
        return (_DICT, keys, _flatten_children([x[k] for k in keys], leaves))
    if reg is _NONE:
        return _NONE_NODE
    children, aux = _custom_flatten(reg, x)
    return (reg, aux, _flatten_children(children, leaves))


def _flatten_children(xs, leaves):
    # Leaves are handled inline (no call per leaf): the common case on the hot path.
    out = []
    push = out.append
    append = leaves.append
    for c in xs:
        if _registry_get(type(c)) is None and not (
                isinstance(c, tuple) and hasattr(type(c), "_fields")):
            append(c)
            push(None)
        else:
            push(_flatten(c, leaves))
    return tuple(out)


def _flatten_pred(x, leaves, is_leaf):
    if is_leaf(x):
        leaves.append(x)
        return None
    reg = _registry_get(type(x))
    if reg is None:
        if isinstance(x, tuple) and hasattr(type(x), "_fields"):
            return (_NAMEDTUPLE, type(x), tuple([_flatten_pred(c, leaves, is_leaf) for c in x]))
        leaves.append(x)
        return None
    if reg is _TUPLE or reg is _LIST:
        return (reg, None, tuple([_flatten_pred(c, leaves, is_leaf) for c in x]))
    if reg is _DICT:
        keys = _sorted_keys(x)
        return (_DICT, keys, tuple([_flatten_pred(x[k], leaves, is_leaf) for k in keys]))
    if reg is _NONE:
        return _NONE_NODE
    children, aux = _custom_flatten(reg, x)
    return (reg, aux, tuple([_flatten_pred(c, leaves, is_leaf) for c in children]))


def _flatten_path(x, path, out, is_leaf, takes_path):
    if is_leaf is not None and (is_leaf(path, x) if takes_path else is_leaf(x)):
        out.append((path, x))
        return None
    reg = _registry_get(type(x))
    if reg is None:
        if _is_namedtuple(x):
            fields = type(x)._fields
            if len(fields) != len(x):
                raise ValueError("[tree_flatten_with_path] a namedtuple's _fields attribute "
                                 "should have the same size as the tuple")
            return (_NAMEDTUPLE, type(x), tuple([
                _flatten_path(c, path + (GetAttrKey(f),), out, is_leaf, takes_path)
                for f, c in zip(fields, x)]))
        out.append((path, x))
        return None
    if reg is _TUPLE or reg is _LIST:
        return (reg, None, tuple([
            _flatten_path(c, path + (SequenceKey(i),), out, is_leaf, takes_path)
            for i, c in enumerate(x)]))
    if reg is _DICT:
        keys = _sorted_keys(x)
        return (_DICT, keys, tuple([
            _flatten_path(x[k], path + (DictKey(k),), out, is_leaf, takes_path) for k in keys]))
    if reg is _NONE:
        return _NONE_NODE
    key_children, aux = _custom_flatten_with_keys(reg, x)
    return (reg, aux, tuple([
        _flatten_path(c, path + (k,), out, is_leaf, takes_path) for k, c in key_children]))


def _unflatten(node, it):
    reg, data, children = node
    vals = [next(it) if c is None else _unflatten(c, it) for c in children]
    if reg is _TUPLE:
        return tuple(vals)
    if reg is _LIST:
        return vals
    if reg is _DICT:
        return dict(zip(data, vals))
    if reg is _NONE:
        return None
    if reg is _NAMEDTUPLE:
        return data(*vals)
    return reg.unflatten(data, tuple(vals))


# ---- printing, counting, comparing structures ----
def _short_repr(x, limit=80):
    try:
        s = repr(x)
    except Exception:  # a broken __repr__ must not hide the real error
        s = f"<{type(x).__name__} object>"
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _node_str(node):
    if node is None:
        return "*"
    reg, data, children = node
    parts = [_node_str(c) for c in children]
    if reg is _TUPLE:
        return "(" + ", ".join(parts) + (",)" if len(parts) == 1 else ")")
    if reg is _LIST:
        return "[" + ", ".join(parts) + "]"
    if reg is _DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(data, parts)) + "}"
    if reg is _NONE:
        return "None"
    if reg is _NAMEDTUPLE:
        return f"CustomNode(namedtuple[{data.__name__}], [{', '.join(parts)}])"
    return f"CustomNode({reg.type.__name__}[{data}], [{', '.join(parts)}])"


def _count_leaves(node):
    if node is None:
        return 1
    return sum([_count_leaves(c) for c in node[2]])


def _count_nodes(node):
    if node is None:
        return 1
    return 1 + sum([_count_nodes(c) for c in node[2]])


def _hash_slow(node):
    # Structures whose aux data is unhashable: hash everything but that aux data.
    if node is None:
        return 0x5BD1E995
    reg, data, children = node
    try:
        hd = hash(data)
    except TypeError:
        hd = 0
    return hash((reg, hd, tuple([_hash_slow(c) for c in children])))


def _child_key(node, i):
    reg, data, _ = node
    if reg is _DICT:
        return DictKey(data[i])
    if reg is _NAMEDTUPLE:
        return GetAttrKey(data._fields[i])
    if reg is _TUPLE or reg is _LIST:
        return SequenceKey(i)
    return FlattenedIndexKey(i)


def _kind_name(node):
    if node is None:
        return "a leaf"
    kind = node[0].kind
    return "a custom node" if kind in ("custom", "namedtuple") else kind


class PyTreeDef:
    """The structure of a pytree: immutable, hashable, printed as JAX prints it."""

    __slots__ = ("_node", "_num_leaves", "_hash", "__weakref__")

    def __init__(self, node, num_leaves=None):
        self._node = node
        self._num_leaves = _count_leaves(node) if num_leaves is None else num_leaves
        self._hash = None

    @property
    def num_leaves(self):
        return self._num_leaves

    @property
    def num_nodes(self):
        return _count_nodes(self._node)

    def children(self):
        node = self._node
        return [] if node is None else [PyTreeDef(c) for c in node[2]]

    def unflatten(self, leaves):
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        n = self._num_leaves
        if len(leaves) != n:
            few = "few" if len(leaves) < n else "many"
            raise ValueError(f"[tree_unflatten] Too {few} leaves for PyTreeDef; expected {n}, "
                             f"got {len(leaves)} (structure {self})")
        node = self._node
        if node is None:
            return leaves[0]
        return _unflatten(node, iter(leaves))

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this structure's leaves; `tree` must have this structure
        down to them (ValueError naming the path and both structures otherwise)."""
        return _flatten_up_to_checked(self, tree, "flatten_up_to", "")

    def compose(self, inner):
        """This structure with every leaf replaced by `inner`."""
        return PyTreeDef(_compose(self._node, inner._node), self._num_leaves * inner._num_leaves)

    def node_data(self):
        """None for a leaf, else (node type, node data) of the root."""
        node = self._node
        if node is None:
            return None
        reg, data, _ = node
        if reg is _DICT:
            return dict, list(data)
        if reg is _NAMEDTUPLE:
            return data, None
        return reg.type, data

    @staticmethod
    def make_from_node_data_and_children(registry, node_data, children):
        """Inverse of node_data()/children(); `registry` is accepted for JAX's signature."""
        del registry
        kids = tuple(c._node for c in children)
        if node_data is None:
            if kids:
                raise ValueError("[make_from_node_data_and_children] a leaf has no children")
            return PyTreeDef(None, 1)
        typ, data = node_data
        reg = _registry_get(typ)
        if reg is None:
            if not (isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields")):
                raise ValueError(f"[make_from_node_data_and_children] {typ!r} is not a pytree "
                                 "node type; register it first")
            return PyTreeDef((_NAMEDTUPLE, typ, kids))
        if reg is _DICT:
            data = tuple(data)
        elif reg.kind != "custom":
            data = None
        return PyTreeDef(_NONE_NODE if reg is _NONE else (reg, data, kids))

    def walk(self, f_node, f_leaf, leaves):
        """Rebuilds bottom-up: f_leaf(leaf) at leaves (identity when None) and
        f_node(children_tuple, node_data) at nodes (dict node data: the key list)."""
        it = iter(leaves)

        def go(node):
            if node is None:
                try:
                    leaf = next(it)
                except StopIteration:
                    raise ValueError("[walk] Too few leaves for PyTreeDef") from None
                return leaf if f_leaf is None else f_leaf(leaf)
            reg, data, children = node
            vals = tuple(go(c) for c in children)
            return f_node(vals, list(data) if reg is _DICT else data)

        out = go(self._node)
        if next(it, _MISSING) is not _MISSING:
            raise ValueError("[walk] Too many leaves for PyTreeDef")
        return out

    def from_iterable_tree(self, xs):
        """Builds this structure from nested iterables (one iterable per node)."""

        def go(node, x):
            if node is None:
                return x
            reg, data, children = node
            ys = list(x)
            if len(ys) != len(children):
                raise ValueError(f"[build_tree] Arity mismatch between trees: {len(ys)} != "
                                 f"{len(children)} at {_node_str(node)}")
            vals = [go(c, y) for c, y in zip(children, ys)]
            return _unflatten((reg, data, (None,) * len(vals)), iter(vals))

        return go(self._node, xs)

    def __eq__(self, other):
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self is other or (self._num_leaves == other._num_leaves
                                 and self._node == other._node)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                h = hash(self._node)
            except TypeError:
                h = _hash_slow(self._node)
            self._hash = h
        return h

    def __repr__(self):
        return f"PyTreeDef({_node_str(self._node)})"

    def __reduce__(self):
        return _treedef_from_pickle, (_encode(self._node),)


_MISSING = object()


def _compose(node, inner):
    if node is None:
        return inner
    reg, data, children = node
    return (reg, data, tuple([_compose(c, inner) for c in children]))


def _encode(node):
    # Pickled form: registrations are named by their type (namedtuples by a tag).
    if node is None:
        return None
    reg, data, children = node
    key = "namedtuple" if reg is _NAMEDTUPLE else reg.type
    return (key, data, tuple([_encode(c) for c in children]))


def _decode(enc):
    if enc is None:
        return None
    key, data, children = enc
    reg = _NAMEDTUPLE if key == "namedtuple" else _registry_get(key)
    if reg is None:
        raise ValueError(f"[PyTreeDef] unknown node type in pickled PyTreeDef: {key!r}; "
                         "register it before unpickling")
    return _NONE_NODE if reg is _NONE else (reg, data, tuple([_decode(c) for c in children]))


def _treedef_from_pickle(enc):
    return PyTreeDef(_decode(enc))


# ---- structure errors ----
class _UpToError(Exception):
    """Internal: a mismatch found by flatten_up_to; `path` is filled in while unwinding."""

    def __init__(self, what):
        super().__init__(what)
        self.what = what
        self.path = []


def _flatten_up_to(node, x, out):
    if node is None:
        out.append(x)
        return
    reg, data, children = node
    n = len(children)
    if reg is _TUPLE or reg is _LIST:
        if type(x) is not reg.type:
            raise _UpToError(f"Expected {reg.kind}, got {_short_repr(x)}")
        if len(x) != n:
            raise _UpToError(f"{reg.kind.capitalize()} arity mismatch: {len(x)} != {n}")
        xs = x
    elif reg is _DICT:
        if type(x) is not dict:
            raise _UpToError(f"Expected dict, got {_short_repr(x)}")
        keys = _sorted_keys(x)
        if keys != data:
            raise _UpToError(f"Dict key mismatch; expected keys: {list(data)!r}, "
                             f"got keys: {list(keys)!r}")
        xs = [x[k] for k in keys]
    elif reg is _NONE:
        if x is not None:
            raise _UpToError(
                f"Expected None, got {_short_repr(x)} (None is a pytree node without children, "
                "not a leaf; to map over it write tree_map(lambda a, b: None if a is None else "
                "f(a, b), a, b, is_leaf=lambda a: a is None))")
        return
    elif reg is _NAMEDTUPLE:
        if not _is_namedtuple(x):
            raise _UpToError(f"Expected named tuple {data.__name__}, got {_short_repr(x)}")
        if len(x) != n:
            raise _UpToError(f"Named tuple arity mismatch: {len(x)} != {n}")
        if type(x) is not data:
            raise _UpToError(f"Named tuple type mismatch; expected type: {data.__name__}, "
                             f"got type: {type(x).__name__}")
        xs = x
    else:
        if _registry_get(type(x)) is not reg:
            raise _UpToError(f"Custom node type mismatch; expected type: {reg.type.__name__}, "
                             f"got {_short_repr(x)}")
        xs, aux = _custom_flatten(reg, x)
        xs = list(xs)
        if aux != data:
            name = reg.type.__name__
            raise _UpToError(f"Custom node auxiliary data mismatch; expected {name}[{data}], "
                             f"got {name}[{aux}]")
        if len(xs) != n:
            raise _UpToError(f"Custom node arity mismatch: {len(xs)} != {n}")
    i = 0
    try:
        for i in range(n):
            c = children[i]
            if c is None:
                out.append(xs[i])
            else:
                _flatten_up_to(c, xs[i], out)
    except _UpToError as e:
        e.path.append(_child_key(node, i) if reg.flatten_with_keys is None else
                      _custom_flatten_with_keys(reg, x)[0][i][0])
        raise


def _flatten_up_to_checked(treedef, tree, op, context):
    out = []
    try:
        _flatten_up_to(treedef._node, tree, out)
    except _UpToError as e:
        what = e.what
        if e.path:
            what += " at " + keystr(tuple(reversed(e.path)))
        if context:
            what += " " + context
        try:
            got = str(tree_structure(tree))
        except Exception:
            got = _short_repr(tree)
        raise ValueError(f"[{op}] {what}; expected {treedef} got {got}") from None
    return out


def _first_difference(a, b, path):
    """The first difference between structures a and b (depth first) as text, or None."""
    if a == b:
        return None
    at = (lambda w: w + " at " + keystr(tuple(path)) if path else w)
    if a is None or b is None or _kind_name(a) != _kind_name(b):
        return at(f"Expected {_kind_name(a)}, got {_node_str(b)}")
    (ra, da, ca), (rb, db, cb) = a, b
    kind = ra.kind
    if kind in ("tuple", "list") and len(ca) != len(cb):
        return at(f"{kind.capitalize()} arity mismatch: {len(cb)} != {len(ca)}")
    if kind == "dict" and da != db:
        return at(f"Dict key mismatch; expected keys: {list(da)!r}, got keys: {list(db)!r}")
    if kind in ("custom", "namedtuple"):
        ta = da if kind == "namedtuple" else ra.type
        tb = db if rb.kind == "namedtuple" else rb.type
        if ta is not tb:
            na, nb = ta.__name__, tb.__name__
            if na == nb:
                na, nb = repr(ta), repr(tb)
            return at(f"Custom node type mismatch; expected type: {na}, got type: {nb}")
        if kind == "custom" and da != db:
            return at(f"Custom node auxiliary data mismatch; expected {ta.__name__}[{da}], "
                      f"got {tb.__name__}[{db}]")
        if len(ca) != len(cb):
            return at(f"Custom node arity mismatch: {len(cb)} != {len(ca)}")
    for i, (x, y) in enumerate(zip(ca, cb)):
        path.append(_child_key(a, i))
        d = _first_difference(x, y, path)
        path.pop()
        if d is not None:
            return d
    return at("structures differ")


def check_same_structure(expected, got, op, context=""):
    """Raises ValueError "[op] <first difference> at <path>[ context]; expected PyTreeDef(..)
    got PyTreeDef(..)" unless the structures are equal (the C++ check_same_structure)."""
    if expected == got:
        return
    what = _first_difference(expected._node, got._node, [])
    if context:
        what += " " + context
    raise ValueError(f"[{op}] {what}; expected {expected} got {got}")


# ---- the jax.tree_util functions ----
def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef): the leaves in order (dict children by sorted key)."""
    leaves = []
    node = _flatten(tree, leaves) if is_leaf is None else _flatten_pred(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    leaves = []
    if is_leaf is None:
        _flatten(tree, leaves)
    else:
        _flatten_pred(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_leaves_checked(treedef_expected, tree):
    """The leaves of `tree`, which must have exactly the structure `treedef_expected`."""
    leaves, treedef = tree_flatten(tree)
    check_same_structure(treedef_expected, treedef, "tree_leaves_checked")
    return leaves


def treedef_tuple(treedefs):
    defs = list(treedefs)
    return PyTreeDef((_TUPLE, None, tuple(d._node for d in defs)),
                     sum(d._num_leaves for d in defs))


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    # As JAX: a single node, so PyTreeDef(None) counts too.
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef):
    return treedef._node is None


def all_leaves(iterable, is_leaf=None):
    """Whether every element of `iterable` is a leaf (None is not a leaf)."""
    if is_leaf is None:
        for x in iterable:
            if _registry_get(type(x)) is not None or _is_namedtuple(x):
                return False
        return True
    lst = list(iterable)
    leaves = tree_leaves(lst, is_leaf)
    return len(leaves) == len(lst) and all(a is b for a, b in zip(leaves, lst))


def tree_map(f, tree, *rest, is_leaf=None):
    """f(leaf, *same-position subtrees of rest) at every leaf of `tree`; each tree in `rest`
    must have `tree`'s structure down to its leaves."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves_ = [leaves] + [_flatten_up_to_checked(treedef, r, "tree_map",
                                                     f"in tree argument {i + 2}")
                              for i, r in enumerate(rest)]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves_)])


def build_tree(treedef, xs):
    return treedef.from_iterable_tree(xs)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns an outer structure of inner structures into an inner of outers."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise TypeError(f"[tree_transpose] Mismatch\n{treedef}\n != \n{expected}")
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    lol = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    subtrees = [outer_treedef.unflatten(col) for col in zip(*lol)] if outer_size else \
        [outer_treedef.unflatten([]) for _ in range(inner_size)]
    return inner_treedef.unflatten(subtrees)


def tree_reduce(function, tree, initializer=_MISSING, is_leaf=None):
    if initializer is _MISSING:
        return functools.reduce(function, tree_leaves(tree, is_leaf=is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf=is_leaf), initializer)


def tree_reduce_associative(operation, tree, *, identity=_MISSING, is_leaf=None):
    """Reduces the leaves pairwise (a balanced tree of `operation` calls)."""
    seq = tree_leaves(tree, is_leaf=is_leaf)
    if not seq:
        if identity is _MISSING:
            raise TypeError("[tree_reduce_associative] Must specify identity for parallel "
                            "reduction of empty sequence.")
        return identity
    while len(seq) > 1:
        nxt = [operation(seq[i], seq[i + 1]) for i in range(0, len(seq) - 1, 2)]
        if len(seq) % 2:
            nxt.append(seq[-1])
        seq = nxt
    return seq[0]


def tree_all(tree, *, is_leaf=None):
    return all(tree_leaves(tree, is_leaf=is_leaf))


def broadcast_prefix(prefix_tree, full_tree, is_leaf=None):
    """The leaves of `prefix_tree`, each repeated once per leaf of the subtree of `full_tree`
    it sits over (vmap's in_axes style prefixes)."""
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to_checked(treedef, full_tree, "broadcast_prefix", "")
    result = []
    for x, sub in zip(leaves, subtrees):
        result.extend([x] * tree_structure(sub).num_leaves)
    return result


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf))


def flatten_one_level(tree):
    """(children, node data) of one node; ValueError for a leaf."""
    reg = _registry_get(type(tree))
    if reg is None:
        if _is_namedtuple(tree):
            return list(tree), type(tree)
        raise ValueError(f"[flatten_one_level] can't tree-flatten type: {type(tree)}")
    if reg is _TUPLE or reg is _LIST:
        return tree, None
    if reg is _DICT:
        keys = _sorted_keys(tree)
        return tuple(tree[k] for k in keys), keys
    if reg is _NONE:
        return (), None
    return _custom_flatten(reg, tree)


def flatten_one_level_with_keys(tree):
    reg = _registry_get(type(tree))
    if reg is None:
        if _is_namedtuple(tree):
            return [(GetAttrKey(f), c) for f, c in zip(type(tree)._fields, tree)], type(tree)
        raise ValueError(f"[flatten_one_level_with_keys] can't tree-flatten type: {type(tree)}")
    if reg is _TUPLE or reg is _LIST:
        return [(SequenceKey(i), c) for i, c in enumerate(tree)], None
    if reg is _DICT:
        keys = _sorted_keys(tree)
        return [(DictKey(k), tree[k]) for k in keys], keys
    if reg is _NONE:
        return [], None
    return _custom_flatten_with_keys(reg, tree)


# ---- key paths ----
class _KeyEntry:
    """Base of the frozen key-path entries; `_field` names the one attribute."""

    __slots__ = ()
    _field = ""

    def __init__(self, value):
        object.__setattr__(self, self._field, value)

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def _value(self):
        return getattr(self, self._field)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._value() == other._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value()!r})"

    def __reduce__(self):
        return type(self), (self._value(),)


class SequenceKey(_KeyEntry):
    """Index into a tuple or list: "[0]"."""

    __slots__ = ("idx",)
    __match_args__ = ("idx",)
    _field = "idx"

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_KeyEntry):
    """Key of a dict: "['a']"."""

    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_KeyEntry):
    """Attribute of a namedtuple or registered class: ".w"."""

    __slots__ = ("name",)
    __match_args__ = ("name",)
    _field = "name"

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_KeyEntry):
    """Child of a registered class without key names: "[<flat index 0>]"."""

    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _simple_entrystr(k):
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, (DictKey, FlattenedIndexKey)):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return str(k.name)
    return str(k)


def keystr(keys, *, simple=False, separator=""):
    """Joins the key entries of a path: "['a'][0].w" (simple=True: "a0w" with `separator`)."""
    return separator.join(map(_simple_entrystr if simple else str, keys))


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf), ...], treedef); is_leaf(path, x) when is_leaf_takes_path."""
    out = []
    node = _flatten_path(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, PyTreeDef(node, len(out))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


generate_key_paths = tree_leaves_with_path


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """f(key_path, leaf, *same-position subtrees of rest) at every leaf of `tree`."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    rests = [_flatten_up_to_checked(treedef, r, "tree_map_with_path", f"in tree argument {i + 2}")
             for i, r in enumerate(rest)]
    return treedef.unflatten([f(p, x, *(r[j] for r in rests))
                              for j, (p, x) in enumerate(path_leaves)])


# ---- registration ----
def _register(nodetype, flatten_func, unflatten_func, flatten_with_keys_func, op):
    if not isinstance(nodetype, type):
        raise TypeError(f"[{op}] expected a type to register, got {_short_repr(nodetype)}")
    if nodetype in _registry:
        raise ValueError(f"[{op}] Duplicate custom PyTreeDef type registration for "
                         f"{nodetype!r}.")
    _registry[nodetype] = _Registration(nodetype, "custom", flatten_func, unflatten_func,
                                        flatten_with_keys_func)


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Makes `nodetype` a pytree node: flatten_func(x) -> (children, aux_data) with aux_data
    hashable and comparable; unflatten_func(aux_data, children) -> x."""
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys_func,
              "register_pytree_node")


def register_pytree_node_class(cls):
    """Class decorator: registers cls with its tree_flatten() method and tree_unflatten
    classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """As register_pytree_node, with flatten_with_keys(x) -> (((key, child), ...), aux_data)
    naming the children in key paths."""
    if flatten_func is None:
        def flatten_func(x):
            key_children, aux = flatten_with_keys(x)
            return [c for _, c in key_children], aux
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys,
              "register_pytree_with_keys")


def register_pytree_with_keys_class(cls):
    flatten_func = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten_func)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass: data_fields are children (key paths .name), meta_fields are aux
    data (a tuple of their values). With neither given, fields marked
    field(metadata=dict(static=True)) are meta and the other init fields are data."""
    op = "register_dataclass"
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"[{op}] data_fields and meta_fields are required for "
                            f"{nodetype!r}, which is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError(f"[{op}] pass both data_fields and meta_fields, or neither")
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init_fields:
            msg = (f"[{op}] data_fields and meta_fields must include all dataclass fields "
                   "with init=True and only them.")
            if init_fields - given:
                msg += (f" Missing fields: {sorted(init_fields - given)}; add them to "
                        "drop_fields to suppress this error.")
            if given - init_fields:
                msg += f" Unexpected fields: {sorted(given - init_fields)}."
            raise ValueError(msg)

    def flatten(x):
        return ([getattr(x, n) for n in data_fields],
                tuple([getattr(x, n) for n in meta_fields]))

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple([getattr(x, n) for n in meta_fields]))

    def unflatten(meta, data):
        kwargs = dict(zip(meta_fields, meta))
        kwargs.update(zip(data_fields, data))
        return nodetype(**kwargs)

    _register(nodetype, flatten, unflatten, flatten_with_keys, op)
    return nodetype


def register_static(cls):
    """Registers cls as a node without children whose instances are the aux data."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return tuple([d[k] for k in keys]), (d.default_factory, keys)


register_pytree_node(
    collections.OrderedDict,
    lambda x: (tuple(x.values()), tuple(x.keys())),
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
    lambda x: (tuple([(DictKey(k), v) for k, v in x.items()]), tuple(x.keys())))
register_pytree_node(
    collections.defaultdict,
    _flatten_defaultdict,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    lambda d: ((lambda vals, aux: (tuple(zip(map(DictKey, aux[1]), vals)), aux))(
        *_flatten_defaultdict(d))))
