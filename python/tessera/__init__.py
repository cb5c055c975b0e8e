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
from tessera import lax
from tessera import nn
from tessera import numpy
from tessera import ops
from tessera import random
from tessera import scipy
from tessera import tree
from tessera import tree_util
from tessera import sharding
from tessera.lax import stop_gradient

__all__ = [
    "debug", "experimental", "pure_callback",
    "ad_checkpoint", "checkpoint", "checkpoint_policies", "remat",
    "Array", "ShapeDtypeStruct", "block_until_ready", "config", "closure_convert", "custom_jvp",
    "custom_vjp", "default_backend", "device_count", "device_get", "device_put", "devices",
    "dtypes", "errors", "eval_shape", "grad", "hessian", "jacfwd", "jacrev", "jit", "jvp", "lax",
    "linear_transpose", "linearize", "local_device_count", "local_devices", "make_jaxpr",
    "numpy", "process_count", "process_index", "random", "sharding", "stop_gradient",
    "tree", "tree_util", "value_and_grad", "vjp", "vmap",
    "debug_infs", "debug_nans", "default_matmul_precision", "disable_jit",
    "explain_cache_misses", "log_compiles", "numpy_dtype_promotion", "numpy_rank_promotion",
    "threefry_partitionable",
]
__all__ += ["nn", "scipy"]
