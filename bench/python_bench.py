#!/usr/bin/env python3
"""Suite `python`: Tessera called from Python (the tessera package over the pybind11 extension)
against Python peers timed in the same process and run. One JSON line per case, in the format of
the C++ suites (bench/harness.h; docs/performance.md).

  eager_add_small  per-op cost of `x + y` on 16-element float32 Arrays (jnp_add_ms: jnp.add);
                   peer NumPy's ufunc `x + y` on the same values as ndarrays
  grad_small       per-call cost of jax.grad(lambda v: jnp.sum(jnp.tanh(v) * v)) on 16 float32
                   values; peer functorch.grad of the same function (torch_autograd_ms: plain
                   torch autograd, .backward() on a fresh leaf); gradients compared (max_rel_diff)
  jit_call_python  per-call cost of a cached jax.jit(f)(x, y, z), f = x * y + z on 16-element
                   float32 Arrays; peer the eager call f(x, y, z) (the C++ side: suite `jit`)
  tree_flatten_params  per-call cost of flatten + unflatten of a nested dict of 1,000 array
                   leaves (100 layers of 10 parameters) with tessera.tree_util (C++ TreeDef);
                   peer torch.utils._pytree (tree_flatten + tree_unflatten); `pure_python_ms`:
                   the pure-Python tree_util Tessera had before (loaded from git, commit
                   TREE_BASELINE_REV, when the checkout has its history)

    python_bench.py [--reps N] [--warmup N] [--list] [CASE...]

scripts/bench runs it with /usr/bin/python3 and build/python on PYTHONPATH; run directly, it
falls back to <repo>/build/python when `tessera` is not importable. Each timed sample is a loop
of many calls (time.perf_counter); the median over the samples, divided by the calls, is
reported. Tessera is timed before torch is imported, so torch's threads are not in the process.
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

SMALL = 16


def uniform(seed, n):
    # Uniform [-2, 2) float32 values, as the C++ suites draw them.
    return np.random.default_rng(seed).uniform(-2.0, 2.0, n).astype(np.float32)


def per_call_ms(fn, iters, warmup, reps):
    """Median over `reps` samples of a loop of `iters` calls, per call, in ms."""
    for _ in range(warmup):
        for _ in range(iters):
            fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - t0) * 1e3 / iters)
    return statistics.median(samples)


def max_rel_diff(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def torch_or_none():
    try:
        import functorch
        import torch
        return torch, functorch
    except ImportError as e:
        print(f"python_bench: torch/functorch not importable ({e}); peer 'none'", file=sys.stderr)
        return None, None


def eager_add_small(o):
    iters = 20000
    reps = max(o.reps, 21)  # short samples: more of them, so the median ignores scheduler noise
    xn, yn = uniform(1, SMALL), uniform(2, SMALL)
    x, y = jnp.asarray(xn), jnp.asarray(yn)
    r = x + y
    if not np.array_equal(np.asarray(r), xn + yn) or r.dtype != jnp.float32:
        raise RuntimeError("eager_add_small: Tessera's x + y differs from NumPy's")
    tessera_ms = per_call_ms(lambda: x + y, iters, o.warmup, reps)
    jnp_add_ms = per_call_ms(lambda: jnp.add(x, y), iters, o.warmup, reps)
    peer_ms = per_call_ms(lambda: xn + yn, iters, o.warmup, reps)
    return {"tessera_ms": tessera_ms, "peer": f"numpy {np.__version__} ufunc x + y",
            "peer_ms": peer_ms, "jnp_add_ms": jnp_add_ms, "n": SMALL, "iters": iters}


def grad_small(o):
    iters = 2000
    reps = max(o.reps, 11)
    xn = uniform(3, SMALL)
    x = jnp.asarray(xn)
    g = jax.grad(lambda v: jnp.sum(jnp.tanh(v) * v))
    gx = np.asarray(g(x))
    x64 = xn.astype(np.float64)
    exact = np.tanh(x64) + x64 * (1 - np.tanh(x64) ** 2)
    err = max_rel_diff(gx, exact)
    if err > 1e-5:
        raise RuntimeError(f"grad_small: Tessera's gradient is off by {err:.3g} (relative)")
    tessera_ms = per_call_ms(lambda: g(x), iters, o.warmup, reps)
    rec = {"tessera_ms": tessera_ms}

    torch, functorch = torch_or_none()
    if torch is None:
        rec["peer"] = "none"
    else:
        xt = torch.from_numpy(xn.copy())
        gt = functorch.grad(lambda v: torch.sum(torch.tanh(v) * v))

        def autograd():
            v = xt.detach().requires_grad_()
            torch.sum(torch.tanh(v) * v).backward()
            return v.grad

        rec["peer"] = (f"functorch.grad (functorch {functorch.__version__}, torch "
                       f"{torch.__version__}, {torch.get_num_threads()} intra-op threads)")
        rec["peer_ms"] = per_call_ms(lambda: gt(xt), iters, o.warmup, reps)
        rec["torch_autograd_ms"] = per_call_ms(autograd, iters, o.warmup, reps)
        rec["max_rel_diff"] = max_rel_diff(gx, gt(xt).numpy())
    rec.update({"n": SMALL, "iters": iters})
    return rec


# The last commit whose tessera/tree_util.py was pure Python (imports nothing from tessera).
TREE_BASELINE_REV = "ac2cbfd"


def params_tree(leaf):
    """100 layers of {attn: {wq, wk, wv, wo}, mlp: {w1, b1, w2, b2}, ln: {scale, bias}}, every
    dict built in sorted key order (torch's pytree keeps insertion order, JAX's sorts: so both
    list the leaves alike)."""
    def node(i, keys):
        return {k: leaf(i, k) for k in sorted(keys)}
    return {f"layer_{i:03d}": {"attn": node(i, ("wq", "wk", "wv", "wo")),
                               "ln": node(i, ("scale", "bias")),
                               "mlp": node(i, ("w1", "b1", "w2", "b2"))} for i in range(100)}


def pure_python_tree_util():
    """The pre-C++ tree_util module from git history, or None (no git or no history)."""
    import importlib.util
    import subprocess
    import tempfile
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    try:
        src = subprocess.run(["git", "-C", repo, "show",
                              f"{TREE_BASELINE_REV}:python/tessera/tree_util.py"],
                             check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.NamedTemporaryFile("wb", suffix=".py", delete=False) as f:
        f.write(src)
    try:
        spec = importlib.util.spec_from_file_location("_tree_util_pure_python", f.name)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        os.unlink(f.name)
    return mod


def tree_flatten_params(o):
    iters = 200
    reps = max(o.reps, 11)
    tu = jax.tree_util
    base = jnp.zeros((4,), jnp.float32)
    tree = params_tree(lambda i, k: base + i)
    leaves, treedef = tu.tree_flatten(tree)
    if len(leaves) != 1000 or treedef.num_leaves != 1000:
        raise RuntimeError("tree_flatten_params: expected 1,000 leaves")
    back = tu.tree_unflatten(treedef, leaves)
    if back.keys() != tree.keys() or back["layer_042"]["mlp"]["b1"] is not tree["layer_042"]["mlp"]["b1"]:
        raise RuntimeError("tree_flatten_params: unflatten did not rebuild the tree")

    def round_trip(mod, leaves_first=False):
        flatten, unflatten = mod.tree_flatten, mod.tree_unflatten

        def run():
            lv, td = flatten(tree)
            return unflatten(lv, td) if leaves_first else unflatten(td, lv)
        return run

    rec = {"tessera_ms": per_call_ms(round_trip(tu), iters, o.warmup, reps)}
    old = pure_python_tree_util()
    if old is not None:
        if old.tree_flatten(tree)[0] != leaves:
            raise RuntimeError("tree_flatten_params: the pure-Python baseline orders leaves "
                               "differently")
        rec["pure_python_ms"] = per_call_ms(round_trip(old), iters, o.warmup, reps)
    try:
        import torch.utils._pytree as tp
        import torch
    except ImportError as e:
        print(f"python_bench: torch not importable ({e}); peer 'none'", file=sys.stderr)
        rec["peer"] = "none"
    else:
        tl, tspec = tp.tree_flatten(tree)
        if tl != leaves:
            raise RuntimeError("tree_flatten_params: torch orders the leaves differently")
        rec["peer"] = f"torch.utils._pytree (torch {torch.__version__})"
        rec["peer_ms"] = per_call_ms(round_trip(tp, leaves_first=True), iters, o.warmup, reps)
    rec.update({"leaves": 1000, "iters": iters})
    return rec


def jit_call_python(o):
    iters = 5000
    reps = max(o.reps, 11)
    xn, yn, zn = uniform(4, SMALL), uniform(5, SMALL), uniform(6, SMALL)
    x, y, z = jnp.asarray(xn), jnp.asarray(yn), jnp.asarray(zn)

    def f(a, b, c):
        return a * b + c
    jf = jax.jit(f)
    if not np.array_equal(np.asarray(jf(x, y, z)), np.asarray(f(x, y, z))):
        raise RuntimeError("jit_call_python: jit(f) differs from f")
    tessera_ms = per_call_ms(lambda: jf(x, y, z), iters, o.warmup, reps)
    eager_ms = per_call_ms(lambda: f(x, y, z), iters, o.warmup, reps)
    if jf._trace_count != 1:
        raise RuntimeError("jit_call_python: the call retraced")
    return {"tessera_ms": tessera_ms, "peer": "Tessera eager f(x, y, z) from Python",
            "peer_ms": eager_ms, "n": SMALL, "iters": iters}


CASES = {"eager_add_small": eager_add_small, "grad_small": grad_small,
         "tree_flatten_params": tree_flatten_params, "jit_call_python": jit_call_python}

def main():
    return bench_emit.run_suite("python", __doc__, CASES, jax, reps=7, warmup=2, min_reps=7, min_warmup=1)

if __name__ == "__main__":
    sys.exit(main())
