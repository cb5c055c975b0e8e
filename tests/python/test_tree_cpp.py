"""Properties of the C++ pytree implementation behind tessera.tree_util that the API tests in
test_tree_util.py do not reach: recursion limits, reference ownership, the key cache that
unflatten reuses, dict keys of every sortable type, re-entrant flatten functions, and random
trees against an independent walk written here."""

import collections
import gc
import os
import random
import sys
import weakref

import pytest

import tessera as jax
import tessera.numpy as jnp

tu = jax.tree_util

SEED = int.from_bytes(os.urandom(4), "little")


def rng():
    print(f"seed {SEED}")
    return random.Random(SEED)


def ref_leaves(x):
    """Leaves by an isinstance walk (sorted dict keys, None a node)."""
    if x is None:
        return []
    if type(x) in (tuple, list):
        return [leaf for c in x for leaf in ref_leaves(c)]
    if type(x) is dict:
        return [leaf for k in sorted(x) for leaf in ref_leaves(x[k])]
    if type(x) is collections.OrderedDict:
        return [leaf for c in x.values() for leaf in ref_leaves(c)]
    return [x]


def random_tree(r, depth=0):
    kind = r.choice(["leaf", "leaf", "none", "tuple", "list", "sdict", "idict", "odict"]
                    if depth < 5 else ["leaf"])
    sub = lambda: random_tree(r, depth + 1)  # noqa: E731
    if kind == "leaf":
        return r.choice([r.randint(-5, 5), r.random(), "s", jnp.asarray([r.random()])])
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(sub() for _ in range(r.randint(0, 4)))
    if kind == "list":
        return [sub() for _ in range(r.randint(0, 4))]
    if kind == "sdict":  # str keys, non-ASCII included (UTF-8 order is code point order)
        keys = r.sample(["a", "b", "é", "z", "ß", "ab", "\u4e2d", "A", ""], r.randint(0, 5))
        return {k: sub() for k in keys}
    if kind == "idict":
        return {k: sub() for k in r.sample(range(-3, 10), r.randint(0, 4))}
    return collections.OrderedDict((k, sub()) for k in r.sample("pqrs", r.randint(0, 3)))


def test_random_trees_round_trip_and_match_reference():
    r = rng()
    for _ in range(300):
        t = random_tree(r)
        leaves, d = tu.tree_flatten(t)
        ref = ref_leaves(t)
        assert len(leaves) == len(ref) and all(a is b for a, b in zip(leaves, ref))
        only = tu.tree_leaves(t)
        assert len(only) == len(ref) and all(a is b for a, b in zip(only, ref))
        back = d.unflatten(leaves)
        assert tu.tree_structure(back) == d
        assert hash(tu.tree_structure(back)) == hash(d)
        # New leaves land where the old ones were (keys reused from the flatten's cache).
        marks = [object() for _ in leaves]
        again = tu.tree_leaves(d.unflatten(marks))
        assert all(a is b for a, b in zip(again, marks))


def test_dict_keys_of_other_types_sort_and_print():
    assert str(tu.tree_structure({3: 1, -1: 2, 2.5: 3})) == "PyTreeDef({-1: *, 2.5: *, 3: *})"
    assert tu.tree_leaves({(2, "b"): 1, (1, "z"): 2}) == [2, 1]
    assert str(tu.tree_structure({"b": 1, "a": 2})) == "PyTreeDef({'a': *, 'b': *})"
    # Non-ASCII and quotes print with Python's repr.
    assert str(tu.tree_structure({"it's": 1})) == 'PyTreeDef({"it\'s": *})'
    assert str(tu.tree_structure({"é": 1})) == "PyTreeDef({'é': *})"
    # str keys and other keys make different structures.
    assert tu.tree_structure({1: 0}) != tu.tree_structure({"1": 0})
    lv, d = tu.tree_flatten({2: "x", 1: "y"})
    assert d.unflatten(lv) == {1: "y", 2: "x"} and d.node_data() == (dict, [1, 2])
    with pytest.raises(ValueError, match="Comparator raised exception") as e:
        tu.tree_flatten({1: 0, "a": 0})
    assert isinstance(e.value.__cause__, TypeError)


def test_deep_nesting_raises_recursion_error_not_a_crash():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        tu.tree_flatten(deep)
    with pytest.raises(RecursionError):
        tu.tree_leaves(deep)
    d = {}
    for _ in range(100_000):
        d = {"a": d}
    with pytest.raises(RecursionError):
        tu.tree_flatten_with_path(d)
    ok = []
    for _ in range(200):
        ok = [ok]
    lv, td = tu.tree_flatten(ok)
    assert lv == [] and td.num_nodes == 201 and td.unflatten([]) == ok


class Aux:
    """Aux data whose lifetime is observed through a weak reference."""

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, Aux) and other.v == self.v

    def __hash__(self):
        return hash(self.v)

    def __repr__(self):
        return f"Aux({self.v})"


class Node:
    def __init__(self, children, aux):
        self.children, self.aux = list(children), aux


tu.register_pytree_node(Node, lambda n: (n.children, n.aux), lambda a, c: Node(c, a))


def test_aux_data_is_owned_and_released():
    aux = Aux(7)
    ref = weakref.ref(aux)
    d = tu.tree_structure(Node([1, 2], aux))
    del aux
    gc.collect()
    assert ref() is not None  # the structure holds it
    assert str(d) == "PyTreeDef(CustomNode(Node[Aux(7)], [*, *]))"
    copies = [d.children(), d.compose(tu.tree_structure((0, 0))), tu.treedef_tuple([d, d])]
    del d
    gc.collect()
    assert ref() is not None  # still held by the derived structures
    del copies
    gc.collect()
    assert ref() is None


def test_leaves_and_keys_are_not_leaked():
    x = jnp.asarray([1.0, 2.0])
    key = "k" + str(SEED)  # a fresh str object
    base_x, base_k = sys.getrefcount(x), sys.getrefcount(key)
    for _ in range(100):
        lv, d = tu.tree_flatten({key: [x, (x, None)]})
        d.unflatten(lv)
        tu.tree_leaves({key: x})
        tu.tree_flatten_with_path({key: x})
    del lv, d
    gc.collect()
    assert sys.getrefcount(x) == base_x and sys.getrefcount(key) == base_k


def test_equal_aux_hashes_and_unhashable_aux():
    a = tu.tree_structure(Node([1], Aux(1)))
    b = tu.tree_structure(Node([2], Aux(1)))
    c = tu.tree_structure(Node([2], Aux(2)))
    assert a == b and hash(a) == hash(b) and a != c
    u1 = tu.tree_structure(Node([1], [1, 2]))  # a list: unhashable, compared by ==
    u2 = tu.tree_structure(Node([1], [1, 2]))
    assert u1 == u2 and hash(u1) == hash(u2)
    assert {a: 1}[b] == 1


class Reentrant:
    """A node whose flatten function flattens another tree (re-entrant use of the C++
    flattener, including its scratch stack for dict items)."""

    def __init__(self, d):
        self.d = d


tu.register_pytree_node(
    Reentrant,
    lambda r: (tu.tree_leaves({"z": r.d, "a": [r.d]}), len(tu.tree_leaves(r.d))),
    lambda aux, c: Reentrant(c[0]))


def test_reentrant_flatten_functions():
    t = {"y": Reentrant({"q": 1, "p": 2}), "x": {"b": 3, "a": 4}}
    assert tu.tree_leaves(t) == [4, 3, 2, 1, 2, 1]


def test_mutating_flatten_function_is_safe():
    victim = {"a": 1, "b": 2, "c": 3}

    class Mutator:
        pass

    tu.register_pytree_node(
        Mutator, lambda m: (victim.clear() or (), None), lambda a, c: Mutator())
    leaves = tu.tree_leaves({"a": Mutator(), "b": victim, "c": [victim]})
    assert leaves == [1, 2, 3] or leaves == []  # values seen before the clear; no crash
    assert victim == {}


def test_flatten_errors_name_the_class():
    class Bad:
        pass

    tu.register_pytree_node(Bad, lambda b: 5, lambda a, c: Bad())
    with pytest.raises(ValueError, match=r"flatten function of Bad should return a "
                                         r"\(children, aux_data\) tuple, got 5"):
        tu.tree_flatten([Bad()])

    class NotIterable:
        pass

    tu.register_pytree_node(NotIterable, lambda b: (5, None), lambda a, c: NotIterable())
    with pytest.raises(TypeError, match="must be iterable, got 5"):
        tu.tree_flatten(NotIterable())
    with pytest.raises(TypeError, match="expected a type to register"):
        tu.register_pytree_node(3, None, None)
