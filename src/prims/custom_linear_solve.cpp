// The custom_linear_solve primitive (custom_linear_solve.h) and all its rules, after JAX's
// control_flow/solves.py: abstract eval (b's types, then solve's aux outputs), eager evaluation
// of the solve jaxpr, the implicit JVP ẋ = solve(ḃ − Ȧ·x) (itself a custom_linear_solve, so
// linearize stages one linear equation whose transpose is again a solve), the transpose (a
// custom_linear_solve of the transposed problem: vecmat for matvec, transpose_solve for solve),
// batching (a fixed point over which of x and b are batched, consistent across the four
// jaxprs), the jaxprs' effects, and under jit an expansion into the solve jaxpr's equations (JAX
// lowers the impl with lower_fun), so the solve fuses with its neighbours.
#include "prims/custom_linear_solve.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "compiler/passes/expand.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

Primitive custom_linear_solve("custom_linear_solve", /*multiple_results=*/true);

namespace {

constexpr const char* kOp = "custom_linear_solve";
constexpr std::array<const char*, 4> kKeys = {"matvec_jaxpr", "vecmat_jaxpr", "solve_jaxpr",
                                              "transpose_solve_jaxpr"};
enum Slot : size_t { kMatvec = 0, kVecmat = 1, kSolve = 2, kTransposeSolve = 3 };

using JaxprPtr = std::shared_ptr<const Jaxpr>;
using Lengths = std::array<int64_t, 4>;

JaxprPtr jaxpr_at(const Params& p, size_t slot) {
  return p.has(kKeys[slot]) ? p.get<JaxprPtr>(kKeys[slot]) : nullptr;
}

LinearSolveJaxprs jaxprs_of(const Params& p) {
  return {jaxpr_at(p, kMatvec), jaxpr_at(p, kVecmat), jaxpr_at(p, kSolve),
          jaxpr_at(p, kTransposeSolve)};
}

JaxprPtr& slot_ref(LinearSolveJaxprs& j, size_t s) {
  switch (s) {
    case kMatvec:
      return j.matvec;
    case kVecmat:
      return j.vecmat;
    case kSolve:
      return j.solve;
    default:
      return j.transpose_solve;
  }
}
JaxprPtr slot_of(const LinearSolveJaxprs& j, size_t s) {
  return slot_ref(const_cast<LinearSolveJaxprs&>(j), s);
}

// JAX's _LinearSolveTuple.transpose: (vecmat, matvec, transpose_solve, solve).
LinearSolveJaxprs transposed(const LinearSolveJaxprs& j) {
  return {j.vecmat, j.matvec, j.transpose_solve, j.solve};
}
Lengths transposed(const Lengths& l) { return {l[1], l[0], l[3], l[2]}; }

Lengths lengths_of(const Params& p) {
  const std::vector<int64_t>& v = p.get_ints("const_lengths");
  if (v.size() != 4)
    throw TypeError(op_message(kOp,
                               "const_lengths must hold 4 counts (matvec, vecmat, solve, "
                               "transpose_solve), got " +
                                   std::to_string(v.size())));
  return {v[0], v[1], v[2], v[3]};
}

int64_t total(const Lengths& l) { return std::accumulate(l.begin(), l.end(), int64_t{0}); }
int64_t offset(const Lengths& l, size_t slot) {
  return std::accumulate(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(slot), int64_t{0});
}

// The constants of one slot.
template <class T>
std::span<const T> consts_of(std::span<const T> xs, const Lengths& l, size_t slot) {
  return xs.subspan(static_cast<size_t>(offset(l, slot)), static_cast<size_t>(l[slot]));
}

bool same_type(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

std::string avals_list(std::span<const Aval> xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i].str();
  return s + "]";
}

// Checks that jaxpr `slot` takes (its constants, b-shaped leaves) and returns b-shaped leaves
// first; returns its number of trailing (aux) outputs.
size_t check_slot(const Jaxpr& j, size_t slot, std::span<const Aval> consts,
                  std::span<const Aval> b) {
  const std::string name = std::string(kKeys[slot]);
  std::vector<Aval> want(consts.begin(), consts.end());
  want.insert(want.end(), b.begin(), b.end());
  std::vector<Aval> in = trace::in_avals(j);
  bool ok = j.constvars.empty() && in.size() == want.size();
  for (size_t i = 0; ok && i < in.size(); ++i) ok = same_type(in[i], want[i]);
  if (!ok)
    throw TypeError(op_message(kOp, name + " takes " + avals_list(in) +
                                        (j.constvars.empty() ? "" : " and has constvars") +
                                        " but the operands for it are " + avals_list(want)));
  std::vector<Aval> out = trace::out_avals(j);
  ok = out.size() >= b.size();
  for (size_t i = 0; ok && i < b.size(); ++i) ok = same_type(out[i], b[i]);
  if (!ok || ((slot == kMatvec || slot == kVecmat) && out.size() != b.size()))
    throw TypeError(op_message(
        kOp, name + " returns " + avals_list(out) + " but must return leaves of b's types " +
                 avals_list(b) +
                 (slot == kSolve || slot == kTransposeSolve ? " (then any aux outputs)" : "")));
  return out.size() - b.size();
}

std::vector<Aval> linear_solve_abstract_eval(std::span<const Aval> in, const Params& params) {
  const Lengths l = lengths_of(params);
  for (int64_t c : l)
    if (c < 0 || c > static_cast<int64_t>(in.size()))
      throw TypeError(op_message(kOp, "const_lengths " + std::to_string(c) + " must be in [0, " +
                                          std::to_string(in.size()) + "], the operand count"));
  const int64_t nc = total(l);
  if (nc > static_cast<int64_t>(in.size()))
    throw TypeError(op_message(kOp, "const_lengths count " + std::to_string(nc) +
                                        " constants but there are only " +
                                        std::to_string(in.size()) + " operands"));
  const LinearSolveJaxprs j = jaxprs_of(params);
  if ((j.vecmat == nullptr) != (j.transpose_solve == nullptr))
    throw TypeError(op_message(kOp, "vecmat_jaxpr and transpose_solve_jaxpr come together"));
  std::span<const Aval> b = in.subspan(static_cast<size_t>(nc));
  size_t naux = 0;
  for (size_t s = 0; s < 4; ++s) {
    JaxprPtr js = slot_of(j, s);
    if (js == nullptr) {
      if (l[s] != 0)
        throw TypeError(op_message(kOp, std::string(kKeys[s]) + " is absent but const_lengths "
                                                                "gives it constants"));
      continue;
    }
    size_t a = check_slot(*js, s, consts_of(in, l, s), b);
    if (s == kSolve) naux = a;
    if (s == kTransposeSolve && a != naux)
      throw TypeError(op_message(kOp,
                                 "solve and transpose_solve must return the same number "
                                 "of aux outputs, got " +
                                     std::to_string(naux) + " and " + std::to_string(a)));
  }
  std::vector<Aval> out(b.begin(), b.end());
  std::vector<Aval> sout = trace::out_avals(*j.solve);
  out.insert(out.end(), sout.begin() + static_cast<std::ptrdiff_t>(b.size()), sout.end());
  return out;
}

// solve on its constants and b.
std::vector<Array> run_solve(std::span<const Array> args, const Params& params) {
  const Lengths l = lengths_of(params);
  std::vector<Array> in =
      trace::concat({consts_of(args, l, kSolve), args.subspan(static_cast<size_t>(total(l)))});
  return eval_jaxpr(*jaxpr_at(params, kSolve), {}, in);
}

// ---- JVP: ẋ = solve(ḃ − (∂matvec/∂consts)·x), a custom_linear_solve on the tangents. ----
ad::JvpOut linear_solve_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                            const Params& params) {
  const Lengths l = lengths_of(params);
  const size_t nc = static_cast<size_t>(total(l));
  std::vector<Array> x = tessera::bind(custom_linear_solve, primals, params);
  std::span<const Array> b = primals.subspan(nc), b_dot = tangents.subspan(nc);
  const size_t nb = b.size(), nout = x.size();
  std::vector<Array> rhs(nb);
  for (size_t i = 0; i < nb; ++i)
    if (!ad::zero_tangent(b[i], b_dot[i])) rhs[i] = b_dot[i];
  std::span<const Array> mv = consts_of(primals, l, kMatvec);
  std::span<const Array> mv_dot = consts_of(tangents, l, kMatvec);
  bool mv_nonzero = false;
  for (size_t i = 0; i < mv.size(); ++i) mv_nonzero |= !ad::zero_tangent(mv[i], mv_dot[i]);
  if (mv_nonzero) {
    // The tangent of matvec in its constants at fixed x.
    std::vector<Array> ps(mv.begin(), mv.end()), ts(mv_dot.begin(), mv_dot.end());
    ps.insert(ps.end(), x.begin(), x.begin() + static_cast<std::ptrdiff_t>(nb));
    ts.resize(ps.size());
    auto [mv_out, mv_t] = trace::jvp_fun(trace::as_fun(jaxpr_at(params, kMatvec)), ps, ts);
    for (size_t i = 0; i < nb; ++i)
      if (i < mv_t.size() && mv_t[i].defined() && trace::has_tangent(b[i].dtype()))
        rhs[i] = rhs[i].defined() ? lax::sub(rhs[i], mv_t[i]) : lax::neg(mv_t[i]);
  }
  std::vector<Array> x_dot(nout);
  if (std::none_of(rhs.begin(), rhs.end(), [](const Array& r) { return r.defined(); }))
    return {std::move(x), std::move(x_dot)};
  std::vector<Array> ops(primals.begin(), primals.begin() + static_cast<std::ptrdiff_t>(nc));
  for (size_t i = 0; i < nb; ++i) {
    if (!trace::has_tangent(b[i].dtype()))
      throw TypeError(op_message(kOp, "b's leaf " + std::to_string(i) + " has dtype " +
                                          std::string(dtype_name(b[i].dtype())) +
                                          ", which carries no tangent; differentiate a "
                                          "solve with floating right-hand sides"));
    ops.push_back(ad::instantiate(rhs[i], trace::tangent_aval(b[i].aval())));
  }
  std::vector<Array> t = tessera::bind(custom_linear_solve, ops, params);
  for (size_t i = 0; i < nb; ++i) x_dot[i] = t[i];  // aux outputs: zero tangents
  return {std::move(x), std::move(x_dot)};
}

// ---- Transpose: the transposed problem, solved by transpose_solve. ----
std::vector<Array> linear_solve_transpose(std::span<const Array> cts, std::span<const Array> args,
                                          std::span<const Aval> arg_avals, const Params& params) {
  const LinearSolveJaxprs j = jaxprs_of(params);
  if (j.transpose_solve == nullptr)
    throw TypeError(
        "transpose_solve required for backwards mode automatic differentiation of "
        "custom_linear_solve");
  const Lengths l = lengths_of(params);
  const size_t nc = static_cast<size_t>(total(l)), nb = args.size() - nc;
  for (size_t i = 0; i < nc; ++i)
    if (!args[i].defined())
      ad::bad_linearity(kOp,
                        "custom_linear_solve is linear in b only, not in its operator's "
                        "constants");
  for (size_t i = nc; i < args.size(); ++i)
    if (args[i].defined())
      ad::bad_linearity(kOp, "custom_linear_solve's b must be linear as a whole");
  const Lengths tl = transposed(l);
  std::vector<Array> ops;
  for (size_t s : {kVecmat, kMatvec, kTransposeSolve, kSolve}) {
    std::span<const Array> c = consts_of(args, l, s);
    ops.insert(ops.end(), c.begin(), c.end());
  }
  for (size_t i = 0; i < nb; ++i)
    ops.push_back(
        ad::instantiate(i < cts.size() ? cts[i] : Array(), trace::tangent_aval(arg_avals[nc + i])));
  std::vector<Array> r =
      tessera::bind(custom_linear_solve, ops, linear_solve_params(transposed(j), tl));
  std::vector<Array> out(args.size());
  for (size_t i = 0; i < nb; ++i) out[nc + i] = r[i];
  return out;
}

// ---- Batching: JAX's fixed point over which parts of x and b are batched. ----
batching::BatchOut linear_solve_batch(const BatchAxis&, std::span<const Array> vals,
                                      std::span<const int64_t> dims, const Params& params) {
  const Lengths l = lengths_of(params);
  const LinearSolveJaxprs j = jaxprs_of(params);
  const size_t nc = static_cast<size_t>(total(l)), nb = vals.size() - nc;
  const int64_t size = batching::batch_size(vals, dims);
  std::array<std::vector<bool>, 4> cbat;
  for (size_t s = 0; s < 4; ++s)
    for (int64_t d : consts_of(dims, l, s)) cbat[s].push_back(d != batching::kNotMapped);
  std::vector<bool> orig_b(nb);
  for (size_t i = 0; i < nb; ++i) orig_b[i] = dims[nc + i] != batching::kNotMapped;
  const size_t nsolve = j.solve->outvars.size();
  auto cat = [](const std::vector<bool>& a, const std::vector<bool>& b) {
    std::vector<bool> r = a;
    r.insert(r.end(), b.begin(), b.end());
    return r;
  };
  std::vector<bool> b_bat = orig_b, x_bat(nsolve, false);
  std::array<trace::BatchedJaxpr, 4> bj;
  std::vector<bool> solve_x_bat;
  for (size_t iter = 0;; ++iter) {
    if (iter > 1 + nb + nsolve) throw InternalError("[custom_linear_solve] batching fixpoint");
    bj[kSolve] = trace::batch_jaxpr(*j.solve, cat(cbat[kSolve], b_bat), size, x_bat);
    solve_x_bat = bj[kSolve].out_batched;
    std::vector<bool> x_out = solve_x_bat;
    if (j.vecmat) {
      bj[kVecmat] = trace::batch_jaxpr(*j.vecmat, cat(cbat[kVecmat], b_bat), size, b_bat);
      std::vector<bool> v = bj[kVecmat].out_batched;
      v.resize(nsolve, true);  // aux outputs batched by default
      x_out = trace::mask_or(x_out, v);
    }
    std::vector<bool> x_noaux(x_out.begin(), x_out.begin() + static_cast<std::ptrdiff_t>(nb));
    bj[kMatvec] = trace::batch_jaxpr(*j.matvec, cat(cbat[kMatvec], x_noaux), size, b_bat);
    std::vector<bool> b_out = trace::mask_or(bj[kMatvec].out_batched, orig_b);
    if (j.transpose_solve) {
      bj[kTransposeSolve] =
          trace::batch_jaxpr(*j.transpose_solve, cat(cbat[kTransposeSolve], x_noaux), size, x_out);
      std::vector<bool> t = bj[kTransposeSolve].out_batched;
      t.resize(nb);
      b_out = trace::mask_or(b_out, t);
    }
    if (x_out == x_bat && b_out == b_bat) break;
    x_bat = std::move(x_out);
    b_bat = std::move(b_out);
  }
  // Operands: per slot the batched jaxpr's own constants, then the slot's constants (batched
  // ones moved to axis 0); then b, moved or broadcast to axis 0 where batched.
  std::vector<Array> ops;
  Lengths nl{};
  LinearSolveJaxprs nj;
  for (size_t s = 0; s < 4; ++s) {
    if (slot_of(j, s) == nullptr) continue;
    const trace::BatchedJaxpr& b = bj[s];
    ops.insert(ops.end(), b.consts.begin(), b.consts.end());
    std::span<const Array> c = consts_of(vals, l, s);
    std::span<const int64_t> cd = consts_of(dims, l, s);
    for (size_t i = 0; i < c.size(); ++i)
      ops.push_back(cd[i] == batching::kNotMapped ? c[i] : batching::move_axis(c[i], cd[i], 0));
    nl[s] = static_cast<int64_t>(b.consts.size()) + l[s];
    slot_ref(nj, s) = b.jaxpr;
  }
  for (size_t i = 0; i < nb; ++i) {
    const Array& v = vals[nc + i];
    const int64_t d = dims[nc + i];
    ops.push_back(b_bat[i] ? batching::batch_at(v, d, size, 0) : v);
  }
  std::vector<Array> outs = tessera::bind(custom_linear_solve, ops, linear_solve_params(nj, nl));
  std::vector<int64_t> out_dims(nsolve);
  for (size_t i = 0; i < nsolve; ++i) out_dims[i] = solve_x_bat[i] ? 0 : batching::kNotMapped;
  return {std::move(outs), std::move(out_dims)};
}

Effects joined_effects(const Params& params) {
  Effects e;
  const LinearSolveJaxprs j = jaxprs_of(params);
  for (size_t s = 0; s < 4; ++s)
    if (JaxprPtr js = slot_of(j, s)) e = effects_union(e, js->effects);
  return e;
}

// Under jit: the equation becomes the solve jaxpr's equations on its operands.
std::shared_ptr<const Jaxpr> linear_solve_expansion(const JaxprEqn& e) {
  std::vector<Aval> in;
  for (const Atom& a : e.invars) in.push_back(atom_aval(a));
  const Params& params = e.params;
  flat::Fun f = [&params](std::span<const Array> xs) { return run_solve(xs, params); };
  trace::Staged st = trace::stage(f, in);
  if (!st.consts.empty()) return nullptr;
  return st.jaxpr;
}

}  // namespace

Params linear_solve_params(const LinearSolveJaxprs& jaxprs, const Lengths& const_lengths) {
  std::vector<int64_t> lengths(const_lengths.begin(), const_lengths.end());
  if (jaxprs.vecmat == nullptr)
    return Params{{"const_lengths", std::move(lengths)},
                  {"matvec_jaxpr", jaxprs.matvec},
                  {"solve_jaxpr", jaxprs.solve}};
  return Params{{"const_lengths", std::move(lengths)},
                {"matvec_jaxpr", jaxprs.matvec},
                {"solve_jaxpr", jaxprs.solve},
                {"transpose_solve_jaxpr", jaxprs.transpose_solve},
                {"vecmat_jaxpr", jaxprs.vecmat}};
}

void register_custom_linear_solve() {
  Primitive& p = custom_linear_solve;
  p.kind = PrimitiveKind::kControlFlow;
  // Operands: the four jaxprs' constants (const_lengths), then b's leaves.
  p.signature = Signature::at_least(0, {{"const_lengths", ParamKind::kInts},
                                        {"matvec_jaxpr", ParamKind::kJaxpr},
                                        {"solve_jaxpr", ParamKind::kJaxpr},
                                        {"transpose_solve_jaxpr", ParamKind::kJaxpr, false},
                                        {"vecmat_jaxpr", ParamKind::kJaxpr, false}});
  p.abstract_eval = linear_solve_abstract_eval;
  p.impl = [](const ExecContext&, std::span<const Array> args, const Params& params,
              std::span<const Aval>) { return run_solve(args, params); };
  p.jvp = linear_solve_jvp;
  p.transpose = linear_solve_transpose;
  p.batch = linear_solve_batch;
  p.effects = joined_effects;
  compiler::register_expansion(p, linear_solve_expansion);
  register_primitive(p);
}

}  // namespace tessera::prims
