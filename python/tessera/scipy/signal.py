"""tessera.scipy.signal: jax.scipy.signal's direct convolutions and correlations (N-D
convolve / correlate, 2-D convolve2d / correlate2d with boundary 'fill') and detrend.

The convolutions are direct sums: the larger input is zero-padded for the mode, every output
element's window of it is gathered (one gather of out_size x kernel_size elements; above 2^24 of
them a loop of shifted slices instead) and contracted with the flipped kernel, so jit, vmap and
grad come from jax.numpy. The FFT-based functions (fftconvolve, stft, istft, csd, welch and
method='fft') need complex dtypes, which Tessera does not have; they raise NotImplementedError."""
import itertools as _itertools

import numpy as _np

from tessera import numpy as _jnp

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]

_GATHER_LIMIT = 1 << 24


def _no_complex(name):
    return NotImplementedError(
        f"jax.scipy.signal.{name} needs FFTs over complex dtypes (complex64/complex128), which "
        "Tessera does not have; use jax.scipy.signal.convolve / correlate with method='direct'")


def _as_array(name, x):
    if isinstance(x, (str, bytes)) or (not hasattr(x, "dtype") and
                                       not isinstance(x, (int, float, bool, list, tuple))):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x).__name__}")
    x = _jnp.asarray(x)
    if _jnp.iscomplexobj(x):
        raise TypeError(f"jax.scipy.signal.{name}: complex inputs are not supported (Tessera "
                        "has no complex dtypes)")
    return x


def _windows(big, out_shape, kshape):
    """The windows of big starting at every output index, as (out_size, kernel_size)."""
    strides = _np.cumprod((1,) + tuple(big.shape[::-1]))[:-1][::-1]
    out_off = _np.zeros(out_shape, _np.int64)
    k_off = _np.zeros(kshape, _np.int64)
    for d in range(len(out_shape)):
        shape_o = [1] * len(out_shape)
        shape_o[d] = out_shape[d]
        out_off = out_off + _np.arange(out_shape[d]).reshape(shape_o) * strides[d]
        k_off = k_off + _np.arange(kshape[d]).reshape(shape_o[:d] + [kshape[d]] +
                                                        shape_o[d + 1:]) * strides[d]
    idx = out_off.reshape(-1, 1) + k_off.reshape(1, -1)
    return big.reshape(-1)[_jnp.asarray(idx.astype(_np.int32))]


def _correlate_valid(big, kernel):
    """out[n] = sum_j big[n + j] kernel[j] over the n where the window fits."""
    out_shape = tuple(b - k + 1 for b, k in zip(big.shape, kernel.shape))
    out_size = int(_np.prod(out_shape))
    k_size = int(_np.prod(kernel.shape))
    if out_size * k_size <= _GATHER_LIMIT:
        return (_windows(big, out_shape, kernel.shape) @ kernel.reshape(-1)).reshape(out_shape)
    total = None
    for j in _itertools.product(*[range(k) for k in kernel.shape]):
        window = big[tuple(slice(jd, jd + od) for jd, od in zip(j, out_shape))]
        term = window * kernel[j]
        total = term if total is None else total + term
    return total


def _convolve_nd(name, in1, in2, mode):
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    dtype = _jnp.result_type(in1, in2)
    in1 = in1.astype(dtype)
    in2 = in2.astype(dtype)
    no_swap = all(a >= b for a, b in zip(in1.shape, in2.shape))
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    kshape = in2.shape
    if in1.ndim == 0:
        return in1 * in2
    if mode == "valid":
        pads = [(0, 0)] * in1.ndim
    elif mode == "same":
        # centred on the first argument's shape, as SciPy
        pads = [(k - 1 - (ko - 1) // 2, k - ko + (ko - 1) // 2) for k, ko in zip(kshape, shape_o)]
    else:
        pads = [(k - 1, k - 1) for k in kshape]
    # a negative pad (mode 'same' with the inputs swapped) crops, as lax.conv's padding
    big = in1
    if any(p != (0, 0) for p in pads):
        big = _jnp.pad(big, [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        big = big[tuple(slice(max(-lo, 0), big.shape[d] - max(-hi, 0))
                        for d, (lo, hi) in enumerate(pads))]
    return _correlate_valid(big, _jnp.flip(in2))


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-D convolution of in1 and in2 (same rank; one at least as large as the other in
    every axis). mode: 'full', 'same' (in1's shape) or 'valid'. method: 'auto' or 'direct'."""
    del precision
    in1 = _as_array("convolve", in1)
    in2 = _as_array("convolve", in2)
    if method == "fft":
        raise _no_complex("convolve(method='fft')")
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd("convolve", in1, in2, mode)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-D cross-correlation sum_j in1[n + j] in2[j], modes as convolve."""
    del precision
    in1 = _as_array("correlate", in1)
    in2 = _as_array("correlate", in2)
    if method == "fft":
        raise _no_complex("correlate(method='fft')")
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd("correlate", in1, _jnp.flip(in2), mode)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if _jnp.ndim(in1) != 2 or _jnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D convolution of in1 and in2 (boundary 'fill' with fillvalue 0 only, as JAX)."""
    del precision
    in1 = _as_array("convolve2d", in1)
    in2 = _as_array("convolve2d", in2)
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd("convolve2d", in1, in2, mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D cross-correlation of in1 and in2 (boundary 'fill' with fillvalue 0 only). With
    in2 the larger input the result is SciPy's: the correlation of in2 with in1, reversed."""
    del precision
    in1 = _as_array("correlate2d", in1)
    in2 = _as_array("correlate2d", in2)
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same_shape = tuple(in1.shape) == tuple(in2.shape)
    if mode in ("valid", "full") and swap and not same_shape:
        # SciPy swaps the inputs here: the result is conv(flip(in2), in1), not reversed
        return _convolve_nd("correlate2d", _jnp.flip(in2), in1, mode)
    return _jnp.flip(_convolve_nd("correlate2d", _jnp.flip(in1), in2, mode))


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """data less its least-squares trend along axis: its mean (type 'constant') or a straight
    line on each piece between the breakpoints bp (type 'linear')."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data = _as_array("detrend", data)
    if not _jnp.issubdtype(data.dtype, _jnp.floating):
        data = data.astype(_jnp.result_type(data.dtype, 1.0))
    if type == "constant":
        return data - data.mean(axis, keepdims=True)
    n = data.shape[axis]
    bps = _np.sort(_np.unique(_np.r_[0, _np.asarray(bp).ravel(), n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along "
                         "given axis.")
    moved = _jnp.moveaxis(data, axis, 0)
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        y = moved[int(lo):int(hi)]
        m = int(hi - lo)
        t = _jnp.arange(m, dtype=data.dtype).reshape((m,) + (1,) * (y.ndim - 1))
        t = t - (m - 1) / 2.0
        y_mean = y.mean(0, keepdims=True)
        denom = _jnp.sum(t * t)
        slope = _jnp.sum(t * (y - y_mean), axis=0, keepdims=True) / _jnp.where(denom > 0, denom,
                                                                               1.0)
        pieces.append(y - y_mean - slope * t)
    out = pieces[0] if len(pieces) == 1 else _jnp.concatenate(pieces, axis=0)
    return _jnp.moveaxis(out, 0, axis)


def fftconvolve(in1, in2, mode="full", axes=None):
    raise _no_complex("fftconvolve")


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    raise _no_complex("stft")


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True,
          boundary=True, time_axis=-1, freq_axis=-2):
    raise _no_complex("istft")


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
        return_onesided=True, scaling="density", axis=-1, average="mean"):
    raise _no_complex("csd")


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    raise _no_complex("welch")
