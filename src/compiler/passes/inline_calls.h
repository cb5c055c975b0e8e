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
#include <span>
#include <vector>

#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::compiler {

void register_call_primitive(const Primitive& p);
bool is_call_primitive(const Primitive& p);

std::shared_ptr<const Jaxpr> inline_calls(const Jaxpr& j);

// Appends the equations of `body` (const-free) applied to `args` to `out`, renaming every binder
// (a body may be spliced at several sites) and inlining call primitives in it; returns the atoms
// of its results. What inline_calls and the expansion pass build on.
std::vector<Atom> splice_body(const Jaxpr& body, std::span<const Atom> args,
                              std::vector<JaxprEqn>& out);

}  // namespace tessera::compiler
