"""tessera.numpy's reductions and statistics (numpy_reductions.h; py_numpy_reductions.cpp):
where/initial, ddof/correction, promote_integers and dtype, the nan-reductions, argmax/argmin,
comparisons and cleaning, clip, linalg.norm, gradients of the statistics vs finite differences
and the x64 dtypes — against NumPy 1.24 on fresh random inputs, compared after casting to JAX's
result dtype. Helpers come from test_numpy_api.py; the seed is TESSERA_TEST_SEED (or the clock).
"""
import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from test_numpy_api import cast_expected, check, close, is_float, rand_values, tol


# ---------------------------------------------------------------------------------------------
# Reductions
def _sum_dtype(d):
    return {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
            "uint16": "uint32"}.get(d, d)


def _axes(rng, ndim):
    choices = [None]
    if ndim:
        choices += [int(rng.integers(-ndim, ndim)), tuple(sorted(set(
            int(a) for a in rng.integers(0, ndim, size=int(rng.integers(1, ndim + 1))))))]
    return choices


RED_SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var", "std", "ptp", "all",
                                "any", "count_nonzero"])
def test_reductions_vs_numpy(rng, op, dtype):
    for shape in RED_SHAPES:
        v = rand_values(rng, shape, dtype, specials=op not in ("ptp",), small_int=op == "prod")
        x = jnp.asarray(v)
        v64 = v.astype(np.float64) if dtype != "bool" else v
        for axis in _axes(rng, len(shape)):
            for keepdims in (False, True):
                kw = dict(axis=axis, keepdims=keepdims)
                n_red = int(np.prod([shape[a] for a in (range(len(shape)) if axis is None else
                                                        np.atleast_1d(axis))] or [1]))
                if op == "ptp" and dtype == "bool":
                    with pytest.raises(TypeError, match="bool"):
                        jnp.ptp(x, **kw)
                    continue
                if op in ("max", "min", "ptp") and n_red == 0:
                    with pytest.raises(ValueError):
                        getattr(jnp, op)(x, **kw)
                    continue
                with np.errstate(all="ignore"), _nowarn():
                    if op in ("sum", "prod"):
                        out = _sum_dtype(dtype)
                        exp = getattr(np, op)(v64, **kw).astype(np.float64 if is_float(out) else out)
                    elif op in ("max", "min", "ptp"):
                        out = dtype
                        exp = getattr(np, op)(v, **kw)
                    elif op in ("mean", "var", "std"):
                        out = dtype if is_float(dtype) else "float32"
                        exp = getattr(np, op)(v64.astype(np.float64), **kw)
                    elif op in ("all", "any"):
                        out = "bool"
                        exp = getattr(np, op)(v, **kw)
                    else:
                        out = "int32"
                        exp = np.count_nonzero(v, **kw)
                got = getattr(jnp, op)(x, **kw)
                meth = getattr(x, op)(**kw) if op != "count_nonzero" else got
                t = tol(out)
                if out == "float16":
                    t = dict(rtol=1e-2, atol=1e-2)
                if out == "float32" and op in ("sum", "var", "std", "mean", "prod"):
                    t = dict(rtol=1e-5, atol=1e-5)  # float32 accumulation vs float64
                for r in (got, meth):
                    check(r, cast_expected(exp, out), out, False, **t)


class _nowarn:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *a):
        return self._w.__exit__(*a)


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any",
                                "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
                                "nanstd"])
def test_reductions_with_where_and_initial(rng, op):
    for shape, mshape in [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((5,), ())]:
        v = rng.standard_normal(shape).astype(np.float32)
        if op.startswith("nan"):
            v[rng.random(shape) < 0.3] = np.nan
        if op in ("all", "any"):
            v = (rng.random(shape) < 0.7).astype(np.float32)
        m = rng.random(mshape) < 0.6
        x = jnp.asarray(v)
        for axis in _axes(rng, len(shape)):
            kw = dict(axis=axis, where=jnp.asarray(m))
            nkw = dict(axis=axis, where=np.broadcast_to(m, shape))
            if op in ("sum", "prod", "max", "min", "nansum", "nanprod", "nanmax", "nanmin"):
                init = float(rng.standard_normal())
                kw["initial"] = nkw["initial"] = init
            with np.errstate(all="ignore"), _nowarn():
                exp = getattr(np, op)(v.astype(np.float64), **nkw)
            if op in ("all", "any"):
                check(getattr(jnp, op)(x, **kw), exp, "bool", False)
            else:
                check(getattr(jnp, op)(x, **kw), cast_expected(exp, "float32"), "float32", False,
                      rtol=1e-5, atol=1e-6)
    # max/min with a mask need initial (as JAX)
    with pytest.raises(ValueError):
        jnp.max(jnp.ones((3,)), where=jnp.asarray(np.array([True, False, True])))


def test_ddof_and_correction(rng):
    v = rng.standard_normal((4, 6)).astype(np.float32)
    x = jnp.asarray(v)
    for ddof in (0, 1, 2):
        close(jnp.var(x, axis=1, ddof=ddof), np.var(v.astype(np.float64), axis=1, ddof=ddof),
              "float32")
        close(jnp.std(x, ddof=ddof), np.std(v.astype(np.float64), ddof=ddof), "float32")
        close(x.var(0, ddof=ddof), np.var(v.astype(np.float64), 0, ddof=ddof), "float32")
        close(jnp.nanstd(x, axis=0, ddof=ddof), np.nanstd(v, axis=0, ddof=ddof), "float32")
    close(jnp.var(x, correction=1), np.var(v.astype(np.float64), ddof=1), "float32")
    with pytest.raises(ValueError):
        jnp.var(x, ddof=1, correction=1)
    one = jnp.asarray(np.ones((1,), np.float32))
    assert np.isnan(float(jnp.var(one, ddof=1)))


def test_promote_integers_and_dtype_argument(rng):
    v = rng.integers(-5, 5, size=(3, 4)).astype(np.int8)
    x = jnp.asarray(v)
    assert jnp.sum(x).dtype == np.int32
    assert jnp.sum(x, promote_integers=False).dtype == np.int8
    assert jnp.sum(x, dtype=jnp.float32).dtype == np.float32
    close(jnp.sum(x, dtype="float16"), np.sum(v).astype(np.float16), "float16")
    close(jnp.prod(jnp.asarray(v[:, :2]), axis=1, dtype=jnp.int16),
          np.prod(v[:, :2].astype(np.int16), axis=1), "int16")
    close(jnp.mean(x, dtype=jnp.float16), np.mean(v.astype(np.float64)).astype(np.float16),
          "float16", rtol=1e-3, atol=1e-3)


def test_nan_reductions_vs_numpy(rng):
    for shape in [(5,), (3, 4), (2, 3, 4), (0, 3)]:
        v = rng.standard_normal(shape).astype(np.float32)
        v[rng.random(shape) < 0.3] = np.nan
        if len(shape) >= 2 and shape[0]:
            v[0] = np.nan  # an all-NaN row
        x = jnp.asarray(v)
        for axis in _axes(rng, len(shape)):
            for op in ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"]:
                n_red = int(np.prod([shape[a] for a in (range(len(shape)) if axis is None else
                                                        np.atleast_1d(axis))] or [1]))
                if op in ("nanmax", "nanmin") and n_red == 0:
                    continue
                with np.errstate(all="ignore"), _nowarn():
                    exp = getattr(np, op)(v.astype(np.float64), axis=axis)
                check(getattr(jnp, op)(x, axis=axis), cast_expected(exp, "float32"), "float32",
                      False, rtol=1e-5, atol=1e-6)
    iv = rng.integers(-3, 3, size=(3, 4)).astype(np.int32)
    check(jnp.nansum(jnp.asarray(iv), axis=0), np.sum(iv, axis=0), "int32", False)


def test_argmax_argmin_vs_numpy(rng):
    for shape in [(5,), (3, 4), (2, 3, 4), (1,)]:
        for dtype in ["float32", "int32", "uint8", "bool", "float16"]:
            v = rand_values(rng, shape, dtype, specials=False)
            if dtype == "float32" and v.size > 2:
                v.reshape(-1)[int(rng.integers(0, v.size))] = np.nan
            x = jnp.asarray(v)
            axes = [None] + list(range(-len(shape), len(shape)))
            for axis in axes:
                for keepdims in (False, True):
                    for op in ("argmax", "argmin"):
                        exp = getattr(np, op)(v, axis=axis, keepdims=keepdims)
                        check(getattr(jnp, op)(x, axis=axis, keepdims=keepdims), exp, "int32",
                              False)
                        check(getattr(x, op)(axis, keepdims=keepdims), exp, "int32", False)
    v = rng.standard_normal((4, 5)).astype(np.float32)
    v[rng.random((4, 5)) < 0.4] = np.nan
    v[:, 1] = np.nan
    v[:, 0] = rng.standard_normal(4)  # no all-NaN row
    x = jnp.asarray(v)
    for op in ("nanargmax", "nanargmin"):
        exp = getattr(np, op)(v, axis=1)
        check(getattr(jnp, op)(x, axis=1), exp, "int32", False)
        # an all-NaN slice gives -1 (NumPy raises)
        np.testing.assert_array_equal(np.asarray(getattr(jnp, op)(x, axis=0))[1], -1)
    with pytest.raises(ValueError):
        jnp.argmax(jnp.zeros((0, 3)), axis=0)


def test_out_argument_raises_as_jax():
    x = jnp.ones((2, 3))
    for name in ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "ptp", "all",
                 "any", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                 "argmax", "argmin"]:
        with pytest.raises(NotImplementedError) as e:
            getattr(jnp, name)(x, out=x)
        assert str(e.value) == f"The 'out' argument to jnp.{name} is not supported."
    with pytest.raises(NotImplementedError, match="jnp.stack"):
        jnp.stack([x, x], out=x)
    with pytest.raises(NotImplementedError, match="jnp.einsum"):
        jnp.einsum("ij->i", x, out=x)


def test_comparisons_and_cleaning(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = a + rng.standard_normal((3, 4)).astype(np.float32) * 1e-6
    b[0, 0] = np.nan
    a[0, 0] = np.nan
    a[1, 1] = b[1, 1] = np.inf
    a[2, 2], b[2, 2] = np.inf, -np.inf
    for eq in (False, True):
        for rtol, atol in [(1e-5, 1e-8), (0, 0), (1e-3, 1e-3)]:
            check(jnp.isclose(jnp.asarray(a), jnp.asarray(b), rtol, atol, eq),
                  np.isclose(a, b, rtol, atol, eq), "bool", False)
            check(jnp.allclose(jnp.asarray(a), jnp.asarray(b), rtol=rtol, atol=atol, equal_nan=eq),
                  np.allclose(a, b, rtol, atol, eq), "bool", False)
    check(jnp.isclose(jnp.asarray(a), 0.5), np.isclose(a, np.float32(0.5)), "bool", False)
    iv = rng.integers(0, 3, size=(4,)).astype(np.int32)
    check(jnp.isclose(jnp.asarray(iv), jnp.asarray(iv[::-1])), np.isclose(iv, iv[::-1]), "bool",
          False)
    for eq in (False, True):
        check(jnp.array_equal(jnp.asarray(a), jnp.asarray(a.copy()), equal_nan=eq),
              np.array_equal(a, a.copy(), equal_nan=eq), "bool", False)
    check(jnp.array_equal(jnp.ones(3), jnp.ones(4)), False, "bool", False)
    check(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 3))), True, "bool", False)
    check(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 4))), False, "bool", False)
    v = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    check(jnp.nan_to_num(jnp.asarray(v)), np.nan_to_num(v), "float32", False)
    check(jnp.nan_to_num(jnp.asarray(v), nan=-1.0, posinf=9.0, neginf=-9.0),
          np.nan_to_num(v, nan=-1.0, posinf=9.0, neginf=-9.0), "float32", False)
    check(jnp.nan_to_num(jnp.asarray(iv)), iv, "int32", False)


def test_clip_vs_numpy(rng):
    v = rng.standard_normal((4, 5)).astype(np.float32)
    v[0, 0] = np.nan
    x = jnp.asarray(v)
    lo = rng.standard_normal((5,)).astype(np.float32) - 1
    check(jnp.clip(x, -0.5, 0.5), np.clip(v, -0.5, 0.5), "float32", False)
    check(jnp.clip(x, min=jnp.asarray(lo)), np.maximum(v, lo), "float32", False)
    check(jnp.clip(x, max=0.1), np.minimum(v, np.float32(0.1)), "float32", False)
    check(jnp.clip(x), v, "float32", False)
    check(x.clip(-1, 1), np.clip(v, -1, 1), "float32", False)
    check(jnp.clip(a=x, a_min=-1, a_max=1), np.clip(v, -1, 1), "float32", False)
    iv = rng.integers(-10, 10, size=(6,)).astype(np.int32)
    check(jnp.clip(jnp.asarray(iv), -3, 4), np.clip(iv, -3, 4), "int32", False)


def test_linalg_norm_vs_numpy(rng):
    v = rng.standard_normal(6).astype(np.float32)
    m = rng.standard_normal((3, 4)).astype(np.float32)
    u = rng.standard_normal((2, 3, 4)).astype(np.float32)
    t = dict(rtol=1e-5, atol=1e-6)
    for ord in [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1]:
        close(jnp.linalg.norm(jnp.asarray(v), ord), np.linalg.norm(v.astype(np.float64), ord),
              "float32", **t)
        close(jnp.linalg.norm(jnp.asarray(u), ord, axis=1),
              np.linalg.norm(u.astype(np.float64), ord, axis=1), "float32", **t)
    for ord in [None, "fro", 1, -1, np.inf, -np.inf]:
        close(jnp.linalg.norm(jnp.asarray(m), ord), np.linalg.norm(m.astype(np.float64), ord),
              "float32", **t)
        close(jnp.linalg.norm(jnp.asarray(u), ord, axis=(2, 0), keepdims=True),
              np.linalg.norm(u.astype(np.float64), ord, axis=(2, 0), keepdims=True), "float32",
              **t)
    close(jnp.linalg.norm(jnp.asarray(u)), np.linalg.norm(u.astype(np.float64)), "float32", **t)
    close(jnp.linalg.vector_norm(jnp.asarray(u)), np.linalg.norm(u.reshape(-1).astype(np.float64)),
          "float32", **t)
    close(jnp.linalg.vector_norm(jnp.asarray(u), ord=1, axis=-1),
          np.linalg.norm(u.astype(np.float64), 1, axis=-1), "float32", **t)
    close(jnp.linalg.matrix_norm(jnp.asarray(u)),
          np.linalg.norm(u.astype(np.float64), axis=(-2, -1)), "float32", **t)
    iv = rng.integers(-4, 4, size=(5,)).astype(np.int32)
    close(jnp.linalg.norm(jnp.asarray(iv)), np.linalg.norm(iv), "float32", **t)
    for ord in [2, -2, "nuc"]:  # from the singular values (test_linalg_spectral.py has more)
        close(jnp.linalg.norm(jnp.asarray(m), ord), np.linalg.norm(m.astype(np.float64), ord),
              "float32", **t)
    # grad of the 2-norm is x / |x|
    g = tessera.grad(jnp.linalg.norm)(jnp.asarray(v))
    close(g, v / np.linalg.norm(v), **t)


def test_grads_of_statistics_match_finite_differences(rng):
    v = rng.standard_normal((3, 4)).astype(np.float64)

    def numgrad(f, x, eps=1e-3):
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            d = np.zeros_like(x)
            d[i] = eps
            g[i] = (f(x + d) - f(x - d)) / (2 * eps)
        return g

    for jf, nf in [(lambda a: jnp.std(a, axis=1).sum(), lambda a: np.std(a, axis=1).sum()),
                   (lambda a: jnp.var(a, ddof=1), lambda a: np.var(a, ddof=1)),
                   (lambda a: jnp.linalg.norm(a, 1, axis=0).sum(),
                    lambda a: np.linalg.norm(a, 1, axis=0).sum()),
                   (lambda a: jnp.einsum("ij,kj->", a, a), lambda a: np.einsum("ij,kj->", a, a)),
                   (lambda a: jnp.sum(jnp.roll(a, 1, 0) * jnp.flip(a)),
                    lambda a: np.sum(np.roll(a, 1, 0) * np.flip(a)))]:
        g = tessera.grad(jf)(jnp.asarray(v.astype(np.float32)))
        close(g, numgrad(nf, v), rtol=2e-3, atol=2e-3)


def test_x64_reductions_use_64_bit_defaults(rng, x64):
    v = rng.standard_normal((4, 5))
    x = jnp.asarray(v)
    assert x.dtype == np.float64
    check(jnp.var(x, axis=0, ddof=1), np.var(v, axis=0, ddof=1), "float64", False)
    check(jnp.linalg.norm(x, 1), np.linalg.norm(v, 1), "float64", False)
    check(jnp.argmax(x, axis=1), np.argmax(v, axis=1), "int64", False)
    iv = rng.integers(-5, 5, size=(4, 5)).astype(np.int8)
    check(jnp.sum(jnp.asarray(iv), axis=0), iv.sum(0, dtype=np.int64), "int64", False)
    check(jnp.count_nonzero(jnp.asarray(iv)), np.count_nonzero(iv), "int64", False)


def test_x64_integer_statistics_dtypes(rng, x64):
    # jnp's to_inexact_dtype maps bool and integers up to 32 bits to float32 and 64-bit
    # integers to float64, also under x64 (jax/_src/dtypes.py's _dtype_to_inexact table).
    iv = rng.integers(-5, 5, size=(4, 5)).astype(np.int8)
    check(jnp.mean(jnp.asarray(iv)), np.mean(iv), "float32", False)
    check(jnp.var(jnp.asarray(iv), axis=0), np.var(iv, axis=0), "float32", False)
    lv = rng.integers(-5, 5, size=(4, 5)).astype(np.int64)
    check(jnp.mean(jnp.asarray(lv)), np.mean(lv), "float64", False)
    check(jnp.std(jnp.asarray(lv), axis=1), np.std(lv, axis=1), "float64", False)
