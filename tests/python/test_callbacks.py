"""tessera.debug.print / debug.callback, tessera.pure_callback and
tessera.experimental.io_callback (JAX's API) on fresh random inputs: printed text against
NumPy's own printing of the same values, callback arguments against the inputs, call counts and
argument shapes under vmap per vmap_method, JAX's errors, and effects in make_jaxpr.

The seed comes from TESSERA_TEST_SEED (or the clock) and is printed (to stderr, so that the
captured stdout holds only what the callbacks print) with each test's output.
"""
import os
import sys
import time
import warnings
import zlib

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import lax
from tessera.experimental import io_callback

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})", file=sys.stderr)
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


def f32(rng, *shape):
    return rng.uniform(-4.0, 4.0, shape).astype(np.float32)


def out_lines(capsys):
    """The printed lines (an array's str may itself span lines: split only at prints)."""
    return capsys.readouterr().out


def lines(*ls):
    return "".join(str(x) + "\n" for x in ls)


# ---- debug.print ----

def test_print_formats_like_numpy_in_order(rng, capsys):
    x, y = f32(rng, 3), rng.integers(-9, 9, (2, 2)).astype(np.int32)
    s = np.float32(rng.uniform(-4, 4))
    jax.debug.print("x = {} and y = {y}", jnp.asarray(x), y=jnp.asarray(y))
    jax.debug.print("{1}|{0}|{{lit}}", jnp.asarray(x), jnp.asarray(y), ordered=True)
    jax.debug.print("s = {:.3f} r = {!r}", jnp.asarray(s), jnp.asarray(s))
    jax.debug.print("shape {x.shape} first {x[0]}", x=jnp.asarray(x))
    assert out_lines(capsys) == lines(
        f"x = {x} and y = {y}",
        f"{y}|{x}|{{lit}}",
        f"s = {s:.3f} r = A{repr(np.array(s))[1:]}",  # JAX's repr is NumPy's, capitalized
        f"shape {x.shape} first {str(x[0])}",
    )


def test_print_errors_are_jax(rng, capsys):
    x = jnp.asarray(f32(rng, 2))
    with pytest.raises(ValueError, match="Unused positional arguments to `jax.debug.print`"):
        jax.debug.print("nothing", x)
    with pytest.raises(ValueError, match="Unused keyword arguments to `jax.debug.print`"):
        jax.debug.print(f"{x}", x=x)
    with pytest.raises(IndexError):
        jax.debug.print("{} {}", x)
    with pytest.raises(TypeError, match="must be callable"):
        jax.debug.callback(3, x)
    assert capsys.readouterr().out == ""


def test_callback_pytrees_and_kwargs(rng):
    a, b, c = f32(rng, 3), f32(rng, 2, 2), f32(rng)
    got = []

    def cb(t, d, *, k):
        got.append((np.asarray(t[0]), np.asarray(d["b"]), np.asarray(k)))

    jax.debug.callback(cb, (jnp.asarray(a),), {"b": jnp.asarray(b)}, k=jnp.asarray(c))
    assert len(got) == 1
    np.testing.assert_array_equal(got[0][0], a)
    np.testing.assert_array_equal(got[0][1], b)
    np.testing.assert_array_equal(got[0][2], c)


def test_make_jaxpr_stages_with_effects_and_runs_later(rng, capsys):
    x = f32(rng, 3)

    def f(v):
        w = jnp.sin(v)
        jax.debug.print("w={}", w, ordered=True)
        jax.debug.print("v={}", v)
        return w * v

    text = str(jax.make_jaxpr(f)(x))
    assert capsys.readouterr().out == ""  # tracing prints nothing
    assert text.count("debug_callback[") == 2
    assert "effect=OrderedDebug" in text and "effect=Debug\n" in text
    out = f(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), np.sin(x.astype(np.float64)) * x, rtol=1e-5,
                               atol=1e-5)
    assert out_lines(capsys) == lines(f"w={np.asarray(jnp.sin(x))}", f"v={x}")


def test_vmap_prints_once_per_member_in_order(rng, capsys):
    B, n = 4, 3
    xs = f32(rng, B, n)

    def f(v, c):
        jax.debug.print("v={} c={}", v, c, ordered=True)
        return v * c

    c = f32(rng, n)
    jax.vmap(f, in_axes=(0, None))(jnp.asarray(xs), jnp.asarray(c))
    assert out_lines(capsys) == lines(*[f"v={xs[i]} c={c}" for i in range(B)])
    xt = f32(rng, n, B)
    jax.vmap(f, in_axes=(1, None))(jnp.asarray(xt), jnp.asarray(c))
    assert out_lines(capsys) == lines(*[f"v={xt[:, i]} c={c}" for i in range(B)])
    # Nested vmap: the inner vmap unrolls first, then each of its calls is unrolled by the outer
    # one, so the inner index is the slow one (JAX's order too).
    x3 = f32(rng, 2, 3, n)
    jax.vmap(jax.vmap(lambda v: f(v, v)))(jnp.asarray(x3))
    assert out_lines(capsys) == lines(
        *[f"v={x3[i, j]} c={x3[i, j]}" for j in range(3) for i in range(2)])


def test_grad_jvp_print_primals_once(rng, capsys):
    x = f32(rng, 4)

    def f(v):
        s = jnp.sin(v)
        jax.debug.print("s={}", s)
        return jnp.sum(s * v)

    s_x = np.asarray(jnp.sin(jnp.asarray(x)))  # the primal values the program computes
    g = jax.grad(f)(jnp.asarray(x))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(g), np.cos(x64) * x64 + np.sin(x64), rtol=1e-5,
                               atol=1e-5)
    assert out_lines(capsys) == lines(f"s={s_x}")
    t = f32(rng, 4)
    jax.jvp(f, (jnp.asarray(x),), (jnp.asarray(t),))
    assert out_lines(capsys) == lines(f"s={s_x}")
    y, f_jvp = jax.linearize(f, jnp.asarray(x))
    f_jvp(jnp.asarray(t))
    f_jvp(jnp.asarray(t))
    assert out_lines(capsys) == lines(f"s={s_x}")
    # vmap of grad: once per member.
    xs = f32(rng, 3, 4)
    jax.vmap(jax.grad(f))(jnp.asarray(xs))
    s_xs = np.asarray(jnp.sin(jnp.asarray(xs)))
    assert out_lines(capsys) == lines(*[f"s={s_xs[i]}" for i in range(3)])


# ---- pure_callback ----

def host_affine(a, b):
    return (np.asarray(a, np.float64) * 2.0 + np.asarray(b, np.float64)).astype(np.float32)


def test_pure_callback_values_pytrees_and_checks(rng):
    x, c = f32(rng, 2, 3), f32(rng, 3)
    spec = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    out = jax.pure_callback(host_affine, spec, jnp.asarray(x), jnp.asarray(c))
    np.testing.assert_allclose(np.asarray(out), host_affine(x, c), rtol=1e-6)
    # Pytrees in and out; a float64 NumPy result is canonicalized (x64 off), as JAX.
    res = jax.pure_callback(
        lambda d: {"s": np.sum(np.asarray(d["a"], np.float64)), "n": np.asarray(d["a"]) * 2},
        {"s": jax.ShapeDtypeStruct((), jnp.float32), "n": x}, {"a": jnp.asarray(x)})
    np.testing.assert_allclose(float(res["s"]), x.astype(np.float64).sum(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(res["n"]), x * 2)
    with pytest.raises(ValueError, match=r"Incorrect output shape for return value #0: "
                                         r"Expected: \(3, 2\), Actual: \(2, 3\)"):
        jax.pure_callback(host_affine, jax.ShapeDtypeStruct((3, 2), jnp.float32), x, c)
    with pytest.raises(TypeError, match="Incorrect output dtype for return value #0: "
                                        "Expected: int32, Actual: float32"):
        jax.pure_callback(host_affine, jax.ShapeDtypeStruct((2, 3), jnp.int32), x, c)
    with pytest.raises(ValueError, match="Mismatched number of outputs from callback. "
                                         "Expected: 2, Actual: 1"):
        jax.pure_callback(host_affine, (spec, spec), x, c)
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        jax.pure_callback(host_affine, np.zeros((2, 3)), x, c)
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        jax.pure_callback(host_affine, spec, x, c, vmap_method="vectorised")
    # Errors of the host function propagate unchanged.
    def boom(a):
        raise KeyError("from host")
    with pytest.raises(KeyError, match="from host"):
        jax.pure_callback(boom, spec, x)


def test_pure_callback_staged_without_effects(rng):
    x = f32(rng, 3)
    calls = []

    def host(a):
        calls.append(1)
        return np.asarray(a) * 3

    f = lambda v: jax.pure_callback(host, jax.ShapeDtypeStruct((3,), jnp.float32), v,
                                    vmap_method="expand_dims")
    text = str(jax.make_jaxpr(f)(x))
    assert calls == []
    assert "pure_callback[" in text and "result_avals=(ShapedArray(float32[3]),)" in text
    assert "vmap_method=expand_dims" in text


@pytest.mark.parametrize("method,calls,x_shape,c_shape", [
    ("sequential", 4, (3,), (3,)),
    ("sequential_unrolled", 4, (3,), (3,)),
    ("expand_dims", 1, (4, 3), (1, 3)),
    ("broadcast_all", 1, (4, 3), (4, 3)),
    ("legacy_vectorized", 1, (4, 3), (3,)),
])
def test_pure_callback_vmap_methods(rng, method, calls, x_shape, c_shape):
    B, n = 4, 3
    xs, c = f32(rng, B, n), f32(rng, n)
    seen = []

    def host(a, b):
        seen.append((np.shape(a), np.shape(b)))
        return host_affine(a, b)

    def f(v, w):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), v, w,
                                 vmap_method=method)

    out = jax.vmap(f, in_axes=(0, None))(jnp.asarray(xs), jnp.asarray(c))
    assert len(seen) == calls
    assert all(s == (x_shape, c_shape) for s in seen), seen
    np.testing.assert_allclose(np.asarray(out), host_affine(xs, c[None]), rtol=1e-6)


def test_pure_callback_vmap_sequential_order_and_default(rng):
    B, n = 5, 2
    xt = f32(rng, n, B)
    seen = []

    def host(a):
        seen.append(np.asarray(a).copy())
        return a

    spec = jax.ShapeDtypeStruct((n,), jnp.float32)
    out = jax.vmap(lambda v: jax.pure_callback(host, spec, v, vmap_method="sequential"),
                   in_axes=1)(jnp.asarray(xt))
    assert len(seen) == B
    for i in range(B):
        np.testing.assert_array_equal(seen[i], xt[:, i])
    np.testing.assert_array_equal(np.asarray(out), xt.T)
    # sequential is JAX's lax.map: a staged scan whose body calls back once per member.
    text = str(jax.make_jaxpr(jax.vmap(
        lambda v: jax.pure_callback(host, spec, v, vmap_method="sequential"), in_axes=1))(xt))
    assert "scan[" in text and "pure_callback[" in text
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(lambda v: jax.pure_callback(host, spec, v), in_axes=1)(jnp.asarray(xt))
    # The removed vectorized=True: a DeprecationWarning, then legacy_vectorized.
    seen.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        jax.vmap(lambda v: jax.pure_callback(host, spec, v, vectorized=True),
                 in_axes=1)(jnp.asarray(xt))
    assert any(issubclass(e.category, DeprecationWarning) for e in w)
    assert len(seen) == 1 and seen[0].shape == (B, n)


def test_pure_callback_no_jvp_but_custom_jvp_works(rng):
    x = f32(rng, 4)
    spec = jax.ShapeDtypeStruct((4,), jnp.float32)
    f = lambda v: jnp.sum(jax.pure_callback(lambda a: np.sin(a), spec, v,
                                            vmap_method="sequential"))
    msg = ("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
           "while taking gradients.")
    with pytest.raises(ValueError, match=msg.replace(".", r"\.")):
        jax.grad(f)(jnp.asarray(x))

    @jax.custom_jvp
    def host_sin(v):
        return jax.pure_callback(lambda a: np.sin(a), spec, v, vmap_method="sequential")

    @host_sin.defjvp
    def host_sin_jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        return host_sin(v), jax.pure_callback(lambda a: np.cos(a), spec, v,
                                              vmap_method="sequential") * t

    g = jax.grad(lambda v: jnp.sum(host_sin(v)))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), np.cos(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


# ---- io_callback ----

def test_io_callback_effects_vmap_jvp(rng):
    B, n = 3, 2
    x = f32(rng, n)
    log = []

    def host(a):
        log.append(np.asarray(a).copy())
        return np.asarray(a) + np.float32(1)

    spec = jax.ShapeDtypeStruct((n,), jnp.float32)
    ordered = lambda v: io_callback(host, spec, v, ordered=True)
    text = str(jax.make_jaxpr(ordered)(x))
    assert "io_callback[" in text and "ordered=True" in text
    assert log == []
    np.testing.assert_array_equal(np.asarray(ordered(jnp.asarray(x))), x + 1)
    assert len(log) == 1
    xs = f32(rng, B, n)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.vmap(ordered)(jnp.asarray(xs))
    log.clear()
    out = jax.vmap(lambda v: io_callback(host, spec, v))(jnp.asarray(xs))
    assert len(log) == B
    for i in range(B):
        np.testing.assert_array_equal(log[i], xs[i])
    np.testing.assert_array_equal(np.asarray(out), xs + 1)
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        jax.jvp(lambda v: io_callback(host, spec, v), (jnp.asarray(x),), (jnp.asarray(x),))


# ---- inside control flow ----

def test_ordered_print_in_scan_under_vmap(rng, capsys):
    B, T = 3, 4
    xs = f32(rng, B, T)

    def step(c, x):
        jax.debug.print("c={} x={}", c, x, ordered=True)
        return c + x, c * x

    def run(v):
        return lax.scan(step, jnp.float32(0), v)

    carry, ys = jax.vmap(run)(jnp.asarray(xs))
    # Reference: the same loop on the host (float32 steps, as the program computes).
    want, c_ref = [], np.zeros(B, np.float32)
    for t in range(T):
        for b in range(B):
            want.append(f"c={str(c_ref[b])} x={str(xs[b, t])}")
        c_ref = (c_ref + xs[:, t]).astype(np.float32)
    assert out_lines(capsys) == lines(*want)
    np.testing.assert_allclose(np.asarray(carry), c_ref, rtol=1e-6)
    text = str(jax.make_jaxpr(jax.vmap(run))(xs))
    assert "scan[" in text and "effect=OrderedDebug" in text
    assert capsys.readouterr().out == ""


def test_print_in_cond_branch(rng, capsys):
    x = f32(rng, 2)

    def f(p, v):
        return lax.cond(p, lambda u: (jax.debug.print("true {}", u), u * 2)[1],
                        lambda u: (jax.debug.print("false {}", u), u - 1)[1], v)

    f(True, jnp.asarray(x))
    f(False, jnp.asarray(x))
    assert out_lines(capsys) == lines(f"true {x}", f"false {x}")


def test_array_format_specs():
    import numpy as _np
    r = _np.random.default_rng(7)
    v = float(r.uniform(-10, 10))
    x = jnp.asarray(v, jnp.float32)
    assert f"{x:.3f}" == f"{_np.float32(v):.3f}"
    assert f"{jnp.asarray(42):>5d}" == "   42"
    y = jnp.asarray(r.uniform(size=3).astype(_np.float32))
    assert f"{y}" == str(y)
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{y:.2f}"
