"""tessera.random (jax.random's names) from Python: keys and bits against a NumPy Threefry-2x32
written here (Random123's rounds, checked on Random123's known-answer vectors) with JAX's counter
layouts for both settings of jax_threefry_partitionable; values JAX prints (cited below);
distributions against exact CDFs written here (Kolmogorov-Smirnov with fixed keys, bounds at
p < 1e-6; scipy.stats is used as a second reference when it is installed) and NumPy moments; vmap equal to the per-key loop, jit equal to eager, grad of
reparameterized samples."""

import math

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp

random = jax.random


# ---------------------------------------------------------------- the NumPy reference

def rotl(v, r):
    return ((v << np.uint32(r)) | (v >> np.uint32(32 - r))).astype(np.uint32)


def threefry(k0, k1, x0, x1):
    """Threefry-2x32-20 on uint32 arrays (broadcasting), as Random123 specifies it."""
    rot = [13, 15, 26, 6, 17, 29, 16, 24]
    k0, k1 = np.uint32(k0), np.uint32(k1)
    ks = [k0, k1, np.uint32(0x1BD11BDA) ^ k0 ^ k1]
    with np.errstate(over="ignore"):
        x0 = (np.asarray(x0, np.uint32) + ks[0]).astype(np.uint32)
        x1 = (np.asarray(x1, np.uint32) + ks[1]).astype(np.uint32)
        for r in range(20):
            x0 = (x0 + x1).astype(np.uint32)
            x1 = rotl(x1, rot[r % 8]) ^ x0
            if r % 4 == 3:
                s = r // 4 + 1
                x0 = (x0 + ks[s % 3]).astype(np.uint32)
                x1 = (x1 + ks[(s + 1) % 3] + np.uint32(s)).astype(np.uint32)
    return x0, x1


def tf_2x32(key, count):
    count = np.asarray(count, np.uint32).ravel()
    n = count.size
    h = (n + 1) // 2
    c = np.concatenate([count, np.zeros(2 * h - n, np.uint32)])
    y0, y1 = threefry(key[0], key[1], c[:h], c[h:])
    return np.concatenate([y0, y1])[:n]


def ref_split(key, n, part):
    if part:
        y0, y1 = threefry(key[0], key[1], np.zeros(n, np.uint32), np.arange(n, dtype=np.uint32))
        return np.stack([y0, y1], axis=1)
    return tf_2x32(key, np.arange(2 * n, dtype=np.uint32)).reshape(n, 2)


def ref_bits(key, width, shape, part):
    size = math.prod(shape)
    if part:
        y0, y1 = threefry(key[0], key[1], np.zeros(size, np.uint32),
                          np.arange(size, dtype=np.uint32))
        if width == 64:
            out = (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
        else:
            out = (y0 ^ y1).astype(f"uint{width}")
        return out.reshape(shape)
    words = (width * size + 31) // 32
    w = tf_2x32(key, np.arange(words, dtype=np.uint32))
    if width == 64:
        out = (w[:size].astype(np.uint64) << np.uint64(32)) | w[size:].astype(np.uint64)
    elif width == 32:
        out = w
    else:
        out = w.view(f"uint{width}")[:size]  # little-endian pieces, low bits first
    return out.reshape(shape)


@pytest.fixture(params=[True, False], ids=["partitionable", "original"])
def part(request):
    with jax.threefry_partitionable(request.param):
        yield request.param


def u32(a):
    return np.asarray(a).astype(np.uint32)


# ---------------------------------------------------------------- the primitive and keys

KATS = [((0, 0), (0, 0), (0x6b200159, 0x99ba4efe)),
        ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
        ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]


@pytest.mark.parametrize("key,ctr,out", KATS)
def test_known_answer_vectors(key, ctr, out):
    assert tuple(int(v) for v in threefry(key[0], key[1], ctr[0], ctr[1])) == out
    # The hash of one counter pair through jax.random's threefry_2x32 layout.
    got = np.asarray(random._C.threefry_2x32(jnp.asarray(np.array(key, np.uint32)),
                                             jnp.asarray(np.array(ctr, np.uint32))))
    assert tuple(int(v) for v in got) == out


def test_seeds_as_jax():
    # Pinned by JAX's tests/random_test.py (test_prng_seeds_and_keys), jax_enable_x64 off.
    cases = [(0, int, [0, 0]), (1, np.int32, [0, 1]), (2, np.uint32, [0, 2]),
             (3, np.int64, [0, 3]), (-1, int, [0, 4294967295]), (-2, np.int32, [0, 4294967294]),
             (2147483647 + 100, int, [0, 2147483747]),
             (2147483647 + 101, np.uint32, [0, 2147483748]),
             (-2147483648 - 100, int, [0, 2147483548])]
    for seed, typ, want in cases:
        s = typ(seed) if typ is not int else seed
        assert np.asarray(random.PRNGKey(s)).tolist() == want, (seed, typ)
        assert np.asarray(random.key_data(random.key(s))).tolist() == want
    assert repr(random.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    with pytest.raises(TypeError, match="PRNGKey accepts a scalar seed"):
        random.PRNGKey(np.arange(4))
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        random.PRNGKey(np.float32(3.5))


def test_seeds_x64(x64):
    assert np.asarray(random.PRNGKey(-1)).tolist() == [4294967295, 4294967295]
    assert np.asarray(random.PRNGKey(-2147483648 - 100)).tolist() == [4294967295, 2147483548]
    assert np.asarray(random.PRNGKey((5 << 32) + 7)).tolist() == [5, 7]


def test_pinned_jax_values():
    # jax_threefry_partitionable=False: a published jax 0.4.38 CPU session (a public course page
    # on jax.random) and JAX's docs of that era (split(PRNGKey(0))).
    k = random.key(0)
    with jax.threefry_partitionable(False):
        assert np.asarray(random.bits(k, (4,))).tolist() == [4146024105, 967050713, 2718843009,
                                                             1272950319]
        assert np.asarray(random.split(random.PRNGKey(0))).tolist() == [
            [4146024105, 967050713], [2718843009, 1272950319]]
        assert np.asarray(random.key_data(random.fold_in(k, 3))).tolist() == [2467461003,
                                                                               3840466878]
        np.testing.assert_allclose(np.asarray(random.normal(k, (4,))),
                                   [1.8160863, -0.75488514, 0.33988908, -0.53483534], rtol=2e-7)
    # The default: split(key(0), 8) as printed in public JAX code (rows = fold_in(key, i)).
    want = [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009],
            [2467461003, 3840466878], [2285895361, 433833334], [1524306142, 1887795613],
            [3792494674, 2909014575], [2716826189, 292468403]]
    assert np.asarray(random.key_data(random.split(k, 8))).tolist() == want


def test_split_fold_in_bits_against_numpy(part, rng):
    for _ in range(3):
        kp = rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
        raw = jnp.asarray(kp)
        typed = random.wrap_key_data(raw)
        for n in [1, 2, 5]:
            np.testing.assert_array_equal(np.asarray(random.split(raw, n)), ref_split(kp, n, part))
            np.testing.assert_array_equal(np.asarray(random.key_data(random.split(typed, n))),
                                          ref_split(kp, n, part))
        assert random.split(typed, (2, 3)).shape == (2, 3)
        for d in [0, 1, 77, 2**31 + 5]:
            want = tf_2x32(kp, np.array([0, d], np.uint32))
            np.testing.assert_array_equal(np.asarray(random.fold_in(raw, d)), want)
        for dt, width in [("uint8", 8), ("uint16", 16), ("uint32", 32)]:
            for shape in [(), (5,), (3, 4), (7,)]:
                got = np.asarray(random.bits(typed, shape, dt))
                assert got.dtype == np.dtype(dt)
                np.testing.assert_array_equal(got, ref_bits(kp, width, shape, part))


def test_bits64(part, x64, rng):
    kp = rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
    got = np.asarray(random.bits(jnp.asarray(kp), (2, 3), "uint64"))
    np.testing.assert_array_equal(got, ref_bits(kp, 64, (2, 3), part))


def test_key_errors():
    typed = random.key(1)
    keys = random.split(typed, 3)
    with pytest.raises(TypeError, match="split accepts a single key"):
        random.split(keys)
    with pytest.raises(TypeError, match="expected key_data.shape to end with"):
        random.wrap_key_data(jnp.asarray(np.arange(3, dtype=np.uint32)))
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32"):
        random.uniform(jnp.ones(2))
    with pytest.raises(ValueError, match="must be a float dtype"):
        random.uniform(typed, (2,), jnp.int32)
    with pytest.raises(ValueError, match="broadcast-compatible with shape argument"):
        random.uniform(typed, (3,), minval=jnp.zeros(4))
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        random.choice(typed, 3, (5,), replace=False)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        random.randint(typed, (3,), 0, 5, jnp.float32)


# ---------------------------------------------------------------- distributions

N = 20000
KS_BOUND = math.sqrt(-math.log(0.5e-6) / (2 * N))

_erf = np.vectorize(math.erf)


def _norm_cdf(x):
    return 0.5 * (1 + _erf(np.asarray(x) / math.sqrt(2)))


class Dist:
    """An exact CDF with its mean and variance (None: not checked)."""

    def __init__(self, cdf, mean=None, var=None, scipy_name=None, scipy_args=()):
        self.cdf, self.mean, self.var = cdf, mean, var
        self.scipy_name, self.scipy_args = scipy_name, scipy_args


_A, _B = _norm_cdf(-1.0), _norm_cdf(2.0)
DISTS = [
    ("uniform", lambda k: random.uniform(k, (N,)),
     Dist(lambda x: np.clip(x, 0, 1), 0.5, 1 / 12, "uniform")),
    ("uniform_ab", lambda k: random.uniform(k, (N,), minval=-3.0, maxval=5.0),
     Dist(lambda x: np.clip((x + 3) / 8, 0, 1), 1.0, 64 / 12, "uniform", (-3, 8))),
    ("normal", lambda k: random.normal(k, (N,)), Dist(_norm_cdf, 0.0, 1.0, "norm")),
    ("truncated_normal", lambda k: random.truncated_normal(k, -1.0, 2.0, (N,)),
     Dist(lambda x: np.clip((_norm_cdf(x) - _A) / (_B - _A), 0, 1), None, None, "truncnorm",
          (-1.0, 2.0))),
    ("exponential", lambda k: random.exponential(k, (N,)),
     Dist(lambda x: np.where(x < 0, 0, 1 - np.exp(-np.maximum(x, 0))), 1.0, 1.0, "expon")),
    ("gumbel", lambda k: random.gumbel(k, (N,)),
     Dist(lambda x: np.exp(-np.exp(-x)), 0.5772156649015329, math.pi ** 2 / 6, "gumbel_r")),
    ("laplace", lambda k: random.laplace(k, (N,)),
     Dist(lambda x: np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)),
                             1 - 0.5 * np.exp(-np.maximum(x, 0))), 0.0, 2.0, "laplace")),
    ("logistic", lambda k: random.logistic(k, (N,)),
     Dist(lambda x: 1 / (1 + np.exp(-x)), 0.0, math.pi ** 2 / 3, "logistic")),
    ("cauchy", lambda k: random.cauchy(k, (N,)),
     Dist(lambda x: 0.5 + np.arctan(x) / math.pi, None, None, "cauchy")),
    ("rayleigh", lambda k: random.rayleigh(k, 2.0, (N,)),
     Dist(lambda x: np.where(x < 0, 0, 1 - np.exp(-np.maximum(x, 0) ** 2 / 8)),
          2.0 * math.sqrt(math.pi / 2), (4 - math.pi) / 2 * 4)),
    ("weibull_min", lambda k: random.weibull_min(k, 1.5, 2.0, (N,)),
     Dist(lambda x: np.where(x < 0, 0, 1 - np.exp(-(np.maximum(x, 0) / 1.5) ** 2)),
          1.5 * math.gamma(1.5), 2.25 * (math.gamma(2.0) - math.gamma(1.5) ** 2))),
]


def ks_statistic(x, cdf):
    x = np.sort(x)
    f = cdf(x)
    n = x.size
    i = np.arange(n)
    return float(max((f - i / n).max(), ((i + 1) / n - f).max()))


@pytest.mark.parametrize("name,draw,dist", DISTS, ids=[d[0] for d in DISTS])
def test_distribution_ks_and_moments(name, draw, dist, part):
    k = random.fold_in(random.key(20240607), len(name))
    x = np.asarray(draw(k), np.float64)
    assert x.shape == (N,)
    d = ks_statistic(x, dist.cdf)
    assert d < KS_BOUND, (name, d)
    try:
        import scipy.stats as st
    except ImportError:
        st = None
    if st is not None and dist.scipy_name:
        ref = getattr(st, dist.scipy_name)(*dist.scipy_args)
        assert st.kstest(x, ref.cdf).statistic < KS_BOUND
    if dist.mean is not None:
        m, v = dist.mean, dist.var
        assert abs(x.mean() - m) < 6 * math.sqrt(v / N), name
        assert abs(x.var(ddof=1) - v) < 6 * v * math.sqrt(8.0 / N), name


def test_uniform_is_a_function_of_the_bits(part):
    kp = np.array([12345, 67890], np.uint32)
    b = ref_bits(kp, 32, (1000,), part)
    want = np.maximum(np.float32(-2), ((b >> np.uint32(9)) | np.uint32(0x3F800000)).view(
        np.float32) - np.float32(1)) * np.float32(5) + np.float32(-2)
    got = np.asarray(random.uniform(jnp.asarray(kp), (1000,), minval=-2.0, maxval=3.0))
    np.testing.assert_array_equal(got, np.maximum(np.float32(-2), want))


@pytest.mark.parametrize("name", ["exponential", "gumbel", "logistic", "laplace", "cauchy",
                                  "truncated_normal", "rayleigh"])
def test_samplers_are_one_jit_program_with_the_op_by_op_bits(name):
    # JAX jits its samplers (shape and dtype static): the draw is one fused program, and it
    # gives the bits of JAX's definition run op by op on the same uniform draw.
    k = random.key(5)
    n = 50001
    f32 = np.float32
    tiny, eps = float(np.finfo(f32).tiny), float(np.finfo(f32).eps)
    lo = jnp.linspace(-2.0, 0.5, n)
    scale = jnp.linspace(0.5, 2.0, n)
    draws = {
        "exponential": (lambda: random.exponential(k, (n,)),
                        lambda: -jnp.log1p(-random.uniform(k, (n,)))),
        "gumbel": (lambda: random.gumbel(k, (n,)),
                   lambda: -jnp.log(-jnp.log(random.uniform(k, (n,), minval=tiny)))),
        "logistic": (lambda: random.logistic(k, (n,)),
                     lambda: (lambda u: jnp.log(u / (1 - u)))(random.uniform(k, (n,), minval=eps))),
        "laplace": (lambda: random.laplace(k, (n,)),
                    lambda: (lambda u: jnp.sign(u) * jnp.log1p(-jnp.abs(u)))(
                        random.uniform(k, (n,), minval=-1.0 + eps / 2, maxval=1.0))),
        "cauchy": (lambda: random.cauchy(k, (n,)),
                   lambda: jnp.tan(f32(np.pi) * (random.uniform(k, (n,), minval=eps) - 0.5))),
        "truncated_normal": (
            lambda: random.truncated_normal(k, lo, 1.5, (n,)),
            lambda: jnp.clip(
                f32(np.sqrt(2)) * jax.lax.erf_inv(random.uniform(
                    k, (n,), minval=jax.lax.erf(lo / f32(np.sqrt(2))),
                    maxval=jax.lax.erf(f32(1.5) / f32(np.sqrt(2))))),
                jnp.nextafter(lo, np.inf), jnp.nextafter(f32(1.5), -np.inf))),
        "rayleigh": (lambda: random.rayleigh(k, scale, (n,)),
                     lambda: scale * jnp.sqrt(jnp.log(random.uniform(k, (n,))) * -2.0)),
    }
    fused, op_by_op = draws[name]
    got, want = np.asarray(fused()), np.asarray(op_by_op())
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert np.isfinite(got).all()
    extra = {"truncated_normal": (-1.0, 1.0), "rayleigh": (1.0,)}.get(name, ())
    jaxpr = jax.make_jaxpr(lambda kk: getattr(random, name)(kk, *extra, (8,)))(k)
    jits = [e for e in jaxpr.jaxpr.eqns if e.primitive.name in ("jit", "pjit")]
    assert len(jits) == 1 and jits[0].params["name"] == f"_{name}", str(jaxpr)
    assert jits[0].outvars == jaxpr.jaxpr.outvars


def test_discrete_distributions():
    k = random.key(11)
    b = np.asarray(random.bernoulli(k, 0.3, (N,)))
    assert b.dtype == np.bool_
    assert abs(b.mean() - 0.3) < 6 * math.sqrt(0.21 / N)
    r = np.asarray(random.rademacher(k, (N,)))
    assert set(np.unique(r).tolist()) == {-1, 1}
    ri = np.asarray(random.randint(k, (N,), 0, 10))
    counts = np.bincount(ri, minlength=10)
    assert np.all(np.abs(counts - N / 10) < 6 * math.sqrt(N * 0.09))
    assert np.asarray(random.randint(k, (50,), 0, 256, jnp.uint8)).dtype == np.uint8
    assert np.all(np.asarray(random.randint(k, (20,), 5, 5)) == 5)
    logits = np.log(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    c = np.asarray(random.categorical(k, jnp.asarray(logits), shape=(N,)))
    counts = np.bincount(c, minlength=4)
    for i, p in enumerate([0.1, 0.2, 0.3, 0.4]):
        assert abs(counts[i] - N * p) < 6 * math.sqrt(N * p * (1 - p))
    perm = np.asarray(random.permutation(k, 100))
    assert sorted(perm.tolist()) == list(range(100))
    x = np.arange(12).reshape(4, 3)
    px = np.asarray(random.permutation(k, jnp.asarray(x)))
    assert sorted(px[:, 0].tolist()) == [0, 3, 6, 9] and np.all(px[:, 1] == px[:, 0] + 1)
    ch = np.asarray(random.choice(k, 10, (6,), replace=False))
    assert len(set(ch.tolist())) == 6
    assert np.asarray(random.choice(k, jnp.asarray(x), (5,), axis=1)).shape == (4, 5)
    p = jnp.asarray(np.array([0.1, 0.0, 0.6, 0.3], np.float32))
    cw = np.asarray(random.choice(k, 4, (N,), p=p))
    assert (cw == 1).sum() == 0
    assert abs((cw == 2).mean() - 0.6) < 6 * math.sqrt(0.24 / N)


# ---------------------------------------------------------------- transformations

def test_vmap_over_keys_equals_the_loop(part):
    keys = random.split(random.key(42), 5)
    got = jax.vmap(lambda k: random.normal(k, (3,)))(keys)
    want = np.stack([np.asarray(random.normal(keys[i], (3,))) for i in range(5)])
    np.testing.assert_array_equal(np.asarray(got), want)
    sp = jax.vmap(lambda k: random.split(k, 3))(keys)
    assert sp.shape == (5, 3)
    for i in range(5):
        np.testing.assert_array_equal(np.asarray(random.key_data(sp[i])),
                                      np.asarray(random.key_data(random.split(keys[i], 3))))
    ks = jax.vmap(random.key)(jnp.arange(4))
    for i in range(4):
        np.testing.assert_array_equal(np.asarray(random.key_data(ks[i])),
                                      np.asarray(random.key_data(random.key(i))))


def test_jit_equals_eager(part):
    k = random.key(1234)
    for f in [lambda key: random.normal(key, (1000,)),
              lambda key: random.uniform(key, (3, 7), minval=-1.0, maxval=2.0),
              lambda key: random.randint(key, (100,), -3, 17),
              lambda key: random.key_data(random.split(key, 4)),
              lambda key: random.permutation(key, 50)]:
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(k)), np.asarray(f(k)))


def test_jit_retraces_when_the_counter_layout_changes():
    # jax_threefry_partitionable is part of the trace context: one jitted function gives each
    # setting's bits, never the other's cached trace.
    f = jax.jit(lambda key: random.bits(key, (6,)))
    k = random.key(7)
    got = {}
    for flag in (True, False, True):
        with jax.threefry_partitionable(flag):
            eager = np.asarray(random.bits(k, (6,)))
            jitted = np.asarray(f(k))
            np.testing.assert_array_equal(jitted, eager)
            got.setdefault(flag, eager)
    assert not np.array_equal(got[True], got[False])


def test_typed_key_dtype():
    k = random.key(3)
    assert k.dtype == "key<fry>" and str(k.dtype) == "key<fry>" and k.dtype.itemsize == 8
    ks = random.split(k, 4)
    assert ks.shape == (4,) and ks.dtype == k.dtype
    assert random.PRNGKey(3).dtype == np.uint32


def test_grad_of_reparameterized_samples():
    k = random.key(77)
    eps = np.asarray(random.normal(k, (10,)))

    def f(mu, sigma):
        return jnp.sum(mu + sigma * random.normal(k, (10,)))

    gmu, gsigma = jax.grad(f, argnums=(0, 1))(0.5, 2.0)
    assert float(gmu) == pytest.approx(10.0)
    assert float(gsigma) == pytest.approx(float(eps.sum()), rel=1e-5, abs=1e-5)


def test_import_tessera_as_jax():
    x = jax.random.normal(jax.random.PRNGKey(0), (3,))
    assert x.shape == (3,)
    assert np.asarray(x).dtype == np.float32
