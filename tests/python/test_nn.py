"""tessera.nn (jax.nn) against PyTorch (torch.nn.functional and torch.autograd), SciPy
(scipy.special.softmax / log_softmax / logsumexp) and NumPy formulas, on fresh random inputs:
forward values in float32/float64 (and the dtypes of bf16/f16/int inputs), special values (0,
±inf, NaN), gradients with jax.grad against torch.autograd, JAX's pinned derivatives at the
kinks, the `where=` forms, logsumexp's b/return_sign/keepdims, one_hot's edge cases, and
jit/vmap against eager and a loop. The seed is TESSERA_TEST_SEED (or the clock)."""

import inspect

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp

torch = pytest.importorskip("torch")
scipy_special = pytest.importorskip("scipy.special")
F = torch.nn.functional

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _np_sigmoid(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


def _np_softplus(x):
    with np.errstate(invalid="ignore"):
        return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


# name -> (tessera function, torch reference or None, NumPy reference, kinks)
ACTS = {
    "relu": (jax.nn.relu, F.relu, lambda x: np.maximum(x, 0), [0]),
    "relu6": (jax.nn.relu6, F.relu6, lambda x: np.minimum(np.maximum(x, 0), 6), [0, 6]),
    "gelu": (jax.nn.gelu, lambda t: F.gelu(t, approximate="tanh"),
             lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), []),
    "gelu_exact": (lambda x: jax.nn.gelu(x, approximate=False), F.gelu,
                   lambda x: 0.5 * x * scipy_special.erfc(-x / np.sqrt(2)), []),
    "sigmoid": (jax.nn.sigmoid, torch.sigmoid, _np_sigmoid, []),
    "silu": (jax.nn.silu, F.silu, lambda x: x * _np_sigmoid(x), []),
    "swish": (jax.nn.swish, F.silu, lambda x: x * _np_sigmoid(x), []),
    "log_sigmoid": (jax.nn.log_sigmoid, F.logsigmoid, lambda x: -_np_softplus(-x), []),
    "softplus": (jax.nn.softplus, F.softplus, _np_softplus, []),
    "soft_sign": (jax.nn.soft_sign, F.softsign, lambda x: x / (np.abs(x) + 1), [0]),
    "elu": (jax.nn.elu, F.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), [0]),
    "elu_alpha": (lambda x: jax.nn.elu(x, alpha=0.3), lambda t: F.elu(t, alpha=0.3),
                  lambda x: np.where(x > 0, x, 0.3 * np.expm1(np.minimum(x, 0))), [0]),
    "celu": (lambda x: jax.nn.celu(x, 2.0), lambda t: F.celu(t, alpha=2.0),
             lambda x: np.maximum(x, 0) + 2.0 * np.expm1(np.minimum(x, 0) / 2.0), [0]),
    "selu": (jax.nn.selu, F.selu,
             lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))), [0]),
    "leaky_relu": (jax.nn.leaky_relu, F.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x), [0]),
    "leaky_relu_slope": (lambda x: jax.nn.leaky_relu(x, negative_slope=0.2),
                         lambda t: F.leaky_relu(t, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x), [0]),
    "hard_tanh": (jax.nn.hard_tanh, F.hardtanh, lambda x: np.clip(x, -1, 1), [-1, 1]),
    "hard_sigmoid": (jax.nn.hard_sigmoid, F.hardsigmoid,
                     lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6, [-3, 3]),
    "hard_silu": (jax.nn.hard_silu, F.hardswish,
                  lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6, [-3, 3]),
    "hard_swish": (jax.nn.hard_swish, F.hardswish,
                   lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6, [-3, 3]),
    "mish": (jax.nn.mish, F.mish, lambda x: x * np.tanh(_np_softplus(x)), []),
    "tanh": (jax.nn.tanh, torch.tanh, np.tanh, []),
    "squareplus": (jax.nn.squareplus, None, lambda x: (x + np.sqrt(x * x + 4)) / 2, []),
    "squareplus_b": (lambda x: jax.nn.squareplus(x, b=0.5), None,
                     lambda x: (x + np.sqrt(x * x + 0.5)) / 2, []),
    "sparse_plus": (jax.nn.sparse_plus, None,
                    lambda x: np.where(x <= -1, 0.0, np.where(x >= 1, x, (x + 1) ** 2 / 4)), [-1, 1]),
    "sparse_sigmoid": (jax.nn.sparse_sigmoid, None,
                       lambda x: 0.5 * np.clip(x + 1, 0, 2), [-1, 1]),
    "identity": (jax.nn.identity, lambda t: t, lambda x: x, []),
}


def draw(rng, shape, large=True):
    """Moderate values, with some large magnitudes (where a naive exp overflows)."""
    x = rng.uniform(-8, 8, size=shape)
    if large:
        big = rng.uniform(size=shape) < 0.15
        x[big] = rng.choice([-1, 1], size=int(big.sum())) * np.exp(
            rng.uniform(np.log(20), np.log(1e4), size=int(big.sum())))
    return x


@pytest.mark.parametrize("name", sorted(ACTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_forward(name, dtype, rng, x64):
    f, tref, nref, _ = ACTS[name]
    x = draw(rng, (200,)).astype(dtype)
    y = f(jnp.asarray(x))
    assert str(y.dtype) == dtype
    if tref is not None and dtype == "float32":
        want = tref(torch.from_numpy(x)).numpy()
    else:
        with np.errstate(all="ignore"):
            want = nref(x.astype(np.float64)).astype(dtype)
    tol = dict(rtol=2e-5, atol=1e-6 * (1 + np.abs(x))) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12 * (1 + np.abs(x)))
    diff_ok = np.abs(np.asarray(y, np.float64) - want) <= tol["atol"] + tol["rtol"] * np.abs(want)
    assert diff_ok.all(), (name, x[~diff_ok], np.asarray(y)[~diff_ok], want[~diff_ok])


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_special_values(name):
    f, _, nref, _ = ACTS[name]
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 6.0], np.float32)
    with np.errstate(all="ignore"):
        want = nref(x.astype(np.float64))
    got = np.asarray(f(jnp.asarray(x)), np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_dtypes(name):
    f = ACTS[name][0]
    for dt in [jnp.float16, jnp.bfloat16]:
        assert f(jnp.asarray([0.5, -1.5], dtype=dt)).dtype == dt, name
    # jax.nn.relu/hard_tanh/identity keep integers (JAX's compositions); the others promote.
    keeps = name in ("relu", "hard_tanh", "identity")
    y = f(jnp.asarray([-2, 0, 3], dtype=jnp.int32))
    assert str(y.dtype) == ("int32" if keeps else "float32"), (name, y.dtype)


@pytest.mark.parametrize("name", [n for n in sorted(ACTS) if ACTS[n][1] is not None])
def test_activation_grad_vs_torch(name, rng, x64):
    f, tref, _, kinks = ACTS[name]
    x = rng.uniform(-7, 7, size=64)
    for k in kinks:
        x[np.abs(x - k) < 1e-3] += 2e-3
    g = jax.grad(lambda v: jnp.sum(f(v)))(jnp.asarray(x))
    xt = torch.tensor(x, requires_grad=True)
    tref(xt).sum().backward()
    # torch's hardsigmoid/hardswish backward multiplies by a float32 1/6 even in float64.
    rtol = 1e-7 if name.startswith(("hard_sigmoid", "hard_s")) else 1e-10
    np.testing.assert_allclose(np.asarray(g), xt.grad.numpy(), rtol=rtol, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", [n for n in sorted(ACTS) if ACTS[n][1] is None])
def test_activation_grad_vs_finite_differences(name, rng, x64):
    f, _, nref, kinks = ACTS[name]
    x = rng.uniform(-7, 7, size=64)
    for k in kinks:
        x[np.abs(x - k) < 1e-3] += 2e-3
    g = jax.grad(lambda v: jnp.sum(f(v)))(jnp.asarray(x))
    h = 1e-6
    fd = (nref(x + h) - nref(x - h)) / (2 * h)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-8, err_msg=name)


def test_pinned_derivatives_at_kinks():
    d = lambda f, x: float(jax.grad(f)(jnp.float32(x)))
    assert d(jax.nn.relu, 0.0) == 0.0
    assert d(jax.nn.relu, 1.0) == 1.0
    assert d(jax.nn.relu6, 0.0) == 0.0
    assert d(jax.nn.relu6, 6.0) == 0.0
    assert d(jax.nn.relu6, 3.0) == 1.0
    assert d(jax.nn.hard_sigmoid, 3.0) == 0.0
    assert d(jax.nn.hard_sigmoid, -3.0) == 0.0
    assert d(jax.nn.hard_silu, -3.0) == 0.0
    assert d(jax.nn.hard_silu, 3.0) == 1.0
    # relu's tangent at NaN is 0, as JAX's select(x > 0, g, 0).
    _, t = jax.jvp(jax.nn.relu, (jnp.asarray([np.nan, 2.0]),), (jnp.asarray([1.0, 1.0]),))
    np.testing.assert_array_equal(np.asarray(t), [0.0, 1.0])


def test_jax_signatures_and_defaults():
    sig = lambda f: {k: p.default for k, p in inspect.signature(f).parameters.items()}
    assert sig(jax.nn.gelu)["approximate"] is True
    assert sig(jax.nn.leaky_relu)["negative_slope"] == 0.01
    assert sig(jax.nn.squareplus)["b"] == 4
    assert sig(jax.nn.elu)["alpha"] == 1.0
    assert sig(jax.nn.softmax)["axis"] == -1
    assert sig(jax.nn.logsumexp) == {"a": inspect.Parameter.empty, "axis": None, "b": None,
                                     "keepdims": False, "return_sign": False, "where": None}
    assert sig(jax.nn.standardize)["epsilon"] == 1e-5
    assert inspect.signature(jax.nn.one_hot).parameters["dtype"].kind == inspect.Parameter.KEYWORD_ONLY
    assert jax.nn.swish is jax.nn.silu and jax.nn.hard_swish is jax.nn.hard_silu
    assert "nn" in jax.__all__


# ---------------------------------------------------------------- softmax family

def _masked_ref_softmax(x, mask, axis):
    xm = np.where(mask, x, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.max(xm, axis=axis, keepdims=True)
        e = np.where(mask, np.exp(xm - m), 0.0)
        s = e.sum(axis=axis, keepdims=True)
        return np.where(mask, e / s, 0.0), np.where(mask, (xm - m) - np.log(s), -np.inf)


@pytest.mark.parametrize("axis", [-1, 0, (0, 2), None])
def test_softmax_log_softmax_vs_scipy(axis, rng):
    x = rng.uniform(-5, 5, size=(3, 4, 5)).astype(np.float32)
    x[0, 1, :] *= 3e3  # large logits
    np.testing.assert_allclose(np.asarray(jax.nn.softmax(x, axis=axis)),
                               scipy_special.softmax(x.astype(np.float64), axis=axis),
                               rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.nn.log_softmax(x, axis=axis)),
                               scipy_special.log_softmax(x.astype(np.float64), axis=axis),
                               rtol=2e-5, atol=2e-3)


def test_softmax_where_and_special_rows(rng):
    x = rng.uniform(-4, 4, size=(5, 6))
    mask = rng.uniform(size=(5, 6)) < 0.6
    mask[:, 0] = True
    mask[4] = False  # a fully masked row
    x[2] = -np.inf   # an all -inf row (unmasked entries are -inf)
    want_sm, want_lsm = _masked_ref_softmax(x.astype(np.float32).astype(np.float64), mask, -1)
    got_sm = np.asarray(jax.nn.softmax(jnp.asarray(x, dtype=jnp.float32), where=mask))
    got_lsm = np.asarray(jax.nn.log_softmax(jnp.asarray(x, dtype=jnp.float32), where=mask))
    np.testing.assert_allclose(got_sm, want_sm, rtol=1e-5, atol=1e-7, equal_nan=True)
    np.testing.assert_allclose(got_lsm, want_lsm, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert (got_sm[4] == 0).all() and (got_lsm[4] == -np.inf).all()
    # JAX: an all -inf row is NaN; a +inf entry makes the row NaN.
    assert np.isnan(np.asarray(jax.nn.log_softmax(jnp.asarray([-np.inf, -np.inf])))).all()
    assert np.isnan(np.asarray(jax.nn.softmax(jnp.asarray([1.0, np.inf])))).all()


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), (-1, True), ((0, 2), True)])
def test_logsumexp_vs_scipy(axis, keepdims, rng, x64):
    a = rng.uniform(-5, 5, size=(3, 4, 5))
    a[0, 0, :] = -np.inf
    a[1, 2, 3] = 900.0  # exp overflows without the max subtracted
    got = jax.nn.logsumexp(a, axis=axis, keepdims=keepdims)
    want = scipy_special.logsumexp(a, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    b = rng.uniform(-1, 2, size=(3, 4, 5))
    got, sign = jax.nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    want, wsign = scipy_special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(np.asarray(sign), wsign)
    # Without return_sign a negative sum is NaN (scipy agrees).
    with np.errstate(invalid="ignore"):
        want_nosign = scipy_special.logsumexp(a, axis=axis, b=b, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(jax.nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims)),
                               want_nosign, rtol=1e-10, atol=1e-10, equal_nan=True)


def test_logsumexp_where_and_infinities(rng):
    a = rng.uniform(-3, 3, size=(4, 5)).astype(np.float32)
    mask = rng.uniform(size=(4, 5)) < 0.5
    mask[3] = False
    want = scipy_special.logsumexp(np.where(mask, a, -np.inf).astype(np.float64), axis=1)
    np.testing.assert_allclose(np.asarray(jax.nn.logsumexp(a, axis=1, where=mask)), want, rtol=1e-6)
    assert float(jax.nn.logsumexp(jnp.asarray([-np.inf, -np.inf]))) == -np.inf
    assert float(jax.nn.logsumexp(jnp.asarray([1.0, np.inf]))) == np.inf
    assert np.isnan(float(jax.nn.logsumexp(jnp.asarray([1.0, np.nan]))))


def test_softmax_family_grads_vs_torch(rng, x64):
    x = rng.uniform(-4, 4, size=(3, 6))
    x[1, :] += 5e3  # large logits: the stable backward stays finite and exact
    w = rng.uniform(-1, 1, size=(3, 6))
    cases = [
        (lambda v: jax.nn.softmax(v, axis=-1), lambda t: torch.softmax(t, -1)),
        (lambda v: jax.nn.softmax(v, axis=0), lambda t: torch.softmax(t, 0)),
        (lambda v: jax.nn.log_softmax(v), lambda t: torch.log_softmax(t, -1)),
        (lambda v: jax.nn.logsumexp(v, axis=1, keepdims=True), lambda t: torch.logsumexp(t, 1, keepdim=True)),
        (lambda v: jax.nn.glu(v, axis=1), lambda t: F.glu(t, 1)),
    ]
    for f, tf in cases:
        g = jax.grad(lambda v: jnp.sum(f(v) * (w if f(v).shape == w.shape else 1.0)))(jnp.asarray(x))
        xt = torch.tensor(x, requires_grad=True)
        yt = tf(xt)
        (yt * (torch.from_numpy(w) if tuple(yt.shape) == w.shape else 1.0)).sum().backward()
        np.testing.assert_allclose(np.asarray(g), xt.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_softmax_where_and_logsumexp_b_grads_vs_finite_differences(rng, x64):
    x = rng.uniform(-3, 3, size=(4, 5))
    mask = rng.uniform(size=(4, 5)) < 0.7
    mask[:, 0] = True
    b = rng.uniform(0.5, 2, size=(4, 5))
    v = rng.uniform(-1, 1, size=(4, 5))
    h = 1e-6
    cases = [
        (lambda u: jax.nn.softmax(u, where=mask), x),
        (lambda u: jnp.where(mask, jax.nn.log_softmax(u, where=mask), 0.0), x),
        (lambda u: jax.nn.logsumexp(u, axis=1, where=mask), x),
        (lambda u: jax.nn.logsumexp(u, axis=0, b=b), x),
        (lambda u: jax.nn.logsumexp(x, axis=0, b=u), b),  # d/db at positive b
        (lambda u: jax.nn.standardize(u, where=mask), x),
    ]
    for i, (f, p) in enumerate(cases):
        fd = (np.asarray(f(jnp.asarray(p + h * v))) - np.asarray(f(jnp.asarray(p - h * v)))) / (2 * h)
        _, t = jax.jvp(f, (jnp.asarray(p),), (jnp.asarray(v),))
        np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-5, atol=1e-6, err_msg=str(i))
        wt = rng.uniform(-1, 1, size=np.shape(fd))
        g = jax.grad(lambda u: jnp.sum(f(u) * wt))(jnp.asarray(p))
        np.testing.assert_allclose(np.sum(np.asarray(g) * v), np.sum(wt * fd), rtol=1e-5, atol=1e-6)


def test_standardize_vs_numpy(rng):
    x = rng.uniform(-5, 5, size=(4, 7)).astype(np.float32)
    xd = x.astype(np.float64)
    m = xd.mean(-1, keepdims=True)
    v = (xd * xd).mean(-1, keepdims=True) - m * m
    np.testing.assert_allclose(np.asarray(jax.nn.standardize(x)), (xd - m) / np.sqrt(v + 1e-5),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(jax.nn.standardize(x, axis=0, mean=1.0, variance=4.0, epsilon=0.0)),
                               (xd - 1.0) / 2.0, rtol=1e-6)
    mask = rng.uniform(size=x.shape) < 0.6
    mask[:, 0] = True
    c = mask.sum(-1, keepdims=True)
    mm = np.where(mask, xd, 0).sum(-1, keepdims=True) / c
    vv = np.where(mask, xd * xd, 0).sum(-1, keepdims=True) / c - mm * mm
    np.testing.assert_allclose(np.asarray(jax.nn.standardize(x, where=mask)),
                               (xd - mm) / np.sqrt(vv + 1e-5), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- one_hot, glu

def _one_hot_ref(x, n, axis):
    out = (np.asarray(x)[..., None] == np.arange(n)).astype(np.float32)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_one_hot(axis, rng):
    n = int(rng.integers(1, 7))
    x = rng.integers(-2, n + 2, size=(3, 4)).astype(np.int32)
    y = jax.nn.one_hot(x, n, axis=axis)
    assert y.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(y), _one_hot_ref(x, n, axis if axis >= 0 else axis + 3))


def test_one_hot_edge_cases(x64):
    np.testing.assert_array_equal(np.asarray(jax.nn.one_hot(jnp.asarray([-1, 3]), 3)), np.zeros((2, 3)))
    assert jax.nn.one_hot(jnp.asarray([0, 1]), 2).dtype == jnp.float64  # jnp.float_ under x64
    assert jax.nn.one_hot(jnp.asarray([0, 1]), 2, dtype=jnp.int8).dtype == jnp.int8
    assert jax.nn.one_hot(2, 4).shape == (4,)
    assert jax.nn.one_hot(jnp.asarray([0, 1]), 0).shape == (2, 0)
    with pytest.raises(ValueError, match=r"\[one_hot\] num_classes must be non-negative"):
        jax.nn.one_hot(jnp.asarray([0]), -2)
    with pytest.raises(TypeError, match="one_hot"):
        jax.nn.one_hot(jnp.asarray([True]), 2)
    with pytest.raises((ValueError, IndexError), match="axis 2 is out of bounds"):
        jax.nn.one_hot(jnp.asarray([0]), 2, axis=2)
    # Under jit and vmap.
    lab = jnp.asarray([[0, 5], [2, -1]])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda l: jax.nn.one_hot(l, 4))(lab)),
                                  np.asarray(jax.nn.one_hot(lab, 4)))
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda l: jax.nn.one_hot(l, 4, axis=0))(lab)),
                                  np.stack([np.asarray(jax.nn.one_hot(lab[i], 4, axis=0)) for i in range(2)]))


def test_glu_and_errors(rng):
    x = rng.uniform(-3, 3, size=(2, 6, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jax.nn.glu(x, axis=1)), F.glu(torch.from_numpy(x), 1).numpy(),
                               rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"\[glu\] axis size must be divisible by 2"):
        jax.nn.glu(x, axis=2)
    with pytest.raises(ValueError, match=r"\[logsumexp\]"):
        jax.nn.logsumexp(np.zeros((2, 3)), b=np.ones(4))


# ---------------------------------------------------------------- transformations

def test_jit_and_vmap_match_eager_and_loop(rng):
    x = jnp.asarray(rng.uniform(-4, 4, size=(3, 4, 6)).astype(np.float32))
    mask = jnp.asarray(rng.uniform(size=(3, 4, 6)) < 0.6)
    fns = [ACTS[n][0] for n in sorted(ACTS)] + [
        lambda v: jax.nn.softmax(v, axis=0),
        lambda v: jax.nn.log_softmax(v),
        lambda v: jax.nn.logsumexp(v, axis=-1),
        lambda v: jax.nn.standardize(v),
        lambda v: jax.nn.glu(v),
    ]
    for f in fns:
        np.testing.assert_allclose(np.asarray(jax.jit(f)(x[0])), np.asarray(f(x[0])), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.vmap(f)(x)),
                                   np.stack([np.asarray(f(x[i])) for i in range(3)]), rtol=1e-6, atol=1e-6)
        gl = lambda v: jnp.sum(f(v) ** 2) + jnp.sum(f(v))
        np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(gl))(x[1])), np.asarray(jax.grad(gl)(x[1])),
                                   rtol=1e-5, atol=1e-5)
    # where= masks batched with vmap.
    sm = jax.vmap(lambda v, m: jax.nn.softmax(v, where=m))(x, mask)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(sm[i]), np.asarray(jax.nn.softmax(x[i], where=mask[i])), rtol=1e-6)
    lse = jax.vmap(lambda v, m: jax.nn.logsumexp(v, axis=1, where=m))(x, mask)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(lse[i]), np.asarray(jax.nn.logsumexp(x[i], axis=1, where=mask[i])),
                                   rtol=1e-6)
