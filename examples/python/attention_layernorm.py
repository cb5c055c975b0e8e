"""A JAX-style program over issue 5's surface: multi-head attention written with einsum,
a numerically stable softmax (max with keepdims, exp, sum), a layer norm (mean/var), slicing
and padding, and its gradient. It checks the forward pass against a float64 NumPy reference
and the gradient against central finite differences along a random direction, and prints OK.

Written for JAX: only the two imports name tessera.
"""
import os

import numpy as np

import tessera as jax
import tessera.numpy as jnp

seed = int(os.environ.get("TESSERA_TEST_SEED", "0")) % (2**32)
print("seed", seed)
rng = np.random.default_rng(seed)

B, T, H, D = 2, 6, 3, 4
x_np = rng.standard_normal((B, T, H * D)).astype(np.float32)
wq_np, wk_np, wv_np = (rng.standard_normal((H * D, H * D)).astype(np.float32) * 0.3
                       for _ in range(3))


def layer_norm(x, eps=1e-5):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + eps)


def softmax(s, axis=-1):
    s = s - jax.lax.stop_gradient(jnp.max(s, axis=axis, keepdims=True))
    e = jnp.exp(s)
    return e / jnp.sum(e, axis=axis, keepdims=True)


def attention(params, x):
    wq, wk, wv = params
    h = layer_norm(x)
    q = jnp.reshape(h @ wq, (B, T, H, D))
    k = jnp.reshape(h @ wk, (B, T, H, D))
    v = jnp.reshape(h @ wv, (B, T, H, D))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(D)
    causal = jnp.tril(jnp.ones((T, T), dtype=bool))
    scores = jnp.where(causal, scores, -1e9)
    out = jnp.einsum("bhqk,bkhd->bqhd", softmax(scores), v)
    return jnp.reshape(out, (B, T, H * D))


def loss(params, x):
    y = attention(params, x)
    # Drop the first position, pad back with zeros, and compare with a shifted target.
    y = jnp.pad(y[:, 1:, :], ((0, 0), (0, 1), (0, 0)))
    return jnp.mean(jnp.square(y - x[:, ::-1, :]))


def reference_loss(params, x):
    wq, wk, wv = (np.asarray(p, np.float64) for p in params)
    x = np.asarray(x, np.float64)
    h = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    q, k, v = ((h @ w).reshape(B, T, H, D) for w in (wq, wk, wv))
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(D)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -1e9)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = np.einsum("bhqk,bkhd->bqhd", p, v).reshape(B, T, H * D)
    y = np.pad(y[:, 1:, :], ((0, 0), (0, 1), (0, 0)))
    return np.mean((y - x[:, ::-1, :]) ** 2)


params = tuple(jnp.asarray(w) for w in (wq_np, wk_np, wv_np))
x = jnp.asarray(x_np)
value, grads = jax.value_and_grad(loss)(params, x)
ref = reference_loss((wq_np, wk_np, wv_np), x_np)
assert abs(float(value) - ref) <= 1e-5 * max(1.0, abs(ref)), (float(value), ref)

# Directional derivative vs central differences in float64 (NumPy reference).
dirs = [rng.standard_normal(w.shape) for w in (wq_np, wk_np, wv_np)]
eps = 1e-5
plus = reference_loss([w + eps * d for w, d in zip((wq_np, wk_np, wv_np), dirs)], x_np)
minus = reference_loss([w - eps * d for w, d in zip((wq_np, wk_np, wv_np), dirs)], x_np)
fd = (plus - minus) / (2 * eps)
ad = sum(float(np.sum(np.asarray(g, np.float64) * d)) for g, d in zip(grads, dirs))
assert abs(ad - fd) <= 1e-3 * max(1.0, abs(fd)), (ad, fd)
print("loss", float(value), "directional derivative", ad, "finite differences", fd)
print("OK")
