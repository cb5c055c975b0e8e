// Staging functions into const-free jaxprs, and the helpers of jaxpr_transforms.h.
#include <string>

#include "tessera/errors.h"
#include "trace/jaxpr_transforms.h"
#include "trace/staging_trace.h"

namespace tessera::trace {

ClosedJaxpr stage_closed(const Fun& f, std::span<const Aval> avals,
                         std::shared_ptr<const DebugInfo> debug) {
  auto st = std::make_shared<StagingTrace>(current_trace(), /*partial_eval=*/false);
  st->set_debug_info(std::move(debug));
  TraceLifetime life(st.get());
  std::vector<Array> xs;
  xs.reserve(avals.size());
  for (const Aval& a : avals) xs.push_back(st->new_arg(a));
  std::vector<Array> outs;
  {
    TraceScope scope(st.get());
    outs = f(xs);
  }
  return st->build(outs);
}

Staged hoist_consts(const ClosedJaxpr& c) {
  Jaxpr j = *c.jaxpr;
  std::vector<Var> invars = j.constvars;
  invars.insert(invars.end(), j.invars.begin(), j.invars.end());
  j.invars = std::move(invars);
  j.constvars.clear();
  j.cached_hash = 0;
  return {intern(std::move(j)), c.consts};
}

Staged stage(const Fun& f, std::span<const Aval> avals, std::shared_ptr<const DebugInfo> debug) {
  return hoist_consts(stage_closed(f, avals, std::move(debug)));
}

Fun as_fun(JaxprPtr j) {
  return [j = std::move(j)](std::span<const Array> xs) { return eval_jaxpr(*j, {}, xs); };
}

std::vector<Aval> in_avals(const Jaxpr& j) {
  std::vector<Aval> out;
  out.reserve(j.invars.size());
  for (const Var& v : j.invars) out.push_back(v.aval());
  return out;
}

std::vector<Aval> out_avals(const Jaxpr& j) {
  std::vector<Aval> out;
  out.reserve(j.outvars.size());
  for (const Atom& a : j.outvars) out.push_back(atom_aval(a));
  return out;
}

void require_no_consts(const std::vector<Array>& consts, const char* op) {
  if (!consts.empty())
    throw_internal(op, "a transformed body captured " + std::to_string(consts.size()) +
                           " array(s); rules must build values with lax ops");
}

const JaxprPtr& Staged::const_free(const char* op) const {
  require_no_consts(consts, op);
  return jaxpr;
}
const JaxprPtr& JvpJaxpr::const_free(const char* op) const {
  require_no_consts(consts, op);
  return jaxpr;
}
const JaxprPtr& BatchedJaxpr::const_free(const char* op) const {
  require_no_consts(consts, op);
  return jaxpr;
}

std::vector<bool> mask_or(const std::vector<bool>& a, const std::vector<bool>& b) {
  if (a.size() != b.size()) throw_internal("jaxpr_transforms", "mask_or: sizes differ");
  std::vector<bool> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] || b[i];
  return out;
}

std::vector<Array> select(std::span<const Array> xs, const std::vector<bool>& mask) {
  std::vector<Array> out;
  for (size_t i = 0; i < xs.size() && i < mask.size(); ++i)
    if (mask[i]) out.push_back(xs[i]);
  return out;
}

std::vector<Array> concat(std::initializer_list<std::span<const Array>> parts) {
  std::vector<Array> out;
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace tessera::trace
