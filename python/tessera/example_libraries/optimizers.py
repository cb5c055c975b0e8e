"""tessera.example_libraries.optimizers: jax.example_libraries.optimizers.

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)

    @jax.jit
    def step(i, opt_state, batch):
        grads = jax.grad(loss)(get_params(opt_state), batch)
        return opt_update(i, grads, opt_state)

An optimizer is a triple ``(init_fun, update_fun, get_params)``. Each optimizer below is
written for one array (its per-leaf state is a small pytree: ``(x, m, v)`` for adam) and the
``optimizer`` decorator lifts it to pytrees of parameters. The lifted state is an
``OptimizerState(packed_state, tree_def, subtree_defs)``: ``packed_state[k]`` holds the flat
leaves of leaf k's per-leaf state, ``tree_def`` is the parameters' structure and
``subtree_defs[k]`` the structure of leaf k's state. It is a pytree whose only children are
``packed_state`` (the structures are aux data), so it passes through jit, grad and vmap.

The update rules, defaults and state layouts are JAX's, so a state saved with
``unpack_optimizer_state`` on one side can be restored with ``pack_optimizer_state`` on the
other.
"""
import collections as _collections
import functools as _functools
import typing as _typing

from tessera import numpy as jnp
from tessera import tree_util
from tessera.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam", "adamax", "clip_grads",
    "constant", "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule",
    "momentum", "nesterov", "optimizer", "pack_optimizer_state", "piecewise_constant",
    "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3", "unpack_optimizer_state",
]

OptimizerState = _collections.namedtuple("OptimizerState",
                                         ["packed_state", "tree_def", "subtree_defs"])
# JAX's registration: the packed leaves are the children, the two structures the aux data.
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Array = _typing.Any
Params = _typing.Any
State = _typing.Any
Updates = Params
Step = int
Schedule = _typing.Callable[[Step], float]
InitFn = _typing.Callable[[Params], OptimizerState]
UpdateFn = _typing.Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = _typing.Callable[[OptimizerState], Params]


class Optimizer(_typing.NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_each(trees):
    """[tree_flatten(t) for t in trees] as two tuples (leaf lists, treedefs)."""
    pairs = [tree_flatten(t) for t in trees]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def optimizer(opt_maker):
    """Decorator: an optimizer written for single arrays becomes one for pytrees of arrays.

    ``opt_maker(*args, **kwargs)`` returns ``(init, update, get_params)`` acting on one array
    and its per-leaf state; the decorated function returns an ``Optimizer`` whose functions
    act on a pytree of parameters and an ``OptimizerState``.
    """

    @_functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @_functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @_functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {tree2}.")
            if len(states_flat) != len(subtrees):
                raise TypeError(
                    f"optimizer update function was passed an OptimizerState with "
                    f"{len(states_flat)} packed states for {len(subtrees)} state structures; "
                    "pass the state returned by init_fun or update_fun unchanged.")
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, states_flat)]
            new_states = [update(i, g, st) for g, st in zip(grad_flat, states)]
            new_flat, subtrees2 = _flatten_each(new_states)
            for before, after in zip(subtrees, subtrees2):
                if after != before:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {before} and output {after}.")
            return OptimizerState(new_flat, tree, subtrees)

        @_functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            params = [get_params(tree_unflatten(s, leaves))
                      for s, leaves in zip(subtrees, states_flat)]
            return tree_unflatten(tree, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ---- optimizers (each written for one array; `optimizer` lifts it to pytrees) ----

@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g. State: x."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size, mass):
    """SGD with (heavy-ball) momentum: v <- mass*v + g; x <- x - step_size(i)*v. State: (x, v)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size, mass):
    """SGD with Nesterov momentum: v <- mass*v + g; x <- x - step_size(i)*(mass*v + g)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the normalized gradient.

    State (x, g_sq, m): g_sq accumulates g**2; m <- (1-momentum) * g/sqrt(g_sq) + momentum*m
    (0 where g_sq is 0); x <- x - step_size(i) * m.
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv_root = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        return x - step_size(i) * m, g_sq, m

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a <- gamma*a + (1-gamma)*g**2; x <- x - step_size(i)*g/sqrt(a + eps)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the step: mom <- momentum*mom + step_size(i)*g/sqrt(a + eps);
    x <- x - mom. State: (x, a, mom)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba): bias-corrected first and second moments; state (x, m, v).

    m <- (1-b1)*g + b1*m; v <- (1-b2)*g**2 + b2*v; with t = i + 1,
    x <- x - step_size(i) * (m / (1-b1**t)) / (sqrt(v / (1-b2**t)) + eps).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        # The powers in the parameters' dtype (JAX's), so a traced int step stays float32.
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Adam with the infinity norm): state (x, m, u).

    m <- (1-b1)*g + b1*m; u <- max(b2*u, |g|);
    x <- x - step_size(i) / (1 - b1**(i+1)) * m / (u + eps).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        lr = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - lr * m / (u + eps), m, u

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019, arXiv:1901.11150): one accumulator vector per axis.

    State (x, m, vs, x_shape), x at least 1-d: the accumulator is the elementwise minimum of
    the per-axis vectors (broadcast) plus g**2; m <- (1-momentum)*g/sqrt(acc) + momentum*m
    (0 where acc is 0); x <- x - step_size(i)*m; each vs[j] becomes the max of acc over every
    axis but j. ``x_shape`` is the parameter's original shape (leaves: the dimension sizes).
    """
    step_size = make_schedule(step_size)

    def along_axis(ndim, v, axis):
        # v (a vector) viewed as an ndim-d array that varies only along `axis`.
        shape = [1] * ndim
        shape[axis] = v.shape[0]
        return jnp.reshape(v, tuple(shape))

    def init(x0):
        x_shape = tuple(jnp.shape(x0))
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        g = jnp.reshape(g, x.shape)
        accum = along_axis(x.ndim, vs[0], 0)
        for axis in range(1, x.ndim):
            accum = jnp.minimum(accum, along_axis(x.ndim, vs[axis], axis))
        accum = accum + jnp.square(g)
        inv_root = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_root) + momentum * m
        x = x - step_size(i) * m
        vs = [jnp.max(accum, axis=tuple(a for a in range(x.ndim) if a != j))
              for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        # Only a 0-d parameter was reshaped by init (atleast_1d); its x_shape has no leaves,
        # so this works when the state passed through jit (x_shape's sizes are then arrays).
        return jnp.reshape(x, ()) if len(x_shape) == 0 else x

    return init, update, get_params


# ---- step-size schedules: step index -> step size ----

def constant(step_size):
    """The schedule i -> step_size."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """i -> step_size * decay_rate ** (i / decay_steps)."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """i -> step_size / (1 + decay_rate * i / decay_steps); with staircase, i / decay_steps
    is floored."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """i -> (step_size - final) * (1 - min(i, decay_steps)/decay_steps) ** power + final."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """i -> values[k], k the number of boundaries strictly below i (len(values) =
    len(boundaries) + 1)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule from a callable (returned as is) or a scalar (a constant schedule)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---- utilities ----

def l2_norm(tree):
    """The l2 norm of all the leaves of a pytree of arrays taken together."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scales a pytree of gradients so that its l2_norm is at most max_norm."""
    norm = l2_norm(grad_tree)

    def normalize(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_map(normalize, grad_tree)


# ---- serialization: OptimizerState <-> a pytree of JoinPoints ----

class JoinPoint:
    """Marks where an outer pytree (the parameters) holds an inner one (a leaf's state)."""

    def __init__(self, subtree):
        self.subtree = subtree

    # Iterable like a container, so serializers that walk containers reach the subtree.
    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as the parameters' pytree with a JoinPoint (holding that leaf's
    state pytree) in place of each leaf: plain containers, for serialization."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(s, leaves) for s, leaves in zip(subtree_defs, states_flat)]
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state: an OptimizerState from a JoinPoint-marked
    pytree."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    bad = [type(s).__name__ for s in sentinels if not isinstance(s, JoinPoint)]
    if bad:
        raise TypeError(
            f"pack_optimizer_state: every leaf of the marked pytree must be a JoinPoint (as "
            f"unpack_optimizer_state makes them); got leaves of type {sorted(set(bad))}.")
    states_flat, subtree_defs = _flatten_each([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
