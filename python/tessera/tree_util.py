"""Pytrees, as jax.tree_util: flatten nested containers to a list of leaves plus a PyTreeDef.

Nodes are tuple, list, dict (children in sorted key order), None (a node with no children),
namedtuples, collections.OrderedDict / defaultdict, and registered classes; everything else
is a leaf. A PyTreeDef prints, compares and hashes as JAX's does.

Flattening, unflattening, the registry and the structure errors run in C++ on the core's
TreeDef (python/src/py_tree.cpp), so a structure built here is the one the C++
transformations and caches key on. This module holds the key classes and the functions
composed from those pieces.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator

from tessera import _tessera as _C

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

PyTreeDef = _C.PyTreeDef
_MISSING = object()


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


_C._tree_init(SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)


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


def _treedef_from_pickle(enc):
    return _C._tree_decode(enc)


# ---- flatten / unflatten (C++) ----
# A single Array is the commonest tree the transformations see (one argument, one loss): it
# takes a Python fast path to the one shared leaf structure, skipping the extension call.
_Array = _C.Array
_LEAF = _C.tree_flatten(0)[1]
_flatten = _C.tree_flatten
tree_leaves = _C.tree_leaves
tree_flatten_with_path = _C.tree_flatten_with_path
treedef_tuple = _C.treedef_tuple


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef): the leaves in order (dict children by sorted key)."""
    if type(tree) is _Array and is_leaf is None:
        return [tree], _LEAF
    return _flatten(tree, is_leaf)


def tree_unflatten(treedef, leaves):
    if treedef is _LEAF and len(leaves) == 1:
        return leaves[0]
    return treedef.unflatten(leaves)


def tree_structure(tree, is_leaf=None):
    if type(tree) is _Array and is_leaf is None:
        return _LEAF
    return _flatten(tree, is_leaf)[1]


def check_same_structure(expected, got, op, context=""):
    """Raises ValueError "[op] <first difference> at <path>[ context]; expected PyTreeDef(..)
    got PyTreeDef(..)" unless the structures are equal (the C++ check_same_structure)."""
    _C.tree_check_same_structure(expected, got, op, context)


def tree_leaves_checked(treedef_expected, tree):
    """The leaves of `tree`, which must have exactly the structure `treedef_expected`."""
    leaves, treedef = _C.tree_flatten(tree)
    _C.tree_check_same_structure(treedef_expected, treedef, "tree_leaves_checked", "")
    return leaves


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    # As JAX: a single node, so PyTreeDef(None) counts too.
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef):
    return treedef._is_strict_leaf()


def all_leaves(iterable, is_leaf=None):
    """Whether every element of `iterable` is a leaf (None is not a leaf)."""
    if is_leaf is None:
        return _C.tree_all_leaves(iterable)
    lst = list(iterable)
    leaves = tree_leaves(lst, is_leaf)
    return len(leaves) == len(lst) and all(a is b for a, b in zip(leaves, lst))


def tree_map(f, tree, *rest, is_leaf=None):
    """f(leaf, *same-position subtrees of rest) at every leaf of `tree`; each tree in `rest`
    must have `tree`'s structure down to its leaves."""
    leaves, treedef = _C.tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves_ = [leaves] + [treedef._flatten_up_to(r, "tree_map", f"in tree argument {i + 2}")
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
    subtrees = treedef._flatten_up_to(full_tree, "broadcast_prefix", "")
    result = []
    for x, sub in zip(leaves, subtrees):
        result.extend([x] * tree_structure(sub).num_leaves)
    return result


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf))


def flatten_one_level(tree):
    """(children, node data) of one node; ValueError for a leaf."""
    return _C.tree_flatten_one_level(tree, False)


def flatten_one_level_with_keys(tree):
    return _C.tree_flatten_one_level(tree, True)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


generate_key_paths = tree_leaves_with_path


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """f(key_path, leaf, *same-position subtrees of rest) at every leaf of `tree`."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    rests = [treedef._flatten_up_to(r, "tree_map_with_path", f"in tree argument {i + 2}")
             for i, r in enumerate(rest)]
    return treedef.unflatten([f(p, x, *(r[j] for r in rests))
                              for j, (p, x) in enumerate(path_leaves)])


# ---- registration ----
def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Makes `nodetype` a pytree node: flatten_func(x) -> (children, aux_data) with aux_data
    hashable and comparable; unflatten_func(aux_data, children) -> x."""
    _C.tree_register(nodetype, flatten_func, unflatten_func, flatten_with_keys_func,
                     "register_pytree_node")


def register_pytree_node_class(cls):
    """Class decorator: registers cls with its tree_flatten() method and tree_unflatten
    classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def _register_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func, op):
    if flatten_func is None:
        def flatten_func(x):
            key_children, aux = flatten_with_keys(x)
            return [c for _, c in key_children], aux
    _C.tree_register(nodetype, flatten_func, unflatten_func, flatten_with_keys, op)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """As register_pytree_node, with flatten_with_keys(x) -> (((key, child), ...), aux_data)
    naming the children in key paths."""
    _register_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func,
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
    get_data = operator.attrgetter(*data_fields) if data_fields else (lambda x: ())
    get_meta = operator.attrgetter(*meta_fields) if meta_fields else (lambda x: ())
    one_data, one_meta = len(data_fields) == 1, len(meta_fields) == 1

    def flatten(x):
        d, m = get_data(x), get_meta(x)
        return (d,) if one_data else d, (m,) if one_meta else m

    def flatten_with_keys(x):
        d, m = flatten(x)
        return [(GetAttrKey(n), v) for n, v in zip(data_fields, d)], m

    def unflatten(meta, data):
        kwargs = dict(zip(meta_fields, meta))
        kwargs.update(zip(data_fields, data))
        return nodetype(**kwargs)

    _C.tree_register(nodetype, flatten, unflatten, flatten_with_keys, op)
    return nodetype


def register_static(cls):
    """Registers cls as a node without children whose instances are the aux data."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def _flatten_defaultdict(d):
    keys = _C.tree_flatten_one_level(dict(d), False)[1]
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


class Partial(functools.partial):
    """functools.partial as a pytree (jax.tree_util.Partial): the bound positional and keyword
    arguments are its children and the function is static, so a Partial can be passed to and
    returned from jit-compiled functions and transformed like any other pytree."""

    def __new__(klass, func, *args, **kw):
        # Unwrap a partial of a plain callable so that the function stays the static part (not
        # another Partial whose arguments would be hidden from the tree).
        if isinstance(func, functools.partial) and not isinstance(func, Partial):
            original = func
            func = Partial(original.func, *original.args, **original.keywords)
        return super().__new__(klass, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))
__all__.append("Partial")
