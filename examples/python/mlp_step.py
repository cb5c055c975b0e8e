"""An MLP trained with SGD steps from value_and_grad over a dict of parameters.

A JAX program: with `import jax` / `import jax.numpy as jnp` in place of the two tessera imports
it runs unchanged. A two-layer tanh network regresses a smooth function; each step takes
value_and_grad of the loss over a nested dict of parameters and updates it with tree_map. It
checks that the gradients keep the parameters' structure, that they agree with a finite-difference
directional derivative, and that the loss decreases; it exits non-zero if a check fails.
"""
import os
import sys
import time

import numpy as np

import tessera as jax
import tessera.numpy as jnp


def init_params(rng, sizes):
    params = {}
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        params[f"layer{i}"] = {
            "w": jnp.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
            "b": jnp.zeros(n),
        }
    return params


def forward(params, x):
    h = x
    n = len(params)
    for i in range(n):
        layer = params[f"layer{i}"]
        h = jnp.matmul(h, layer["w"]) + layer["b"]
        if i < n - 1:
            h = jnp.tanh(h)
    return h


def loss(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


def sgd_step(params, x, y, lr):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    new_params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return new_params, value, grads


def main():
    seed = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))
    print(f"seed: {seed}")
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(128, 2)).astype(np.float32)
    y = (np.sin(x[:, :1]) * np.cos(x[:, 1:]) + 0.5 * x[:, :1]).astype(np.float32)
    params = init_params(rng, [2, 32, 32, 1])

    ok = True
    _, first_loss, grads = sgd_step(params, x, y, 0.0)
    if jax.tree_util.tree_structure(grads) != jax.tree_util.tree_structure(params):
        print("FAIL: the gradients do not have the parameters' structure")
        ok = False
    # directional derivative along the gradient: (L(p + eps g) - L(p - eps g)) / 2 eps = |g|^2
    g2 = sum(float(jnp.sum(g * g)) for g in jax.tree_util.tree_leaves(grads))
    eps = 1e-2 / np.sqrt(g2)
    lp = float(loss(jax.tree_util.tree_map(lambda p, g: p + eps * g, params, grads), x, y))
    lm = float(loss(jax.tree_util.tree_map(lambda p, g: p - eps * g, params, grads), x, y))
    fd = (lp - lm) / (2 * eps)
    print(f"|grad|^2 = {g2:.6f}, finite difference = {fd:.6f}")
    if not abs(fd - g2) < 2e-2 * g2 + 1e-4:
        print("FAIL: the gradient disagrees with finite differences")
        ok = False

    losses = []
    for step in range(200):
        params, value, _ = sgd_step(params, x, y, 0.1)
        losses.append(float(value))
        if step % 40 == 0 or step == 199:
            print(f"step {step:3d}  loss {losses[-1]:.6f}")
    final = float(loss(params, x, y))
    print(f"initial loss {float(first_loss):.6f}  final loss {final:.6f}")
    if not final < 0.25 * float(first_loss):
        print("FAIL: the loss did not decrease enough")
        ok = False
    if not np.all(np.isfinite(losses)):
        print("FAIL: non-finite loss")
        ok = False
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
