#!/usr/bin/env python3
"""NumPy peer for the `eager`, `numpy_ops` and `jit` suites (bench/*_bench.cpp).

Times one case written as a NumPy user writes it (allocating results, Python scalars), with
the same sizes, dtype and value range as the Tessera side, a warm-up, then the median of N
repetitions. Prints one JSON object: {"peer": "numpy X.Y", "peer_ms": ..., "peer_peak_mb": ...}.

    numpy_peer.py CASE [--reps N] [--warmup N] [--show-config]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

N16M = 16 * 1024 * 1024


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE")


def hwm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


class PeakRss:
    """Peak extra resident memory from construction on (same method as bench/harness.cpp)."""

    def __init__(self):
        self.baseline = rss_bytes()
        self.sampled = self.baseline
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.hwm_reset = True
        except OSError:
            self.hwm_reset = False

    def sample(self):
        self.sampled = max(self.sampled, rss_bytes())

    def extra_mb(self):
        self.sample()
        peak = max(self.sampled, hwm_bytes()) if self.hwm_reset else self.sampled
        return max(0, peak - self.baseline) / 2**20


def uniform(rng, n):
    # The Tessera side draws uniform [-2, 2) float32 values as well.
    return rng.uniform(-2.0, 2.0, n).astype(np.float32)


def case_add_16M(rng):
    x, y = uniform(rng, N16M), uniform(rng, N16M)
    return lambda: x + y


def case_tanh_chain_16M(rng):
    x = uniform(rng, N16M)
    return lambda: np.tanh(x * 1.5 + 0.3) * x  # float32 throughout (value-based casting)


# ---- the numpy_ops suite (bench/numpy_ops_bench.cpp) ----
N4K = 4096


def case_sum_rows_4096x4096(rng):
    x = uniform(rng, N4K * N4K).reshape(N4K, N4K)
    return lambda: np.sum(x, axis=1)


def case_transpose_4096x4096(rng):
    x = uniform(rng, N4K * N4K).reshape(N4K, N4K)
    return lambda: np.ascontiguousarray(x.T)  # .T alone is a view


def case_einsum_bhqd_bhkd(rng):
    q = uniform(rng, 8 * 512 * 64).reshape(1, 8, 512, 64)
    k = uniform(rng, 8 * 512 * 64).reshape(1, 8, 512, 64)
    # optimize=True lets NumPy hand the contraction to BLAS (its default loops are ~50x slower).
    return lambda: np.einsum("bhqd,bhkd->bhqk", q, k, optimize=True)


def case_logaddexp_16M(rng):
    x, y = uniform(rng, N16M), uniform(rng, N16M)
    return lambda: np.logaddexp(x, y)


def case_concatenate_8x2M(rng):
    xs = [uniform(rng, 2 * 1024 * 1024) for _ in range(8)]
    return lambda: np.concatenate(xs)


# ---- the jit suite's fusion cases (bench/jit_bench.cpp) ----
def case_gelu_tanh_16M(rng):
    x = uniform(rng, N16M)
    c = np.float32(0.7978845608)
    k = np.float32(0.044715)
    return lambda: np.float32(0.5) * x * (np.float32(1) + np.tanh(c * (x + k * x * x * x)))


def case_bias_relu_4096x4096(rng):
    x = uniform(rng, N4K * N4K).reshape(N4K, N4K)
    s, b = uniform(rng, N4K), uniform(rng, N4K)
    return lambda: np.maximum(x * s + b, np.float32(0))


def case_softmax_rows_4096x4096(rng):
    x = uniform(rng, N4K * N4K).reshape(N4K, N4K)

    def softmax():  # jax.nn.softmax's formula over the last axis
        e = np.exp(x - np.max(x, axis=1, keepdims=True))
        return e / np.sum(e, axis=1, keepdims=True)
    return softmax


def case_layernorm_8192x1024(rng):
    rows, cols = 8192, 1024
    x = uniform(rng, rows * cols).reshape(rows, cols)
    gamma, beta = uniform(rng, cols), uniform(rng, cols)
    eps = np.float32(1e-5)

    def layernorm():  # NumPy has no rsqrt: 1 / sqrt
        d = x - np.mean(x, axis=1, keepdims=True)
        var = np.mean(np.square(d), axis=1, keepdims=True)
        return d * (np.float32(1) / np.sqrt(var + eps)) * gamma + beta
    return layernorm


def case_stencil_4096x4096(rng):
    x = uniform(rng, N4K * N4K).reshape(N4K, N4K)

    def stencil():
        p = np.pad(x, ((0, 0), (1, 1)))
        return p[:, :-2] + p[:, 2:] - np.float32(2) * x
    return stencil


def case_argmax_rows_4096x4096(rng):
    x = uniform(rng, N4K * N4K).reshape(N4K, N4K)
    return lambda: np.argmax(x, axis=1).astype(np.float32)


def case_col_sum_4096x4096(rng):
    x = np.abs(uniform(rng, N4K * N4K)).reshape(N4K, N4K)
    y = np.abs(uniform(rng, N4K * N4K)).reshape(N4K, N4K)
    return lambda: np.sum(x * y, axis=0)


def case_embedding_65536x256(rng):
    table = uniform(rng, 50000 * 256).reshape(50000, 256)
    ids = rng.integers(0, 50000, 65536).astype(np.int32)
    return lambda: table[ids] * np.float32(16) + np.float32(1)


def case_concat_4096x2x2048(rng):
    x = uniform(rng, N4K * 2048).reshape(N4K, 2048)
    y = uniform(rng, N4K * 2048).reshape(N4K, 2048)
    return lambda: np.concatenate([x * np.float32(2), y + np.float32(1)], axis=1)


CASES = {"add_16M": case_add_16M, "tanh_chain_16M": case_tanh_chain_16M,
         "gelu_tanh_16M": case_gelu_tanh_16M, "bias_relu_4096x4096": case_bias_relu_4096x4096,
         "sum_rows_4096x4096": case_sum_rows_4096x4096,
         "transpose_4096x4096": case_transpose_4096x4096,
         "einsum_bhqd_bhkd": case_einsum_bhqd_bhkd, "logaddexp_16M": case_logaddexp_16M,
         "concatenate_8x2M": case_concatenate_8x2M, "embedding_65536x256": case_embedding_65536x256,
         "argmax_rows_4096x4096": case_argmax_rows_4096x4096,
         "col_sum_4096x4096": case_col_sum_4096x4096,
         "softmax_rows_4096x4096": case_softmax_rows_4096x4096,
         "layernorm_8192x1024": case_layernorm_8192x1024,
         "stencil_4096x4096": case_stencil_4096x4096,
         "concat_4096x2x2048": case_concat_4096x2x2048}


def blas_library():
    """The BLAS shared object NumPy loaded (what actually runs, not what it was built with)."""
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(libs)) or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--show-config", action="store_true", help="print the BLAS in use to stderr")
    args = ap.parse_args()

    if args.show_config:
        env = {k: os.environ.get(k, "unset") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                                      "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        print(f"numpy peer: numpy {np.__version__}, BLAS loaded: {blas_library()}, env: {env}",
              file=sys.stderr)

    rng = np.random.default_rng(0)
    fn = CASES[args.case](rng)
    peak = PeakRss()
    for _ in range(args.warmup):
        fn()
        peak.sample()
    samples = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        r = fn()
        t1 = time.perf_counter()
        peak.sample()
        del r
        samples.append((t1 - t0) * 1e3)
    print(json.dumps({"peer": f"numpy {np.__version__}", "peer_ms": statistics.median(samples),
                      "peer_peak_mb": peak.extra_mb()}))


if __name__ == "__main__":
    main()
