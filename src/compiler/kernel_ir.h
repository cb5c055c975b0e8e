// The kernel IR: one fused kernel as an iteration space, the loads that feed each point, a
// typed scalar program (scalar_ir.h) computed at every point, and the stores of its results.
//
// A kernel iterates over `dims`, a row-major iteration space: the first dims.size() - inner
// dimensions are parallel (outer), the last `inner` ones are reduction (inner) dimensions. A
// map kernel (inner == 0, no stages) computes every point independently. At point i (one index
// per dimension) its body:
//   1. reads every `loads[k]` — element `index(i)` (an affine form of i, in elements) of input
//      buffer `param`; every input is a dense row-major buffer of its dtype. A load may be
//      guarded: it reads only at points where every guard holds (lo <= value(i) < hi) and gives
//      zero elsewhere without touching memory — what pad and concatenate compose to (the body
//      selects between the pieces with the same conditions, from index values);
//   2. forms every `indices[k]` — the integer value of an affine form of i (iota's values);
//   3. runs `body` with inputs (load values..., index values..., row values...), in that order;
//   4. stores body output k at the point's row-major position in output buffer k (every output
//      has as many elements as the iteration space).
// A reduction kernel (stages non-empty) runs, for each outer point o, its `stages` in order:
// stage s runs its body at every inner point (o, j) — loads, index values, then the row values
// of the stages before it — and folds each body output over the inner points with its reducer,
// giving one row value per reducer (numbered across stages in order; over one inner point, the
// row value is that point's value itself, over none the identity). Then the kernel's body
// runs at every point (o, j), or, with `row_outputs`, once per outer point (its loads must not
// depend on the inner dimensions, and each output has one element per outer point). A stage may
// also *save* values: its last `saves` body outputs are kept for every inner point of the row,
// and every later body that runs per inner point (later stages; the kernel's body unless
// row_outputs) takes them, at its own point, as inputs after the row values — so a value both
// a stage and the body need (softmax's exp(x - max)) is computed once. Softmax is a kernel with
// a max stage, a sum stage saving exp(x - r0), and a body: one pass over memory per row block.
// The order in which a reducer combines values is the lowering's (reducers are associative up to
// rounding; the reference evaluator folds in order); it is fixed for a kernel, whatever the
// thread count. The CPU lowering uses the eager reduction kernel's order.
// A kernel may also read *symbols*: dynamic indices (dynamic_slice's clamped starts, later
// gather's indices). Symbol k is the integer element `index(i)` of input `param`, clamped to
// [lo, hi], minus lo; every affine form may use it as one more variable, i{rank + k}, which
// ranges over [0, hi - lo] like an iteration index — so bounds checks, collapsing and index-map
// composition treat it as a dimension of the extended space (extended_dims()). A symbol's own
// index uses the iteration dimensions only, and in a reduction kernel not the inner ones.
// Nothing in the IR says how the space is tiled, vectorized or split over threads: the CPU
// lowering (cpu/llvm_codegen.h) decides that, and a GPU lowering maps the same IR to blocks.
// Kernels are values: text() prints them, and identical text means an identical kernel (the
// code cache keys on it).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessera/dtype.h"
#include "tessera/scalar_ir.h"
#include "tessera/shape.h"

namespace tessera::compiler::kir {

// offset + sum_d coeff[d] * i[d] over the iteration dimensions.
struct Affine {
  std::vector<int64_t> coeff;
  int64_t offset = 0;

  static Affine constant(int64_t c, size_t rank);
  static Affine dim(size_t d, size_t rank);  // i[d]
  Affine operator+(const Affine& o) const;
  Affine scaled(int64_t k) const;
  bool is_constant() const;
  // Equal forms: the same offset and coefficients, a missing trailing coefficient being 0.
  bool operator==(const Affine& o) const;
  // The least and greatest value over the space `dims` (empty spaces: offset).
  int64_t min_over(std::span<const int64_t> dims) const;
  int64_t max_over(std::span<const int64_t> dims) const;
  int64_t at(std::span<const int64_t> idx) const;  // the value at a point
  std::string str() const;                         // "3*i0 + i1 + 2"
};

struct BufferType {
  DType dtype = DType::kFloat32;
  Shape shape;
  int64_t size() const;
};

// lo <= value(i) < hi.
struct Guard {
  Affine value;
  int64_t lo = 0, hi = 0;
  bool operator==(const Guard& o) const = default;
  bool holds(std::span<const int64_t> idx) const;
  std::string str() const;  // "0 <= i1 - 2 < 8"
};

struct Load {
  int32_t param = 0;            // input buffer
  Affine index;                 // element offset into it
  std::vector<Guard> guards{};  // read only where all hold, else the value is zero
  bool operator==(const Load& o) const = default;
  // The least and greatest index the load reads over the space `dims` (guards on one
  // dimension narrow that dimension's range; a guard over several bounds the index's part that
  // is a multiple of its value; others are not used); nullopt when it never reads.
  std::optional<std::pair<int64_t, int64_t>> index_range(std::span<const int64_t> dims) const;
};

// clamp(int64(input[param][index(i)]), lo, hi) - lo.
struct Symbol {
  int32_t param = 0;
  Affine index;
  int64_t lo = 0, hi = 0;
  bool operator==(const Symbol& o) const = default;
  int64_t extent() const { return hi - lo + 1; }
  // clamp(v, lo, hi) of an integer value v (unsigned 64-bit values past INT64_MAX clamp to hi):
  // the symbol's value plus lo.
  static int64_t clamp(const scalar::ScalarValue& v, int64_t lo, int64_t hi);
};

struct IndexValue {
  Affine value;  // an int64 body input
  bool operator==(const IndexValue& o) const = default;
};

// How a stage folds a body output over the inner points: a binary scalar op that is an
// associative monoid on its type (kAdd, kMul, kMax, kMin, kAnd, kOr, kXor) and its identity.
struct Reducer {
  scalar::Op op = scalar::Op::kAdd;
  DType type = DType::kFloat32;
  bool operator==(const Reducer& o) const = default;
  // The identity: 0, 1, -inf / the least value, +inf / the greatest value, all ones.
  scalar::ScalarValue identity() const;
  static bool supported(scalar::Op op, DType t);
};

struct Stage {
  std::vector<Load> loads;
  std::vector<IndexValue> indices;
  scalar::Program body;  // inputs: loads, index values, earlier stages' row and saved values
  std::vector<Reducer> reducers;  // one per body output, then:
  size_t saves = 0;  // body outputs kept per inner point for later bodies (saved values)
};

struct Kernel {
  std::string name;  // for text and profiles ("fusion.3")
  Shape dims;
  std::vector<BufferType> inputs;
  std::vector<BufferType> outputs;
  std::vector<Load> loads;
  std::vector<IndexValue> indices;
  scalar::Program body;
  size_t inner = 0;          // trailing reduction dimensions
  bool row_outputs = false;  // the body runs once per outer point
  // > 0: the order of the folds is the eager kernel's for a *column* reduction — the space is
  // [O, I, R] (outer dimensions O then I, inner R) standing for a reduction over the middle
  // axis of an [O, R, I] operand, and `columns` is I (the product of the trailing outer
  // dimensions it spans). Semantics are unchanged (the evaluator folds in order); the lowering
  // folds each column in the eager column reduction's order and vectorizes across columns.
  // Only with row_outputs and one stage of no saved values.
  int64_t columns = 0;
  std::vector<Stage> stages;    // reduction stages, in order
  std::vector<Symbol> symbols;  // dynamic indices, variables i{dims.size() + k}

  int64_t num_points() const;
  int64_t num_outer() const;  // points of the parallel dimensions
  int64_t num_inner() const;  // points of the reduction dimensions
  size_t num_row_values() const;
  size_t num_saved() const;
  // dims, then each symbol's extent: the space every affine form ranges over.
  std::vector<int64_t> extended_dims() const;
  // The values of the iteration indices `idx` followed by the symbols' values there.
  std::vector<int64_t> extended_index(std::span<const void* const> inputs,
                                      std::span<const int64_t> idx) const;
  // Checks the kernel is well formed: body inputs match the loads' dtypes then int64 per index
  // value then the row values' types, body outputs match the outputs' dtypes and sizes (and
  // each stage's its reducers'), every load stays inside its buffer over the whole space
  // (interval arithmetic on the affine forms). InternalError otherwise.
  void verify() const;
  // Merges adjacent dimensions wherever every affine form (and the row-major stores) treats
  // them as one, so an elementwise kernel becomes one dimension and a row broadcast two (outer
  // and inner dimensions never merge with each other).
  // Returns the simplified kernel (same semantics).
  Kernel collapsed() const;
  // The kernel without its name (what the code cache keys on) and with it.
  std::string signature_text() const;
  std::string text() const;
};

// Element i of a dense host buffer of dtype t, as a scalar value (a literal's value, a load).
scalar::ScalarValue read_element(const void* base, DType t, int64_t i);

// The reference semantics: runs the kernel point by point with scalar::evaluate on host
// buffers (inputs[k] has inputs()[k].size() elements of its dtype; outputs are written).
// Slow; for tests of the code generators.
void evaluate(const Kernel& k, std::span<const void* const> inputs, std::span<void* const> outputs);

}  // namespace tessera::compiler::kir
