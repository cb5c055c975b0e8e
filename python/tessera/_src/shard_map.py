"""jax.shard_map (and jax.experimental.shard_map.shard_map): f runs once per shard of a mesh —
each call sees its block of every input (the dims in_specs names split over those mesh axes)
and the mesh axes bound as named axes, so lax.psum / all_gather / ppermute / axis_index over
them are the collectives between shards; out_specs says how the per-shard results are put back
together (concatenated along the dims it names, replicated over the mesh axes it leaves out).

Tessera runs the shards of one process as one program: f is vmapped over each manual mesh axis
in mesh order, with that axis's name (the named-axis collectives are vmap's), the input blocks
laid out as the mapped axes by reshapes and transposes, and the outputs reassembled the same
way. The values are JAX's; nothing is stored split. An output whose spec leaves out a mesh axis
must be replicated over it (check_vma / check_rep, as JAX infers it: a value that does not depend
on the axis, or the result of a psum over it) — otherwise shard_map raises JAX's error; with the
check off, the shard at index 0 of that axis is returned, as JAX returns one device's copy."""
import functools
import math

import numpy as np

from tessera import tree_util
from tessera._src.mesh import Mesh, PartitionSpec, check_spec, get_abstract_mesh


def _is_spec(x):
    return x is None or isinstance(x, PartitionSpec)


def _specs_per_leaf(specs, tree, what, fname):
    """One PartitionSpec per leaf of `tree` from `specs`, a tree prefix of it."""
    if _is_spec(specs):
        return [specs] * len(tree_util.tree_leaves(tree))
    if isinstance(specs, list):
        specs = tuple(specs)
    ptree = tree_util.tree_structure(specs, is_leaf=_is_spec)
    try:
        subtrees = ptree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(f"shard_map applied to the function '{fname}' was given {what} "
                         f"{specs!r}, which is not a tree prefix of the corresponding value "
                         f"(structure {tree_util.tree_structure(tree)})") from e
    leaves = tree_util.tree_leaves(specs, is_leaf=_is_spec)
    out = []
    for s, sub in zip(leaves, subtrees):
        out += [s] * len(tree_util.tree_leaves(sub))
    return out


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def shard_map(f=None, mesh=None, in_specs=None, out_specs=None, check_rep=True,
              auto=frozenset(), *, check_vma=None, axis_names=frozenset()):
    """jax.shard_map(f, *, out_specs, in_specs, mesh=None, axis_names=..., check_vma=True) and
    jax.experimental.shard_map.shard_map(f, mesh, in_specs, out_specs, check_rep=True,
    auto=frozenset())."""
    if f is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                 check_rep=check_rep, auto=auto, check_vma=check_vma,
                                 axis_names=axis_names)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")
    if out_specs is None:
        raise TypeError("shard_map requires out_specs (a PartitionSpec or a pytree prefix of "
                        "the outputs of PartitionSpecs)")
    check = check_rep if check_vma is None else check_vma
    fname = _name(f)

    @functools.wraps(f)
    def wrapped(*args):
        from tessera._src.api import vmap
        import tessera.numpy as jnp
        m = mesh if mesh is not None else get_abstract_mesh()
        if m is None:
            raise ValueError(f"shard_map applied to the function '{fname}' was given no mesh "
                             "and there is no current mesh: pass mesh=... or call it inside "
                             "`with mesh:` / jax.sharding.use_mesh(mesh)")
        if not isinstance(m, Mesh):
            raise TypeError(f"shard_map requires a Mesh, got {m!r}")
        manual_set = set(axis_names) if axis_names else set(m.axis_names) - set(auto)
        manual = [n for n in m.axis_names if n in manual_set]
        sizes = m.shape

        specs = in_specs if in_specs is not None else PartitionSpec()
        leaves, tree = tree_util.tree_flatten(tuple(args))
        leaf_specs = _specs_per_leaf(specs, tuple(args), "in_specs", fname)
        blocked, in_names = [], []
        for i, (x, s) in enumerate(zip(leaves, leaf_specs)):
            x = jnp.asarray(x)
            s = PartitionSpec() if s is None else s
            norm = check_spec(m, s, f"shard_map in_specs of '{fname}'")
            if len(norm) > x.ndim:
                raise ValueError(
                    f"shard_map applied to the function '{fname}' was given an in_specs entry "
                    f"{s} of length {len(norm)} for argument leaf {i} of rank {x.ndim} (shape "
                    f"{tuple(x.shape)}); the spec must not be longer than the rank")
            for names in norm:
                for n in names:
                    if n not in manual_set:
                        raise ValueError(f"shard_map in_specs of '{fname}' name the mesh axis "
                                         f"{n!r}, which is not a manual axis of the shard_map")
            new_shape, pos, used = [], {}, []
            for d in range(x.ndim):
                names = norm[d] if d < len(norm) else ()
                k = math.prod(sizes[n] for n in names)
                if x.shape[d] % k:
                    raise ValueError(
                        f"shard_map applied to the function '{fname}' was given argument "
                        f"arrays with axis sizes that are not evenly divisible by the "
                        f"corresponding mesh axis sizes: argument leaf {i} of shape "
                        f"{tuple(x.shape)} has dim {d} of size {x.shape[d]}, split by {s} over "
                        f"mesh axes {names} of total size {k} ({m})")
                for n in names:
                    pos[n] = len(new_shape)
                    new_shape.append(sizes[n])
                    used.append(n)
                new_shape.append(x.shape[d] // k)
            x = jnp.reshape(x, new_shape)
            front = [pos[n] for n in manual if n in pos]
            rest = [a for a in range(len(new_shape)) if a not in front]
            if front:
                x = jnp.transpose(x, front + rest)
            blocked.append(x)
            in_names.append(set(used))

        store = {}

        def body(*xs):
            out = f(*tree_util.tree_unflatten(tree, list(xs)))
            store["tree"] = tree_util.tree_structure(out)
            return out

        def out_axes_for(name):
            def per(s):
                s = PartitionSpec() if s is None else s
                named = {n for names in s._normalized() for n in names}
                return 0 if (name in named or not check) else None
            if _is_spec(out_specs):
                return per(out_specs)
            return tree_util.tree_map(per, out_specs, is_leaf=_is_spec)

        fn = body
        for name in reversed(manual):
            axes = tuple(0 if name in used else None for used in in_names)
            fn = vmap(fn, in_axes=axes, out_axes=out_axes_for(name), axis_name=name,
                      axis_size=sizes[name])
        try:
            outs = fn(*blocked)
        except ValueError as e:
            if "out_axes None but is mapped" not in str(e):
                raise
            raise ValueError(
                f"shard_map applied to the function '{fname}' was given out_specs which "
                f"require replication which can't be statically inferred given the mesh: an "
                f"output's spec leaves out a mesh axis of {m}, so it must be replicated over "
                f"that axis, but it depends on the axis. Name the axis in out_specs, reduce "
                f"over it (lax.psum / pmean / all_gather), or pass check_vma=False "
                f"(check_rep=False). ({e})") from None

        out_leaves, out_tree = tree_util.tree_flatten(outs)
        out_leaf_specs = _specs_per_leaf(out_specs, outs, "out_specs", fname)
        result = []
        for y, s in zip(out_leaves, out_leaf_specs):
            s = PartitionSpec() if s is None else s
            norm = check_spec(m, s, f"shard_map out_specs of '{fname}'")
            named = [n for names in norm for n in names]
            # The leading block axes: one per manual axis this output was mapped over.
            mapped = [n for n in manual if (n in named or not check)]
            y = jnp.asarray(y)
            for j in reversed(range(len(mapped))):  # replicated-by-assumption axes: shard 0
                if mapped[j] not in named:
                    y = jnp.take(y, 0, axis=j)
            front = [n for n in mapped if n in named]
            block = list(y.shape[len(front):])
            if len(norm) > len(block):
                raise ValueError(
                    f"shard_map applied to the function '{fname}' was given an out_specs entry "
                    f"{s} of length {len(norm)} for an output of rank {len(block)} (per-shard "
                    f"shape {tuple(block)})")
            perm, merged = [], []
            for d in range(len(block)):
                names = norm[d] if d < len(norm) else ()
                perm += [front.index(n) for n in names]
                perm.append(len(front) + d)
                merged.append(math.prod(sizes[n] for n in names) * block[d])
            if front:
                y = jnp.transpose(y, perm)
            result.append(jnp.reshape(y, merged))
        return tree_util.tree_unflatten(out_tree, result)

    return wrapped


__all__ = ["shard_map"]
