// The differentiation and batching rules of `checkpoint` (checkpoint.h), each of which binds
// `checkpoint` again on a body transformed by the jaxpr-transformation layer
// (trace/jaxpr_transforms.h): linearize splits the body with the saveable policy
// (linearize_jaxpr_custom, JAX's partial_eval_jaxpr_custom), JVP, transpose and batching use
// jvp_jaxpr, transpose_jaxpr and batch_jaxpr.
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/call_rules.h"
#include "prims/checkpoint.h"
#include "tessera/errors.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

namespace {

const Jaxpr& body_of(const Params& params) { return *params.get<JaxprPtr>("jaxpr"); }

// The policy as the layer's Saveable predicate over equations.
trace::Saveable saveable_of(const CheckpointPolicy& policy) {
  return [policy](const JaxprEqn& e) {
    std::vector<Aval> avals;
    avals.reserve(e.invars.size());
    for (const Atom& x : e.invars) avals.push_back(atom_aval(x));
    return policy->saveable(*e.primitive, avals, e.params);
  };
}

// Binds checkpoint[differentiated=True] on a transformed body (call_rules.h's Rebind).
Rebind rebind(const Params& params) {
  CheckpointPolicy policy = policy_of(params);
  const bool prevent_cse = params.get_bool("prevent_cse");
  return [policy, prevent_cse](JaxprPtr body, std::span<const Array> ops) {
    return tessera::bind(remat_p, ops,
                         checkpoint_params(std::move(body), true, policy, prevent_cse));
  };
}

// bind(checkpoint) of a transformed body with the transformation's consts as leading operands.
std::vector<Array> bind_body(const JaxprPtr& body, std::span<const Array> consts,
                             std::span<const Array> operands, const Params& params) {
  std::vector<Array> ops = trace::concat({consts, operands});
  return tessera::bind(
      remat_p, ops,
      checkpoint_params(body, true, policy_of(params), params.get_bool("prevent_cse")));
}

}  // namespace

std::pair<std::vector<Array>, std::vector<Array>> remat_linearize(std::span<const Array> primals,
                                                                  std::span<const Array> tangents,
                                                                  const Params& params) {
  const Jaxpr& body = body_of(params);
  const size_t m = body.outvars.size();
  std::vector<bool> nz = trace::nonzero_mask(primals, tangents);
  trace::CustomLinearized s = trace::linearize_jaxpr_custom(body, nz, std::vector<bool>(m, false),
                                                            saveable_of(policy_of(params)));
  // The known part binds on primals alone: it runs now, in the parent trace.
  std::vector<Array> kin = trace::concat({s.known_consts, primals});
  std::vector<Array> kout = eval_jaxpr(*s.known, {}, kin);
  std::vector<Array> outs(kout.begin(), kout.begin() + static_cast<std::ptrdiff_t>(m));
  std::vector<Array> tan_outs(m);
  if (!s.staged->outvars.empty()) {
    std::vector<Array> ops;
    for (int64_t i : s.staged_inputs) ops.push_back(kin[i]);
    ops.insert(ops.end(), kout.begin() + static_cast<std::ptrdiff_t>(m), kout.end());
    for (size_t i = 0; i < tangents.size(); ++i)
      if (nz[i]) ops.push_back(tangents[i]);
    // Touches the tangents: staged into the linear jaxpr as one equation.
    std::vector<Array> t = bind_body(s.staged, s.staged_consts, ops, params);
    size_t k = 0;
    for (size_t i = 0; i < m; ++i)
      if (s.out_nonzero[i]) tan_outs[i] = t[k++];
  }
  return {std::move(outs), std::move(tan_outs)};
}

std::pair<std::vector<Array>, std::vector<Array>> remat_jvp(std::span<const Array> primals,
                                                            std::span<const Array> tangents,
                                                            const Params& params) {
  return call_jvp(body_of(params), primals, tangents, rebind(params));
}

std::vector<Array> remat_transpose(std::span<const Array> cts, std::span<const Array> args,
                                   std::span<const Aval>, const Params& params) {
  // Linear in its undefined operands; the others are evaluated forward (the recomputation)
  // before the backward pass.
  return call_transpose(body_of(params), cts, args, rebind(params));
}

std::pair<std::vector<Array>, std::vector<int64_t>> remat_batch(const BatchAxis&,
                                                                std::span<const Array> args,
                                                                std::span<const int64_t> dims,
                                                                const Params& params) {
  const bool differentiated = params.get_bool("differentiated");
  CheckpointPolicy policy = policy_of(params);
  const bool prevent_cse = params.get_bool("prevent_cse");
  return call_batch(body_of(params), args, dims, [=](JaxprPtr body, std::span<const Array> ops) {
    return tessera::bind(remat_p, ops,
                         checkpoint_params(std::move(body), differentiated, policy, prevent_cse));
  });
}

}  // namespace tessera::prims
