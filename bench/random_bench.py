#!/usr/bin/env python3
"""Suite `random`: jax.random's samplers and the special functions they run on, called from
Python, against NumPy (and libtorch where it has the operation) timed in the same process and
run. One JSON line per case and peer, in the format of the C++ suites (bench/harness.h;
docs/performance.md).

  normal_16M        jax.random.normal(key, (2^24,)) eager (threefry2x32 bits, the bits-to-float
                    steps, erf_inv: one kernel each); peers np.random.default_rng().
                    standard_normal(dtype=float32) (Ziggurat) and torch.randn
  normal_16M_jit    the same under jit (one fused kernel: the counter iota, threefry's 20 rounds,
                    the float steps and erf_inv's expansion); floor_ms: the 64 MB output written
                    once at the streaming bandwidth eager x + y reaches in the same run
  uniform_16M       jax.random.uniform eager; peers default_rng().random(dtype=float32),
                    torch.rand
  uniform_16M_jit   the same under jit
  bernoulli_16M     jax.random.bernoulli(key, 0.3, (2^24,)) (bool); peers default_rng().random(
                    dtype=float32) < 0.3, torch.bernoulli; _jit: under jit, floor_ms for 16 MB
  permutation_1M    jax.random.permutation(key, 2^20) (int32: JAX's sort-based shuffle, rounds of
                    sort_key_val on random keys); peers default_rng().permutation,
                    torch.randperm; _jit: under jit
  exponential_16M   jax.random.exponential eager (one jitted program, as JAX's); peers
                    default_rng().standard_exponential(dtype=float32), torch's exponential_,
                    and JAX's definition run as separate eager ops (-log1p(-uniform))
  gumbel_16M        jax.random.gumbel eager; peers default_rng().gumbel (float64, cast) and
                    the separate eager ops (-log(-log(uniform(minval=tiny))))
  erf_inv_16M       lax.erf_inv of 16M float32 values in (-1, 1); peer torch.erfinv
  erf_16M           lax.erf of 16M float32 values in (-4, 4); peer torch.erf

    random_bench.py [--reps N] [--warmup N] [--list] [CASE...]

Each sample is one call with its result brought to the host (numpy.asarray); the median over the
samples is reported. Tessera's bits are JAX's; the peers' generators are different ones, so the
values are not compared — the cases compare throughput at equal output size and dtype.
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

try:
    import torch
except ImportError:  # the suite still runs against NumPy
    torch = None

N = 1 << 24


median_ms = bench_emit.median_ms


def host(f):
    def run():
        np.asarray(f())
    return run


_GBPS = []


def bandwidth_gbps():
    """The streaming bandwidth Tessera's eager z = x + y reaches on 16M float32 (3 x 64 MB), in
    this run (measured once; TESSERA_BENCH_GBPS overrides it)."""
    if os.environ.get("TESSERA_BENCH_GBPS"):
        return float(os.environ["TESSERA_BENCH_GBPS"])
    if not _GBPS:
        x = jnp.ones((N,), jnp.float32)
        y = jnp.ones((N,), jnp.float32)
        ms = median_ms(lambda: (x + y).block_until_ready(), 2, 7)
        _GBPS.append(3 * 4 * N / (ms * 1e-3) / 1e9)
    return _GBPS[0]


def sampler(o, name, t_fn, np_fn, torch_fn, jit, n=N, dtype=np.float32, op_by_op=None):
    key = jax.random.key(0)
    f = jax.jit(t_fn) if jit else t_fn
    x = np.asarray(f(key))
    assert x.shape == (n,) and x.dtype == dtype
    if dtype == np.float32:
        assert np.isfinite(x).all()
    if jit:  # the fused kernel computes the eager bits
        assert np.array_equal(x, np.asarray(t_fn(key)))
    t = median_ms(host(lambda: f(key)), o.warmup, o.reps)
    rec = {"tessera_ms": t, "n": n}
    if jit:
        rec["floor_ms"] = np.dtype(dtype).itemsize * n / (bandwidth_gbps() * 1e9) * 1e3
    rng = np.random.default_rng(0)
    yield {**rec, "peer": "numpy", "peer_ms": median_ms(lambda: np_fn(rng), o.warmup, o.reps)}
    if op_by_op is not None:  # JAX's definition as separate eager ops (the same bits)
        assert np.array_equal(x, np.asarray(op_by_op(key)))
        yield {**rec, "peer": "Tessera op by op",
               "peer_ms": median_ms(host(lambda: op_by_op(key)), o.warmup, o.reps)}
    if torch is not None and torch_fn is not None:
        torch.manual_seed(0)
        yield {**rec, "peer": "libtorch", "peer_ms": median_ms(torch_fn, o.warmup, o.reps)}


def special(o, t_fn, torch_fn, lo, hi):
    x = np.random.default_rng(1).uniform(lo, hi, N).astype(np.float32)
    xt = jnp.asarray(x)
    got = np.asarray(t_fn(xt))
    rec = {"tessera_ms": median_ms(host(lambda: t_fn(xt)), o.warmup, o.reps), "n": N}
    if torch is None:
        yield rec
        return
    tx = torch.from_numpy(x)
    want = torch_fn(tx).numpy()
    rec["max_rel_diff"] = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
    yield {**rec, "peer": "libtorch", "peer_ms": median_ms(lambda: torch_fn(tx), o.warmup, o.reps)}


def normal(k):
    return jax.random.normal(k, (N,))


def uniform(k):
    return jax.random.uniform(k, (N,))


def bernoulli(k):
    return jax.random.bernoulli(k, 0.3, (N,))


M = 1 << 20


def permutation(k):
    return jax.random.permutation(k, M)


def exponential(k):
    return jax.random.exponential(k, (N,))


def gumbel(k):
    return jax.random.gumbel(k, (N,))


def exponential_ops(k):
    return -jnp.log1p(-jax.random.uniform(k, (N,)))


def gumbel_ops(k):
    tiny = float(np.finfo(np.float32).tiny)
    return -jnp.log(-jnp.log(jax.random.uniform(k, (N,), minval=tiny)))


def bern_case(jit):
    return lambda o: sampler(
        o, "bernoulli", bernoulli, lambda r: r.random(N, dtype=np.float32) < 0.3,
        lambda: torch.bernoulli(torch.full((N,), 0.3)), jit, dtype=np.bool_)


def perm_case(jit):
    def check_then_run(o):
        p = np.asarray(permutation(jax.random.key(1)))
        assert np.array_equal(np.sort(p), np.arange(M))
        yield from sampler(o, "permutation", permutation, lambda r: r.permutation(M),
                           lambda: torch.randperm(M), jit, n=M, dtype=np.int32)
    return check_then_run


CASES = {
    "normal_16M": lambda o: sampler(
        o, "normal", normal, lambda r: r.standard_normal(N, dtype=np.float32),
        lambda: torch.randn(N), False),
    "normal_16M_jit": lambda o: sampler(
        o, "normal", normal, lambda r: r.standard_normal(N, dtype=np.float32),
        lambda: torch.randn(N), True),
    "uniform_16M": lambda o: sampler(
        o, "uniform", uniform, lambda r: r.random(N, dtype=np.float32), lambda: torch.rand(N),
        False),
    "uniform_16M_jit": lambda o: sampler(
        o, "uniform", uniform, lambda r: r.random(N, dtype=np.float32), lambda: torch.rand(N),
        True),
    "bernoulli_16M": bern_case(False),
    "bernoulli_16M_jit": bern_case(True),
    "permutation_1M": perm_case(False),
    "permutation_1M_jit": perm_case(True),
    "exponential_16M": lambda o: sampler(
        o, "exponential", exponential, lambda r: r.standard_exponential(N, dtype=np.float32),
        lambda: torch.empty(N).exponential_(), False, op_by_op=exponential_ops),
    "gumbel_16M": lambda o: sampler(
        o, "gumbel", gumbel, lambda r: r.gumbel(size=N).astype(np.float32), None, False,
        op_by_op=gumbel_ops),
    "erf_inv_16M": lambda o: special(o, jax.lax.erf_inv,
                                     None if torch is None else torch.erfinv, -0.999, 0.999),
    "erf_16M": lambda o: special(o, jax.lax.erf, None if torch is None else torch.erf, -4.0, 4.0),
}


def main():
    if torch is not None:
        torch.set_num_threads(os.cpu_count() or 1)
    return bench_emit.run_suite("random", __doc__, CASES, jax)

if __name__ == "__main__":
    sys.exit(main())
