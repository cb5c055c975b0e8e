"""tessera.example_libraries (jax.example_libraries.optimizers and stax) from Python.

References: each optimizer's published update rule re-implemented in float64 NumPy below and
run over several steps on fresh random pytrees (float32 results within float32 rounding);
schedules against their closed forms; l2_norm/clip_grads against NumPy norms; every stax
layer's apply against a NumPy computation and its init output shape against the shape apply
returns; BatchNorm against NumPy batch statistics; Dropout's keep fraction with a fixed key
(a binomial bound at p < 1e-9); a stax MLP trained with adam under jit on a synthetic
regression whose loss must fall by a fixed factor. The convolution and pooling layers'
references are naive NumPy loops (skipped until lax.conv_general_dilated / lax.reduce_window
exist)."""

import itertools
import math

import numpy as np
import pytest

import tessera as jax
import tessera.example_libraries.optimizers as optimizers
import tessera.numpy as jnp
from tessera import lax
from tessera.example_libraries import stax

random = jax.random
tree_util = jax.tree_util


def fresh_key(rng):
    return random.PRNGKey(int(rng.integers(0, 2**31)))


def f64(x):
    return np.asarray(x, np.float64)


def random_params(rng):
    """A pytree of float32 leaves: a matrix, a vector, a 0-d scalar and a 3-d array."""
    def arr(shape):
        return jnp.asarray(rng.standard_normal(shape).astype(np.float32))
    return {"w": arr((3, 4)), "layers": [arr((4,)), arr(())], "conv": (arr((2, 3, 2)),)}


def random_grads(rng, params, zero_fraction=0.0):
    def g(p):
        v = rng.standard_normal(jnp.shape(p)).astype(np.float32)
        if zero_fraction:
            v = np.where(rng.random(v.shape) < zero_fraction, np.float32(0), v)
        return jnp.asarray(v)
    return tree_util.tree_map(g, params)


# ---------------------------------------------------------------- optimizer references
# Each reference: (init(x) -> state, update(i, g, state) -> state, params(state) -> x), all
# float64 NumPy, written from the optimizers' published rules.

def ref_sgd(lr):
    return (lambda x: x,
            lambda i, g, x: x - lr(i) * g,
            lambda x: x)


def ref_momentum(lr, mass):
    def update(i, g, s):
        x, v = s
        v = mass * v + g
        return x - lr(i) * v, v
    return lambda x: (x, np.zeros_like(x)), update, lambda s: s[0]


def ref_nesterov(lr, mass):
    def update(i, g, s):
        x, v = s
        v = mass * v + g
        return x - lr(i) * (g + mass * v), v  # look-ahead step
    return lambda x: (x, np.zeros_like(x)), update, lambda s: s[0]


def ref_adagrad(lr, mom=0.9):
    def update(i, g, s):
        x, acc, m = s
        acc = acc + g * g
        scaled = np.divide(g, np.sqrt(acc), out=np.zeros_like(g), where=acc > 0)
        m = mom * m + (1 - mom) * scaled
        return x - lr(i) * m, acc, m
    return lambda x: (x, np.zeros_like(x), np.zeros_like(x)), update, lambda s: s[0]


def ref_rmsprop(lr, gamma=0.9, eps=1e-8):
    def update(i, g, s):
        x, a = s
        a = gamma * a + (1 - gamma) * g * g
        return x - lr(i) * g / np.sqrt(a + eps), a
    return lambda x: (x, np.zeros_like(x)), update, lambda s: s[0]


def ref_rmsprop_momentum(lr, gamma=0.9, eps=1e-8, mom=0.9):
    def update(i, g, s):
        x, a, m = s
        a = gamma * a + (1 - gamma) * g * g
        m = mom * m + lr(i) * g / np.sqrt(a + eps)
        return x - m, a, m
    return lambda x: (x, np.zeros_like(x), np.zeros_like(x)), update, lambda s: s[0]


def ref_adam(lr, b1=0.9, b2=0.999, eps=1e-8):
    def update(i, g, s):
        x, m, v = s
        t = i + 1
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        return x - lr(i) * m_hat / (np.sqrt(v_hat) + eps), m, v
    return lambda x: (x, np.zeros_like(x), np.zeros_like(x)), update, lambda s: s[0]


def ref_adamax(lr, b1=0.9, b2=0.999, eps=1e-8):
    def update(i, g, s):
        x, m, u = s
        t = i + 1
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g))
        return x - lr(i) / (1 - b1 ** t) * m / (u + eps), m, u
    return lambda x: (x, np.zeros_like(x), np.zeros_like(x)), update, lambda s: s[0]


def ref_sm3(lr, mom=0.9):
    # SM3-II: one accumulator per axis; the per-entry accumulator is the minimum over the
    # axes of their accumulators at the entry's index, plus g^2; each axis accumulator then
    # keeps the maximum of the entry accumulators over its slice.
    def init(x):
        x = np.atleast_1d(x)
        return x, np.zeros_like(x), [np.zeros(n) for n in x.shape]

    def update(i, g, s):
        x, m, accs = s
        g = np.reshape(g, x.shape)
        nu = np.empty_like(x)
        for idx in np.ndindex(*x.shape):
            nu[idx] = min(accs[a][idx[a]] for a in range(x.ndim)) + g[idx] ** 2
        scaled = np.divide(g, np.sqrt(nu), out=np.zeros_like(g), where=nu > 0)
        m = mom * m + (1 - mom) * scaled
        x = x - lr(i) * m
        accs = [np.array([nu.take(k, axis=a).max() for k in range(x.shape[a])])
                for a in range(x.ndim)]
        return x, m, accs

    return init, update, lambda s: s[0]


# (name, constructor args after the step size, reference, fraction of zero gradients)
OPTIMIZERS = [
    ("sgd", (), lambda lr: ref_sgd(lr), 0.0),
    ("momentum", (0.8,), lambda lr: ref_momentum(lr, 0.8), 0.0),
    ("nesterov", (0.7,), lambda lr: ref_nesterov(lr, 0.7), 0.0),
    ("adagrad", (), lambda lr: ref_adagrad(lr), 0.3),  # zeros exercise the g_sq = 0 branch
    ("adagrad", (0.5,), lambda lr: ref_adagrad(lr, 0.5), 0.0),
    ("rmsprop", (), lambda lr: ref_rmsprop(lr), 0.0),
    ("rmsprop", (0.8, 1e-3), lambda lr: ref_rmsprop(lr, 0.8, 1e-3), 0.0),
    ("rmsprop_momentum", (), lambda lr: ref_rmsprop_momentum(lr), 0.0),
    ("rmsprop_momentum", (0.7, 1e-4, 0.5), lambda lr: ref_rmsprop_momentum(lr, 0.7, 1e-4, 0.5),
     0.0),
    ("adam", (), lambda lr: ref_adam(lr), 0.0),
    ("adam", (0.5, 0.9, 1e-3), lambda lr: ref_adam(lr, 0.5, 0.9, 1e-3), 0.0),
    ("adamax", (), lambda lr: ref_adamax(lr), 0.0),
    ("adamax", (0.6, 0.95, 1e-4), lambda lr: ref_adamax(lr, 0.6, 0.95, 1e-4), 0.0),
    ("sm3", (), lambda lr: ref_sm3(lr), 0.3),
    ("sm3", (0.5,), lambda lr: ref_sm3(lr, 0.5), 0.0),
]

NSTEPS = 4


def run_reference(ref, params, grads_per_step):
    init, update, get = ref
    leaves, treedef = tree_util.tree_flatten(params)
    states = [init(f64(x)) for x in leaves]
    for i, grads in enumerate(grads_per_step):
        gl = tree_util.tree_leaves(grads)
        states = [update(i, f64(g), s) for g, s in zip(gl, states)]
    return [get(s).reshape(np.shape(x)) for s, x in zip(states, leaves)]


@pytest.mark.parametrize("schedule", ["constant", "callable"])
@pytest.mark.parametrize("name,args,make_ref,zeros", OPTIMIZERS,
                         ids=[f"{o[0]}{o[1]}" for o in OPTIMIZERS])
def test_optimizer_matches_reference(rng, name, args, make_ref, zeros, schedule):
    lr0 = float(rng.uniform(0.01, 0.2))
    if schedule == "constant":
        step_size, lr = lr0, (lambda i: lr0)
    else:
        step_size = optimizers.exponential_decay(lr0, 3, 0.5)
        lr = (lambda i: lr0 * 0.5 ** (i / 3))
    opt_init, opt_update, get_params = getattr(optimizers, name)(step_size, *args)
    params = random_params(rng)
    grads = [random_grads(rng, params, zeros) for _ in range(NSTEPS)]

    state = opt_init(params)
    assert isinstance(state, optimizers.OptimizerState)
    assert_tree_close(get_params(state), params, 0.0)
    for i, g in enumerate(grads):
        state = opt_update(i, g, state)
    want = run_reference(make_ref(lr), params, grads)
    got = get_params(state)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(params)
    for x, w, p in zip(tree_util.tree_leaves(got), want, tree_util.tree_leaves(params)):
        assert x.shape == jnp.shape(p) and x.dtype == jnp.float32
        # float32 rounding (of b2 = 0.999 in 1 - b2**t, say) is ~1e-5 of the update
        np.testing.assert_allclose(f64(x), w, rtol=2e-5, atol=1e-5)


def assert_tree_close(a, b, tol):
    la, ta = tree_util.tree_flatten(a)
    lb, tb = tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        assert jnp.shape(x) == jnp.shape(y)
        np.testing.assert_allclose(f64(x), f64(y), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["sgd", "momentum", "adagrad", "rmsprop", "adam", "adamax",
                                  "sm3", "nesterov", "rmsprop_momentum"])
def test_optimizer_update_under_jit(rng, name):
    args = (0.9,) if name in ("momentum", "nesterov") else ()
    opt_init, opt_update, get_params = getattr(optimizers, name)(
        optimizers.inverse_time_decay(0.1, 2, 0.5), *args)
    params = random_params(rng)
    grads = [random_grads(rng, params) for _ in range(3)]
    eager = jitted = opt_init(params)
    step = jax.jit(opt_update)
    for i, g in enumerate(grads):
        eager = opt_update(i, g, eager)
        jitted = step(i, g, jitted)
    assert tree_util.tree_structure(jitted) == tree_util.tree_structure(eager)
    assert_tree_close(get_params(jitted), get_params(eager), 1e-6)
    assert_tree_close(jax.jit(get_params)(jitted), get_params(eager), 1e-6)


def test_optimizer_state_is_jax_pytree(rng):
    params = random_params(rng)
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    state = opt_init(params)
    leaves, treedef = tree_util.tree_flatten(state)
    # per parameter leaf: (x, m, v); the structures are aux data, not leaves
    assert len(leaves) == 3 * len(tree_util.tree_leaves(params))
    assert state.tree_def == tree_util.tree_structure(params)
    assert all(s == tree_util.tree_structure((0, 0, 0)) for s in state.subtree_defs)
    assert len(tree_util.treedef_children(treedef)) == 1  # only packed_state
    back = tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(back, optimizers.OptimizerState)
    assert_tree_close(get_params(back), params, 0.0)
    # tree_map reaches the packed leaves (e.g. to cast or move a state)
    doubled = tree_util.tree_map(lambda x: 2 * x, state)
    assert_tree_close(get_params(doubled), tree_util.tree_map(lambda x: 2 * x, params), 0.0)


def test_update_rejects_mismatched_grad_tree(rng):
    params = random_params(rng)
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init(params)
    bad = {"w": params["w"], "layers": params["layers"]}
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        opt_update(0, bad, state)


def test_optimizer_decorator_custom_rule(rng):
    # A user-defined per-array optimizer lifted to pytrees (the decorator's contract).
    @optimizers.optimizer
    def signed(step_size):
        def init(x):
            return x, jnp.zeros((), jnp.int32)

        def update(i, g, state):
            x, count = state
            return x - step_size * jnp.sign(g), count + 1

        return init, update, lambda state: state[0]

    params = random_params(rng)
    g = random_grads(rng, params)
    opt_init, opt_update, get_params = signed(0.25)
    state = opt_update(0, g, opt_update(1, g, opt_init(params)))
    want = tree_util.tree_map(lambda p, d: f64(p) - 0.5 * np.sign(f64(d)), params, g)
    assert_tree_close(get_params(state), want, 1e-6)
    assert all(int(s[1]) == 2 for s in state.packed_state)

    @optimizers.optimizer
    def broken(step_size):
        return (lambda x: (x, x), lambda i, g, s: (s[0],), lambda s: s[0])
    init, update, _ = broken(0.1)
    with pytest.raises(TypeError, match="did not match its input structure"):
        update(0, g, init(params))


def test_pack_unpack_round_trip(rng):
    params = random_params(rng)
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    state = opt_update(0, random_grads(rng, params), opt_init(params))
    marked = optimizers.unpack_optimizer_state(state)
    # the parameters' structure with a JoinPoint holding (x, v) at each leaf
    assert isinstance(marked["w"], optimizers.JoinPoint)
    x, v = marked["w"].subtree
    np.testing.assert_array_equal(f64(x), f64(get_params(state)["w"]))
    assert list(marked["w"]) == [marked["w"].subtree]
    packed = optimizers.pack_optimizer_state(marked)
    assert packed.tree_def == state.tree_def
    assert tuple(packed.subtree_defs) == tuple(state.subtree_defs)
    assert_tree_close(packed.packed_state, state.packed_state, 0.0)
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": 1.0})


# ---------------------------------------------------------------- schedules

def test_schedules_closed_forms(rng):
    a = float(rng.uniform(0.1, 1.0))
    steps = int(rng.integers(2, 20))
    rate = float(rng.uniform(0.1, 0.9))
    final = float(rng.uniform(0.0, 0.05))
    power = float(rng.uniform(0.5, 3.0))
    exp = optimizers.exponential_decay(a, steps, rate)
    inv = optimizers.inverse_time_decay(a, steps, rate)
    inv_stair = optimizers.inverse_time_decay(a, steps, rate, staircase=True)
    poly = optimizers.polynomial_decay(a, steps, final, power)
    const = optimizers.constant(a)
    jitted = {k: jax.jit(f) for k, f in
              dict(exp=exp, inv=inv, stair=inv_stair, poly=poly).items()}
    for i in [0, 1, steps - 1, steps, steps + 3, 5 * steps]:
        want = {
            "exp": a * rate ** (i / steps),
            "inv": a / (1 + rate * i / steps),
            "stair": a / (1 + rate * (i // steps)),
            "poly": (a - final) * (1 - min(i, steps) / steps) ** power + final,
        }
        got = dict(exp=exp(i), inv=inv(i), stair=inv_stair(i), poly=poly(i))
        for k in want:
            np.testing.assert_allclose(float(got[k]), want[k], rtol=1e-6, err_msg=k)
            np.testing.assert_allclose(float(jitted[k](i)), want[k], rtol=1e-5, err_msg=k)
        assert const(i) == a


def test_piecewise_constant(rng):
    boundaries = np.sort(rng.choice(np.arange(1, 50), size=4, replace=False))
    values = rng.uniform(0, 1, size=5).astype(np.float32)
    sched = optimizers.piecewise_constant(boundaries, values)
    jsched = jax.jit(sched)
    for i in range(0, 55):
        want = values[np.searchsorted(boundaries, i, side="left")]  # count of b < i
        assert float(sched(i)) == want
        assert float(jsched(i)) == want
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="must be sequences"):
        optimizers.piecewise_constant(1, [0.1, 0.2])


def test_make_schedule():
    f = lambda i: 2 * i  # noqa: E731
    assert optimizers.make_schedule(f) is f
    assert optimizers.make_schedule(0.3)(7) == 0.3
    assert float(optimizers.make_schedule(jnp.float32(0.5))(3)) == 0.5
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])


def test_l2_norm_and_clip_grads(rng):
    g = random_grads(rng, random_params(rng))
    flat = np.concatenate([f64(x).ravel() for x in tree_util.tree_leaves(g)])
    norm = np.linalg.norm(flat)
    np.testing.assert_allclose(float(optimizers.l2_norm(g)), norm, rtol=1e-5)
    big = optimizers.clip_grads(g, norm * 2)  # under the limit: unchanged
    assert_tree_close(big, g, 0.0)
    small = optimizers.clip_grads(g, norm / 3)
    assert_tree_close(small, tree_util.tree_map(lambda x: f64(x) / 3, g), 1e-6)
    np.testing.assert_allclose(float(optimizers.l2_norm(small)), norm / 3, rtol=1e-5)
    jitted = jax.jit(optimizers.clip_grads)(g, norm / 3)
    assert_tree_close(jitted, small, 1e-6)


# ---------------------------------------------------------------- stax: simple layers

def check_layer(layer, input_shape, inputs, rng, **kwargs):
    """init's output shape equals apply's; returns (params, outputs)."""
    init_fun, apply_fun = layer
    out_shape, params = init_fun(fresh_key(rng), input_shape)
    out = apply_fun(params, inputs, **kwargs)
    if isinstance(out, (list, tuple)):
        assert [tuple(s) for s in out_shape] == [o.shape for o in out]
    else:
        assert tuple(out_shape) == out.shape
    return params, out


def np_gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805

ELEMENTWISE = {
    "Tanh": np.tanh,
    "Relu": lambda x: np.maximum(x, 0),
    "Exp": np.exp,
    "LogSoftmax": np_log_softmax,
    "Softmax": lambda x: np.exp(np_log_softmax(x)),
    "Softplus": lambda x: np.log1p(np.exp(x)),
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "LeakyRelu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "Selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
    "Gelu": np_gelu,
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_layers(rng, name):
    x = rng.standard_normal((3, 2, 5)).astype(np.float32) * 2
    params, out = check_layer(getattr(stax, name), (3, 2, 5), jnp.asarray(x), rng)
    assert params == ()
    np.testing.assert_allclose(f64(out), ELEMENTWISE[name](f64(x)), rtol=2e-5, atol=2e-6)


def test_elementwise_with_kwargs(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    layer = stax.elementwise(lambda v, k, shift: v * k + shift, k=3.0, shift=-1.0)
    params, out = check_layer(layer, (4, 3), jnp.asarray(x), rng)
    assert params == ()
    np.testing.assert_allclose(f64(out), 3.0 * f64(x) - 1.0, rtol=1e-6, atol=1e-6)
    # apply's own keyword arguments (rng=...) are not passed to the function
    out = stax.elementwise(jnp.tanh)[1]((), jnp.asarray(x), rng=random.PRNGKey(0))
    np.testing.assert_allclose(f64(out), np.tanh(f64(x)), rtol=1e-6, atol=1e-6)


def test_dense(rng):
    x = rng.standard_normal((5, 7)).astype(np.float32)
    params, out = check_layer(stax.Dense(4), (5, 7), jnp.asarray(x), rng)
    W, b = params
    assert W.shape == (7, 4) and b.shape == (4,) and W.dtype == jnp.float32
    np.testing.assert_allclose(f64(out), f64(x) @ f64(W) + f64(b), rtol=1e-5, atol=1e-5)
    # batch of any rank, unknown (-1) batch size in the declared shape
    out_shape, _ = stax.Dense(4)[0](fresh_key(rng), (-1, 2, 7))
    assert out_shape == (-1, 2, 4)
    # default initializers: glorot_normal for W (variance 2 / (fan_in + fan_out)), normal(1e-2)
    # for b; loose bounds on a large draw
    _, (W, b) = stax.Dense(300)[0](random.PRNGKey(3), (1, 200))
    assert abs(np.var(f64(W)) / (2 / 500) - 1) < 0.1
    _, (_, b) = stax.Dense(5000)[0](random.PRNGKey(4), (1, 2))
    assert abs(np.std(f64(b)) / 1e-2 - 1) < 0.1
    # custom initializers
    ones_init = lambda key, shape, dtype=jnp.float32: jnp.ones(shape, dtype)  # noqa: E731
    _, (W, b) = stax.Dense(3, W_init=ones_init, b_init=jax.nn.initializers.zeros)[0](
        fresh_key(rng), (2, 2))
    np.testing.assert_array_equal(f64(W), np.ones((2, 3)))
    np.testing.assert_array_equal(f64(b), np.zeros(3))


def test_flatten_identity_fans(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    xj = jnp.asarray(x)
    _, out = check_layer(stax.Flatten, (2, 3, 4, 5), xj, rng)
    np.testing.assert_array_equal(f64(out), x.reshape(2, 60))
    _, out = check_layer(stax.Identity, (2, 3, 4, 5), xj, rng)
    np.testing.assert_array_equal(f64(out), x)
    shapes, _ = stax.FanOut(3)[0](fresh_key(rng), (2, 3))
    assert shapes == [(2, 3)] * 3
    outs = stax.FanOut(3)[1]((), xj)
    assert len(outs) == 3 and all(o is xj for o in outs)
    ys = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    _, out = check_layer(stax.FanInSum, [(2, 3)] * 3, [jnp.asarray(y) for y in ys], rng)
    np.testing.assert_allclose(f64(out), sum(f64(y) for y in ys), rtol=1e-6, atol=1e-6)
    zs = [rng.standard_normal((2, k, 3)).astype(np.float32) for k in (1, 4, 2)]
    for axis in (1, -2):
        layer = stax.FanInConcat(axis)
        _, out = check_layer(layer, [z.shape for z in zs], [jnp.asarray(z) for z in zs], rng)
        np.testing.assert_array_equal(f64(out), np.concatenate(zs, axis))
    assert stax.FanInConcat()[0](None, [(2, 3), (2, 5)])[0] == (2, 8)


def test_serial_matches_numpy_composition(rng):
    net = stax.serial(stax.Dense(6), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    params, out = check_layer(net, (4, 5), jnp.asarray(x), rng)
    assert len(params) == 4 and params[1] == () and params[3] == ()
    (W1, b1), _, (W2, b2), _ = params
    h = np.tanh(f64(x) @ f64(W1) + f64(b1))
    want = np_log_softmax(h @ f64(W2) + f64(b2))
    np.testing.assert_allclose(f64(out), want, rtol=1e-5, atol=1e-5)
    # serial of nothing is the identity
    _, out = check_layer(stax.serial(), (4, 5), jnp.asarray(x), rng)
    np.testing.assert_array_equal(f64(out), x)


def test_parallel_and_fan_residual(rng):
    # out = Dense(x) + x: the FanOut / parallel / FanInSum residual pattern
    net = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(5), stax.Identity),
                      stax.FanInSum)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    params, out = check_layer(net, (3, 5), jnp.asarray(x), rng)
    W, b = params[1][0]
    np.testing.assert_allclose(f64(out), f64(x) @ f64(W) + f64(b) + f64(x), rtol=1e-5,
                               atol=1e-5)
    # parallel alone: one output per input, init shapes per branch
    par = stax.parallel(stax.Dense(2), stax.Relu)
    ins = [jnp.asarray(x), jnp.asarray(-x)]
    shapes, pparams = par[0](fresh_key(rng), [(3, 5), (3, 5)])
    assert tuple(shapes) == ((3, 2), (3, 5)) and pparams[1] == ()
    outs = par[1](pparams, ins)
    np.testing.assert_allclose(f64(outs[1]), np.maximum(-x, 0))
    np.testing.assert_allclose(f64(outs[0]), f64(x) @ f64(pparams[0][0]) + f64(pparams[0][1]),
                               rtol=1e-5, atol=1e-5)


def test_shape_dependent(rng):
    # a Dense whose width is the input's last dimension, chosen from the shape
    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    x = rng.standard_normal((2, 3)).astype(np.float32)
    params, out = check_layer(layer, (2, 3), jnp.asarray(x), rng)
    assert out.shape == (2, 6)
    np.testing.assert_allclose(f64(out), f64(x) @ f64(params[0]) + f64(params[1]), rtol=1e-5,
                               atol=1e-5)


# ---------------------------------------------------------------- BatchNorm, Dropout

def np_batchnorm(x, axes, eps, beta, gamma):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    z = (x - mean) / np.sqrt(var + eps)
    shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
    if gamma is not None:
        z = z * np.reshape(gamma, shape)
    if beta is not None:
        z = z + np.reshape(beta, shape)
    return z


@pytest.mark.parametrize("axis", [(0, 1, 2), (0,), 0, (0, 2), (1, 3), np.int64(2)])
@pytest.mark.parametrize("center,scale", [(True, True), (True, False), (False, True),
                                          (False, False)])
def test_batchnorm(rng, axis, center, scale):
    x = (rng.standard_normal((4, 3, 5, 2)) * 3 + 1).astype(np.float32)
    eps = float(rng.choice([1e-5, 1e-2]))
    init_fun, apply_fun = stax.BatchNorm(axis=axis, epsilon=eps, center=center, scale=scale)
    out_shape, (beta, gamma) = init_fun(fresh_key(rng), x.shape)
    axes = (int(axis),) if np.ndim(axis) == 0 else axis
    pshape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    assert out_shape == x.shape
    # default initializers: beta zeros, gamma ones; () when disabled
    if center:
        assert beta.shape == pshape and not np.any(f64(beta))
    else:
        assert beta == ()
    if scale:
        assert gamma.shape == pshape and np.all(f64(gamma) == 1)
    else:
        assert gamma == ()
    # random parameters for the comparison
    beta = jnp.asarray(rng.standard_normal(pshape).astype(np.float32)) if center else ()
    gamma = jnp.asarray(rng.standard_normal(pshape).astype(np.float32)) if scale else ()
    out = apply_fun((beta, gamma), jnp.asarray(x))
    want = np_batchnorm(f64(x), axes, eps, f64(beta) if center else None,
                        f64(gamma) if scale else None)
    np.testing.assert_allclose(f64(out), want, rtol=1e-4, atol=1e-4)
    out_jit = jax.jit(apply_fun)((beta, gamma), jnp.asarray(x))
    np.testing.assert_allclose(f64(out_jit), want, rtol=1e-4, atol=1e-4)


def test_dropout():
    x = jnp.asarray(np.arange(1, 20001, dtype=np.float32).reshape(100, 200))
    key = random.PRNGKey(17)
    for rate in (0.2, 0.5, 0.9):  # JAX's stax: `rate` is the KEEP probability
        init_fun, apply_fun = stax.Dropout(rate)
        out_shape, params = init_fun(key, x.shape)
        assert out_shape == x.shape and params == ()
        out = f64(apply_fun(params, x, rng=key))
        kept = out != 0
        # binomial(20000, rate): 6 standard deviations (p < 1e-9)
        n = x.size
        assert abs(kept.sum() - rate * n) < 6 * math.sqrt(n * rate * (1 - rate)), rate
        np.testing.assert_allclose(out[kept], f64(x)[kept] / rate, rtol=1e-6)
        # same key, same mask; other key, other mask
        np.testing.assert_array_equal(f64(apply_fun(params, x, rng=key)), out)
        assert np.any(f64(apply_fun(params, x, rng=random.PRNGKey(18))) != out)
    # test mode: identity, no key needed
    init_fun, apply_fun = stax.Dropout(0.5, mode="test")
    np.testing.assert_array_equal(f64(apply_fun((), x)), f64(x))
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        stax.Dropout(0.5)[1]((), x)
    with pytest.raises(ValueError, match="`mode` argument"):
        stax.Dropout(0.5, mode="eval")[1]((), x, rng=key)


def test_serial_passes_rngs_to_dropout():
    net = stax.serial(stax.Dropout(0.5), stax.Identity, stax.Dropout(0.5))
    x = jnp.ones((50, 40))
    _, params = net[0](random.PRNGKey(0), x.shape)
    out = f64(net[1](params, x, rng=random.PRNGKey(1)))
    # two independent keep-masks of rate 0.5: kept with probability 1/4, value 1/0.25
    kept = out != 0
    assert np.all(out[kept] == 4.0)
    assert abs(kept.mean() - 0.25) < 6 * math.sqrt(0.25 * 0.75 / x.size)
    with pytest.raises(ValueError, match="PRNG key"):
        net[1](params, x)


# ---------------------------------------------------------------- training

def test_mlp_adam_under_jit_reduces_loss(rng):
    # Regression onto a random teacher; 150 jitted adam steps must cut the loss 10x (over 40
    # seeds the smallest cut seen was 55x, the median ~500x).
    n, d = 128, 4
    X = rng.standard_normal((n, d)).astype(np.float32)
    w_true = rng.standard_normal((d, 1)).astype(np.float32)
    Y = np.sin(X @ w_true) + 0.5 * X[:, :1] ** 2
    X, Y = jnp.asarray(X), jnp.asarray(Y.astype(np.float32))
    init_fun, apply_fun = stax.serial(stax.Dense(32), stax.Tanh, stax.Dense(32), stax.Relu,
                                      stax.Dense(1))
    out_shape, params = init_fun(fresh_key(rng), (-1, d))
    assert out_shape == (-1, 1)
    opt_init, opt_update, get_params = optimizers.adam(1e-2)

    def loss(p):
        return jnp.mean((apply_fun(p, X) - Y) ** 2)

    @jax.jit
    def step(i, state):
        value, grads = jax.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, grads, state)

    state = opt_init(params)
    first = float(loss(params))
    for i in range(150):
        _, state = step(i, state)
    last = float(loss(get_params(state)))
    assert last < first / 10, (first, last)


# ---------------------------------------------------------------- convolution and pooling
# References: naive NumPy loops in the canonical (N, C, spatial...) layout.

needs_conv = pytest.mark.skipif(not hasattr(lax, "conv_general_dilated"),
                                reason="lax.conv_general_dilated not in this build yet")
needs_conv_transpose = pytest.mark.skipif(not hasattr(lax, "conv_transpose"),
                                          reason="lax.conv_transpose not in this build yet")
needs_reduce_window = pytest.mark.skipif(not hasattr(lax, "reduce_window"),
                                         reason="lax.reduce_window not in this build yet")


def same_pads(n, k, s):
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2


def np_correlate(x, w, strides, pads):
    """x (N, C, *sp), w (O, C, *k): cross-correlation with explicit (lo, hi) zero padding."""
    x = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    nsp = x.ndim - 2
    out_sp = [(x.shape[2 + a] - w.shape[2 + a]) // strides[a] + 1 for a in range(nsp)]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for pos in np.ndindex(*out_sp):
        sl = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, w.shape[2:]))
        patch = x[(slice(None), slice(None)) + sl]  # (N, C, *k)
        out[(slice(None), slice(None)) + pos] = np.tensordot(
            patch, w, axes=(list(range(1, 2 + nsp)), list(range(1, 2 + nsp))))
    return out


def spatial_letters(rhs_spec):
    return [c for c in rhs_spec if c not in "IO"]


def canon(a, spec, pair, letters):
    return np.transpose(a, [spec.index(pair[0]), spec.index(pair[1])]
                        + [spec.index(c) for c in letters])


def from_canon(a, spec, letters):
    order = ["N", "C"] + letters
    return np.transpose(a, [order.index(c) for c in spec])


CONV_CASES = [
    # (dimension_numbers, input shape, out_chan, filter_shape, strides, padding)
    (("NHWC", "HWIO", "NHWC"), (2, 7, 6, 3), 4, (3, 2), None, "VALID"),
    (("NHWC", "HWIO", "NHWC"), (2, 7, 6, 3), 4, (3, 3), (2, 1), "SAME"),
    (("NCHW", "OIHW", "NCHW"), (1, 2, 8, 5), 3, (2, 3), (3, 2), "SAME"),
    (("NHWC", "OIHW", "NCHW"), (2, 5, 5, 2), 3, (3, 2), (1, 2), [(1, 0), (2, 1)]),
    (("NWC", "WIO", "NWC"), (3, 9, 2), 5, (4,), (2,), "VALID"),
]


@needs_conv
@pytest.mark.parametrize("case", CONV_CASES,
                         ids=lambda c: f"{c[0]}-{c[5] if isinstance(c[5], str) else 'pairs'}")
def test_general_conv(rng, case):
    dn, in_shape, out_chan, filt, strides, padding = case
    x = rng.standard_normal(in_shape).astype(np.float32)
    layer = stax.GeneralConv(dn, out_chan, filt, strides, padding)
    params, out = check_layer(layer, in_shape, jnp.asarray(x), rng)
    W, b = params
    lhs, rhs, outs = dn
    letters = spatial_letters(rhs)
    assert W.shape == tuple(out_chan if c == "O" else in_shape[lhs.index("C")] if c == "I"
                            else filt[letters.index(c)] for c in rhs)
    assert b.shape == tuple(out_chan if c == "C" else 1 for c in outs)
    xc = canon(f64(x), lhs, "NC", letters)
    wc = canon(f64(W), rhs, "OI", letters)
    st = strides or (1,) * len(filt)
    if isinstance(padding, str):
        pads = [same_pads(n, k, s) if padding == "SAME" else (0, 0)
                for n, k, s in zip(xc.shape[2:], wc.shape[2:], st)]
    else:
        pads = padding
    want = from_canon(np_correlate(xc, wc, st, pads), outs, letters) + f64(b)
    np.testing.assert_allclose(f64(out), want, rtol=1e-4, atol=1e-4)


@needs_conv
def test_conv_nhwc_default(rng):
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    params, out = check_layer(stax.Conv(4, (3, 3), padding="SAME"), x.shape, jnp.asarray(x),
                              rng)
    W, b = params
    assert W.shape == (3, 3, 3, 4) and b.shape == (1, 1, 1, 4) and out.shape == (2, 6, 5, 4)
    xc = np.transpose(f64(x), (0, 3, 1, 2))
    wc = np.transpose(f64(W), (3, 2, 0, 1))
    want = np.transpose(np_correlate(xc, wc, (1, 1), [(1, 1), (1, 1)]), (0, 2, 3, 1)) + f64(b)
    np.testing.assert_allclose(f64(out), want, rtol=1e-4, atol=1e-4)
    # in a network with Flatten and Dense, init shapes chain
    net = stax.serial(stax.Conv(2, (2, 2), (2, 2)), stax.Relu, stax.Flatten, stax.Dense(3))
    check_layer(net, x.shape, jnp.asarray(x), rng)
    assert net[0](fresh_key(rng), (-1, 6, 5, 3))[0] == (-1, 3)


def transpose_pads(k, s, padding):
    # JAX's conv_transpose padding of the stride-dilated input for 'SAME' / 'VALID'
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else math.ceil(total / 2)
    else:
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    return lo, total - lo


def np_conv_transpose(xc, wc, strides, pads):
    """conv_transpose (transpose_kernel=False): correlate the stride-dilated input."""
    nsp = xc.ndim - 2
    dil_shape = [(n - 1) * s + 1 for n, s in zip(xc.shape[2:], strides)]
    xd = np.zeros(xc.shape[:2] + tuple(dil_shape))
    xd[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)] = xc
    return np_correlate(xd, wc, (1,) * nsp, pads)


TRANSPOSE_CASES = [
    ("ConvTranspose", (2, 4, 3, 2), 3, (3, 2), (2, 2), "SAME"),
    ("ConvTranspose", (1, 3, 5, 3), 2, (2, 3), (3, 1), "VALID"),
    ("ConvTranspose", (2, 3, 3, 1), 2, (2, 2), (1, 1), [(1, 0), (0, 2)]),
    ("Conv1DTranspose", (2, 5, 3), 4, (3,), (2,), "VALID"),
    ("Conv1DTranspose", (2, 5, 3), 4, (4,), (3,), "SAME"),
]


@needs_conv_transpose
@pytest.mark.parametrize("case", TRANSPOSE_CASES,
                         ids=lambda c: f"{c[0]}-{c[5] if isinstance(c[5], str) else 'pairs'}")
def test_conv_transpose(rng, case):
    name, in_shape, out_chan, filt, strides, padding = case
    x = rng.standard_normal(in_shape).astype(np.float32)
    params, out = check_layer(getattr(stax, name)(out_chan, filt, strides, padding),
                              in_shape, jnp.asarray(x), rng)
    W, b = params
    nsp = len(filt)
    lhs = "N" + "HW"[:nsp] + "C" if nsp == 2 else "NHC"
    letters = list("HW"[:nsp]) if nsp == 2 else ["H"]
    rhs = "".join(letters) + "IO"
    assert W.shape == tuple(filt) + (in_shape[-1], out_chan)
    xc = canon(f64(x), lhs, "NC", letters)
    wc = canon(f64(W), rhs, "OI", letters)
    if isinstance(padding, str):
        pads = [transpose_pads(k, s, padding) for k, s in zip(filt, strides)]
    else:
        pads = padding
    want = from_canon(np_conv_transpose(xc, wc, strides, pads), lhs, letters) + f64(b)
    np.testing.assert_allclose(f64(out), want, rtol=1e-4, atol=1e-4)
    if padding == "SAME":
        assert out.shape[1:-1] == tuple(n * s for n, s in zip(in_shape[1:-1], strides))


@needs_conv_transpose
def test_general_conv_transpose_nchw(rng):
    dn = ("NCHW", "IOHW", "NCHW")
    x = rng.standard_normal((2, 3, 4, 3)).astype(np.float32)
    params, out = check_layer(stax.GeneralConvTranspose(dn, 2, (2, 3), (2, 1), "SAME"),
                              x.shape, jnp.asarray(x), rng)
    W, b = params
    assert W.shape == (3, 2, 2, 3) and b.shape == (1, 2, 1, 1)
    wc = canon(f64(W), "IOHW", "OI", ["H", "W"])
    pads = [transpose_pads(k, s, "SAME") for k, s in zip((2, 3), (2, 1))]
    want = np_conv_transpose(f64(x), wc, (2, 1), pads) + f64(b)
    np.testing.assert_allclose(f64(out), want, rtol=1e-4, atol=1e-4)


def np_pool(x, kind, window, strides, padding, spatial_axes):
    """Naive pooling over `spatial_axes` of x; padding excluded from max/avg windows."""
    nsp = len(window)
    sizes = [x.shape[a] for a in spatial_axes]
    if isinstance(padding, str):
        pads = [same_pads(n, k, s) if padding == "SAME" else (0, 0)
                for n, k, s in zip(sizes, window, strides)]
    else:
        pads = [padding[a] for a in spatial_axes]
    out_sizes = [(n + lo + hi - k) // s + 1 for n, k, s, (lo, hi) in
                 zip(sizes, window, strides, pads)]
    xs = np.moveaxis(x, spatial_axes, list(range(x.ndim - nsp, x.ndim)))
    out = np.zeros(xs.shape[:x.ndim - nsp] + tuple(out_sizes))
    for pos in np.ndindex(*out_sizes):
        idx = []
        for p, s, k, (lo, _), n in zip(pos, strides, window, pads, sizes):
            start = p * s - lo
            idx.append([j for j in range(start, start + k) if 0 <= j < n])
        vals = np.stack([xs[(Ellipsis,) + t] for t in itertools.product(*idx)], -1)
        if kind == "max":
            out[(Ellipsis,) + pos] = vals.max(-1)
        elif kind == "sum":
            out[(Ellipsis,) + pos] = vals.sum(-1)
        else:
            out[(Ellipsis,) + pos] = vals.mean(-1)
    return np.moveaxis(out, list(range(x.ndim - nsp, x.ndim)), spatial_axes)


POOL_CASES = [
    ((2, 2), None, "VALID", None, (2, 6, 7, 3)),
    ((3, 2), (2, 1), "SAME", None, (2, 7, 5, 2)),
    ((2, 3), (2, 2), "SAME", "NCHW", (1, 3, 5, 8)),
    ((3,), (2,), "VALID", None, (2, 9, 4)),
    ((2, 2), (1, 3), "VALID", "HWCN", (6, 7, 2, 2)),
    ((2, 3), (2, 2), [(0, 0), (1, 0), (0, 2), (0, 0)], None, (2, 5, 6, 3)),
]


@needs_reduce_window
@pytest.mark.parametrize("kind", ["MaxPool", "SumPool", "AvgPool"])
@pytest.mark.parametrize(
    "case", POOL_CASES,
    ids=lambda c: f"{c[0]}-{c[2] if isinstance(c[2], str) else 'pairs'}-{c[3]}")
def test_pooling(rng, kind, case):
    window, strides, padding, spec, in_shape = case
    x = rng.standard_normal(in_shape).astype(np.float32)
    layer = getattr(stax, kind)(window, strides, padding, spec)
    params, out = check_layer(layer, in_shape, jnp.asarray(x), rng)
    assert params == ()
    if spec is None:
        spatial_axes = list(range(1, len(in_shape) - 1))
    else:
        spatial_axes = [i for i, c in enumerate(spec) if c not in "NC"]
    ref_kind = {"MaxPool": "max", "SumPool": "sum", "AvgPool": "avg"}[kind]
    want = np_pool(f64(x), ref_kind, window, strides or (1,) * len(window), padding,
                   spatial_axes)
    np.testing.assert_allclose(f64(out), want, rtol=1e-5, atol=1e-5)


@needs_reduce_window
def test_pooling_in_network(rng):
    net = stax.serial(stax.MaxPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(2))
    x = rng.standard_normal((3, 8, 6, 2)).astype(np.float32)
    check_layer(net, x.shape, jnp.asarray(x), rng)
    assert net[0](fresh_key(rng), (-1, 8, 6, 2))[0] == (-1, 2)
