#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_bind (tests/fuzz/corpus/bind/seed_<prim>): one per primitive
family, the primitive's name (fuzz_bind's input starts with its length and bytes) followed by
fixed pseudo-random choice bytes. Rerun after changing the decoder; regression inputs found by
fuzzing are kept beside them under other names."""
import os
import random

PRIMS = [
    "add", "neg", "integer_pow", "select_n", "convert_element_type", "broadcast_in_dim",
    "reshape", "transpose", "iota", "reduce_sum", "reduce_max", "argmax", "dot_general",
    "bitcast_convert_type", "reduce_precision", "shift_left", "squeeze", "rev", "slice",
    "dynamic_slice", "dynamic_update_slice", "concatenate", "pad", "reduce", "cumsum",
    "scan", "cond", "while", "custom_jvp_call", "checkpoint", "round", "clamp", "div", "rem",
    "polygamma", "zeta", "stop_gradient", "pure_callback",
    "gather", "scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max", "sort",
    "top_k",
    "psum", "pmax", "all_gather", "conv_general_dilated", "reduce_window_sum",
    "reduce_window_max", "reduce_window", "select_and_gather_add", "select_and_scatter_add",
    "qr", "geqrf", "geqp3", "householder_product",
    "custom_linear_solve",
]


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "bind")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(12)
    for name in PRIMS:
        body = bytes(rng.randrange(256) for _ in range(96))
        with open(os.path.join(out, "seed_" + name), "wb") as f:
            f.write(bytes([len(name)]) + name.encode() + body)


if __name__ == "__main__":
    main()
