// The cond primitive (cond.h) and all its rules, after JAX's conditionals.py: abstract eval with
// JAX's type errors, eager evaluation of the chosen branch, JVP over JVP'd branches, linearize as
// a known cond (primal outputs and residuals joined across branches) plus a staged linear cond,
// transpose over transposed branches, batching (cond of batched branches, or select_n of every
// branch's result under a batched index), DCE of unused outputs, and the branches' effects.
#include "prims/cond.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "compiler/lowering.h"
#include "core/array_errors.h"
#include "ir/passes/dce.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "tessera/errors.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive cond("cond", /*multiple_results=*/true);

// ---- Shared helpers ----

Params cond_params(JaxprList branches) { return Params{{"branches", std::move(branches)}}; }

std::string shaped_array_list_str(std::span<const Aval> avals) {
  std::string s = "[";
  for (size_t i = 0; i < avals.size(); ++i) {
    if (i) s += ", ";
    s += shaped_array_str(avals[i]);
  }
  return s + "]";
}

bool typematch(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

namespace {

// The PyTreeDef of a flat list of n leaves: "PyTreeDef([*, *])".
std::string list_structure_str(size_t n) {
  std::string s = "PyTreeDef([";
  for (size_t i = 0; i < n; ++i) s += i ? ", *" : "*";
  return s + "])";
}

}  // namespace

void check_same_types(std::string_view op, std::string_view what, std::span<const Aval> a,
                      std::span<const Aval> b) {
  if (a.size() != b.size())
    throw TypeError(op_message(op, std::string(what) + " must have same type structure, got " +
                                       list_structure_str(a.size()) + " and " +
                                       list_structure_str(b.size()) + "."));
  bool ok = true;
  for (size_t i = 0; i < a.size(); ++i) ok = ok && typematch(a[i], b[i]);
  if (ok) return;
  // JAX's _show_diff over the leaves.
  std::string diff = a.size() == 1 ? "" : "[";
  for (size_t i = 0; i < a.size(); ++i) {
    if (i) diff += ", ";
    diff += typematch(a[i], b[i])
                ? shaped_array_str(a[i])
                : "DIFFERENT " + shaped_array_str(a[i]) + " vs. " + shaped_array_str(b[i]);
  }
  if (a.size() != 1) diff += "]";
  throw TypeError(
      op_message(op, std::string(what) + " must have identical types, got\n" + diff + "."));
}

std::shared_ptr<const Jaxpr> with_invars(const Jaxpr& j, std::vector<Var> invars) {
  Jaxpr out = j;
  out.invars = std::move(invars);
  out.cached_hash = 0;
  return intern(std::move(out));
}

StagedBranches stage_branches(std::span<const flat::Fun> funs, std::span<const Aval> in_avals) {
  std::vector<trace::Staged> staged;
  staged.reserve(funs.size());
  for (const flat::Fun& f : funs) staged.push_back(trace::stage(f, in_avals));
  StagedBranches out;
  for (const trace::Staged& s : staged)
    out.consts.insert(out.consts.end(), s.consts.begin(), s.consts.end());
  for (size_t k = 0; k < staged.size(); ++k) {
    const Jaxpr& j = *staged[k].jaxpr;
    const size_t nc = staged[k].consts.size();
    std::vector<Var> invars;
    for (size_t q = 0; q < staged.size(); ++q) {
      if (q == k) {
        invars.insert(invars.end(), j.invars.begin(), j.invars.begin() + nc);
      } else {
        for (const Array& c : staged[q].consts) invars.push_back(Var(c.aval()));
      }
    }
    invars.insert(invars.end(), j.invars.begin() + nc, j.invars.end());
    out.branches.push_back(with_invars(j, std::move(invars)));
  }
  return out;
}

namespace {

using JaxprPtr = std::shared_ptr<const Jaxpr>;

const JaxprList& branches_of(const Params& p) { return p.get<JaxprList>("branches"); }

Effects joined_effects(const JaxprList& br) {
  Effects e;
  for (const JaxprPtr& b : br) e = effects_union(e, b->effects);
  return e;
}

std::vector<Aval> avals_of(std::span<const Array> xs) {
  std::vector<Aval> out;
  out.reserve(xs.size());
  for (const Array& x : xs) out.push_back(x.aval());
  return out;
}

// The output-type message: JAX's wording for lax.cond (two branches: false_fun is branch 0)
// and lax.switch.
void check_branch_outputs(const JaxprList& br) {
  std::vector<Aval> out0 = trace::out_avals(*br[0]);
  for (size_t i = 1; i < br.size(); ++i) {
    std::vector<Aval> outi = trace::out_avals(*br[i]);
    if (br.size() == 2)
      check_same_types("cond", "true_fun and false_fun output", outi, out0);
    else
      check_same_types("cond", "branch 0 and " + std::to_string(i) + " outputs", out0, outi);
  }
}

// ---- abstract eval / impl ----

std::vector<Aval> cond_abstract_eval(std::span<const Aval> in, const Params& params) {
  const JaxprList& br = branches_of(params);
  if (br.empty()) throw TypeError(op_message("cond", "cond requires at least one branch function"));
  if (in.empty() || in[0].ndim() != 0 || in[0].dtype != DType::kInt32)
    throw TypeError(op_message(
        "cond", "the branch index must be an int32 scalar, got " +
                    (in.empty() ? std::string("no operands") : shaped_array_str(in[0])) +
                    "; lax.cond converts its predicate and lax.switch its index to int32"));
  std::span<const Aval> ops = in.subspan(1);
  for (size_t k = 0; k < br.size(); ++k) {
    std::vector<Aval> want = trace::in_avals(*br[k]);
    bool ok = want.size() == ops.size();
    for (size_t i = 0; ok && i < ops.size(); ++i) ok = typematch(want[i], ops[i]);
    if (!ok)
      throw TypeError(op_message(
          "cond", "branch " + std::to_string(k) + " takes inputs " + shaped_array_list_str(want) +
                      " but the operands are " + shaped_array_list_str(ops)));
  }
  check_branch_outputs(br);
  return trace::out_avals(*br[0]);
}

// The branch an index selects (clamped, as lax.switch).
size_t branch_index(const Array& index, size_t num_branches) {
  const int64_t i = index.item<int64_t>();
  return static_cast<size_t>(std::clamp<int64_t>(i, 0, static_cast<int64_t>(num_branches) - 1));
}

std::vector<Array> cond_impl(const ExecContext&, std::span<const Array> args, const Params& params,
                             std::span<const Aval>) {
  const JaxprList& br = branches_of(params);
  return eval_jaxpr(*br[branch_index(args[0], br.size())], {}, args.subspan(1));
}

// Under jit: each branch is a nested executable compiled once.
compiler::LoweredEqn cond_lower(const JaxprEqn& eqn) {
  const JaxprList& br = branches_of(eqn.params);
  std::vector<std::shared_ptr<const compiler::Executable>> exes;
  compiler::LoweredEqn l;
  for (size_t k = 0; k < br.size(); ++k) {
    exes.push_back(compiler::compile(*br[k]));
    std::string name = "branch ";
    name += std::to_string(k);
    l.nested.emplace_back(std::move(name), exes.back());
  }
  l.run = [exes](const ExecContext& ctx, std::span<const Array> args) {
    return exes[branch_index(args[0], exes.size())]->execute(ctx, args.subspan(1));
  };
  return l;
}

// ---- JVP ----

std::vector<bool> nonzero_mask(std::span<const Array> primals, std::span<const Array> tangents) {
  std::vector<bool> nz(primals.size());
  for (size_t i = 0; i < primals.size(); ++i)
    nz[i] = !ad::zero_tangent(primals[i], tangents[i]) && trace::has_tangent(primals[i].dtype());
  return nz;
}

// The union over branches of the outputs with nonzero tangents. Under linearize the branches
// are probed with linearize_jaxpr (a branch holding a custom_vjp has no JVP).
std::vector<bool> union_out_nonzero(const JaxprList& br, const std::vector<bool>& nz,
                                    bool linearizing = false) {
  const size_t m = br[0]->outvars.size();
  std::vector<bool> out(m, false), none(m, false);
  for (const JaxprPtr& b : br)
    out = trace::mask_or(out, linearizing ? trace::linearize_jaxpr(*b, nz, none).out_nonzero
                                          : trace::jvp_jaxpr(*b, nz, none).out_nonzero);
  return out;
}

ad::JvpOut cond_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                    const Params& params) {
  const JaxprList& br = branches_of(params);
  std::span<const Array> ops = primals.subspan(1), ops_dot = tangents.subspan(1);
  std::vector<bool> nz = nonzero_mask(ops, ops_dot);
  std::vector<bool> out_nz = union_out_nonzero(br, nz);
  const size_t m = out_nz.size();
  JaxprList jb;
  for (const JaxprPtr& b : br) jb.push_back(trace::jvp_jaxpr(*b, nz, out_nz).const_free("cond"));
  std::vector<Array> operands(primals.begin(), primals.end());
  for (size_t i = 0; i < ops.size(); ++i)
    if (nz[i]) operands.push_back(ops_dot[i]);
  std::vector<Array> outs = tessera::bind(cond, operands, cond_params(std::move(jb)));
  std::vector<Array> po(outs.begin(), outs.begin() + m), to(m);
  size_t k = m;
  for (size_t i = 0; i < m; ++i)
    if (out_nz[i]) to[i] = outs[k++];
  return {std::move(po), std::move(to)};
}

// ---- Linearize ----

// JAX's _merge_branch_residuals: residual slots shared across branches by type (the j-th
// residual of a type in one branch reuses the j-th slot of that type). Returns the slots' avals
// and, per branch, the slot of each of its residuals.
std::pair<std::vector<Aval>, std::vector<std::vector<size_t>>> merge_residuals(
    const std::vector<std::vector<Aval>>& per_branch) {
  std::vector<Aval> slots;
  std::vector<std::vector<size_t>> index(per_branch.size());
  for (size_t k = 0; k < per_branch.size(); ++k) {
    std::vector<size_t> used;  // slots taken by this branch
    for (const Aval& a : per_branch[k]) {
      size_t s = 0;
      for (; s < slots.size(); ++s)
        if (slots[s] == a && std::find(used.begin(), used.end(), s) == used.end()) break;
      if (s == slots.size()) slots.push_back(a);
      used.push_back(s);
      index[k].push_back(s);
    }
  }
  return {std::move(slots), std::move(index)};
}

ad::JvpOut cond_linearize(std::span<const Array> primals, std::span<const Array> tangents,
                          const Params& params) {
  const JaxprList& br = branches_of(params);
  const Array& index = primals[0];
  std::span<const Array> ops = primals.subspan(1), ops_dot = tangents.subspan(1);
  std::vector<bool> nz = nonzero_mask(ops, ops_dot);
  std::vector<bool> out_nz = union_out_nonzero(br, nz, /*linearizing=*/true);
  const size_t m = out_nz.size(), nb = br.size();
  if (std::none_of(out_nz.begin(), out_nz.end(), [](bool b) { return b; }))
    return {tessera::bind(cond, primals, params), std::vector<Array>(m)};

  std::vector<trace::LinearizedJaxpr> lins;
  std::vector<std::vector<Aval>> res_avals;
  for (const JaxprPtr& b : br) {
    lins.push_back(trace::linearize_jaxpr(*b, nz, out_nz));
    res_avals.push_back(lins.back().res_avals);
  }
  auto [slots, slot_of] = merge_residuals(res_avals);
  const size_t nres = slots.size();

  // The known cond: every branch returns its primal outputs and all residual slots (zeros in
  // the slots of other branches' residuals, as JAX's _join_cond_outputs).
  std::vector<flat::Fun> known_funs;
  for (size_t k = 0; k < nb; ++k) {
    known_funs.push_back([&, k](std::span<const Array> xs) {
      std::vector<Array> r =
          eval_jaxpr(*lins[k].known, {}, trace::concat({lins[k].known_consts, xs}));
      std::vector<Array> out(r.begin(), r.begin() + m), res(nres);
      for (size_t j = 0; j < slot_of[k].size(); ++j) res[slot_of[k][j]] = r[m + j];
      for (size_t s = 0; s < nres; ++s)
        if (!res[s].defined()) res[s] = ad::zeros_like_aval(slots[s]);
      out.insert(out.end(), res.begin(), res.end());
      return out;
    });
  }
  std::vector<Aval> op_avals = avals_of(ops);
  StagedBranches known = stage_branches(known_funs, op_avals);
  std::vector<Array> known_ops{index};
  known_ops.insert(known_ops.end(), known.consts.begin(), known.consts.end());
  known_ops.insert(known_ops.end(), ops.begin(), ops.end());
  // Only primal values: runs now, in the parent of the tangent trace.
  std::vector<Array> known_outs =
      tessera::bind(cond, known_ops, cond_params(std::move(known.branches)));
  std::vector<Array> primal_outs(known_outs.begin(), known_outs.begin() + m);
  std::vector<Array> res(known_outs.begin() + m, known_outs.end());

  // The linear cond on (index, residuals, tangents): every branch takes all residual slots
  // (JAX's _join_cond_pe_staged_jaxpr_inputs).
  std::vector<Aval> lin_avals = slots;
  std::vector<Array> lin_tangents;
  for (size_t i = 0; i < ops.size(); ++i)
    if (nz[i]) {
      lin_avals.push_back(trace::tangent_aval(ops[i].aval()));
      lin_tangents.push_back(ops_dot[i]);
    }
  std::vector<flat::Fun> lin_funs;
  for (size_t k = 0; k < nb; ++k) {
    lin_funs.push_back([&, k](std::span<const Array> xs) {
      std::vector<Array> in = lins[k].lin_consts;
      for (size_t s : slot_of[k]) in.push_back(xs[s]);
      in.insert(in.end(), xs.begin() + nres, xs.end());
      return eval_jaxpr(*lins[k].lin, {}, in);
    });
  }
  StagedBranches lin = stage_branches(lin_funs, lin_avals);
  std::vector<Array> lin_ops{index};
  lin_ops.insert(lin_ops.end(), lin.consts.begin(), lin.consts.end());
  lin_ops.insert(lin_ops.end(), res.begin(), res.end());
  lin_ops.insert(lin_ops.end(), lin_tangents.begin(), lin_tangents.end());
  // Touches tangents: staged into the linear jaxpr.
  std::vector<Array> lin_outs = tessera::bind(cond, lin_ops, cond_params(std::move(lin.branches)));
  std::vector<Array> to(m);
  size_t k = 0;
  for (size_t i = 0; i < m; ++i)
    if (out_nz[i]) to[i] = lin_outs[k++];
  return {std::move(primal_outs), std::move(to)};
}

// ---- Transpose ----

std::vector<Array> cond_transpose(std::span<const Array> cts, std::span<const Array> args,
                                  std::span<const Aval> /*arg_avals*/, const Params& params) {
  const JaxprList& br = branches_of(params);
  if (!args[0].defined()) ad::bad_linearity("cond", "the branch index is not linear");
  const size_t n = args.size() - 1;
  std::vector<bool> linear(n);
  for (size_t i = 0; i < n; ++i) linear[i] = !args[i + 1].defined();
  JaxprList tb;
  for (const JaxprPtr& b : br) tb.push_back(trace::transpose_jaxpr(*b, linear).const_free("cond"));
  std::vector<Aval> outs = trace::out_avals(*br[0]);
  std::vector<Array> operands{args[0]};
  for (size_t i = 0; i < n; ++i)
    if (!linear[i]) operands.push_back(args[i + 1]);
  for (size_t i = 0; i < outs.size(); ++i) {
    Aval a = trace::tangent_aval(outs[i]);
    operands.push_back(i < cts.size() && cts[i].defined() ? cts[i] : ad::zeros_like_aval(a));
  }
  std::vector<Array> r = tessera::bind(cond, operands, cond_params(std::move(tb)));
  std::vector<Array> result(args.size());
  size_t k = 0;
  for (size_t i = 0; i < n; ++i)
    if (linear[i]) result[i + 1] = r[k++];
  return result;
}

// ---- Batching ----

// pred (shape (B,)) broadcast against x (batch axis first) when x has more dims.
Array bcast_leading(const Array& pred, const Array& x) {
  if (pred.ndim() == x.ndim()) return pred;
  return lax::broadcast_in_dim(pred, x.shape(), {0});
}

batching::BatchOut cond_batch(const BatchAxis&, std::span<const Array> vals,
                              std::span<const int64_t> dims, const Params& params) {
  const JaxprList& br = branches_of(params);
  const int64_t size = batching::batch_size(vals, dims);
  const size_t n = vals.size() - 1, m = br[0]->outvars.size();
  if (dims[0] == batching::kNotMapped) {
    // The index is shared: a cond over batched branches.
    std::vector<bool> ops_b(n);
    std::vector<Array> operands{vals[0]};
    for (size_t i = 0; i < n; ++i) {
      ops_b[i] = dims[i + 1] != batching::kNotMapped;
      operands.push_back(ops_b[i] ? batching::move_axis(vals[i + 1], dims[i + 1], 0) : vals[i + 1]);
    }
    std::vector<bool> out_b(m, false);
    for (const JaxprPtr& b : br)
      out_b = trace::mask_or(
          out_b, trace::batch_jaxpr(*b, ops_b, size, std::vector<bool>(m, false)).out_batched);
    JaxprList bb;
    for (const JaxprPtr& b : br)
      bb.push_back(trace::batch_jaxpr(*b, ops_b, size, out_b).const_free("cond"));
    std::vector<Array> outs = tessera::bind(cond, operands, cond_params(std::move(bb)));
    std::vector<int64_t> out_dims(m);
    for (size_t i = 0; i < m; ++i) out_dims[i] = out_b[i] ? 0 : batching::kNotMapped;
    return {std::move(outs), std::move(out_dims)};
  }
  // A batched index: every branch runs on every member and select_n picks each member's
  // result (JAX's rule). Debug effects may run unconditionally (jax.debug.print in a vmapped
  // cond prints from both branches, as JAX); other effects (IO) cannot.
  Effects effs;
  for (const Effect& e : joined_effects(br))
    if (e.name != "Debug" && e.name != "OrderedDebug") effs.push_back(e);
  if (!effs.empty())
    throw ValueError(op_message(
        "cond", "IO effect not supported in vmap-of-cond: the branches have effect '" +
                    effs[0].name +
                    "' and a batched predicate would run every branch; make the predicate "
                    "unbatched or move the effect out of the cond"));
  Array index = batching::move_axis(vals[0], dims[0], 0);
  const int32_t hi = static_cast<int32_t>(br.size()) - 1;
  index =
      lax::clamp(ad::scalar_const(0, DType::kInt32), index, ad::scalar_const(hi, DType::kInt32));
  std::vector<Array> ops;
  for (size_t i = 0; i < n; ++i)
    ops.push_back(batching::batch_at(vals[i + 1], dims[i + 1], size, 0));
  std::vector<std::vector<Array>> branch_outs;
  for (size_t k = 0; k < br.size(); ++k) {
    JaxprPtr bk =
        trace::batch_jaxpr(*br[k], std::vector<bool>(n, true), size, std::vector<bool>(m, true))
            .const_free("cond");
    // Members that do not take branch k see their operands through stop_gradient, so that
    // reverse mode does not differentiate a branch at inputs it was not run for (JAX #1052).
    Array pred = lax::eq(index, ad::scalar_const(static_cast<double>(k), DType::kInt32));
    std::vector<Array> ops_k;
    for (const Array& x : ops)
      ops_k.push_back(lax::select_n(bcast_leading(pred, x), {lax::stop_gradient(x), x}));
    branch_outs.push_back(eval_jaxpr(*bk, {}, ops_k));
  }
  std::vector<Array> outs;
  for (size_t i = 0; i < m; ++i) {
    std::vector<Array> cases;
    for (auto& bo : branch_outs) cases.push_back(bo[i]);
    outs.push_back(cases.size() == 1 ? cases[0]
                                     : lax::select_n(bcast_leading(index, cases[0]), cases));
  }
  return {std::move(outs), std::vector<int64_t>(m, 0)};
}

// ---- DCE ----

std::pair<std::vector<bool>, std::optional<JaxprEqn>> cond_dce(
    const std::vector<bool>& used_outputs, const JaxprEqn& eqn) {
  const JaxprList& br = branches_of(eqn.params);
  const size_t n = eqn.invars.size() - 1;
  bool any_used = std::any_of(used_outputs.begin(), used_outputs.end(), [](bool b) { return b; });
  if (!any_used && eqn.effects.empty()) return {std::vector<bool>(eqn.invars.size(), false), {}};
  std::vector<JaxprPtr> pruned;
  std::vector<bool> used_in(n, false);
  for (const JaxprPtr& b : br) {
    auto [d, u] = ir::dce(*b, used_outputs);
    used_in = trace::mask_or(used_in, u);
    pruned.push_back(d);
  }
  JaxprList nb;
  for (const JaxprPtr& d : pruned) {
    std::vector<Var> invars;
    for (size_t i = 0; i < n; ++i)
      if (used_in[i]) invars.push_back(d->invars[i]);
    nb.push_back(with_invars(*d, std::move(invars)));
  }
  JaxprEqn ne;
  ne.primitive = eqn.primitive;
  ne.invars.push_back(eqn.invars[0]);
  for (size_t i = 0; i < n; ++i)
    if (used_in[i]) ne.invars.push_back(eqn.invars[i + 1]);
  for (size_t i = 0; i < eqn.outvars.size(); ++i)
    if (used_outputs[i]) ne.outvars.push_back(eqn.outvars[i]);
  ne.effects = effects_union(primitive_effects(cond), joined_effects(nb));
  ne.params = cond_params(std::move(nb));
  std::vector<bool> used{true};
  used.insert(used.end(), used_in.begin(), used_in.end());
  return {std::move(used), std::move(ne)};
}

}  // namespace

void register_cond() {
  cond.kind = PrimitiveKind::kControlFlow;
  // The branch index, then the branches' operands.
  cond.signature = Signature::at_least(1, {{"branches", ParamKind::kJaxprList}});
  Primitive& p = cond;
  p.abstract_eval = cond_abstract_eval;
  p.impl = cond_impl;
  compiler::register_lowering(p, cond_lower);
  p.jvp = cond_jvp;
  p.linearize = cond_linearize;
  p.transpose = cond_transpose;
  p.batch = cond_batch;
  p.dce = cond_dce;
  p.effects = [](const Params& params) { return joined_effects(branches_of(params)); };
  register_primitive(p);
}

}  // namespace tessera::prims
