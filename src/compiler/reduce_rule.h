// Reduction rules: how a reduction primitive (PrimitiveKind::kReduction) folds its operand —
// the axes it reduces and the scalar monoid that combines elements (kir::Reducer) — what loop
// fusion needs to compute the reduction inside a kernel's stage. Families register a rule for
// each reduction they want fused (the compiler knows none by name); one without a rule (argmax,
// cumulative scans) stays a thunk.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "compiler/kernel_ir.h"
#include "tessera/primitive.h"

namespace tessera::compiler {

struct ReductionInfo {
  std::vector<int64_t> axes;  // of operand 0, ascending
  scalar::Op op = scalar::Op::kAdd;
};

// nullopt when the rule cannot say for these avals/params (a dtype it does not fold exactly as
// its eager kernel does, e.g. 16-bit floats that accumulate in float32).
using ReductionRule = std::function<std::optional<ReductionInfo>(
    std::span<const Aval> in, const Aval& out, const Params& params)>;

void register_reduction(const Primitive& p, ReductionRule rule);
// The rule registered for p, or null.
const ReductionRule* reduction_rule(const Primitive& p);

}  // namespace tessera::compiler
