"""tessera.lax.reduce_window (and padtype_to_pads / PaddingType) against PyTorch's pooling
(max_pool1d/2d/3d, avg_pool2d with count_include_pad both ways, built as sum / count like stax's
AvgPool), NumPy sliding_window_view references, and torch autograd for the gradients; a custom
Python computation (a product) against NumPy; under jit, vmap and grad. Fresh random inputs; the
seed is TESSERA_TEST_SEED (or the clock)."""

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from tessera import lax

torch = pytest.importorskip("torch")
F = torch.nn.functional


def nchw_to_nhwc(a):
    return np.moveaxis(a, 1, -1)


def max_pool(x, window, strides, padding):
    """Max pooling over the trailing spatial dims of an N, spatial..., C array (stax's MaxPool)."""
    dims = (1,) + tuple(window) + (1,)
    st = (1,) + tuple(strides) + (1,)
    if not isinstance(padding, str):
        padding = ((0, 0),) + tuple(padding) + ((0, 0),)
    return lax.reduce_window(x, -jnp.inf, lax.max, dims, st, padding)


def torch_max_pool(x, window, strides, pads):
    """torch's max_pool on N, C, spatial... with symmetric padding (pads[i] per side)."""
    t = torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, -1, 1)))
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[len(window)]
    return fn(t, window, strides, pads).numpy()


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_max_pool_matches_torch(rng, rank):
    for _ in range(4):
        spatial = tuple(int(s) for s in rng.integers(3, 9, size=rank))
        window = tuple(int(w) for w in rng.integers(1, 4, size=rank))
        strides = tuple(int(s) for s in rng.integers(1, 3, size=rank))
        pads = tuple(int(rng.integers(0, w // 2 + 1)) for w in window)  # torch: pad <= k / 2
        x = rng.standard_normal((2,) + spatial + (3,)).astype(np.float32)
        got = np.asarray(max_pool(jnp.asarray(x), window, strides, [(p, p) for p in pads]))
        want = np.moveaxis(torch_max_pool(x, window, strides, pads), 1, -1)
        np.testing.assert_array_equal(got, want)


def test_max_pool_grad_matches_torch_autograd(rng):
    x = rng.standard_normal((2, 7, 9, 4)).astype(np.float32)
    w = rng.standard_normal((2, 4, 5, 4)).astype(np.float32)  # output (3, 3) windows, stride 2
    pads = (1, 1)

    def loss(a):
        return jnp.sum(max_pool(a, (3, 3), (2, 2), [(1, 1), (1, 1)]) * w)

    got = np.asarray(tessera.grad(loss)(jnp.asarray(x)))
    t = torch.tensor(np.moveaxis(x, -1, 1).copy(), requires_grad=True)
    y = F.max_pool2d(t, (3, 3), (2, 2), pads)
    (y * torch.from_numpy(np.moveaxis(w, -1, 1).copy())).sum().backward()
    np.testing.assert_allclose(got, np.moveaxis(t.grad.numpy(), 1, -1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool_matches_torch(rng, count_include_pad):
    """stax's AvgPool: window sums over window counts (ones pooled the same way when the padding
    is not counted)."""
    x = rng.standard_normal((3, 8, 7, 5)).astype(np.float32)
    window, strides, pads = (3, 3), (2, 1), [(1, 1), (1, 1)]
    full = ((0, 0),) + tuple(pads) + ((0, 0),)
    dims, st = (1, 3, 3, 1), (1, 2, 1, 1)

    def avg(a):
        s = lax.reduce_window(a, 0.0, lax.add, dims, st, full)
        if count_include_pad:
            return s / np.prod(window)
        ones = jnp.ones(a.shape[1:3] + (1,), a.dtype)[None]
        counts = lax.reduce_window(ones, 0.0, lax.add, dims, st, full)
        return s / counts

    got = np.asarray(avg(jnp.asarray(x)))
    t = torch.tensor(np.moveaxis(x, -1, 1).copy(), requires_grad=True)
    y = F.avg_pool2d(t, window, strides, (1, 1), count_include_pad=count_include_pad)
    np.testing.assert_allclose(got, np.moveaxis(y.detach().numpy(), 1, -1), rtol=1e-5, atol=1e-6)
    # The gradient of a weighted sum: the transposed reduce_window_sum.
    w = rng.standard_normal(got.shape).astype(np.float32)
    g = np.asarray(tessera.grad(lambda a: jnp.sum(avg(a) * w))(jnp.asarray(x)))
    (y * torch.from_numpy(np.moveaxis(w, -1, 1).copy())).sum().backward()
    np.testing.assert_allclose(g, np.moveaxis(t.grad.numpy(), 1, -1), rtol=1e-5, atol=1e-5)


def np_window_reduce(x, window, strides, pads, fn, init):
    """NumPy reference: pad with init, sliding_window_view, reduce the window axes, stride."""
    xp = np.pad(x, pads, constant_values=init)
    v = np.lib.stride_tricks.sliding_window_view(xp, window)
    v = v[tuple(slice(None, None, s) for s in strides)]
    return fn(v, axis=tuple(range(x.ndim, 2 * x.ndim)))


@pytest.mark.parametrize("padding", ["VALID", "SAME", "SAME_LOWER"])
def test_monoids_match_sliding_window_view(rng, padding):
    for dtype in ["float32", "int32", "float64"]:
        x = (rng.standard_normal((5, 7, 4)) * 10).astype(dtype)
        window, strides = (2, 3, 1), (1, 2, 1)
        pads = lax.padtype_to_pads(x.shape, window, strides, padding)
        for fn, np_fn, init in [(lax.add, np.sum, 0), (lax.max, np.max, None),
                                (lax.min, np.min, None)]:
            if init is None:
                hi = np.inf if dtype.startswith("float") else np.iinfo(dtype).max
                init = -hi if fn is lax.max else hi
                if not dtype.startswith("float") and fn is lax.max:
                    init = np.iinfo(dtype).min
            got = lax.reduce_window(jnp.asarray(x), np.array(init, dtype), fn, window, strides,
                                    padding)
            want = np_window_reduce(x, window, strides, pads, np_fn, init)
            np.testing.assert_allclose(np.asarray(got), want.astype(dtype), rtol=1e-6, atol=1e-4)


def test_padtype_to_pads_and_padding_type():
    assert lax.padtype_to_pads((5, 4), (3, 2), (2, 1), "SAME") == [(1, 1), (0, 1)]
    assert lax.padtype_to_pads((5, 4), (3, 2), (2, 1), lax.PaddingType.SAME_LOWER) == [(1, 1),
                                                                                         (1, 0)]
    assert lax.padtype_to_pads((5, 4), (3, 2), (2, 1), "valid") == [(0, 0), (0, 0)]
    assert [p.value for p in lax.PaddingType] == [1, 2, 3]
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        lax.padtype_to_pads((5,), (3,), (1,), "FULL")


def test_custom_computation_matches_numpy(rng):
    x = rng.uniform(0.5, 1.5, size=(4, 6, 5)).astype(np.float64)
    window, strides, pads = (2, 2, 3), (1, 2, 1), [(0, 1), (1, 0), (1, 1)]
    prod = lambda a, b: a * b  # noqa: E731
    with_x64 = tessera.config.jax_enable_x64
    tessera.config.update("jax_enable_x64", True)
    try:
        got = lax.reduce_window(jnp.asarray(x), 1.0, prod, window, strides, pads)
        want = np_window_reduce(x, window, strides, pads, np.prod, 1.0)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        assert "reduce_window[" in str(tessera.make_jaxpr(
            lambda a: lax.reduce_window(a, 1.0, prod, window, strides, pads))(x))
        # jit, vmap (batch axis last) and grad vs float64 differences.
        f = lambda a: lax.reduce_window(a, 1.0, prod, window, strides, pads)  # noqa: E731
        np.testing.assert_allclose(np.asarray(tessera.jit(f)(x)), want, rtol=1e-12)
        xb = rng.uniform(0.5, 1.5, size=(4, 6, 5, 3))
        vm = np.asarray(tessera.vmap(f, in_axes=3)(jnp.asarray(xb)))
        loop = np.stack([np.asarray(f(jnp.asarray(xb[..., i]))) for i in range(3)])
        np.testing.assert_allclose(vm, loop, rtol=1e-12)
        w = rng.standard_normal(want.shape)
        loss = lambda a: jnp.sum(f(a) * w)  # noqa: E731
        g = np.asarray(tessera.grad(loss)(jnp.asarray(x)))
        h = 1e-6
        for idx in [tuple(rng.integers(0, s) for s in x.shape) for _ in range(6)]:
            e = np.zeros_like(x)
            e[idx] = h
            fd = (float(loss(jnp.asarray(x + e))) - float(loss(jnp.asarray(x - e)))) / (2 * h)
            assert abs(g[idx] - fd) <= 1e-6 * (1 + abs(fd))
    finally:
        tessera.config.update("jax_enable_x64", with_x64)


def test_pytree_operands_and_errors(rng):
    x = rng.standard_normal((6, 5)).astype(np.float32)
    y = rng.standard_normal((6, 5)).astype(np.float32)

    def comp(a, b):
        return {"s": a["s"] + b["s"], "m": jnp.maximum(a["m"], b["m"])}

    out = lax.reduce_window({"s": jnp.asarray(x), "m": jnp.asarray(y)},
                            {"s": 0.0, "m": -np.inf}, comp, (2, 2), (2, 1), "VALID")
    np.testing.assert_allclose(np.asarray(out["s"]),
                               np_window_reduce(x, (2, 2), (2, 1), [(0, 0)] * 2, np.sum, 0),
                               rtol=1e-6, atol=2e-6)  # 4-term float32 sums in another order
    np.testing.assert_array_equal(np.asarray(out["m"]),
                                  np_window_reduce(y, (2, 2), (2, 1), [(0, 0)] * 2, np.max, 0))
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce_window((jnp.asarray(x),), [0.0], lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="wrong number of window_dimensions"):
        lax.reduce_window(jnp.asarray(x), 0.0, lax.add, (2,), (1,), "VALID")
    with pytest.raises(TypeError, match="must have every element be strictly positive"):
        lax.reduce_window(jnp.asarray(x), 0.0, lax.add, (2, 0), (1, 1), "VALID")


def test_max_pool_under_vmap_and_jit_of_grad(rng):
    x = rng.standard_normal((3, 2, 8, 8, 4)).astype(np.float32)

    def loss(a):
        return jnp.sum(max_pool(a, (2, 2), (2, 2), "SAME") ** 2)

    g = tessera.jit(tessera.vmap(tessera.grad(loss)))(jnp.asarray(x))
    loop = np.stack([np.asarray(tessera.grad(loss)(jnp.asarray(x[i]))) for i in range(3)])
    np.testing.assert_allclose(np.asarray(g), loop, rtol=1e-6)
