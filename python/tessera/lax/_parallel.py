"""jax.lax's collectives over named axes (C++: tessera/lax_parallel.h, rules in
src/prims/collectives.cpp), mapped over pytrees: psum, pmean, pmax, pmin, all_gather,
axis_index, axis_size, psum_scatter (reduce_scatter), ppermute, pshuffle. A named axis is a
vmap's today (vmap(f, axis_name='i')) and pmap's (which maps with vmap)."""
from tessera import _tessera

_C = _tessera.lax


def _names(axis_name):
    if isinstance(axis_name, (tuple, list)):
        names = [str(n) for n in axis_name]
    else:
        names = [str(axis_name)]
    return names


def _tree_map(f, x):
    from tessera import tree_util
    return tree_util.tree_map(lambda leaf: f(_tessera.asarray(leaf)), x)


def _no_groups(name, axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{name}: axis_index_groups is not implemented in Tessera.")


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of x over the members of the named axis (or axes), on every member."""
    _no_groups("psum", axis_index_groups)
    names = _names(axis_name)
    return _tree_map(lambda a: _C.psum(a, names), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    _no_groups("pmean", axis_index_groups)
    names = _names(axis_name)
    return _tree_map(lambda a: _C.pmean(a, names), x)


def pmax(x, axis_name, *, axis_index_groups=None):
    _no_groups("pmax", axis_index_groups)
    names = _names(axis_name)
    return _tree_map(lambda a: _C.pmax(a, names), x)


def pmin(x, axis_name, *, axis_index_groups=None):
    _no_groups("pmin", axis_index_groups)
    names = _names(axis_name)
    return _tree_map(lambda a: _C.pmin(a, names), x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """The members' values stacked at `axis` (tiled: concatenated along it)."""
    _no_groups("all_gather", axis_index_groups)
    return _tree_map(lambda a: _C.all_gather(a, str(axis_name), int(axis), bool(tiled)), x)


def axis_index(axis_name):
    """This member's index along the named axis (int32)."""
    return _C.axis_index(str(axis_name))


def axis_size(axis_name):
    return _C.axis_size(str(axis_name))


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    _no_groups("psum_scatter", axis_index_groups)
    return _tree_map(
        lambda a: _C.psum_scatter(a, str(axis_name), int(scatter_dimension), bool(tiled)), x)


reduce_scatter = psum_scatter


def ppermute(x, axis_name, perm):
    """Each member's value sent along the (source, destination) pairs of perm; members no pair
    sends to receive zeros."""
    pairs = [(int(s), int(d)) for s, d in perm]
    return _tree_map(lambda a: _C.ppermute(a, str(axis_name), pairs), x)


def pshuffle(x, axis_name, perm):
    """Member i receives the value of member perm[i]."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"pshuffle: perm must be a permutation of range({len(perm)}), got "
                         f"{perm}")
    return ppermute(x, axis_name, [(s, d) for d, s in enumerate(perm)])
