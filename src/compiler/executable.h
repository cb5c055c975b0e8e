// Executables: what `jit` runs. An executable is a flat list of thunks over numbered buffers —
// the arguments, every intermediate value and the results each have a buffer index — with
// execute(ExecContext&, buffers) as the one entry point, so later thunks (fused kernels, library
// calls, device launches on a stream, collectives) slot in without changing the driver.
//
// compile() lowers a const-free jaxpr: first the program passes (calls inlined, constants folded,
// dead code removed), then one thunk per equation. In this part every equation becomes an
// EagerThunk that runs its primitive's eager implementation with the avals abstract evaluation
// gave at compile time (no per-call shape inference); buffers are released after their last use.
// Compilation is deterministic: the same program gives the same executable text in every process.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::compiler {

// An operand of a thunk: a buffer, or a constant of the program (a jaxpr literal).
struct Operand {
  int32_t buffer = -1;  // >= 0: buffers[buffer]
  Array constant;       // when buffer < 0
};

class Thunk {
 public:
  virtual ~Thunk() = default;
  // Reads its operands from `buffers` and writes its results into them.
  virtual void execute(const ExecContext& ctx, std::vector<Array>& buffers) const = 0;
  // One line of the executable's text.
  virtual std::string text() const = 0;
};

// Runs one primitive's eager implementation (impl) on its operands.
class EagerThunk final : public Thunk {
 public:
  EagerThunk(const Primitive& p, Params params, std::vector<Operand> in, std::vector<int32_t> out,
             std::vector<Aval> out_avals);
  void execute(const ExecContext& ctx, std::vector<Array>& buffers) const override;
  std::string text() const override;

 private:
  const Primitive* prim_;
  Params params_;
  std::vector<Operand> in_;
  std::vector<int32_t> out_;  // -1: a result nothing reads
  std::vector<Aval> out_avals_;
};

class Executable {
 public:
  // The arguments in the order of the program's invars; returns the results in the order of
  // its outvars. Must run where eager evaluation does (at the bottom of the trace stack).
  std::vector<Array> execute(const ExecContext& ctx, std::span<const Array> args) const;
  // The executable plan: buffers, thunks in order, releases, results.
  std::string text() const;
  // The program after the passes (what the thunks were made from).
  const Jaxpr& program() const { return *program_; }
  size_t num_thunks() const { return thunks_.size(); }

 private:
  friend std::shared_ptr<const Executable> compile(const Jaxpr& j);
  std::shared_ptr<const Jaxpr> program_;
  std::vector<std::unique_ptr<Thunk>> thunks_;
  std::vector<std::vector<int32_t>> release_after_;  // per thunk: buffers read for the last time
  int32_t num_buffers_ = 0;
  std::vector<int32_t> in_buffers_;  // -1: an argument nothing reads
  std::vector<Aval> in_avals_;
  std::vector<Operand> outs_;
};

// The program passes, in order: inline_calls, fold_constants, ir::dce.
std::shared_ptr<const Jaxpr> optimize(const Jaxpr& j);
// Replaces every equation of a call primitive (register_call_primitive) by the equations of its
// jaxpr, recursively.
std::shared_ptr<const Jaxpr> inline_calls(const Jaxpr& j);
// Evaluates at compile time the effect-free equations whose operands are all literals and whose
// results are rank 0, replacing their results by literals.
std::shared_ptr<const Jaxpr> fold_constants(const Jaxpr& j);

// `p`'s equations evaluate params["jaxpr"] (const-free) on their operands: the inliner may
// splice them (jit registers itself; the compiler knows no primitive by name).
void register_call_primitive(const Primitive& p);
bool is_call_primitive(const Primitive& p);

// XLA's cost analysis of a program, as jax's Compiled.cost_analysis() reports it: floating-point
// operations and bytes read and written by its equations. Estimates by kind: an elementwise or
// other equation counts one operation per output element (a reduction one per input element);
// a contraction 2 * output elements * the contracted size (its dimension_numbers); an equation
// carrying a body counts the body (times `length` for loops that declare it).
struct CostAnalysis {
  double flops = 0;
  double bytes_accessed = 0;
};
CostAnalysis cost_analysis(const Jaxpr& j);

// The passes, then one EagerThunk per equation. `j` must have no constvars (hoist them).
std::shared_ptr<const Executable> compile(const Jaxpr& j);

}  // namespace tessera::compiler
