// Lowering rules: how a primitive family turns one of its equations into a thunk when running
// its eager implementation on the equation's params is not the plan — control flow, whose
// bodies (scan's and while's jaxprs, cond's branches) become nested executables, compiled once
// with the enclosing program and run per step with no abstract evaluation and no dispatch.
// Families register rules for their primitives (the compiler knows no primitive by name); an
// equation without one becomes an EagerThunk.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compiler/executable.h"

namespace tessera::compiler {

// What a lowering rule makes of one equation.
struct LoweredEqn {
  // Runs the equation on its operands (in the order of its invars), returning its results.
  std::function<std::vector<Array>(const ExecContext&, std::span<const Array>)> run;
  // The nested executables it runs, named for the executable's text ("body", "cond",
  // "branch 0"); their programs replace the jaxpr-valued params in the text.
  std::vector<std::pair<std::string, std::shared_ptr<const Executable>>> nested;
};

using LoweringRule = std::function<LoweredEqn(const JaxprEqn&)>;

void register_lowering(const Primitive& p, LoweringRule rule);
// The rule registered for p, or null.
const LoweringRule* lowering_rule(const Primitive& p);

// Runs a family's equation through a nested executable: the body function a loop or a branch
// calls with its operands (args in the order of the body's invars).
using BodyFn = std::function<std::vector<Array>(std::span<const Array>)>;
BodyFn executable_body(std::shared_ptr<const Executable> exe, const ExecContext& ctx);

}  // namespace tessera::compiler
