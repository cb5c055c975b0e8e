#include "trace/trace_util.h"

namespace tessera::trace {

void check_not_leaked(const Array& a, std::string_view op) {
  Trace* t = a.tracer()->trace();
  if (t == nullptr || !t->alive()) {
    throw UnexpectedTracerError(op_message(
        op, "encountered a tracer (" + a.tracer()->str() +
                ") outside the transformation that created it: it leaked out of the function "
                "being transformed (stored in a global, a captured variable or a side channel). "
                "Return it as an output of the function instead."));
  }
}

std::vector<Array> bind_in(Trace* t, const Primitive& p, std::span<const Array> args,
                           const Params& params) {
  TraceScope scope(t);
  return tessera::bind(p, args, params);
}

}  // namespace tessera::trace
