// Index-map rules: how a data-movement primitive (PrimitiveKind::kIndexMap) finds the operand
// element behind an output element, as affine forms — what loop fusion composes so that no
// intermediate buffer exists. Families register a rule for each of their index-map primitives
// (the compiler knows none by name); one without a rule is not fused.
//
// A point is one affine form (kernel_ir.h) per dimension of an array, over a kernel's iteration
// indices. Given the point of an output element, a rule says either
//   kOperand  the element is operand 0's element at `point` (broadcast_in_dim, transpose,
//             slice, rev, squeeze, reshapes that only add or drop unit dimensions);
//   kLinear   it is operand 0's element at row-major offset `value` (any reshape) — usable when
//             operand 0 is read from memory, not computed in the kernel;
//   kIndex    it is the integer `value` converted to the output dtype (iota);
//   kSelect   it is the first of `pieces` whose guards all hold: operand `operand`'s element at
//             `point` (pad, concatenate), or the piece's constant (gather's fill); every point
//             satisfies some piece's guards. Fusion
//             computes every piece at every point it needs, its loads guarded by the piece's
//             guards, and selects (the last piece where all others fail).
// A rule may use run-time values: `dynamic(k, point, lo, hi)` is the affine form of
// clamp(operand k's element at `point` (an integer operand; an empty point for a rank-0 one),
// lo, hi) — a symbol of the kernel (kernel_ir.h), or a constant for a literal operand — which
// points and guards may use like any form (dynamic_slice's clamped starts; dynamic_update_slice's,
// in pieces and guards; gather's clamped window starts, whose point follows the output's batch
// dimensions: an indirect load). Fusion refuses (the equation is computed by a kernel of its own)
// a point that is not a function of the iteration indices alone, one that leaves the operand, or
// one that varies over a reduction kernel's inner dimensions.
// A rule returns nullopt when it cannot say (a param it does not handle).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "compiler/kernel_ir.h"
#include "tessera/primitive.h"

namespace tessera::compiler {

struct IndexMapPiece {
  size_t operand = 0;
  std::vector<kir::Affine> point;
  std::vector<kir::Guard> guards;  // over the kernel's iteration indices, as `point` is
  // A piece that is this value (of the output dtype) instead of an operand's element (gather's
  // fill outside the operand).
  std::optional<scalar::ScalarValue> constant{};
};

struct IndexMapResult {
  enum class Kind { kOperand, kLinear, kIndex, kSelect } kind = Kind::kOperand;
  std::vector<kir::Affine> point;     // kOperand
  kir::Affine value;                  // kLinear, kIndex
  std::vector<IndexMapPiece> pieces;  // kSelect
};

using IndexMapRule = std::function<std::optional<IndexMapResult>(
    std::span<const Aval> in, const Aval& out, const Params& params,
    std::span<const kir::Affine> out_point)>;
using DynamicValue = std::function<kir::Affine(size_t operand, std::span<const kir::Affine> point,
                                               int64_t lo, int64_t hi)>;
using DynamicIndexMapRule = std::function<std::optional<IndexMapResult>(
    std::span<const Aval> in, const Aval& out, const Params& params,
    std::span<const kir::Affine> out_point, const DynamicValue& dynamic)>;

void register_index_map(const Primitive& p, IndexMapRule rule);
void register_index_map(const Primitive& p, DynamicIndexMapRule rule);
// The rule registered for p (a static rule ignores `dynamic`), or null.
const DynamicIndexMapRule* index_map_rule(const Primitive& p);

// The row-major element offset of `point` in an array of `shape`.
kir::Affine linear_offset(std::span<const kir::Affine> point, const Shape& shape);

// The point of `shape` whose row-major offset is `linear`, when every coordinate is an affine
// form that stays in range over the iteration space `dims` (so the point is exact); nullopt
// otherwise.
std::optional<std::vector<kir::Affine>> delinearize(const kir::Affine& linear, const Shape& shape,
                                                    std::span<const int64_t> dims);

}  // namespace tessera::compiler
