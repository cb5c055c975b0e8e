// The differentiation rules of `checkpoint` (checkpoint.h): the policy-aware partial evaluation
// used by linearize (JAX's partial_eval_jaxpr_custom with a policy), and JVP, transpose and
// batching, each of which binds `checkpoint` again on a transformed body.
//
// remat_partial_eval linearizes the body on abstract primals (the JVP trace with a partial-eval
// tangent trace, as flat::linearize does): the primal computation is staged into the "known"
// jaxpr K and the tangent computation into a linear jaxpr L whose constants are values of K
// (the residuals linearize would keep). The policy then decides, per residual, whether its
// producing equation of K may save it; when not, that equation is copied into the tangent side
// and its own inputs are resolved the same way (K's inputs are always available). The tangent
// side is [recomputed equations of K..., L's equations], so evaluating it recomputes what was
// not saved, and transposing it evaluates that non-linear part before the backward pass.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/passes/dce.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/checkpoint.h"
#include "prims/custom_derivatives.h"
#include "tessera/errors.h"
#include "trace/backward_pass.h"
#include "trace/jvp_trace.h"

namespace tessera::prims {

namespace {

const Jaxpr& body_of(const Params& params) { return *params.get<JaxprPtr>("jaxpr"); }

std::vector<Array> placeholders(std::span<const Aval> avals) {
  std::vector<Array> out;
  out.reserve(avals.size());
  for (const Aval& a : avals) out.push_back(flat::abstract_placeholder(a));
  return out;
}

std::vector<Aval> invar_avals(const Jaxpr& j) {
  std::vector<Aval> out;
  for (const Var& v : j.invars) out.push_back(v.aval());
  return out;
}

Effects effects_of(const std::vector<JaxprEqn>& eqns) {
  Effects e;
  for (const JaxprEqn& q : eqns) e = effects_union(e, q.effects);
  return e;
}

std::vector<bool> nonzero_mask(std::span<const Array> primals, std::span<const Array> tangents) {
  std::vector<bool> nz(primals.size());
  for (size_t i = 0; i < primals.size(); ++i) nz[i] = !ad::zero_tangent(primals[i], tangents[i]);
  return nz;
}

Atom substitute(const Atom& a, const std::unordered_map<uint64_t, Atom>& sub) {
  if (const auto* v = std::get_if<Var>(&a)) {
    auto it = sub.find(v->id());
    if (it != sub.end()) return it->second;
  }
  return a;
}

}  // namespace

RematSplit remat_partial_eval(const Jaxpr& body, const std::vector<bool>& nonzero,
                              const RematPolicy& policy) {
  const size_t m = body.outvars.size();
  ClosedJaxpr lin;
  std::vector<bool> out_nz;
  // Linearize the body on abstract primals: primal ops go to K (the make_jaxpr trace), tangent
  // ops to L (the partial-eval tangent trace).
  flat::Fun g = [&](std::span<const Array> ps) {
    Trace* parent = current_trace();
    auto tt = std::make_shared<trace::StagingTrace>(parent, /*partial_eval=*/true);
    auto jt = std::make_shared<trace::JVPTrace>(parent, tt.get());
    trace::TraceLifetime life_j(jt.get());
    trace::TraceLifetime life_t(tt.get());
    std::vector<Array> xs;
    for (size_t i = 0; i < ps.size(); ++i) {
      if (nonzero[i]) {
        Aval ta = ps[i].aval();
        xs.push_back(jt->make(ps[i], tt->new_arg(ta)));
      } else {
        xs.push_back(ps[i]);
      }
    }
    std::vector<Array> outs;
    {
      TraceScope scope(jt.get());
      outs = eval_jaxpr(body, {}, xs);
    }
    std::vector<Array> result, lin_outs;
    out_nz.clear();
    for (const Array& o : outs) {
      auto [p, t] = jt->split(o, "checkpoint");
      bool nz = t.defined() && ad::has_tangent(p.dtype());
      out_nz.push_back(nz);
      if (nz) lin_outs.push_back(std::move(t));
      result.push_back(std::move(p));
    }
    lin = tt->build(lin_outs);
    result.insert(result.end(), lin.consts.begin(), lin.consts.end());
    return result;
  };
  std::vector<Aval> in_avals = invar_avals(body);
  ClosedJaxpr kc = flat::make_jaxpr(g, placeholders(in_avals));
  const Jaxpr& K = *kc.jaxpr;
  const Jaxpr& L = *lin.jaxpr;
  const size_t R = L.constvars.size();
  if (K.outvars.size() != m + R) throw_internal("checkpoint", "linearized body has bad arity");

  // K's inputs: its constvars (hoisted) then the body's invars.
  std::vector<Var> known_in = K.constvars;
  known_in.insert(known_in.end(), K.invars.begin(), K.invars.end());
  std::unordered_map<uint64_t, int64_t> input_index;
  for (size_t i = 0; i < known_in.size(); ++i)
    input_index.emplace(known_in[i].id(), static_cast<int64_t>(i));
  std::unordered_map<uint64_t, size_t> producer;
  for (size_t e = 0; e < K.eqns.size(); ++e)
    for (const Var& v : K.eqns[e].outvars) producer.emplace(v.id(), e);

  // Resolve what the tangent side reads: inputs, saved residuals, or recomputed equations.
  std::vector<char> recompute(K.eqns.size(), 0);
  std::vector<char> needed_input(known_in.size(), 0);
  std::vector<Var> res_vars;
  std::unordered_set<uint64_t> seen;
  std::vector<Atom> stack(K.outvars.begin() + static_cast<std::ptrdiff_t>(m), K.outvars.end());
  while (!stack.empty()) {
    Atom a = std::move(stack.back());
    stack.pop_back();
    const auto* v = std::get_if<Var>(&a);
    if (v == nullptr || !seen.insert(v->id()).second) continue;
    if (auto it = input_index.find(v->id()); it != input_index.end()) {
      needed_input[it->second] = 1;
      continue;
    }
    auto pit = producer.find(v->id());
    if (pit == producer.end()) throw_internal("checkpoint", "residual without a producer");
    const JaxprEqn& e = K.eqns[pit->second];
    std::vector<Aval> avals;
    for (const Atom& x : e.invars) avals.push_back(atom_aval(x));
    bool save = !e.effects.empty() || policy.saveable(*e.primitive, avals, e.params);
    if (save) {
      res_vars.push_back(*v);
    } else if (!recompute[pit->second]) {
      recompute[pit->second] = 1;
      for (const Atom& x : e.invars) stack.push_back(x);
    }
  }
  std::sort(res_vars.begin(), res_vars.end(), [&](const Var& a, const Var& b) {
    return producer.at(a.id()) != producer.at(b.id()) ? producer.at(a.id()) < producer.at(b.id())
                                                      : a.id() < b.id();
  });

  RematSplit s;
  s.known_consts = kc.consts;
  s.num_res = res_vars.size();
  s.out_nonzero = out_nz;
  {
    Jaxpr kj;
    kj.invars = known_in;
    kj.eqns = K.eqns;
    kj.outvars.assign(K.outvars.begin(), K.outvars.begin() + static_cast<std::ptrdiff_t>(m));
    kj.outvars.insert(kj.outvars.end(), res_vars.begin(), res_vars.end());
    kj.effects = K.effects;
    auto pruned = ir::dce(kj, std::vector<bool>(kj.outvars.size(), true)).first;
    s.known = intern(Jaxpr(*pruned));
  }
  {
    std::unordered_map<uint64_t, Atom> sub;
    for (size_t r = 0; r < R; ++r) sub.emplace(L.constvars[r].id(), K.outvars[m + r]);
    Jaxpr sj;
    for (size_t i = 0; i < known_in.size(); ++i)
      if (needed_input[i]) {
        s.staged_inputs.push_back(static_cast<int64_t>(i));
        sj.invars.push_back(known_in[i]);
      }
    sj.invars.insert(sj.invars.end(), res_vars.begin(), res_vars.end());
    sj.invars.insert(sj.invars.end(), L.invars.begin(), L.invars.end());
    for (size_t e = 0; e < K.eqns.size(); ++e)
      if (recompute[e]) sj.eqns.push_back(K.eqns[e]);
    for (const JaxprEqn& e : L.eqns) {
      JaxprEqn c = e;
      for (Atom& x : c.invars) x = substitute(x, sub);
      sj.eqns.push_back(std::move(c));
    }
    for (const Atom& o : L.outvars) sj.outvars.push_back(substitute(o, sub));
    sj.effects = effects_of(sj.eqns);
    auto pruned = ir::dce(sj, std::vector<bool>(sj.outvars.size(), true)).first;
    s.staged = intern(Jaxpr(*pruned));
  }
  return s;
}

std::pair<std::vector<Array>, std::vector<Array>> remat_linearize(std::span<const Array> primals,
                                                                  std::span<const Array> tangents,
                                                                  const Params& params) {
  const Jaxpr& body = body_of(params);
  CheckpointPolicy policy = policy_of(params);
  std::vector<bool> nz = nonzero_mask(primals, tangents);
  RematSplit s = remat_partial_eval(body, nz, *policy);
  // The known part binds on primals alone: it runs now, in the parent trace.
  std::vector<Array> kin = s.known_consts;
  kin.insert(kin.end(), primals.begin(), primals.end());
  std::vector<Array> kout = eval_jaxpr(*s.known, {}, kin);
  const size_t m = body.outvars.size();
  std::vector<Array> outs(kout.begin(), kout.begin() + static_cast<std::ptrdiff_t>(m));
  std::vector<Array> tan_outs(m);
  if (!s.staged->outvars.empty()) {
    std::vector<Array> ops;
    for (int64_t i : s.staged_inputs) ops.push_back(kin[i]);
    ops.insert(ops.end(), kout.begin() + static_cast<std::ptrdiff_t>(m), kout.end());
    for (size_t i = 0; i < tangents.size(); ++i)
      if (nz[i]) ops.push_back(tangents[i]);
    // Touches the tangents: staged into the linear jaxpr as one equation.
    std::vector<Array> t = tessera::bind(
        remat_p, ops, checkpoint_params(s.staged, true, policy, params.get_bool("prevent_cse")));
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
  std::vector<bool> nz = nonzero_mask(primals, tangents);
  const size_t n = primals.size(), m = body.outvars.size();
  std::vector<Aval> avals = invar_avals(body);
  for (size_t i = 0; i < n; ++i)
    if (nz[i]) avals.push_back(body.invars[i].aval());
  std::vector<bool> out_nz;
  flat::Fun g = [&](std::span<const Array> xs) {
    auto jt = std::make_shared<trace::JVPTrace>(current_trace(), nullptr);
    trace::TraceLifetime life(jt.get());
    std::vector<Array> ins;
    size_t k = n;
    for (size_t i = 0; i < n; ++i) ins.push_back(nz[i] ? jt->make(xs[i], xs[k++]) : xs[i]);
    std::vector<Array> outs;
    {
      TraceScope scope(jt.get());
      outs = eval_jaxpr(body, {}, ins);
    }
    std::vector<Array> po, to;
    out_nz.clear();
    for (const Array& o : outs) {
      auto [p, t] = jt->split(o, "checkpoint");
      bool has = t.defined() && ad::has_tangent(p.dtype());
      out_nz.push_back(has);
      if (has) to.push_back(std::move(t));
      po.push_back(std::move(p));
    }
    po.insert(po.end(), to.begin(), to.end());
    return po;
  };
  auto [jaxpr, consts] = hoist_consts(flat::make_jaxpr(g, placeholders(avals)));
  std::vector<Array> ops = consts;
  ops.insert(ops.end(), primals.begin(), primals.end());
  for (size_t i = 0; i < n; ++i)
    if (nz[i]) ops.push_back(tangents[i]);
  std::vector<Array> r = tessera::bind(
      remat_p, ops,
      checkpoint_params(jaxpr, true, policy_of(params), params.get_bool("prevent_cse")));
  std::vector<Array> po(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(m)), to(m);
  size_t k = m;
  for (size_t i = 0; i < m; ++i)
    if (out_nz[i]) to[i] = r[k++];
  return {std::move(po), std::move(to)};
}

std::vector<Array> remat_transpose(std::span<const Array> cts, std::span<const Array> args,
                                   std::span<const Aval> arg_avals, const Params& params) {
  const Jaxpr& body = body_of(params);
  // The body as a jaxpr linear in its undefined operands: the others become constvars, which
  // backward_pass evaluates forward (the recomputation) before transposing the rest.
  Jaxpr lj;
  std::vector<Array> nonlin;
  std::vector<Aval> t_avals;
  std::vector<size_t> lin_index;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].defined()) {
      lj.constvars.push_back(body.invars[i]);
      nonlin.push_back(args[i]);
      t_avals.push_back(arg_avals[i]);
    } else {
      lj.invars.push_back(body.invars[i]);
      lin_index.push_back(i);
    }
  }
  lj.eqns = body.eqns;
  lj.outvars = body.outvars;
  lj.effects = body.effects;
  std::vector<Array> ct_vals;
  for (size_t k = 0; k < body.outvars.size(); ++k) {
    const Aval& want = atom_aval(body.outvars[k]);
    Array c = k < cts.size() ? cts[k] : Array();
    ct_vals.push_back(ad::instantiate(c, Aval{want.shape, want.dtype, false}));
    t_avals.push_back(ct_vals.back().aval());
  }
  const size_t nn = nonlin.size();
  flat::Fun g = [&](std::span<const Array> xs) {
    std::vector<Array> in_cts = trace::backward_pass(lj, xs.first(nn), xs.subspan(nn));
    for (size_t k = 0; k < in_cts.size(); ++k)
      if (!in_cts[k].defined()) {
        const Aval& a = lj.invars[k].aval();
        in_cts[k] = ad::zeros_like_aval(Aval{a.shape, a.dtype, false});
      }
    return in_cts;
  };
  auto [tj, consts] = hoist_consts(flat::make_jaxpr(g, placeholders(t_avals)));
  std::vector<Array> ops = consts;
  ops.insert(ops.end(), nonlin.begin(), nonlin.end());
  ops.insert(ops.end(), ct_vals.begin(), ct_vals.end());
  std::vector<Array> r = tessera::bind(
      remat_p, ops, checkpoint_params(tj, true, policy_of(params), params.get_bool("prevent_cse")));
  std::vector<Array> out(args.size());
  for (size_t k = 0; k < lin_index.size(); ++k) out[lin_index[k]] = r[k];
  return out;
}

std::pair<std::vector<Array>, std::vector<int64_t>> remat_batch(const BatchAxis&,
                                                                std::span<const Array> args,
                                                                std::span<const int64_t> dims,
                                                                const Params& params) {
  JaxprPtr body = params.get<JaxprPtr>("jaxpr");
  int64_t size = batching::batch_size(args, dims);
  std::vector<std::optional<int64_t>> in_axes;
  for (int64_t d : dims) in_axes.push_back(d >= 0 ? std::optional<int64_t>(d) : std::nullopt);
  flat::Fun fb = [body, in_axes, size](std::span<const Array> xs) {
    flat::Fun inner = [body](std::span<const Array> ys) { return eval_jaxpr(*body, {}, ys); };
    auto zeros = [](size_t n) {
      return std::vector<std::optional<int64_t>>(n, std::optional<int64_t>(0));
    };
    return flat::vmap(inner, xs, in_axes, zeros, size);
  };
  auto [bj, consts] = hoist_consts(flat::make_jaxpr(fb, args));
  std::vector<Array> ops = consts;
  ops.insert(ops.end(), args.begin(), args.end());
  std::vector<Array> outs =
      tessera::bind(remat_p, ops,
                    checkpoint_params(bj, params.get_bool("differentiated"), policy_of(params),
                                      params.get_bool("prevent_cse")));
  return {std::move(outs), std::vector<int64_t>(body->outvars.size(), 0)};
}

}  // namespace tessera::prims
