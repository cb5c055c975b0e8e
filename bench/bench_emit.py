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
