#!/usr/bin/env python3
"""Checks that every #include edge of src/ and include/ points down the layer order of
docs/design.md ("Layers"): a file may include files of its own layer or of layers below it.

    scripts/check_layers.py [--root DIR] [--allowlist FILE] [--list]

Each upward edge must be listed in the allowlist (tests/layering_allowlist.txt: one
"from -> to" per line, '#' comments) with the reason it is still there; an edge that is not
listed fails the check with a message naming it, and a listed edge that no longer exists fails
too (so the list only shrinks). --list prints every file's layer. Exit status 0 when clean.
"""
import argparse
import os
import re
import sys

# Layers from the top down (DESIGN.md section 2). The first matching rule gives a file's layer.
LAYERS = ["umbrella", "libraries", "transforms", "prims", "lax", "trace", "compiler", "ir",
          "core"]
RULES = [
    (r"include/tessera/tessera\.h$", "umbrella"),
    (r"include/tessera/(nn|nn_initializers|random|random_dists)\.h$|"
     r"src/api/(nn_[a-z_]+|random|random_[a-z_]+)\.(cpp|h)$", "libraries"),
    (r"include/tessera/scipy_stats\.h$|src/api/scipy_stats_[a-z_]+\.(cpp|h)$", "libraries"),
    (r"include/tessera/(numpy[a-z_]*|io|debug|linalg[a-z_]*|ops)\.h$", "libraries"),
    (r"include/tessera/scipy_special\.h$|src/api/scipy_special[a-z_]*\.(cpp|h)$", "libraries"),
    (r"src/api/linalg_[a-z_]+\.(cpp|h)$", "libraries"),
    (r"src/api/(numpy_[a-z_]+|debug|ops_[a-z_]+)\.(cpp|h)$", "libraries"),
    (r"src/io/", "libraries"),
    (r"include/tessera/(transforms[a-z_]*|jit|checkpoint|custom_derivatives[a-z_]*|"
     r"control_flow[a-z_]*|lax_cond|lax_scan|lax_assoc_scan|lax_linear_solve)\.h$", "transforms"),
    (r"src/api/(lax_(cond|scan|assoc_scan|linear_solve)|loop_carry)\.cpp$", "transforms"),
    (r"src/transforms/", "transforms"),
    (r"src/prims/", "prims"),
    (r"include/tessera/lax\.h$", "lax"),
    (r"src/api/lax_[a-z_]+\.(cpp|h)$", "lax"),
    (r"src/trace/", "trace"),
    (r"src/compiler/", "compiler"),
    (r"include/tessera/(jaxpr|jaxpr_parse|scalar_ir)\.h$", "ir"),
    (r"src/ir/", "ir"),
    (r"include/tessera/[a-z_]+\.h$", "core"),
    (r"src/(core|runtime|tree)/", "core"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(rel):
    for pattern, layer in RULES:
        if re.search(pattern, rel):
            return layer
    return None


def resolve(root, src_rel, target):
    """The repository path an #include "target" in src_rel names (include/ and src/ are the
    include roots; then the including file's folder), or None for a file outside them."""
    for base in ("include", "src", os.path.dirname(src_rel)):
        cand = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def edges(root):
    out = []
    for top in ("include", "src"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp", ".inc")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for target in INCLUDE.findall(text):
                    dst = resolve(root, rel, target)
                    if dst is not None:
                        out.append((rel, dst))
    return sorted(set(out))


def read_allowlist(path):
    allowed = set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split("->")]
            if len(parts) != 2 or not all(parts):
                sys.exit(f"{path}:{n}: expected 'from -> to', got {line!r}")
            allowed.add(tuple(parts))
    return allowed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(here, ".."))
    ap.add_argument("--allowlist", default=None)
    ap.add_argument("--list", action="store_true")
    o = ap.parse_args()
    root = os.path.abspath(o.root)
    allowlist = o.allowlist or os.path.join(root, "tests", "layering_allowlist.txt")
    rank = {name: i for i, name in enumerate(LAYERS)}
    problems = []
    upward = set()
    for src, dst in edges(root):
        ls, ld = layer_of(src), layer_of(dst)
        for path, layer in ((src, ls), (dst, ld)):
            if layer is None:
                problems.append(f"{path}: no layer rule matches it; add one to "
                                "scripts/check_layers.py (RULES)")
        if ls is None or ld is None:
            continue
        if o.list:
            print(f"{ls:>10}  {src} -> {dst} ({ld})")
        if rank[ld] < rank[ls]:  # a lower index is a higher layer
            upward.add((src, dst))
    allowed = read_allowlist(allowlist)
    for src, dst in sorted(upward - allowed):
        problems.append(f"upward include: {src} ({layer_of(src)}) includes {dst} "
                        f"({layer_of(dst)}); {layer_of(src)} sits below {layer_of(dst)} in "
                        "docs/design.md's layer order. Move what is shared down, or (with a "
                        f"reason) list '{src} -> {dst}' in {os.path.relpath(allowlist, root)}")
    for src, dst in sorted(allowed - upward):
        problems.append(f"stale allowlist entry: '{src} -> {dst}' is no longer an upward "
                        f"include; remove it from {os.path.relpath(allowlist, root)}")
    for p in sorted(set(problems)):
        print(f"check_layers: {p}", file=sys.stderr)
    n = len(edges(root))
    print(f"check_layers: {n} include edges, {len(upward)} upward "
          f"({len(upward & allowed)} allowlisted), {len(set(problems))} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
