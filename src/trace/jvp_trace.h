// The JVP trace (forward mode) and, with a tangent staging trace, the linearize trace.
//
// A JVPTracer carries (primal, tangent); an undefined tangent is a symbolic zero, and values
// whose tangent is zero are returned untraced. process_primitive applies the primitive's JVP
// rule with `rule_trace` current:
//  - jvp: rule_trace is the parent, so primal and tangent ops both run in the parent;
//  - linearize ("direct linearize", as JAX): rule_trace is a partial-eval StagingTrace whose
//    parent is this trace's parent. Tangents are its tracers, so ops on primals alone run in
//    the parent now (the primal computation and the residuals) while ops that touch a tangent
//    are staged into the linear jaxpr that vjp transposes. A primitive with a VJP override is
//    not JVP'd: its override runs in the parent and a `custom_lin` equation holding the
//    backward function is staged instead.
#pragma once

#include <memory>

#include "trace/staging_trace.h"
#include "trace/trace_util.h"

namespace tessera::trace {

class JVPTrace;

class JVPTracer final : public TracerFor<JVPTrace> {
 public:
  JVPTracer(std::shared_ptr<JVPTrace> t, Array primal, Array tangent)
      : TracerFor(std::move(t)), primal_(std::move(primal)), tangent_(std::move(tangent)) {}
  const Aval& aval() const override { return primal_.aval(); }
  std::string str() const override;
  const Array& primal() const { return primal_; }
  const Array* concrete_value() const override {
    if (primal_.is_concrete()) return &primal_;
    return primal_.tracer()->concrete_value();
  }
  // The primal's origin (a jit around grad: the staged primal knows the arguments).
  std::string origin() const override {
    return primal_.is_tracer() ? primal_.tracer()->origin() : std::string();
  }
  const Array& tangent() const { return tangent_; }

 private:
  Array primal_;
  Array tangent_;  // undefined = zero
};

class JVPTrace final : public Trace, public std::enable_shared_from_this<JVPTrace> {
 public:
  // tangent_trace: null for jvp; for linearize a partial-eval StagingTrace whose parent is
  // `parent`.
  JVPTrace(Trace* parent, StagingTrace* tangent_trace)
      : Trace(parent), tangent_trace_(tangent_trace) {}
  const char* kind() const override { return tangent_trace_ ? "linearize" : "jvp"; }

  // A tracer for (primal, tangent), or the primal itself when the tangent is undefined.
  Array make(Array primal, Array tangent);
  // Splits a value into (primal, tangent) as seen by this trace (foreign: tangent undefined).
  std::pair<Array, Array> split(const Array& x, std::string_view op) const;

  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> args,
                                       const Params& params) override;

 private:
  std::vector<Array> process_override(const Primitive& p, std::span<const Array> primals,
                                      std::span<const Array> tangents, const Params& params);
  StagingTrace* tangent_trace_;
};

}  // namespace tessera::trace
