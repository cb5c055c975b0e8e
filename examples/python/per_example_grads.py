"""Per-example gradients with vmap(grad).

A JAX program: with `import jax` / `import jax.numpy as jnp` in place of the two tessera imports
it runs unchanged. For a small logistic-regression model it computes the gradient of the loss of
every example in a batch at once with vmap(grad(loss), in_axes=(None, 0, 0)), checks them
against a Python loop of grad over the examples and their mean against the gradient of the mean
loss, and exits non-zero if a check fails.
"""
import os
import sys
import time

import numpy as np

import tessera as jax
import tessera.numpy as jnp


def log_sigmoid(z):
    # log(sigmoid(z)) = -log(1 + exp(-z)); inputs here are moderate, so the direct form is fine
    return -jnp.log(1.0 + jnp.exp(-z))


def example_loss(params, x, y):
    """Logistic loss of one example: x has shape (d,), y is 0. or 1."""
    z = jnp.dot(x, params["w"]) + params["b"]
    return -(y * log_sigmoid(z) + (1.0 - y) * log_sigmoid(-z))


def batch_loss(params, X, Y):
    return jnp.mean(jax.vmap(example_loss, in_axes=(None, 0, 0))(params, X, Y))


def main():
    seed = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))
    print(f"seed: {seed}")
    rng = np.random.default_rng(seed)
    n, d = 16, 5
    X = rng.standard_normal((n, d)).astype(np.float32)
    Y = (rng.random(n) < 0.5).astype(np.float32)
    params = {"w": jnp.asarray(rng.standard_normal(d).astype(np.float32) * 0.5),
              "b": jnp.asarray(np.float32(0.1))}

    per_example = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, X, Y)
    print("per-example grad shapes:", {k: v.shape for k, v in per_example.items()})

    ok = True
    if per_example["w"].shape != (n, d) or per_example["b"].shape != (n,):
        print("FAIL: unexpected shapes")
        ok = False
    pw, pb = np.asarray(per_example["w"]), np.asarray(per_example["b"])
    for i in range(n):
        g = jax.grad(example_loss)(params, X[i], Y[i])
        if not (np.allclose(pw[i], np.asarray(g["w"]), rtol=1e-5, atol=1e-6)
                and np.allclose(pb[i], float(g["b"]), rtol=1e-5, atol=1e-6)):
            print(f"FAIL: example {i}: vmap(grad) differs from grad")
            ok = False

    # the closed form: d loss / d z = sigmoid(z) - y
    z = X.astype(np.float64) @ np.asarray(params["w"], np.float64) + float(params["b"])
    dz = 1.0 / (1.0 + np.exp(-z)) - Y
    if not np.allclose(pw, dz[:, None] * X, rtol=1e-4, atol=1e-5):
        print("FAIL: per-example grads differ from the closed form (sigmoid(z) - y) x")
        ok = False

    full = jax.grad(batch_loss)(params, X, Y)
    if not np.allclose(pw.mean(axis=0), np.asarray(full["w"]), rtol=1e-4, atol=1e-6):
        print("FAIL: the mean of per-example grads differs from grad of the mean loss")
        ok = False
    norms = np.sqrt((pw ** 2).sum(axis=1) + pb ** 2)
    print("per-example gradient norms:", np.round(norms, 4))
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
