"""jax.scipy.integrate.trapezoid, jax.scipy.ndimage.map_coordinates and
jax.scipy.interpolate.RegularGridInterpolator against SciPy on fresh random inputs, under jit,
with grads against float64 finite differences."""
import numpy as np
import pytest
import scipy.integrate as sint
import scipy.interpolate as sinterp
import scipy.ndimage as sndi

import tessera as jax
import tessera.numpy as jnp
from tessera.scipy.integrate import trapezoid
from tessera.scipy.interpolate import RegularGridInterpolator
from tessera.scipy.ndimage import map_coordinates


def _fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ---- trapezoid ----

@pytest.mark.parametrize("axis", [0, -1])
def test_trapezoid_vs_scipy(rng, axis):
    y = rng.standard_normal((5, 7))
    x = np.sort(rng.uniform(0, 3, size=y.shape[axis]))
    got = jax.jit(lambda y, x: trapezoid(y, x, axis=axis))(jnp.asarray(y, jnp.float32),
                                                           jnp.asarray(x, jnp.float32))
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(got), sint.trapezoid(y, x, axis=axis), rtol=1e-5,
                               atol=1e-5)
    dx = float(rng.uniform(0.1, 2))
    np.testing.assert_allclose(np.asarray(trapezoid(jnp.asarray(y), dx=dx, axis=axis)),
                               sint.trapezoid(y, dx=dx, axis=axis), rtol=1e-5, atol=1e-5)


def test_trapezoid_grad(x64, rng):
    y = rng.standard_normal(6)
    x = np.sort(rng.uniform(0, 3, size=6))
    g = jax.grad(lambda y, x: trapezoid(y, x), argnums=(0, 1))(jnp.asarray(y), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(g[0]), _fd_grad(lambda v: sint.trapezoid(v, x), y),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(g[1]), _fd_grad(lambda v: sint.trapezoid(y, v), x),
                               rtol=1e-6, atol=1e-8)


# ---- map_coordinates ----

# JAX's 'wrap' is periodic (SciPy's 'grid-wrap'); its 'constant' interpolates against cval
# beyond the edge (SciPy's 'grid-constant')
_SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
               "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("mode", sorted(_SCIPY_MODE))
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("shape", [(7,), (4, 5), (3, 4, 2)])
def test_map_coordinates_vs_scipy(rng, mode, order, shape):
    img = rng.standard_normal(shape).astype(np.float32)
    coords = [rng.uniform(-3, n + 2, size=(6, 5)).astype(np.float32) for n in shape]
    cval = float(rng.standard_normal())
    fn = jax.jit(lambda img, *c: map_coordinates(img, c, order, mode=mode, cval=cval))
    got = fn(jnp.asarray(img), *[jnp.asarray(c) for c in coords])
    want = sndi.map_coordinates(img.astype(np.float64), [c.astype(np.float64) for c in coords],
                                order=order, mode=_SCIPY_MODE[mode], cval=cval)
    assert got.dtype == jnp.float32 and got.shape == (6, 5)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_map_coordinates_integer_input(rng):
    img = rng.integers(-50, 50, size=(6, 6)).astype(np.int32)
    coords = rng.uniform(0, 5, size=(2, 10))
    got = map_coordinates(jnp.asarray(img), [jnp.asarray(c) for c in coords], 1, mode="nearest")
    want = sndi.map_coordinates(img, coords, order=1, mode="nearest")
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(got), want)


def test_map_coordinates_grad(x64, rng):
    img = rng.standard_normal((5, 6))
    coords = rng.uniform(0.2, 3.8, size=(2, 4))
    f = lambda im: jnp.sum(map_coordinates(im, [jnp.asarray(c) for c in coords], 1,
                                           mode="reflect") ** 2)
    ref = lambda im: np.sum(sndi.map_coordinates(im, coords, order=1, mode="reflect") ** 2)
    np.testing.assert_allclose(np.asarray(jax.grad(f)(jnp.asarray(img))), _fd_grad(ref, img),
                               rtol=1e-5, atol=1e-7)


def test_map_coordinates_errors():
    img = jnp.zeros((3, 3))
    with pytest.raises(ValueError, match="coordinates must be a sequence of length input.ndim"):
        map_coordinates(img, [jnp.zeros(2)], 1)
    with pytest.raises(NotImplementedError, match="requires order<=1"):
        map_coordinates(img, [jnp.zeros(2)] * 2, 3)
    with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
        map_coordinates(img, [jnp.zeros(2)] * 2, 1, mode="grid-wrap")


# ---- RegularGridInterpolator ----

def _grid(rng, n):
    return np.sort(rng.choice(np.linspace(-2, 3, 60), size=n, replace=False))


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_rgi_vs_scipy(rng, method, ndim):
    pts = [_grid(rng, n) for n in (5, 4, 3)[:ndim]]
    vals = rng.standard_normal(tuple(len(p) for p in pts))
    xi = rng.uniform(-2.5, 3.5, size=(11, ndim))
    fill = float(rng.standard_normal())
    ref = sinterp.RegularGridInterpolator(pts, vals, method=method, bounds_error=False,
                                          fill_value=fill)(xi)
    interp = RegularGridInterpolator([jnp.asarray(p, jnp.float32) for p in pts],
                                     jnp.asarray(vals, jnp.float32), method=method,
                                     fill_value=fill)
    got = jax.jit(lambda f, x: f(x))(interp, jnp.asarray(xi, jnp.float32))
    assert got.dtype == jnp.float32 and got.shape == (11,)
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-5)


def test_rgi_trailing_dims_nan_fill_and_extrapolate(x64, rng):
    pts = [_grid(rng, 4), _grid(rng, 6)]
    vals = rng.standard_normal((4, 6, 3))
    xi = rng.uniform(-2.5, 3.5, size=(2, 5, 2))
    for fill in (np.nan, None):
        ref = sinterp.RegularGridInterpolator(pts, vals, bounds_error=False, fill_value=fill)(xi)
        got = RegularGridInterpolator(pts, jnp.asarray(vals), fill_value=fill)(jnp.asarray(xi))
        assert got.shape == (2, 5, 3)
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-10, atol=1e-12)
    # a tuple of coordinate arrays is broadcast together
    a, b = rng.uniform(-1, 2, size=(3, 1)), rng.uniform(-1, 2, size=(1, 4))
    ref = sinterp.RegularGridInterpolator(pts, vals, bounds_error=False)((a, b))
    got = RegularGridInterpolator(pts, jnp.asarray(vals))((jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-10, atol=1e-12)


def test_rgi_grad(x64, rng):
    pts = [_grid(rng, 4), _grid(rng, 5)]
    vals = rng.standard_normal((4, 5))
    xi = np.stack([rng.uniform(p[0] + 0.01, p[-1] - 0.01, size=3) for p in pts], -1)
    f = lambda x: jnp.sum(RegularGridInterpolator(pts, jnp.asarray(vals))(x) ** 2)
    ref = lambda x: np.sum(sinterp.RegularGridInterpolator(pts, vals)(x) ** 2)
    np.testing.assert_allclose(np.asarray(jax.grad(f)(jnp.asarray(xi))), _fd_grad(ref, xi),
                               rtol=1e-5, atol=1e-7)


def test_rgi_errors():
    pts = [jnp.arange(3.0)]
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(pts, jnp.zeros(3), method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(pts, jnp.zeros(3), bounds_error=True)
    with pytest.raises(ValueError, match="there are 2 point arrays"):
        RegularGridInterpolator(pts * 2, jnp.zeros(3))
    with pytest.raises(ValueError, match="have dimension 2"):
        RegularGridInterpolator(pts, jnp.zeros(3))(jnp.zeros((4, 2)))


def test_map_coordinates_vmap_matches_loop(rng):
    img = jnp.asarray(rng.standard_normal((5, 6)), jnp.float32)
    coords = jnp.asarray(rng.uniform(-1, 6, size=(4, 2, 7)), jnp.float32)
    f = lambda cc: map_coordinates(img, [cc[0], cc[1]], 1, mode="mirror")
    got = np.asarray(jax.vmap(f)(coords))
    want = np.stack([np.asarray(f(coords[i])) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
