"""Tessera: JAX's programming model as a C++ system, with JAX's names in Python.

    import tessera as jax
    import tessera.numpy as jnp

    grads = jax.grad(loss)(params, batch)
"""
from tessera import _tessera
from tessera._src import dtypes as dtypes
from tessera._src.array import Array
from tessera._src.config import (
    config,
    debug_infs,
    debug_nans,
    default_matmul_precision,
    disable_jit,
    explain_cache_misses,
    log_compiles,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    threefry_partitionable,
)
from tessera._src.api import (
    ShapeDtypeStruct,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
from tessera._src.jit import jit
from tessera._src.pmap import pmap
from tessera._src.shard_map import shard_map
from tessera._src.mesh import make_mesh
from tessera._src.custom_derivatives import closure_convert, custom_jvp, custom_vjp
from tessera._src.checkpoint import checkpoint, checkpoint_policies, remat
from tessera._src.devices import (
    block_until_ready,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from tessera._src.callback import pure_callback
from tessera import custom_derivatives
from tessera import ad_checkpoint
from tessera import dlpack
from tessera import debug, experimental
from tessera import errors
from tessera import core
from tessera import lax
from tessera import nn
from tessera import numpy
from tessera import ops
from tessera import random
from tessera import scipy
from tessera import tree
from tessera import tree_util
from tessera import flatten_util
from tessera import sharding
from tessera.lax import stop_gradient

__all__ = [
    "debug", "experimental", "pure_callback",
    "ad_checkpoint", "checkpoint", "checkpoint_policies", "remat",
    "Array", "ShapeDtypeStruct", "block_until_ready", "config", "closure_convert", "custom_jvp",
    "custom_vjp", "default_backend", "device_count", "device_get", "device_put", "devices",
    "dtypes", "errors", "eval_shape", "grad", "hessian", "jacfwd", "jacrev", "jit", "jvp", "lax",
    "linear_transpose", "linearize", "make_mesh", "pmap", "shard_map", "local_device_count", "local_devices", "make_jaxpr",
    "numpy", "process_count", "process_index", "random", "sharding", "stop_gradient",
    "tree", "tree_util", "value_and_grad", "vjp", "vmap",
    "debug_infs", "debug_nans", "default_matmul_precision", "disable_jit",
    "explain_cache_misses", "log_compiles", "numpy_dtype_promotion", "numpy_rank_promotion",
    "threefry_partitionable",
]
__all__ += ["nn", "scipy"]


# ---- jax-level extras: named_call/named_scope, ensure_compile_time_eval, clear_caches,
# typeof, print_environment_info ----
import contextlib as _contextlib  # noqa: E402
import functools as _functools  # noqa: E402


def named_call(fun, *, name=None):
    """fun under a name (JAX's profiler scopes; Tessera records no names: fun itself)."""
    @_functools.wraps(fun)
    def named(*args, **kwargs):
        return fun(*args, **kwargs)
    return named


@_contextlib.contextmanager
def named_scope(name):
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


@_contextlib.contextmanager
def ensure_compile_time_eval():
    """Outside jit, values are concrete already; inside, Tessera stages constants (no-op)."""
    yield


def clear_caches():
    """Drops every jit trace cache (the next call of each jitted function retraces)."""
    from tessera._src import jit as _jit_module
    _jit_module._caches.clear()


from tessera._src.jaxpr_view import ShapedArray as _ShapedArray  # noqa: E402


def typeof(x):
    a = x if isinstance(x, Array) else numpy.asarray(x)
    return _ShapedArray(a.shape, a.dtype, a.weak_type)


def print_environment_info(return_string=False):
    import platform
    import sys
    import numpy as _host_np
    info = (f"tessera (jax API):    {getattr(_tessera, '__version__', 'dev')}\n"
            f"numpy:                {_host_np.__version__}\n"
            f"python:               {sys.version}\n"
            f"device info:          {default_backend()}, {device_count()} local devices\n"
            f"process_count:        {process_count()}\n"
            f"platform:             {platform.uname()}\n")
    if return_string:
        return info
    print(info, end="")


__all__ += ["clear_caches", "ensure_compile_time_eval", "named_call", "named_scope",
            "print_environment_info", "typeof"]
