#!/usr/bin/env python3
"""Suite `indexing`: Tessera's sorting, gathers and scatters (eager kernels) called from Python,
against NumPy timed in the same process and run. One JSON line per case, in the format of the
C++ suites (bench/harness.h; docs/performance.md).

  sort_16M_f32        jnp.sort of 16M standard-normal float32 values (the keys-only radix
                      path); peer np.sort (its default quicksort)
  sort_stable_16M_f32 the same; peer np.sort(kind='stable')
  argsort_1M_f32      jnp.argsort (stable) of 1M float32 values ((key, index) radix path); peer
                      np.argsort(kind='stable')
  argsort_16M_f32     the same on 16M values
  sort_rows_4096_f32  jnp.sort along the last axis of a 4096 x 4096 float32 matrix (rows in
                      parallel); peer np.sort(axis=-1)
  median_4M_f32       jnp.median of 4M float32 values (a sort and one masked reduction); peer
                      np.median (a partition)
  gather_rows_1M      table[ids]: 1M random rows of a 1M x 64 float32 table (one gather); peer
                      np.take(table, ids, axis=0). floor_ms: the rows read and written once at
                      the streaming bandwidth eager x + y reaches in the same run (16M float32;
                      TESSERA_BENCH_GBPS overrides it)
  scatter_add_1M      table.at[ids].add(updates): 1M random rows (duplicates included) into a
                      64K x 64 float32 table (one scatter-add); peer np.add.at on a copy
  top_k_1M_k16        lax.top_k(x, 16) of 1M float32 values (a partial sort); peer
                      np.argpartition for the 16 largest, then sorting those 16
  boolean_mask_16M    x[x > 0] of 16M float32 values (a concrete mask: nonzero, then a gather);
                      peer the same NumPy expression

    indexing_bench.py [--reps N] [--warmup N] [--list] [CASE...]

Each sample is one call (time.perf_counter; the result is brought to the host); the median over
the samples is reported. gbps counts the input read once and the outputs written once.
"""
import os
import statistics
import sys
import time

import numpy as np

import bench_emit  # noqa: E402 (bench/, the script's own directory)

try:
    import tessera as jax
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                    "python"))
    import tessera as jax
import tessera.numpy as jnp


def normal(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


median_ms = bench_emit.median_ms


def tessera_call(f):
    def run():
        r = f()
        if hasattr(r, "block_until_ready"):
            r.block_until_ready()
        np.asarray(r)
    return run


def pair(o, shape, t_fn, np_fn, out_bytes_per_elem, check):
    x = normal(0, shape)
    xt = jnp.asarray(x)
    got = t_fn(xt)
    if check is not None:
        assert check(np.asarray(got), np_fn(x)), "Tessera and NumPy disagree"
    t = median_ms(tessera_call(lambda: t_fn(xt)), o.warmup, o.reps)
    p = median_ms(lambda: np_fn(x), o.warmup, o.reps)
    n = x.size
    return {"tessera_ms": t, "peer": "numpy", "peer_ms": p,
            "gbps": n * (4 + out_bytes_per_elem) / (t * 1e-3) / 1e9, "n": n}


def equal(a, b):
    return np.array_equal(a, b, equal_nan=True)


_GBPS = []


def bandwidth_gbps():
    """The streaming bandwidth Tessera's eager z = x + y reaches on 16M float32 (3 x 64 MB), in
    this run (measured once; TESSERA_BENCH_GBPS overrides it)."""
    if os.environ.get("TESSERA_BENCH_GBPS"):
        return float(os.environ["TESSERA_BENCH_GBPS"])
    if not _GBPS:
        n = 16 * 1024 * 1024
        x = jnp.asarray(np.random.default_rng(0).random(n, dtype=np.float32))
        y = x * 0.5
        ts = []
        for _ in range(7):
            t0 = time.perf_counter()
            (x + y).block_until_ready()
            ts.append(time.perf_counter() - t0)
        _GBPS.append(3 * n * 4 / statistics.median(ts[1:]) / 1e9)
    return _GBPS[0]


def gather_rows(o):
    rng = np.random.default_rng(1)
    table = rng.standard_normal((1 << 20, 64), dtype=np.float32)
    ids = rng.integers(0, table.shape[0], 1 << 20).astype(np.int32)
    tt, ti = jnp.asarray(table), jnp.asarray(ids)
    assert np.array_equal(np.asarray(tt[ti]), np.take(table, ids, axis=0))
    t = median_ms(tessera_call(lambda: tt[ti]), o.warmup, o.reps)
    p = median_ms(lambda: np.take(table, ids, axis=0), o.warmup, o.reps)
    moved = 2 * ids.size * 64 * 4 + ids.size * 4
    return {"tessera_ms": t, "peer": "numpy", "peer_ms": p, "gbps": moved / (t * 1e-3) / 1e9,
            "floor_ms": moved / (bandwidth_gbps() * 1e9) * 1e3, "n": ids.size}


def scatter_add_rows(o):
    rng = np.random.default_rng(2)
    table = rng.standard_normal((1 << 16, 64), dtype=np.float32)
    ids = rng.integers(0, table.shape[0], 1 << 20).astype(np.int32)
    upd = rng.standard_normal((ids.size, 64), dtype=np.float32)
    tt, ti, tu = jnp.asarray(table), jnp.asarray(ids), jnp.asarray(upd)

    def peer():
        r = table.copy()
        np.add.at(r, ids, upd)
        return r
    want = peer()
    got = np.asarray(tt.at[ti].add(tu))
    assert np.allclose(got, want, rtol=1e-4, atol=1e-3), "Tessera and NumPy disagree"
    t = median_ms(tessera_call(lambda: tt.at[ti].add(tu)), o.warmup, o.reps)
    p = median_ms(peer, o.warmup, min(o.reps, 3))
    moved = upd.nbytes + ids.nbytes + 2 * table.nbytes
    return {"tessera_ms": t, "peer": "numpy", "peer_ms": p, "gbps": moved / (t * 1e-3) / 1e9,
            "floor_ms": moved / (bandwidth_gbps() * 1e9) * 1e3, "n": ids.size}


def top_k(o):
    x = normal(4, (1 << 20,))
    xt = jnp.asarray(x)

    def peer():
        part = np.argpartition(x, -16)[-16:]
        order = part[np.argsort(-x[part], kind="stable")]
        return x[order], order
    v, i = jax.lax.top_k(xt, 16)
    assert np.array_equal(np.asarray(v), peer()[0])
    t = median_ms(tessera_call(lambda: jax.lax.top_k(xt, 16)[0]), o.warmup, o.reps)
    p = median_ms(peer, o.warmup, o.reps)
    return {"tessera_ms": t, "peer": "numpy", "peer_ms": p, "n": x.size}


def boolean_mask(o):
    x = normal(3, (1 << 24,))
    xt = jnp.asarray(x)
    assert np.array_equal(np.asarray(xt[xt > 0]), x[x > 0])
    t = median_ms(tessera_call(lambda: xt[xt > 0]), o.warmup, o.reps)
    p = median_ms(lambda: x[x > 0], o.warmup, o.reps)
    return {"tessera_ms": t, "peer": "numpy", "peer_ms": p, "n": x.size}


CASES = {
    "sort_16M_f32": lambda o: pair(o, (1 << 24,), jnp.sort, np.sort, 4, equal),
    "sort_stable_16M_f32": lambda o: pair(o, (1 << 24,), jnp.sort,
                                          lambda x: np.sort(x, kind="stable"), 4, equal),
    "argsort_1M_f32": lambda o: pair(o, (1 << 20,), jnp.argsort,
                                     lambda x: np.argsort(x, kind="stable"), 4, equal),
    "argsort_16M_f32": lambda o: pair(o, (1 << 24,), jnp.argsort,
                                      lambda x: np.argsort(x, kind="stable"), 4, equal),
    "sort_rows_4096_f32": lambda o: pair(o, (4096, 4096), lambda x: jnp.sort(x, axis=-1),
                                         lambda x: np.sort(x, axis=-1), 4, equal),
    "median_4M_f32": lambda o: pair(o, (1 << 22,), jnp.median, np.median, 0,
                                    lambda a, b: np.allclose(a, b, rtol=1e-6)),
    "gather_rows_1M": gather_rows,
    "scatter_add_1M": scatter_add_rows,
    "top_k_1M_k16": top_k,
    "boolean_mask_16M": boolean_mask,
}


def main():
    return bench_emit.run_suite("indexing", __doc__, CASES, jax)

if __name__ == "__main__":
    sys.exit(main())
