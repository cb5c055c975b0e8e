"""tessera.lax.linalg (triangular_solve, cholesky, lu, lu_pivots_to_permutation),
tessera.numpy.linalg's solve family and tessera.scipy.linalg's against NumPy and SciPy on fresh
random inputs (well- and ill-conditioned, batched, empty, 1x1; float32 and float64), with jit,
vmap and grad checked against eager results and float64 central differences. The seed is
TESSERA_TEST_SEED (or the clock)."""
import numpy as np
import pytest
import scipy.linalg as sla

import tessera
import tessera.numpy as jnp
import tessera.scipy.linalg as tsl
from tessera import lax
from tessera.lax import linalg as tll

DTYPES = ["float32", "float64"]


def tol(dtype, cond=1.0):
    return (1e-4 if dtype == "float32" else 1e-10) * cond


@pytest.fixture(params=DTYPES)
def dtype(request):
    old = tessera.config.jax_enable_x64
    tessera.config.update("jax_enable_x64", request.param == "float64")
    try:
        yield request.param
    finally:
        tessera.config.update("jax_enable_x64", old)


def wellcond(rng, shape):
    a = rng.uniform(-1, 1, size=shape)
    n = shape[-1]
    return a + 3 * np.eye(n) * np.sign(rng.uniform(-1, 1, size=(n,)))


def spd(rng, shape):
    m = rng.uniform(-1, 1, size=shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[i] += h
        m[i] -= h
        g[i] = (float(f(jnp.asarray(p))) - float(f(jnp.asarray(m)))) / (2 * h)
    return g


# ------------------------------------------------------------------------------ primitives

@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_triangular_solve_vs_scipy(rng, dtype, left, lower, trans, unit):
    m, n = 5, 3
    a = wellcond(rng, (2, m, m)).astype(dtype)
    b = rng.uniform(-1, 1, size=(2, m, n) if left else (2, n, m)).astype(dtype)
    x = np.asarray(tll.triangular_solve(jnp.asarray(a), jnp.asarray(b), left_side=left,
                                        lower=lower, transpose_a=trans, unit_diagonal=unit))
    assert x.dtype == np.dtype(dtype)
    for i in range(2):
        if left:
            want = sla.solve_triangular(a[i], b[i], lower=lower, trans=int(trans),
                                        unit_diagonal=unit)
        else:  # x op(a) = b  <=>  op(a)^T x^T = b^T
            want = sla.solve_triangular(a[i], b[i].T, lower=lower, trans=1 - int(trans),
                                        unit_diagonal=unit).T
        np.testing.assert_allclose(x[i], want, rtol=tol(dtype), atol=tol(dtype))


def test_cholesky_vs_numpy(rng, dtype):
    for shape in [(1, 1), (4, 4), (3, 6, 6), (0, 0), (2, 0, 0)]:
        a = spd(rng, shape).astype(dtype)
        got = np.asarray(tll.cholesky(jnp.asarray(a)))
        np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=tol(dtype, 10),
                                   atol=tol(dtype, 10))
        got = np.asarray(jnp.linalg.cholesky(jnp.asarray(a), upper=True))
        np.testing.assert_allclose(got, np.swapaxes(np.linalg.cholesky(a), -1, -2),
                                   rtol=tol(dtype, 10), atol=tol(dtype, 10))
    a = spd(rng, (4, 4)).astype(dtype)
    junk = a + np.triu(rng.uniform(-1, 1, size=(4, 4)), 1).astype(dtype)
    for lower_only in [tll.cholesky(jnp.asarray(junk), symmetrize_input=False),
                       jnp.linalg.cholesky(jnp.asarray(junk), symmetrize_input=False)]:
        np.testing.assert_allclose(np.asarray(lower_only), np.linalg.cholesky(a),
                                   rtol=tol(dtype, 10), atol=tol(dtype, 10))
    bad = np.array([[1.0, 2.0], [2.0, 1.0]], dtype)
    assert np.isnan(np.asarray(tll.cholesky(jnp.asarray(bad)))).all()


def test_lu_vs_scipy(rng, dtype):
    for shape in [(1, 1), (5, 5), (6, 4), (3, 7), (2, 4, 4)]:
        a = rng.uniform(-1, 1, size=shape).astype(dtype)
        lu, piv, perm = tll.lu(jnp.asarray(a))
        assert piv.dtype == np.int32 and perm.dtype == np.int32
        for i in np.ndindex(shape[:-2]):
            want_lu, want_piv = sla.lu_factor(a[i])
            np.testing.assert_allclose(np.asarray(lu)[i], want_lu, rtol=tol(dtype, 10),
                                       atol=tol(dtype, 10))
            np.testing.assert_array_equal(np.asarray(piv)[i], want_piv)
            p, _, _ = sla.lu(a[i])  # a = p l u, so a[perm] = l u with perm = argmax of p's columns
            np.testing.assert_array_equal(np.asarray(perm)[i], np.argmax(p, axis=0))
    np.testing.assert_array_equal(
        np.asarray(tll.lu_pivots_to_permutation(jnp.asarray(np.array([2, 2, 2], np.int32)), 5)),
        [2, 0, 1, 3, 4])


# ------------------------------------------------------------------------------ jnp.linalg

def test_solve_shapes_and_values(rng, dtype):
    a = wellcond(rng, (3, 4, 4)).astype(dtype)
    for bshape in [(4,), (3, 4, 2), (4, 2), (1, 4, 5)]:
        b = rng.uniform(-1, 1, size=bshape).astype(dtype)
        got = np.asarray(jnp.linalg.solve(jnp.asarray(a), jnp.asarray(b)))
        if b.ndim == 1:
            want = np.linalg.solve(a, np.broadcast_to(b[:, None], a.shape[:-1] + (1,)))[..., 0]
        else:  # NumPy 2's rule: b is [..., m, k], batch dims broadcast
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            want = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]),
                                   np.broadcast_to(b, batch + b.shape[-2:]))
        np.testing.assert_allclose(got, want, rtol=tol(dtype, 10), atol=tol(dtype, 10))
    with pytest.raises(ValueError, match="batched 1-dimensional solve"):
        jnp.linalg.solve(jnp.asarray(a), jnp.asarray(rng.uniform(size=(3, 4)).astype(dtype)))


def test_ill_conditioned_matches_numpy(rng, dtype):
    # Hilbert-like matrix, condition ~1e5 (float32) / 1e10 (float64): relative residuals small.
    n = 5 if dtype == "float32" else 8
    a = (1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)).astype(dtype)
    b = rng.uniform(-1, 1, size=(n,)).astype(dtype)
    # Backward stable whatever the conditioning: the normwise backward error
    # |A x - b| / (|A| |x| + |b|) is a small multiple of n eps.
    x = np.asarray(jnp.linalg.solve(jnp.asarray(a), jnp.asarray(b))).astype(np.float64)
    a64 = a.astype(np.float64)
    err = np.linalg.norm(a64 @ x - b) / (np.linalg.norm(a64, 2) * np.linalg.norm(x) +
                                         np.linalg.norm(b))
    assert err <= 10 * n * np.finfo(dtype).eps, err
    np.testing.assert_allclose(float(jnp.linalg.det(jnp.asarray(a))),
                               np.linalg.det(a.astype(np.float64)), rtol=1e-2)


def test_inv_det_slogdet(rng, dtype):
    for shape in [(1, 1), (3, 3), (2, 5, 5)]:
        a = wellcond(rng, shape).astype(dtype)
        np.testing.assert_allclose(np.asarray(jnp.linalg.inv(jnp.asarray(a))), np.linalg.inv(a),
                                   rtol=tol(dtype, 10), atol=tol(dtype, 10))
        np.testing.assert_allclose(np.asarray(jnp.linalg.det(jnp.asarray(a))), np.linalg.det(a),
                                   rtol=tol(dtype, 100))
        sign, logdet = jnp.linalg.slogdet(jnp.asarray(a))
        ws, wl = np.linalg.slogdet(a)
        np.testing.assert_array_equal(np.asarray(sign), ws)
        np.testing.assert_allclose(np.asarray(logdet), wl, rtol=tol(dtype, 10),
                                   atol=tol(dtype, 10))
    sing = np.array([[1.0, 2.0], [2.0, 4.0]], dtype)
    assert float(jnp.linalg.det(jnp.asarray(sing))) == 0.0
    s, l = jnp.linalg.slogdet(jnp.asarray(sing))
    assert float(s) == 0.0 and float(l) == -np.inf
    # Integers promote as jnp's to_inexact (int32 -> float32, int64 under x64 -> float64).
    ai = np.array([[2, 1], [1, 3]], "int64" if dtype == "float64" else "int32")
    d = jnp.linalg.det(jnp.asarray(ai))
    assert d.dtype == np.dtype(dtype)
    np.testing.assert_allclose(float(d), 5.0, rtol=1e-5)
    assert jnp.linalg.inv(jnp.zeros((2, 0, 0), dtype)).shape == (2, 0, 0)


def test_matrix_power_multi_dot_tensor(rng, dtype):
    a = wellcond(rng, (2, 3, 3)).astype(dtype)
    for n in [0, 1, 2, 5, -1, -3]:
        np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(jnp.asarray(a), n)),
                                   np.linalg.matrix_power(a.astype(np.float64), n),
                                   rtol=tol(dtype, 100), atol=tol(dtype, 100))
    for shapes in [[(4,), (4, 3), (3, 5), (5,)], [(6, 2), (2, 7), (7, 3), (3, 4)],
                   [(2, 8), (8,)], [(5,), (5, 2), (2, 9)]]:
        xs = [rng.uniform(-1, 1, size=s).astype(dtype) for s in shapes]
        got = np.asarray(jnp.linalg.multi_dot([jnp.asarray(x) for x in xs]))
        want = np.linalg.multi_dot(xs)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol(dtype, 10), atol=tol(dtype, 10))
    t = wellcond(rng, (6, 6)).astype(dtype).reshape(2, 3, 6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorinv(jnp.asarray(t), 2)),
                               np.linalg.tensorinv(t, 2), rtol=tol(dtype, 10),
                               atol=tol(dtype, 10))
    b = rng.uniform(-1, 1, size=(2, 3)).astype(dtype)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorsolve(jnp.asarray(t), jnp.asarray(b))),
                               np.linalg.tensorsolve(t, b), rtol=tol(dtype, 10),
                               atol=tol(dtype, 10))


# ------------------------------------------------------------------------------ scipy.linalg

def test_scipy_linalg(rng, dtype):
    n = 4
    a = wellcond(rng, (n, n)).astype(dtype)
    p_ = spd(rng, (n, n)).astype(dtype)
    b = rng.uniform(-1, 1, size=(n, 2)).astype(dtype)
    t = tol(dtype, 10)
    for lower in [False, True]:
        c = tsl.cho_factor(jnp.asarray(p_), lower=lower)
        np.testing.assert_allclose(np.asarray(tsl.cho_solve(c, jnp.asarray(b))),
                                   sla.cho_solve(sla.cho_factor(p_, lower=lower), b), rtol=t,
                                   atol=t)
        np.testing.assert_allclose(np.asarray(tsl.cholesky(jnp.asarray(p_), lower=lower)),
                                   sla.cholesky(p_, lower=lower), rtol=t, atol=t)
        np.testing.assert_allclose(
            np.asarray(tsl.solve(jnp.asarray(p_), jnp.asarray(b), lower=lower, assume_a="pos")),
            sla.solve(p_, b, assume_a="pos"), rtol=t, atol=t)
    lu_piv = tsl.lu_factor(jnp.asarray(a))
    for trans in [0, 1, 2]:
        np.testing.assert_allclose(np.asarray(tsl.lu_solve(lu_piv, jnp.asarray(b), trans=trans)),
                                   sla.lu_solve(sla.lu_factor(a), b, trans=trans), rtol=t, atol=t)
        np.testing.assert_allclose(
            np.asarray(tsl.solve_triangular(jnp.asarray(a), jnp.asarray(b[:, 0]), trans=trans,
                                            lower=True)),
            sla.solve_triangular(a, b[:, 0], trans=trans, lower=True), rtol=t, atol=t)
    for shape in [(4, 4), (5, 3), (3, 5)]:
        m = rng.uniform(-1, 1, size=shape).astype(dtype)
        for got, want in zip(tsl.lu(jnp.asarray(m)), sla.lu(m)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=t, atol=t)
        for got, want in zip(tsl.lu(jnp.asarray(m), permute_l=True), sla.lu(m, permute_l=True)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=t, atol=t)
    np.testing.assert_allclose(np.asarray(tsl.solve(jnp.asarray(a), jnp.asarray(b))),
                               sla.solve(a, b), rtol=t, atol=t)
    np.testing.assert_allclose(np.asarray(tsl.inv(jnp.asarray(a))), sla.inv(a), rtol=t, atol=t)
    np.testing.assert_allclose(float(tsl.det(jnp.asarray(a))), sla.det(a), rtol=t)
    with pytest.raises(ValueError, match="assume_a"):
        tsl.solve(jnp.asarray(a), jnp.asarray(b), assume_a="banded")


# ------------------------------------------------------------------------------ transforms

def test_jit_vmap(rng, dtype):
    a = wellcond(rng, (4, 3, 3)).astype(dtype)
    b = rng.uniform(-1, 1, size=(4, 3)).astype(dtype)
    A, B = jnp.asarray(a), jnp.asarray(b)
    t = tol(dtype, 10)
    for f, args in [(jnp.linalg.solve, (A, B)), (jnp.linalg.inv, (A,)), (jnp.linalg.det, (A,)),
                    (lambda x: tll.lu(x)[0], (A,)),
                    (lambda x: tll.cholesky(x @ jnp.swapaxes(x, -1, -2)), (A,)),
                    (lambda x, y: tll.triangular_solve(x, y, left_side=True, lower=True), (A, B))]:
        loop = np.stack([np.asarray(f(*(x[i] for x in args))) for i in range(4)])
        np.testing.assert_allclose(np.asarray(tessera.vmap(f)(*args)), loop, rtol=t, atol=t)
        one = [x[0] for x in args]
        np.testing.assert_allclose(np.asarray(tessera.jit(f)(*one)), np.asarray(f(*one)),
                                   rtol=t, atol=t)


def test_gradients_vs_finite_differences(rng, x64):
    a = wellcond(rng, (3, 3))
    b = rng.uniform(-1, 1, size=(3,))
    w = rng.uniform(-1, 1, size=(3, 3))
    fns = {
        "solve_a": (lambda x: jnp.sum(jnp.linalg.solve(x, jnp.asarray(b)) * w[0]), a),
        "solve_b": (lambda y: jnp.sum(jnp.linalg.solve(jnp.asarray(a), y) * w[0]), b),
        "inv": (lambda x: jnp.sum(jnp.linalg.inv(x) * w), a),
        "det": (lambda x: jnp.linalg.det(x), a),
        "slogdet": (lambda x: jnp.linalg.slogdet(x)[1], a),
        "cholesky": (lambda x: jnp.sum(jnp.linalg.cholesky(x @ x.T + 3 * jnp.eye(3)) * w), a),
        "lu": (lambda x: jnp.sum(tll.lu(x)[0] * w), a),
        "tri": (lambda x: jnp.sum(tll.triangular_solve(x, jnp.asarray(w), left_side=True,
                                                       lower=True)), a),
        "cho_solve": (lambda x: jnp.sum(tsl.solve(x @ x.T + 3 * jnp.eye(3), jnp.asarray(b),
                                                  assume_a="pos") * w[0]), a),
        "lu_solve": (lambda y: jnp.sum(tsl.lu_solve(tsl.lu_factor(jnp.asarray(a)), y, trans=1)
                                       * w[0]), b),
    }
    for name, (f, x0) in fns.items():
        g = np.asarray(tessera.grad(f)(jnp.asarray(x0)))
        np.testing.assert_allclose(g, fd_grad(f, x0), rtol=1e-5, atol=1e-6, err_msg=name)


def test_det_grad_of_singular_matrix(x64):
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    g = np.asarray(tessera.grad(jnp.linalg.det)(jnp.asarray(s)))
    cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(s, i, 0), j, 1))
                     for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(g, cof, atol=1e-9)


def test_errors():
    with pytest.raises(ValueError, match=r"must have shape \[\.\.\., n, n\]"):
        jnp.linalg.inv(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="at least two dimensional"):
        jnp.linalg.solve(jnp.ones((3,)), jnp.ones((3,)))
    with pytest.raises(TypeError, match="last two dimensions of a to be equal"):
        tll.triangular_solve(jnp.ones((2, 3)), jnp.ones((2, 3)), left_side=True)
    with pytest.raises(ValueError, match="Invalid 'trans'"):
        tsl.solve_triangular(jnp.eye(2), jnp.ones(2), trans=3)
    with pytest.raises(ValueError, match="ndims >= 2"):
        tll.lu(jnp.ones(3))


# ------------------------------------------------------------------------------ custom_linear_solve

def test_custom_linear_solve(rng, x64):
    a = wellcond(rng, (3, 3))
    b = rng.uniform(-1, 1, size=(3,))
    w = rng.uniform(-1, 1, size=(3,))

    def via_custom(x, y, symmetric=False, transpose=True):
        xs = x @ x.T + 3 * jnp.eye(3) if symmetric else x
        mv = lambda v: xs @ v  # noqa: E731
        lu_ = tsl.lu_factor(lax.stop_gradient(xs))
        sol = lambda _, v: tsl.lu_solve(lu_, v)  # noqa: E731
        tsol = (lambda _, v: tsl.lu_solve(lu_, v, trans=1)) if transpose else None
        return lax.custom_linear_solve(mv, y, sol, None if symmetric else tsol,
                                       symmetric=symmetric)

    for sym in [False, True]:
        for tr in [True, False]:
            f = lambda x: jnp.sum(via_custom(x, jnp.asarray(b), sym, tr) * w)  # noqa: E731
            fb = lambda y: jnp.sum(via_custom(jnp.asarray(a), y, sym, tr) * w)  # noqa: E731
            xs = a @ a.T + 3 * np.eye(3) if sym else a
            np.testing.assert_allclose(np.asarray(via_custom(jnp.asarray(a), jnp.asarray(b),
                                                             sym, tr)),
                                       np.linalg.solve(xs, b), rtol=1e-10)
            # Forward mode works with or without transpose_solve (JAX's JVP rule).
            t = rng.uniform(-1, 1, size=(3, 3))
            _, jt = tessera.jvp(f, (jnp.asarray(a),), (jnp.asarray(t),))
            np.testing.assert_allclose(float(jt), float(np.sum(fd_grad(f, a) * t)),
                                       rtol=1e-5, atol=1e-6)
            if not (sym or tr):  # reverse mode needs transpose_solve, as in JAX
                with pytest.raises(TypeError, match="transpose_solve required for backwards "
                                                    "mode automatic differentiation"):
                    tessera.grad(f)(jnp.asarray(a))
                continue
            np.testing.assert_allclose(np.asarray(tessera.grad(f)(jnp.asarray(a))),
                                       fd_grad(f, a), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(np.asarray(tessera.grad(fb)(jnp.asarray(b))),
                                       fd_grad(fb, b), rtol=1e-5, atol=1e-6)
            # Forward mode agrees with reverse mode.
            np.testing.assert_allclose(float(jt),
                                       float(jnp.sum(tessera.grad(f)(jnp.asarray(a)) * t)),
                                       rtol=1e-8)


def test_custom_root(x64):
    # sqrt(c) as the root of x^2 - c, found by Newton; d/dc = 1 / (2 sqrt(c)).
    def newton(f, x0):
        x = x0
        for _ in range(30):
            x = x - f(x) / (2 * x)
        return x

    def sqrt(c):
        return lax.custom_root(lambda x: x * x - c, jnp.asarray(1.0), newton,
                               lambda g, y: y / g(jnp.asarray(1.0)))

    np.testing.assert_allclose(float(sqrt(jnp.asarray(2.0))), np.sqrt(2.0), rtol=1e-12)
    np.testing.assert_allclose(float(tessera.grad(sqrt)(jnp.asarray(2.0))), 0.5 / np.sqrt(2.0),
                               rtol=1e-10)


def test_float32_gradients_match_float64(rng):
    # The rules build masks and constants in the operands' dtype (no 64-bit leaks without x64).
    a = wellcond(rng, (3, 3))
    w = rng.uniform(-1, 1, size=(3, 3))
    fns = [
        lambda x: jnp.sum(tll.triangular_solve(x, jnp.asarray(w, x.dtype), left_side=True,
                                               lower=True, unit_diagonal=True)),
        lambda x: jnp.sum(jnp.linalg.cholesky(x @ x.T + 3 * jnp.eye(3, dtype=x.dtype))
                          * jnp.asarray(w, x.dtype)),
        lambda x: jnp.sum(tll.lu(x)[0] * jnp.asarray(w, x.dtype)),
        lambda x: jnp.linalg.det(x),
        lambda x: jnp.sum(jnp.linalg.inv(x) * jnp.asarray(w, x.dtype)),
    ]
    for f in fns:
        g32 = np.asarray(tessera.grad(f)(jnp.asarray(a.astype(np.float32))))
        assert g32.dtype == np.float32
        old = tessera.config.jax_enable_x64
        tessera.config.update("jax_enable_x64", True)
        try:
            g64 = np.asarray(tessera.grad(f)(jnp.asarray(a)))
        finally:
            tessera.config.update("jax_enable_x64", old)
        np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5)
