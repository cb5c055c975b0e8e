"""tessera.jit against eager evaluation on fresh random inputs: results bitwise equal; JAX's
caching rules counted in traces (same signature, NumPy vs Tessera arrays, weak Python scalars,
static values, re-wrapping, shapes, x64); the decorator forms; make_jaxpr's `jit` equation;
composition with grad, vmap, scan, nested jit, custom_vjp and checkpoint; disable_jit; trace and
eval_shape; errors; and a small training loop jitted vs eager. The seed is TESSERA_TEST_SEED (or
the clock), printed by conftest's `rng`."""
import functools
import re
import warnings

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax


def A(x):
    return np.asarray(x)


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(A(a), A(b))


def test_jit_equals_eager_bitwise(rng):
    def f(x, y, z):
        return jnp.exp(x * y + z) - jnp.sin(z) / (jnp.abs(x) + 1.0)
    jf = jax.jit(f)
    for shape in [(), (7,), (3, 5), (0, 2)]:
        x, y, z = (jnp.asarray(rng.normal(size=shape).astype(np.float32)) for _ in range(3))
        same(jf(x, y, z), f(x, y, z))
    for dt in (np.int32, np.int8, np.uint8):
        a = jnp.asarray(rng.integers(-5, 5, size=6).astype(dt))
        b = jnp.asarray(rng.integers(1, 5, size=6).astype(dt))
        same(jax.jit(lambda u, v: u * v + u // v)(a, b), a * b + a // b)
    w = jnp.asarray(rng.normal(size=(4, 3)).astype(np.float32))
    x = jnp.asarray(rng.normal(size=(5, 4)).astype(np.float32))
    mlp = lambda w, x: jnp.sum(jnp.tanh(x @ w), axis=0)  # noqa: E731
    same(jax.jit(mlp)(w, x), mlp(w, x))
    # pytrees in and out, keyword arguments
    tree = {"a": x, "b": (w, 2.0)}
    out = jax.jit(lambda t, scale=1.0: {"s": t["a"] @ t["b"][0] * t["b"][1] * scale})(
        tree, scale=3.0)
    same(out["s"], x @ w * 2.0 * 3.0)


def test_decorator_forms_and_static_arguments(rng):
    @jax.jit
    def f(x):
        return x * 2
    x = jnp.asarray(rng.normal(size=3).astype(np.float32))
    same(f(x), x * 2)

    @functools.partial(jax.jit, static_argnums=1)
    def g(x, n):
        for _ in range(n):  # Python control flow on a static argument
            x = x + 1.0
        return x
    same(g(x, 3), x + 1.0 + 1.0 + 1.0)

    @jax.jit(static_argnames="mode")
    def h(x, mode="sin"):
        return jnp.sin(x) if mode == "sin" else jnp.cos(x)
    same(h(x, mode="cos"), jnp.cos(x))
    same(h(x), jnp.sin(x))
    with pytest.raises(ValueError, match=re.escape(
            "Non-hashable static arguments are not supported. An error occurred while trying to "
            "hash an object of type <class 'list'>, [1, 2]. The error was:\nTypeError: "
            "unhashable type: 'list'")):
        g(x, [1, 2])


def test_trace_cache_rules(rng):
    calls = []

    def f(x, y):
        calls.append(1)
        return x * y + 1.0
    jf = jax.jit(f)
    x = jnp.asarray(rng.normal(size=3).astype(np.float32))
    y = jnp.asarray(rng.normal(size=3).astype(np.float32))
    before = jax._tessera.jit_compile_count()
    jf(x, y)
    jf(x, y)
    jf(jnp.asarray(rng.normal(size=3).astype(np.float32)), y)
    assert len(calls) == 1
    compiled = jax._tessera.jit_compile_count()
    assert compiled - before <= 1
    jf(x, y)
    assert jax._tessera.jit_compile_count() == compiled  # no recompile, ever
    # A NumPy array of the same aval shares the entry.
    jf(A(x), y)
    assert len(calls) == 1
    # Wrapping the same function again does not retrace.
    jax.jit(f)(x, y)
    assert len(calls) == 1
    # A new shape: one new trace.
    jf(jnp.ones(4), jnp.ones(4))
    assert len(calls) == 2
    # A Python scalar is a weakly typed argument; a NumPy scalar a strong one.
    jf(x, 2.0)
    jf(x, 3.0)
    assert len(calls) == 3
    jf(x, np.float32(2.0))
    assert len(calls) == 4
    # New static values retrace once each.
    k = jax.jit(lambda x, n: x * n, static_argnums=1)
    counts = []
    k2 = jax.jit(lambda x, n: (counts.append(n), x * n)[1], static_argnums=1)
    for n in (2, 3, 2, 3):
        same(k2(x, n), x * n)
    assert counts == [2, 3]
    same(k(x, 4), x * 4)
    # x64 is part of the signature.
    with _x64_context():
        jf(x, y)
    assert len(calls) == 5


class _x64_context:
    def __enter__(self):
        self.old = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        jax.config.update("jax_enable_x64", self.old)


def test_make_jaxpr_shows_the_jit_equation():
    def f(x):
        return jnp.sin(x) * 2.0
    text = str(jax.make_jaxpr(jax.jit(f))(jnp.ones(3)))
    assert re.search(r"b:f32\[3\] = jit\[\s+name=f\s+jaxpr=\{ lambda ; c:f32\[3\]\. let", text), \
        text
    assert "donated_invars" not in text and "keep_unused" not in text
    t = jax.jit(f).trace(jnp.ones(3))
    assert str(t.jaxpr) == str(jax.make_jaxpr(f)(jnp.ones(3)))
    s = jax.jit(f).eval_shape(jnp.ones(3))
    assert s.shape == (3,) and s.dtype == jnp.float32


def test_composes_with_transformations(rng):
    w = jnp.asarray(rng.normal(size=(4, 3)).astype(np.float32))
    x = jnp.asarray(rng.normal(size=(5, 4)).astype(np.float32))

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    g = jax.grad(loss)(w, x)
    same(jax.grad(jax.jit(loss))(w, x), g)
    same(jax.jit(jax.grad(loss))(w, x), g)
    xs = jnp.asarray(rng.normal(size=(6, 5, 4)).astype(np.float32))
    same(jax.vmap(jax.jit(loss), in_axes=(None, 0))(w, xs), jax.vmap(loss, in_axes=(None, 0))(w, xs))
    inner = jax.jit(lambda v: jnp.cos(v) * v)
    outer = jax.jit(lambda v: inner(v) + inner(v * 2.0))
    v = jnp.asarray(rng.normal(size=8).astype(np.float32))
    same(outer(v), jnp.cos(v) * v + jnp.cos(v * 2.0) * (v * 2.0))
    seq = jnp.asarray(rng.normal(size=(5, 8)).astype(np.float32))

    def body(c, xi):
        n = inner(c + xi)
        return n, n * 2.0

    def eager_body(c, xi):
        n = jnp.cos(c + xi) * (c + xi)
        return n, n * 2.0
    c1, y1 = lax.scan(body, v, seq)
    c2, y2 = lax.scan(eager_body, v, seq)
    same(c1, c2)
    same(y1, y2)
    same(jax.grad(lambda c: jnp.sum(lax.scan(body, c, seq)[0]))(v),
         jax.grad(lambda c: jnp.sum(lax.scan(eager_body, c, seq)[0]))(v))
    same(jax.jit(lambda p, a, b: lax.cond(p, lambda u: inner(u), lambda u: -u, a + b))(
        True, v, v), jnp.cos(v + v) * (v + v))
    cube = lambda s: s * s * s  # noqa: E731
    same(jax.grad(jax.grad(jax.jit(cube)))(1.7), jax.grad(jax.grad(cube))(1.7))


def test_custom_vjp_and_checkpoint_inside_jit(rng):
    @jax.custom_vjp
    def clip_grad(x):
        return x * 3.0

    def fwd(x):
        return x * 3.0, None

    def bwd(_, ct):
        return (jnp.clip(ct, -1.0, 1.0),)
    clip_grad.defvjp(fwd, bwd)
    x = jnp.asarray(rng.normal(size=6).astype(np.float32))
    h = lambda v: jnp.sum(clip_grad(v) * 5.0)  # noqa: E731
    same(jax.jit(jax.grad(h))(x), jnp.ones(6))
    same(jax.grad(jax.jit(h))(x), jnp.ones(6))
    layer = jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))
    f = lambda v: jnp.sum(layer(v) * v)  # noqa: E731
    f0 = lambda v: jnp.sum(jnp.sin(jnp.sin(v)) * v)  # noqa: E731
    same(jax.jit(jax.grad(f))(x), jax.grad(f0)(x))


def test_disable_jit_runs_eagerly(rng):
    seen = []

    def f(x):
        seen.append(type(x))
        return x + 1
    x = jnp.asarray(rng.normal(size=3).astype(np.float32))
    with jax.disable_jit():
        same(jax.jit(f)(x), x + 1)
    assert len(seen) == 1 and not x._is_tracer
    jax.jit(f)(x)
    assert len(seen) == 2


def test_concretization_errors_name_the_function_and_arguments(rng):
    """JAX's texts: the error type by the conversion (bool, int(), __index__, __array__), the
    function and transformation, and the arguments the value depends on, by their names and key
    paths; on the C++ fast path (positional calls) and the Python path (keywords) alike."""
    x = jnp.asarray(rng.normal(size=()).astype(np.float32))
    y = jnp.asarray(rng.normal(size=()).astype(np.float32))

    @jax.jit
    def one(a, b):
        if a > 0:
            return b
        return -b
    for call in (lambda: one(x, y), lambda: one(a=x, b=y), lambda: one(x, b=y)):
        with pytest.raises(jax.errors.TracerBoolConversionError) as e:
            call()
        msg = str(e.value)
        assert "Attempted boolean conversion of traced array with shape bool[]." in msg, msg
        assert re.search(r"The error occurred while tracing the function one at .*test_jit\.py:"
                         r"\d+ for jit\. This concrete value was not available in Python because "
                         r"it depends on the value of the argument a\.", msg), msg
        assert msg.count("The error occurred while tracing") == 1
        assert isinstance(e.value, jax.errors.ConcretizationTypeError)

    @jax.jit
    def two(a, b, c):
        return jnp.where(a + c * 0 > b, a, b) if (a * b > 0) else c
    with pytest.raises(jax.errors.TracerBoolConversionError,
                       match=r"depends on the values of the arguments a and b\."):
        two(x, y, x)

    @jax.jit
    def three(a, b, c):
        return a if (a + b + c) > 0 else b
    with pytest.raises(TypeError, match=r"values of the arguments a, b, and c\."):
        three(x, y, x)

    @jax.jit
    def tree(params, scale):
        if jnp.sum(params["w"][1]) > 0:
            return scale
        return params["b"]
    p = {"w": (x, jnp.ones(3)), "b": y}
    with pytest.raises(TypeError, match=re.escape("the argument params['w'][1].")):
        tree(p, 2.0)

    @jax.jit
    def star(*args, **kw):
        return args[0] if kw["k"] > 0 else args[1]
    with pytest.raises(TypeError, match=re.escape("the argument kw['k'].")):
        star(x, y, k=y)

    @functools.partial(jax.jit, static_argnums=0)
    def static_first(n, a):
        return a if a > n else -a
    with pytest.raises(TypeError, match=r"the argument a\."):
        static_first(1, x)

    @jax.jit
    def as_int(a):
        return jnp.ones(3) * int(a)
    with pytest.raises(jax.errors.ConcretizationTypeError) as e:
        as_int(x)
    assert "The problem arose with the `int` function." in str(e.value)
    assert "the argument a." in str(e.value)

    @jax.jit
    def as_index(a):
        return [1.0, 2.0, 3.0][a]
    with pytest.raises(jax.errors.TracerIntegerConversionError,
                       match=r"The __index__\(\) method was called on traced array with shape "
                             r"int32\[\]\.(.|\n)*the argument a\.") as e:
        as_index(jnp.asarray(1))
    assert not isinstance(e.value, jax.errors.ConcretizationTypeError)  # as JAX's

    @jax.jit
    def to_numpy(a):
        return np.asarray(a) + 1
    with pytest.raises(jax.errors.TracerArrayConversionError,
                       match=r"__array__\(\) was called on traced array with shape float32\[\]"
                             r"(.|\n)*the argument a\."):
        to_numpy(x)

    # Through grad and vmap inside jit: the primal / batched value still knows its argument.
    def branchy(a, b):
        return a * b if a > 0 else b
    with pytest.raises(TypeError, match=r"the argument a\."):
        jax.jit(jax.grad(branchy))(x, y)
    with pytest.raises(TypeError, match=r"the argument b\."):
        jax.jit(jax.vmap(lambda a, b: a if jnp.sum(b) > 0 else b))(jnp.ones(2), jnp.ones(2))
    # make_jaxpr names its function and arguments too.
    with pytest.raises(TypeError, match=r"tracing the function branchy at .*test_jit\.py:\d+ "
                                        r"for make_jaxpr\.(.|\n)*the argument a\."):
        jax.make_jaxpr(branchy)(x, y)


def test_errors():
    @jax.jit
    def f(x):
        if x > 0:  # Python control flow on a traced value
            return x
        return -x
    with pytest.raises(jax.errors.ConcretizationTypeError,
                       match=r"The error occurred while tracing the function f at .*test_jit"
                             r"\.py:\d+ for jit\."):
        f(jnp.ones(()))

    @jax.jit
    def outer(x):
        return f(x) * 2
    with pytest.raises(jax.errors.ConcretizationTypeError) as e:
        outer(jnp.ones(()))
    assert str(e.value).count("The error occurred while tracing") == 1  # the innermost jit
    with pytest.raises(TypeError, match="Expected a callable value"):
        jax.jit(3)

    @jax.jit
    def g(x, opts):
        return x
    with pytest.raises(TypeError, match=re.escape(
            "The problematic value is of type <class 'str'> and was passed to the function at "
            "path opts['mode'].\nThis typically means that a jit-wrapped function was called "
            "with a non-array argument, and this argument was not marked as static")):
        g(jnp.ones(2), {"mode": "fast"})
    with pytest.raises(TypeError, match="at path opts"):
        g(jnp.ones(2), opts=object())


def test_training_loop_jitted_equals_eager(rng):
    w0 = {"w": jnp.asarray(rng.normal(size=(3, 4)).astype(np.float32)) * 0.3,
          "b": jnp.zeros(4)}
    xb = jnp.asarray(rng.normal(size=(16, 3)).astype(np.float32))
    yb = jnp.asarray(rng.normal(size=(16, 4)).astype(np.float32))

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w"] + p["b"]) - y) ** 2)

    def step(p, x, y, lr):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g), l
    jstep = jax.jit(step, static_argnums=3)
    pe, pj = w0, w0
    for _ in range(15):
        pe, le = step(pe, xb, yb, 0.1)
        pj, lj = jstep(pj, xb, yb, 0.1)
        same(lj, le)
    same(pj["w"], pe["w"])
    same(pj["b"], pe["b"])
    assert float(lj) < float(loss(w0, xb, yb))


def test_aot_stages(rng):
    calls = []

    def f(x, y):
        calls.append(1)
        return jnp.sin(x) * y + jnp.log(jnp.abs(x) + 1.0) * 0.0
    jf = jax.jit(f)
    spec = jax.ShapeDtypeStruct((3,), jnp.float32)
    lowered = jf.lower(spec, spec)
    text = lowered.as_text()
    assert "sin" in text and "log" in text, text
    compiled = lowered.compile()
    plan = compiled.as_text()
    # sin runs eagerly or inside a fused kernel's body ("%1:f32 = sin %0").
    assert "executable (" in plan and ("= eager sin" in plan or " sin %" in plan), plan
    x = jnp.asarray(rng.normal(size=3).astype(np.float32))
    y = jnp.asarray(rng.normal(size=3).astype(np.float32))
    same(compiled(x, y), f(x, y))
    assert len(calls) == 2  # the trace for lower, and the eager reference call above
    same(jf(x, y), compiled(x, y))  # the jitted call shares the entry: no new trace
    assert len(calls) == 2
    with pytest.raises(TypeError, match="Argument types differ from the types for which this "
                                        "computation was compiled"):
        compiled(jnp.ones(4), jnp.ones(4))
    with pytest.raises(TypeError, match="input pytree does not match"):
        compiled((x, y), y)
    assert jf.eval_shape(spec, spec).shape == (3,)
    t = jf.trace(spec, spec)
    assert str(t.jaxpr).startswith("{ lambda ; a:f32[3] b:f32[3]. let")


def test_control_flow_runs_nested_executables(rng):
    """Under jit, scan / while_loop / cond bodies are nested executables of the plan (not eager
    thunks interpreting their jaxprs); results equal eager evaluation bitwise."""
    def f(c0, xs):
        def step(c, x):
            c = lax.cond(jnp.sum(x) > 0, jnp.sin, lambda v: jnp.cos(v) * 2.0, c + x)
            c = lax.while_loop(lambda v: jnp.sum(v * v) > 16.0, lambda v: v * 0.5, c * 3.0)
            return c, jnp.sum(c)
        return lax.scan(step, c0, xs)
    c0 = jnp.asarray(rng.normal(size=5).astype(np.float32))
    xs = jnp.asarray(rng.normal(size=(7, 5)).astype(np.float32))
    jf = jax.jit(f)
    for got, want in zip(jf(c0, xs), f(c0, xs)):
        same(got, want)
    plan = jf.lower(c0, xs).compile().as_text()
    for part in ("= scan[", "body: executable", "branch 0: executable", "branch 1: executable",
                 "= while[", "cond: executable"):
        assert part in plan, (part, plan)
    for eager in ("eager scan", "eager cond", "eager while"):
        assert eager not in plan, plan


def test_donation(rng):
    x = jnp.asarray(rng.normal(size=3).astype(np.float32))
    y = jnp.asarray(rng.normal(size=3).astype(np.float32))
    want = np.asarray(x) * 2 + np.asarray(y)
    f = jax.jit(lambda a, b: a * 2 + b, donate_argnums=0)
    out = f(x, y)
    np.testing.assert_array_equal(A(out), want)
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(RuntimeError, match=re.escape("Array has been deleted with "
                                                     "shape=float32[3]")):
        x + 1
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(x, y)
    # An output that is the donated array itself stays valid.
    z = jnp.asarray(rng.normal(size=4).astype(np.float32))
    zv = A(z).copy()
    r = jax.jit(lambda a: a, donate_argnums=0)(z)
    assert z.is_deleted() and not r.is_deleted()
    np.testing.assert_array_equal(A(r), zv)
    # A pytree argument, and donate_argnames.
    p = {"w": jnp.ones(2), "b": jnp.zeros(2)}
    g = jax.jit(lambda p, *, lr: jax.tree_util.tree_map(lambda t: t - lr, p),
                donate_argnames="p")
    q = g(p=p, lr=0.5)
    assert p["w"].is_deleted() and p["b"].is_deleted()
    np.testing.assert_array_equal(A(q["w"]), np.full(2, 0.5, np.float32))
    # A live NumPy view refuses the donation with JAX's warning; the array stays valid.
    v = jnp.asarray(rng.normal(size=3).astype(np.float32))
    view = np.asarray(v)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(v, y)
    assert any("Some donated buffers were not usable: ShapedArray(float32[3])" in str(m.message)
               for m in w), [str(m.message) for m in w]
    assert not v.is_deleted()
    np.testing.assert_array_equal(view, A(v))
    del view
    f(v, y)  # no view any more: donated
    assert v.is_deleted()
    # The staged jit equation records the donation, one flag per operand; tracers are not
    # deleted.
    x2 = jnp.asarray(rng.normal(size=3).astype(np.float32))
    text = str(jax.make_jaxpr(lambda a, b: f(a, b))(x2, y))
    assert "donated_invars=(1, 0)" in text, text
    assert not x2.is_deleted()


def test_compiled_cost_analysis():
    m, k, n = 4, 5, 3

    def f(x, y, z):
        return jnp.tanh(x @ y) + z
    specs = (jax.ShapeDtypeStruct((m, k), jnp.float32), jax.ShapeDtypeStruct((k, n), jnp.float32),
             jax.ShapeDtypeStruct((m, n), jnp.float32))
    cost = jax.jit(f).lower(*specs).compile().cost_analysis()
    # dot: 2*m*k*n; tanh and add: m*n each.
    assert cost["flops"] == 2 * m * k * n + 2 * m * n, cost
    # bytes: dot reads x, y and writes m*n; tanh and add are one fused kernel reading the dot's
    # result and z and writing one m*n (the tanh never reaches memory).
    assert cost["bytes accessed"] == 4 * (m * k + k * n + m * n + 3 * m * n), cost
    assert cost["fusion.0 flops"] == 2 * m * n, cost
    assert cost["fusion.0 bytes accessed"] == 4 * 3 * m * n, cost


def test_trivial_shardings(rng):
    dev = jax.devices()[0]
    sh = jax.sharding.SingleDeviceSharding(dev)
    x = jnp.asarray(rng.normal(size=3).astype(np.float32))
    f = jax.jit(lambda a, b: (a * b, a + b), in_shardings=sh, out_shardings=(sh, None))
    p, s = f(x, x)
    same(p, x * x)
    same(s, x + x)
    assert p.devices() == {dev}
    same(jax.jit(lambda a, b: a - b, in_shardings=(sh, dev))(x, x), x - x)
    with pytest.raises(NotImplementedError, match="single-device shardings"):
        jax.jit(lambda a: a, in_shardings="model")
    with pytest.raises(ValueError, match="1 entries for 2 positional arguments"):
        jax.jit(lambda a, b: a, in_shardings=(sh,))(x, x)


def test_single_device_shardings_place_on_their_device():
    import os
    import subprocess
    import sys
    code = ("import tessera as jax, tessera.numpy as jnp\n"
            "d = jax.devices()\n"
            "sh = jax.sharding.SingleDeviceSharding(d[2])\n"
            "x = jnp.ones(3)\n"
            "y = jax.jit(lambda a: a * 2, in_shardings=sh)(x)\n"
            "z = jax.jit(lambda a: a * 2, out_shardings=sh)(x)\n"
            "print(y.devices() == {d[2]}, z.devices() == {d[2]}, float(y[0]))\n")
    env = dict(os.environ, TESSERA_NUM_CPU_DEVICES="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "2.0"], out.stdout
