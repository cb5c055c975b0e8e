// The `jit` primitive (JAX's jit_p, formerly pjit_p): a call of a closed, const-free jaxpr that
// the eager path runs as a compiled executable (compiler/executable.h) and that every
// transformation sees as one equation.
//
// Operands: the hoisted closure constants, then the arguments. Params:
//   jaxpr          the const-free body,
//   name           the function's name (printed first, as JAX does),
// and, only when not default (absent = default, so the text shows them only then, as JAX's):
//   donated_invars one 0/1 flag per operand,
//   inline         true: staging inlines the call instead of binding it,
//   keep_unused    true: DCE keeps unused operands,
//   in_shardings / out_shardings / ctx_mesh   reserved for sharded jit (opaque).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive jit_p;  // "jit"

struct JitCallOptions {
  std::string name;
  std::vector<bool> donated;  // per operand (consts included); empty: none
  bool inline_call = false;
  bool keep_unused = false;
};
Params jit_params(std::shared_ptr<const Jaxpr> jaxpr, const JitCallOptions& options);
// The options of a jit equation's params.
JitCallOptions jit_options_of(const Params& params);

// bind(jit) of a const-free body on [consts..., operands...].
std::vector<Array> bind_jit(std::shared_ptr<const Jaxpr> body, std::span<const Array> operands,
                            const JitCallOptions& options);

// The number of executables compiled by jit's eager path so far (tests count compiles).
int64_t jit_compile_count();

void register_jit();

}  // namespace tessera::prims
