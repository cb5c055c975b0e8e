"""tessera.nn.initializers (jax.nn.initializers) from Python.

References: the values JAX prints in jax.nn.initializers' docstrings (key 42, shape (2, 3),
float32, drawn under the original counter layout, jax_threefry_partitionable=False); each
initializer's algorithm spelled out in NumPy over the tessera.random draw it scales, with the
scale factor computed in the dtype (float32/float64 bit-exact, 16-bit within an ulp); the fans
as products over the axes not named; sample variances against scale / fan with fixed keys and
p < 1e-6 bounds (Hoeffding for bounded draws, the chi-square tail for the normal); jit equal to
eager; vmap over keys equal to the loop; JAX's errors."""

import inspect
import math

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp

init = jax.nn.initializers
random = jax.random

TRUNC_STD = .87962566103423978  # the standard deviation of N(0, 1) truncated to (-2, 2)


def f64(x):
    return np.asarray(x.astype(jnp.float32) if x.dtype == jnp.bfloat16 else x, np.float64)


def fresh_key(rng):
    return random.key(int(rng.integers(0, 2**31)))


# ---------------------------------------------------------------- JAX's own printed values

# jax/_src/nn/initializers.py docstrings: initializer(jax.random.PRNGKey(42), (2, 3), float32).
JAX_PRINTED = {
    "uniform(10.0)": (lambda: init.uniform(10.0),
                      [[7.298188, 8.691938, 8.7230015], [2.0818567, 1.8662417, 5.5022564]]),
    "normal(5.0)": (lambda: init.normal(5.0),
                    [[3.0613258, 5.6129413, 5.6866574], [-4.063663, -4.4520254, 0.63115686]]),
    "truncated_normal(5.0)": (lambda: init.truncated_normal(5.0),
                              [[2.9047365, 5.2338114, 5.29852], [-3.836303, -4.192359, 0.6022964]]),
    "glorot_uniform": (init.glorot_uniform, [[0.50350785, 0.8088631, 0.81566876],
                                             [-0.6393332, -0.6865721, 0.11003882]]),
    "glorot_normal": (init.glorot_normal, [[0.41770416, 0.75262755, 0.7619329],
                                           [-0.5516644, -0.6028657, 0.08661086]]),
    "lecun_uniform": (init.lecun_uniform, [[0.56293887, 0.90433645, 0.9119454],
                                           [-0.71479625, -0.7676109, 0.12302713]]),
    "lecun_normal": (init.lecun_normal, [[0.46700746, 0.8414632, 0.8518669],
                                         [-0.61677957, -0.67402434, 0.09683388]]),
    "he_uniform": (init.he_uniform, [[0.79611576, 1.2789248, 1.2896855],
                                     [-1.0108745, -1.0855657, 0.17398663]]),
    "he_normal": (init.he_normal, [[0.6604483, 1.1900088, 1.2047218],
                                   [-0.87225807, -0.95321447, 0.1369438]]),
}


@pytest.mark.parametrize("name", list(JAX_PRINTED))
def test_values_jax_prints(name):
    make, want = JAX_PRINTED[name]
    with jax.threefry_partitionable(False):
        got = make()(random.PRNGKey(42), (2, 3), jnp.float32)
    assert got.dtype == jnp.float32 and got.shape == (2, 3)
    # Printed to float32's shortest repr: uniform draws are bit-exact; normal ones go through
    # erf_inv, which may differ from XLA's by a few float32 ulps.
    rtol = 1.5e-7 if "uniform" in name else 2e-6
    np.testing.assert_allclose(np.asarray(got), np.array(want, np.float32), rtol=rtol, atol=1e-7)


# ---------------------------------------------------------------- the algorithm in NumPy

def ref_fans(shape, in_axis, out_axis, batch_axis):
    rank = len(shape)
    as_list = lambda a: [a] if isinstance(a, int) else list(a)  # noqa: E731
    ins, outs, batch = as_list(in_axis), as_list(out_axis), as_list(batch_axis)
    named = {a % rank for a in ins + outs + batch}
    receptive = math.prod(shape[i] for i in range(rank) if i not in named)
    return (math.prod(shape[a] for a in ins) * receptive,
            math.prod(shape[a] for a in outs) * receptive)


NP_DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
             "bfloat16": np.float32}  # bfloat16: float32 arithmetic, compared within an ulp
EPS = {"float32": 0.0, "float64": 0.0, "float16": 2.0**-10, "bfloat16": 2.0**-7}


def ref_variance_scaling(key, shape, dtype, scale, mode, dist, in_axis, out_axis, batch_axis):
    t = NP_DTYPES[dtype]
    fi, fo = ref_fans(shape, in_axis, out_axis, batch_axis)
    n = {"fan_in": fi, "fan_out": fo, "fan_avg": (fi + fo) / 2,
         "fan_geo_avg": math.sqrt(fi * fo)}[mode]
    var = t(scale / n)
    dt = getattr(jnp, dtype)
    if dist == "uniform":
        draw, factor = random.uniform(key, shape, dt, -1.0, 1.0), np.sqrt(t(3) * var)
    elif dist == "normal":
        draw, factor = random.normal(key, shape, dt), np.sqrt(var)
    else:
        draw = random.truncated_normal(key, -2.0, 2.0, shape, dt)
        factor = np.sqrt(var) / t(TRUNC_STD)
    return np.asarray(f64(draw).astype(t) * t(factor), np.float64)


NAMED = [
    ("glorot_uniform", 1.0, "fan_avg", "uniform"),
    ("xavier_uniform", 1.0, "fan_avg", "uniform"),
    ("glorot_normal", 1.0, "fan_avg", "truncated_normal"),
    ("xavier_normal", 1.0, "fan_avg", "truncated_normal"),
    ("lecun_uniform", 1.0, "fan_in", "uniform"),
    ("lecun_normal", 1.0, "fan_in", "truncated_normal"),
    ("he_uniform", 2.0, "fan_in", "uniform"),
    ("kaiming_uniform", 2.0, "fan_in", "uniform"),
    ("he_normal", 2.0, "fan_in", "truncated_normal"),
    ("kaiming_normal", 2.0, "fan_in", "truncated_normal"),
]
SHAPES = [((6, 4), -2, -1, ()), ((3, 3, 5, 7), -2, -1, ()), ((2, 3, 4, 5), (0, 1), 3, 2),
          ((5, 2, 3), 0, (1, 2), ())]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
@pytest.mark.parametrize("name,scale,mode,dist", NAMED)
def test_named_initializers_against_reference(rng, request, name, scale, mode, dist, dtype):
    if dtype == "float64":
        request.getfixturevalue("x64")
    for shape, i, o, b in SHAPES:
        key = fresh_key(rng)
        f = getattr(init, name)(in_axis=i, out_axis=o, batch_axis=b, dtype=getattr(jnp, dtype))
        got = f(key, shape)
        assert got.dtype == getattr(jnp, dtype) and got.shape == shape
        want = ref_variance_scaling(key, shape, dtype, scale, mode, dist, i, o, b)
        np.testing.assert_allclose(f64(got), want, rtol=EPS[dtype], atol=0)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
@pytest.mark.parametrize("dist", ["truncated_normal", "normal", "uniform"])
def test_variance_scaling_against_reference(rng, mode, dist):
    scale = float(rng.uniform(0.1, 3.0))
    shape, i, o, b = SHAPES[int(rng.integers(len(SHAPES)))]
    key = fresh_key(rng)
    got = init.variance_scaling(scale, mode, dist, in_axis=i, out_axis=o, batch_axis=b)(key, shape)
    assert got.dtype == jnp.float32
    want = ref_variance_scaling(key, shape, "float32", scale, mode, dist, i, o, b)
    np.testing.assert_array_equal(f64(got), want)


def test_compute_fans(rng):
    cases = [((784, 256), -2, -1, ()), ((3, 3, 64, 128), -2, -1, ()),
             ((128, 64, 3, 3), 1, 0, ()), ((2, 3, 4, 5), (0, 1), 3, 2), ((4, 6, 8), -2, -1, 0),
             ((7, 2, 9, 3), (-1, 1), (0,), ())]
    for _ in range(30):
        rank = int(rng.integers(2, 6))
        shape = tuple(int(s) for s in rng.integers(1, 10, rank))
        perm = [int(p) for p in rng.permutation(rank)]
        cases.append((shape, perm[0] - rank * int(rng.integers(2)), perm[1],
                      (perm[2],) if rank > 2 and rng.integers(2) else ()))
    for shape, i, o, b in cases:
        got = init._compute_fans(shape, i, o, b)
        np.testing.assert_allclose(got, ref_fans(shape, i, o, b), rtol=1e-12)


# ---------------------------------------------------------------- the simple initializers

def test_zeros_ones_constant(rng):
    key = fresh_key(rng)
    z = init.zeros(key, (2, 3))
    assert z.dtype == jnp.float32 and z.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(z), np.zeros((2, 3)))
    o = init.ones(None, (3, 2), jnp.int32)  # the key is ignored
    assert o.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(o), np.ones((3, 2)))
    assert init.ones(key, (2,), jnp.float64).dtype == jnp.float32  # canonicalized, as JAX
    v = float(rng.integers(-40, 40)) / 8
    c = init.constant(v)
    np.testing.assert_array_equal(np.asarray(c(key, (2, 3))), np.full((2, 3), v, np.float32))
    assert init.constant(v, jnp.bfloat16)(key, (2,)).dtype == jnp.bfloat16
    assert init.constant(v, jnp.bfloat16)(key, (2,), jnp.float16).dtype == jnp.float16
    row = np.array([1.5, -2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(init.constant(row)(key, (2, 3))),
                                  np.broadcast_to(row, (2, 3)))


def test_distribution_factories(rng):
    key = fresh_key(rng)
    s = np.float32(rng.uniform(0.5, 10))
    shape = (7, 5)
    u = init.uniform(float(s))(key, shape)
    np.testing.assert_array_equal(np.asarray(u), np.asarray(random.uniform(key, shape)) * s)
    assert np.all((np.asarray(u) >= 0) & (np.asarray(u) <= s))
    np.testing.assert_array_equal(np.asarray(init.normal(float(s))(key, shape)),
                                  np.asarray(random.normal(key, shape)) * s)
    t = init.truncated_normal(float(s), lower=-1.5, upper=0.5)(key, shape)
    np.testing.assert_array_equal(np.asarray(t),
                                  np.asarray(random.truncated_normal(key, -1.5, 0.5, shape)) * s)
    assert np.all(np.asarray(t) > -1.5 * s * 1.0001) and np.all(np.asarray(t) < 0.5 * s * 1.0001)
    # Defaults: scale / stddev 1e-2.
    np.testing.assert_array_equal(np.asarray(init.uniform()(key, (4,))),
                                  np.asarray(random.uniform(key, (4,))) * np.float32(1e-2))


def test_dtypes(rng, x64):
    key = fresh_key(rng)
    # The default dtype is jnp.float_, canonicalized at call time: float64 under x64.
    assert init.glorot_uniform()(key, (3, 4)).dtype == jnp.float64
    assert init.zeros(key, (2,)).dtype == jnp.float64
    assert init.normal()(key, (2,)).dtype == jnp.float64
    assert init.he_normal(dtype=jnp.bfloat16)(key, (3, 4)).dtype == jnp.bfloat16
    assert init.he_normal()(key, (3, 4), jnp.float16).dtype == jnp.float16
    assert init.lecun_uniform()(key, (3, 4), "float32").dtype == jnp.float32


def test_usable_as_jax_nn_initializers():
    assert jax.nn.initializers.glorot_uniform is init.xavier_uniform
    assert init.he_normal is init.kaiming_normal
    assert isinstance(init.glorot_normal(), init.Initializer)
    assert isinstance(init.zeros, init.Initializer)
    assert isinstance(init.orthogonal(), init.Initializer)  # tested in test_linalg_spectral.py
    assert not hasattr(init, "delta_orthogonal")  # not implemented yet
    # JAX's signatures: the factories' keywords and defaults, init(key, shape, dtype=...).
    params = inspect.signature(init.variance_scaling).parameters
    assert list(params) == ["scale", "mode", "distribution", "in_axis", "out_axis", "batch_axis",
                            "dtype"]
    assert (params["in_axis"].default, params["out_axis"].default,
            params["batch_axis"].default) == (-2, -1, ())
    assert list(inspect.signature(init.he_uniform).parameters) == ["in_axis", "out_axis",
                                                                   "batch_axis", "dtype"]
    t = inspect.signature(init.truncated_normal).parameters
    assert [(k, v.default) for k, v in t.items() if k != "dtype"] == [
        ("stddev", 1e-2), ("lower", -2.0), ("upper", 2.0)]
    sig = inspect.signature(init.constant(1.0, jnp.bfloat16)).parameters
    assert list(sig) == ["key", "shape", "dtype"] and sig["dtype"].default == jnp.bfloat16
    assert list(inspect.signature(init.zeros).parameters) == ["key", "shape", "dtype"]


# ---------------------------------------------------------------- statistics

@pytest.mark.parametrize("shape,i,o,b,scale,mode,dist,seed", [
    ((256, 192), -2, -1, (), 1.0, "fan_avg", "uniform", 11),
    ((256, 192), -2, -1, (), 1.0, "fan_avg", "truncated_normal", 12),
    ((256, 192), -2, -1, (), 2.0, "fan_in", "normal", 13),
    ((3, 3, 64, 48), -2, -1, (), 2.0, "fan_in", "truncated_normal", 14),
    ((3, 3, 64, 48), -2, -1, (), 1.0, "fan_out", "uniform", 15),
    ((4, 40, 30, 9), 1, 2, 0, 0.5, "fan_geo_avg", "normal", 16),
])
def test_variance_matches_theory(shape, i, o, b, scale, mode, dist, seed):
    fi, fo = ref_fans(shape, i, o, b)
    n = {"fan_in": fi, "fan_out": fo, "fan_avg": (fi + fo) / 2,
         "fan_geo_avg": math.sqrt(fi * fo)}[mode]
    var = scale / n
    x = f64(init.variance_scaling(scale, mode, dist, i, o, b)(random.key(seed), shape)).ravel()
    m2, count = float(np.mean(x * x)), x.size
    if dist == "normal":  # count * m2 / var ~ chi-square(count): 5.5 sd is p < 1e-6
        tol = 5.5 * math.sqrt(2 / count) * var
    else:  # bounded: Hoeffding at delta = 1e-6
        bound2 = 3 * var if dist == "uniform" else 4 * var / TRUNC_STD**2
        assert float(np.max(x * x)) <= bound2 * (1 + 1e-6)
        tol = bound2 * math.sqrt(math.log(2 / 1e-6) / (2 * count))
    assert abs(m2 - var) < tol, (m2, var, tol)
    assert abs(float(np.mean(x))) < 5.5 * math.sqrt(var / count)


# ---------------------------------------------------------------- transformations

def test_jit_equals_eager_and_vmap(rng):
    key = fresh_key(rng)
    for name, *_ in NAMED:
        f = getattr(init, name)()
        eager = f(key, (9, 6))
        jitted = jax.jit(lambda k: f(k, (9, 6)))(key)
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager), err_msg=name)
    for f in (init.uniform(3.0), init.normal(0.5), init.truncated_normal(2.0)):
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda k: f(k, (4, 5)))(key)),
                                      np.asarray(f(key, (4, 5))))
    keys = random.split(key, 3)
    g = init.glorot_normal()
    batched = jax.vmap(lambda k: g(k, (4, 3)))(keys)
    assert batched.shape == (3, 4, 3)
    np.testing.assert_array_equal(np.asarray(batched),
                                  np.stack([np.asarray(g(keys[j], (4, 3))) for j in range(3)]))


# ---------------------------------------------------------------- errors

def test_errors(rng):
    key = fresh_key(rng)
    bad_mode = init.variance_scaling(1.0, "fan_sum", "uniform")  # raised at the call, as JAX
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: fan_sum"):
        bad_mode(key, (3, 4))
    bad_dist = init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError,
                       match="invalid distribution for variance scaling initializer: cauchy"):
        bad_dist(key, (3, 4))
    with pytest.raises(ValueError, match="Can't compute input and output sizes of a 1-dimensional "
                       "weights tensor. Must be at least 2D."):
        init.glorot_uniform()(key, (5,))
    with pytest.raises(ValueError, match="of a 0-dimensional weights tensor"):
        init.he_normal()(key, ())
    with pytest.raises(IndexError, match="tuple index out of range"):
        init.lecun_uniform(in_axis=2)(key, (3, 4))
    with pytest.raises(ValueError, match="division by zero"):
        init.glorot_uniform()(key, (0, 4))
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float dtype"):
        init.glorot_uniform()(key, (3, 4), jnp.int32)
    with pytest.raises(ValueError, match="dtype argument to `normal` must be a float or complex"):
        init.normal()(key, (3,), jnp.int32)
    with pytest.raises(TypeError, match="accepts a single key"):
        init.normal()(random.split(key, 2), (3,))
