// scan (scan.h): params, abstract evaluation, the eager loop, DCE, effects and registration.
#include "prims/scan.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <unordered_set>

#include "compiler/lowering.h"
#include "ir/passes/dce.h"
#include "tessera/errors.h"

namespace tessera::prims {

Primitive scan("scan", /*multiple_results=*/true);

ScanParams scan_params_of(const Params& p) {
  ScanParams sp;
  sp.jaxpr = p.get<std::shared_ptr<const Jaxpr>>("jaxpr");
  sp.num_consts = p.get_int("num_consts");
  sp.num_carry = p.get_int("num_carry");
  sp.length = p.get_int("length");
  sp.reverse = p.get_bool("reverse");
  sp.unroll = p.get_int("unroll");
  return sp;
}

Params make_scan_params(const ScanParams& sp) {
  return Params{{"jaxpr", sp.jaxpr},           {"length", sp.length},   {"num_carry", sp.num_carry},
                {"num_consts", sp.num_consts}, {"reverse", sp.reverse}, {"unroll", sp.unroll}};
}

std::vector<Array> bind_scan(const ScanParams& sp, std::span<const Array> operands) {
  return tessera::bind(scan, operands, make_scan_params(sp));
}

std::shared_ptr<const Jaxpr> reorder_jaxpr(const Jaxpr& j, const std::vector<size_t>& in_order,
                                           const std::vector<size_t>& out_order) {
  Jaxpr out;
  out.constvars = j.constvars;
  for (size_t i : in_order) out.invars.push_back(j.invars.at(i));
  for (size_t i : out_order) out.outvars.push_back(j.outvars.at(i));
  out.eqns = j.eqns;
  out.effects = j.effects;
  return intern(std::move(out));
}

namespace {

bool same_type(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

// "the shapes do not match" / "the dtypes do not match" (JAX's wording).
std::string mismatch_str(const Aval& a, const Aval& b) {
  if (a.shape != b.shape && a.dtype != b.dtype) return "so the shapes and dtypes do not match";
  return a.shape != b.shape ? "so the shapes do not match" : "so the dtypes do not match";
}

std::vector<Aval> scan_abstract_eval(std::span<const Aval> in, const Params& params) {
  ScanParams sp = scan_params_of(params);
  const Jaxpr& b = *sp.jaxpr;
  if (sp.length < 0)
    throw ValueError(op_message("scan", "length must be >= 0, got " + std::to_string(sp.length)));
  // Range-checked before the size_t casts: a negative count would wrap and index past the body.
  if (sp.num_consts < 0 || sp.num_carry < 0 || sp.num_consts > static_cast<int64_t>(in.size()) ||
      sp.num_carry > static_cast<int64_t>(in.size()) - sp.num_consts)
    throw TypeError(op_message("scan", "num_consts=" + std::to_string(sp.num_consts) +
                                           " and num_carry=" + std::to_string(sp.num_carry) +
                                           " must be nonnegative and together at most the " +
                                           std::to_string(in.size()) + " operands"));
  const size_t nc = static_cast<size_t>(sp.num_consts), ncar = static_cast<size_t>(sp.num_carry);
  if (b.invars.size() != in.size() || b.outvars.size() < ncar)
    throw TypeError(op_message(
        "scan", "the body takes " + std::to_string(b.invars.size()) + " inputs and returns " +
                    std::to_string(b.outvars.size()) + " outputs, which does not fit " +
                    std::to_string(in.size()) + " operands with num_consts=" + std::to_string(nc) +
                    " and num_carry=" + std::to_string(ncar)));
  for (size_t k = 0; k < ncar; ++k) {
    const Aval& ci = b.invars[nc + k].aval();
    const Aval& co = atom_aval(b.outvars[k]);
    if (!same_type(ci, co))
      throw TypeError(op_message(
          "scan",
          "scan body function carry input and carry output must have equal types (e.g. shapes "
          "and dtypes of arrays), but they differ: the input carry component carry[" +
              std::to_string(k) + "] has type " + ci.str() +
              " but the corresponding output carry component has type " + co.str() + ", " +
              mismatch_str(ci, co)));
  }
  for (size_t i = 0; i < nc + ncar; ++i) {
    const Aval& want = b.invars[i].aval();
    if (!same_type(in[i], want))
      throw TypeError(
          op_message("scan", std::string(i < nc ? "constant operand " : "initial carry operand ") +
                                 std::to_string(i < nc ? i : i - nc) + " has type " + in[i].str() +
                                 " but the body function expects " + want.str()));
  }
  for (size_t i = nc + ncar; i < in.size(); ++i) {
    const Aval& x = in[i];
    const Aval& want = b.invars[i].aval();
    Aval slice = x;
    bool ok = x.ndim() >= 1 && x.shape[0] == sp.length;
    if (ok) {
      slice.shape.erase(slice.shape.begin());
      ok = same_type(slice, want);
    }
    if (!ok)
      throw TypeError(op_message(
          "scan", "scanned operand xs[" + std::to_string(i - nc - ncar) + "] has type " + x.str() +
                      " but the body function expects slices of type " + want.str() +
                      " along a leading axis of length " + std::to_string(sp.length)));
  }
  std::vector<Aval> out;
  out.reserve(b.outvars.size());
  for (size_t k = 0; k < b.outvars.size(); ++k) {
    Aval a = atom_aval(b.outvars[k]);
    if (k >= ncar) a.shape.insert(a.shape.begin(), sp.length);
    out.push_back(std::move(a));
  }
  return out;
}

// The loop: each step runs `body` (the body's equations through the eval trace, or its nested
// executable under jit) on the consts, the carries and this step's x slices, which are copied
// out of the scanned operands; each y slice is copied into its preallocated stacked output.
std::vector<Array> scan_loop(const ExecContext& ctx, std::span<const Array> args,
                             const ScanParams& sp, std::span<const Aval> out_avals,
                             const compiler::BodyFn& body) {
  const Jaxpr& b = *sp.jaxpr;
  const size_t nc = static_cast<size_t>(sp.num_consts), ncar = static_cast<size_t>(sp.num_carry);
  const size_t nx = args.size() - nc - ncar, ny = b.outvars.size() - ncar;

  std::vector<Array> in(args.begin(), args.end());
  std::vector<Aval> x_slice(nx);
  std::vector<size_t> x_step(nx);
  for (size_t j = 0; j < nx; ++j) {
    x_slice[j] = args[nc + ncar + j].aval();
    x_slice[j].shape.erase(x_slice[j].shape.begin());
    x_step[j] = x_slice[j].nbytes();
  }
  std::vector<Array> ys(ny);
  std::vector<size_t> y_step(ny);
  for (size_t k = 0; k < ny; ++k) {
    ys[k] = empty_array(out_avals[ncar + k], "scan", ctx.device);
    Aval s = out_avals[ncar + k];
    s.shape.erase(s.shape.begin());
    y_step[k] = s.nbytes();
  }
  for (int64_t i = 0; i < sp.length; ++i) {
    const int64_t idx = sp.reverse ? sp.length - 1 - i : i;
    for (size_t j = 0; j < nx; ++j) {
      const auto* base = static_cast<const std::byte*>(args[nc + ncar + j].raw_data("scan"));
      in[nc + ncar + j] = array_from_host(x_slice[j], base + static_cast<size_t>(idx) * x_step[j]);
    }
    std::vector<Array> outs = body(in);
    for (size_t k = 0; k < ncar; ++k) in[nc + k] = std::move(outs[k]);
    for (size_t k = 0; k < ny; ++k) {
      const Array& y = outs[ncar + k];
      if (!y.is_concrete() || y.nbytes() != y_step[k] || y.dtype() != out_avals[ncar + k].dtype)
        throw_internal("scan", "the body returned y[" + std::to_string(k) + "] of type " +
                                   y.aval().str() + " where its jaxpr says otherwise");
      if (y_step[k] == 0) continue;
      auto* dst = static_cast<std::byte*>(ys[k].buffer("scan")->data());
      std::memcpy(dst + static_cast<size_t>(idx) * y_step[k], y.raw_data("scan"), y_step[k]);
    }
  }
  std::vector<Array> result(in.begin() + nc, in.begin() + nc + ncar);
  result.insert(result.end(), ys.begin(), ys.end());
  return result;
}

std::vector<Array> scan_impl(const ExecContext& ctx, std::span<const Array> args,
                             const Params& params, std::span<const Aval> out_avals) {
  ScanParams sp = scan_params_of(params);
  Trace* bottom = current_trace();
  while (bottom->parent() != nullptr) bottom = bottom->parent();
  TraceScope scope(bottom);
  return scan_loop(ctx, args, sp, out_avals,
                   [&sp](std::span<const Array> in) { return eval_jaxpr(*sp.jaxpr, {}, in); });
}

// Under jit: the body is a nested executable compiled once with the program.
compiler::LoweredEqn scan_lower(const JaxprEqn& eqn) {
  auto sp = std::make_shared<const ScanParams>(scan_params_of(eqn.params));
  std::shared_ptr<const compiler::Executable> body = compiler::compile(*sp->jaxpr);
  std::vector<Aval> out_avals;
  for (const Var& v : eqn.outvars) out_avals.push_back(v.aval());
  compiler::LoweredEqn l;
  l.run = [sp, body, out_avals](const ExecContext& ctx, std::span<const Array> args) {
    return scan_loop(ctx, args, *sp, out_avals, compiler::executable_body(body, ctx));
  };
  l.nested.emplace_back("body", body);
  return l;
}

// DCE: unused ys are dropped; a carry is kept only when a used output or an effectful body
// equation needs it (iterated to a fixed point, since a kept carry may read other carries).
std::pair<std::vector<bool>, std::optional<JaxprEqn>> scan_dce(
    const std::vector<bool>& used_outputs, const JaxprEqn& eqn) {
  ScanParams sp = scan_params_of(eqn.params);
  const Jaxpr& b = *sp.jaxpr;
  const size_t nc = static_cast<size_t>(sp.num_consts), ncar = static_cast<size_t>(sp.num_carry);
  const size_t nin = eqn.invars.size(), nout = b.outvars.size();
  bool any = std::any_of(used_outputs.begin(), used_outputs.end(), [](bool u) { return u; });
  if (!any && b.effects.empty()) return {std::vector<bool>(nin, false), std::nullopt};

  std::vector<bool> used_carry(used_outputs.begin(), used_outputs.begin() + ncar);
  std::shared_ptr<const Jaxpr> pruned;
  std::vector<bool> used_in;
  for (;;) {
    std::vector<bool> used_body(used_outputs.begin(), used_outputs.end());
    for (size_t k = 0; k < ncar; ++k) used_body[k] = used_carry[k];
    std::tie(pruned, used_in) = ir::dce(b, used_body);
    bool changed = false;
    for (size_t k = 0; k < ncar; ++k)
      if (used_in[nc + k] && !used_carry[k]) used_carry[k] = changed = true;
    if (!changed) break;
  }
  // The pruned body keeps the carries in used_carry, the consts and xs it reads.
  std::vector<bool> keep_in(nin);
  for (size_t i = 0; i < nin; ++i)
    keep_in[i] = (i >= nc && i < nc + ncar) ? static_cast<bool>(used_carry[i - nc]) : used_in[i];
  Jaxpr nb;
  nb.eqns = pruned->eqns;
  nb.effects = b.effects;
  nb.outvars = pruned->outvars;  // used carries then used ys, in order
  for (size_t i = 0; i < nin; ++i)
    if (keep_in[i]) nb.invars.push_back(b.invars[i]);

  JaxprEqn ne;
  ne.primitive = eqn.primitive;
  ne.effects = eqn.effects;
  for (size_t i = 0; i < nin; ++i)
    if (keep_in[i]) ne.invars.push_back(eqn.invars[i]);
  for (size_t k = 0; k < nout; ++k) {
    bool keep = k < ncar ? static_cast<bool>(used_carry[k]) : used_outputs[k];
    if (keep) ne.outvars.push_back(eqn.outvars[k]);
  }
  ScanParams nsp = sp;
  nsp.num_consts = std::count(keep_in.begin(), keep_in.begin() + nc, true);
  nsp.num_carry = std::count(used_carry.begin(), used_carry.end(), true);
  nsp.jaxpr = intern(std::move(nb));
  ne.params = make_scan_params(nsp);
  return {std::move(keep_in), std::move(ne)};
}

}  // namespace

void register_scan() {
  scan.kind = PrimitiveKind::kControlFlow;
  // Operands: consts, carries, xs, as the body's invars (scan_abstract_eval checks them).
  scan.signature = Signature::at_least(0, {{"jaxpr", ParamKind::kJaxpr},
                                           {"length", ParamKind::kInt},
                                           {"num_carry", ParamKind::kInt},
                                           {"num_consts", ParamKind::kInt},
                                           {"reverse", ParamKind::kBool},
                                           {"unroll", ParamKind::kInt}});
  Primitive& p = scan;
  p.abstract_eval = scan_abstract_eval;
  p.impl = scan_impl;
  compiler::register_lowering(p, scan_lower);
  p.jvp = scan_jvp;
  p.linearize = scan_linearize;
  p.transpose = scan_transpose;
  p.batch = scan_batch;
  p.dce = scan_dce;
  p.effects = [](const Params& params) {
    return std::vector<Effect>(scan_params_of(params).jaxpr->effects);
  };
  register_primitive(p);
}

}  // namespace tessera::prims
