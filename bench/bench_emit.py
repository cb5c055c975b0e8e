"""The JSON line every Python benchmark suite prints, in the C++ suites' format
(bench/harness.cpp's emit(): ratio = peer_ms / tessera_ms, the common fields first, floats
rounded to 4 significant digits)."""
import json
import math

ORDER = ["bench", "case", "tessera_ms", "peer", "peer_ms", "ratio", "gflops", "gbps", "peak_mb"]


def round_sig(v, digits=4):
    if v == 0 or not math.isfinite(v):
        return v
    return round(v, digits - 1 - int(math.floor(math.log10(abs(v)))))


def emit(bench, case, rec):
    rec = {"bench": bench, "case": case, **rec}
    if isinstance(rec.get("peer_ms"), float) and rec.get("tessera_ms", 0) > 0:
        rec["ratio"] = rec["peer_ms"] / rec["tessera_ms"]
    out = {k: rec[k] for k in ORDER if k in rec}
    out.update({k: v for k, v in rec.items() if k not in out})
    out = {k: round_sig(v) if isinstance(v, float) else v for k, v in out.items()}
    print(json.dumps(out, separators=(",", ":")), flush=True)


def run_suite(bench, doc, cases, tessera_module, reps=5, warmup=1, min_reps=1, min_warmup=0):
    """The command line every Python suite shares: `<suite>_bench.py [--reps N] [--warmup N]
    [--list] [CASE...]`. Each case is called with the parsed options and returns one record or a
    list of records (one per peer); each is printed with emit(). Returns the exit status."""
    import argparse
    import os
    import sys

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("cases", nargs="*", metavar="CASE", help=f"default: all of {list(cases)}")
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--list", action="store_true")
    o = ap.parse_args()
    if o.reps < min_reps or o.warmup < min_warmup:
        ap.error(f"--reps must be >= {min_reps} and --warmup >= {min_warmup}")
    unknown = [c for c in o.cases if c not in cases]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; cases: {' '.join(cases)}")
    if o.list:
        print("\n".join(cases))
        return 0
    print(f"{bench}_bench: tessera from {os.path.dirname(tessera_module.__file__)}",
          file=sys.stderr)
    for name, fn in cases.items():
        if not o.cases or name in o.cases:
            recs = fn(o)
            for rec in ([recs] if isinstance(recs, dict) else recs):
                emit(bench, name, rec)
    return 0


def median_ms(fn, warmup, reps):
    """The median of `reps` timed calls of fn (milliseconds), after `warmup` untimed ones."""
    import statistics
    import time

    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)
