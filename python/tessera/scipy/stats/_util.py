"""Shared argument handling of the tessera.scipy.stats modules. The algorithms (and JAX's
promote_args_inexact promotion) are C++: tessera/scipy_stats.h, bound as _tessera.scipy_stats."""

from tessera import _tessera
from tessera import numpy as _jnp

C = _tessera.scipy_stats


def check_args(fun_name, *args):
    """The arguments, after the checks C++ cannot make on Python values (special.py's)."""
    from tessera.scipy.special import _check_real_args
    return _check_real_args(fun_name, *args)


def check_nan_policy(name, nan_policy, allowed):
    """JAX's nan_policy checks (C++ makes them too; Python raises NotImplementedError itself)."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: nan_policy must be 'propagate', 'omit' or 'raise', got "
                         f"{nan_policy!r}")
    if nan_policy not in allowed:
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented "
                                  f"in {name}; use nan_policy='propagate'")
