// Executables: what `jit` runs. An executable is a flat list of thunks over numbered buffers —
// the arguments, every intermediate value and the results each have a buffer index — with
// execute(ExecContext&, buffers) as the one entry point, so later thunks (fused kernels, library
// calls, device launches on a stream, collectives) slot in without changing the driver.
//
// compile() lowers a const-free jaxpr: first the program passes (compiler/pipeline.h: calls
// inlined, constants folded, common subexpressions merged, dead code removed), then one thunk per
// equation. An equation whose family registered a
// lowering rule (compiler/lowering.h: control flow) becomes a LoweredThunk over nested
// executables compiled here once; every other one an EagerThunk that runs its primitive's eager
// implementation with the avals abstract evaluation gave at compile time (no per-call shape
// inference). Buffers are released after their last use.
// Compilation is deterministic: the same program gives the same executable text in every process.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compiler/passes/inline_calls.h"
#include "compiler/pipeline.h"
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

class Executable;

// Runs an equation lowered by its family's rule (compiler/lowering.h): control flow over
// nested executables.
class LoweredThunk final : public Thunk {
 public:
  LoweredThunk(const JaxprEqn& eqn,
               std::function<std::vector<Array>(const ExecContext&, std::span<const Array>)> run,
               std::vector<std::pair<std::string, std::shared_ptr<const Executable>>> nested,
               std::vector<Operand> in, std::vector<int32_t> out);
  void execute(const ExecContext& ctx, std::vector<Array>& buffers) const override;
  std::string text() const override;

 private:
  const Primitive* prim_;
  Params params_;  // for the text
  std::function<std::vector<Array>(const ExecContext&, std::span<const Array>)> run_;
  std::vector<std::pair<std::string, std::shared_ptr<const Executable>>> nested_;
  std::vector<Operand> in_;
  std::vector<int32_t> out_;
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

// XLA's cost analysis of a program, as jax's Compiled.cost_analysis() reports it: floating-point
// operations and bytes read and written by its equations. Estimates by kind: an elementwise or
// other equation counts one operation per output element (a reduction one per input element);
// a contraction 2 * output elements * the contracted size (its dimension_numbers); an equation
// carrying a body counts the body (times `length` for loops that declare it). A fused kernel
// (fusion.h) reads its inputs and writes its outputs once — its members' values never reach
// memory — and is also counted on its own in `kernels`.
struct KernelCost {
  std::string name;  // "fusion.0"
  double flops = 0;
  double bytes_accessed = 0;
};
struct CostAnalysis {
  double flops = 0;
  double bytes_accessed = 0;
  std::vector<KernelCost> kernels;  // the top-level program's fused kernels
};
CostAnalysis cost_analysis(const Jaxpr& j);

// The passes, then one thunk per equation. `j` must have no constvars (hoist them).
std::shared_ptr<const Executable> compile(const Jaxpr& j);

}  // namespace tessera::compiler
