// The differentiation and batching rules of `checkpoint` (checkpoint.h), each of which binds
// `checkpoint` again on a body transformed by the jaxpr-transformation layer
// (trace/jaxpr_transforms.h): linearize splits the body with the saveable policy
// (linearize_jaxpr_custom, JAX's partial_eval_jaxpr_custom), JVP, transpose and batching use
// jvp_jaxpr, transpose_jaxpr and batch_jaxpr.
#include "prims/ad_util.h"
#include "prims/batch_util.h"
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
  const Jaxpr& body = body_of(params);
  const size_t m = body.outvars.size();
  std::vector<bool> nz = trace::nonzero_mask(primals, tangents);
  trace::JvpJaxpr jj = trace::jvp_jaxpr(body, nz, std::vector<bool>(m, false));
  std::vector<Array> ops(primals.begin(), primals.end());
  for (size_t i = 0; i < primals.size(); ++i)
    if (nz[i]) ops.push_back(tangents[i]);
  std::vector<Array> r = bind_body(jj.jaxpr, jj.consts, ops, params);
  std::vector<Array> po(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(m)), to(m);
  size_t k = m;
  for (size_t i = 0; i < m; ++i)
    if (jj.out_nonzero[i]) to[i] = r[k++];
  return {std::move(po), std::move(to)};
}

std::vector<Array> remat_transpose(std::span<const Array> cts, std::span<const Array> args,
                                   std::span<const Aval>, const Params& params) {
  const Jaxpr& body = body_of(params);
  // Linear in its undefined operands; the others are evaluated forward (the recomputation)
  // before the backward pass.
  std::vector<bool> linear(args.size());
  std::vector<Array> ops;
  for (size_t i = 0; i < args.size(); ++i) {
    linear[i] = !args[i].defined();
    if (!linear[i]) ops.push_back(args[i]);
  }
  for (size_t k = 0; k < body.outvars.size(); ++k) {
    const Aval& want = atom_aval(body.outvars[k]);
    Array c = k < cts.size() ? cts[k] : Array();
    ops.push_back(ad::instantiate(c, Aval{want.shape, want.dtype, false}));
  }
  trace::Staged tj = trace::transpose_jaxpr(body, linear);
  std::vector<Array> r = bind_body(tj.jaxpr, tj.consts, ops, params);
  std::vector<Array> out(args.size());
  for (size_t i = 0, k = 0; i < args.size(); ++i)
    if (linear[i]) out[i] = r[k++];
  return out;
}

std::pair<std::vector<Array>, std::vector<int64_t>> remat_batch(const BatchAxis&,
                                                                std::span<const Array> args,
                                                                std::span<const int64_t> dims,
                                                                const Params& params) {
  const Jaxpr& body = body_of(params);
  const int64_t size = batching::batch_size(args, dims);
  // Batch axes first, then the body vmapped with every output batched.
  std::vector<bool> batched(args.size());
  std::vector<Array> ops;
  for (size_t i = 0; i < args.size(); ++i) {
    batched[i] = dims[i] != batching::kNotMapped;
    ops.push_back(batched[i] ? batching::move_axis(args[i], dims[i], 0) : args[i]);
  }
  trace::BatchedJaxpr bj =
      trace::batch_jaxpr(body, batched, size, std::vector<bool>(body.outvars.size(), true));
  std::vector<Array> all = trace::concat({bj.consts, ops});
  std::vector<Array> outs =
      tessera::bind(remat_p, all,
                    checkpoint_params(bj.jaxpr, params.get_bool("differentiated"),
                                      policy_of(params), params.get_bool("prevent_cse")));
  return {std::move(outs), std::vector<int64_t>(body.outvars.size(), 0)};
}

}  // namespace tessera::prims
