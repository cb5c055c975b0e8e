"""tessera.lax.associative_scan, lax.cumsum / cumprod / cummax / cummin / cumlogsumexp and
jnp.cumsum & co. against NumPy (np.cumsum, np.cumprod, np.maximum/minimum.accumulate,
np.logaddexp.accumulate), sequential Python loops and float64 finite differences, on fresh
random inputs. The seed is TESSERA_TEST_SEED (or the clock)."""

import numpy as np
import pytest

import tessera
import tessera.numpy as jnp
from tessera import lax


OPS = {
    "cumsum": (lax.cumsum, np.cumsum),
    "cumprod": (lax.cumprod, np.cumprod),
    "cummax": (lax.cummax, np.maximum.accumulate),
    "cummin": (lax.cummin, np.minimum.accumulate),
    "cumlogsumexp": (lax.cumlogsumexp, np.logaddexp.accumulate),
}
EPS = {"float16": 2.0**-10, "float32": 2.0**-23, "float64": 2.0**-52}


def np_scan(name, v, axis, reverse, dtype):
    """NumPy's accumulate in float64 (floats) or in the integer dtype itself (wrapping)."""
    ref = OPS[name][1]
    a = np.flip(v, axis) if reverse else v
    with np.errstate(all="ignore"):
        if np.issubdtype(np.dtype(dtype), np.integer):
            if name in ("cumsum", "cumprod"):
                r = ref(a, axis=axis, dtype=dtype)
            else:
                r = ref(a, axis=axis)
        else:
            r = ref(a.astype(np.float64), axis=axis)
    return np.flip(r, axis) if reverse else r


def draw(rng, name, shape, dtype):
    if np.issubdtype(np.dtype(dtype), np.integer):
        lo, hi = (-3, 4) if name == "cumprod" else (-50, 50)
        if dtype.startswith("u"):
            lo = 0
        return rng.integers(lo, hi, size=shape).astype(dtype)
    if name == "cumprod":
        return (rng.uniform(0.7, 1.4, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)
    return rng.uniform(-3, 3, size=shape).astype(dtype)


@pytest.mark.parametrize("name,dtype", [
    (n, d) for n in OPS for d in ["float32", "float16", "int32", "int8", "uint8"]
    if n != "cumlogsumexp" or d.startswith("float")])  # cumlogsumexp: floats (test_errors)
def test_lax_cumulative_vs_numpy(rng, name, dtype):
    for shape in [(7,), (3, 5), (2, 0, 4), (2, 3, 4), (1, 9)]:
        v = draw(rng, name, shape, dtype)
        for axis in range(len(shape)):
            for reverse in (False, True):
                got = OPS[name][0](jnp.asarray(v), axis=axis, reverse=reverse)
                assert got.dtype == np.dtype(dtype) and got.shape == shape
                want = np_scan(name, v, axis, reverse, dtype)
                g = np.asarray(got).astype(np.float64)
                if np.issubdtype(np.dtype(dtype), np.integer) or name in ("cummax", "cummin"):
                    np.testing.assert_array_equal(g, want.astype(np.float64))
                    continue
                n = max(shape[axis], 1)
                step = EPS["float32"] if dtype == "float16" else EPS[dtype]
                scale = np.abs(want) + (np.cumsum(np.abs(v.astype(np.float64)), axis=axis)
                                        if name == "cumsum" else 4.0)
                np.testing.assert_allclose(g, want, rtol=EPS[dtype],
                                           atol=0 if v.size == 0 else 4 * n * step * scale.max())


def test_nan_propagation_and_big_rows(rng):
    v = np.array([1.0, 3.0, np.nan, 2.0, 5.0], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.cummax(v)), np.maximum.accumulate(v))
    np.testing.assert_array_equal(np.asarray(lax.cummin(v, reverse=True)),
                                  np.flip(np.minimum.accumulate(np.flip(v))))
    big = rng.integers(-100, 100, size=300_001).astype(np.int32)  # the chunked kernel
    np.testing.assert_array_equal(np.asarray(lax.cumsum(big)), np.cumsum(big, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(lax.cumsum(big, reverse=True)),
                                  np.flip(np.cumsum(np.flip(big), dtype=np.int32)))
    cols = rng.uniform(-1, 1, size=(3, 50, 700)).astype(np.float32)  # the column kernel
    np.testing.assert_allclose(np.asarray(lax.cumsum(cols, 1)),
                               np.cumsum(cols, 1, dtype=np.float64),
                               rtol=1e-5, atol=1e-4)


def test_errors():
    with pytest.raises(TypeError, match="cumsum does not accept dtype bool"):
        lax.cumsum(np.array([True, False]))
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of shape"):
        lax.cumsum(np.ones((2, 3), np.float32), axis=2)
    with pytest.raises(ValueError, match=r"must have the same first dimension. \(saw: "
                                         r"\[\(3,\), \(4,\)\]\)"):
        lax.associative_scan(lambda a, b: (a[0] + b[0], a[1] + b[1]),
                             (np.ones(3, np.float32), np.ones(4, np.float32)))
    with pytest.raises(ValueError, match="shapes and dtypes of its inputs"):
        lax.associative_scan(lambda a, b: jnp.sum(a + b), np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"one array per element of elems \(2\), got 1"):
        lax.associative_scan(lambda a, b: a[0] + b[0], (np.ones(3, np.float32),) * 2)
    # Only the leaves count: a tuple result for list elems is fine, as in JAX.
    out = lax.associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]),
                               [np.arange(1.0, 4.0), np.arange(1.0, 4.0)])
    assert isinstance(out, list)
    np.testing.assert_allclose(np.asarray(out[0]), [1, 3, 6])
    np.testing.assert_allclose(np.asarray(out[1]), [1, 2, 6])
    with pytest.raises(TypeError, match="fn argument should be callable"):
        lax.associative_scan(None, np.ones(3, np.float32))
    with pytest.raises(ZeroDivisionError):  # fn's own exception propagates
        lax.associative_scan(lambda a, b: 1 / 0, np.ones(3, np.float32))
    with pytest.raises(NotImplementedError, match="'out' argument to jnp.cumsum"):
        jnp.cumsum(np.ones(3), out=np.ones(3))


def fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += h
        m[i] -= h
        g[i] = (f(p) - f(m)) / (2 * h)
    return g


@pytest.mark.parametrize("name", list(OPS))
def test_grad_vs_finite_differences(rng, x64, name):
    for shape, axis in [((6,), 0), ((3, 4), 1), ((3, 4), 0)]:
        for reverse in (False, True):
            x = draw(rng, name, shape, "float64")
            if name == "cumprod":
                x.flat[rng.integers(0, x.size)] = 0.0  # a zero: no division in the rule
            w = rng.normal(size=shape)
            op = OPS[name][0]

            def loss(v):
                return jnp.sum(op(v, axis=axis, reverse=reverse) * w)

            got = np.asarray(tessera.grad(loss)(jnp.asarray(x)))
            want = fd_grad(lambda v: float(loss(jnp.asarray(v))), x)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
            t = rng.normal(size=shape)
            _, jt = tessera.jvp(loss, (jnp.asarray(x),), (jnp.asarray(t),))
            np.testing.assert_allclose(float(jt), float(np.sum(want * t)), rtol=1e-6, atol=1e-7)


def test_vmap_and_jaxpr(rng):
    x = rng.normal(size=(5, 3, 4)).astype(np.float32)
    for name, (op, _) in OPS.items():
        got = tessera.vmap(lambda v: op(v, axis=1, reverse=True), in_axes=2)(jnp.asarray(x))
        want = np.stack([np.asarray(op(x[:, :, b], axis=1, reverse=True)) for b in range(4)])
        np.testing.assert_array_equal(np.asarray(got), want)
    text = str(tessera.make_jaxpr(lambda v: lax.cumlogsumexp(v, axis=1))(x))
    assert "cumlogsumexp[axis=1 reverse=False]" in text


def test_associative_scan_linear_recurrence_pytree(rng, x64):
    """h_t = a_t h_{t-1} + b_t as the scan of affine maps in a dict pytree."""
    def compose(p, q):
        return {"a": p["a"] * q["a"], "b": q["a"] * p["b"] + q["b"]}

    for n in (1, 2, 5, 8, 13, 33):
        for reverse in (False, True):
            a = rng.uniform(-1.1, 1.1, size=(n, 3))
            b = rng.normal(size=(n, 3))
            out = lax.associative_scan(compose, {"a": jnp.asarray(a), "b": jnp.asarray(b)},
                                       reverse=reverse)
            h = np.zeros(3)
            want = np.zeros((n, 3))
            for k in range(n):
                t = n - 1 - k if reverse else k
                h = a[t] * h + b[t]
                want[t] = h
            np.testing.assert_allclose(np.asarray(out["b"]), want, rtol=1e-12, atol=1e-12)


def test_associative_scan_matrix_products(rng, x64):
    """2x2 matrix products (not commutative) scanned along axis 1 of a (2, n, 2, 2) array."""
    for n in (3, 4, 7):
        for reverse in (False, True):
            m = rng.uniform(-1, 1, size=(2, n, 2, 2))
            out = np.asarray(lax.associative_scan(jnp.matmul, jnp.asarray(m), reverse=reverse,
                                                  axis=1))
            for r in range(2):
                p = np.eye(2)
                for k in range(n):
                    t = n - 1 - k if reverse else k
                    p = p @ m[r, t]
                    np.testing.assert_allclose(out[r, t], p, rtol=1e-12, atol=1e-12)


def test_associative_scan_grad(rng, x64):
    a = rng.uniform(-1, 1, size=7)
    b = rng.normal(size=7)

    def loss(a, b):
        _, h = lax.associative_scan(lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1]), (a, b))
        return jnp.sum(h * h)

    ga, gb = tessera.grad(loss, argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(ga), fd_grad(lambda v: float(loss(v, b)), a),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gb), fd_grad(lambda v: float(loss(a, v)), b),
                               rtol=1e-6, atol=1e-8)


def test_jnp_cumulative_vs_numpy(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    x[1, 2] = np.nan
    for axis in (None, 0, 1, -1):
        np.testing.assert_allclose(np.asarray(jnp.cumsum(x, axis)), np.cumsum(x, axis), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.cumprod(x, axis)), np.cumprod(x, axis),
                                   rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.nancumsum(x, axis)), np.nancumsum(x, axis),
                                   rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.nancumprod(x, axis)), np.nancumprod(x, axis),
                                   rtol=1e-6)
    a = jnp.asarray(x)
    np.testing.assert_allclose(np.asarray(a.cumsum(axis=1)), np.cumsum(x, 1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(a.cumprod()), np.cumprod(x), rtol=1e-6)
    # Dtypes as jnp: bool accumulates in int32, int8 stays int8 (wrapping), dtype= converts.
    p = rng.integers(0, 2, size=10).astype(bool)
    assert jnp.cumsum(p).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(p)), np.cumsum(p))
    i8 = rng.integers(-100, 100, size=12).astype(np.int8)
    assert jnp.cumsum(i8).dtype == np.int8
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(i8)), np.cumsum(i8, dtype=np.int8))
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(i8, dtype=np.int32)),
                                  np.cumsum(i8, dtype=np.int32))
    assert jnp.cumprod(p, dtype=bool).dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(jnp.cumprod(p, dtype=bool)),
                                  np.logical_and.accumulate(p))
    assert jnp.cumsum(3.0).shape == (1,)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.cumsum(x, 2)


def test_jnp_cumulative_sum_prod(rng):
    x = rng.integers(-5, 6, size=(2, 3)).astype(np.int8)
    s = jnp.cumulative_sum(x, axis=1, include_initial=True)
    assert s.dtype == np.int32  # the array API's integer promotion
    np.testing.assert_array_equal(np.asarray(s), np.concatenate(
        [np.zeros((2, 1), np.int32), np.cumsum(x, 1, dtype=np.int32)], 1))
    pr = jnp.cumulative_prod(x, axis=0, include_initial=True)
    assert pr.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(pr), np.concatenate(
        [np.ones((1, 3), np.int8), np.cumprod(x, 0, dtype=np.int8)], 0))
    v = rng.normal(size=5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.cumulative_sum(v)), np.cumsum(v), rtol=1e-6)
    with pytest.raises(ValueError, match="axis was not set to an explicit value"):
        jnp.cumulative_sum(x)
    with pytest.raises(ValueError, match="must be non-scalar"):
        jnp.cumulative_prod(np.float32(2.0))
