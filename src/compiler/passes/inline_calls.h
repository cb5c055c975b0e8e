// Inlining of call primitives.
//
// What: every equation of a call primitive (one registered with register_call_primitive: its
// equations evaluate params["jaxpr"], const-free, on their operands — jit registers itself) is
// replaced by the equations of its jaxpr, recursively, with fresh binders per call site.
// Why: a nested jit is a boundary for tracing and caching, not for execution; inlined, its
// equations fuse and simplify with their neighbours and cost no call. The compiler knows no
// primitive by name: the families say which primitives are calls.
#pragma once

#include <memory>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::compiler {

void register_call_primitive(const Primitive& p);
bool is_call_primitive(const Primitive& p);

std::shared_ptr<const Jaxpr> inline_calls(const Jaxpr& j);

}  // namespace tessera::compiler
