"""More of jax.numpy's surface, composed from tessera.numpy and tessera.lax so that jit, vmap and
grad compose: the window functions (bartlett, blackman, hamming, hanning, kaiser), copy,
diagflat, fmax/fmin (NaN-ignoring), isscalar/iterable, poly, polydiv, polyfit (least squares),
unwrap, the array-API unique family (unique_all, unique_counts, unique_inverse,
unique_values), fromstring. roots raises NotImplementedError: its results are complex, and
Tessera has no complex dtypes."""
import typing as _typing

import numpy as _np

from tessera import _tessera
from tessera import numpy as _jnp
from tessera._src.array import Array as _Array


def _default_float():
    return _jnp.float64 if _tessera.x64_enabled() else _jnp.float32


def _inexact(x):
    x = _jnp.asarray(x)
    return x if _jnp.issubdtype(x.dtype, _jnp.inexact) else x.astype(_default_float())


def _window_len(name, M):
    try:
        m = _np.asarray(M)
        if m.ndim != 0 or not _np.issubdtype(m.dtype, _np.integer):
            raise TypeError
        return int(m)
    except TypeError:
        raise TypeError(f"{name}: M must be a concrete int, got {M!r}.") from None


# ---- window functions (NumPy's definitions; the default float dtype) ----
def _cos_window(name, M, coeffs):
    m = _window_len(name, M)
    if m <= 0:
        return _jnp.zeros((0,), _default_float())
    if m == 1:
        return _jnp.ones((1,), _default_float())
    n = _jnp.arange(0, m, dtype=_default_float())
    w = _jnp.zeros((m,), _default_float())
    for k, c in enumerate(coeffs):
        w = w + ((-1) ** k) * c * _jnp.cos(2 * _np.pi * k * n / (m - 1))
    return w


def bartlett(M):
    m = _window_len("bartlett", M)
    if m <= 1:
        return _jnp.ones((max(m, 0),), _default_float())
    n = _jnp.arange(0, m, dtype=_default_float())
    return 1 - _jnp.abs(2 * n / (m - 1) - 1)


def blackman(M):
    return _cos_window("blackman", M, (0.42, 0.5, 0.08))


def hamming(M):
    return _cos_window("hamming", M, (0.54, 0.46))


def hanning(M):
    return _cos_window("hanning", M, (0.5, 0.5))


def kaiser(M, beta):
    m = _window_len("kaiser", M)
    if m <= 1:
        return _jnp.ones((max(m, 0),), _default_float())
    n = _jnp.arange(0, m, dtype=_default_float())
    alpha = (m - 1) / 2.0
    beta = _jnp.asarray(beta, _default_float())
    return _jnp.i0(beta * _jnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / _jnp.i0(beta)


# ---- small utilities ----
def copy(a, order=None):
    """A new array with a's values (Tessera arrays are immutable: a copy of the buffer)."""
    return _jnp.array(a, copy=True)


def diagflat(v, k=0):
    v = _jnp.ravel(_jnp.asarray(v))
    return _jnp.diag(v, k)


def fmax(x1, x2):
    """Elementwise maximum that ignores NaNs (a NaN only where both are NaN)."""
    x1, x2 = _jnp.asarray(x1), _jnp.asarray(x2)
    return _jnp.where(_jnp.isnan(x1) | (x2 > x1), x2, x1) if _jnp.issubdtype(
        _jnp.result_type(x1, x2), _jnp.inexact) else _jnp.maximum(x1, x2)


def fmin(x1, x2):
    """Elementwise minimum that ignores NaNs (a NaN only where both are NaN)."""
    x1, x2 = _jnp.asarray(x1), _jnp.asarray(x2)
    return _jnp.where(_jnp.isnan(x1) | (x2 < x1), x2, x1) if _jnp.issubdtype(
        _jnp.result_type(x1, x2), _jnp.inexact) else _jnp.minimum(x1, x2)


def isscalar(element):
    """True for Python/NumPy scalars and 0-d arrays (JAX's rule)."""
    if isinstance(element, (_Array, _np.ndarray, _np.generic)):
        return _np.ndim(element) == 0
    return isinstance(element, (bool, int, float, complex))


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


def fromstring(string, dtype=float, count=-1, *, sep):
    return _jnp.asarray(_np.fromstring(string, dtype=dtype, count=count, sep=sep))


# ---- polynomials ----
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given (real) roots; a square 2-D input
    is read as a matrix whose eigenvalues are the roots (symmetric matrices only here: the roots
    of a general matrix are complex)."""
    a = _inexact(seq_of_zeros)
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] > 0:
        a = _jnp.linalg.eigvalsh(a)
    elif a.ndim != 1:
        raise ValueError("poly: input must be 1d or non-empty square 2d array.")
    c = _jnp.ones((1,), a.dtype)
    for i in range(a.shape[0]):
        c = _jnp.convolve(c, _jnp.stack([_jnp.ones((), a.dtype), -a[i]]), mode="full")
    return c


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial division, highest power first."""
    u, v = _inexact(u), _inexact(v)
    dt = _jnp.result_type(u, v)
    u, v = u.astype(dt), v.astype(dt)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = _jnp.zeros((max(m - n + 1, 1),), dt)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = _jnp.trim_zeros(r, "f")
    return q, r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit (highest power first), NumPy's algorithm: a scaled
    Vandermonde system solved by lstsq."""
    deg = int(deg)
    if deg < 0:
        raise ValueError("polyfit: expected deg >= 0")
    x, y = _inexact(x), _inexact(y)
    dt = _jnp.result_type(x, y)
    x, y = x.astype(dt), y.astype(dt)
    if x.ndim != 1:
        raise TypeError("polyfit: expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("polyfit: expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("polyfit: expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("polyfit: expected x and y to have same length")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * _np.finfo(_np.dtype(str(dt))).eps
    lhs = _jnp.vander(x, order)
    rhs = y
    if w is not None:
        w = _inexact(w).astype(dt)
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise TypeError("polyfit: expected a 1-d weight vector of x's length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = _jnp.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale
    c, resids, rank, s = _jnp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if cov:
        raise NotImplementedError("polyfit: cov=True is not implemented in Tessera.")
    return c


def roots(p, *, strip_zeros=True):
    raise NotImplementedError("roots: polynomial roots are complex in general and Tessera has no "
                              "complex64/complex128 dtypes yet.")


# ---- unwrap ----
def unwrap(p, discont=None, axis=-1, period=2 * _np.pi):
    """NumPy's unwrap: removes jumps larger than max(discont, period / 2) along axis by adding
    multiples of period."""
    p = _inexact(p)
    if p.shape[axis] == 0:
        return p
    interval_high = period / 2
    boundary_ambiguous = True
    interval_low = -interval_high
    if discont is None or discont < interval_high:
        discont = interval_high
    dd = _jnp.diff(p, axis=axis)
    ddmod = _jnp.remainder(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        ddmod = _jnp.where((ddmod == interval_low) & (dd > 0), interval_high, ddmod)
    ph_correct = ddmod - dd
    ph_correct = _jnp.where(_jnp.abs(dd) < discont, 0, ph_correct)
    first = _jnp.take(p, _jnp.arange(1), axis=axis)
    rest = _jnp.take(p, _jnp.arange(1, p.shape[axis]), axis=axis) + _jnp.cumsum(ph_correct,
                                                                                axis=axis)
    return _jnp.concatenate([first, rest], axis=axis)


# ---- the array-API unique family ----
class _UniqueAllResult(_typing.NamedTuple):
    values: _typing.Any
    indices: _typing.Any
    inverse_indices: _typing.Any
    counts: _typing.Any


class _UniqueCountsResult(_typing.NamedTuple):
    values: _typing.Any
    counts: _typing.Any


class _UniqueInverseResult(_typing.NamedTuple):
    values: _typing.Any
    inverse_indices: _typing.Any


def unique_all(x, /, *, size=None, fill_value=None):
    v, i, inv, c = _jnp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                               equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueAllResult(v, i, inv, c)


def unique_counts(x, /, *, size=None, fill_value=None):
    v, c = _jnp.unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueCountsResult(v, c)


def unique_inverse(x, /, *, size=None, fill_value=None):
    v, inv = _jnp.unique(x, return_inverse=True, equal_nan=False, size=size,
                         fill_value=fill_value)
    return _UniqueInverseResult(v, inv)


def unique_values(x, /, *, size=None, fill_value=None):
    return _jnp.unique(x, equal_nan=False, size=size, fill_value=fill_value)
