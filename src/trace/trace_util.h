// Shared pieces of the traces: tracers that hold their trace, the lifting of arguments
// (own tracer / foreign value / leaked tracer) and the scope that ends a trace.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/array.h"
#include "tessera/errors.h"
#include "tessera/primitive.h"

namespace tessera::trace {

// A tracer that keeps its trace alive (the trace may end first; then the tracer is leaked).
template <class TraceT>
class TracerFor : public Tracer {
 public:
  explicit TracerFor(std::shared_ptr<TraceT> t) : trace_(std::move(t)) {}
  uint64_t trace_tag() const override { return trace_->tag(); }
  Trace* trace() const override { return trace_.get(); }
  TraceT* owner() const { return trace_.get(); }

 protected:
  std::shared_ptr<TraceT> trace_;
};

// Raises UnexpectedTracerError when `a` is a tracer whose trace has ended.
void check_not_leaked(const Array& a, std::string_view op);

// The tracer of `a` when it belongs to trace `t`, else null (a value foreign to t: a concrete
// array or a tracer of an enclosing trace, which t treats as a constant). Leaked tracers raise.
template <class TracerT>
const TracerT* own_tracer(const Array& a, const Trace* t, std::string_view op) {
  if (!a.defined() || !a.is_tracer()) return nullptr;
  if (a.tracer()->trace() == t) return static_cast<const TracerT*>(a.tracer());
  check_not_leaked(a, op);
  return nullptr;
}

// Ends a trace when the transformation's scope ends (also on unwinding).
class TraceLifetime {
 public:
  explicit TraceLifetime(Trace* t) : t_(t) {}
  ~TraceLifetime() { t_->invalidate(); }
  TraceLifetime(const TraceLifetime&) = delete;
  TraceLifetime& operator=(const TraceLifetime&) = delete;

 private:
  Trace* t_;
};

// Binds p in `t` (made current for the call).
std::vector<Array> bind_in(Trace* t, const Primitive& p, std::span<const Array> args,
                           const Params& params);

}  // namespace tessera::trace
