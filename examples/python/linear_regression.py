"""Linear regression trained by gradient descent with grad.

A JAX program: with `import jax` / `import jax.numpy as jnp` in place of the two tessera imports
it runs unchanged. It fits y = X w + b by full-batch gradient descent on the mean squared error,
checks that the loss decreases and that the fit matches NumPy's least-squares solution, and exits
non-zero if a check fails.
"""
import os
import sys
import time

import numpy as np

import tessera as jax
import tessera.numpy as jnp


def predict(params, X):
    return jnp.dot(X, params["w"]) + params["b"]


def loss(params, X, y):
    return jnp.mean((predict(params, X) - y) ** 2)


def main():
    seed = int(os.environ.get("TESSERA_TEST_SEED", time.time_ns() % (2**31)))
    print(f"seed: {seed}")
    rng = np.random.default_rng(seed)
    n, d = 256, 4
    X = rng.standard_normal((n, d)).astype(np.float32)
    w_true = rng.standard_normal(d).astype(np.float32)
    b_true = np.float32(rng.uniform(-1, 1))
    y = (X @ w_true + b_true + 0.1 * rng.standard_normal(n)).astype(np.float32)

    params = {"w": jnp.zeros(d), "b": jnp.zeros(())}
    grad_loss = jax.grad(loss)
    lr = 0.1
    losses = [float(loss(params, X, y))]
    for step in range(1, 301):
        grads = grad_loss(params, X, y)
        params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        if step % 50 == 0:
            losses.append(float(loss(params, X, y)))
            print(f"step {step:3d}  loss {losses[-1]:.6f}")

    A = np.concatenate([X, np.ones((n, 1), np.float32)], axis=1).astype(np.float64)
    coef = np.linalg.lstsq(A, y.astype(np.float64), rcond=None)[0]
    w, b = np.asarray(params["w"]), float(params["b"])
    print("fitted w:", w, " b:", b)
    print("lstsq  w:", coef[:d], " b:", coef[d])

    ok = True
    # gradient descent with a small step never increases the loss (up to float32 rounding once
    # it has converged), and it must have dropped well below the starting loss
    if not all(b2 <= b1 * (1 + 1e-5) for b1, b2 in zip(losses, losses[1:])):
        print("FAIL: the loss increased:", losses)
        ok = False
    if not losses[-1] < 0.1 * losses[0]:
        print("FAIL: the loss did not decrease:", losses)
        ok = False
    lstsq_loss = float(np.mean((A @ coef - y) ** 2))
    if not abs(losses[-1] - lstsq_loss) < 1e-4 * max(1.0, lstsq_loss):
        print(f"FAIL: final loss {losses[-1]} vs least squares {lstsq_loss}")
        ok = False
    if not np.allclose(np.append(w, b), coef, atol=2e-3):
        print("FAIL: the parameters differ from np.linalg.lstsq")
        ok = False
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
