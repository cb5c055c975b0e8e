"""jax.config over the C++ flag registry (include/tessera/config.h): JAX's flag names, values,
validation errors and environment variables (JAX_ENABLE_X64, JAX_PLATFORMS, ...).

    jax.config.update("jax_enable_x64", True)
    jax.config.jax_enable_x64            # True
    with jax.numpy_rank_promotion("raise"): ...

Every flag is accepted and stored; `config.describe(name)` says whether Tessera acts on it
today or which part of the system will. Values are process-wide: the context managers set a
value on entry and restore the previous one on exit (JAX's are thread-local).
"""
import functools

from tessera import _tessera

_FLAGS = {f["name"]: f for f in _tessera.config_flags()}


class Config:
    """The flags; unknown names raise AttributeError as JAX's do."""

    def update(self, name, value):
        if name not in _FLAGS:
            raise AttributeError(f"Unrecognized config option: {name}")
        _tessera.config_update(name, value)

    def read(self, name):
        return self._read(name)

    def _read(self, name):
        if name not in _FLAGS:
            raise AttributeError(f"Unrecognized config option: {name}")
        return _tessera.config_read(name)

    @property
    def values(self):
        return {name: _tessera.config_read(name) for name in _FLAGS}

    def describe(self, name):
        """(help, effect) of a flag: what it means and whether Tessera acts on it yet."""
        if name not in _FLAGS:
            raise AttributeError(f"Unrecognized config option: {name}")
        return _FLAGS[name]["help"], _FLAGS[name]["effect"]

    @property
    def x64_enabled(self):
        return _tessera.config_read("jax_enable_x64")

    def __repr__(self):
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self.values.items()) + ")"


def _flag_property(name):
    return property(lambda self: _tessera.config_read(name),
                    doc=f"{_FLAGS[name]['help']} ({_FLAGS[name]['effect']})")


for _name in _FLAGS:
    setattr(Config, _name, _flag_property(_name))
del _name

config = Config()


class _NoDefault:
    pass


_NO_DEFAULT = _NoDefault()


class _FlagContext:
    """Sets a flag for a `with` block (or a decorated function) and restores it after."""

    __slots__ = ("_name", "_value", "_prev")

    def __init__(self, name, value):
        self._name, self._value, self._prev = name, value, []

    def __enter__(self):
        self._prev.append(_tessera.config_read(self._name))
        _tessera.config_update(self._name, self._value)
        return self

    def __exit__(self, *exc):
        _tessera.config_update(self._name, self._prev.pop())
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _FlagContext(self._name, self._value):
                return func(*args, **kwargs)
        return wrapper


def _context_manager(name, default=_NO_DEFAULT):
    short = name[4:]

    def cm(new_val=default):
        if new_val is _NO_DEFAULT:
            raise TypeError(f"Context manager for {short} config option requires an argument "
                            "representing the new value for the config option.")
        _tessera.config_check(name, new_val)  # as JAX: a bad value fails at the `with` line
        return _FlagContext(name, new_val)

    cm.__name__ = short
    cm.__doc__ = f"Context manager for `{name}` config option.\n\n{_FLAGS[name]['help']}"
    return cm


default_matmul_precision = _context_manager("jax_default_matmul_precision")
numpy_rank_promotion = _context_manager("jax_numpy_rank_promotion")
numpy_dtype_promotion = _context_manager("jax_numpy_dtype_promotion")
debug_nans = _context_manager("jax_debug_nans", True)
debug_infs = _context_manager("jax_debug_infs", True)
log_compiles = _context_manager("jax_log_compiles", True)
explain_cache_misses = _context_manager("jax_explain_cache_misses", True)
threefry_partitionable = _context_manager("jax_threefry_partitionable", True)
enable_x64 = _context_manager("jax_enable_x64", True)


def disable_jit(disable=True):
    """Context manager: jit-decorated functions run op by op inside it."""
    return _FlagContext("jax_disable_jit", bool(disable))


def disable_x64():
    """jax.experimental.disable_x64: 32-bit defaults inside the block."""
    return _FlagContext("jax_enable_x64", False)
