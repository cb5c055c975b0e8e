// scan's differentiation rules (scan.h): JVP (one scan over primals and tangents), linearize
// (a known scan that computes the primal outputs and stacks the residuals that vary per step,
// the loop-invariant ones computed once before it, then a linear scan staged on the tangents) and
// transpose (a scan in the opposite direction).
#include <string>

#include "ir/passes/dce.h"
#include "prims/scan.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::prims {

namespace {

struct Sizes {
  size_t nc, ncar, nx, nout, ny;
};
Sizes sizes_of(const ScanParams& sp, size_t n_operands) {
  Sizes s;
  s.nc = static_cast<size_t>(sp.num_consts);
  s.ncar = static_cast<size_t>(sp.num_carry);
  s.nx = n_operands - s.nc - s.ncar;
  s.nout = sp.jaxpr->outvars.size();
  s.ny = s.nout - s.ncar;
  return s;
}

// Which inputs carry nonzero tangents, with the carries closed under the body (a fixed point:
// a carry's tangent is nonzero when its initial tangent is or the body makes it so). Under
// linearize the body is probed with linearize_jaxpr, not its JVP: a body holding a custom_vjp
// has no JVP.
std::vector<bool> nonzero_fixpoint(const Jaxpr& body, const Sizes& s,
                                   std::span<const Array> primals, std::span<const Array> tangents,
                                   bool linearizing = false) {
  std::vector<bool> nz(primals.size());
  for (size_t i = 0; i < primals.size(); ++i)
    nz[i] = !ad::zero_tangent(primals[i], tangents[i]) && trace::has_tangent(primals[i].dtype());
  for (;;) {
    std::vector<bool> inst(s.nout, false);
    for (size_t k = 0; k < s.ncar; ++k) inst[k] = nz[s.nc + k];
    std::vector<bool> out_nz = linearizing ? trace::linearize_jaxpr(body, nz, inst).out_nonzero
                                           : trace::jvp_jaxpr(body, nz, inst).out_nonzero;
    bool changed = false;
    for (size_t k = 0; k < s.ncar; ++k)
      if (out_nz[k] && !nz[s.nc + k]) nz[s.nc + k] = changed = true;
    if (!changed) return nz;
  }
}

std::vector<bool> carry_instantiate(const std::vector<bool>& nz, const Sizes& s) {
  std::vector<bool> inst(s.nout, false);
  for (size_t k = 0; k < s.ncar; ++k) inst[k] = nz[s.nc + k];
  return inst;
}

// The tangent of input i: the given one, or zeros when the body makes it nonzero.
Array tangent_or_zeros(const Array& primal, const Array& tangent) {
  if (tangent.defined() && !ad::zero_tangent(primal, tangent)) return tangent;
  return ad::zeros_like_aval(trace::tangent_aval(primal.aval()));
}

}  // namespace

ad::JvpOut scan_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                    const Params& params) {
  ScanParams sp = scan_params_of(params);
  const Sizes s = sizes_of(sp, primals.size());
  const size_t n = primals.size();
  std::vector<bool> nz = nonzero_fixpoint(*sp.jaxpr, s, primals, tangents);
  trace::JvpJaxpr jj = trace::jvp_jaxpr(*sp.jaxpr, nz, carry_instantiate(nz, s));

  // jj's invars: [primals..., tangents of nz inputs...]; reorder into the scan's groups.
  std::vector<size_t> tan_index(n, 0);
  for (size_t i = 0, t = n; i < n; ++i)
    if (nz[i]) tan_index[i] = t++;
  std::vector<size_t> in_order;
  std::vector<Array> operands;
  ScanParams nsp = sp;
  auto group = [&](size_t lo, size_t hi) -> int64_t {
    int64_t count = 0;
    for (size_t i = lo; i < hi; ++i) {
      in_order.push_back(i);
      operands.push_back(primals[i]);
      ++count;
    }
    for (size_t i = lo; i < hi; ++i)
      if (nz[i]) {
        in_order.push_back(tan_index[i]);
        operands.push_back(tangent_or_zeros(primals[i], tangents[i]));
        ++count;
      }
    return count;
  };
  nsp.num_consts = group(0, s.nc);
  nsp.num_carry = group(s.nc, s.nc + s.ncar);
  group(s.nc + s.ncar, n);

  // jj's outvars: [primal outs..., tangents of out_nonzero outs...].
  std::vector<size_t> out_tan(s.nout, 0);
  for (size_t k = 0, t = s.nout; k < s.nout; ++k)
    if (jj.out_nonzero[k]) out_tan[k] = t++;
  std::vector<size_t> out_order;
  auto out_group = [&](size_t lo, size_t hi) {
    for (size_t k = lo; k < hi; ++k) out_order.push_back(k);
    for (size_t k = lo; k < hi; ++k)
      if (jj.out_nonzero[k]) out_order.push_back(out_tan[k]);
  };
  out_group(0, s.ncar);
  out_group(s.ncar, s.nout);
  nsp.jaxpr = reorder_jaxpr(*jj.const_free("scan"), in_order, out_order);

  std::vector<Array> outs = bind_scan(nsp, operands);
  std::vector<Array> po, to;
  size_t pos = 0;
  auto take = [&](size_t lo, size_t hi) {
    for (size_t k = lo; k < hi; ++k) po.push_back(outs[pos++]);
    for (size_t k = lo; k < hi; ++k) to.push_back(jj.out_nonzero[k] ? outs[pos++] : Array());
  };
  take(0, s.ncar);
  take(s.ncar, s.nout);
  return {std::move(po), std::move(to)};
}

ad::JvpOut scan_linearize(std::span<const Array> primals, std::span<const Array> tangents,
                          const Params& params) {
  ScanParams sp = scan_params_of(params);
  const Sizes s = sizes_of(sp, primals.size());
  const size_t n = primals.size();
  std::vector<bool> nz = nonzero_fixpoint(*sp.jaxpr, s, primals, tangents, /*linearizing=*/true);
  trace::LinearizedJaxpr lj = trace::linearize_jaxpr(*sp.jaxpr, nz, carry_instantiate(nz, s));
  const size_t nkc = lj.known_consts.size(), nres = lj.res_avals.size();
  const size_t nlc = lj.lin_consts.size();

  // Residuals: a forwarded const is loop-invariant (passed as a const of the linear scan), a
  // forwarded x is its scanned operand already; one that the body computes from the constants
  // alone is hoisted — computed once, before the loop, and passed as a const (JAX's
  // _scan_partial_eval does the same with its loop-invariant residuals); the others are stacked
  // by the known scan.
  enum class Res { kConst, kXs, kHoisted, kStacked };
  std::vector<Res> kind(nres, Res::kStacked);
  for (size_t r = 0; r < nres; ++r) {
    int64_t ri = lj.res_input[r];
    if (ri >= 0 && static_cast<size_t>(ri) < s.nc) kind[r] = Res::kConst;
    if (ri >= 0 && static_cast<size_t>(ri) >= s.nc + s.ncar) kind[r] = Res::kXs;
  }
  auto invariant = [&](size_t r) { return kind[r] == Res::kConst || kind[r] == Res::kHoisted; };
  std::vector<Array> res_val(nres);
  {
    // The known body's part that reads only [known_consts, consts].
    std::vector<bool> unknown_in(nkc + n, false);
    for (size_t i = nkc + s.nc; i < nkc + n; ++i) unknown_in[i] = true;
    trace::PartialEval inv = trace::partial_eval_jaxpr_nounits(
        *lj.known, unknown_in, std::vector<bool>(s.nout + nres, false));
    std::vector<bool> take(inv.known->outvars.size(), false);
    std::vector<size_t> hoisted;
    for (size_t o = 0, pos = 0; o < s.nout + nres; ++o) {
      if (inv.out_unknown[o]) continue;
      if (o >= s.nout && kind[o - s.nout] == Res::kStacked) {
        kind[o - s.nout] = Res::kHoisted;
        hoisted.push_back(o - s.nout);
        take[pos] = true;
      }
      ++pos;
    }
    if (!hoisted.empty()) {
      auto h = ir::dce(*inv.known, take).first;
      std::vector<Array> hin = trace::concat({lj.known_consts, primals.first(s.nc)});
      std::vector<Array> hv = eval_jaxpr(*h, {}, hin);
      for (size_t k = 0; k < hoisted.size(); ++k) res_val[hoisted[k]] = std::move(hv[k]);
    }
  }

  // Known scan: consts [known_consts, consts], carry, xs -> [carry, ys, stacked residuals].
  std::vector<bool> used(s.nout + nres, true);
  for (size_t r = 0; r < nres; ++r) used[s.nout + r] = kind[r] == Res::kStacked;
  auto known_pruned = ir::dce(*lj.known, used).first;
  ScanParams ksp = sp;
  ksp.num_consts = static_cast<int64_t>(nkc + s.nc);
  ksp.jaxpr = intern(Jaxpr(*known_pruned));
  std::vector<Array> koperands = lj.known_consts;
  koperands.insert(koperands.end(), primals.begin(), primals.end());
  std::vector<Array> kouts = bind_scan(ksp, koperands);
  std::vector<Array> po(kouts.begin(), kouts.begin() + s.nout);

  bool any_out = false;
  for (bool b : lj.out_nonzero) any_out |= b;
  if (!any_out) return {std::move(po), std::vector<Array>(s.nout)};

  for (size_t r = 0, st = s.nout; r < nres; ++r) {
    if (kind[r] == Res::kStacked) res_val[r] = kouts[st++];
    if (kind[r] == Res::kConst || kind[r] == Res::kXs) res_val[r] = primals[lj.res_input[r]];
  }

  // Linear scan. lin's invars: [lin_consts, residuals, tangents of the nz inputs].
  std::vector<size_t> tan_index(n, 0);
  for (size_t i = 0, t = nlc + nres; i < n; ++i)
    if (nz[i]) tan_index[i] = t++;
  std::vector<size_t> in_order;
  std::vector<Array> operands;
  auto add = [&](size_t idx, Array v) {
    in_order.push_back(idx);
    operands.push_back(std::move(v));
  };
  for (size_t c = 0; c < nlc; ++c) add(c, lj.lin_consts[c]);
  for (size_t r = 0; r < nres; ++r)
    if (invariant(r)) add(nlc + r, res_val[r]);
  for (size_t i = 0; i < s.nc; ++i)
    if (nz[i]) add(tan_index[i], tangents[i]);
  ScanParams lsp = sp;
  lsp.num_consts = static_cast<int64_t>(operands.size());
  for (size_t i = s.nc; i < s.nc + s.ncar; ++i)
    if (nz[i]) add(tan_index[i], tangent_or_zeros(primals[i], tangents[i]));
  lsp.num_carry = static_cast<int64_t>(operands.size()) - lsp.num_consts;
  for (size_t r = 0; r < nres; ++r)
    if (!invariant(r)) add(nlc + r, res_val[r]);
  for (size_t i = s.nc + s.ncar; i < n; ++i)
    if (nz[i]) add(tan_index[i], tangents[i]);
  std::vector<size_t> out_order(lj.lin->outvars.size());
  for (size_t k = 0; k < out_order.size(); ++k) out_order[k] = k;
  lsp.jaxpr = reorder_jaxpr(*lj.lin, in_order, out_order);
  std::vector<Array> louts = bind_scan(lsp, operands);

  std::vector<Array> to(s.nout);
  for (size_t k = 0, pos = 0; k < s.nout; ++k)
    if (lj.out_nonzero[k]) to[k] = louts[pos++];
  return {std::move(po), std::move(to)};
}

std::vector<Array> scan_transpose(std::span<const Array> cts, std::span<const Array> args,
                                  std::span<const Aval> arg_avals, const Params& params) {
  ScanParams sp = scan_params_of(params);
  const Sizes s = sizes_of(sp, args.size());
  const size_t n = args.size();
  // Linear: undefined consts and xs, and every carry (a defined carry is a materialized zero).
  std::vector<bool> linear(n);
  for (size_t i = 0; i < n; ++i) linear[i] = (i >= s.nc && i < s.nc + s.ncar) || !args[i].defined();
  trace::JaxprPtr tj = trace::transpose_jaxpr(*sp.jaxpr, linear).const_free("scan");

  std::vector<size_t> res_c, lin_c, res_x, lin_x;
  for (size_t i = 0; i < s.nc; ++i) (linear[i] ? lin_c : res_c).push_back(i);
  for (size_t i = s.nc + s.ncar; i < n; ++i) (linear[i] ? lin_x : res_x).push_back(i);
  const size_t nrc = res_c.size(), nlc = lin_c.size(), nrx = res_x.size(), nlx = lin_x.size();
  const size_t ncar = s.ncar, ny = s.ny;

  // The transposed body: consts [res consts]; carry [const cotangent accumulators, carry
  // cotangents]; xs [res xs, ys cotangents] -> carry, ys = xs cotangents.
  flat::Fun body = [tj, nrc, nlc, nrx, ncar, ny](std::span<const Array> v) {
    std::vector<Array> in;
    size_t o_acc = nrc, o_cc = nrc + nlc, o_rx = o_cc + ncar, o_cy = o_rx + nrx;
    in.insert(in.end(), v.begin(), v.begin() + nrc);
    in.insert(in.end(), v.begin() + o_rx, v.begin() + o_cy);
    in.insert(in.end(), v.begin() + o_cc, v.begin() + o_rx);
    in.insert(in.end(), v.begin() + o_cy, v.begin() + o_cy + ny);
    std::vector<Array> r = eval_jaxpr(*tj, {}, in);
    std::vector<Array> out;
    for (size_t k = 0; k < nlc; ++k) out.push_back(lax::add(v[o_acc + k], r[k]));
    out.insert(out.end(), r.begin() + nlc, r.end());
    return out;
  };
  auto strong = [](Aval a) {
    a.weak_type = false;
    return a;
  };
  auto slice = [&](Aval a) {
    a.shape.erase(a.shape.begin());
    return strong(a);
  };
  std::vector<Aval> in_avals;
  std::vector<Array> operands;
  for (size_t i : res_c) {
    in_avals.push_back(arg_avals[i]);
    operands.push_back(args[i]);
  }
  std::vector<Array> zero_acc;
  for (size_t i : lin_c) {
    in_avals.push_back(strong(arg_avals[i]));
    zero_acc.push_back(ad::zeros_like_aval(strong(arg_avals[i])));
  }
  for (size_t k = 0; k < ncar; ++k) in_avals.push_back(strong(arg_avals[s.nc + k]));
  for (size_t i : res_x) in_avals.push_back(slice(arg_avals[i]));
  for (size_t k = 0; k < ny; ++k) in_avals.push_back(slice(cts[ncar + k].aval()));
  trace::Staged st = trace::stage(body, in_avals);

  std::vector<Array> ops = st.consts;
  ops.insert(ops.end(), operands.begin(), operands.end());
  ops.insert(ops.end(), zero_acc.begin(), zero_acc.end());
  for (size_t k = 0; k < ncar; ++k) ops.push_back(cts[k]);
  for (size_t i : res_x) ops.push_back(args[i]);
  for (size_t k = 0; k < ny; ++k) ops.push_back(cts[ncar + k]);
  ScanParams tsp = sp;
  tsp.jaxpr = st.jaxpr;
  tsp.num_consts = static_cast<int64_t>(st.consts.size() + nrc);
  tsp.num_carry = static_cast<int64_t>(nlc + ncar);
  tsp.reverse = !sp.reverse;
  std::vector<Array> outs = bind_scan(tsp, ops);

  std::vector<Array> result(n);
  for (size_t k = 0; k < nlc; ++k) result[lin_c[k]] = outs[k];
  for (size_t k = 0; k < ncar; ++k)
    if (!args[s.nc + k].defined()) result[s.nc + k] = outs[nlc + k];
  for (size_t k = 0; k < nlx; ++k) result[lin_x[k]] = outs[nlc + ncar + k];
  return result;
}

}  // namespace tessera::prims
