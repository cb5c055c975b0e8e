// The while primitive (while_loop.h) and all its rules, after JAX's loops.py: abstract eval
// with JAX's type errors, the eager loop, JVP (a loop over primal and tangent carries, the
// nonzero carries found by a fixed point), linearize (the primal loop now, the JVP'd loop staged
// on the tangents: forward mode works, reverse mode raises JAX's error in transpose), batching
// (fixed point on batched carries; a batched predicate runs while any member is active and
// freezes finished members with select_n), DCE of unused carries, and the bodies' effects.
#include "prims/while_loop.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compiler/lowering.h"
#include "ir/passes/dce.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/cond.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::prims {

Primitive while_loop("while", /*multiple_results=*/true);

Params while_params(std::shared_ptr<const Jaxpr> cond_jaxpr, int64_t cond_nconsts,
                    std::shared_ptr<const Jaxpr> body_jaxpr, int64_t body_nconsts) {
  return Params{{"body_jaxpr", std::move(body_jaxpr)},
                {"body_nconsts", body_nconsts},
                {"cond_jaxpr", std::move(cond_jaxpr)},
                {"cond_nconsts", cond_nconsts}};
}

namespace {

using JaxprPtr = std::shared_ptr<const Jaxpr>;

struct Parts {
  JaxprPtr cj, bj;
  size_t cn = 0, bn = 0, n = 0;  // cond consts, body consts, carries
};

Parts parts_of(const Params& p, size_t nargs) {
  Parts r;
  r.cj = p.get<JaxprPtr>("cond_jaxpr");
  r.bj = p.get<JaxprPtr>("body_jaxpr");
  const int64_t cn = p.get_int("cond_nconsts"), bn = p.get_int("body_nconsts");
  const int64_t n = static_cast<int64_t>(nargs);
  // Range-checked before the size_t casts: negative counts would wrap around.
  if (cn < 0 || bn < 0 || cn > n || bn > n - cn)
    throw TypeError(op_message(
        "while", "the loop has " + std::to_string(nargs) + " operands but cond_nconsts = " +
                     std::to_string(cn) + " and body_nconsts = " + std::to_string(bn) +
                     "; they must be nonnegative and sum to at most the operand count"));
  r.cn = static_cast<size_t>(cn);
  r.bn = static_cast<size_t>(bn);
  r.n = nargs - r.cn - r.bn;
  return r;
}

std::vector<bool> concat_masks(const std::vector<bool>& a, const std::vector<bool>& b) {
  std::vector<bool> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

bool any_of(const std::vector<bool>& m) {
  return std::any_of(m.begin(), m.end(), [](bool b) { return b; });
}

size_t count(const std::vector<bool>& m) {
  return static_cast<size_t>(std::count(m.begin(), m.end(), true));
}

Effects loop_effects(const Jaxpr& cj, const Jaxpr& bj) {
  return effects_union(cj.effects, bj.effects);
}

// ---- abstract eval / impl ----

void check_operands(std::string_view what, const Jaxpr& j, std::span<const Aval> ops) {
  std::vector<Aval> want = trace::in_avals(j);
  bool ok = want.size() == ops.size();
  for (size_t i = 0; ok && i < ops.size(); ++i) ok = typematch(want[i], ops[i]);
  if (!ok)
    throw TypeError(op_message("while", std::string(what) + " takes inputs " +
                                            shaped_array_list_str(want) + " but the loop passes " +
                                            shaped_array_list_str(ops)));
}

std::vector<Aval> while_abstract_eval(std::span<const Aval> in, const Params& params) {
  Parts w = parts_of(params, in.size());
  std::vector<Aval> cond_out = trace::out_avals(*w.cj);
  if (cond_out.size() != 1 || cond_out[0].ndim() != 0 || cond_out[0].dtype != DType::kBool)
    throw TypeError(op_message("while",
                               "cond_fun must return a boolean scalar, but got output "
                               "type(s) " +
                                   shaped_array_list_str(cond_out) + "."));
  std::vector<Aval> body_in = trace::in_avals(*w.bj);
  if (body_in.size() < w.bn)
    throw TypeError(op_message("while", "body_jaxpr has fewer inputs than body_nconsts"));
  std::vector<Aval> carry_in(body_in.begin() + w.bn, body_in.end());
  check_same_types("while", "body_fun output and input", trace::out_avals(*w.bj), carry_in);
  std::vector<Aval> cond_ops(in.begin(), in.begin() + w.cn);
  cond_ops.insert(cond_ops.end(), in.end() - w.n, in.end());
  check_operands("cond_jaxpr", *w.cj, cond_ops);
  check_operands("body_jaxpr", *w.bj, in.subspan(w.cn));
  return trace::out_avals(*w.bj);
}

// The loop over a cond function and a body function (the jaxprs through the eval trace, or
// their nested executables under jit).
std::vector<Array> while_loop_run(std::span<const Array> args, const Parts& w,
                                  const compiler::BodyFn& cond, const compiler::BodyFn& body) {
  std::span<const Array> cc = args.subspan(0, w.cn), bc = args.subspan(w.cn, w.bn);
  std::vector<Array> carry(args.begin() + w.cn + w.bn, args.end());
  for (;;) {
    std::vector<Array> pred = cond(trace::concat({cc, carry}));
    if (!pred[0].item<bool>()) break;
    carry = body(trace::concat({bc, carry}));
  }
  return carry;
}

std::vector<Array> while_impl(const ExecContext&, std::span<const Array> args, const Params& params,
                              std::span<const Aval>) {
  Parts w = parts_of(params, args.size());
  return while_loop_run(
      args, w, [&w](std::span<const Array> in) { return eval_jaxpr(*w.cj, {}, in); },
      [&w](std::span<const Array> in) { return eval_jaxpr(*w.bj, {}, in); });
}

// Under jit: the cond and body functions are nested executables compiled once.
compiler::LoweredEqn while_lower(const JaxprEqn& eqn) {
  auto w = std::make_shared<const Parts>(parts_of(eqn.params, eqn.invars.size()));
  std::shared_ptr<const compiler::Executable> cond = compiler::compile(*w->cj);
  std::shared_ptr<const compiler::Executable> body = compiler::compile(*w->bj);
  compiler::LoweredEqn l;
  l.run = [w, cond, body](const ExecContext& ctx, std::span<const Array> args) {
    return while_loop_run(args, *w, compiler::executable_body(cond, ctx),
                          compiler::executable_body(body, ctx));
  };
  l.nested.emplace_back("cond", cond);
  l.nested.emplace_back("body", body);
  return l;
}

// ---- JVP / linearize / transpose ----

struct JvpPlan {
  std::vector<bool> bconst_nz, carry_nz;
};

// The body consts and carries with nonzero tangents: a carry's tangent is nonzero when its
// initial tangent is or when the body makes it so (iterated to a fixed point).
JvpPlan jvp_plan(const Parts& w, std::span<const Array> primals, std::span<const Array> tangents) {
  JvpPlan p;
  for (size_t i = 0; i < w.bn + w.n; ++i) {
    const Array& x = primals[w.cn + i];
    bool nz = !ad::zero_tangent(x, tangents[w.cn + i]) && trace::has_tangent(x.dtype());
    (i < w.bn ? p.bconst_nz : p.carry_nz).push_back(nz);
  }
  for (;;) {
    std::vector<bool> out = trace::jvp_jaxpr(*w.bj, concat_masks(p.bconst_nz, p.carry_nz),
                                             std::vector<bool>(w.n, false))
                                .out_nonzero;
    std::vector<bool> next = trace::mask_or(p.carry_nz, out);
    if (next == p.carry_nz) break;
    p.carry_nz = std::move(next);
  }
  return p;
}

ad::JvpOut while_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                     const Params& params) {
  Parts w = parts_of(params, primals.size());
  JvpPlan plan = jvp_plan(w, primals, tangents);
  if (!any_of(plan.carry_nz))
    return {tessera::bind(while_loop, primals, params), std::vector<Array>(w.n)};
  const size_t nbt = count(plan.bconst_nz);
  trace::JvpJaxpr J =
      trace::jvp_jaxpr(*w.bj, concat_masks(plan.bconst_nz, plan.carry_nz), plan.carry_nz);
  // J's invars are [bconsts, carry, bconst tangents, carry tangents]; the loop needs the
  // constants first: [bconsts, bconst tangents, carry, carry tangents].
  const Jaxpr& jj = *J.const_free("while");
  const auto iv = jj.invars.begin();
  std::vector<Var> body_in(iv, iv + w.bn);
  body_in.insert(body_in.end(), iv + w.bn + w.n, iv + w.bn + w.n + nbt);
  body_in.insert(body_in.end(), iv + w.bn, iv + w.bn + w.n);
  body_in.insert(body_in.end(), iv + w.bn + w.n + nbt, jj.invars.end());
  JaxprPtr body = with_invars(jj, std::move(body_in));
  // The cond ignores the tangent carries.
  std::vector<Var> cond_in = w.cj->invars;
  for (size_t i = 0; i < w.n; ++i)
    if (plan.carry_nz[i])
      cond_in.push_back(Var(trace::tangent_aval(w.bj->invars[w.bn + i].aval())));
  JaxprPtr cond_j = with_invars(*w.cj, std::move(cond_in));

  std::vector<Array> operands(primals.begin(), primals.begin() + w.cn + w.bn);
  for (size_t i = 0; i < w.bn; ++i)
    if (plan.bconst_nz[i]) operands.push_back(tangents[w.cn + i]);
  operands.insert(operands.end(), primals.begin() + w.cn + w.bn, primals.end());
  for (size_t i = 0; i < w.n; ++i) {
    if (!plan.carry_nz[i]) continue;
    const size_t a = w.cn + w.bn + i;
    Aval ta = trace::tangent_aval(w.bj->invars[w.bn + i].aval());
    operands.push_back(ad::zero_tangent(primals[a], tangents[a]) ? ad::zeros_like_aval(ta)
                                                                 : tangents[a]);
  }
  Params p = while_params(std::move(cond_j), static_cast<int64_t>(w.cn), std::move(body),
                          static_cast<int64_t>(w.bn + nbt));
  std::vector<Array> outs = tessera::bind(while_loop, operands, p);
  std::vector<Array> po(outs.begin(), outs.begin() + w.n), to(w.n);
  size_t k = w.n;
  for (size_t i = 0; i < w.n; ++i)
    if (plan.carry_nz[i]) to[i] = outs[k++];
  return {std::move(po), std::move(to)};
}

// Under linearize: the primal loop runs now (its operands are all primal values, so the bind
// lands in the parent of the tangent trace) and the JVP loop, which reads the tangents, is
// staged whole into the linear jaxpr. Evaluating that jaxpr (Linearized::jvp) works; transposing
// it (grad, vjp) raises JAX's error from the transpose rule.
ad::JvpOut while_linearize(std::span<const Array> primals, std::span<const Array> tangents,
                           const Params& params) {
  Parts w = parts_of(params, primals.size());
  std::vector<Array> outs = tessera::bind(while_loop, primals, params);
  if (!any_of(jvp_plan(w, primals, tangents).carry_nz)) return {outs, std::vector<Array>(w.n)};
  ad::JvpOut staged = while_jvp(primals, tangents, params);
  return {std::move(outs), std::move(staged.second)};
}

std::vector<Array> while_transpose(std::span<const Array>, std::span<const Array>,
                                   std::span<const Aval>, const Params&) {
  throw ValueError(op_message(
      "while_loop",
      "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
      "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
      "start/stop."));
}

// ---- Batching ----

batching::BatchOut while_batch(const BatchAxis&, std::span<const Array> vals,
                               std::span<const int64_t> dims, const Params& params) {
  Parts w = parts_of(params, vals.size());
  const int64_t size = batching::batch_size(vals, dims);
  auto batched = [&](size_t i) { return dims[i] != batching::kNotMapped; };
  std::vector<bool> cc_b, bc_b, carry_b;
  for (size_t i = 0; i < w.cn; ++i) cc_b.push_back(batched(i));
  for (size_t i = 0; i < w.bn; ++i) bc_b.push_back(batched(w.cn + i));
  for (size_t i = 0; i < w.n; ++i) carry_b.push_back(batched(w.cn + w.bn + i));
  // Fixed point: a carry is batched when its init is or the body makes it so; a batched
  // predicate batches every carry (members stop at different steps).
  bool pred_b = false;
  for (;;) {
    pred_b = trace::batch_jaxpr(*w.cj, concat_masks(cc_b, carry_b), size, {false}).out_batched[0];
    if (pred_b) carry_b.assign(w.n, true);
    std::vector<bool> out_b =
        trace::batch_jaxpr(*w.bj, concat_masks(bc_b, carry_b), size, std::vector<bool>(w.n, false))
            .out_batched;
    std::vector<bool> next = trace::mask_or(carry_b, out_b);
    if (next == carry_b) break;
    carry_b = std::move(next);
  }
  std::vector<Array> cc, bc, init;
  for (size_t i = 0; i < w.cn; ++i)
    cc.push_back(cc_b[i] ? batching::move_axis(vals[i], dims[i], 0) : vals[i]);
  for (size_t i = 0; i < w.bn; ++i) {
    size_t a = w.cn + i;
    bc.push_back(bc_b[i] ? batching::move_axis(vals[a], dims[a], 0) : vals[a]);
  }
  for (size_t i = 0; i < w.n; ++i) {
    size_t a = w.cn + w.bn + i;
    init.push_back(carry_b[i] ? batching::batch_at(vals[a], dims[a], size, 0) : vals[a]);
  }
  std::vector<int64_t> out_dims(w.n);
  for (size_t i = 0; i < w.n; ++i) out_dims[i] = carry_b[i] ? 0 : batching::kNotMapped;

  if (!pred_b) {
    JaxprPtr cb =
        trace::batch_jaxpr(*w.cj, concat_masks(cc_b, carry_b), size, {false}).const_free("while");
    JaxprPtr bb =
        trace::batch_jaxpr(*w.bj, concat_masks(bc_b, carry_b), size, carry_b).const_free("while");
    std::vector<Array> operands = trace::concat({cc, bc, init});
    std::vector<Array> outs =
        tessera::bind(while_loop, operands,
                      while_params(std::move(cb), static_cast<int64_t>(w.cn), std::move(bb),
                                   static_cast<int64_t>(w.bn)));
    return {std::move(outs), std::move(out_dims)};
  }

  // A batched predicate: loop while any member is active; the body advances only the active
  // members (select_n on the predicate computed before the step).
  JaxprPtr cb =
      trace::batch_jaxpr(*w.cj, concat_masks(cc_b, carry_b), size, {true}).const_free("while");
  JaxprPtr bb =
      trace::batch_jaxpr(*w.bj, concat_masks(bc_b, carry_b), size, carry_b).const_free("while");
  const size_t ncc = cc.size(), nbc = bc.size(), n = w.n;
  std::vector<Aval> cond_avals, body_avals;
  for (const Array& x : cc) cond_avals.push_back(x.aval());
  for (const Array& x : init) cond_avals.push_back(x.aval());
  for (const Array& x : cc) body_avals.push_back(x.aval());
  for (const Array& x : bc) body_avals.push_back(x.aval());
  for (const Array& x : init) body_avals.push_back(x.aval());
  flat::Fun cond_fun = [&](std::span<const Array> xs) {
    Array pred = eval_jaxpr(*cb, {}, xs)[0];
    return std::vector<Array>{lax::reduce_or(pred, {0})};
  };
  flat::Fun body_fun = [&](std::span<const Array> xs) {
    std::span<const Array> c = xs.subspan(0, ncc), b = xs.subspan(ncc, nbc),
                           carry = xs.subspan(ncc + nbc, n);
    Array pred = eval_jaxpr(*cb, {}, trace::concat({c, carry}))[0];
    std::vector<Array> next = eval_jaxpr(*bb, {}, trace::concat({b, carry}));
    std::vector<Array> out;
    for (size_t i = 0; i < n; ++i) {
      Array p =
          pred.ndim() == next[i].ndim() ? pred : lax::broadcast_in_dim(pred, next[i].shape(), {0});
      out.push_back(lax::select_n(p, {carry[i], next[i]}));
    }
    return out;
  };
  trace::Staged sc = trace::stage(cond_fun, cond_avals);
  trace::Staged sb = trace::stage(body_fun, body_avals);
  std::vector<Array> operands = trace::concat({sc.consts, cc, sb.consts, cc, bc, init});
  std::vector<Array> outs =
      tessera::bind(while_loop, operands,
                    while_params(sc.jaxpr, static_cast<int64_t>(sc.consts.size() + ncc), sb.jaxpr,
                                 static_cast<int64_t>(sb.consts.size() + ncc + nbc)));
  return {std::move(outs), std::move(out_dims)};
}

// ---- DCE ----

std::pair<std::vector<bool>, std::optional<JaxprEqn>> while_dce(
    const std::vector<bool>& used_outputs, const JaxprEqn& eqn) {
  Parts w = parts_of(eqn.params, eqn.invars.size());
  if (!any_of(used_outputs) && eqn.effects.empty())
    return {std::vector<bool>(eqn.invars.size(), false), {}};
  // A carry is needed when an output uses it, the cond reads it, or the body needs it to
  // compute another needed carry (a fixed point).
  auto [cd, cu] = ir::dce(*w.cj, {true});
  std::vector<bool> needed = used_outputs;
  for (size_t i = 0; i < w.n; ++i) needed[i] = needed[i] || cu[w.cn + i];
  JaxprPtr bd;
  std::vector<bool> bu;
  for (;;) {
    std::tie(bd, bu) = ir::dce(*w.bj, needed);
    std::vector<bool> next = needed;
    for (size_t i = 0; i < w.n; ++i) next[i] = next[i] || bu[w.bn + i];
    if (next == needed) break;
    needed = std::move(next);
  }
  std::vector<Var> body_in, cond_in;
  for (size_t i = 0; i < w.bn; ++i)
    if (bu[i]) body_in.push_back(w.bj->invars[i]);
  for (size_t i = 0; i < w.n; ++i)
    if (needed[i]) body_in.push_back(w.bj->invars[w.bn + i]);
  for (size_t i = 0; i < w.cn; ++i)
    if (cu[i]) cond_in.push_back(w.cj->invars[i]);
  for (size_t i = 0; i < w.n; ++i)
    if (needed[i]) cond_in.push_back(w.cj->invars[w.cn + i]);
  JaxprPtr body = with_invars(*bd, std::move(body_in));
  JaxprPtr cond_j = with_invars(*cd, std::move(cond_in));

  std::vector<bool> used_in;
  for (size_t i = 0; i < w.cn; ++i) used_in.push_back(cu[i]);
  for (size_t i = 0; i < w.bn; ++i) used_in.push_back(bu[i]);
  used_in.insert(used_in.end(), needed.begin(), needed.end());
  JaxprEqn ne;
  ne.primitive = eqn.primitive;
  for (size_t i = 0; i < eqn.invars.size(); ++i)
    if (used_in[i]) ne.invars.push_back(eqn.invars[i]);
  for (size_t i = 0; i < w.n; ++i)
    if (needed[i]) ne.outvars.push_back(eqn.outvars[i]);
  ne.effects = effects_union(primitive_effects(while_loop), loop_effects(*cond_j, *body));
  // nconsts: the kept constants only.
  size_t kc = 0, kb = 0;
  for (size_t i = 0; i < w.cn; ++i) kc += cu[i] ? 1 : 0;
  for (size_t i = 0; i < w.bn; ++i) kb += bu[i] ? 1 : 0;
  ne.params = while_params(std::move(cond_j), static_cast<int64_t>(kc), std::move(body),
                           static_cast<int64_t>(kb));
  return {std::move(used_in), std::move(ne)};
}

}  // namespace

void register_while() {
  while_loop.kind = PrimitiveKind::kControlFlow;
  // cond consts, body consts, then the carries.
  while_loop.signature = Signature::at_least(0, {{"body_jaxpr", ParamKind::kJaxpr},
                                                 {"body_nconsts", ParamKind::kInt},
                                                 {"cond_jaxpr", ParamKind::kJaxpr},
                                                 {"cond_nconsts", ParamKind::kInt}});
  Primitive& p = while_loop;
  p.abstract_eval = while_abstract_eval;
  p.impl = while_impl;
  compiler::register_lowering(p, while_lower);
  p.jvp = while_jvp;
  p.linearize = while_linearize;
  p.transpose = while_transpose;
  p.batch = while_batch;
  p.dce = while_dce;
  p.effects = [](const Params& params) {
    return loop_effects(*params.get<JaxprPtr>("cond_jaxpr"), *params.get<JaxprPtr>("body_jaxpr"));
  };
  register_primitive(p);
}

}  // namespace tessera::prims
