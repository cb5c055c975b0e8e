"""pad and concatenate fused under tessera.jit as guarded loads, dynamic_slice as the kernel's
symbols (clamped run-time starts): a padded, concatenated or dynamically sliced computation is
one kernel with no buffer in between, bitwise equal to eager evaluation and to NumPy (the data
movement is exact), for the pad modes, stacking functions and loop slicing JAX programs use.
The seed is TESSERA_TEST_SEED (or the clock), printed by conftest's `rng`."""
import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a, b)


def executable_text(f, *args):
    text = jax.jit(f).lower(*args).compile().as_text()
    return text[text.index("executable"):]


@pytest.mark.parametrize("width", [((1, 2), (3, 0)), ((0, 0), (5, 7)), ((2, 2), (0, 1))])
def test_constant_pad_of_a_computation_is_one_kernel(rng, width):
    x = rng.standard_normal((6, 9)).astype(np.float32)

    def f(x):
        return jnp.pad(x * 2.0 + 1.0, width, constant_values=-1.5) * 3.0

    got = jax.jit(f)(x)
    same(got, f(x))
    same(got, (np.pad(x * np.float32(2) + np.float32(1), width, constant_values=-1.5)
               * np.float32(3)).astype(np.float32))
    exe = executable_text(f, x)
    assert exe.count("= fused ") == 1, exe
    assert " if " in exe, exe  # guarded loads
    assert "= pad" not in exe, exe


def test_lax_pad_crops_with_negative_low_high(rng):
    x = rng.standard_normal((5, 8)).astype(np.float32)

    def f(x, v):
        return lax.pad(jnp.abs(x), v, [(-1, 2, 0), (3, -2, 0)]) - 1.0

    v = np.float32(0.25)
    got = jax.jit(f)(x, v)
    same(got, f(x, v))
    want = np.pad(np.abs(x), ((0, 2), (3, 0)), constant_values=0.25)[1:, :-2] - np.float32(1)
    same(got, want)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_and_stack_of_computations(rng, axis):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)

    def f(a, b):
        return jnp.concatenate([a + 1.0, b * b, a - b], axis=axis) * 0.5

    got = jax.jit(f)(a, b)
    same(got, f(a, b))
    same(got, np.concatenate([a + np.float32(1), b * b, a - b], axis=axis) * np.float32(0.5))
    exe = executable_text(f, a, b)
    assert exe.count("= fused ") == 1, exe
    assert "concatenate" not in exe, exe

    def g(a, b):
        return jnp.stack([jnp.sin(a), b + 2.0], axis=axis) - 1.0

    same(jax.jit(g)(a, b), g(a, b))


def test_integer_and_bool_pieces(rng):
    a = rng.integers(-50, 50, (3, 5)).astype(np.int32)
    b = rng.integers(-50, 50, (3, 2)).astype(np.int32)

    def f(a, b):
        c = jnp.concatenate([a * 3, b - 1], axis=1)
        return jnp.pad(c > 0, ((1, 1), (0, 2)), constant_values=True)

    same(jax.jit(f)(a, b), f(a, b))
    same(jax.jit(f)(a, b), np.pad(np.concatenate([a * 3, b - 1], 1) > 0, ((1, 1), (0, 2)),
                                  constant_values=True))


def test_pad_feeding_a_row_reduction_and_its_gradient(rng):
    x = rng.standard_normal((8, 30)).astype(np.float32)

    def f(x):
        p = jnp.pad(x * x, ((0, 0), (2, 5)), constant_values=1.0)
        return jnp.sum(p, axis=1)

    same(jax.jit(f)(x), f(x))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)),
                               (x.astype(np.float64) ** 2).sum(1) + 7, rtol=1e-5)
    # The gradient's transpose is a slice: jit and eager agree.
    loss = lambda x: jnp.sum(f(x) ** 2)  # noqa: E731
    same(jax.jit(jax.grad(loss))(x), jax.grad(loss)(x))


def test_edge_reflect_and_wrap_pads_match_numpy(rng):
    x = rng.standard_normal((5, 6)).astype(np.float32)
    for mode in ["edge", "reflect", "symmetric", "wrap"]:
        def f(x, mode=mode):
            return jnp.pad(x + 1.0, ((2, 1), (3, 2)), mode=mode) * 2.0

        got = jax.jit(f)(x)
        same(got, f(x))
        same(got, np.pad(x + np.float32(1), ((2, 1), (3, 2)), mode=mode) * np.float32(2))


@pytest.mark.parametrize("start", [0, 3, -2, 50])
def test_dynamic_slice_of_a_computation_is_one_kernel(rng, start):
    x = rng.standard_normal((10, 6)).astype(np.float32)

    def f(x, i):
        return lax.dynamic_slice(x * 2.0 + 1.0, (i, 1), (4, 5)) * 3.0

    i = np.int32(start)
    got = jax.jit(f)(x, i)
    same(got, f(x, i))
    # lax.dynamic_slice maps a negative start to start + dim, then XLA clamps into
    # [0, dim - size].
    s = min(max(start + 10 if start < 0 else start, 0), 10 - 4)
    same(got, ((x * np.float32(2) + np.float32(1))[s:s + 4, 1:6] * np.float32(3)))
    exe = executable_text(f, x, i)
    # One kernel reads x through the clamped starts (symbols); the start's negative-index
    # mapping (i + 10 where i < 0, as JAX's lax.dynamic_slice does) is a scalar kernel before it.
    assert exe.count("= fused ") <= 2, exe
    assert exe.count("= clamp(load p") == 1, exe
    assert "eager dynamic_slice" not in exe, exe


def test_dynamic_index_in_a_scan_body(rng):
    xs = rng.standard_normal((7, 16)).astype(np.float32)

    def f(xs):
        def body(c, i):
            row = lax.dynamic_index_in_dim(xs, i, keepdims=False)
            return c + jnp.tanh(row * 0.5), jnp.sum(row)
        return lax.scan(body, jnp.zeros(16, jnp.float32), jnp.arange(7))

    got = jax.jit(f)(xs)
    want = f(xs)
    for g, w in zip(got, want):
        same(g, w)
    np.testing.assert_allclose(np.asarray(got[0]), np.tanh(xs.astype(np.float64) * 0.5).sum(0),
                               rtol=1e-5, atol=1e-6)


def test_dynamic_slice_unsigned_and_int64_starts(rng):
    x = rng.standard_normal((12,)).astype(np.float32)
    f = lambda x, i: lax.dynamic_slice(jnp.exp(x), (i,), (5,)) + 1.0  # noqa: E731
    for i in [np.uint8(3), np.uint32(200), np.int16(-7)]:
        same(jax.jit(f)(x, i), f(x, i))


@pytest.mark.parametrize("start", [(0, 0), (2, 3), (-1, 1), (40, -40)])
def test_dynamic_update_slice_of_computations_is_one_kernel(rng, start):
    x = rng.standard_normal((6, 8)).astype(np.float32)
    u = rng.standard_normal((2, 5)).astype(np.float32)

    def f(x, u, i, j):
        return lax.dynamic_update_slice(x * 2.0, u - 1.0, (i, j)) + 0.5

    i, j = np.int32(start[0]), np.int32(start[1])
    got = jax.jit(f)(x, u, i, j)
    same(got, f(x, u, i, j))
    want = x * np.float32(2)
    si = min(max(start[0] + 6 if start[0] < 0 else start[0], 0), 4)
    sj = min(max(start[1] + 8 if start[1] < 0 else start[1], 0), 3)
    want[si:si + 2, sj:sj + 5] = u - np.float32(1)
    same(got, want + np.float32(0.5))
    exe = executable_text(f, x, u, i, j)
    assert "eager dynamic_update_slice" not in exe, exe


def test_gradient_of_a_dynamic_index_under_jit(rng):
    x = rng.standard_normal((9, 4)).astype(np.float32)

    def loss(x, i):
        row = lax.dynamic_index_in_dim(x, i, keepdims=False)
        return jnp.sum(jnp.tanh(row) * 2.0)

    for i in [0, 4, 8, -2]:
        g = jax.jit(jax.grad(loss))(x, np.int32(i))
        same(g, jax.grad(loss)(x, np.int32(i)))
        want = np.zeros_like(x)
        want[i] = 2.0 * (1.0 - np.tanh(x[i].astype(np.float64)) ** 2)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6)


def test_roll_hstack_tile_are_one_kernel_each(rng):
    x = rng.standard_normal((5, 7)).astype(np.float32)
    cases = [
        (lambda x: jnp.roll(x * 2.0, 3, axis=1) + 1.0,
         lambda x: np.roll(x * np.float32(2), 3, axis=1) + np.float32(1)),
        (lambda x: jnp.roll(x, (2, -1), axis=(0, 1)) - x,
         lambda x: np.roll(x, (2, -1), axis=(0, 1)) - x),
        (lambda x: jnp.hstack([x, x[:, :2] * 3.0]),
         lambda x: np.hstack([x, x[:, :2] * np.float32(3)])),
        (lambda x: jnp.tile(x + 1.0, (2, 1)), lambda x: np.tile(x + np.float32(1), (2, 1))),
    ]
    for f, ref in cases:
        got = jax.jit(f)(x)
        same(got, f(x))
        same(got, ref(x))
        assert executable_text(f, x).count("= fused ") == 1, executable_text(f, x)
