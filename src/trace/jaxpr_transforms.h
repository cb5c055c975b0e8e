// The jaxpr transformations: the one layer that every primitive carrying a sub-jaxpr (scan,
// while, cond, checkpoint, custom_jvp/custom_vjp calls, reduce) builds its rules on, as JAX's
// ad.jvp_jaxpr, batching.batch_jaxpr, pe.partial_eval_jaxpr_nounits and
// pe.partial_eval_jaxpr_custom. Families keep their rules and call these; none of them builds a
// trace by hand.
//
// Conventions. A sub-jaxpr held in a param has no constvars: values a body closes over are
// hoisted to leading operands of the equation (num_consts; `stage` and `hoist_consts` do it).
// Tangents follow the AD rules: a "nonzero" flag per input says whether a tangent is passed for
// it (integer/bool inputs never are, trace/tangents.h nonzero_mask computes the flags); outputs
// report which tangents are nonzero. Loops find their carry masks by iterating these functions to
// a fixed point (a carry is nonzero/batched when its input is, or when the body makes it so).
//
// Files: jaxpr_stage.cpp (staging and helpers), jaxpr_ad.cpp (jvp, linearize, transpose),
// jaxpr_batch.cpp (batching), jaxpr_pe.cpp (known/unknown splits and the saveable policy split).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tessera/debug_info.h"
#include "tessera/flat_fun.h"
#include "tessera/jaxpr.h"

namespace tessera::trace {

using JaxprPtr = std::shared_ptr<const Jaxpr>;
using flat::Fun;

// ---- Staging. ----
// f staged on abstract arguments of the given avals into a closed jaxpr (make_jaxpr's core):
// values f closes over become constvars (rank-0 concrete ones literals). `debug` (optional)
// names f and its inputs in the concretization errors of its tracers.
ClosedJaxpr stage_closed(const Fun& f, std::span<const Aval> in_avals,
                         std::shared_ptr<const DebugInfo> debug = nullptr);

// A const-free jaxpr and the values it closed over (to pass as its leading operands).
struct Staged {
  JaxprPtr jaxpr;  // invars: the hoisted consts, then the function's arguments
  std::vector<Array> consts;
  // The jaxpr, for a rule that needs a const-free one (see require_no_consts).
  const JaxprPtr& const_free(const char* op) const;
};
// A closed jaxpr with its constvars turned into its leading invars.
Staged hoist_consts(const ClosedJaxpr& c);
// stage_closed, then hoist_consts. Closed-over arrays (concrete or tracers of enclosing traces)
// become the leading invars; `consts` holds them.
Staged stage(const Fun& f, std::span<const Aval> in_avals,
             std::shared_ptr<const DebugInfo> debug = nullptr);

// A const-free jaxpr as a function that binds its equations through the current trace.
Fun as_fun(JaxprPtr j);

// The avals of a jaxpr's invars / outvars.
std::vector<Aval> in_avals(const Jaxpr& j);
std::vector<Aval> out_avals(const Jaxpr& j);

// ---- Transformations of functions, for rules that hold a user's function (custom_jvp rules,
// reduce bodies). ----
// f's JVP under the current trace: tangents undefined = symbolic zero, in and out (integer/bool
// outputs always get undefined tangents).
std::pair<std::vector<Array>, std::vector<Array>> jvp_fun(const Fun& f,
                                                          std::span<const Array> primals,
                                                          std::span<const Array> tangents);
// f vmapped over args batched at dims (-1 = unbatched) with a batch axis of `size`; every
// output is batched at axis 0 (broadcast when f's output does not depend on a batched input).
std::vector<Array> batch_fun(const Fun& f, std::span<const Array> args,
                             std::span<const int64_t> dims, int64_t size);

// ---- JVP. ----
struct JvpJaxpr {
  JaxprPtr jaxpr;  // invars: consts, primals, then tangents of the nonzero inputs;
                   // outvars: primal outs, then tangents of the out_nonzero outputs
  std::vector<bool> out_nonzero;
  // Values the JVP closed over (a custom_jvp rule's captures): the jaxpr's leading invars.
  std::vector<Array> consts;
  const JaxprPtr& const_free(const char* op) const;  // as Staged's
};
// The JVP of a const-free jaxpr. An output's tangent is passed when it is nonzero or
// `instantiate[i]` (then zeros are materialized); instantiate is ignored for outputs without
// tangents (integer/bool). nonzero must be false for inputs without tangents.
JvpJaxpr jvp_jaxpr(const Jaxpr& j, const std::vector<bool>& nonzero,
                   const std::vector<bool>& instantiate);

// ---- Batching. ----
struct BatchedJaxpr {
  JaxprPtr jaxpr;  // invars: consts, then j's; the batched inputs/outputs carry a leading axis
  std::vector<bool> out_batched;
  std::vector<Array> consts;  // values the batched rules closed over (leading invars)
  const JaxprPtr& const_free(const char* op) const;  // as Staged's
};
// j vmapped over the inputs flagged `batched` (their batch axis first). An output is batched
// when it depends on a batched input or when force_out_batched[i] (then it is broadcast).
BatchedJaxpr batch_jaxpr(const Jaxpr& j, const std::vector<bool>& batched, int64_t size,
                         const std::vector<bool>& force_out_batched);

// ---- Linearize: the known/linear split. ----
struct LinearizedJaxpr {
  // Primal part: invars = [known_consts..., j's invars...];
  // outvars = [j's outputs..., residuals...].
  JaxprPtr known;
  std::vector<Array> known_consts;  // concrete values the primal part closed over
  // Linear part: invars = [lin_consts..., residuals..., tangents of the nonzero inputs...];
  // outvars = the tangents of the out_nonzero outputs. Linear in the tangents.
  JaxprPtr lin;
  std::vector<Array> lin_consts;  // concrete values the linear part closed over (non-linear)
  std::vector<Aval> res_avals;
  // Per residual: the index of j's invar it is (a forwarded input, e.g. a loop constant that
  // a loop need not stack), or -1 when the primal part computes it.
  std::vector<int64_t> res_input;
  std::vector<bool> out_nonzero;
};
// Splits JVP(j) at `nonzero` into the part that runs on primals now and saves residuals, and
// the linear part that the tangent trace stages (and that transpose runs backwards).
// instantiate as in jvp_jaxpr.
LinearizedJaxpr linearize_jaxpr(const Jaxpr& j, const std::vector<bool>& nonzero,
                                const std::vector<bool>& instantiate);

// ---- Transpose. ----
// For a jaxpr linear in the invars flagged `linear` (the others are non-linear operands, such
// as residuals): the jaxpr with invars [non-linear invars in order..., cotangents of every
// output...] and outvars the cotangents of the linear invars in order (zeros materialized
// where no path reaches them). The result's consts (values transpose rules closed over) are
// its leading invars.
Staged transpose_jaxpr(const Jaxpr& j, const std::vector<bool>& linear);

// ---- Partial evaluation: the known/unknown split of a jaxpr (no tracing). ----
struct PartialEval {
  // invars: j's known invars in order; outvars: the known outputs (out_unknown false) in order,
  // then the residuals.
  JaxprPtr known;
  // invars: the residuals, then j's unknown invars in order; outvars: the unknown outputs.
  JaxprPtr unknown;
  std::vector<bool> out_unknown;
  size_t num_res = 0;
};
// An equation is unknown when it reads an unknown value or has effects (effects stay where
// they run, in order); residuals are the known values the unknown side reads. An output is
// unknown when its value is, or when instantiate[i] (then it is a residual passed through).
// Equations carrying sub-jaxprs are split as a whole (known only when all their inputs are).
// What loops use to hoist loop-invariant work: with a body's constants known and its carry and
// xs unknown, the known part is what every iteration computes alike.
PartialEval partial_eval_jaxpr_nounits(const Jaxpr& j, const std::vector<bool>& in_unknown,
                                       const std::vector<bool>& instantiate);

// ---- The saveable split of a linearization (what remat needs). ----
// Whether the value an equation computes may be saved as a residual (JAX's saveable policy,
// asked of the equations of the primal part). Effectful equations are always saved.
using Saveable = std::function<bool(const JaxprEqn&)>;
struct CustomLinearized {
  // Primal part: invars = [known_consts..., j's invars...];
  // outvars = [j's outputs..., saved residuals...].
  JaxprPtr known;
  std::vector<Array> known_consts;
  size_t num_res = 0;
  // Staged part: invars = [staged_consts..., the known invars it reads (indices into the known
  // part's invars in `staged_inputs`)..., saved residuals..., tangents of the nonzero
  // inputs...]; outvars = the tangents of the out_nonzero outputs. It holds the recomputed
  // equations of the primal part (those whose values the policy would not save), then the
  // linear ones: evaluating it recomputes, and transposing it evaluates the recomputation
  // before the backward pass.
  JaxprPtr staged;
  std::vector<Array> staged_consts;  // concrete values the linear part closed over
  std::vector<int64_t> staged_inputs;
  std::vector<bool> out_nonzero;
};
// linearize_jaxpr, then JAX's partial_eval_jaxpr_custom over its residuals: a residual whose
// producing equation is not saveable is recomputed on the staged side, and that equation's own
// inputs are resolved the same way (the known part's invars are always available).
CustomLinearized linearize_jaxpr_custom(const Jaxpr& j, const std::vector<bool>& nonzero,
                                        const std::vector<bool>& instantiate,
                                        const Saveable& saveable);

// ---- Helpers for rules. ----
// InternalError naming `op` when a transformed body closed over values (the loop and cond rules
// need const-free bodies: every branch and iteration shares one operand list).
void require_no_consts(const std::vector<Array>& consts, const char* op);
// Elementwise or of two masks of equal length.
std::vector<bool> mask_or(const std::vector<bool>& a, const std::vector<bool>& b);
// The entries of xs whose flag is set.
std::vector<Array> select(std::span<const Array> xs, const std::vector<bool>& mask);
// Concatenation of spans of arrays.
std::vector<Array> concat(std::initializer_list<std::span<const Array>> parts);

}  // namespace tessera::trace
