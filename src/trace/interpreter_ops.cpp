// The operations installed into the interpreter layer (see interpreter_ops.h).
#include "trace/interpreter_ops.h"

#include "tessera/errors.h"
#include "tessera/primitive.h"

namespace tessera::trace {

namespace {
InterpreterOps g_ops;
}  // namespace

void install_interpreter_ops(const InterpreterOps& ops) { g_ops = ops; }

const InterpreterOps& interpreter_ops() {
  register_all();
  if (g_ops.add == nullptr || g_ops.broadcast_in_dim == nullptr || g_ops.transpose == nullptr)
    throw_internal("trace", "the interpreter operations were not installed by register_all()");
  return g_ops;
}

}  // namespace tessera::trace
