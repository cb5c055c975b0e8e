"""tessera.numpy's array manipulation (numpy_manip.h; py_numpy_manip.cpp): axes functions,
joining and splitting, tile/repeat/flip/roll/rot90, pad in every mode with NumPy's per-side
arguments, diagonals and triangles, meshgrid, products and einsum, where, the array methods,
nested-list asarray and reshape orders — against NumPy 1.24 on fresh random inputs. Helpers
come from test_numpy_api.py; the seed is TESSERA_TEST_SEED (or the clock).
"""
import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from test_numpy_api import check, close, rand_values


# ---------------------------------------------------------------------------------------------
# Manipulation
def test_axes_functions_vs_numpy(rng):
    v = rng.standard_normal((2, 1, 3, 1)).astype(np.float32)
    x = jnp.asarray(v)
    close(jnp.swapaxes(x, 0, -2), np.swapaxes(v, 0, -2))
    close(x.swapaxes(1, 2), v.swapaxes(1, 2))
    close(jnp.moveaxis(x, 0, -1), np.moveaxis(v, 0, -1))
    close(jnp.moveaxis(x, (0, 2), (3, 0)), np.moveaxis(v, (0, 2), (3, 0)))
    close(jnp.squeeze(x), np.squeeze(v))
    close(jnp.squeeze(x, axis=(1, 3)), np.squeeze(v, axis=(1, 3)))
    close(x.squeeze(-1), v.squeeze(-1))
    close(jnp.expand_dims(x, (0, -1)), np.expand_dims(v, (0, -1)))
    close(jnp.ravel(x), np.ravel(v))
    close(x.flatten(), v.flatten())
    close(x.ravel(), v.ravel())
    close(x.mT, np.swapaxes(v, -1, -2))
    for f in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for s in [(), (3,), (2, 3), (2, 3, 4)]:
            u = rng.standard_normal(s).astype(np.float32)
            close(getattr(jnp, f)(jnp.asarray(u)), getattr(np, f)(u))
        outs = getattr(jnp, f)(jnp.ones(2), jnp.ones(()))
        assert isinstance(outs, list) and len(outs) == 2
    a, b = jnp.broadcast_arrays(jnp.ones((3, 1)), jnp.zeros((4,)))
    assert a.shape == b.shape == (3, 4)
    assert jnp.broadcast_shapes((3, 1), (1, 4)) == (3, 4)
    with pytest.raises(ValueError):
        jnp.squeeze(x, axis=0)


def test_join_and_split_vs_numpy(rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.integers(0, 5, size=(4, 3)).astype(np.int32)
    c = rng.standard_normal((2, 3)).astype(np.float16)
    check(jnp.concatenate([jnp.asarray(a), jnp.asarray(b)]), np.concatenate([a, b]).astype(np.float32),
          "float32", False)
    check(jnp.concatenate([jnp.asarray(a), jnp.asarray(c)], axis=1),
          np.concatenate([a, c.astype(np.float32)], axis=1), "float32", False)
    check(jnp.concatenate([jnp.asarray(a), jnp.asarray(b)], axis=None),
          np.concatenate([a, b], axis=None).astype(np.float32), "float32", False)
    check(jnp.concatenate([jnp.asarray(b), jnp.asarray(b)], dtype=jnp.float16),
          np.concatenate([b, b]).astype(np.float16), "float16", False)
    check(jnp.concatenate(jnp.asarray(b)), np.concatenate(b), "int32", False)
    for axis in (0, 1, 2, -1):
        check(jnp.stack([jnp.asarray(a), jnp.asarray(c)], axis=axis),
              np.stack([a, c.astype(np.float32)], axis=axis), "float32", False)
    for f in ("hstack", "vstack", "dstack", "column_stack"):
        for shapes in [[(3,), (3,)], [(2, 3), (2, 3)], [(), ()]] if f != "column_stack" else \
                [[(3,), (3,)], [(3, 2), (3,)]]:
            us = [rng.standard_normal(s).astype(np.float32) for s in shapes]
            close(getattr(jnp, f)([jnp.asarray(u) for u in us]), getattr(np, f)(us))
    v = rng.standard_normal((6, 4, 2)).astype(np.float32)
    x = jnp.asarray(v)
    for ios, axis in [(3, 0), (2, 1), ([1, 4], 0), ([0, 2, 2, 10], 1), ((1,), -1)]:
        got = jnp.split(x, ios, axis=axis)
        exp = np.split(v, ios, axis=axis)
        assert len(got) == len(exp)
        for g, e in zip(got, exp):
            close(g, e)
    for n in (4, 5):
        for g, e in zip(jnp.array_split(x, n), np.array_split(v, n)):
            close(g, e)
    for f, n in [("hsplit", 2), ("vsplit", 3), ("dsplit", 2), ("hsplit", [1, 3])]:
        for g, e in zip(getattr(jnp, f)(x, n), getattr(np, f)(v, n)):
            close(g, e)
    with pytest.raises(ValueError):
        jnp.split(x, 4)


def test_tile_repeat_flip_roll_rot90_vs_numpy(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    for reps in [2, (2, 1), (1, 2, 3), (0, 2)]:
        close(jnp.tile(x, reps), np.tile(v, reps))
    for reps, axis in [(2, None), (3, 0), ([1, 0, 2], 0), ([1, 2, 0, 1], 1), (0, 1)]:
        close(jnp.repeat(x, reps, axis=axis), np.repeat(v, reps, axis=axis))
        close(x.repeat(reps, axis), np.repeat(v, reps, axis=axis))
    close(jnp.repeat(x, 2, axis=0, total_repeat_length=4), np.repeat(v, 2, axis=0)[:4])
    close(jnp.repeat(x, 1, axis=1, total_repeat_length=6),
          np.concatenate([v, np.repeat(v[:, -1:], 2, axis=1)], axis=1))
    for axis in [None, 0, 1, (0, 1), -1]:
        close(jnp.flip(x, axis), np.flip(v, axis))
    close(jnp.fliplr(x), np.fliplr(v))
    close(jnp.flipud(x), np.flipud(v))
    for shift, axis in [(2, None), (-7, None), (1, 0), (-1, 1), ((1, 2), (0, 1)), (3, (0, 1)),
                        ((1, 2), None)]:
        close(jnp.roll(x, shift, axis), np.roll(v, shift, axis))
    for k in range(-2, 6):
        close(jnp.rot90(x, k), np.rot90(v, k))
    u = rng.standard_normal((2, 3, 4)).astype(np.float32)
    close(jnp.rot90(jnp.asarray(u), 1, axes=(2, 0)), np.rot90(u, 1, axes=(2, 0)))


PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum",
             "minimum", "mean", "median", "empty"]


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_vs_numpy(rng, mode):
    for shape in [(5,), (3, 4), (2, 3, 2)]:
        for dtype in ["float32", "int32"]:
            v = rand_values(rng, shape, dtype, specials=False)
            x = jnp.asarray(v)
            widths = [2, (1, 3), [(0, 2)] + [(1, 0)] * (len(shape) - 1),
                      [(int(rng.integers(0, 4)), int(rng.integers(0, 4))) for _ in shape]]
            if mode == "wrap":
                widths = [w for w in widths if not isinstance(w, int)] + [1]
            if mode == "linear_ramp" and dtype == "int32":
                continue  # test_pad_linear_ramp_integers_floor
            for pw in widths:
                if mode == "wrap":
                    # Periodic, as JAX (NumPy 1.24 repeats the wrong element when an asymmetric
                    # pad exceeds the axis): index with positions modulo the axis length.
                    pairs = np.broadcast_to(np.asarray(pw), (len(shape), 2))
                    exp = v[np.ix_(*[np.arange(-b, n + a) % n
                                     for (b, a), n in zip(pairs, shape)])]
                else:
                    exp = np.pad(v, pw, mode=mode)
                got = jnp.pad(x, pw, mode=mode)
                if mode == "empty":
                    assert got.shape == exp.shape and str(got.dtype) == dtype
                    continue
                if mode in ("mean", "median") and dtype == "int32":
                    exp = np.pad(v, pw, mode=mode)  # NumPy rounds the statistic for integers
                check(got, exp, dtype, False, rtol=1e-6, atol=1e-6)


def test_pad_linear_ramp_integers_floor(rng):
    v = rng.integers(-20, 20, size=(4, 3)).astype(np.int32)
    for pw, ev in [(3, 0), ((2, 3), 7), (((1, 4), (3, 2)), -5)]:
        check(jnp.pad(jnp.asarray(v), pw, mode="linear_ramp", end_values=ev),
              np.pad(v, pw, mode="linear_ramp", end_values=ev), "int32", False)


def test_pad_options_vs_numpy(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    for cv in [1.5, (1.0, 2.0), ((1, 2), (3, 4))]:
        close(jnp.pad(x, ((1, 2), (2, 1)), constant_values=cv),
              np.pad(v, ((1, 2), (2, 1)), constant_values=cv))
    close(jnp.pad(x, 2, constant_values=jnp.asarray(np.float32(-7))),
          np.pad(v, 2, constant_values=-7))
    for ev in [3.0, (1.0, -1.0), ((1, 2), (3, 4))]:
        close(jnp.pad(x, ((2, 1), (1, 3)), mode="linear_ramp", end_values=ev),
              np.pad(v, ((2, 1), (1, 3)), mode="linear_ramp", end_values=ev), rtol=1e-5, atol=1e-5)
    for mode in ("reflect", "symmetric"):
        close(jnp.pad(x, ((2, 3), (1, 2)), mode=mode, reflect_type="odd"),
              np.pad(v, ((2, 3), (1, 2)), mode=mode, reflect_type="odd"), rtol=1e-5, atol=1e-5)
    for mode in ("maximum", "minimum", "mean", "median"):
        for sl in [1, 2, (1, 3), ((1, 2), (3, 1)), 10]:
            close(jnp.pad(x, ((2, 1), (1, 2)), mode=mode, stat_length=sl),
                  np.pad(v, ((2, 1), (1, 2)), mode=mode, stat_length=sl), rtol=1e-5, atol=1e-6)
    iv = rng.integers(-9, 9, size=(4, 3)).astype(np.int32)
    check(jnp.pad(jnp.asarray(iv), 2, mode="mean", stat_length=2),
          np.pad(iv, 2, mode="mean", stat_length=2), "int32", False)
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(ValueError):
        jnp.pad(x, 1, mode="bogus")
    # grad through pad: the cotangent of the interior
    g = tessera.grad(lambda a: jnp.sum(jnp.pad(a, 1, mode="constant") * 2.0))(x)
    close(g, np.full_like(v, 2.0))


def test_diagonals_and_triangles_vs_numpy(rng):
    v = rng.standard_normal((4, 5)).astype(np.float32)
    x = jnp.asarray(v)
    u = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for off in range(-4, 6):
        close(jnp.diagonal(x, off), np.diagonal(v, off))
        close(jnp.trace(x, off), np.trace(v.astype(np.float64), off).astype(np.float32))
        close(jnp.tril(x, off), np.tril(v, off))
        close(jnp.triu(x, off), np.triu(v, off))
        close(jnp.tri(3, 4, off), np.tri(3, 4, off, dtype=np.float32), "float32")
    close(jnp.diagonal(jnp.asarray(u), 1, 2, 0), np.diagonal(u, 1, 2, 0))
    close(jnp.asarray(u).diagonal(0, 1, 2), u.diagonal(0, 1, 2))
    close(jnp.asarray(u).trace(axis1=1, axis2=2), u.astype(np.float64).trace(axis1=1, axis2=2),
          rtol=1e-5, atol=1e-5)
    w = rng.standard_normal(4).astype(np.float32)
    for k in (-2, 0, 1):
        close(jnp.diag(jnp.asarray(w), k), np.diag(w, k))
        close(jnp.diag(x, k), np.diag(v, k))
    iv = rng.integers(0, 5, size=(3, 3)).astype(np.int8)
    check(jnp.trace(jnp.asarray(iv)), np.trace(iv.astype(np.int32)), "int32", False)
    close(jnp.tril(jnp.asarray(u), -1), np.tril(u, -1))
    assert jnp.tri(3, dtype=jnp.int32).dtype == np.int32


def test_meshgrid_vs_numpy(rng):
    a = rng.standard_normal(3).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    c = rng.standard_normal(2).astype(np.float32)
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            got = jnp.meshgrid(jnp.asarray(a), jnp.asarray(b), jnp.asarray(c), indexing=indexing,
                               sparse=sparse)
            exp = np.meshgrid(a, b, c, indexing=indexing, sparse=sparse)
            assert len(got) == 3
            for g, e in zip(got, exp):
                close(g, e)
    with pytest.raises(ValueError):
        jnp.meshgrid(jnp.asarray(a), indexing="yx")


def test_products_vs_numpy(rng):
    def r(*s):
        return rng.standard_normal(s).astype(np.float32)
    t = dict(rtol=1e-5, atol=1e-5)
    a, b = r(2, 3, 4), r(4, 3, 5)
    close(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), axes=([1, 2], [1, 0])),
          np.tensordot(a, b, axes=([1, 2], [1, 0])), **t)
    close(jnp.tensordot(jnp.asarray(a[0]), jnp.asarray(a[1]), 2), np.tensordot(a[0], a[1], 2), **t)
    close(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), 1), np.tensordot(a, b, 1), **t)
    close(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), 0), np.tensordot(a, b, 0), **t)
    u, w = r(3), r(4)
    close(jnp.outer(jnp.asarray(u), jnp.asarray(w)), np.outer(u, w), **t)
    close(jnp.outer(jnp.asarray(a[0]), jnp.asarray(w)), np.outer(a[0], w), **t)
    m = r(5, 4)
    close(jnp.inner(jnp.asarray(a), jnp.asarray(m)), np.inner(a, m), **t)
    close(jnp.inner(jnp.asarray(u), jnp.asarray(u)), np.inner(u, u), **t)
    close(jnp.vdot(jnp.asarray(a[0]), jnp.asarray(a[1])), np.vdot(a[0], a[1]), **t)
    k1, k2 = r(2, 3), r(3, 2)
    close(jnp.kron(jnp.asarray(k1), jnp.asarray(k2)), np.kron(k1, k2), **t)
    close(jnp.kron(jnp.asarray(u), jnp.asarray(k1)), np.kron(u, k1), **t)
    g = rng.integers(-3, 3, size=(3, 4)).astype(np.int8)
    check(jnp.tensordot(jnp.asarray(g), jnp.asarray(g.T), 1, preferred_element_type=jnp.int32),
          np.tensordot(g.astype(np.int32), g.T.astype(np.int32), 1), "int32", False)


EINSUM_SPECS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("ij->ji", [(3, 4)]), ("bhqd,bhkd->bhqk",
                                                                  [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)]),
    ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 2)]), ("i,i", [(5,), (5,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("...j,j", [(2, 3, 4), (4,)]), ("i...->...", [(3, 2, 2)]),
    ("a,b,c->abc", [(2,), (3,), (4,)]), ("ijj->i", [(2, 3, 3)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_SPECS, ids=[s for s, _ in EINSUM_SPECS])
def test_einsum_vs_numpy(rng, spec, shapes):
    ops = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = jnp.einsum(spec, *[jnp.asarray(o) for o in ops])
    exp = np.einsum(spec, *[o.astype(np.float64) for o in ops])
    close(got, exp.astype(np.float32), "float32", rtol=1e-5, atol=1e-5)


def test_einsum_sublist_form_and_dtypes(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    close(jnp.einsum(jnp.asarray(a), [0, 1], jnp.asarray(b), [1, 2], [0, 2]),
          np.einsum(a, [0, 1], b, [1, 2], [0, 2]), rtol=1e-5, atol=1e-5)
    close(jnp.einsum(jnp.asarray(a), [Ellipsis, 1], [Ellipsis]),
          np.einsum(a, [Ellipsis, 1], [Ellipsis]), rtol=1e-5, atol=1e-5)
    ia = rng.integers(-3, 3, size=(3, 4)).astype(np.int8)
    check(jnp.einsum("ij,ij->i", jnp.asarray(ia), jnp.asarray(ia),
                     preferred_element_type=jnp.int32),
          np.einsum("ij,ij->i", ia.astype(np.int32), ia.astype(np.int32)), "int32", False)
    check(jnp.einsum("ij,j->i", jnp.asarray(a), jnp.asarray(b[:, 0].astype(np.float16))),
          a @ b[:, 0].astype(np.float16).astype(np.float32), "float32", False, rtol=1e-5,
          atol=1e-5)


def test_where_forms(rng):
    c = rng.random((3, 4)) < 0.5
    a = rng.standard_normal((3, 4)).astype(np.float32)
    check(jnp.where(jnp.asarray(c), jnp.asarray(a), 0.0), np.where(c, a, np.float32(0)),
          "float32", False)
    for got, want in zip(jnp.where(jnp.asarray(c)), np.where(c)):  # one argument: nonzero
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError, match="Either both or neither"):
        jnp.where(jnp.asarray(c), jnp.asarray(a))


def test_array_methods_mirror_numpy(rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    x = jnp.asarray(v)
    close(x.min(axis=0), v.min(axis=0))
    close(x.min(initial=-10.0), min(v.min(), -10.0))
    close(x.prod(1), v.astype(np.float64).prod(1), rtol=1e-5)
    close(x.std(), v.astype(np.float64).std(), rtol=1e-5)
    close(x.ptp(1), v.ptp(1))
    check(x.all(), bool(v.all()), "bool", False)
    check((x > 0).any(axis=1), (v > 0).any(axis=1), "bool", False)
    close(x.round(1), np.round(v.astype(np.float64), 1).astype(np.float32), rtol=1e-6)
    close(x.sum(where=jnp.asarray(v > 0)), v[v > 0].astype(np.float64).sum(), rtol=1e-5)
    close(x.mean(where=jnp.asarray(v > 0)), v[v > 0].astype(np.float64).mean(), rtol=1e-5)
    close(x.max(where=jnp.asarray(v > 0), initial=0.0), np.max(v, where=v > 0, initial=0.0))


def test_asarray_stacks_nested_lists(rng):
    v = rng.standard_normal((2, 2, 3)).astype(np.float32)
    rows = [[jnp.asarray(v[0, 0]), v[0, 1]], [jnp.asarray(v[1, 0]), jnp.asarray(v[1, 1])]]
    check(jnp.asarray(rows), v, "float32", False)
    check(jnp.array(rows, dtype=jnp.float16), v.astype(np.float16), "float16", False)
    # promotion across elements, Python scalars weak
    check(jnp.asarray([jnp.asarray(np.int8(1)), 2]), np.array([1, 2], np.int8), "int8", False)
    check(jnp.asarray([jnp.asarray(np.int32(1)), 2.5]), np.array([1, 2.5], np.float32), "float32",
          False)
    # vmap/grad through the stacking
    out = tessera.vmap(lambda r: jnp.asarray([r[0], r[1] * 2.0]))(jnp.asarray(v[0]))
    close(out, np.stack([v[0][:, 0], v[0][:, 1] * 2], axis=1))


def test_reshape_order_vs_numpy(rng):
    v = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for shape in [(4, 6), (-1, 2), (24,), (3, 2, 4)]:
        for order in ("C", "F"):
            got = jnp.reshape(jnp.asarray(v), shape, order=order)
            np.testing.assert_array_equal(np.asarray(got), np.reshape(v, shape, order=order))
            np.testing.assert_array_equal(np.asarray(jnp.asarray(v).reshape(shape, order=order)),
                                          v.reshape(shape, order=order))
    with pytest.raises(NotImplementedError, match="order=A"):
        jnp.reshape(jnp.asarray(v), (24,), order="A")
    with pytest.raises(ValueError, match="order"):
        jnp.reshape(jnp.asarray(v), (24,), order="K")
