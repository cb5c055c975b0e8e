#!/usr/bin/env python3
"""functorch peer for the `transforms` suite (bench/transforms_bench.cpp).

per_example_grads: functorch.vmap(functorch.grad(loss), in_dims=(None, 0, 0)) of a 2-layer MLP
(relu, cross_entropy), as the functorch per-sample-gradients tutorial writes it. Reads the
parameters and the batch that the Tessera side wrote to DIR (w1.npy [in, hidden], b1.npy,
w2.npy [hidden, out], b2.npy, x.npy [n, in] float32, labels.npy [n] int), times the call (a
warm-up, then the median of N repetitions), writes the per-example gradients of the last call to
DIR/g_w1.npy, g_b1.npy, g_w2.npy, g_b2.npy and prints one JSON object:
{"peer": "functorch X (torch X, T intra-op threads)", "peer_ms": ..., "peer_peak_mb": ...,
"torch_by_hand_ms": ..., "torch_by_hand_max_rel_diff": ...}; torch_by_hand is the same
gradients written in closed form with plain torch ops (a reference for what torch can reach).

    functorch_peer.py per_example_grads DIR [--reps N] [--warmup N] [--threads T]
                      [--keep-freed-memory]

--keep-freed-memory tells glibc's malloc to keep freed memory in the heap (mallopt: no mmap
chunks, no trimming) and warms up until the heap holds the working set. torch's CPU allocator
returns each 205 MB gradient buffer to the kernel, and on the development VM touching fresh
pages costs about 28 us per 4 KiB page (1.4 s per call); the option measures functorch without
that cost, as a caching allocator (Tessera's, or PyTorch's on GPUs) would run it.

torch keeps its default intra-op threads unless --threads is given (on the 2-core development
machine its OpenMP pool beside OpenBLAS's threads is several times slower with 2 than with 1).
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import functorch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_peer import PeakRss  # noqa: E402  (same peak-memory method as the other peers)

NAMES = ("w1", "b1", "w2", "b2")


def loss_fn(params, x, label):
    w1, b1, w2, b2 = params
    h = F.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    return F.cross_entropy(logits.unsqueeze(0), label.unsqueeze(0))


def by_hand(params, x, label):
    """The same per-example gradients written out in torch without functorch (closed form)."""
    w1, b1, w2, b2 = params
    pre = x @ w1 + b1
    h = F.relu(pre)
    dz = torch.softmax(h @ w2 + b2, dim=-1) - F.one_hot(label, w2.shape[1]).to(x.dtype)
    dh = (dz @ w2.t()) * (pre > 0)
    return (x[:, :, None] * dh[:, None, :], dh, h[:, :, None] * dz[:, None, :], dz)


def median_ms(fn, warmup, reps, peak):
    out = None
    for _ in range(warmup):
        out = fn()
        peak.sample()
    samples = []
    for _ in range(reps):
        out = None  # as a training loop does: the previous step's gradients are gone
        t0 = time.perf_counter()
        out = fn()
        t1 = time.perf_counter()
        peak.sample()
        samples.append((t1 - t0) * 1e3)
    return statistics.median(samples), out


def max_rel_diff(a, b):
    return max(float((x - y).abs().max() / y.abs().max().clamp_min(1e-30)) for x, y in zip(a, b))


def keep_freed_memory():
    libc = ctypes.CDLL("libc.so.6")
    m_trim_threshold, m_mmap_max = -1, -4  # <malloc.h>
    ok = libc.mallopt(m_mmap_max, 0) == 1 and libc.mallopt(m_trim_threshold, 2**31 - 1) == 1
    if not ok:
        raise SystemExit("functorch_peer: mallopt failed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=["per_example_grads"])
    ap.add_argument("dir")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--keep-freed-memory", action="store_true",
                    help="keep freed memory in glibc's heap (see the module docstring)")
    ap.add_argument("--threads", type=int, default=0,
                    help="torch intra-op threads (default: torch's own default)")
    args = ap.parse_args()

    warmup = args.warmup
    if args.keep_freed_memory:
        keep_freed_memory()
        warmup = max(warmup, 8)  # the heap reaches its steady size after a few calls
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    load = lambda name: torch.from_numpy(np.load(os.path.join(args.dir, name + ".npy")))
    params = tuple(load(n) for n in NAMES)
    x = load("x")
    labels = load("labels").to(torch.int64)

    per_example = functorch.vmap(functorch.grad(loss_fn), in_dims=(None, 0, 0))
    peak = PeakRss()
    ms, grads = median_ms(lambda: per_example(params, x, labels), warmup, args.reps, peak)
    peak_mb = peak.extra_mb()
    hand_ms, hand = median_ms(lambda: by_hand(params, x, labels), warmup, args.reps, peak)
    for name, g in zip(NAMES, grads):
        np.save(os.path.join(args.dir, "g_" + name + ".npy"), g.numpy())
    print(json.dumps({"peer": f"functorch {functorch.__version__} (torch {torch.__version__}, "
                              f"{torch.get_num_threads()} intra-op threads"
                              + (", malloc keeps freed memory)" if args.keep_freed_memory
                                 else ")"),
                      "peer_ms": ms, "peer_peak_mb": peak_mb, "torch_by_hand_ms": hand_ms,
                      "torch_by_hand_max_rel_diff": max_rel_diff(hand, grads)}))


if __name__ == "__main__":
    main()
