// The staging trace: applying a primitive appends an equation to the jaxpr under construction
// (make_jaxpr, eval_shape, later jit). With partial evaluation on, equations whose inputs are all
// known (values foreign to this trace) run in the parent trace instead: that is how linearize
// keeps the primal computation eager and stages only the tangent (linear) part, and how
// linear_transpose extracts the linear part of a function.
#pragma once

#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "tessera/debug_info.h"
#include "tessera/jaxpr.h"
#include "trace/trace_util.h"

namespace tessera::trace {

class StagingTrace;

class StagingTracer final : public TracerFor<StagingTrace> {
 public:
  StagingTracer(std::shared_ptr<StagingTrace> t, Var v) : TracerFor(std::move(t)), var_(v) {}
  const Aval& aval() const override { return var_.aval(); }
  std::string str() const override;
  std::string origin() const override;
  const Var& var() const { return var_; }

 private:
  Var var_;
};

class StagingTrace final : public Trace, public std::enable_shared_from_this<StagingTrace> {
 public:
  StagingTrace(Trace* parent, bool partial_eval) : Trace(parent), partial_eval_(partial_eval) {}
  const char* kind() const override { return partial_eval_ ? "partial-eval" : "staging"; }
  bool partial_eval() const { return partial_eval_; }

  // A new input (invar) of the jaxpr and its tracer.
  Array new_arg(const Aval& aval);
  // The tracer of a var defined by an equation of this trace.
  Array tracer_for(const Var& v);
  bool is_own(const Array& a) const;
  // Names the staged function and its inputs in its tracers' concretization errors.
  void set_debug_info(std::shared_ptr<const DebugInfo> d) { debug_ = std::move(d); }
  // The positions of the invars `v` depends on (JAX's find_progenitors), ascending.
  std::vector<size_t> progenitor_inputs(const Var& v) const;
  const DebugInfo* debug_info() const { return debug_.get(); }

  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> args,
                                       const Params& params) override;
  // Appends `outs = p[params](args)` with the given output avals (no abstract eval), for
  // primitives whose output types are carried in their params.
  std::vector<Array> stage(const Primitive& p, std::span<const Array> args, const Params& params,
                           std::vector<Aval> out_avals);

  // The jaxpr computing `outs` from the args. Values foreign to the trace that it reads become
  // constvars (deduplicated; the ClosedJaxpr holds them), rank-0 concrete ones literals.
  ClosedJaxpr build(std::span<const Array> outs);

 private:
  Atom atom_for(const Array& a, std::string_view op);

  bool partial_eval_;
  std::shared_ptr<const DebugInfo> debug_;
  std::vector<Var> invars_;
  std::vector<JaxprEqn> eqns_;
  std::vector<Var> constvars_;
  std::vector<Array> consts_;
  std::unordered_map<const ArrayImpl*, Var> const_index_;
};

}  // namespace tessera::trace
