"""jax.pmap on Tessera's CPU devices: fun mapped over the leading axis of its arguments with the
axis named (collectives such as lax.psum(x, axis_name) reduce over it), compiled with jit. The
mapped size must not exceed the local device count (JAX's rule; TESSERA_NUM_CPU_DEVICES sets
the number of CPU devices, default 1): the members run as one vmapped program today, so the
results are JAX's, and the outputs are ordinary Arrays stacked along out_axes."""
import functools
import itertools

from tessera import tree_util
from tessera._src.api import vmap
from tessera._src.devices import local_device_count
from tessera._src.jit import jit

_fresh = itertools.count()


def _argnums(argnums):
    if argnums is None:
        return ()
    if isinstance(argnums, int):
        return (argnums,)
    return tuple(int(a) for a in argnums)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    static = _argnums(static_broadcasted_argnums)
    name = axis_name if axis_name is not None else f"_pmap_axis_{next(_fresh)}"
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    cache = {}

    @functools.wraps(fun)
    def pmap_f(*args, **kwargs):
        norm_static = tuple(s % len(args) if -len(args) <= s < len(args) else s for s in static)
        for s in norm_static:
            if not 0 <= s < len(args):
                raise ValueError(f"pmapped function has static_broadcasted_argnums={static} but "
                                 f"was called with only {len(args)} positional arguments")
        dyn_idx = [i for i in range(len(args)) if i not in norm_static]
        dyn = [args[i] for i in dyn_idx]
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise ValueError(f"pmap in_axes must be an int, None, or a tuple of entries "
                                 f"corresponding to the positional arguments passed to the "
                                 f"function, but got len(in_axes)={len(in_axes)}, "
                                 f"len(args)={len(args)}")
            dyn_axes = tuple(in_axes[i] for i in dyn_idx)
        else:
            dyn_axes = in_axes
        # The mapped size, for JAX's device-count check.
        size = axis_size
        leaves = tree_util.tree_leaves((tuple(dyn), kwargs))
        axes_t = dyn_axes if isinstance(dyn_axes, tuple) else (dyn_axes,) * len(dyn)
        for a, ax in zip(dyn, axes_t):
            if ax is None:
                continue
            for leaf in tree_util.tree_leaves(a):
                shape = getattr(leaf, "shape", ())
                if isinstance(ax, int) and len(shape) > 0:
                    size = shape[ax]
                    break
            if size is not None:
                break
        if size is None and kwargs and leaves:
            shape = getattr(leaves[-1], "shape", ())
            size = shape[0] if shape else None
        if size is None:
            raise ValueError("pmap requires at least one argument with a mapped axis "
                             "(in_axes not None) or axis_size")
        n = local_device_count()
        if size > n:
            raise ValueError(f"compiling computation that requires {size} logical devices, but "
                             f"only {n} XLA devices are available (num_replicas={size}); set "
                             "TESSERA_NUM_CPU_DEVICES to have more CPU devices")
        static_vals = tuple(args[i] for i in norm_static)
        try:
            key = (static_vals, tuple(sorted(kwargs)), tuple(dyn_idx), dyn_axes)
            hash(key)
        except TypeError:
            raise ValueError("Non-hashable static arguments are not supported: "
                             f"static_broadcasted_argnums {static} got {static_vals!r}") from None
        f = cache.get(key)
        if f is None:
            def body(*dyn_args, **kw):
                full = list(args)
                for i, v in zip(dyn_idx, dyn_args):
                    full[i] = v
                for i, v in zip(norm_static, static_vals):
                    full[i] = v
                return fun(*full, **kw)

            f = jit(vmap(body, in_axes=dyn_axes, out_axes=out_axes, axis_name=name,
                         axis_size=size))
            cache[key] = f
        return f(*dyn, **kwargs)

    return pmap_f
