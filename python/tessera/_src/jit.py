"""jax.jit over the C++ jit (tessera/jit.h, python/src/py_jit.cpp).

jit(f) stages f once per abstract signature into a `jit` equation carrying a closed jaxpr and runs
it as a compiled executable; under grad/vmap/scan/another jit the primitive's rules transform the
call. The trace cache is the C++ JitCache: keyed on the dynamic arguments' pytree structure (the
C++ TreeDef) and avals (shape, dtype, weak type: Python scalars are weakly typed; a NumPy array
and a Tessera array of one aval share an entry) and jax_enable_x64. Static arguments select the
cache: one per distinct (hashable) tuple of static values, so a new static value is one new
trace. Caches belong to the function object, as JAX's do: wrapping the same function with jit
again does not retrace.
"""
import functools
import inspect
import weakref

from tessera import _tessera
from tessera import tree_util
from tessera._src.config import config

Array = _tessera.Array

__all__ = ["jit"]

# fun -> {(static key, options): JitCache}; weak on the function, as JAX's caches.
_caches = weakref.WeakKeyDictionary()


def _as_tuple(x, name):
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    try:
        return tuple(x)
    except TypeError:
        raise TypeError(f"jit: {name} must be an int, a str or a sequence of them, got {x!r}") \
            from None


def _hashable(v):
    try:
        hash(v)
    except TypeError as err:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying to "
            f"hash an object of type {type(v)}, {v!r}. The error was:\nTypeError: {err}") \
            from None
    return v


def _ensure_arrays(leaves):
    return [x if isinstance(x, Array) else _tessera.asarray(x) for x in leaves]


def _fun_name(fun):
    name = getattr(fun, "__name__", None)
    return name if isinstance(name, str) else type(fun).__name__


_FAST_KEY = ("positional",)


class _Jitted(_tessera.JitFunction):
    """What jit(f) returns: callable (JitFunction.__call__ is C++: calls with positional dynamic
    arguments never enter Python on a cache hit; others take _call_python), with .trace(...),
    .eval_shape(...) and the wrapped function's attributes."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                 keep_unused, inline, in_shardings=None, out_shardings=None):
        self._fun = fun
        self._name = _fun_name(fun)
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self._sig = None
        nums = [int(i) for i in _as_tuple(static_argnums, "static_argnums")]
        names = [str(n) for n in _as_tuple(static_argnames, "static_argnames")]
        # JAX infers the names of static_argnums and the positions of static_argnames.
        if self._sig is not None:
            params = [p for p in self._sig.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            for i in list(nums):
                if 0 <= i < len(params) and params[i].name not in names and \
                        params[i].kind != params[i].POSITIONAL_ONLY:
                    names.append(params[i].name)
            for n in list(names):
                for i, p in enumerate(params):
                    if p.name == n and i not in nums:
                        nums.append(i)
        self._static_argnums = tuple(sorted(set(nums)))
        self._static_argnames = tuple(names)
        self._donate_argnums = tuple(_as_tuple(donate_argnums, "donate_argnums"))
        self._donate_argnames = tuple(_as_tuple(donate_argnames, "donate_argnames"))
        self._options = (self._name, bool(keep_unused), bool(inline))
        self._in_shardings = _check_shardings(in_shardings, "in_shardings")
        self._out_shardings = _check_shardings(out_shardings, "out_shardings")
        fast = not (self._static_argnums or self._static_argnames or self._donate_argnums or
                    self._donate_argnames or in_shardings is not None or
                    out_shardings is not None)
        super().__init__(self._cache(_FAST_KEY), fast)
        functools.update_wrapper(self, fun)

    # ---- the cache of this function and these options
    def _cache(self, static_key):
        # Calls without static values share the positional fast path's cache (same entries).
        if static_key != _FAST_KEY and not static_key[1] and not static_key[2]:
            static_key = _FAST_KEY
        key = (static_key, self._options)
        try:
            table = _caches.setdefault(self._fun, {})
        except TypeError:  # not weak-referenceable: the cache lives with this wrapper
            table = self.__dict__.setdefault("_own_cache", {})
        c = table.get(key)
        if c is None:
            name, keep_unused, inline = self._options
            c = table[key] = _tessera.JitCache(name, keep_unused, inline)
        return c

    def _split(self, args, kwargs):
        """(dynamic args, dynamic kwargs, static key): the static values, hashed, select the
        cache."""
        nargs = len(args)
        static_vals = []
        for i in self._static_argnums:
            j = i if i >= 0 else nargs + i
            if 0 <= j < nargs:
                static_vals.append((j, _hashable(args[j])))
        static_idx = {j for j, _ in static_vals}
        static_kw = tuple(sorted((k, _hashable(v)) for k, v in kwargs.items()
                                 if k in self._static_argnames))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        dyn = tuple(a for j, a in enumerate(args) if j not in static_idx)
        return dyn, dyn_kwargs, (nargs, tuple(static_vals), static_kw)

    def _flat_fun(self, args, kwargs, static_key, in_tree):
        nargs, static_vals, static_kw = static_key
        statics = dict(static_vals)

        def flat(leaves):
            dyn, dkw = tree_util.tree_unflatten(in_tree, list(leaves))
            it = iter(dyn)
            n = len(dyn) + len(statics) if nargs is None else nargs
            full = [statics[j] if j in statics else next(it) for j in range(n)]
            kw = dict(dkw)
            kw.update(static_kw)
            try:
                out = self._fun(*full, **kw)
            except _CONCRETIZATION_ERRORS as err:
                raise _with_jit_context(err, self._fun, self._name) from None
            out_leaves, out_tree = tree_util.tree_flatten(out)
            return _ensure_arrays(out_leaves), out_tree
        return flat

    def _positional_tracer(self, in_tree):
        """The trace hook of the C++ fast path (in_tree: the structure of (args, {}))."""
        return self._flat_fun((), {}, (None, (), ()), in_tree)

    def _positional_debug_info(self, in_tree):
        """The debug-info hook of the C++ fast path: (func_src_info, leaf names)."""
        dyn, dkw = tree_util.tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
        return src_info(self._fun, self._name), leaf_names(self._sig, range(len(dyn)), dyn, dkw)

    def _debug_info(self, args, kwargs):
        """The debug-info hook of the Python path (called by the C++ cache on a miss)."""
        nargs = len(args)
        static = {i if i >= 0 else nargs + i for i in self._static_argnums}
        positions = [j for j in range(nargs) if j not in static]
        dyn = [args[j] for j in positions]
        dkw = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return lambda: (src_info(self._fun, self._name), leaf_names(self._sig, positions, dyn, dkw))


    def _donation_mask(self, args, kwargs):
        """One flag per dynamic leaf (the order of flattening (dynamic args, dynamic kwargs)):
        whether its argument is donated; None when nothing is."""
        nargs = len(args)
        donated = {i if i >= 0 else nargs + i for i in self._donate_argnums}
        static = {i if i >= 0 else nargs + i for i in self._static_argnums}
        mask = []
        for j, a in enumerate(args):
            if j not in static:
                mask += [j in donated] * len(tree_util.tree_leaves(a))
        for k in sorted(k for k in kwargs if k not in self._static_argnames):
            mask += [k in self._donate_argnames] * len(tree_util.tree_leaves(kwargs[k]))
        return mask if any(mask) else None

    def _invalid_argument(self, args, kwargs):
        """Raises JAX's TypeError for the first dynamic leaf that is not an array or a scalar,
        naming its path (the argument's name when the signature is known); returns when all are
        valid."""
        dyn, dkw, _ = self._split(args, kwargs)
        names = None
        if self._sig is not None:
            try:
                bound = self._sig.bind(*args, **kwargs)
                names = list(bound.arguments)
            except TypeError:
                names = None
        static = {i if i >= 0 else len(args) + i for i in self._static_argnums}
        dyn_names = [names[j] if names and j < len(names) else f"args[{j}]"
                     for j in range(len(args)) if j not in static]
        for name, value in list(zip(dyn_names, dyn)) + sorted(dkw.items()):
            for path, leaf in tree_util.tree_flatten_with_path(value)[0]:
                if isinstance(leaf, (Array, bool, int, float, complex)) or \
                        type(leaf).__module__ == "numpy":
                    try:
                        _tessera.asarray(leaf)
                        continue
                    except (TypeError, ValueError):
                        pass
                raise TypeError(
                    f"Error interpreting argument to {self._fun!r} as an abstract array. The "
                    f"problematic value is of type {type(leaf)} and was passed to the function "
                    f"at path {name}{tree_util.keystr(path)}.\nThis typically means that a "
                    "jit-wrapped function was called with a non-array argument, and this "
                    "argument was not marked as static using the static_argnums or "
                    "static_argnames parameters of jax.jit.")

    def _call_python(self, *args, **kwargs):
        if config.jax_disable_jit:
            return self._fun(*args, **kwargs)
        if self._in_shardings is not None:
            args = _place(args, self._in_shardings, "in_shardings")
        dyn, dkw, static_key = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn, dkw))
        cache = self._cache(static_key)
        donated = self._donation_mask(args, kwargs) if (
            self._donate_argnums or self._donate_argnames) else None
        try:
            outs, out_tree, refused = cache.call(
                in_tree, leaves, self._flat_fun(args, kwargs, static_key, in_tree), donated,
                self._debug_info(args, kwargs))
        except (TypeError, ValueError):
            # A leaf that is not an array gets JAX's error naming its path (checked only on the
            # error path, as the C++ fast path does); other errors pass unchanged.
            self._invalid_argument(args, kwargs)
            raise
        if refused:
            import warnings
            shown = ", ".join(refused)
            warnings.warn(f"Some donated buffers were not usable: {shown}.\nSee an explanation "
                          "at https://jax.readthedocs.io/en/latest/faq.html#buffer-donation. "
                          "(A NumPy or DLPack view of the buffer is alive.)", UserWarning,
                          stacklevel=2)
        out = tree_util.tree_unflatten(out_tree, outs)
        if self._out_shardings is not None:
            out = _place_tree(out, self._out_shardings, "out_shardings")
        return out

    def trace(self, *args, **kwargs):
        """jit(f).trace(*args): a Traced whose .jaxpr is f's closed jaxpr for this signature
        (arguments may be ShapeDtypeStructs)."""
        dyn, dkw, static_key = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn, dkw))
        from tessera._src.api import _abstractify
        abstract = _abstractify(leaves)
        cache = self._cache(static_key)
        closed, out_tree = cache.trace(in_tree, abstract,
                                       self._flat_fun(args, kwargs, static_key, in_tree),
                                       self._debug_info(args, kwargs))
        return Traced(self, closed, in_tree, _avals_of(abstract), out_tree, static_key,
                      self._name)

    def eval_shape(self, *args, **kwargs):
        """jit(f).eval_shape(*args): the output's ShapeDtypeStructs, computing nothing."""
        return self.trace(*args, **kwargs).out_info

    def lower(self, *args, **kwargs):
        """jit(f).lower(*args): the Lowered program for these arguments' signature (arrays,
        scalars or ShapeDtypeStructs); .compile() gives the Compiled executable."""
        return self.trace(*args, **kwargs).lower()

    @property
    def _trace_count(self):
        """The traces of every cache of this function and options (tests count retraces)."""
        table = _caches.get(self._fun, {}) if self._is_weakrefable() else \
            self.__dict__.get("_own_cache", {})
        return sum(c.trace_count for (k, o), c in table.items() if o == self._options)

    def _is_weakrefable(self):
        try:
            weakref.ref(self._fun)
            return True
        except TypeError:
            return False

    def __get__(self, obj, objtype=None):  # jit as a method decorator
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jitted function {self._name}>"


_CONCRETIZATION_ERRORS = (_tessera.ConcretizationTypeError, _tessera.TracerIntegerConversionError,
                          _tessera.TracerArrayConversionError)


def _arg_name(sig, j=None, key=None):
    """JAX's name of the positional argument j or the keyword argument key of a function with
    signature sig (None: unknown)."""
    params = list(sig.parameters.values()) if sig is not None else []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_pos = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    var_kw = next((p.name for p in params if p.kind == p.VAR_KEYWORD), None)
    if key is None:
        if j < len(positional):
            return positional[j].name
        if var_pos is not None:
            return f"{var_pos}[{j - len(positional)}]"
        return f"args[{j}]"
    if any(p.name == key and p.kind != p.POSITIONAL_ONLY for p in params):
        return key
    return f"{var_kw or 'kwargs'}[{key!r}]"


def leaf_names(sig, positions, dyn, dkw=None):
    """One name per flat leaf of (dyn, dkw), in flattening order (positional arguments, then
    keyword arguments sorted): the argument's name and the leaf's key path inside it ("x",
    "params['w']", "args[0]"). positions: the positional index of each value of dyn."""
    names = []
    for j, value in zip(positions, dyn):
        base = _arg_name(sig, j=j)
        names += [base + tree_util.keystr(p) for p, _ in
                  tree_util.tree_flatten_with_path(value)[0]]
    for k in sorted(dkw or {}):
        base = _arg_name(sig, key=k)
        names += [base + tree_util.keystr(p) for p, _ in
                  tree_util.tree_flatten_with_path(dkw[k])[0]]
    return names


def src_info(fun, name=None):
    """JAX's func_src_info: "f at file.py:12" (the name alone when the source is unknown)."""
    name = _fun_name(fun) if name is None else name
    try:
        code = inspect.unwrap(fun).__code__
        return f"{name} at {code.co_filename}:{code.co_firstlineno}"
    except AttributeError:
        return name


def _with_jit_context(err, fun, name):
    """err with JAX's line naming the function being traced, when the C++ message does not
    already have one (a value of a nested trace that knows no arguments): once, for the
    innermost jit."""
    if getattr(err, "_tessera_jit_context", False) or \
            "The error occurred while tracing the function" in str(err):
        return err
    new = type(err)(f"{err}\nThe error occurred while tracing the function "
                    f"{src_info(fun, name)} for jit.")
    new._tessera_jit_context = True
    return new.with_traceback(err.__traceback__)


def _check_shardings(sh, what):
    """in_shardings / out_shardings: None, or single-device shardings (a Device, a
    SingleDeviceSharding, or a pytree prefix of them); more needs the parallelism issues."""
    if sh is None:
        return None
    from tessera._src.devices import SingleDeviceSharding, _CPU
    for leaf in tree_util.tree_leaves(sh, is_leaf=lambda x: isinstance(x, SingleDeviceSharding)):
        if isinstance(leaf, SingleDeviceSharding) or leaf in _CPU:
            continue
        raise NotImplementedError(
            f"jit: {what} may only hold single-device shardings (SingleDeviceSharding or a "
            f"Device) in Tessera today, got {leaf!r}; meshes and named shardings come with the "
            "parallelism issues")
    return sh


def _place_tree(tree, sh, what):
    """device_put of a pytree by a sharding prefix: one sharding for the whole subtree, a
    tuple/list of them matching a tuple/list, None to leave a subtree where it is."""
    from tessera._src.devices import device_put
    if sh is None:
        return tree
    if isinstance(sh, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(tree) != len(sh):
            raise ValueError(f"jit: {what} is not a pytree prefix of the values: {len(sh)} "
                             f"shardings for {tree_util.tree_structure(tree)}")
        return type(tree)(_place_tree(t, s, what) for t, s in zip(tree, sh))
    return device_put(tree, sh)


def _place(args, sh, what):
    """The positional arguments placed by in_shardings (one for all, or one per argument)."""
    from tessera._src.devices import SingleDeviceSharding
    if isinstance(sh, SingleDeviceSharding) or not isinstance(sh, (tuple, list)):
        return tuple(_place_tree(a, sh, what) for a in args)
    if len(sh) != len(args):
        raise ValueError(f"jit: {what} has {len(sh)} entries for {len(args)} positional "
                         "arguments; give one per argument (or one for all)")
    return tuple(_place_tree(a, s, what) for a, s in zip(args, sh))


def _avals_of(leaves):
    out = []
    for x in leaves:
        a = x if isinstance(x, Array) else _tessera.asarray(x)
        out.append((tuple(a.shape), a._dtype_name, bool(a.weak_type)))
    return out


def _aval_str(a):
    shape, dtype, weak = a
    return f"ShapedArray({dtype}[{','.join(str(d) for d in shape)}]" + \
        (", weak_type=True" if weak else "") + ")"


class Traced:
    """jax.stages.Traced: the staged program of one signature (.jaxpr, .out_info, .lower())."""

    def __init__(self, jitted, jaxpr, in_tree, in_avals, out_tree, static_key, name):
        self._jitted = jitted
        self.jaxpr = jaxpr
        self.in_tree = in_tree
        self.in_avals = in_avals
        self.out_tree = out_tree
        self._static_key = static_key
        self.fun_name = name

    @property
    def out_info(self):
        from tessera._src.api import ShapeDtypeStruct
        shapes = [ShapeDtypeStruct(s, d, w) for (s, d, w) in self.jaxpr.out_avals]
        return tree_util.tree_unflatten(self.out_tree, shapes)

    def lower(self):
        return Lowered(self)

    def __repr__(self):
        return f"Traced({self.fun_name})"


class Lowered:
    """jax.stages.Lowered: the program before the compiler's passes; .as_text(), .compile()."""

    def __init__(self, traced):
        self._traced = traced

    def as_text(self):
        return str(self._traced.jaxpr)

    def compile(self):
        return Compiled(self._traced)

    @property
    def in_tree(self):
        return self._traced.in_tree

    @property
    def out_info(self):
        return self._traced.out_info


class Compiled:
    """jax.stages.Compiled: callable on arguments of the signature it was compiled for (others
    raise TypeError); .as_text() is the optimized program and the executable plan."""

    def __init__(self, traced):
        self._traced = traced
        self._text = _tessera.compiled_text(traced.jaxpr)

    def as_text(self):
        return self._text

    def cost_analysis(self):
        """XLA's estimate of the optimized program's cost: {"flops": ..., "bytes accessed": ...}
        (one operation per output element, a contraction 2 * out * contracted size)."""
        return _tessera.cost_analysis(self._traced.jaxpr)

    def __call__(self, *args, **kwargs):
        t = self._traced
        dyn, dkw, static_key = t._jitted._split(args, kwargs)
        if static_key != t._static_key:
            raise TypeError("Computation was compiled for different static arguments: "
                            f"{t._static_key[1:]} vs {static_key[1:]}")
        leaves, in_tree = tree_util.tree_flatten((dyn, dkw))
        if in_tree != t.in_tree:
            raise TypeError("Function compiled with input pytree does not match the input pytree "
                            f"it was called with: compiled with {t.in_tree}, called with "
                            f"{in_tree}")
        avals = _avals_of(leaves)
        if avals != t.in_avals:
            diffs = [f"argument {i}: compiled for {_aval_str(a)}, called with {_aval_str(b)}"
                     for i, (a, b) in enumerate(zip(t.in_avals, avals)) if a != b]
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. The mismatches are:\n" + "\n".join(diffs))
        return t._jitted(*args, **kwargs)

    @property
    def out_info(self):
        return self._traced.out_info


def jit(fun=None, *, in_shardings=None, out_shardings=None, static_argnums=None,
        static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
        device=None, backend=None, inline=False, abstracted_axes=None, compiler_options=None):
    """jax.jit: f compiled for each abstract signature of its arguments (see the module doc).
    Usable as a decorator, with or without arguments. in_shardings/out_shardings may only be
    trivial (one device)."""
    if fun is None:
        return lambda f: jit(f, in_shardings=in_shardings, out_shardings=out_shardings,
                             static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                             keep_unused=keep_unused, device=device, backend=backend,
                             inline=inline, abstracted_axes=abstracted_axes,
                             compiler_options=compiler_options)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if backend not in (None, "cpu"):
        raise ValueError(f"Unknown backend {backend!r}: Tessera runs on 'cpu' today")
    if abstracted_axes is not None:
        raise NotImplementedError("jit: abstracted_axes (dynamic shapes) is not supported by "
                                  "Tessera")
    return _Jitted(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                   keep_unused, inline, in_shardings, out_shardings)
