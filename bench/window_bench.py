#!/usr/bin/env python3
"""Suite `window`: pooling layers as lax.reduce_window, called from Python, against libtorch's
max_pool2d / avg_pool2d on the same NHWC data (a channels_last tensor) timed in the same process
and run. One JSON line per case, in the format of the C++ suites (bench/harness.h;
docs/performance.md).

  max_pool_2x2            reduce_window_max, window (1, 2, 2, 1), stride 2, VALID, on
                          [32, 112, 112, 64] float32; peer torch max_pool2d(2, 2)
  max_pool_2x2_grad       value and gradient of sum(max_pool(x) * w): the forward and
                          select_and_scatter_add; peer torch forward + backward
  avg_pool_3x3_same       reduce_window_sum, window (1, 3, 3, 1), stride 1, SAME, divided by 9
                          (count_include_pad=True); peer torch avg_pool2d(3, 1, padding=1)
  avg_pool_3x3_same_grad  value and gradient of sum(avg_pool(x) * w) (the transposed
                          reduce_window_sum); peer torch forward + backward

    window_bench.py [--reps N] [--warmup N] [--list] [CASE...]

Each sample is one call with its result brought to the host (numpy.asarray); the median over the
samples is reported. gbps counts the input read and the output written once.
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

try:
    import torch
except ImportError:  # the suite still times Tessera
    torch = None

SHAPE = (32, 112, 112, 64)
median_ms = bench_emit.median_ms


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def avg_pool(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0


def torch_max_pool(t):
    return torch.nn.functional.max_pool2d(t, 2, 2)


def torch_avg_pool(t):
    return torch.nn.functional.avg_pool2d(t, 3, 1, 1, count_include_pad=True)


def case(o, pool, torch_pool, grad):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE, dtype=np.float32)
    xt = jnp.asarray(x)
    out_shape = tuple(np.asarray(pool(xt)).shape)
    w = jnp.asarray(rng.standard_normal(out_shape, dtype=np.float32))
    if grad:
        f = jax.value_and_grad(lambda a: jnp.sum(pool(a) * w))

        def run():
            v, g = f(xt)
            np.asarray(g)
            return v, g
    else:
        def run():
            return np.asarray(pool(xt))
    rec = {"tessera_ms": median_ms(run, o.warmup, o.reps)}
    out_bytes = 4 * int(np.prod(out_shape))
    rec["gbps"] = (x.nbytes * (2 if grad else 1) + out_bytes) / (rec["tessera_ms"] * 1e-3) / 1e9
    if torch is None:
        return rec
    tx = torch.from_numpy(x).permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
    tw = torch.from_numpy(np.array(w)).permute(0, 3, 1, 2)
    if grad:
        txg = tx.detach().requires_grad_(True)

        def trun():
            txg.grad = None
            (torch_pool(txg) * tw).sum().backward()
            return txg.grad
        got = np.asarray(f(xt)[1])
        want = trun().permute(0, 2, 3, 1).numpy()
    else:
        def trun():
            return torch_pool(tx)
        got = np.asarray(pool(xt))
        want = trun().permute(0, 2, 3, 1).numpy()
    rec["max_abs_diff"] = float(np.max(np.abs(got - want)))
    return {**rec, "peer": "libtorch", "peer_ms": median_ms(trun, o.warmup, o.reps)}


CASES = {
    "max_pool_2x2": lambda o: case(o, max_pool, torch_max_pool, False),
    "max_pool_2x2_grad": lambda o: case(o, max_pool, torch_max_pool, True),
    "avg_pool_3x3_same": lambda o: case(o, avg_pool, torch_avg_pool, False),
    "avg_pool_3x3_same_grad": lambda o: case(o, avg_pool, torch_avg_pool, True),
}


def main():
    if torch is not None:
        torch.set_num_threads(os.cpu_count() or 1)
    return bench_emit.run_suite("window", __doc__, CASES, jax)


if __name__ == "__main__":
    sys.exit(main())
