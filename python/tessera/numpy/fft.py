"""jnp.fft. The frequency helpers (fftfreq, rfftfreq, fftshift, ifftshift) are real-valued and
exist; the transforms produce or consume complex arrays, and Tessera has no complex64/complex128
dtypes yet, so each raises NotImplementedError saying so (not AttributeError: the name exists in
JAX and a program that imports it should learn why it cannot run)."""
import operator as _operator


def _jnp():
    import tessera.numpy as jnp
    return jnp


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies [0, 1, ..., n/2 - 1, -n/2, ..., -1] / (d n) (n even) of an FFT."""
    jnp = _jnp()
    n = _operator.index(n)
    if n <= 0:
        raise ValueError(f"fftfreq: n must be positive, got {n}")
    k = jnp.arange(n, dtype=jnp.int32)
    k = jnp.where(k < (n + 1) // 2, k, k - n)
    return jnp.asarray(k / (d * n), dtype=dtype, device=device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies [0, 1, ..., n//2] / (d n) of a real FFT."""
    jnp = _jnp()
    n = _operator.index(n)
    if n <= 0:
        raise ValueError(f"rfftfreq: n must be positive, got {n}")
    out = jnp.arange(n // 2 + 1, dtype=jnp.int32) / (d * n)
    return jnp.asarray(out, dtype=dtype, device=device)


def _axes(x, axes):
    if axes is None:
        return tuple(range(x.ndim))
    if isinstance(axes, int):
        return (axes,)
    return tuple(axes)


def fftshift(x, axes=None):
    """x rolled so the zero frequency is in the middle (by n // 2 along each axis)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    ax = _axes(x, axes)
    return jnp.roll(x, tuple(x.shape[a] // 2 for a in ax), ax)


def ifftshift(x, axes=None):
    """The inverse of fftshift (rolls by -(n // 2))."""
    jnp = _jnp()
    x = jnp.asarray(x)
    ax = _axes(x, axes)
    return jnp.roll(x, tuple(-(x.shape[a] // 2) for a in ax), ax)


def _complex_only(name):
    def f(*args, **kwargs):
        raise NotImplementedError(
            f"jnp.fft.{name}: Fourier transforms produce or consume complex arrays, and Tessera "
            "has no complex64/complex128 dtypes yet")
    f.__name__ = name
    f.__doc__ = f"jnp.fft.{name}: not available (needs complex dtypes)."
    return f


for _n in ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft"]:
    globals()[_n] = _complex_only(_n)
del _n
