#!/usr/bin/env python3
"""Refreshes the dated result tables in docs/performance.md from benchmark JSON lines.

    update_performance.py [--doc PATH] [--machine TEXT] [--date YYYY-MM-DD] [FILE ...]

Reads JSON lines (one object per case, as the bench_<name> programs print them; other lines
are ignored) from the files or stdin. Each suite ("bench" field) present in the input gets its
table, between `<!-- bench:NAME:begin -->` and `<!-- bench:NAME:end -->`, replaced by a new one
dated today and naming the machine; a suite not in the document yet is added before
`<!-- bench:results:end -->` (or at the end). Everything else in the file is kept.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

MAIN = ["case", "tessera_ms", "peer", "peer_ms", "ratio", "gflops", "gbps", "peak_mb"]
HEADERS = ["case", "Tessera ms", "peer", "peer ms", "ratio (peer/Tessera)", "GFLOP/s", "GB/s",
           "peak MB"]
RESULTS_END = "<!-- bench:results:end -->"


def machine_description():
    model = "unknown CPU"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
                break
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{model}, {os.cpu_count()} CPUs"


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return f"{v:.0f}"
        if abs(v) >= 0.01:
            return f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
        return f"{v:.3g}"
    return str(v)


def table(suite, rows, machine, date):
    lines = [f"<!-- bench:{suite}:begin -->",
             f"### `{suite}` — {date}, {machine}", "",
             "| " + " | ".join(HEADERS + ["other fields"]) + " |",
             "|" + "|".join(["---", "---:", "---", "---:", "---:", "---:", "---:", "---:", "---"])
             + "|"]
    for r in rows:
        cells = [fmt(r.get(k)) for k in MAIN]
        if r.get("ratio") is not None:
            cells[MAIN.index("ratio")] = f"{r['ratio']:.2f}×"
        cells[0] = f"`{cells[0]}`"
        extra = ", ".join(f"{k}={fmt(v)}" for k, v in r.items() if k not in MAIN and k != "bench")
        lines.append("| " + " | ".join(cells + [extra]) + " |")
    lines.append(f"<!-- bench:{suite}:end -->")
    return "\n".join(lines)


def read_records(paths):
    records = []
    streams = [open(p) for p in paths] if paths else [sys.stdin]
    for s in streams:
        for line in s:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(r, dict) and "bench" in r and "case" in r:
                records.append(r)
    return records


def update(doc, records, machine, date):
    suites = {}
    for r in records:
        suites.setdefault(r["bench"], []).append(r)
    for suite, rows in suites.items():
        block = table(suite, rows, machine, date)
        pattern = re.compile(rf"<!-- bench:{re.escape(suite)}:begin -->.*?"
                             rf"<!-- bench:{re.escape(suite)}:end -->", re.S)
        if pattern.search(doc):
            doc = pattern.sub(lambda _: block, doc, count=1)
        elif RESULTS_END in doc:
            doc = doc.replace(RESULTS_END, block + "\n\n" + RESULTS_END, 1)
        else:
            doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    return doc, sorted(suites)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="JSON-lines files (default: stdin)")
    ap.add_argument("--doc", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "docs", "performance.md"))
    ap.add_argument("--machine", default=None, help="default: lscpu's model name and the CPU count")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    args = ap.parse_args()

    records = read_records(args.files)
    if not records:
        print("update_performance: no benchmark records in the input; nothing to update",
              file=sys.stderr)
        return 1
    with open(args.doc) as f:
        doc = f.read()
    doc, suites = update(doc, records, args.machine or machine_description(), args.date)
    with open(args.doc, "w") as f:
        f.write(doc)
    print(f"update_performance: refreshed {', '.join(suites)} in {os.path.relpath(args.doc)}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
