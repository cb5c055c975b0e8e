// The shared rules of call primitives (call_rules.h).
#include "prims/call_rules.h"

#include <algorithm>

#include "ir/passes/dce.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "tessera/errors.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

void check_call_operands(const char* op, std::string_view what, std::string_view name,
                         const Jaxpr& j, std::span<const Aval> in) {
  bool ok = j.constvars.empty() && j.invars.size() == in.size();
  for (size_t i = 0; ok && i < in.size(); ++i)
    ok = j.invars[i].aval().shape == in[i].shape && j.invars[i].aval().dtype == in[i].dtype;
  if (ok) return;
  std::string want, got;
  for (const Var& v : j.invars) want += (want.empty() ? "" : ", ") + v.aval().str();
  for (const Aval& a : in) got += (got.empty() ? "" : ", ") + a.str();
  throw TypeError(op_message(op, std::string(what) + std::string(name) + " takes (" + want + ")" +
                                     (j.constvars.empty() ? "" : " and constvars") +
                                     " but the call passes (" + got + ")"));
}

std::pair<std::vector<Array>, std::vector<Array>> call_jvp(const Jaxpr& body,
                                                           std::span<const Array> primals,
                                                           std::span<const Array> tangents,
                                                           const Rebind& rebind) {
  const size_t m = body.outvars.size();
  std::vector<bool> nz = trace::nonzero_mask(primals, tangents);
  trace::JvpJaxpr jj = trace::jvp_jaxpr(body, nz, std::vector<bool>(m, false));
  std::vector<Array> ops = trace::concat({jj.consts, primals});
  for (size_t i = 0; i < primals.size(); ++i)
    if (nz[i]) ops.push_back(tangents[i]);
  std::vector<Array> r = rebind(jj.jaxpr, ops);
  std::vector<Array> po(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(m)), to(m);
  size_t k = m;
  for (size_t i = 0; i < m; ++i)
    if (jj.out_nonzero[i]) to[i] = r[k++];
  return {std::move(po), std::move(to)};
}

std::vector<Array> call_transpose(const Jaxpr& body, std::span<const Array> cts,
                                  std::span<const Array> args, const Rebind& rebind) {
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
  std::vector<Array> r = rebind(tj.jaxpr, trace::concat({tj.consts, ops}));
  std::vector<Array> out(args.size());
  for (size_t i = 0, k = 0; i < args.size(); ++i)
    if (linear[i]) out[i] = r[k++];
  return out;
}

std::pair<std::vector<Array>, std::vector<int64_t>> call_batch(const Jaxpr& body,
                                                               std::span<const Array> args,
                                                               std::span<const int64_t> dims,
                                                               const Rebind& rebind) {
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
  std::vector<Array> outs = rebind(bj.jaxpr, trace::concat({bj.consts, ops}));
  return {std::move(outs), std::vector<int64_t>(body.outvars.size(), 0)};
}

std::pair<std::vector<bool>, std::optional<JaxprEqn>> call_dce(const std::vector<bool>& used,
                                                               const JaxprEqn& eqn,
                                                               bool keep_operands,
                                                               const CallParams& make_params) {
  const Jaxpr& body = *eqn.params.get<JaxprPtr>("jaxpr");
  const bool any = std::find(used.begin(), used.end(), true) != used.end();
  if (!any && eqn.effects.empty() && !keep_operands)
    return {std::vector<bool>(eqn.invars.size(), false), std::nullopt};
  auto [pruned, used_in] = ir::dce(body, used);
  if (keep_operands) used_in.assign(used_in.size(), true);
  Jaxpr nb = *pruned;
  nb.invars.clear();
  JaxprEqn ne = eqn;
  ne.invars.clear();
  for (size_t i = 0; i < body.invars.size(); ++i)
    if (used_in[i]) {
      nb.invars.push_back(pruned->invars[i]);
      ne.invars.push_back(eqn.invars[i]);
    }
  ne.outvars.clear();
  for (size_t i = 0; i < eqn.outvars.size(); ++i)
    if (used[i]) ne.outvars.push_back(eqn.outvars[i]);
  nb.cached_hash = 0;
  ne.params = make_params(intern(std::move(nb)), used_in);
  return {used_in, std::move(ne)};
}

}  // namespace tessera::prims
