"""Shared helpers of the tessera.scipy.stats modules."""
import numpy as _np

from tessera import numpy as jnp
from tessera.scipy.special import _const as const  # noqa: F401
from tessera.scipy.special import _promote_args_inexact as promote_args_inexact  # noqa: F401

inf = _np.inf
nan = _np.nan


def neg_inf_like(x):
    return jnp.full_like(x, -inf)
