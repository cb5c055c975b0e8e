// Loop fusion: which equations of an optimized jaxpr become one kernel (kernel_ir.h), decided
// from primitive kinds and the families' rules — never from primitive names.
//
// An equation is fusible when it has no effects, no extended dtypes, and is either
// elementwise with a scalar definition (operands broadcasting NumPy-style to exactly its result),
// an index map with an index-map rule (index_map.h), or a reduction with a reduction rule
// (reduce_rule.h) over trailing axes of at most 2^15 elements per row. Only elementwise
// equations may have several results (threefry2x32), all of one shape: such an equation never
// roots a group; it joins one that reads every one of its results (none a program output), and
// its scalar program runs once per point for all of them. float16/bfloat16 values are moved by
// index maps as bits and converted by elementwise equations whose scalar programs touch them
// only through float32 <-> 16-bit conversions (the driver's: compute in float32, round once per
// equation — eager's bits); 16-bit reductions stay eager. Groups grow
// from consumers to producers, walking the equations backwards: a fusible producer joins its
// consumers' group when every reader of its result is in that one group and the result is not a
// program output — so a group is entered only through its root (the last equation) and no cycle can
// form — unless that would recompute an expensive (transcendental) value at more points than it has
// elements (a broadcast of exp(x)) — unless the value is constant along the space's trailing
// dimensions (computed once per row). A group is kept when it holds at least two equations, one of
// them elementwise; its kernel iterates over the root's result (with reductions: over the root
// reduction's, else the first reduction's, operand — outer dimensions its result's, inner the
// folded ones — each reduction a stage of the kernel giving a row value, kernel_ir.h), reads every
// value computed outside the group through an affine load, and computes the rest at each point
// (values at the same point computed once per body). A reduction read anywhere but at the outer
// point itself, or folding another space, becomes a root of its own. A producer that cannot be
// composed at the points its consumers need (a general reshape of a computed value) is made the
// root of a group of its own and planning runs again.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/kernel_ir.h"
#include "tessera/jaxpr.h"

namespace tessera::compiler {

struct FusionGroup {
  std::vector<size_t> members;  // equation indices, ascending; the last is the root
  kir::Kernel kernel;           // collapsed
  std::vector<Var> inputs;      // the kernel's input buffers, in param order
  std::vector<Var> outputs;     // the values its outputs hold, in output order
  size_t root() const { return members.back(); }
};

struct FusionPlan {
  std::vector<FusionGroup> groups;
  std::vector<int32_t> group_of;  // per equation: its group, or -1
};

FusionPlan plan_fusion(const Jaxpr& j);

// Whether the planner may fuse equation `e` at all (the kind test above).
bool fusible(const JaxprEqn& e);

}  // namespace tessera::compiler
