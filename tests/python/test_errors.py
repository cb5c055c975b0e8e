"""Errors seen from Python: the C++ core's typed errors as TypeError/ValueError/IndexError with
their messages, JAX's ConcretizationTypeError (a TypeError) and UnexpectedTracerError, Python
exceptions propagating unchanged through every transformation (nested ones too), and a clean
trace context afterwards. The seed (TESSERA_TEST_SEED or the clock) is printed.
"""
import os
import time
import zlib

import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import errors

SEED = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))
print(f"test_errors: TESSERA_TEST_SEED={SEED}")


@pytest.fixture
def rng(request):
    print(f"seed: TESSERA_TEST_SEED={SEED} (test {request.node.nodeid})")
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


def _still_works(rng):
    """The transformations work after an error: the trace context was restored."""
    v = rng.standard_normal(3).astype(np.float32)
    x = jnp.asarray(v)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda a: jnp.sum(jnp.sin(a)))(x)), np.cos(v),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda a: a * 2.0)(x)), v * 2)
    assert str(jax.make_jaxpr(jnp.sin)(x)) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"
    y = x + 1.0  # eager: not a tracer
    assert not y._is_tracer


# ---------------------------------------------------------------------------------------------
# The C++ messages
def test_shape_and_dtype_errors_carry_the_cpp_messages(rng):
    a, b = int(rng.integers(2, 5)), int(rng.integers(5, 8))
    with pytest.raises(ValueError) as e:
        jnp.add(jnp.ones((a, 3)), jnp.ones((b,)))
    msg = str(e.value)
    assert msg.startswith("[add]") and f"({a}, 3)" in msg and f"({b},)" in msg
    with pytest.raises(ValueError, match=r"^\[multiply\].*\(2, 3\).*\(4,\)"):
        jnp.ones((2, 3)) * jnp.ones(4)  # the operator raises the same
    with pytest.raises(ValueError, match=r"^\[reshape\].*\(6,\).*\(4,\)"):
        jnp.reshape(jnp.ones(6), (4,))
    with pytest.raises(ValueError, match=r"^\[matmul\].*\(2, 3\).*\(2, 3\)"):
        jnp.ones((2, 3)) @ jnp.ones((2, 3))
    with pytest.raises(ValueError, match=r"^\[broadcast_to\].*\(2, 3\).*\(3,\)"):
        jnp.broadcast_to(jnp.ones((2, 3)), (3,))
    with pytest.raises(ValueError, match=r"^\[transpose\].*\(0, 0\)"):
        jnp.transpose(jnp.ones((2, 3)), (0, 0))
    with pytest.raises(IndexError, match=r"^\[sum\] axis 2 is out of bounds"):
        jnp.sum(jnp.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match=r"^\[sum\] duplicate"):
        jnp.sum(jnp.ones((2, 3)), axis=(0, 0))
    with pytest.raises(ValueError, match=r"^\[zeros\] negative dimensions"):
        jnp.zeros((-1,))
    with pytest.raises(ValueError, match=r"^\[arange\] step"):
        jnp.arange(0, 10, 0)
    with pytest.raises(TypeError, match=r"^\[subtract\].*boolean"):
        jnp.asarray([True]) - jnp.asarray([False])
    with pytest.raises(TypeError, match="complex64"):
        jnp.astype(jnp.ones(2), "complex64")
    with pytest.raises(TypeError, match=r"^\[asarray\]"):
        jnp.asarray(object())
    with pytest.raises(OverflowError, match=r"300.*uint8"):
        jnp.ones(2, jnp.uint8) + 300
    with pytest.raises(OverflowError, match=r"too large to convert to int32"):
        jnp.ones(2, jnp.int32) + 2**40  # as JAX
    _still_works(rng)


def test_python_int_overflow_is_overflow_error():
    with pytest.raises(OverflowError):
        jnp.ones(2, jnp.uint8) + 300
    with pytest.raises(OverflowError):
        jnp.ones(2, jnp.int8) + (-200)


def test_transformation_argument_errors():
    with pytest.raises(TypeError, match="scalar"):
        jax.grad(lambda x: x * 2.0)(jnp.ones(3))
    with pytest.raises(TypeError, match="allow_int"):
        jax.grad(lambda x: x * 2)(jnp.asarray(3))
    with pytest.raises(ValueError):
        jax.grad(lambda x: jnp.sum(x), argnums=(0, 2))(jnp.ones(3))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        jax.vmap(lambda a, b: a + b)(jnp.ones((2, 3)), jnp.ones((3, 3)))
    with pytest.raises(ValueError, match=r"out_axes"):
        jax.vmap(lambda x: x, out_axes=2)(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="has_aux"):
        jax.grad(lambda x: jnp.sum(x), has_aux=True)(jnp.ones(3))
    with pytest.raises((TypeError, ValueError)):
        jax.jvp(jnp.sin, (jnp.ones(2),), (jnp.ones(3),))


# ---------------------------------------------------------------------------------------------
# Tracer errors
def test_concretization_type_error_is_a_type_error(rng):
    assert issubclass(errors.ConcretizationTypeError, TypeError)
    assert errors.TracerBoolConversionError is errors.ConcretizationTypeError or \
        issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    with pytest.raises(errors.ConcretizationTypeError, match="traced"):
        jax.vmap(lambda v: v if jnp.sum(v) > 0 else -v)(jnp.ones((2, 3)))
    with pytest.raises(errors.ConcretizationTypeError):
        jax.make_jaxpr(lambda v: 1.0 if v > 0 else 2.0)(1.0)
    with pytest.raises(TypeError):
        jax.make_jaxpr(lambda v: jnp.ones(int(v)))(3)
    _still_works(rng)


@pytest.mark.parametrize("kind", ["grad", "vmap", "make_jaxpr", "jvp", "nested"])
def test_leaked_tracer_raises_unexpected_tracer_error(rng, kind):
    store = []

    def f(x):
        store.append(x)
        return jnp.sum(x * x)

    x = jnp.asarray(rng.standard_normal((2, 3)).astype(np.float32))
    if kind == "grad":
        jax.grad(f)(x)
    elif kind == "vmap":
        jax.vmap(f)(x)
    elif kind == "make_jaxpr":
        jax.make_jaxpr(f)(x)
    elif kind == "jvp":
        jax.jvp(f, (x,), (x,))
    else:
        jax.vmap(jax.grad(f))(x)
    leaked = store[0]
    assert leaked._is_tracer
    with pytest.raises(errors.UnexpectedTracerError, match="leaked"):
        leaked + 1.0
    with pytest.raises(errors.UnexpectedTracerError):
        jnp.sin(leaked)
    with pytest.raises(errors.UnexpectedTracerError):  # used inside a later transformation
        jax.grad(lambda y: jnp.sum(y * leaked))(jnp.ones(leaked.shape))
    _still_works(rng)


def test_np_asarray_of_a_tracer_raises(rng):
    """As JAX's TracerArrayConversionError (a TypeError): even a grad/jvp tracer, whose primal is
    known, refuses, since converting would silently drop the derivative."""
    def f(x):
        return jnp.sum(jnp.asarray(np.asarray(x)) * x)

    assert issubclass(errors.TracerArrayConversionError, TypeError)
    for transform in [jax.grad, jax.vmap, jax.make_jaxpr, lambda g: (lambda x: jax.jvp(g, (x,), (x,)))]:
        with pytest.raises(TypeError):
            transform(f)(jnp.ones((2, 3)) if transform is jax.vmap else jnp.ones(3))
    _still_works(rng)


# ---------------------------------------------------------------------------------------------
# Python exceptions raised by the user's function
class MyError(Exception):
    pass


class MyBaseError(BaseException):
    """Not an Exception (like KeyboardInterrupt): must propagate too."""


def _apply(kind, f, x):
    if kind == "grad":
        return jax.grad(lambda a: jnp.sum(f(a)))(x)
    if kind == "value_and_grad":
        return jax.value_and_grad(lambda a: jnp.sum(f(a)))(x)
    if kind == "vmap":
        return jax.vmap(f)(x)
    if kind == "jvp":
        return jax.jvp(f, (x,), (x,))
    if kind == "vjp":
        return jax.vjp(f, x)
    if kind == "linearize":
        return jax.linearize(f, x)
    if kind == "jacfwd":
        return jax.jacfwd(f)(x)
    if kind == "jacrev":
        return jax.jacrev(f)(x)
    if kind == "hessian":
        return jax.hessian(lambda a: jnp.sum(f(a)))(x)
    if kind == "make_jaxpr":
        return jax.make_jaxpr(f)(x)
    if kind == "eval_shape":
        return jax.eval_shape(f, x)
    if kind == "vmap_grad":
        return jax.vmap(jax.grad(lambda a: jnp.sum(f(a))))(x)
    if kind == "grad_vmap":
        return jax.grad(lambda a: jnp.sum(jax.vmap(f)(a)))(x)
    if kind == "jaxpr_of_vmap_grad":
        return jax.make_jaxpr(jax.vmap(jax.grad(lambda a: jnp.sum(f(a)))))(x)
    if kind == "grad_grad":
        return jax.grad(lambda a: jnp.sum(jax.grad(lambda b: jnp.sum(f(b)))(a)))(x)
    raise AssertionError(kind)


KINDS = ["grad", "value_and_grad", "vmap", "jvp", "vjp", "linearize", "jacfwd", "jacrev",
         "hessian", "make_jaxpr", "eval_shape", "vmap_grad", "grad_vmap", "jaxpr_of_vmap_grad",
         "grad_grad"]


@pytest.mark.parametrize("kind", KINDS)
def test_python_exception_propagates_unchanged(rng, kind):
    x = jnp.asarray(rng.standard_normal((2, 3)).astype(np.float32))
    for exc in [MyError("boom", 42), KeyError("k"), MyBaseError("base"), ZeroDivisionError()]:
        calls = []

        def f(a):
            calls.append(a)
            b = jnp.sin(a) * 2.0  # some traced work before the raise
            if b.shape:
                raise exc
            return b

        with pytest.raises(type(exc)) as info:
            _apply(kind, f, x)
        assert info.value is exc  # the same object, not a copy or a wrapper
        assert calls, "the function was called"
        assert any(fr.name == "f" for fr in info.traceback), "the user's frame is in the traceback"
        _still_works(rng)


@pytest.mark.parametrize("kind", KINDS)
def test_cpp_error_inside_nested_transformations(rng, kind):
    """A C++ error (shape mismatch) raised inside the transformed function surfaces with its
    message and type, and leaves the trace context clean."""
    x = jnp.asarray(rng.standard_normal((2, 3)).astype(np.float32))

    def f(a):
        return a + jnp.ones((a.shape[-1] + 1,))

    with pytest.raises(ValueError, match=r"^\[add\] operands could not be broadcast"):
        _apply(kind, f, x)
    _still_works(rng)


def test_error_after_partial_results_then_success(rng):
    """An error on the second call of a vjp/linearize closure leaves the closure usable."""
    v = rng.standard_normal(4).astype(np.float32)
    out, f_vjp = jax.vjp(lambda a: jnp.sin(a) * a, jnp.asarray(v))
    with pytest.raises((TypeError, ValueError)):
        f_vjp(jnp.ones(5))
    (g,) = f_vjp(jnp.ones(4))
    np.testing.assert_allclose(np.asarray(g), np.cos(v) * v + np.sin(v), rtol=1e-5, atol=1e-6)
    out, f_jvp = jax.linearize(lambda a: a * a, jnp.asarray(v))
    with pytest.raises((TypeError, ValueError)):
        f_jvp(jnp.ones(5))
    np.testing.assert_allclose(np.asarray(f_jvp(jnp.ones(4))), 2 * v, rtol=1e-6)
    _still_works(rng)


def test_errors_in_pytree_callbacks_propagate(rng):
    from tessera import tree_util

    boom = MyError("unflatten")

    class Box:
        def __init__(self, v, fail):
            self.v, self.fail = v, fail

    tree_util.register_pytree_node(
        Box, lambda b: ((b.v,), b.fail),
        lambda fail, ch: (_ for _ in ()).throw(boom) if fail else Box(ch[0], fail))
    x = jnp.asarray(rng.standard_normal(3).astype(np.float32))
    with pytest.raises(MyError) as info:
        jax.grad(lambda b: jnp.sum(b.v))(Box(x, True))
    assert info.value is boom
    g = jax.grad(lambda b: jnp.sum(b.v * b.v))(Box(x, False))
    np.testing.assert_allclose(np.asarray(g.v), 2 * np.asarray(x), rtol=1e-6)
    _still_works(rng)


def test_operators_with_unsupported_operands_raise_type_error():
    # Operands that are not array-like are declined by both sides (Python's binary-operator
    # protocol), so Python raises its TypeError naming both types; other classes' reflected
    # operators still get their turn.
    x = jnp.ones(3)
    for op in (lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
               lambda a, b: a ** b, lambda a, b: a < b):
        with pytest.raises(TypeError, match="Array"):
            op(x, object())
        with pytest.raises(TypeError, match="Array"):
            op(object(), x)
    with pytest.raises(TypeError, match="'str'"):
        x + "a"

    class Other:
        def __radd__(self, other):
            return "Other.__radd__"

    assert x + Other() == "Other.__radd__"
    assert (x == "a") is False  # equality falls back to identity, as for any Python object
