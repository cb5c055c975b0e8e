// Transformations of sub-jaxprs shared by the primitives that carry them (scan, while, cond,
// checkpoint): staging a function into a const-free jaxpr, and the jaxpr-to-jaxpr forms of JVP,
// batching, linearize (known/linear split) and transpose that their rules are built from.
//
// Conventions. Every sub-jaxpr held in a param has no constvars: values a body closes over are
// hoisted to leading operands of the equation (num_consts). Tangents follow the AD rules: a
// "nonzero" flag per input says whether a tangent is passed for it (integer/bool inputs never
// are); outputs report which tangents are nonzero. Loops find their carry masks by iterating
// these functions to a fixed point (a carry is nonzero/batched when its input is, or when the
// body makes it so).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tessera/jaxpr.h"
#include "tessera/transforms_flat.h"

namespace tessera::prims::cf {

using JaxprPtr = std::shared_ptr<const Jaxpr>;

// A const-free jaxpr and the values it closed over (to pass as its leading operands).
struct Staged {
  JaxprPtr jaxpr;  // invars: the hoisted consts, then the function's arguments
  std::vector<Array> consts;
};

// Stages f on arguments of the given avals (values are not used). Closed-over arrays (concrete
// or tracers of enclosing traces) become the leading invars; `consts` holds them.
Staged stage(const flat::Fun& f, std::span<const Aval> in_avals);

// A const-free jaxpr as a function that binds its equations through the current trace.
flat::Fun as_fun(JaxprPtr j);

// The avals of a jaxpr's invars / outvars.
std::vector<Aval> in_avals(const Jaxpr& j);
std::vector<Aval> out_avals(const Jaxpr& j);

// The aval of the tangent of a value (float0 for integer/bool values).
Aval tangent_aval(const Aval& a);
// Whether values of this dtype carry tangents (floating and complex).
bool differentiable(const Aval& a);

// ---- JVP. ----
struct JvpJaxpr {
  JaxprPtr jaxpr;  // invars: primals, then tangents of the nonzero inputs;
                   // outvars: primal outs, then tangents of the out_nonzero outputs
  std::vector<bool> out_nonzero;
};
// The JVP of a const-free jaxpr. An output's tangent is passed when it is nonzero or
// `instantiate[i]` (then zeros are materialized); instantiate is ignored for outputs without
// tangents (integer/bool). nonzero must be false for inputs without tangents.
JvpJaxpr jvp_jaxpr(const Jaxpr& j, const std::vector<bool>& nonzero,
                   const std::vector<bool>& instantiate);

// ---- Batching. ----
struct BatchedJaxpr {
  JaxprPtr jaxpr;  // the batched inputs/outputs carry a leading axis of `size`
  std::vector<bool> out_batched;
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
// where no path reaches them).
JaxprPtr transpose_jaxpr(const Jaxpr& j, const std::vector<bool>& linear);

// ---- Helpers for rules. ----
// Elementwise or of two masks of equal length.
std::vector<bool> mask_or(const std::vector<bool>& a, const std::vector<bool>& b);
// The entries of xs whose flag is set.
std::vector<Array> select(std::span<const Array> xs, const std::vector<bool>& mask);
// Concatenation of spans of arrays.
std::vector<Array> concat(std::initializer_list<std::span<const Array>> parts);
// Effects of a jaxpr (equation effects are always declared by it).
inline const Effects& jaxpr_effects(const Jaxpr& j) { return j.effects; }

}  // namespace tessera::prims::cf
