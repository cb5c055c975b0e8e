"""jnp.linalg / jax.lax.linalg / jax.scipy.linalg's spectral functions (eigh, svd, qr and the
composites on them: pinv, matrix_rank, lstsq, cond, norm ord 2/-2/'nuc', expm) and
nn.initializers.orthogonal against NumPy and SciPy on fresh random inputs (well- and
ill-conditioned, batched, empty, 1x1; float32 and float64), jit against eager, vmap against a
loop, and gradients against float64 central differences."""
import numpy as np
import pytest
import scipy.linalg as sla

import tessera as jax
import tessera.numpy as jnp
import tessera.scipy.linalg as jsl
from tessera.lax import linalg as lax_linalg


def _tol(dtype):
    return 1e-10 if np.dtype(dtype) == np.float64 else 2e-4


def _sym(rng, shape, dtype):
    a = rng.standard_normal(shape)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


def _close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=_tol(dtype) * 10, atol=_tol(dtype) * 10 * scale)


def _fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += h
        m[i] -= h
        g[i] = (float(f(p)) - float(f(m))) / (2 * h)
    return g


DTYPES = [np.float32, np.float64]


# ---------------- eigh ----------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 6, 6), (2, 2, 5, 5), (0, 0), (0, 3, 3)])
def test_eigh_vs_numpy(rng, x64, dtype, shape):
    a = _sym(rng, shape, dtype)
    w, v = jnp.linalg.eigh(a)
    assert w.dtype == dtype and v.dtype == dtype
    assert w.shape == shape[:-1] and v.shape == shape
    wn = np.linalg.eigvalsh(a.astype(np.float64))
    _close(w, wn, dtype, scale=max(1.0, np.abs(a).max(initial=0)))
    v = np.asarray(v, np.float64)
    # A v = v diag(w) and orthonormal columns (v is unique up to column signs).
    _close(np.asarray(a, np.float64) @ v, v * np.asarray(w, np.float64)[..., None, :], dtype,
           scale=shape[-1] + 1)
    _close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(shape[-1]), v.shape), dtype,
           scale=shape[-1] + 1)
    _close(jnp.linalg.eigvalsh(a), wn, dtype, scale=max(1.0, np.abs(a).max(initial=0)))


def test_eigh_ill_conditioned_upper_and_result_type(rng, x64):
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    d = np.logspace(-12, 0, 6)
    a = q @ np.diag(d) @ q.T
    res = jnp.linalg.eigh(a, UPLO="U")
    assert isinstance(res, jnp.linalg.EighResult)
    np.testing.assert_allclose(np.asarray(res.eigenvalues), np.linalg.eigvalsh(a, UPLO="U"),
                               atol=1e-14)
    # Only the upper triangle is read with symmetrize_input=False.
    garbage = np.triu(a) + np.tril(rng.standard_normal((6, 6)), -1)
    w, _ = jnp.linalg.eigh(garbage, UPLO="U", symmetrize_input=False)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(garbage, UPLO="U"), atol=1e-13)
    v, w2 = lax_linalg.eigh(garbage, lower=False, symmetrize_input=False)
    np.testing.assert_allclose(np.asarray(w2), np.asarray(w), atol=1e-13)
    # Integers promote to the default float.
    assert jnp.linalg.eigvalsh(np.array([[2, 1], [1, 2]], np.int64)).dtype == np.float64
    assert jnp.linalg.eigvalsh(np.array([[2, 1], [1, 2]], np.int32)).dtype == np.float32


def test_eigh_nan_and_errors():
    w, v = jnp.linalg.eigh(np.array([[1.0, np.nan], [np.nan, 1.0]], np.float32))
    assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v)).all()
    with pytest.raises(ValueError, match=r"\[\.\.\., n, n\]"):
        jnp.linalg.eigh(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="UPLO"):
        jnp.linalg.eigh(np.eye(2, dtype=np.float32), UPLO="X")
    with pytest.raises(NotImplementedError, match="complex64"):
        jnp.linalg.eig(np.eye(2, dtype=np.float32))
    with pytest.raises(NotImplementedError, match="complex128"):
        jnp.linalg.eigvals(np.eye(2, dtype=np.float32))


# ---------------- svd ----------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (7, 3), (3, 7), (2, 6, 4), (2, 3, 4, 2)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_vs_numpy(rng, x64, dtype, shape, full):
    a = rng.standard_normal(shape).astype(dtype)
    u, s, vh = jnp.linalg.svd(a, full_matrices=full)
    un, sn, vhn = np.linalg.svd(a.astype(np.float64), full_matrices=full)
    assert u.shape == un.shape and s.shape == sn.shape and vh.shape == vhn.shape
    assert u.dtype == dtype
    _close(s, sn, dtype, scale=sn.max())
    k = min(shape[-2:])
    u, s, vh = (np.asarray(t, np.float64) for t in (u, s, vh))
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, scale=sum(shape))
    _close(np.swapaxes(u, -1, -2) @ u,
           np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), dtype,
           scale=10)
    _close(jnp.linalg.svd(a, compute_uv=False), sn, dtype, scale=sn.max())
    _close(jnp.linalg.svdvals(a), sn, dtype, scale=sn.max())
    su, ss, svh = jsl.svd(a, full_matrices=full)
    if a.ndim == 2:  # SciPy 1.10's svd takes one matrix
        _close(ss, sla.svd(a.astype(np.float64), full_matrices=full, compute_uv=False), dtype,
               scale=sn.max())
    assert su.shape == un.shape and svh.shape == vhn.shape


def test_svd_hermitian_empty_ill_conditioned(rng, x64):
    a = _sym(rng, (3, 5, 5), np.float64)
    res = jnp.linalg.svd(a, hermitian=True)
    assert isinstance(res, jnp.linalg.SVDResult)
    np.testing.assert_allclose(np.asarray(res.S), np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(np.asarray(res.U) * np.asarray(res.S)[..., None, :] @
                               np.asarray(res.Vh), a, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jnp.linalg.svd(a, compute_uv=False, hermitian=True)),
                               np.linalg.svd(a, compute_uv=False), atol=1e-12)
    u, s, vh = jnp.linalg.svd(np.zeros((0, 3)))
    assert u.shape == (0, 0) and s.shape == (0,) and vh.shape == (3, 3)
    np.testing.assert_array_equal(np.asarray(vh), np.eye(3))
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    a = q @ np.diag(np.logspace(-13, 0, 6)) @ q.T
    np.testing.assert_allclose(np.asarray(jnp.linalg.svdvals(a)),
                               np.linalg.svd(a, compute_uv=False), atol=1e-14)
    bad = jnp.linalg.svd(np.array([[1.0, np.inf], [0.0, 1.0]]))
    assert all(np.isnan(np.asarray(t)).all() for t in bad)


# ---------------- qr ----------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (7, 3), (3, 7), (2, 5, 2), (0, 3), (3, 0)])
def test_qr_vs_numpy(rng, x64, dtype, shape):
    a = rng.standard_normal(shape).astype(dtype)
    for mode in ("reduced", "complete"):
        q, r = jnp.linalg.qr(a, mode=mode)
        qn, rn = np.linalg.qr(a.astype(np.float64), mode=mode)
        assert q.shape == qn.shape and r.shape == rn.shape and q.dtype == dtype
        q, r = np.asarray(q, np.float64), np.asarray(r, np.float64)
        _close(q @ r, a, dtype, scale=sum(shape))
        _close(np.abs(r), np.abs(rn), dtype, scale=sum(shape))  # unique up to row signs
        _close(np.swapaxes(q, -1, -2) @ q,
               np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), dtype,
               scale=10)
        assert np.all(np.tril(r, -1) == 0)
    r_only = jnp.linalg.qr(a, mode="r")
    _close(np.abs(np.asarray(r_only)), np.abs(np.linalg.qr(a.astype(np.float64), mode="r")),
           dtype, scale=sum(shape))
    if a.ndim > 2 or a.size == 0:  # SciPy 1.10: one non-empty matrix
        return
    q, r = jsl.qr(a)
    qs, rs = sla.qr(a.astype(np.float64))
    assert q.shape == qs.shape and r.shape == rs.shape
    (r1,) = jsl.qr(a, mode="r")
    assert r1.shape == rs.shape
    q, r = jsl.qr(a, mode="economic")
    assert q.shape == sla.qr(a.astype(np.float64), mode="economic")[0].shape


def test_qr_batched_and_errors(rng):
    a = rng.standard_normal((3, 2, 6, 4)).astype(np.float32)
    q, r = lax_linalg.qr(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-5)
    h, tau = jnp.linalg.qr(a, mode="raw")  # NumPy's layout: h transposed (test_linalg_qr_raw.py)
    assert h.shape == (3, 2, 4, 6) and tau.shape == (3, 2, 4)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        jnp.linalg.qr(a, mode="bogus")
    q, r, p = jsl.qr(a, pivoting=True)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r),
                               np.take_along_axis(a, np.asarray(p)[..., None, :], -1), atol=1e-5)
    with pytest.raises(ValueError, match="ndims >= 2"):
        lax_linalg.qr(np.ones(3, np.float32))


# ---------------- composites ----------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 4), (1, 1)])
def test_pinv_vs_numpy(rng, x64, dtype, shape):
    a = rng.standard_normal(shape).astype(dtype)
    _close(jnp.linalg.pinv(a), np.linalg.pinv(a.astype(np.float64)), dtype, scale=100)
    # Rank-deficient: the cutoff drops the null directions as NumPy's does.
    b = (rng.standard_normal(shape[:-1] + (1,)) @ rng.standard_normal((1, shape[-1])))
    b = b.astype(dtype)
    _close(jnp.linalg.pinv(b), np.linalg.pinv(b.astype(np.float64),
                                              rcond=10 * max(shape[-2:]) *
                                              np.finfo(dtype).eps), dtype, scale=100)
    _close(jnp.linalg.pinv(a, rtol=0.5), np.linalg.pinv(a.astype(np.float64), rcond=0.5), dtype,
           scale=100)
    assert jnp.linalg.pinv(np.zeros((0, 3), dtype)).shape == (3, 0)


def test_matrix_rank_lstsq_cond_norm(rng, x64):
    for m, n, r in [(5, 4, 2), (4, 6, 3), (3, 3, 3), (6, 6, 1)]:
        a = rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
        assert int(jnp.linalg.matrix_rank(a)) == np.linalg.matrix_rank(a) == r
    assert int(jnp.linalg.matrix_rank(np.zeros(3))) == 0
    assert int(jnp.linalg.matrix_rank(np.array([0.0, 2.0]))) == 1
    a = rng.standard_normal((2, 5, 5))
    np.testing.assert_array_equal(np.asarray(jnp.linalg.matrix_rank(a, rtol=1.0)),
                                  np.linalg.matrix_rank(a, tol=1.0))
    # lstsq: tall full rank, wide, rank deficient, 1-D b.
    for m, n in [(8, 3), (3, 8), (5, 5)]:
        a = rng.standard_normal((m, n))
        b = rng.standard_normal((m, 2))
        x, resid, rank, s = jnp.linalg.lstsq(a, b)
        xn, residn, rankn, sn = np.linalg.lstsq(a, b, rcond=None)
        np.testing.assert_allclose(np.asarray(x), xn, atol=1e-10)
        np.testing.assert_allclose(np.asarray(s), sn, atol=1e-12)
        assert int(rank) == rankn
        if m > n:
            np.testing.assert_allclose(np.asarray(resid), residn, rtol=1e-9)
        np.testing.assert_allclose(np.asarray(resid),
                                   np.sum((b - a @ np.asarray(x)) ** 2, axis=0), atol=1e-10)
    x1, resid1, _, _ = jnp.linalg.lstsq(a, b[:, 0])
    np.testing.assert_allclose(np.asarray(x1), np.linalg.lstsq(a, b[:, 0], rcond=None)[0],
                               atol=1e-10)
    assert x1.shape == (5,) and resid1.shape == (1,)
    # cond for every p.
    a = rng.standard_normal((3, 4, 4))
    for p in [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf]:
        np.testing.assert_allclose(np.asarray(jnp.linalg.cond(a, p)), np.linalg.cond(a, p),
                                   rtol=1e-8)
    t = rng.standard_normal((5, 3))
    np.testing.assert_allclose(np.asarray(jnp.linalg.cond(t)), np.linalg.cond(t), rtol=1e-8)
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.cond(rng.standard_normal((5, 3)), 1)
    # norm ord 2 / -2 / 'nuc' with axes and keepdims.
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for ord_ in (2, -2, "nuc"):
        for axis, keep in [((1, 2), False), ((2, 0), True), ((-1, 1), False)]:
            np.testing.assert_allclose(np.asarray(jnp.linalg.norm(x, ord_, axis, keep)),
                                       np.linalg.norm(x.astype(np.float64), ord_, axis, keep),
                                       rtol=2e-5)
        np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_norm(x, ord=ord_)),
                                   np.linalg.norm(x.astype(np.float64), ord_, (-2, -1)),
                                   rtol=2e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_expm_vs_scipy(rng, x64, dtype):
    for scale in [1e-3, 0.1, 0.7, 1.5, 4.0, 30.0]:
        a = (rng.standard_normal((4, 4)) * scale / 2).astype(dtype)
        want = sla.expm(a.astype(np.float64))
        got = np.asarray(jsl.expm(a), np.float64)
        assert jsl.expm(a).dtype == dtype
        np.testing.assert_allclose(got, want, rtol=_tol(dtype) * 100,
                                   atol=_tol(dtype) * 100 * np.abs(want).max())
    a = (rng.standard_normal((3, 5, 5))).astype(dtype)
    np.testing.assert_allclose(np.asarray(jsl.expm(a), np.float64),
                               np.stack([sla.expm(m.astype(np.float64)) for m in a]),
                               rtol=_tol(dtype) * 100, atol=_tol(dtype) * 100)
    t = np.triu(rng.standard_normal((4, 4))).astype(dtype)
    np.testing.assert_allclose(np.asarray(jsl.expm(t, upper_triangular=True), np.float64),
                               sla.expm(t.astype(np.float64)), rtol=_tol(dtype) * 100,
                               atol=_tol(dtype) * 100)
    np.testing.assert_array_equal(np.asarray(jsl.expm(np.zeros((1, 1), dtype))), [[1.0]])
    assert np.isnan(np.asarray(jsl.expm(np.eye(2, dtype=dtype) * 1e6, max_squarings=4))).all()
    with pytest.raises(ValueError, match="square"):
        jsl.expm(np.ones((2, 3), dtype))


def test_scipy_eigh(rng, x64):
    a = _sym(rng, (5, 5), np.float64)
    garbage = np.tril(a) + np.triu(rng.standard_normal((5, 5)), 1)
    w, v = jsl.eigh(garbage)  # lower=True: the lower triangle only
    np.testing.assert_allclose(np.asarray(w), sla.eigh(garbage, eigvals_only=True), atol=1e-12)
    np.testing.assert_allclose(np.asarray(jsl.eigh(a, lower=False, eigvals_only=True)),
                               sla.eigh(a, lower=False, eigvals_only=True), atol=1e-12)
    np.testing.assert_allclose(a @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-12)


# ---------------- transformations ----------------
def test_jit_and_vmap(rng):
    a = rng.standard_normal((4, 5, 3)).astype(np.float32)
    fns = [
        lambda x: jnp.linalg.svd(x, full_matrices=False).S,
        lambda x: jnp.abs(jnp.linalg.qr(x).R),
        lambda x: jnp.linalg.eigh(x @ x.T).eigenvalues,
        lambda x: jnp.linalg.pinv(x),
        lambda x: jnp.linalg.norm(x, 2),
        lambda x: jsl.expm(x[:3, :3] / 3),
        lambda x: jnp.linalg.cond(x[:3, :3], 1),
    ]
    for i, f in enumerate(fns):
        loop = np.stack([np.asarray(f(m)) for m in a])
        np.testing.assert_allclose(np.asarray(jax.vmap(f)(a)), loop, rtol=1e-4, atol=1e-5,
                                   err_msg=str(i))
        np.testing.assert_allclose(np.asarray(jax.jit(f)(a[0])), np.asarray(f(a[0])), rtol=1e-5,
                                   atol=1e-6, err_msg=str(i))
    # vmap over a non-leading axis.
    b = np.moveaxis(a, 0, 2)
    np.testing.assert_allclose(np.asarray(jax.vmap(fns[0], in_axes=2)(b)),
                               np.stack([np.asarray(fns[0](m)) for m in a]), rtol=1e-5)


def test_gradients_vs_finite_differences(rng, x64):
    a = rng.standard_normal((4, 4))
    c = rng.standard_normal((4, 4))
    cases = [
        (lambda x: jnp.sum(jnp.linalg.eigh(x).eigenvalues * c[0]) +
         jnp.sum(jnp.linalg.eigh(x).eigenvectors ** 2 * c), a),
        (lambda x: jnp.sum(jnp.linalg.svd(x, full_matrices=False).S * c[0, :3]) +
         jnp.sum(jnp.linalg.svd(x, full_matrices=False).U ** 2 * c[:, :3]), a[:, :3]),
        (lambda x: jnp.sum(jnp.linalg.svd(x, full_matrices=False).Vh ** 2 * c[:3, :]), a[:3]),
        (lambda x: jnp.sum(jnp.linalg.svdvals(x) * c[0, :3]), a[:3]),
        (lambda x: jnp.sum(jnp.linalg.qr(x).Q * c[:, :3]) + jnp.sum(jnp.linalg.qr(x).R * c[:3, :3]),
         a[:, :3]),
        (lambda x: jnp.sum(jnp.linalg.pinv(x) * c[:3, :]), a[:, :3]),
        (lambda x: jnp.sum(jnp.linalg.pinv(x) * c[:, :3]), a[:3]),
        (lambda x: jnp.sum(jsl.expm(x) * c), a / 2),
        (lambda x: jnp.linalg.norm(x, "nuc") + jnp.linalg.norm(x, 2), a),
        (lambda x: jnp.sum(jnp.linalg.lstsq(x, c[:, :2])[0]), a[:, :3]),
    ]
    for i, (f, x) in enumerate(cases):
        g = np.asarray(jax.grad(f)(x))
        np.testing.assert_allclose(g, _fd_grad(lambda y: np.asarray(f(y)), x), rtol=1e-5,
                                   atol=1e-6, err_msg=str(i))
    with pytest.raises(NotImplementedError, match="full matrices"):
        jax.grad(lambda x: jnp.sum(jnp.linalg.svd(x).U))(a[:, :3])
    with pytest.raises(NotImplementedError, match="QR decomposition derivative"):
        jax.grad(lambda x: jnp.sum(jnp.linalg.qr(x).R))(a[:3])


# ---------------- initializers ----------------
@pytest.mark.parametrize("shape,axis", [((5, 3), -1), ((3, 5), -1), ((4, 2, 3), -1),
                                        ((4, 2, 3), 0), ((6, 6), 1)])
def test_orthogonal_initializer(shape, axis):
    init = jax.nn.initializers.orthogonal(scale=2.0, column_axis=axis)
    w = np.asarray(init(jax.random.key(0), shape), np.float64)
    assert w.shape == shape and init(jax.random.key(0), shape).dtype == np.float32
    cols = shape[axis]
    mat = np.moveaxis(w, axis, -1).reshape(-1, cols) / 2.0
    rows = mat.shape[0]
    gram = mat.T @ mat if rows >= cols else mat @ mat.T
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-5)
    w2 = np.asarray(init(jax.random.key(1), shape))
    assert not np.allclose(w, w2)
    # Haar: the sign correction makes the mean of each entry over many draws ~ 0.
    draws = np.stack([np.asarray(jax.nn.initializers.orthogonal()(jax.random.key(k), (3, 3)))
                      for k in range(200)])
    assert np.abs(draws.mean(0)).max() < 0.2
    with pytest.raises(ValueError, match="at least a 2D shape"):
        jax.nn.initializers.orthogonal()(jax.random.key(0), (3,))


def test_random_orthogonal():
    q = np.asarray(jax.random.orthogonal(jax.random.key(0), 4, (2, 3)), np.float64)
    assert q.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
    np.testing.assert_array_equal(np.asarray(jax.random.orthogonal(jax.random.key(0), 4, (2, 3))),
                                  q.astype(np.float32))
    assert jax.random.orthogonal(jax.random.key(1), 3).shape == (3, 3)
    # Haar: no preferred signs, so each entry averages to ~0 over many draws.
    draws = np.asarray(jax.random.orthogonal(jax.random.key(2), 3, (400,)))
    assert np.abs(draws.mean(0)).max() < 0.15


def test_float32_gradients_vs_float64(rng):
    """The rules in float32 (no x64): gradients agree with the float64 ones to float32 accuracy."""
    a = rng.standard_normal((5, 3)).astype(np.float32)
    fns = [lambda x: jnp.sum(jnp.linalg.qr(x).Q[:, :2] * 0.5) + jnp.sum(jnp.linalg.qr(x).R[0]),
           lambda x: jnp.sum(jnp.linalg.svd(x, full_matrices=False).U ** 2 * 0.3 + x[0, 0]),
           lambda x: jnp.sum(jnp.linalg.eigh(x.T @ x).eigenvalues ** 2)]
    for i, f in enumerate(fns):
        g32 = np.asarray(jax.grad(f)(a))
        old = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)
        try:
            g64 = np.asarray(jax.grad(f)(a.astype(np.float64)))
        finally:
            jax.config.update("jax_enable_x64", old)
        assert g32.dtype == np.float32
        np.testing.assert_allclose(g32, g64, rtol=1e-3, atol=1e-4, err_msg=str(i))


def test_subset_by_index_vs_numpy(rng, x64):
    """lax.linalg.eigh / svd and jnp.linalg.svd with subset_by_index=(start, end): eigenvalues
    counted in ascending order, singular values in descending order (JAX's convention), under
    jit and grad; JAX's errors for bad ranges and for full_matrices."""
    a = rng.standard_normal((2, 7, 5))
    s_np = np.linalg.svd(a, compute_uv=False)
    for lo, hi in [(0, 5), (1, 3), (4, 5), (2, 2)]:
        u, s, vh = lax_linalg.svd(a, full_matrices=False, subset_by_index=(lo, hi))
        assert u.shape == (2, 7, hi - lo) and s.shape == (2, hi - lo) and vh.shape == (2, hi - lo, 5)
        np.testing.assert_allclose(np.asarray(s), s_np[:, lo:hi], rtol=1e-10)
        # u[:, k] s[k] vh[k] reproduces the projection of a on those singular directions.
        recon = np.einsum("bik,bk,bkj->bij", np.asarray(u), np.asarray(s), np.asarray(vh))
        un, sn, vhn = np.linalg.svd(a, full_matrices=False)
        want = np.einsum("bik,bk,bkj->bij", un[..., lo:hi], sn[..., lo:hi], vhn[..., lo:hi, :])
        np.testing.assert_allclose(recon, want, atol=1e-10)
        only_s = jnp.linalg.svd(a, full_matrices=False, compute_uv=False, subset_by_index=(lo, hi))
        np.testing.assert_allclose(np.asarray(only_s), s_np[:, lo:hi], rtol=1e-10)
    sym = _sym(rng, (6, 6), np.float64)
    w_np = np.linalg.eigvalsh(sym)
    v, w = jax.jit(lambda x: lax_linalg.eigh(x, subset_by_index=(2, 5)))(sym)
    np.testing.assert_allclose(np.asarray(w), w_np[2:5], rtol=1e-10)
    np.testing.assert_allclose(sym @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-10)
    f = lambda x: lax_linalg.eigh(x, symmetrize_input=False, subset_by_index=(1, 3))[1].sum()
    g = np.asarray(jax.grad(f)(sym))
    # d(sum of eigenvalues 1, 2)/dA = v1 v1ᵀ + v2 v2ᵀ (symmetrize_input=False: the raw derivative).
    vn = np.linalg.eigh(sym)[1][:, 1:3]
    np.testing.assert_allclose(g, vn @ vn.T, atol=1e-8)
    with pytest.raises(ValueError, match="full_matrices and subset_by_index"):
        lax_linalg.svd(a, subset_by_index=(0, 2))
    with pytest.raises(ValueError, match="exceeds"):
        lax_linalg.eigh(sym, subset_by_index=(0, 7))
    with pytest.raises(ValueError, match="non-negative"):
        lax_linalg.svd(a, full_matrices=False, subset_by_index=(-1, 2))
