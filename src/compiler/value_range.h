// Value ranges of a scalar program, and the selects they decide.
//
// What: value_ranges bounds every instruction's value over all inputs: an interval [lo, hi]
// (a double; bool is [0, 1], decided [0, 0] or [1, 1]) and whether NaN is possible. Inputs are
// unknown (the whole type); constants, casts of bit patterns, integer shifts and masks with
// constants, float arithmetic, max/min, sqrt, comparisons and selects narrow it; anything else
// (transcendentals, externs, 64-bit integers) is the whole type. Float bounds are computed in
// double and widened by one unit in the last place of the type, so double rounding cannot
// make them unsound. fold_decided_selects rewrites each select whose condition the ranges
// decide to read its chosen operand twice: select(c, a, a), which every backend folds to a
// (instruction indices are kept, so per-instruction tables stay valid; the condition's
// instructions become dead code).
// Why: the expanded math functions carry the special cases of their whole domain (log of zero,
// negative, infinite, NaN or subnormal arguments; erf_inv at +-1). A fused kernel often feeds
// them a value whose range excludes every special case: random.normal's erf_inv(u) with u in
// (-1, 1) built from 23 random mantissa bits. There the checks are ~15% of the kernel's vector
// instructions, and the kernel is compute-bound. The bits never change: a decided select
// returns what it would have returned.
#pragma once

#include <vector>

#include "tessera/scalar_ir.h"

namespace tessera::compiler {

struct ValueRange {
  double lo, hi;  // every non-NaN value v has lo <= v <= hi (+-0 both in [0, 0])
  bool nan;       // NaN possible (floats)
};

// One range per instruction of p.
std::vector<ValueRange> value_ranges(const scalar::Program& p);

// p with every select that value_ranges decides reading its chosen operand twice, except the
// trig range fallbacks (math_expand.h's is_range_fallback), which backends branch around.
// `decided` (optional) receives how many selects were rewritten.
scalar::Program fold_decided_selects(const scalar::Program& p, int* decided = nullptr);

}  // namespace tessera::compiler
