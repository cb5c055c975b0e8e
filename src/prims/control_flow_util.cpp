// Sub-jaxpr transformations for the control-flow primitives: see control_flow_util.h.
#include "prims/control_flow_util.h"

#include <string>
#include <unordered_map>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/custom_derivatives.h"
#include "tessera/errors.h"
#include "trace/backward_pass.h"
#include "trace/batch_trace.h"
#include "trace/jvp_trace.h"
#include "trace/staging_trace.h"

namespace tessera::prims::cf {

namespace {

// Stages f and insists that it closed over nothing (the transformations below start from
// const-free jaxprs and only bind primitives, so a constant here is a bug in some rule).
JaxprPtr stage_const_free(const flat::Fun& f, std::span<const Aval> avals, const char* what) {
  Staged s = stage(f, avals);
  if (!s.consts.empty())
    throw_internal("control_flow", std::string(what) + " captured " +
                                       std::to_string(s.consts.size()) +
                                       " concrete array(s); rules must build values with lax ops");
  return s.jaxpr;
}

Aval non_weak(Aval a) {
  a.weak_type = false;
  return a;
}

}  // namespace

Staged stage(const flat::Fun& f, std::span<const Aval> avals) {
  std::vector<Array> args;
  args.reserve(avals.size());
  for (const Aval& a : avals) args.push_back(flat::abstract_placeholder(a));
  auto [jaxpr, consts] = hoist_consts(flat::make_jaxpr(f, args));
  return {std::move(jaxpr), std::move(consts)};
}

flat::Fun as_fun(JaxprPtr j) {
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

bool differentiable(const Aval& a) { return ad::has_tangent(a.dtype); }

Aval tangent_aval(const Aval& a) {
  if (differentiable(a)) return non_weak(a);
  return Aval{a.shape, DType::kFloat0, false};
}

// ---- JVP ----

JvpJaxpr jvp_jaxpr(const Jaxpr& j, const std::vector<bool>& nonzero,
                   const std::vector<bool>& instantiate) {
  const size_t n = j.invars.size(), m = j.outvars.size();
  if (nonzero.size() != n || instantiate.size() != m)
    throw_internal("control_flow", "jvp_jaxpr: mask sizes do not match the jaxpr");
  std::vector<Aval> avals = in_avals(j);
  for (size_t i = 0; i < n; ++i)
    if (nonzero[i]) avals.push_back(tangent_aval(j.invars[i].aval()));
  std::vector<bool> out_nz(m, false);
  flat::Fun f = [&](std::span<const Array> xs) {
    auto jt = std::make_shared<trace::JVPTrace>(current_trace(), nullptr);
    trace::TraceLifetime life(jt.get());
    std::vector<Array> ins;
    size_t k = n;
    for (size_t i = 0; i < n; ++i) ins.push_back(nonzero[i] ? jt->make(xs[i], xs[k++]) : xs[i]);
    std::vector<Array> outs;
    {
      TraceScope scope(jt.get());
      outs = eval_jaxpr(j, {}, ins);
    }
    std::vector<Array> po, to;
    for (size_t i = 0; i < m; ++i) {
      auto [p, t] = jt->split(outs[i], "jvp");
      bool diff = ad::has_tangent(p.dtype());
      if (diff && t.defined()) {
        out_nz[i] = true;
        to.push_back(std::move(t));
      } else if (diff && instantiate[i]) {
        out_nz[i] = true;
        to.push_back(ad::zeros_like_aval(tangent_aval(p.aval())));
      }
      po.push_back(std::move(p));
    }
    po.insert(po.end(), to.begin(), to.end());
    return po;
  };
  JaxprPtr jj = stage_const_free(f, avals, "jvp_jaxpr");
  return {std::move(jj), std::move(out_nz)};
}

// ---- Batching ----

BatchedJaxpr batch_jaxpr(const Jaxpr& j, const std::vector<bool>& batched, int64_t size,
                         const std::vector<bool>& force_out_batched) {
  const size_t n = j.invars.size(), m = j.outvars.size();
  if (batched.size() != n || force_out_batched.size() != m)
    throw_internal("control_flow", "batch_jaxpr: mask sizes do not match the jaxpr");
  std::vector<Aval> avals = in_avals(j);
  for (size_t i = 0; i < n; ++i)
    if (batched[i]) avals[i].shape.insert(avals[i].shape.begin(), size);
  std::vector<bool> out_b(m, false);
  flat::Fun f = [&](std::span<const Array> xs) {
    auto bt = std::make_shared<trace::BatchTrace>(current_trace(), size, std::string());
    trace::TraceLifetime life(bt.get());
    std::vector<Array> ins;
    for (size_t i = 0; i < n; ++i) ins.push_back(bt->make(xs[i], batched[i] ? 0 : -1));
    std::vector<Array> outs;
    {
      TraceScope scope(bt.get());
      outs = eval_jaxpr(j, {}, ins);
    }
    std::vector<Array> res;
    for (size_t i = 0; i < m; ++i) {
      auto [v, d] = bt->split(outs[i], "vmap");
      if (d >= 0) {
        out_b[i] = true;
        v = batching::move_axis(v, d, 0);
      } else if (force_out_batched[i]) {
        out_b[i] = true;
        v = batching::broadcast_batched(v, size, 0);
      }
      res.push_back(std::move(v));
    }
    return res;
  };
  JaxprPtr jj = stage_const_free(f, avals, "batch_jaxpr");
  return {std::move(jj), std::move(out_b)};
}

// ---- Linearize ----

LinearizedJaxpr linearize_jaxpr(const Jaxpr& j, const std::vector<bool>& nonzero,
                                const std::vector<bool>& instantiate) {
  const size_t n = j.invars.size(), m = j.outvars.size();
  if (nonzero.size() != n || instantiate.size() != m)
    throw_internal("control_flow", "linearize_jaxpr: mask sizes do not match the jaxpr");
  LinearizedJaxpr r;
  r.out_nonzero.assign(m, false);
  std::vector<bool> zero_out(m, false);  // instantiated zero tangents (added in a second pass)

  // The primal part is staged by S; the JVP runs with a partial-eval tangent trace on top of
  // it, so primal-only binds land in S and tangent binds in tt (exactly flat::linearize, one
  // level down).
  auto S = std::make_shared<trace::StagingTrace>(current_trace(), /*partial_eval=*/false);
  trace::TraceLifetime life_s(S.get());
  std::vector<Array> primals;
  std::unordered_map<uint64_t, int64_t> invar_index;  // S var id -> j invar index
  for (size_t i = 0; i < n; ++i) {
    Aval a = j.invars[i].aval();
    primals.push_back(S->new_arg(a));
    invar_index.emplace(
        static_cast<const trace::StagingTracer*>(primals.back().tracer())->var().id(),
        static_cast<int64_t>(i));
  }
  std::vector<Array> primal_outs;
  ClosedJaxpr lin;
  {
    TraceScope scope(S.get());
    auto tt = std::make_shared<trace::StagingTrace>(S.get(), /*partial_eval=*/true);
    auto jt = std::make_shared<trace::JVPTrace>(S.get(), tt.get());
    trace::TraceLifetime life_j(jt.get());
    trace::TraceLifetime life_t(tt.get());
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
      bool diff = ad::has_tangent(p.dtype());
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
      auto id = static_cast<const trace::StagingTracer*>(c.tracer())->var().id();
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
      out.push_back(zero_out[i] ? ad::zeros_like_aval(tangent_aval(want[i])) : t[k++]);
    }
    return out;
  };
  r.lin = stage_const_free(f, lin_avals, "linearize_jaxpr");
  return r;
}

// ---- Transpose ----

JaxprPtr transpose_jaxpr(const Jaxpr& j, const std::vector<bool>& linear) {
  const size_t n = j.invars.size();
  if (linear.size() != n)
    throw_internal("control_flow", "transpose_jaxpr: mask size does not match the jaxpr");
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
    std::vector<Array> cts =
        trace::backward_pass(jj, xs.subspan(0, nl), xs.subspan(nl, xs.size() - nl));
    for (size_t i = 0; i < cts.size(); ++i)
      if (!cts[i].defined()) cts[i] = ad::zeros_like_aval(tangent_aval(jj.invars[i].aval()));
    return cts;
  };
  return stage_const_free(f, avals, "transpose_jaxpr");
}

// ---- Helpers ----

std::vector<bool> mask_or(const std::vector<bool>& a, const std::vector<bool>& b) {
  if (a.size() != b.size()) throw_internal("control_flow", "mask_or: sizes differ");
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

}  // namespace tessera::prims::cf
