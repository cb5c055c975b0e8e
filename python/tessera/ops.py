"""jax.ops: segment reductions, each one scatter (lax.scatter_add/mul/max/min into the
reduction's identity), computed by the C++ tessera::ops functions (include/tessera/ops.h).
Segment ids outside [0, num_segments) are dropped (negative ones are not wrapped), as JAX's."""
from tessera import _tessera as _C


def _segment(name, fn):
    def f(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
          bucket_size=None, mode=None):
        # bucket_size only changes how JAX splits the work, never the result.
        return fn(data, segment_ids, None if num_segments is None else int(num_segments),
                  bool(indices_are_sorted), bool(unique_indices), mode)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"jax.ops.{name}(data, segment_ids, num_segments=None, indices_are_sorted=False, "
                 "unique_indices=False, bucket_size=None, mode=None)")
    return f


segment_sum = _segment("segment_sum", _C.segment_sum)
segment_prod = _segment("segment_prod", _C.segment_prod)
segment_max = _segment("segment_max", _C.segment_max)
segment_min = _segment("segment_min", _C.segment_min)
