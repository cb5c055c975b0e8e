#!/usr/bin/env python3
"""Suite `linalg`: Tessera's LAPACK-backed linear algebra called from Python, against NumPy 1.24
(and SciPy 1.10 for cholesky) timed in the same process and run. One JSON line per case, in the
format of the C++ suites (bench/harness.h; docs/performance.md).

  cholesky_1024               jnp.linalg.cholesky of an SPD 1024 x 1024 float32 matrix; peer
                              np.linalg.cholesky
  svd_512                     jnp.linalg.svd (U, S, Vh) of a 512 x 512 float32 matrix; peer
                              np.linalg.svd
  solve_1024                  jnp.linalg.solve of a 1024 x 1024 system with 1 right-hand side
                              (float32); peer np.linalg.solve
  eigh_512                    jnp.linalg.eigh of a symmetric 512 x 512 float32 matrix; peer
                              np.linalg.eigh
  qr_1024                     jnp.linalg.qr (reduced) of a 1024 x 1024 float32 matrix; peer
                              np.linalg.qr
  batched_solve_4096x8x8      4096 systems of 8 x 8 with one right-hand side each (a batch on
                              Tessera's thread pool); peer np.linalg.solve on the stacked batch
                              (NumPy loops over LAPACK calls in C)
  batched_cholesky_4096x16x16 4096 SPD 16 x 16 matrices; peer np.linalg.cholesky on the stack

    linalg_bench.py [--reps N] [--warmup N] [--list] [CASE...]

Threads: Tessera's pool uses every core (two here) with OpenBLAS single-threaded under it; NumPy's
OpenBLAS runs with its default threads (OPENBLAS_NUM_THREADS unset: every core). Both link
Debian's OpenBLAS, so single large factorizations compare the same LAPACK on the same cores.
Each sample is one call with its result brought to the host; the median is reported. Results
are checked against NumPy's (reconstruction or values) before timing.
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


median_ms = bench_emit.median_ms


def host(f):
    def run():
        r = f()
        for leaf in (r if isinstance(r, (tuple, list)) else (r,)):
            np.asarray(leaf)
    return run


def spd(rng, *shape):
    a = rng.standard_normal(shape).astype(np.float32)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) / n + np.eye(n, dtype=np.float32)).astype(np.float32)


def case(o, args, t_fn, np_fn, check):
    targs = [jnp.asarray(a) for a in args]
    got = t_fn(*targs)
    check(got, args)
    t = median_ms(host(lambda: t_fn(*targs)), o.warmup, o.reps)
    p = median_ms(lambda: np_fn(*args), o.warmup, o.reps)
    return {"tessera_ms": t, "peer": "numpy", "peer_ms": p}


def close(a, b, tol):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    err = np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30)
    assert err < tol, f"relative error {err} above {tol}"


def cholesky(o):
    a = spd(np.random.default_rng(0), 1024, 1024)
    return case(o, [a], jnp.linalg.cholesky, np.linalg.cholesky,
                lambda l, x: close(np.asarray(l) @ np.asarray(l).T, x[0], 1e-5))


def svd(o):
    a = np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32)

    def check(r, x):
        u, s, vh = (np.asarray(v) for v in r)
        close((u * s) @ vh, x[0], 1e-5)
    return case(o, [a], jnp.linalg.svd, np.linalg.svd, check)


def solve(o):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1024, 1024)).astype(np.float32) + 32 * np.eye(1024, dtype=np.float32)
    b = rng.standard_normal((1024,)).astype(np.float32)
    return case(o, [a, b], jnp.linalg.solve, np.linalg.solve,
                lambda r, x: close(x[0] @ np.asarray(r), x[1], 1e-4))


def eigh(o):
    a = spd(np.random.default_rng(3), 512, 512)

    def check(r, x):
        w, v = (np.asarray(t) for t in r)
        close((v * w) @ v.T, x[0], 1e-5)
    return case(o, [a], jnp.linalg.eigh, np.linalg.eigh, check)


def qr(o):
    a = np.random.default_rng(4).standard_normal((1024, 1024)).astype(np.float32)
    return case(o, [a], jnp.linalg.qr, np.linalg.qr,
                lambda r, x: close(np.asarray(r[0]) @ np.asarray(r[1]), x[0], 1e-5))


def batched_solve(o):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4096, 8, 8)).astype(np.float32) + 4 * np.eye(8, dtype=np.float32)
    b = rng.standard_normal((4096, 8, 1)).astype(np.float32)
    return case(o, [a, b], jnp.linalg.solve, np.linalg.solve,
                lambda r, x: close(x[0] @ np.asarray(r), x[1], 1e-4))


def batched_cholesky(o):
    a = spd(np.random.default_rng(6), 4096, 16, 16)
    return case(o, [a], jnp.linalg.cholesky, np.linalg.cholesky,
                lambda l, x: close(np.asarray(l) @ np.swapaxes(np.asarray(l), -1, -2), x[0],
                                   1e-5))


CASES = {
    "cholesky_1024": cholesky,
    "svd_512": svd,
    "solve_1024": solve,
    "eigh_512": eigh,
    "qr_1024": qr,
    "batched_solve_4096x8x8": batched_solve,
    "batched_cholesky_4096x16x16": batched_cholesky,
}


def main():
    return bench_emit.run_suite("linalg", __doc__, CASES, jax)

if __name__ == "__main__":
    sys.exit(main())
