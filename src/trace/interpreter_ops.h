// The interpreters compute with three array operations of their own (add for cotangent
// accumulation, broadcast_in_dim for zeros, transpose for moving a batch axis). They are the lax
// wrappers', installed into the interpreter layer by the primitive registry (register_all), as
// JAX's lax registers aval_zeros_likers and add_jaxvals' implementation: the interpreters bind
// primitives through these entries and include nothing above their layer.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/array.h"

namespace tessera::trace {

struct InterpreterOps {
  Array (*add)(const Array&, const Array&) = nullptr;
  Array (*broadcast_in_dim)(const Array&, const Shape&, const std::vector<int64_t>&) = nullptr;
  Array (*transpose)(const Array&, const std::vector<int64_t>&) = nullptr;
};
// Installed once by register_all() (the registry's owner, above this layer).
void install_interpreter_ops(const InterpreterOps& ops);
// The installed operations (runs register_all() first, so they are always set).
const InterpreterOps& interpreter_ops();

}  // namespace tessera::trace
