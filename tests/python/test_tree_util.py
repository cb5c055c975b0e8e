"""tessera.tree_util / tessera.tree against jax.tree_util's documented behaviour.

Random trees are checked against an independent reference flattener written here (isinstance
walk, its own printer); the fixed cases pin JAX's repr strings, key paths and error texts.
"""

import collections
import dataclasses
import functools
import importlib
import importlib.util
import operator
import os
import pickle
import random
import sys
import types
import typing

import numpy as np
import pytest


def _import_tree_modules():
    """(tessera.tree_util, tessera.tree, stand-in package or None). Both modules are pure
    Python: when the package's __init__ cannot run (compiled extension not built) they load
    under a stand-in package object, removed again so `import tessera` elsewhere is as it was."""
    try:
        import tessera.tree
        import tessera.tree_util
        return tessera.tree_util, tessera.tree, None
    except ImportError:
        spec = importlib.util.find_spec("tessera")
        if spec is None or not spec.submodule_search_locations:
            raise
        stand_in = types.ModuleType("tessera")
        stand_in.__path__ = list(spec.submodule_search_locations)
        sys.modules["tessera"] = stand_in
        try:
            return (importlib.import_module("tessera.tree_util"),
                    importlib.import_module("tessera.tree"), stand_in)
        finally:
            del sys.modules["tessera"]


tu, jtree, _STAND_IN = _import_tree_modules()


@pytest.fixture
def importable_tessera(monkeypatch):
    """Pickling imports tessera.tree_util by name: reinstate the stand-in if one was used."""
    if _STAND_IN is not None:
        monkeypatch.setitem(sys.modules, "tessera", _STAND_IN)


# ---- module-level node types (module level so pickling treedefs finds them) ----
Point = collections.namedtuple("Point", "x y")


class Pair(typing.NamedTuple):
    a: typing.Any
    b: typing.Any


@tu.register_pytree_node_class
class Box:
    """Registered through the class decorator; `label` is aux data."""

    def __init__(self, items, label):
        self.items, self.label = list(items), label

    def tree_flatten(self):
        return tuple(self.items), self.label

    @classmethod
    def tree_unflatten(cls, aux, children):
        assert isinstance(children, tuple)  # JAX passes a tuple
        return cls(children, aux)

    def __eq__(self, other):
        return type(other) is Box and self.items == other.items and self.label == other.label

    def __repr__(self):
        return f"Box({self.items!r}, {self.label!r})"


class Plain:
    """Never registered: a leaf."""


class Mark:
    """A leaf wrapping a value, so results can be told apart from tree nodes."""

    def __init__(self, *vals):
        self.vals = vals


SEED = int.from_bytes(os.urandom(4), "little")


def rng():
    print(f"seed {SEED}")
    return random.Random(SEED)


# ---- an independent reference ----
def ref_flatten(x):
    """(leaves, structure text) by an isinstance walk, printing as JAX does."""
    if x is None:
        return [], "None"
    if type(x) is tuple:
        parts = [ref_flatten(c) for c in x]
        inner = ", ".join(p[1] for p in parts) + ("," if len(x) == 1 else "")
        return [leaf for p in parts for leaf in p[0]], f"({inner})"
    if type(x) is list:
        parts = [ref_flatten(c) for c in x]
        return [leaf for p in parts for leaf in p[0]], "[" + ", ".join(p[1] for p in parts) + "]"
    if type(x) is dict:
        keys = sorted(x)
        parts = [ref_flatten(x[k]) for k in keys]
        body = ", ".join(f"{k!r}: {p[1]}" for k, p in zip(keys, parts))
        return [leaf for p in parts for leaf in p[0]], "{" + body + "}"
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        parts = [ref_flatten(c) for c in x]
        body = ", ".join(p[1] for p in parts)
        return ([leaf for p in parts for leaf in p[0]],
                f"CustomNode(namedtuple[{type(x).__name__}], [{body}])")
    if type(x) is Box:
        parts = [ref_flatten(c) for c in x.items]
        body = ", ".join(p[1] for p in parts)
        return [leaf for p in parts for leaf in p[0]], f"CustomNode(Box[{x.label}], [{body}])"
    return [x], "*"


def ref_count_nodes(x):
    if type(x) in (tuple, list) or (isinstance(x, tuple) and hasattr(x, "_fields")):
        return 1 + sum(ref_count_nodes(c) for c in x)
    if type(x) is dict:
        return 1 + sum(ref_count_nodes(c) for c in x.values())
    if type(x) is Box:
        return 1 + sum(ref_count_nodes(c) for c in x.items)
    return 1


def random_tree(r, depth=0):
    kind = r.choice(["leaf", "leaf", "none", "tuple", "list", "dict", "point", "pair", "box"]
                    if depth < 4 else ["leaf", "none"])
    sub = functools.partial(random_tree, r, depth + 1)
    if kind == "leaf":
        return r.choice([r.randint(-9, 9), r.random(), "s" + str(r.randint(0, 9)), True])
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(sub() for _ in range(r.randint(0, 3)))
    if kind == "list":
        return [sub() for _ in range(r.randint(0, 3))]
    if kind == "dict":
        keys = r.sample("abcdefgh", r.randint(0, 4))
        return {k: sub() for k in keys}
    if kind == "point":
        return Point(sub(), sub())
    if kind == "pair":
        return Pair(sub(), sub())
    return Box([sub() for _ in range(r.randint(0, 3))], r.choice([None, "lbl", 3]))


# ---- flatten / unflatten against the reference ----
def test_random_trees_match_reference_and_round_trip():
    r = rng()
    for _ in range(300):
        tree = random_tree(r)
        leaves, treedef = tu.tree_flatten(tree)
        ref_leaves, ref_str = ref_flatten(tree)
        assert leaves == ref_leaves and all(a is b for a, b in zip(leaves, ref_leaves))
        assert repr(treedef) == f"PyTreeDef({ref_str})"
        assert str(treedef) == repr(treedef)
        assert treedef.num_leaves == len(ref_leaves)
        assert treedef.num_nodes == ref_count_nodes(tree)
        assert tu.tree_leaves(tree) == ref_leaves
        assert tu.tree_structure(tree) == treedef
        # Fresh leaves land at the same positions.
        fresh = [Mark(i) for i in range(len(leaves))]
        rebuilt = tu.tree_unflatten(treedef, fresh)
        assert tu.tree_leaves(rebuilt) == fresh
        assert tu.tree_unflatten(treedef, leaves) == tree
        assert tu.tree_structure(tu.tree_unflatten(treedef, leaves)) == treedef
        # Structures are equal iff their printouts are (over these node types).
        other = random_tree(r)
        assert (tu.tree_structure(other) == treedef) == (ref_flatten(other)[1] == ref_str)


def test_repr_strings():
    s = lambda t: repr(tu.tree_structure(t))  # noqa: E731
    assert s((1, {"a": 2, "b": None})) == "PyTreeDef((*, {'a': *, 'b': None}))"
    assert s(1) == "PyTreeDef(*)"
    assert s(None) == "PyTreeDef(None)"
    assert s((1,)) == "PyTreeDef((*,))"
    assert s(()) == "PyTreeDef(())"
    assert s([]) == "PyTreeDef([])"
    assert s({}) == "PyTreeDef({})"
    assert s([1, [2, (3, 4)]]) == "PyTreeDef([*, [*, (*, *)]])"
    assert s({"b": 1, "a": [2]}) == "PyTreeDef({'a': [*], 'b': *})"
    assert s({2: 1, 1: 2}) == "PyTreeDef({1: *, 2: *})"
    assert s(Point(1, (2, 3))) == "PyTreeDef(CustomNode(namedtuple[Point], [*, (*, *)]))"
    assert s(Pair(1, None)) == "PyTreeDef(CustomNode(namedtuple[Pair], [*, None]))"
    assert s(Box([1, 2], None)) == "PyTreeDef(CustomNode(Box[None], [*, *]))"
    assert s(Box([1], "lbl")) == "PyTreeDef(CustomNode(Box[lbl], [*]))"  # str(aux), as JAX
    assert s(Box([], ("a", 1))) == "PyTreeDef(CustomNode(Box[('a', 1)], []))"
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert s(od) == "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    assert s(dd) == "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"


def test_leaf_types():
    arr = np.arange(6.0).reshape(2, 3)
    obj = Plain()
    leaves = tu.tree_leaves([arr, np.float32(2), 3, 4.5, "s", b"b", obj, 1j, True])
    assert leaves[0] is arr and leaves[6] is obj and len(leaves) == 9

    class MyDict(dict):
        pass

    class MyTuple(tuple):
        pass

    # Subclasses of the builtin containers are leaves, as in JAX (exact type lookup).
    assert tu.tree_leaves([MyDict(a=1), MyTuple((1, 2))]) == [MyDict(a=1), MyTuple((1, 2))]
    assert tu.all_leaves([arr, 1, obj])
    assert not tu.all_leaves([arr, None])  # None is a node, not a leaf
    assert not tu.all_leaves([(1,)])
    assert tu.all_leaves([(1,), 2], is_leaf=lambda x: isinstance(x, tuple))
    assert not tu.all_leaves([[1], 2], is_leaf=lambda x: isinstance(x, tuple))


def test_dicts_sort_keys_and_rebuild_sorted():
    d = {"c": 3, "a": 1, "b": 2}
    leaves, treedef = tu.tree_flatten(d)
    assert leaves == [1, 2, 3]
    out = treedef.unflatten([10, 20, 30])
    assert out == {"a": 10, "b": 20, "c": 30} and list(out) == ["a", "b", "c"]
    assert tu.tree_map(lambda x: x, d) == d and list(tu.tree_map(lambda x: x, d)) == ["a", "b",
                                                                                       "c"]
    # Insertion order does not matter for the structure.
    assert tu.tree_structure({"a": 1, "b": 2}) == tu.tree_structure({"b": 0, "a": 0})
    with pytest.raises(ValueError, match="Comparator raised exception while sorting"):
        tu.tree_flatten({1: 1, "a": 2})


def test_ordered_and_default_dicts():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2]  # insertion order kept
    back = treedef.unflatten([3, 4])
    assert type(back) is collections.OrderedDict and list(back.items()) == [("b", 3), ("a", 4)]
    assert treedef != tu.tree_structure(collections.OrderedDict([("a", 1), ("b", 2)]))
    assert treedef != tu.tree_structure({"b": 1, "a": 2})

    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tu.tree_flatten(dd)
    assert leaves == [2, 1]  # sorted
    back = treedef.unflatten([5, 6])
    assert type(back) is collections.defaultdict and back.default_factory is list
    assert dict(back) == {"a": 5, "b": 6}
    # default_factory is aux data.
    assert treedef != tu.tree_structure(collections.defaultdict(int, {"b": 1, "a": 2}))
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path([od, dd])]
    assert paths == ["[0]['b']", "[0]['a']", "[1]['a']", "[1]['b']"]


def test_none_is_a_node_without_children():
    leaves, treedef = tu.tree_flatten([None, 1, {"a": None}])
    assert leaves == [1]
    assert repr(treedef) == "PyTreeDef([None, *, {'a': None}])"
    assert treedef.unflatten([7]) == [None, 7, {"a": None}]
    assert tu.tree_map(lambda x: x + 1, [None, 1]) == [None, 2]
    assert tu.tree_map(lambda x: x, None) is None
    assert tu.tree_leaves(None) == []
    # is_leaf sees None too.
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.tree_map(lambda x: 0 if x is None else x, [None, 1],
                       is_leaf=lambda x: x is None) == [0, 1]
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda x, y: x, [None, 1], [2, 3])
    assert "Expected None, got 2" in str(e.value) and "at [0]" in str(e.value)


def test_is_leaf():
    tree = {"a": (1, 2), "b": [(3,), 4]}
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    leaves, treedef = tu.tree_flatten(tree, is_leaf=is_tuple)
    assert leaves == [(1, 2), (3,), 4]
    assert repr(treedef) == "PyTreeDef({'a': *, 'b': [*, *]})"
    assert tu.tree_map(lambda t: len(t) if is_tuple(t) else -t, tree,
                       is_leaf=is_tuple) == {"a": 2, "b": [1, -4]}
    assert tu.tree_leaves(tree, is_leaf=lambda x: x is tree) == [tree]  # root as a leaf
    assert tu.tree_structure(tree, is_leaf=is_tuple).num_leaves == 3
    assert tu.tree_all([1, (0, 1)], is_leaf=is_tuple)  # (0, 1) is one truthy leaf
    assert not tu.tree_all([1, (0, 1)])


def test_treedef_equality_and_hash():
    a = tu.tree_structure({"x": [1, 2], "y": (3, None)})
    b = tu.tree_structure({"y": ("p", None), "x": [np.zeros(2), Plain()]})
    assert a == b and hash(a) == hash(b) and not (a != b)
    assert {a: 1}[b] == 1
    differing = [
        {"x": [1, 2], "y": [3, None]},  # tuple vs list
        {"x": [1, 2], "y": (3, 4)},  # None vs leaf
        {"x": [1, 2], "z": (3, None)},  # key
        {"x": [1, 2, 3], "y": (3, None)},  # arity
        {"x": [1, [2]], "y": (3, None)},  # leaf vs node
    ]
    for t in differing:
        assert tu.tree_structure(t) != a
    assert a != "PyTreeDef" and a != None  # noqa: E711
    # Aux data participates; namedtuple types are part of the structure.
    assert tu.tree_structure(Box([1], "p")) != tu.tree_structure(Box([1], "q"))
    assert tu.tree_structure(Box([1], "p")) == tu.tree_structure(Box([2], "p"))
    assert hash(tu.tree_structure(Box([1], "p"))) == hash(tu.tree_structure(Box([9], "p")))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Pair(1, 2))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
    Point2 = collections.namedtuple("Point", "x y")
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Point2(1, 2))
    # Unhashable aux data still hashes (consistently with equality) and compares.
    s1, s2 = tu.tree_structure(Box([1], ["u"])), tu.tree_structure(Box([2], ["u"]))
    assert s1 == s2 and hash(s1) == hash(s2)
    assert s1 != tu.tree_structure(Box([1], ["v"]))


def test_treedef_methods():
    tree = [1, (2, {"a": 3}), None]
    treedef = tu.tree_structure(tree)
    kids = treedef.children()
    assert kids == [tu.tree_structure(c) for c in tree]
    assert tu.treedef_children(treedef) == kids
    assert [k.num_leaves for k in kids] == [1, 2, 0]
    assert tu.treedef_children(tu.tree_structure(5)) == []
    assert tu.treedef_tuple(kids) == tu.tree_structure(tuple(tree))
    assert tu.treedef_tuple(kids).num_leaves == 3
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))  # one node, as JAX
    assert not tu.treedef_is_leaf(treedef)
    assert tu.treedef_is_strict_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_strict_leaf(tu.tree_structure(None))
    inner = tu.tree_structure((0, 0))
    composed = tu.tree_structure([0, 0, 0]).compose(inner)
    assert composed == tu.tree_structure([(0, 0)] * 3) and composed.num_leaves == 6
    assert tu.tree_structure(None).compose(inner) == tu.tree_structure(None)
    # node_data and its inverse.
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert tu.tree_structure((1,)).node_data() == (tuple, None)
    assert tu.tree_structure(None).node_data() == (type(None), None)
    assert tu.tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert tu.tree_structure(Box([1], "z")).node_data() == (Box, "z")
    for t in [tree, {"b": 1, "a": [2]}, Point(1, (2,)), Box([1, 2], "z"), None, 4, ()]:
        d = tu.tree_structure(t)
        rebuilt = tu.PyTreeDef.make_from_node_data_and_children(None, d.node_data(),
                                                                d.children())
        assert rebuilt == d and rebuilt.num_leaves == d.num_leaves
    # walk: count leaves below every node.
    total = treedef.walk(lambda kids, data: sum(kids), lambda leaf: 1, [0] * 3)
    assert total == 3
    assert treedef.walk(lambda kids, data: (kids, data), None, "xyz")[0][0] == "x"
    # from_iterable_tree / build_tree take one iterable per node.
    d = tu.tree_structure([(1, 2), {"a": 3, "b": 4}])
    assert tu.build_tree(d, [[10, 11], [12, 13]]) == [(10, 11), {"a": 12, "b": 13}]
    with pytest.raises(ValueError, match="Arity mismatch"):
        tu.build_tree(d, [[10], [12, 13]])


def test_treedef_pickles(importable_tessera):
    for t in [[1, (2, {"a": 3}), None], Point(1, [2]), Box([1, Pair(2, 3)], ("k", 1)),
              collections.OrderedDict(z=1, a=2), 7]:
        d = tu.tree_structure(t)
        back = pickle.loads(pickle.dumps(d))
        assert back == d and hash(back) == hash(d) and repr(back) == repr(d)
        assert back.unflatten(tu.tree_leaves(t)) == t


def test_unflatten_leaf_count_errors():
    treedef = tu.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError) as e:
        treedef.unflatten([1, 2])
    assert "Too few leaves for PyTreeDef; expected 3, got 2" in str(e.value)
    assert "PyTreeDef((*, [*, *]))" in str(e.value)
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3, got 4"):
        treedef.unflatten([1, 2, 3, 4])
    assert treedef.unflatten(iter([1, 2, 3])) == (1, [2, 3])  # any iterable
    assert tu.tree_structure(5).unflatten(["x"]) == "x"


# ---- tree_map and structure errors ----
def test_tree_map_multiple_trees():
    r = rng()
    for _ in range(100):
        tree = random_tree(r)
        leaves, treedef = tu.tree_flatten(tree)
        other = treedef.unflatten([r.random() for _ in leaves])
        third = treedef.unflatten([r.random() for _ in leaves])
        out = tu.tree_map(Mark, tree, other, third)
        expect = [(x, y, z) for x, y, z in zip(leaves, tu.tree_leaves(other),
                                               tu.tree_leaves(third))]
        assert [m.vals for m in tu.tree_leaves(out)] == expect
        assert tu.tree_structure(out) == treedef
    # `tree` is a prefix: its leaves may sit over whole subtrees of the others.
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [[3], {"k": 4}]) == [(1, [3]),
                                                                        (2, {"k": 4})]
    calls = []
    tu.tree_map(lambda x, y: calls.append((x, y)), {"b": 1, "a": 2}, {"a": "A", "b": "B"})
    assert calls == [(2, "A"), (1, "B")]  # leaf order, sorted keys


MISMATCHES = [
    # first tree, other tree, substrings of the message
    ({"a": [1, 2], "b": 3}, {"a": [1, 2, 3], "b": 3},
     ["[tree_map] List arity mismatch: 3 != 2 at ['a'] in tree argument 2",
      "expected PyTreeDef({'a': [*, *], 'b': *}) got PyTreeDef({'a': [*, *, *], 'b': *})"]),
    ([1, (2, 3)], [1, [2, 3]],
     ["Expected tuple, got [2, 3] at [1]", "expected PyTreeDef([*, (*, *)])",
      "got PyTreeDef([*, [*, *]])"]),
    ((1, 2), (1, 2, 3), ["Tuple arity mismatch: 3 != 2 in tree argument 2;"]),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2},
     ["Dict key mismatch; expected keys: ['a', 'b'], got keys: ['a', 'c']"]),
    ([{"a": 1}], [collections.OrderedDict(a=1)], ["Expected dict, got OrderedDict", "at [0]"]),
    (Point(1, 2), Pair(1, 2), ["Named tuple type mismatch; expected type: Point, "
                               "got type: Pair"]),
    (Point(1, 2), (1, 2), ["Expected named tuple Point, got (1, 2)"]),
    ((Box([1], "p"),), (Box([1], "q"),),
     ["Custom node auxiliary data mismatch; expected Box[p], got Box[q] at [0]"]),
    (Box([1], "p"), Box([1, 2], "p"), ["Custom node arity mismatch: 2 != 1"]),
    ({"z": Box([1], "p")}, {"z": [1]}, ["Custom node type mismatch; expected type: Box, "
                                        "got [1] at ['z']"]),
    ([Point(1, (2, 3))], [Point(1, (2,))], ["Tuple arity mismatch: 1 != 2 at [0].y"]),
    ([Box([1, (2, 3)], None)], [Box([1, (2,)], None)],
     ["Tuple arity mismatch: 1 != 2 at [0][<flat index 1>]"]),
]


@pytest.mark.parametrize("first,other,parts", MISMATCHES)
def test_tree_map_mismatch_messages(first, other, parts):
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda *xs: xs[0], first, first, other)
    msg = str(e.value)
    for p in parts:
        p = p.replace("tree argument 2", "tree argument 3")
        assert p in msg, msg
    assert "in tree argument 3" in msg
    assert f"expected {tu.tree_structure(first)} got {tu.tree_structure(other)}" in msg


def test_flatten_up_to():
    treedef = tu.tree_structure([1, {"a": 2, "b": 3}])
    assert treedef.flatten_up_to([[9], {"a": (1, 2), "b": None}]) == [[9], (1, 2), None]
    with pytest.raises(ValueError) as e:
        treedef.flatten_up_to([1, {"a": 2}])
    msg = str(e.value)
    assert msg.startswith("[flatten_up_to] Dict key mismatch")
    assert "at [1]" in msg and "got PyTreeDef([*, {'a': *}])" in msg


def test_check_same_structure_and_tree_leaves_checked():
    expected = tu.tree_structure({"w": [1, 2], "b": Point(1, 2)})
    tu.check_same_structure(expected, tu.tree_structure({"w": [0, 0], "b": Point(0, 0)}), "x")
    cases = [
        ({"w": [1, 2, 3], "b": Point(1, 2)}, "List arity mismatch: 3 != 2 at ['w']"),
        ({"w": [1, 2], "b": Pair(1, 2)}, "Custom node type mismatch; expected type: Point, "
                                         "got type: Pair at ['b']"),
        ({"w": [1, 2], "b": Point(1, None)}, "Expected a leaf, got None at ['b'].y"),
        ({"w": (1, 2), "b": Point(1, 2)}, "Expected list, got (*, *) at ['w']"),
        ({"w": [1, 2]}, "Dict key mismatch; expected keys: ['b', 'w'], got keys: ['w']"),
    ]
    for tree, part in cases:
        got = tu.tree_structure(tree)
        with pytest.raises(ValueError) as e:
            tu.check_same_structure(expected, got, "grad", "in the output")
        assert str(e.value) == f"[grad] {part} in the output; expected {expected} got {got}"
        with pytest.raises(ValueError, match=r"^\[tree_leaves_checked\] "):
            tu.tree_leaves_checked(expected, tree)
    assert tu.tree_leaves_checked(expected, {"w": [5, 6], "b": Point(7, 8)}) == [7, 8, 5, 6]
    with pytest.raises(ValueError, match="Custom node auxiliary data mismatch; expected "
                                         "Box\\[p\\], got Box\\[q\\]"):
        tu.check_same_structure(tu.tree_structure(Box([1], "p")),
                                tu.tree_structure(Box([1], "q")), "op")


# ---- reductions, transpose, broadcast ----
def test_tree_reduce_and_all():
    r = rng()
    vals = [r.randint(-50, 50) for _ in range(7)]
    tree = {"a": vals[:3], "b": (vals[3], {"c": vals[4:]})}
    assert tu.tree_reduce(operator.add, tree) == sum(vals)
    assert tu.tree_reduce(lambda acc, x: acc + [x], tree, []) == vals
    assert tu.tree_reduce(operator.add, [None], 5) == 5
    with pytest.raises(TypeError):
        tu.tree_reduce(operator.add, [None, {}])
    assert tu.tree_reduce(operator.add, [(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple)) \
        == (1, 2, 3)
    assert tu.tree_reduce_associative(operator.add, tree) == sum(vals)
    # A balanced reduction: ((0 1) (2 3)) 4.
    assert tu.tree_reduce_associative(lambda a, b: f"({a} {b})", list("01234")) == \
        "(((0 1) (2 3)) 4)"
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(operator.add, [])
    assert tu.tree_all({"a": [1, True], "b": None})
    assert not tu.tree_all({"a": [1, 0]})
    assert tu.tree_all([])


def test_tree_transpose():
    r = rng()
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"a": 0, "b": (0, 0)})
    xs = [{"a": r.random(), "b": (r.random(), r.random())} for _ in range(3)]
    out = tu.tree_transpose(outer, inner, xs)
    assert out == {"a": [x["a"] for x in xs],
                   "b": ([x["b"][0] for x in xs], [x["b"][1] for x in xs])}
    # Transposing back recovers the input; inner structure may be inferred.
    assert tu.tree_transpose(inner, outer, out) == xs
    assert tu.tree_transpose(outer, None, xs) == out
    assert jtree.transpose(tu.tree_structure((0, 0)), tu.tree_structure([0]),
                           ([1], [2])) == [(1, 2)]
    with pytest.raises(TypeError, match=r"\[tree_transpose\] Mismatch"):
        tu.tree_transpose(outer, inner, xs[:2])
    with pytest.raises(TypeError, match="Mismatch"):  # right leaf count, wrong structure
        tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)),
                          [(1, 2), [3, 4]])


def test_broadcast_prefix():
    full = {"a": [1, 2, 3], "b": (4, {"c": 5})}
    assert tu.broadcast_prefix({"a": 0, "b": 1}, full) == [0, 0, 0, 1, 1]
    assert tu.tree_broadcast({"a": 0, "b": (1, 2)}, full) == {"a": [0, 0, 0],
                                                              "b": (1, {"c": 2})}
    assert jtree.broadcast(7, [1, (2, 3)]) == [7, (7, 7)]
    # None as a prefix leaf (vmap's in_axes=None) needs is_leaf.
    assert tu.broadcast_prefix([None, 0], [(1, 2), 3], is_leaf=lambda x: x is None) == \
        [None, None, 0]
    with pytest.raises(ValueError, match=r"\[broadcast_prefix\] List arity mismatch"):
        tu.broadcast_prefix([0, 1], [1, 2, 3])


def test_flatten_one_level():
    assert tu.flatten_one_level({"b": 1, "a": [2]}) == (([2], 1), ("a", "b"))
    assert tu.flatten_one_level([1, 2]) == ([1, 2], None)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(Point(1, 2)) == ([1, 2], Point)
    assert tu.flatten_one_level(Box([1], "q")) == ((1,), "q")
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(3)
    kids, aux = tu.flatten_one_level_with_keys({"b": 1, "a": 2})
    assert kids == [(tu.DictKey("a"), 2), (tu.DictKey("b"), 1)] and aux == ("a", "b")
    assert tu.flatten_one_level_with_keys(Point(1, 2))[0] == [(tu.GetAttrKey("x"), 1),
                                                              (tu.GetAttrKey("y"), 2)]


# ---- registration ----
def test_register_pytree_node():
    class Vec:
        def __init__(self, x, y, tag):
            self.x, self.y, self.tag = x, y, tag

    seen = []

    def unflatten(aux, children):
        seen.append(type(children))
        return Vec(*children, aux)

    tu.register_pytree_node(Vec, lambda v: ((v.x, v.y), v.tag), unflatten)
    v = Vec(1, [2, 3], "t")
    leaves, treedef = tu.tree_flatten(v)
    assert leaves == [1, 2, 3]
    assert repr(treedef) == "PyTreeDef(CustomNode(Vec[t], [*, [*, *]]))"
    w = tu.tree_map(lambda a: 10 * a, v)
    assert type(w) is Vec and (w.x, w.y, w.tag) == (10, [20, 30], "t") and seen == [tuple]
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(v)]
    assert paths == ["[<flat index 0>]", "[<flat index 1>][0]", "[<flat index 1>][1]"]
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_pytree_node(Vec, lambda v: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(tuple, lambda v: ((), None), lambda a, c: None)
    with pytest.raises(TypeError, match="expected a type"):
        tu.register_pytree_node("Vec", lambda v: ((), None), lambda a, c: None)

    class Bad:
        pass

    tu.register_pytree_node(Bad, lambda b: [1, 2, 3], lambda a, c: Bad())
    with pytest.raises(ValueError, match=r"should return a \(children, aux_data\) tuple"):
        tu.tree_flatten([Bad()])


def test_registered_namedtuple_overrides_namedtuple_handling():
    NT = collections.namedtuple("NT", "a b")
    tu.register_pytree_node(NT, lambda t: ((t.b,), t.a), lambda a, c: NT(a, c[0]))
    leaves, treedef = tu.tree_flatten(NT(1, 2))
    assert leaves == [2] and repr(treedef) == "PyTreeDef(CustomNode(NT[1], [*]))"


def test_register_pytree_with_keys():
    class Lin:
        def __init__(self, w, b, name):
            self.w, self.b, self.name = w, b, name

    def flatten_with_keys(m):
        return ((tu.GetAttrKey("w"), m.w), (tu.GetAttrKey("b"), m.b)), m.name

    tu.register_pytree_with_keys(Lin, flatten_with_keys, lambda name, c: Lin(*c, name))
    m = Lin([1, 2], 3, "lin")
    pl = tu.tree_leaves_with_path({"m": m})
    assert [(tu.keystr(p), x) for p, x in pl] == [("['m'].w[0]", 1), ("['m'].w[1]", 2),
                                                  ("['m'].b", 3)]
    leaves, treedef = tu.tree_flatten(m)  # derived flatten_func
    assert leaves == [1, 2, 3] and repr(treedef) == "PyTreeDef(CustomNode(Lin[lin], [[*, *], *]))"
    assert tu.tree_flatten_with_path(m)[1] == treedef
    with pytest.raises(ValueError, match=r"List arity mismatch: 1 != 2 at \['m'\]\.w in tree"):
        tu.tree_map(lambda x, y: x, {"m": m}, {"m": Lin([1], 3, "lin")})

    @tu.register_pytree_with_keys_class
    class Special:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("x"), self.x), (tu.GetAttrKey("y"), self.y)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    s = tu.tree_map(lambda a: -a, Special(1, 2))
    assert (s.x, s.y) == (-1, -2)
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(s)] == [".x", ".y"]

    class Dual:  # register_pytree_node with the optional keyed flatten
        def __init__(self, p, q):
            self.p, self.q = p, q

    tu.register_pytree_node(Dual, lambda d: ((d.p, d.q), None), lambda _, c: Dual(*c),
                            lambda d: (((tu.DictKey("p"), d.p), (tu.DictKey("q"), d.q)), None))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Dual(1, 2))] == ["['p']", "['q']"]


def test_register_dataclass():
    @functools.partial(tu.register_dataclass, data_fields=["x", "y"], meta_fields=["op"])
    @dataclasses.dataclass
    class S:
        x: object
        y: object
        op: str

    s = S(1, [2], "add")
    leaves, treedef = tu.tree_flatten(s)
    assert leaves == [1, 2] and repr(treedef) == "PyTreeDef(CustomNode(S[('add',)], [*, [*]]))"
    assert treedef.unflatten([3, 4]) == S(3, [4], "add")
    assert treedef != tu.tree_structure(S(1, [2], "sub"))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(s)] == [".x", ".y[0]"]

    @tu.register_dataclass
    @dataclasses.dataclass
    class T:
        a: object
        n: int = dataclasses.field(metadata=dict(static=True), default=0)

    assert tu.tree_leaves(T(5, 2)) == [5]
    assert repr(tu.tree_structure(T(5, 2))) == "PyTreeDef(CustomNode(T[(2,)], [*]))"

    @dataclasses.dataclass
    class U:
        a: object
        b: object

    with pytest.raises(ValueError, match="Missing fields: \\['b'\\]"):
        tu.register_dataclass(U, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="Unexpected fields: \\['c'\\]"):
        tu.register_dataclass(U, data_fields=["a", "b", "c"], meta_fields=[])
    tu.register_dataclass(U, data_fields=["a"], meta_fields=[], drop_fields=["b"])
    assert tu.tree_leaves(U([1, 2], 3)) == [1, 2]  # b is neither data nor aux


def test_register_static():
    @tu.register_static
    class Cfg(str):
        pass

    leaves, treedef = tu.tree_flatten([1, Cfg("relu")])
    assert leaves == [1] and repr(treedef) == "PyTreeDef([*, CustomNode(Cfg[relu], [])])"
    out = treedef.unflatten([2])
    assert out == [2, "relu"] and type(out[1]) is Cfg
    assert treedef != tu.tree_structure([1, Cfg("tanh")])


# ---- key paths ----
def test_key_paths_and_keystr():
    tree = {"a": [1, (2, Point(3, 4))], "b": Box([5], "z"), "c": None}
    path_leaves, treedef = tu.tree_flatten_with_path(tree)
    assert treedef == tu.tree_structure(tree)
    assert [x for _, x in path_leaves] == tu.tree_leaves(tree)
    assert [tu.keystr(p) for p, _ in path_leaves] == [
        "['a'][0]", "['a'][1][0]", "['a'][1][1].x", "['a'][1][1].y", "['b'][<flat index 0>]"]
    assert path_leaves[2][0] == (tu.DictKey("a"), tu.SequenceKey(1), tu.SequenceKey(1),
                                 tu.GetAttrKey("x"))
    assert tu.tree_leaves_with_path(tree) == path_leaves
    assert tu.generate_key_paths(tree) == path_leaves
    assert tu.keystr(path_leaves[2][0], simple=True, separator="/") == "a/1/1/x"
    assert tu.keystr((tu.FlattenedIndexKey(2), tu.DictKey(0))) == "[<flat index 2>][0]"
    assert tu.keystr(()) == ""
    assert tu.tree_leaves_with_path(7) == [((), 7)]
    # is_leaf, with and without the path.
    pl = tu.tree_leaves_with_path(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert [tu.keystr(p) for p, _ in pl] == ["['a'][0]", "['a'][1]", "['b'][<flat index 0>]"]
    pl = tu.tree_leaves_with_path(tree, is_leaf=lambda p, x: len(p) == 2, is_leaf_takes_path=True)
    assert [tu.keystr(p) for p, _ in pl] == ["['a'][0]", "['a'][1]", "['b'][<flat index 0>]"]


def test_key_classes(importable_tessera):
    assert str(tu.SequenceKey(0)) == "[0]"
    assert str(tu.DictKey("a")) == "['a']"
    assert str(tu.DictKey(1)) == "[1]"
    assert str(tu.GetAttrKey("w")) == ".w"
    assert str(tu.FlattenedIndexKey(0)) == "[<flat index 0>]"
    assert repr(tu.DictKey("a")) == "DictKey(key='a')"
    assert repr(tu.SequenceKey(3)) == "SequenceKey(idx=3)"
    assert tu.SequenceKey(1) == tu.SequenceKey(1) and tu.SequenceKey(1) != tu.SequenceKey(2)
    assert tu.SequenceKey(1) != tu.FlattenedIndexKey(1)
    assert hash(tu.DictKey("a")) == hash(tu.DictKey("a"))
    assert len({tu.GetAttrKey("w"), tu.GetAttrKey("w"), tu.DictKey("w")}) == 2
    with pytest.raises(AttributeError):
        tu.SequenceKey(0).idx = 1
    k = pickle.loads(pickle.dumps(tu.GetAttrKey("w")))
    assert k == tu.GetAttrKey("w")
    assert tu.DictKey.__match_args__ == ("key",)  # `case DictKey(k):` patterns
    assert tu.SequenceKey.__match_args__ == ("idx",)
    assert tu.GetAttrKey.__match_args__ == ("name",)


def test_tree_map_with_path():
    tree = {"w": [1, 2], "b": 3}
    out = tu.tree_map_with_path(lambda p, x, y: f"{tu.keystr(p)}={x + y}", tree,
                                {"w": [10, 20], "b": 30})
    assert out == {"w": ["['w'][0]=11", "['w'][1]=22"], "b": "['b']=33"}
    assert tu.tree_map_with_path(lambda p, x: len(p), [None, (1,)]) == [None, (2,)]
    with pytest.raises(ValueError, match=r"\[tree_map_with_path\] Dict key mismatch.*"
                                         r"in tree argument 2"):
        tu.tree_map_with_path(lambda p, x, y: x, tree, {"w": [1, 2]})


# ---- the jax.tree namespace ----
def test_tree_namespace_aliases():
    pairs = {"all": tu.tree_all, "flatten": tu.tree_flatten, "unflatten": tu.tree_unflatten,
             "leaves": tu.tree_leaves, "structure": tu.tree_structure, "map": tu.tree_map,
             "reduce": tu.tree_reduce, "transpose": tu.tree_transpose,
             "map_with_path": tu.tree_map_with_path,
             "flatten_with_path": tu.tree_flatten_with_path,
             "leaves_with_path": tu.tree_leaves_with_path, "broadcast": tu.tree_broadcast,
             "reduce_associative": tu.tree_reduce_associative}
    for name, fn in pairs.items():
        assert getattr(jtree, name) is fn, name
    assert sorted(jtree.__all__) == sorted(pairs)
    tree = {"a": [1, 2], "b": (3,)}
    leaves, treedef = jtree.flatten(tree)
    assert jtree.unflatten(treedef, [x * 2 for x in leaves]) == jtree.map(lambda x: 2 * x, tree)
    assert jtree.reduce(operator.add, tree, 0) == 6 and jtree.all(tree)
