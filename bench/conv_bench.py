#!/usr/bin/env python3
"""Suite `conv`: lax.conv_general_dilated called from Python (jit), against PyTorch's
torch.nn.functional.conv2d timed in the same process and run. One JSON line per case, in the
format of the C++ suites (bench/harness.h; docs/performance.md).

  conv2d_nhwc_3x3_b32_c64_56        forward: NHWC 32 x 56 x 56 x 64 input, HWIO 3 x 3 x 64 x 64
                                    kernel, stride 1, SAME padding (float32); peer F.conv2d on
                                    the same data in NCHW / OIHW with padding 1 (torch's native
                                    layout; the layout conversion is not timed)
  conv2d_nhwc_3x3_b32_c64_56_grad   forward + gradients of sum(conv(x, w) * g) in x and w
                                    (jax.value_and_grad under jit); peer torch autograd
                                    (forward, backward with g)

    conv_bench.py [--reps N] [--warmup N] [--list] [CASE...]

Threads: Tessera's pool uses every core (two here) with OpenBLAS single-threaded under it;
torch uses its default intra-op threads (every core). gflops counts 2·N·H·W·Cout·Cin·9 per
convolution (three convolutions for forward+grad). Results are checked against torch's before
timing.
"""
import os
import sys

import numpy as np

import bench_emit  # noqa: E402 (bench/, the script's own directory)

try:
    import tessera as jax
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                    "python"))
    import tessera as jax
import tessera.numpy as jnp
from tessera import lax

median_ms = bench_emit.median_ms

N, H, W, C, K = 32, 56, 56, 64, 3
FLOPS = 2.0 * N * H * W * C * C * K * K
DN = ("NHWC", "HWIO", "NHWC")


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, H, W, C)).astype(np.float32)
    w = (rng.standard_normal((K, K, C, C)) / np.sqrt(K * K * C)).astype(np.float32)
    g = rng.standard_normal((N, H, W, C)).astype(np.float32)
    return x, w, g


def close(a, b, tol):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    err = np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30)
    assert err < tol, f"relative error {err} above {tol}"


def forward(o):
    import torch
    import torch.nn.functional as F
    x, w, _ = data()
    f = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                      dimension_numbers=DN))
    tx, tw = jnp.asarray(x), jnp.asarray(w)
    px = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
    pw = torch.from_numpy(w).permute(3, 2, 0, 1).contiguous()
    with torch.no_grad():
        want = F.conv2d(px, pw, padding=1).permute(0, 2, 3, 1).numpy()
        close(f(tx, tw), want, 1e-4)
        t = median_ms(lambda: np.asarray(f(tx, tw)), o.warmup, o.reps)
        p = median_ms(lambda: F.conv2d(px, pw, padding=1), o.warmup, o.reps)
    return {"tessera_ms": t, "peer": "torch", "peer_ms": p, "gflops": FLOPS / (t * 1e6)}


def forward_grad(o):
    import torch
    import torch.nn.functional as F
    x, w, g = data()

    def loss(x, w, g):
        return jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN) * g)

    f = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    tx, tw, tg = jnp.asarray(x), jnp.asarray(w), jnp.asarray(g)
    px = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous().requires_grad_()
    pw = torch.from_numpy(w).permute(3, 2, 0, 1).contiguous().requires_grad_()
    pg = torch.from_numpy(g).permute(0, 3, 1, 2).contiguous()

    def peer():
        px.grad = pw.grad = None
        y = F.conv2d(px, pw, padding=1)
        y.backward(pg)
        return px.grad, pw.grad

    def run():
        v, (gx, gw) = f(tx, tw, tg)
        np.asarray(v), np.asarray(gx), np.asarray(gw)
        return gx, gw

    gx, gw = run()
    px_grad, pw_grad = peer()
    close(gx, px_grad.permute(0, 2, 3, 1).numpy(), 1e-4)
    close(gw, pw_grad.permute(2, 3, 1, 0).numpy(), 1e-4)
    t = median_ms(run, o.warmup, o.reps)
    p = median_ms(peer, o.warmup, o.reps)
    return {"tessera_ms": t, "peer": "torch", "peer_ms": p, "gflops": 3 * FLOPS / (t * 1e6)}


CASES = {
    "conv2d_nhwc_3x3_b32_c64_56": forward,
    "conv2d_nhwc_3x3_b32_c64_56_grad": forward_grad,
}


def main():
    return bench_emit.run_suite("conv", __doc__, CASES, jax)


if __name__ == "__main__":
    sys.exit(main())
