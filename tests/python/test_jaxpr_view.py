"""make_jaxpr's ClosedJaxpr read as JAX's objects: .jaxpr.eqns (primitive, params, invars,
outvars), Vars with avals and the printed names, Literals, constvars bound to .consts, sub-jaxprs
in params as ClosedJaxprs — and an interpreter written over them (JAX's "custom interpreter"
pattern) reproducing the traced function on fresh random inputs."""
import numpy as np
import pytest

import tessera as jax
import tessera.numpy as jnp
from tessera import core, lax


def A(x):
    return np.asarray(x)


def f(x, y):
    z = jnp.sin(x) * 2.0 + y
    return lax.cond(z.sum() > 0, lambda a: a + 1, lambda a: a - 1, z)


def test_structure_matches_the_printed_jaxpr(rng):
    x = rng.normal(size=3).astype(np.float32)
    closed = jax.make_jaxpr(f)(x, x)
    j = closed.jaxpr
    assert isinstance(j, core.Jaxpr) and isinstance(closed, core.ClosedJaxpr)
    assert str(j) == str(closed)
    text = str(closed)
    assert [repr(v) for v in j.invars] == ["a", "b"]
    assert [v.aval.shape for v in j.invars] == [(3,), (3,)]
    assert all(str(v.aval) == "f32[3]" and v.aval.dtype == np.float32 for v in j.invars)
    assert [e.primitive.name for e in j.eqns] == closed.eqn_primitives()
    assert len(closed.eqns) == closed.num_eqns == len(j.eqns)
    for e in j.eqns:
        assert isinstance(e, core.JaxprEqn)
        assert repr(e).split("\n")[0] in text
        for v in e.outvars:
            assert f"{v!r}:{v.aval}" in text
    mul = j.eqns[1]
    assert str(mul.primitive) == "mul"
    lit = mul.invars[1]
    assert isinstance(lit, core.Literal) and float(lit.val) == 2.0 and str(lit.aval) == "f32[]"
    assert mul.invars[0] is j.eqns[0].outvars[0]  # one Var object per variable
    assert closed.jaxpr is j  # built once
    red = j.eqns[3]
    assert red.primitive.name == "reduce_sum" and tuple(red.params["axes"]) == (0,)
    cond = j.eqns[-1]
    branches = cond.params["branches"]
    assert len(branches) == 2 and all(isinstance(b, core.ClosedJaxpr) for b in branches)
    assert [e.primitive.name for e in branches[0].jaxpr.eqns] == ["sub"]
    assert [e.primitive.name for e in branches[1].jaxpr.eqns] == ["add"]
    assert j.outvars == cond.outvars
    assert [a.shape for a in j.out_avals] == [(3,)]


def test_constvars_are_bound_to_the_consts(rng):
    c = jnp.asarray(rng.normal(size=(4,)).astype(np.float32))
    closed = jax.make_jaxpr(lambda x: x * c + 1.0)(jnp.ones(4))
    j = closed.jaxpr
    assert len(j.constvars) == len(closed.consts) == len(closed.literals) == 1
    assert j.constvars[0].aval.shape == (4,)
    np.testing.assert_array_equal(A(closed.consts[0]), A(c))


def test_typed_key_avals():
    j = jax.make_jaxpr(lambda k: jax.random.normal(k, (2,)))(jax.random.key(0)).jaxpr
    assert str(j.invars[0].aval) == "key<fry>[]"


# A jaxpr interpreter over the views: each primitive evaluated by the matching jnp/lax function.
RULES = {
    "sin": lambda x: jnp.sin(x),
    "cos": lambda x: jnp.cos(x),
    "exp": lambda x: jnp.exp(x),
    "tanh": lambda x: jnp.tanh(x),
    "log": lambda x: jnp.log(x),
    "neg": lambda x: -x,
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "max": lambda x, y: jnp.maximum(x, y),
    "integer_pow": lambda x, y: x ** y,
    "gt": lambda x, y: x > y,
    "dot_general": None,
    "reduce_sum": None,
}


def eval_jaxpr(closed, *args):
    j = closed.jaxpr
    env = {}

    def read(a):
        return a.val if isinstance(a, core.Literal) else env[a]

    for v, c in zip(j.constvars, closed.consts):
        env[v] = c
    for v, x in zip(j.invars, args):
        env[v] = x
    for e in j.eqns:
        ins = [read(a) for a in e.invars]
        name = e.primitive.name
        if name == "reduce_sum":
            out = jnp.sum(ins[0], axis=tuple(e.params["axes"]))
        elif name == "integer_pow":
            out = ins[0] ** e.params["y"]
        elif name == "dot_general":
            (lc, rc), (lb, rb) = e.params["dimension_numbers"]
            assert not lb and not rb
            out = jnp.tensordot(ins[0], ins[1], axes=(tuple(lc), tuple(rc)))
        elif name == "convert_element_type":
            out = lax.convert_element_type(ins[0], e.params["new_dtype"])
        elif name == "cond":
            index = int(ins[0])
            out = eval_jaxpr(e.params["branches"][index], *ins[1:])
        else:
            out = RULES[name](*ins)
        outs = out if isinstance(out, (list, tuple)) else [out]
        for v, o in zip(e.outvars, outs):
            env[v] = o
    return [read(a) for a in j.outvars]


@pytest.mark.parametrize("case", range(4))
def test_an_interpreter_over_the_eqns_reproduces_the_function(rng, case):
    w = jnp.asarray(rng.normal(size=(5, 3)).astype(np.float32))

    def g(x, y):
        h = jnp.tanh(x @ w) * 3.0 - jnp.exp(-y ** 2)
        return lax.cond(h.sum() > 0, lambda a: a * 2.0, lambda a: jnp.sin(a), h), h.sum()

    x = rng.normal(size=(2, 5)).astype(np.float32)
    y = rng.normal(size=(2, 3)).astype(np.float32)
    closed = jax.make_jaxpr(g)(x, y)
    got = eval_jaxpr(closed, jnp.asarray(x), jnp.asarray(y))
    want = g(jnp.asarray(x), jnp.asarray(y))
    for a, b in zip(got, want):
        np.testing.assert_allclose(A(a), A(b), rtol=1e-6, atol=1e-6)
