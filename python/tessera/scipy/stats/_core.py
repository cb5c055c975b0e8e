"""jax.scipy.stats.mode, rankdata and sem (C++: tessera::scipy::stats, tessera/scipy_stats.h)."""
from typing import Any, NamedTuple

from tessera.scipy.stats._util import C as _C
from tessera.scipy.stats._util import check_nan_policy as _check_nan_policy


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """ModeResult(mode, count): the most frequent value along axis (the smallest on ties, as
    SciPy) and how often it occurs; axis=None flattens. A slice holding NaN has mode NaN."""
    _check_nan_policy("mode", nan_policy, ("propagate",))
    return ModeResult(*_C.mode(a, axis, nan_policy, bool(keepdims)))


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (1-based) of a's elements, along axis or over the flattened array. Ties:
    'average' (float), 'min', 'max', 'dense' (consecutive) or 'ordinal' (first come first)."""
    _check_nan_policy("rankdata", nan_policy, ("propagate",))
    return _C.rankdata(a, method, axis, nan_policy)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n) along axis (axis=None
    flattens); nan_policy='omit' ignores NaNs."""
    _check_nan_policy("sem", nan_policy, ("propagate", "omit"))
    return _C.sem(a, axis, int(ddof), nan_policy, bool(keepdims))
