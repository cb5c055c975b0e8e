#!/usr/bin/env python3
"""Compile-fail checks: each case of unregistered_pytree.cpp must fail to compile with exactly
one error, the static_assert naming TESSERA_REGISTER_PYTREE.

    run.py CXX INCLUDE_DIR
"""
import os
import re
import subprocess
import sys

CASES = {1: "grad", 2: "vjp", 3: "vmap", 4: "jvp", 5: "lax::scan", 6: "vmap result"}


def main():
    cxx, include = sys.argv[1], sys.argv[2]
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unregistered_pytree.cpp")
    bad = 0
    for case, what in CASES.items():
        out = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", f"-I{include}",
                              f"-DTESSERA_CASE={case}", src], capture_output=True, text=True,
                             timeout=300)
        errors = [line for line in out.stderr.splitlines() if re.search(r"\berror:", line)]
        ok = (out.returncode != 0 and len(errors) == 1
              and "TESSERA_REGISTER_PYTREE" in errors[0])
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {len(errors)} error(s)"
              + ("" if ok else "\n" + "\n".join(errors[:10] or out.stderr.splitlines()[:10])))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
