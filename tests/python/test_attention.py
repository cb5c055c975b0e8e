"""jax.nn.dot_product_attention against a float64 torch reference written here (logits, masks,
softmax, weighted values; torch autograd for the gradients) on fresh random inputs (the `rng`
fixture prints its seed): grouped-query heads, bias, boolean masks, is_causal, local windows,
sequence lengths, unbatched inputs, 16-bit inputs, jit and vmap, and the errors."""
import numpy as np
import pytest
import torch

import tessera as jax
import tessera.numpy as jnp


def reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None,
              kv_len=None, window=None):
    """Float64 torch: q [B, T, N, H], k/v [B, S, K, H] -> [B, T, N, H]."""
    q, k, v = (torch.as_tensor(np.asarray(a, np.float64)) if not torch.is_tensor(a) else a
               for a in (q, k, v))
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    g = N // K
    kk = k.repeat_interleave(g, dim=2)
    vv = v.repeat_interleave(g, dim=2)
    scale = 1 / np.sqrt(H) if scale is None else scale
    logits = torch.einsum("btnh,bsnh->bnts", q, kk) * scale
    if bias is not None:
        logits = logits + (bias if torch.is_tensor(bias) else
                           torch.as_tensor(np.asarray(bias, np.float64)))
    keep = torch.ones(B, N, T, S, dtype=torch.bool)
    if mask is not None:
        keep = keep & torch.as_tensor(np.asarray(mask))
    t = torch.arange(T)[:, None]
    s = torch.arange(S)[None, :]
    if is_causal:
        keep = keep & (s <= t)
    if window is not None:
        keep = keep & (s >= t - window[0]) & (s <= t + window[1])
    if q_len is not None:
        keep = keep & (torch.arange(T)[None, None, :, None] <
                       torch.as_tensor(q_len)[:, None, None, None])
    if kv_len is not None:
        keep = keep & (torch.arange(S)[None, None, None, :] <
                       torch.as_tensor(kv_len)[:, None, None, None])
    logits = torch.where(keep, logits, torch.full_like(logits, -0.7 * np.finfo(np.float32).max))
    probs = torch.softmax(logits, dim=-1)
    out = torch.einsum("bnts,bsnh->btnh", probs, vv)
    if q_len is not None and kv_len is not None:
        out = out * (torch.arange(T)[None, :, None, None] <
                     torch.as_tensor(q_len)[:, None, None, None])
    return out


def _qkv(rng, B=2, T=5, S=7, N=4, K=2, H=8, dtype=np.float32):
    return (rng.standard_normal((B, T, N, H)).astype(dtype),
            rng.standard_normal((B, S, K, H)).astype(dtype),
            rng.standard_normal((B, S, K, H)).astype(dtype))


@pytest.mark.parametrize("heads", [(4, 4), (4, 2), (6, 1)])
def test_matches_reference_with_every_option(rng, heads):
    N, K = heads
    q, k, v = _qkv(rng, N=N, K=K)
    B, T, S = 2, 5, 7
    bias = rng.standard_normal((1, N, T, S)).astype(np.float32)
    mask = rng.random((B, 1, T, S)) < 0.8
    q_len = np.array([3, 5], np.int32)
    kv_len = np.array([7, 4], np.int32)
    cases = [
        {}, {"bias": bias}, {"mask": mask}, {"is_causal": True}, {"scale": 0.3},
        {"window": (1, 2)}, {"q_len": q_len}, {"kv_len": kv_len},
        {"q_len": q_len, "kv_len": kv_len, "bias": bias[0], "is_causal": True},
    ]
    for c in cases:
        got = jax.nn.dot_product_attention(
            q, k, v, bias=c.get("bias"), mask=c.get("mask"), scale=c.get("scale"),
            is_causal=c.get("is_causal", False), query_seq_lengths=c.get("q_len"),
            key_value_seq_lengths=c.get("kv_len"), local_window_size=c.get("window"))
        assert got.shape == q.shape and got.dtype == jnp.float32
        want = reference(q, k, v, c.get("bias"), c.get("mask"), c.get("scale"),
                         c.get("is_causal", False), c.get("q_len"), c.get("kv_len"),
                         c.get("window")).numpy()
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5, err_msg=str(c))


def test_unbatched_int_window_and_16_bit(rng):
    q, k, v = _qkv(rng, B=1)
    got = jax.nn.dot_product_attention(q[0], k[0], v[0], local_window_size=1)
    want = reference(q, k, v, window=(1, 1)).numpy()[0]
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5)
    qb, kb, vb = (jnp.asarray(a).astype(jnp.bfloat16) for a in (q, k, v))
    got = jax.nn.dot_product_attention(qb, kb, vb, is_causal=True)
    assert got.dtype == jnp.bfloat16
    want = reference(*(np.asarray(a.astype(jnp.float32)) for a in (qb, kb, vb)),
                     is_causal=True).numpy()
    np.testing.assert_allclose(np.asarray(got.astype(jnp.float32)), want, rtol=2e-2, atol=2e-2)


def test_gradients_match_torch_autograd(rng):
    q, k, v = _qkv(rng)
    bias = rng.standard_normal((2, 4, 5, 7)).astype(np.float32)

    def f(q, k, v, b):
        out = jax.nn.dot_product_attention(q, k, v, bias=b, is_causal=True)
        return jnp.sum(jnp.sin(out))

    grads = jax.grad(f, argnums=(0, 1, 2, 3))(q, k, v, bias)
    tq, tk, tv, tb = (torch.tensor(a, dtype=torch.float64, requires_grad=True)
                      for a in (q, k, v, bias))
    torch.sin(reference(tq, tk, tv, tb, is_causal=True)).sum().backward()
    for got, want in zip(grads, (tq.grad, tk.grad, tv.grad, tb.grad)):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-4, atol=1e-5)


def test_jit_and_vmap(rng):
    q, k, v = _qkv(rng)
    f = jax.jit(jax.nn.dot_product_attention, static_argnames=("is_causal",))
    np.testing.assert_allclose(np.asarray(f(q, k, v, is_causal=True)),
                               np.asarray(jax.nn.dot_product_attention(q, k, v, is_causal=True)),
                               rtol=1e-6, atol=1e-6)
    # vmap over the batch of unbatched calls equals the batched call.
    got = jax.vmap(lambda a, b, c: jax.nn.dot_product_attention(a, b, c, is_causal=True))(q, k, v)
    np.testing.assert_allclose(np.asarray(got), reference(q, k, v, is_causal=True).numpy(),
                               rtol=2e-5, atol=2e-5)


def test_errors(rng):
    q, k, v = _qkv(rng)
    with pytest.raises(ValueError, match="multiple of the number of key/value heads"):
        jax.nn.dot_product_attention(q[:, :, :3], k, v)
    with pytest.raises(TypeError, match="same floating dtype"):
        jax.nn.dot_product_attention(q, jnp.asarray(k).astype(jnp.bfloat16), v)
    with pytest.raises(ValueError, match="does not broadcast"):
        jax.nn.dot_product_attention(q, k, v, bias=np.zeros((3, 7)))
    with pytest.raises(TypeError, match="mask must be boolean"):
        jax.nn.dot_product_attention(q, k, v, mask=np.ones((5, 7)))
    with pytest.raises(ValueError, match="rank 4"):
        jax.nn.dot_product_attention(q[0, 0], k[0, 0], v[0, 0])
    with pytest.raises(ValueError, match="key and value must have the same shape"):
        jax.nn.dot_product_attention(q, k, v[:, :3])
    with pytest.raises(NotImplementedError, match="cudnn"):
        jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
