// The `checkpoint` primitive (JAX's remat_p) and `name` (checkpoint_name's name_p).
//
// checkpoint: operands = hoisted closure constants then the arguments; params
//   jaxpr           the const-free body,
//   differentiated  false when the user staged it, true for the equations its rules produce,
//   policy          a RematPolicy (printed by name; `None` = nothing saveable),
//   prevent_cse     kept for compilers.
// Its linearize rule (checkpoint_pe.cpp, on trace::linearize_jaxpr_custom) is the point of
// remat: the body is linearized, the policy decides which of the values the tangent side needs are
// saved as residuals, and the others are recomputed inside one staged
// `checkpoint[differentiated=True]` equation of the linear jaxpr, whose transpose evaluates the
// recomputation before the backward pass.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tessera/checkpoint.h"
#include "tessera/jaxpr.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive remat_p;  // "checkpoint"
extern Primitive name_p;   // "name"

using JaxprPtr = std::shared_ptr<const Jaxpr>;

// The policy of a checkpoint equation's params (never null: the default policy prints None).
CheckpointPolicy policy_of(const Params& params);
// A null policy becomes the shared default (`None`).
CheckpointPolicy policy_or_default(CheckpointPolicy p);
Params checkpoint_params(JaxprPtr jaxpr, bool differentiated, CheckpointPolicy policy,
                         bool prevent_cse);

// The linearize, jvp, transpose and batch rules of remat_p.
std::pair<std::vector<Array>, std::vector<Array>> remat_linearize(std::span<const Array> primals,
                                                                  std::span<const Array> tangents,
                                                                  const Params& params);
std::pair<std::vector<Array>, std::vector<Array>> remat_jvp(std::span<const Array> primals,
                                                            std::span<const Array> tangents,
                                                            const Params& params);
std::vector<Array> remat_transpose(std::span<const Array> cts, std::span<const Array> args,
                                   std::span<const Aval> arg_avals, const Params& params);
std::pair<std::vector<Array>, std::vector<int64_t>> remat_batch(const BatchAxis&,
                                                                std::span<const Array> args,
                                                                std::span<const int64_t> dims,
                                                                const Params& params);

void register_checkpoint();

}  // namespace tessera::prims
