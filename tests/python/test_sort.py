"""tessera.lax.sort / sort_key_val and jnp.sort, argsort, lexsort, sort_complex, quantile,
percentile, median and the nan* forms against NumPy (np.sort, np.argsort(kind='stable'),
np.lexsort, np.quantile(method=...) and friends) and float64 finite differences, on fresh
random inputs. The seed is TESSERA_TEST_SEED (or the clock)."""

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from tessera import lax

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8",
          "uint32", "bool"]
SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])


def draw(rng, shape, dtype, special=0.15):
    """Values with many ties; floats also get NaNs, infinities and zeros of both signs."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0 if dtype.startswith("u") else -5, 6, size=shape).astype(dtype)
    v = np.round(rng.uniform(-3, 3, size=shape), 1)
    mask = rng.uniform(size=shape) < special
    v[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    return v.astype("float32" if dtype == "bfloat16" else dtype)


def to_tessera(v, dtype):
    a = jnp.asarray(v)
    return a.astype(jnp.bfloat16) if dtype == "bfloat16" else a


def host(a, dtype):
    return np.asarray(a.astype(jnp.float32) if dtype == "bfloat16" else a)


def same_bits(got, want):
    """Equal values, NaNs equal, and zeros of the same sign (a stable permutation)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if got.dtype.kind == "f":
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))
    else:
        assert np.array_equal(got, want)


def stable_perm(v, axis):
    return np.argsort(v, axis=axis, kind="stable")


@pytest.mark.parametrize("dtype", DTYPES)
def test_lax_sort_every_dtype_and_dimension(rng, dtype):
    for shape in [(11,), (4, 9), (3, 5, 6), (2, 0, 3), (1, 7), (6, 1)]:
        v = draw(rng, shape, dtype)
        x = to_tessera(v, dtype)
        # 64-bit dtypes are 32-bit without x64; bfloat16 rounds: sort what Tessera holds.
        v = host(x, dtype)
        for dim in list(range(len(shape))) + [-1]:
            got = lax.sort(x, dimension=dim)
            assert got.dtype == x.dtype and got.shape == shape
            # np.sort orders -0.0/+0.0 as equal and NaNs last, as JAX; the stable permutation
            # fixes the zero signs.
            want = np.take_along_axis(v, stable_perm(v, dim), axis=dim)
            same_bits(host(got, dtype), want)
            idx = lax.broadcasted_iota(np.int32, shape, dim % len(shape))
            k, p = lax.sort_key_val(x, idx, dimension=dim)
            assert np.array_equal(np.asarray(p), stable_perm(v, dim))
            same_bits(host(k, dtype), want)


def test_float_order_nans_zeros_infinities():
    v = np.array([3, -0.0, np.nan, 1, 0.0, -np.inf, np.inf, -np.nan, 2, -0.0], np.float32)
    got = np.asarray(jnp.sort(v))
    assert np.array_equal(got, np.sort(v), equal_nan=True)
    assert list(np.signbit(got[1:5])) == [True, False, True, False]
    assert np.array_equal(np.asarray(jnp.argsort(v)), np.argsort(v, kind="stable"))


def test_stability_of_argsort_on_large_arrays(rng, x64):
    # Above the radix threshold, with ties, NaNs and zeros of both signs.
    for dtype in ["float32", "float64", "float16", "int16", "uint8", "int64"]:
        v = draw(rng, (300_001,), dtype, special=0.05)
        assert np.array_equal(np.asarray(jnp.argsort(v)), np.argsort(v, kind="stable"))
        same_bits(jnp.sort(v), v[np.argsort(v, kind="stable")])


def test_sort_key_val_large_rows_move_values_bit_exactly(rng):
    """Integer keys with 32-bit values above the radix threshold (the values ride through the
    passes in place of the index): ties stable, the values' bits exact (NaN payloads, -0.0),
    rows along either dimension (strided), against NumPy's stable argsort."""
    n = 20_000
    for kdt in ["int32", "uint32", "int8", "uint16"]:
        info = np.iinfo(kdt)
        keys = rng.integers(max(info.min, -50), min(info.max, 50), size=(3, n)).astype(kdt)
        bits = rng.integers(0, 2**32, size=(3, n), dtype=np.uint64).astype(np.uint32)
        bits[:, :7] = [0x7FC00001, 0xFFC00002, 0x80000000, 0, 0x7F800000, 0xFF800000, 0x7FBFFFFF]
        fvals = bits.view(np.float32)
        ivals = bits.view(np.int32)
        for vals in (fvals, ivals, bits):
            for dim in (1, 0):
                kk = keys if dim == 1 else np.ascontiguousarray(keys.T)
                vv = vals if dim == 1 else np.ascontiguousarray(vals.T)
                k, v = lax.sort_key_val(jnp.asarray(kk), jnp.asarray(vv), dimension=dim)
                perm = np.argsort(kk, axis=dim, kind="stable")
                assert np.array_equal(np.asarray(k), np.take_along_axis(kk, perm, axis=dim))
                got = np.asarray(v)
                assert got.dtype == vv.dtype
                want = np.take_along_axis(vv, perm, axis=dim)
                assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_long_rows_with_spread_top_digits(rng):
    """Rows long enough that the radix sort first splits by the most significant digit and
    sorts each bucket in cache: keys spread over the top byte with many exact ties (stability),
    full-range signed integers, and floats spread over every exponent with zeros of both signs
    and NaNs — argsort, sort_key_val and sort against NumPy's stable sort."""
    n = 300_001
    top = rng.integers(0, 256, n).astype(np.uint32) << np.uint32(24)
    cases = {
        "u32_ties": top | rng.integers(0, 4, n).astype(np.uint32),
        "i32": rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32),
        "f32_spread": (rng.choice([-1, 1], n) * 10.0 ** rng.uniform(-30, 30, n)).astype(np.float32),
    }
    f = cases["f32_spread"]
    f[rng.integers(0, n, 200)] = 0.0
    f[rng.integers(0, n, 200)] = -0.0
    f[rng.integers(0, n, 200)] = np.nan
    for name, v in cases.items():
        perm = np.argsort(v, kind="stable")
        assert np.array_equal(np.asarray(jnp.argsort(v)), perm), name
        same_bits(jnp.sort(v), v[perm])
        vals = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
        k, p = lax.sort_key_val(jnp.asarray(v), jnp.asarray(vals))
        same_bits(k, v[perm])
        assert np.array_equal(np.asarray(p), vals[perm]), name


def test_several_operands_and_keys(rng):
    shape = (4, 50)
    k0 = rng.integers(-2, 3, size=shape).astype(np.int8)
    k1 = rng.integers(0, 2, size=shape).astype(bool)
    k2 = draw(rng, shape, "float32")
    vals = rng.normal(size=shape).astype(np.float32)
    for nk in (1, 2, 3):
        for dim in (0, 1):
            out = lax.sort((k0, k1, k2, vals), dimension=dim, num_keys=nk)
            assert isinstance(out, tuple) and len(out) == 4
            # Most significant first; the float key's NaN flag before its value.
            per_key = [[k0], [k1], [np.isnan(k2), np.where(np.isnan(k2), 0, k2)]]
            keys = [k for ks in per_key[:nk] for k in ks]
            perm = np.lexsort([np.moveaxis(k, dim, -1) for k in keys[::-1]], axis=-1)
            perm = np.moveaxis(perm, -1, dim)
            for got, src in zip(out, (k0, k1, k2, vals)):
                same_bits(got, np.take_along_axis(src, perm, axis=dim))


def test_lax_sort_errors():
    x = jnp.arange(3.0)
    with pytest.raises(ValueError, match="out of bounds for array of dimension 0"):
        lax.sort(jnp.float32(1.0))
    with pytest.raises(TypeError, match="Sort requires at least one operand"):
        lax.sort(())
    with pytest.raises(TypeError, match="equal shapes"):
        lax.sort((x, jnp.arange(4.0)))
    with pytest.raises(ValueError, match="num_keys=3 must be between 1"):
        lax.sort((x, x), num_keys=3)
    with pytest.raises(ValueError, match="must equal 1 for a single operand"):
        lax.sort(x, num_keys=2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sort(jnp.float32(1.0))
    with pytest.raises(TypeError, match="'kind' argument to sort"):
        jnp.sort(x, kind="stable")
    with pytest.raises(TypeError, match="'order' argument to argsort"):
        jnp.argsort(x, order="a")
    with pytest.raises(NotImplementedError, match="complex"):
        jnp.sort_complex(x)


def test_jnp_sort_argsort_descending_and_flatten(rng):
    v = draw(rng, (5, 8), "float32")
    for axis in (0, 1, -1, None):
        srt = np.sort(v, axis=axis, kind="stable")  # zeros of both signs keep their order
        ax = -1 if axis is None else axis
        same_bits(np.asarray(jnp.sort(v, axis=axis)), srt)
        # Descending: the ascending result reversed (NaNs first), as JAX.
        assert np.array_equal(np.asarray(jnp.sort(v, axis=axis, descending=True)),
                              np.flip(srt, ax), equal_nan=True)
        assert np.array_equal(np.asarray(jnp.argsort(v, axis=axis)),
                              np.argsort(v, axis=axis, kind="stable"))
    a = jnp.argsort(v)
    assert a.dtype == np.int32
    # Stable descending keeps ties in their original order: argsort of -x (integers).
    w = rng.integers(-3, 4, size=(6, 20)).astype(np.int32)
    for axis in (0, 1):
        assert np.array_equal(np.asarray(jnp.argsort(w, axis=axis, descending=True)),
                              np.argsort(-w, axis=axis, kind="stable"))


def test_lexsort(rng):
    a = rng.integers(0, 3, size=(3, 40))
    b = rng.integers(0, 3, size=(3, 40))
    c = rng.normal(size=(3, 40)).astype(np.float32)
    for axis in (0, 1, -1):
        assert np.array_equal(np.asarray(jnp.lexsort((a, b, c), axis=axis)),
                              np.lexsort((a, b, c), axis=axis))
    keys = np.stack([a[0], b[0]])
    assert np.array_equal(np.asarray(jnp.lexsort(keys)), np.lexsort(keys))
    assert int(jnp.lexsort([jnp.float32(2.0)])) == 0
    with pytest.raises(TypeError, match="need sequence of keys"):
        jnp.lexsort([])
    with pytest.raises(ValueError, match="same shape"):
        jnp.lexsort([a, a[0]])


METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


def nan_data(rng, shape):
    v = rng.normal(size=shape)
    v.flat[3] = np.nan
    v[0, ...] = np.where(rng.uniform(size=v[0].shape) < 0.5, np.nan, v[0])
    return v


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_vs_numpy(rng, x64, method):
    v = rng.normal(size=(4, 5, 6))
    vn = nan_data(rng, (4, 5, 6))
    # Random q (no exact .5 positions: NumPy's nearest rounds those to even, JAX's down).
    q = np.concatenate([[0.0, 1.0], rng.uniform(size=3)])
    for axis in (None, 0, 1, 2, -1, (0, 2), (1, 2), ()):
        for keepdims in (False, True):
            for qq in (q, q[2]):
                kw = dict(axis=axis, method=method, keepdims=keepdims)
                got = jnp.quantile(v, qq, **kw)
                want = np.quantile(v, qq, **kw)
                assert got.shape == want.shape, (axis, keepdims)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(np.asarray(jnp.percentile(v, qq * 100, **kw)),
                                           np.percentile(v, qq * 100, **kw), rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(np.asarray(jnp.quantile(vn, qq, **kw)),
                                           np.quantile(vn, qq, **kw), rtol=1e-12, atol=1e-12)
                with _nowarn():
                    want_nan = np.nanquantile(vn, qq, **kw)
                    want_nanp = np.nanpercentile(vn, qq * 100, **kw)
                np.testing.assert_allclose(np.asarray(jnp.nanquantile(vn, qq, **kw)), want_nan,
                                           rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(np.asarray(jnp.nanpercentile(vn, qq * 100, **kw)),
                                           want_nanp, rtol=1e-12, atol=1e-12)


class _nowarn:
    """Silences NumPy's all-NaN-slice RuntimeWarnings for the reference."""

    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *a):
        return self._w.__exit__(*a)


def test_median_and_nanmedian(rng):
    v = rng.normal(size=(5, 6)).astype(np.float32)
    vn = nan_data(rng, (5, 6)).astype(np.float32)
    vn[2] = np.nan  # an all-NaN row
    for axis in (None, 0, 1, (0, 1)):
        for keepdims in (False, True):
            np.testing.assert_allclose(np.asarray(jnp.median(v, axis=axis, keepdims=keepdims)),
                                       np.median(v, axis=axis, keepdims=keepdims), rtol=1e-6)
            with _nowarn():
                want = np.nanmedian(vn, axis=axis, keepdims=keepdims)
            np.testing.assert_allclose(
                np.asarray(jnp.nanmedian(vn, axis=axis, keepdims=keepdims)), want, rtol=1e-6)
    assert jnp.median(np.arange(7)).dtype == np.float32
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(v, 0.5, method="cubic")
    with pytest.raises(ValueError, match="rank <= 1"):
        jnp.quantile(v, np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match="overwrite_input"):
        jnp.median(v, overwrite_input=True)


def fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += h
        m[i] -= h
        g[i] = (float(f(p)) - float(f(m))) / (2 * h)
    return g


def distinct(rng, shape):
    return (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.7
            + rng.uniform(-0.3, 0.3, size=shape))


def test_grad_of_sort_and_statistics(rng, x64):
    x = distinct(rng, (4, 5))
    w = rng.normal(size=(4, 5))
    fns = [
        lambda a: jnp.sum(jnp.sort(a, axis=0) * w),
        lambda a: jnp.sum(lax.sort_key_val(a, a * a)[1] * w),
        lambda a: jnp.sum(jnp.sort(a * a, axis=None) * w.ravel()),
        lambda a: jnp.median(a),
        lambda a: jnp.sum(jnp.median(a, axis=1) * w[:, 0]),
        lambda a: jnp.sum(jnp.quantile(a, jnp.array([0.2, 0.9]), axis=0)),
        lambda a: jnp.nanpercentile(a, 40.0),
    ]
    for f in fns:
        np.testing.assert_allclose(np.asarray(tessera.grad(f)(x)), fd_grad(f, x), rtol=1e-6,
                                   atol=1e-7)
    # Second order: the Hessian-vector product of a sort-based function.
    def f2(a):
        return jnp.sum(jnp.sort(a, axis=1) ** 3 * w)
    v = rng.normal(size=x.shape)
    hvp = tessera.jvp(tessera.grad(f2), (x,), (v,))[1]
    gp = np.asarray(tessera.grad(f2)(x + 1e-6 * v))
    gm = np.asarray(tessera.grad(f2)(x - 1e-6 * v))
    np.testing.assert_allclose(np.asarray(hvp), (gp - gm) / 2e-6, rtol=1e-5, atol=1e-6)


def test_vmap_and_jit(rng):
    v = draw(rng, (3, 6, 7), "float32")
    vals = rng.normal(size=(6, 7)).astype(np.float32)
    for in_axes in (0, 1, 2):
        got = tessera.vmap(lambda a: jnp.sort(a, axis=0), in_axes=in_axes)(v)
        want = np.stack([np.sort(np.take(v, i, axis=in_axes), axis=0)
                         for i in range(v.shape[in_axes])])
        assert np.array_equal(np.asarray(got), want, equal_nan=True)
    # An unbatched operand beside a batched one.
    k, p = tessera.vmap(lambda a, b: lax.sort_key_val(a, b), in_axes=(0, None))(v, vals)
    for i in range(3):
        perm = np.argsort(v[i], axis=-1, kind="stable")
        assert np.array_equal(np.asarray(p[i]), np.take_along_axis(vals, perm, axis=-1))
    got = tessera.vmap(jnp.median)(v[..., 0])
    np.testing.assert_allclose(np.asarray(got), np.median(v[..., 0], axis=1))
    f = tessera.jit(lambda a: (jnp.sort(a), jnp.argsort(a, axis=0, descending=True),
                               jnp.quantile(a, jnp.array([0.1, 0.6]), axis=1)))
    s, a, q = f(v[0])
    assert np.array_equal(np.asarray(s), np.sort(v[0]), equal_nan=True)
    assert np.array_equal(np.asarray(a), np.asarray(jnp.argsort(v[0], axis=0, descending=True)))
    # JAX's linear interpolation, lo * (1 - f) + hi * f, gives -inf where NumPy's
    # lo + (hi - lo) * f gives NaN (inf - inf): the reference is JAX's formula, in float64.
    srt = np.sort(v[0].astype(np.float64), axis=1)
    n = srt.shape[1]
    want_q = []
    for qq in (0.1, 0.6):
        pos = qq * (n - 1)
        lo, hi, fr = int(np.floor(pos)), int(np.ceil(pos)), pos - np.floor(pos)
        with np.errstate(invalid="ignore"):
            r = srt[:, lo] * (1 - fr) + srt[:, hi] * fr
        want_q.append(np.where(np.isnan(v[0]).any(axis=1), np.nan, r))
    np.testing.assert_allclose(np.asarray(q), np.array(want_q), rtol=1e-5, atol=1e-6)
    text = str(tessera.make_jaxpr(lambda a: lax.sort(a, dimension=0))(v[0]))
    assert "sort[dimension=0 is_stable=True num_keys=1]" in text
