// The AD transformations of jaxprs: JVP, linearize (the known/linear split) and transpose
// (see jaxpr_transforms.h).
#include <string>
#include <unordered_map>

#include "tessera/errors.h"
#include "trace/backward_pass.h"
#include "trace/jaxpr_transforms.h"
#include "trace/jvp_trace.h"
#include "trace/staging_trace.h"
#include "trace/tangents.h"

namespace tessera::trace {

namespace {

// Stages f and insists that it closed over nothing (the transformations start from const-free
// jaxprs and only bind primitives, so a constant here is a bug in some rule).
JaxprPtr stage_const_free(const Fun& f, std::span<const Aval> avals, const char* what) {
  Staged s = stage(f, avals);
  if (!s.consts.empty())
    throw_internal("jaxpr_transforms",
                   std::string(what) + " captured " + std::to_string(s.consts.size()) +
                       " concrete array(s); rules must build values with lax ops");
  return s.jaxpr;
}

Aval non_weak(Aval a) {
  a.weak_type = false;
  return a;
}

}  // namespace

std::pair<std::vector<Array>, std::vector<Array>> jvp_fun(const Fun& f,
                                                          std::span<const Array> primals,
                                                          std::span<const Array> tangents) {
  auto jt = std::make_shared<JVPTrace>(current_trace(), nullptr);
  TraceLifetime life(jt.get());
  std::vector<Array> xs;
  xs.reserve(primals.size());
  for (size_t i = 0; i < primals.size(); ++i) {
    bool zero = i >= tangents.size() || zero_tangent(primals[i], tangents[i]);
    xs.push_back(zero ? primals[i] : jt->make(primals[i], tangents[i]));
  }
  std::vector<Array> outs;
  {
    TraceScope scope(jt.get());
    outs = f(xs);
  }
  std::vector<Array> po, to;
  for (const Array& o : outs) {
    auto [p, t] = jt->split(o, "jvp");
    to.push_back(has_tangent(p.dtype()) ? std::move(t) : Array());
    po.push_back(std::move(p));
  }
  return {std::move(po), std::move(to)};
}

JvpJaxpr jvp_jaxpr(const Jaxpr& j, const std::vector<bool>& nonzero,
                   const std::vector<bool>& instantiate) {
  const size_t n = j.invars.size(), m = j.outvars.size();
  if (nonzero.size() != n || instantiate.size() != m)
    throw_internal("jaxpr_transforms", "jvp_jaxpr: mask sizes do not match the jaxpr");
  std::vector<Aval> avals = in_avals(j);
  for (size_t i = 0; i < n; ++i)
    if (nonzero[i]) avals.push_back(tangent_aval(j.invars[i].aval()));
  std::vector<bool> out_nz(m, false);
  Fun f = [&](std::span<const Array> xs) {
    std::vector<Array> ts(n);
    for (size_t i = 0, k = n; i < n; ++i)
      if (nonzero[i]) ts[i] = xs[k++];
    auto [po, to] =
        jvp_fun([&j](std::span<const Array> ys) { return eval_jaxpr(j, {}, ys); }, xs.first(n), ts);
    for (size_t i = 0; i < m; ++i) {
      if (to[i].defined()) {
        out_nz[i] = true;
        po.push_back(std::move(to[i]));
      } else if (has_tangent(po[i].dtype()) && instantiate[i]) {
        out_nz[i] = true;
        po.push_back(zeros_like_aval(tangent_aval(po[i].aval())));
      }
    }
    return po;
  };
  Staged st = stage(f, avals);
  return {std::move(st.jaxpr), std::move(out_nz), std::move(st.consts)};
}

LinearizedJaxpr linearize_jaxpr(const Jaxpr& j, const std::vector<bool>& nonzero,
                                const std::vector<bool>& instantiate) {
  const size_t n = j.invars.size(), m = j.outvars.size();
  if (nonzero.size() != n || instantiate.size() != m)
    throw_internal("jaxpr_transforms", "linearize_jaxpr: mask sizes do not match the jaxpr");
  LinearizedJaxpr r;
  r.out_nonzero.assign(m, false);
  std::vector<bool> zero_out(m, false);  // instantiated zero tangents (added in a second pass)

  // The primal part is staged by S; the JVP runs with a partial-eval tangent trace on top of
  // it, so primal-only binds land in S and tangent binds in tt (exactly flat::linearize, one
  // level down).
  auto S = std::make_shared<StagingTrace>(current_trace(), /*partial_eval=*/false);
  TraceLifetime life_s(S.get());
  std::vector<Array> primals;
  std::unordered_map<uint64_t, int64_t> invar_index;  // S var id -> j invar index
  for (size_t i = 0; i < n; ++i) {
    Aval a = j.invars[i].aval();
    primals.push_back(S->new_arg(a));
    invar_index.emplace(static_cast<const StagingTracer*>(primals.back().tracer())->var().id(),
                        static_cast<int64_t>(i));
  }
  std::vector<Array> primal_outs;
  ClosedJaxpr lin;
  {
    TraceScope scope(S.get());
    auto tt = std::make_shared<StagingTrace>(S.get(), /*partial_eval=*/true);
    auto jt = std::make_shared<JVPTrace>(S.get(), tt.get());
    TraceLifetime life_j(jt.get());
    TraceLifetime life_t(tt.get());
    std::vector<Array> xs;
    for (size_t i = 0; i < n; ++i)
      xs.push_back(nonzero[i] ? jt->make(primals[i], tt->new_arg(tangent_aval(primals[i].aval())))
                              : primals[i]);
    std::vector<Array> outs;
    {
      TraceScope sj(jt.get());
      outs = eval_jaxpr(j, {}, xs);
    }
    std::vector<Array> lin_outs;
    for (size_t i = 0; i < m; ++i) {
      auto [p, t] = jt->split(outs[i], "linearize");
      bool diff = has_tangent(p.dtype());
      if (diff && t.defined() && tt->is_own(t)) {
        r.out_nonzero[i] = true;
        lin_outs.push_back(std::move(t));
      } else if (diff && instantiate[i]) {
        r.out_nonzero[i] = true;
        zero_out[i] = true;
      }
      primal_outs.push_back(std::move(p));
    }
    lin = tt->build(lin_outs);
  }

  // Residuals: the linear part's constants that S computes; concrete ones stay constants.
  Jaxpr lj = *lin.jaxpr;
  std::vector<Var> concrete_vars, res_vars;
  std::vector<Array> residuals;
  for (size_t k = 0; k < lin.consts.size(); ++k) {
    const Array& c = lin.consts[k];
    if (S->is_own(c)) {
      res_vars.push_back(lj.constvars[k]);
      residuals.push_back(c);
      r.res_avals.push_back(c.aval());
      auto id = static_cast<const StagingTracer*>(c.tracer())->var().id();
      auto it = invar_index.find(id);
      r.res_input.push_back(it == invar_index.end() ? -1 : it->second);
    } else {
      concrete_vars.push_back(lj.constvars[k]);
      r.lin_consts.push_back(c);
    }
  }
  std::vector<Array> known_outs = primal_outs;
  known_outs.insert(known_outs.end(), residuals.begin(), residuals.end());
  auto [known, known_consts] = hoist_consts(S->build(known_outs));
  r.known = std::move(known);
  r.known_consts = std::move(known_consts);

  // The linear part as a const-free jaxpr [lin_consts, residuals, tangents] -> tangents, with
  // the instantiated zero tangents added.
  std::vector<Var> tangent_vars = lj.invars;
  lj.invars = concrete_vars;
  lj.invars.insert(lj.invars.end(), res_vars.begin(), res_vars.end());
  lj.invars.insert(lj.invars.end(), tangent_vars.begin(), tangent_vars.end());
  lj.constvars.clear();
  lj.cached_hash = 0;
  auto core = std::make_shared<const Jaxpr>(std::move(lj));
  std::vector<Aval> lin_avals = in_avals(*core);
  std::vector<Aval> want = out_avals(j);
  flat::Fun f = [&](std::span<const Array> xs) {
    std::vector<Array> t = eval_jaxpr(*core, {}, xs);
    std::vector<Array> out;
    size_t k = 0;
    for (size_t i = 0; i < m; ++i) {
      if (!r.out_nonzero[i]) continue;
      out.push_back(zero_out[i] ? zeros_like_aval(tangent_aval(want[i])) : t[k++]);
    }
    return out;
  };
  r.lin = stage_const_free(f, lin_avals, "linearize_jaxpr");
  return r;
}

Staged transpose_jaxpr(const Jaxpr& j, const std::vector<bool>& linear) {
  const size_t n = j.invars.size();
  if (linear.size() != n)
    throw_internal("jaxpr_transforms", "transpose_jaxpr: mask size does not match the jaxpr");
  Jaxpr jj;
  for (size_t i = 0; i < n; ++i) (linear[i] ? jj.invars : jj.constvars).push_back(j.invars[i]);
  jj.eqns = j.eqns;
  jj.outvars = j.outvars;
  jj.effects = j.effects;
  std::vector<Aval> avals;
  for (const Var& v : jj.constvars) avals.push_back(v.aval());
  for (const Aval& a : out_avals(j)) avals.push_back(non_weak(a));
  const size_t nl = jj.constvars.size();
  flat::Fun f = [&](std::span<const Array> xs) {
    std::vector<Array> cts = backward_pass(jj, xs.subspan(0, nl), xs.subspan(nl, xs.size() - nl));
    for (size_t i = 0; i < cts.size(); ++i)
      if (!cts[i].defined()) cts[i] = zeros_like_aval(tangent_aval(jj.invars[i].aval()));
    return cts;
  };
  return stage(f, avals);
}

}  // namespace tessera::trace
