"""jnp.mgrid, jnp.ogrid, jnp.r_, jnp.c_ (JAX's index-expression builders), and the NumPy objects
JAX re-exports unchanged: s_, index_exp and the print options (Array's repr prints through
NumPy, so NumPy's options apply)."""
import numpy as _np

s_ = _np.s_
index_exp = _np.index_exp
printoptions = _np.printoptions
get_printoptions = _np.get_printoptions
set_printoptions = _np.set_printoptions


def _jnp():
    import tessera.numpy as jnp
    return jnp


def _range(sl):
    """A slice as jnp.arange, or jnp.linspace when its step is imaginary (the point count,
    end included), as np.mgrid reads it."""
    jnp = _jnp()
    start = 0 if sl.start is None else sl.start
    stop = sl.stop
    step = 1 if sl.step is None else sl.step
    if stop is None:
        raise ValueError(f"index-expression slice {sl} needs a stop")
    if isinstance(step, complex):
        n = int(abs(step))
        return jnp.linspace(start, stop, n, endpoint=True)
    return jnp.arange(start, stop, step)


class _Grid:
    def __init__(self, sparse, name):
        self.sparse = sparse
        self.name = name

    def __getitem__(self, key):
        jnp = _jnp()
        if isinstance(key, slice):
            return _range(key)
        if not isinstance(key, tuple) or not all(isinstance(k, slice) for k in key):
            raise IndexError(f"jnp.{self.name}[...] takes slices, got {key!r}")
        axes = [_range(k) for k in key]
        dtype = jnp.result_type(*axes) if axes else jnp.int32
        axes = [a.astype(dtype) for a in axes]
        grids = jnp.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else jnp.stack(grids, 0)

    def __repr__(self):
        return f"jnp.{self.name}"


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")


class _Concat:
    """np.r_ / np.c_: pieces (arrays, scalars, slices as ranges) concatenated along an axis; a
    leading string 'axis[,ndmin[,trans1d]]' sets how (NumPy's rules: each piece is raised to
    ndmin dims with its own dims placed at trans1d)."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        jnp = _jnp()
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        pieces = list(key)
        if pieces and isinstance(pieces[0], str):
            spec = pieces.pop(0)
            if spec in ("r", "c"):
                raise NotImplementedError(f"jnp.{self.name}: the matrix directives 'r' and 'c' "
                                          "are not supported (JAX has no matrix type)")
            try:
                vals = [int(v) for v in spec.split(",")]
            except ValueError:
                raise ValueError(f"jnp.{self.name}: could not understand the directive "
                                 f"{spec!r}; expected 'axis[,ndmin[,trans1d]]'") from None
            if len(vals) > 3:
                raise ValueError(f"jnp.{self.name}: the directive {spec!r} has more than 3 "
                                 "integers")
            axis = vals[0]
            if len(vals) > 1:
                ndmin = vals[1]
            if len(vals) > 2:
                trans1d = vals[2]
        arrays = []
        for p in pieces:
            if isinstance(p, str):
                raise ValueError(f"jnp.{self.name}: a string directive must come first, got "
                                 f"{p!r} later")
            a = _range(p) if isinstance(p, slice) else jnp.asarray(p)
            if a.ndim < ndmin:
                # NumPy's rule: raised to ndmin dims by leading ones, then its own dims moved
                # to start at trans1d
                k2 = ndmin - a.ndim
                k1 = trans1d if trans1d >= 0 else trans1d + k2 + 1
                a = jnp.reshape(a, (1,) * k2 + a.shape)
                d = list(range(ndmin))
                a = jnp.transpose(a, d[:k1] + d[k2:] + d[k1:k2])
            arrays.append(a)
        if not arrays:
            return jnp.zeros((0,))
        return jnp.concatenate(arrays, axis=axis)

    def __repr__(self):
        return f"jnp.{self.name}"


r_ = _Concat(0, 1, -1, "r_")
c_ = _Concat(-1, 2, 0, "c_")
