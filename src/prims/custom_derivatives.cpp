// custom_jvp_call and custom_vjp_call (custom_derivatives.h): abstract eval from the sub-jaxpr,
// eager evaluation of it, the user's JVP rule (custom_jvp) or fwd/bwd as a VJP override
// (custom_vjp), and batching by vmapping the sub-jaxpr and the rules (as JAX batches both).
// Transpose (both): a custom-derivative call met by transposition was applied to linear values
// (a custom_vjp function called inside a custom_jvp rule's tangent computation, say), where the
// custom rule no longer matters — as JAX's partial evaluation inlines the primal function there
// — so the call's own body is transposed and evaluated inline.
#include "prims/custom_derivatives.h"

#include <string>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/call_rules.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::prims {

Primitive custom_jvp_call("custom_jvp_call", /*multiple_results=*/true);
Primitive custom_vjp_call("custom_vjp_call", /*multiple_results=*/true);

namespace {

using OpaquePtr = std::shared_ptr<const OpaqueParam>;
using JaxprPtr = std::shared_ptr<const Jaxpr>;

template <class T>
const T& opaque(const Params& params, const char* key, const char* op) {
  const auto* p = dynamic_cast<const T*>(params.get<OpaquePtr>(key).get());
  if (p == nullptr)
    throw TypeError(op_message(
        op, std::string("param '") + key + "' is not the rule object custom_jvp/custom_vjp make"));
  return *p;
}

const Jaxpr& call_of(const Params& params) { return *params.get<JaxprPtr>("call_jaxpr"); }

bool same_type(const Aval& a, const Aval& b);

// The operands must be what call_jaxpr takes (num_consts leading constants included), checked
// before the rules or eval_jaxpr index them.
std::vector<Aval> call_abstract(const char* op, std::span<const Aval> in, const Params& params) {
  const Jaxpr& call = call_of(params);
  const int64_t nc = params.get_int("num_consts");
  if (nc < 0 || nc > static_cast<int64_t>(in.size()))
    throw TypeError(op_message(op, "num_consts=" + std::to_string(nc) + " must be in [0, " +
                                       std::to_string(in.size()) + "], the operand count"));
  bool ok = call.constvars.empty() && call.invars.size() == in.size();
  for (size_t i = 0; ok && i < in.size(); ++i) ok = same_type(call.invars[i].aval(), in[i]);
  if (!ok) {
    std::string want, got;
    for (const Var& v : call.invars) want += (want.empty() ? "" : ", ") + v.aval().str();
    for (const Aval& a : in) got += (got.empty() ? "" : ", ") + a.str();
    throw TypeError(op_message(op, "call_jaxpr takes (" + want + ")" +
                                       (call.constvars.empty() ? "" : " and has constvars") +
                                       " but the call passes (" + got + ")"));
  }
  std::vector<Aval> out;
  for (const Atom& a : call.outvars) out.push_back(atom_aval(a));
  return out;
}

bool same_type(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

std::string avals_str(std::span<const Array> xs) {
  std::string s = "(";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) s += ", ";
    s += xs[i].defined() ? xs[i].aval().str() : std::string("Zero");
  }
  return s + (xs.size() == 1 ? ",)" : ")");
}
std::string avals_str(std::span<const Aval> xs) {
  std::string s = "(";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i].str();
  return s + (xs.size() == 1 ? ",)" : ")");
}
// JAX's PyTreeDef of a tuple of n leaves: "PyTreeDef((*, *))".
std::string structure_str(size_t n) {
  std::string s = "PyTreeDef((";
  for (size_t i = 0; i < n; ++i) s += i ? ", *" : "*";
  return s + (n == 1 ? ",))" : "))");
}

// The zero tangent/cotangent of a value of aval (float0 for integer/bool values).
Array zero_of(const Aval& a) {
  if (ad::has_tangent(a.dtype)) return ad::zeros_like_aval(Aval{a.shape, a.dtype, false});
  return empty_array(Aval{a.shape, DType::kFloat0, false}, "zeros");
}

std::vector<Aval> avals_of_span(std::span<const Array> xs) {
  std::vector<Aval> out;
  for (const Array& x : xs) out.push_back(x.aval());
  return out;
}

// The per-example aval of a batched value.
Aval unbatched_aval(const Array& x, int64_t dim) {
  Aval a = x.aval();
  if (dim >= 0) a.shape.erase(a.shape.begin() + dim);
  return a;
}

// call_jaxpr vmapped over operands batched at `dims` (every output batched at 0), staged on
// the batched operands: (new call_jaxpr, new leading constants).
trace::Staged batch_call(JaxprPtr call, std::span<const Array> vals, std::span<const int64_t> dims,
                         int64_t size) {
  std::vector<int64_t> d(dims.begin(), dims.end());
  flat::Fun fb = [call, d, size](std::span<const Array> xs) {
    return trace::batch_fun(trace::as_fun(call), xs, d, size);
  };
  return trace::stage(fb, avals_of_span(vals));
}

// The body transposed in its linear operands and evaluated inline (no custom rule survives).
std::vector<Array> transpose_body(std::span<const Array> cts, std::span<const Array> args,
                                  std::span<const Aval>, const Params& params) {
  return call_transpose(call_of(params), cts, args,
                        [](JaxprPtr body, std::span<const Array> operands) {
                          return eval_jaxpr(*body, {}, operands);
                        });
}

// ---- custom_jvp_call ----

batching::BatchOut batch_custom_jvp(const BatchAxis&, std::span<const Array> vals,
                                    std::span<const int64_t> dims, const Params& params) {
  int64_t nc = params.get_int("num_consts");
  int64_t size = batching::batch_size(vals, dims);
  auto [call, new_consts] = batch_call(params.get<JaxprPtr>("call_jaxpr"), vals, dims, size);
  auto rule = std::dynamic_pointer_cast<const CustomJvpRule>(params.get<OpaquePtr>("jvp"));
  std::vector<int64_t> arg_dims(dims.begin() + nc, dims.end());
  std::vector<Aval> arg_avals;
  for (size_t i = 0; i < arg_dims.size(); ++i)
    arg_avals.push_back(unbatched_aval(vals[nc + i], arg_dims[i]));
  flat::JvpFun jvp = [rule, arg_dims, size](std::span<const Array> ps, std::span<const Array> ts) {
    // vmap over the primals and the defined tangents (a tangent is batched like its primal).
    std::vector<Array> xs(ps.begin(), ps.end());
    std::vector<int64_t> in_dims(arg_dims), defined;
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].defined()) {
        xs.push_back(ts[i]);
        in_dims.push_back(arg_dims[i]);
        defined.push_back(static_cast<int64_t>(i));
      }
    size_t n = ps.size(), nout = 0;
    std::vector<bool> out_float;
    flat::Fun inner = [&](std::span<const Array> ys) {
      std::vector<Array> p(ys.begin(), ys.begin() + n), t(n);
      for (size_t k = 0; k < defined.size(); ++k) t[defined[k]] = ys[n + k];
      auto [po, to] = rule->jvp(p, t);
      nout = po.size();
      std::vector<Array> out = po;
      for (size_t k = 0; k < po.size(); ++k) {
        bool fl = ad::has_tangent(po[k].dtype());
        out_float.push_back(fl);
        Array tk = k < to.size() ? to[k] : Array();
        if (!fl || !tk.defined()) tk = ad::zeros_like_aval(Aval{po[k].shape(), po[k].dtype()});
        out.push_back(tk);
      }
      return out;
    };
    std::vector<Array> r = trace::batch_fun(inner, xs, in_dims, size);
    std::vector<Array> po(r.begin(), r.begin() + nout), to;
    for (size_t k = 0; k < nout; ++k) to.push_back(out_float[k] ? r[nout + k] : Array());
    return std::make_pair(std::move(po), std::move(to));
  };
  std::vector<Array> operands = new_consts;
  operands.insert(operands.end(), vals.begin(), vals.end());
  int64_t new_nc = static_cast<int64_t>(new_consts.size()) + nc;
  size_t nout = call->outvars.size();
  Params p =
      custom_jvp_params(std::move(call), std::move(jvp), new_nc, params.get_bool("symbolic_zeros"));
  std::vector<Array> outs = tessera::bind(custom_jvp_call, operands, p);
  return {std::move(outs), std::vector<int64_t>(nout, 0)};
}

ad::JvpOut jvp_custom_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                          const Params& params) {
  const Jaxpr& call = call_of(params);
  int64_t nc = params.get_int("num_consts");
  bool symbolic = params.get_bool("symbolic_zeros");
  for (int64_t i = 0; i < nc; ++i)
    if (!ad::zero_tangent(primals[i], tangents[i]))
      throw TypeError(op_message("custom_jvp",
                                 "a custom_jvp function closes over a value that is being "
                                 "differentiated; pass it as an explicit argument"));
  std::vector<Array> ps(primals.begin() + nc, primals.end()), ts;
  for (size_t i = nc; i < primals.size(); ++i) {
    if (ad::zero_tangent(primals[i], tangents[i]))
      ts.push_back(symbolic ? Array() : zero_of(primals[i].aval()));
    else
      ts.push_back(tangents[i]);
  }
  const auto& rule = opaque<CustomJvpRule>(params, "jvp", "custom_jvp_call");
  auto [po, to] = rule.jvp(ps, ts);
  std::vector<Aval> want = trace::out_avals(call);
  bool ok = po.size() == want.size();
  for (size_t i = 0; ok && i < po.size(); ++i)
    ok = po[i].defined() && same_type(po[i].aval(), want[i]);
  if (!ok)
    throw TypeError(
        op_message("custom_jvp",
                   "Custom JVP rule must produce primal outputs with the same container "
                   "(pytree) structure and shapes/dtypes as the custom_jvp-decorated "
                   "function, but the function gives " +
                       avals_str(want) + " and the rule's primal outputs are " + avals_str(po)));
  ok = to.size() == po.size();
  for (size_t i = 0; ok && i < to.size(); ++i) {
    if (!to[i].defined() || !ad::has_tangent(want[i].dtype)) continue;
    ok = same_type(to[i].aval(), want[i]);
  }
  if (!ok)
    throw TypeError(
        op_message("custom_jvp",
                   "Custom JVP rule must produce primal and tangent outputs with equal "
                   "container (pytree) structures and equal shapes/dtypes, but got primal "
                   "outputs " +
                       avals_str(po) + " and tangent outputs " + avals_str(to)));
  for (size_t i = 0; i < to.size(); ++i)
    if (!ad::has_tangent(want[i].dtype)) to[i] = Array();
  return {std::move(po), std::move(to)};
}

void define_custom_jvp_call() {
  Primitive& p = custom_jvp_call;
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    return call_abstract("custom_jvp_call", in, params);
  };
  p.impl = [](const ExecContext&, std::span<const Array> args, const Params& params,
              std::span<const Aval>) { return eval_jaxpr(call_of(params), {}, args); };
  p.jvp = jvp_custom_jvp;
  p.transpose = transpose_body;
  p.batch = batch_custom_jvp;
  register_primitive(p);
}

// ---- custom_vjp_call ----

std::vector<Array> check_fwd_outs(std::vector<Array> outs, const Jaxpr& call) {
  std::vector<Aval> want = trace::out_avals(call);
  bool ok = outs.size() == want.size();
  for (size_t i = 0; ok && i < outs.size(); ++i)
    ok = outs[i].defined() && same_type(outs[i].aval(), want[i]);
  if (!ok)
    throw TypeError(op_message(
        "custom_vjp",
        "Custom VJP fwd rule must produce a pair (list or tuple of length two) where the first "
        "element represents the primal output (equal to the output of the "
        "custom_vjp-decorated function) and the second represents residuals, but the primal "
        "function gives " +
            avals_str(want) + " and the fwd rule's first element is " + avals_str(outs)));
  return outs;
}

// bwd's output checked against the primal inputs (JAX's messages).
void check_bwd_outs(std::span<const Array> cts, std::span<const Aval> in_avals) {
  if (cts.size() != in_avals.size())
    throw TypeError(op_message(
        "custom_vjp",
        "Custom VJP bwd rule must produce an output with the same container (tuple) structure "
        "as the args tuple of the primal function, and in particular must produce a tuple of "
        "length equal to the number of arguments to the primal function, but got bwd output "
        "structure " +
            structure_str(cts.size()) + " for primal input structure " +
            structure_str(in_avals.size()) + "."));
  for (size_t i = 0; i < cts.size(); ++i) {
    if (!cts[i].defined() || !ad::has_tangent(in_avals[i].dtype)) continue;
    if (!same_type(cts[i].aval(), in_avals[i]))
      throw TypeError(op_message(
          "custom_vjp",
          "Custom VJP bwd rule must produce an output with the same shape/dtypes as the args "
          "tuple of the primal function, but at output[" +
              std::to_string(i) + "] the bwd rule produced an output of shape/dtype " +
              cts[i].aval().str() + " corresponding to an input of shape/dtype " +
              in_avals[i].str() + "."));
  }
}

VjpOverride vjp_custom_vjp(std::span<const Array> primals, const Params& params) {
  const Jaxpr& call = call_of(params);
  int64_t nc = params.get_int("num_consts");
  auto fwd = std::dynamic_pointer_cast<const CustomVjpFwd>(params.get<OpaquePtr>("fwd"));
  auto bwd = std::dynamic_pointer_cast<const CustomVjpBwd>(params.get<OpaquePtr>("bwd"));
  if (!fwd || !bwd)
    throw TypeError(
        op_message("custom_vjp_call", "params fwd/bwd are not the rule objects custom_vjp makes"));
  std::vector<Array> args(primals.begin() + nc, primals.end());
  auto [outs, res] = fwd->fwd(args);
  outs = check_fwd_outs(std::move(outs), call);
  std::vector<Aval> in_avals = avals_of_span(args), out_avals = trace::out_avals(call);
  // The residuals travel as custom_lin operands; the backward function captures none.
  VjpBwdFn fn = [bwd, in_avals, out_avals, nc](std::span<const Array> res,
                                               std::span<const Array> cts) {
    std::vector<Array> c;
    for (size_t i = 0; i < out_avals.size(); ++i)
      c.push_back(i < cts.size() && cts[i].defined() ? cts[i] : zero_of(out_avals[i]));
    std::vector<Array> in_cts = bwd->bwd(res, c);
    check_bwd_outs(in_cts, in_avals);
    std::vector<Array> all(static_cast<size_t>(nc));
    for (size_t i = 0; i < in_cts.size(); ++i)
      all.push_back(ad::has_tangent(in_avals[i].dtype) ? in_cts[i] : Array());
    return all;
  };
  return VjpOverride{std::move(outs), std::move(res), std::move(fn)};
}

batching::BatchOut batch_custom_vjp(const BatchAxis&, std::span<const Array> vals,
                                    std::span<const int64_t> dims, const Params& params) {
  int64_t nc = params.get_int("num_consts");
  int64_t size = batching::batch_size(vals, dims);
  size_t nout = call_of(params).outvars.size();
  auto [call, new_consts] = batch_call(params.get<JaxprPtr>("call_jaxpr"), vals, dims, size);
  auto fwd = std::dynamic_pointer_cast<const CustomVjpFwd>(params.get<OpaquePtr>("fwd"));
  auto bwd = std::dynamic_pointer_cast<const CustomVjpBwd>(params.get<OpaquePtr>("bwd"));
  std::vector<int64_t> arg_dims(dims.begin() + nc, dims.end());
  std::vector<Aval> arg_avals;
  for (size_t i = 0; i < arg_dims.size(); ++i)
    arg_avals.push_back(unbatched_aval(vals[nc + i], arg_dims[i]));
  // The batched fwd returns outputs and residuals batched at 0.
  flat::FwdFun bfwd = [fwd, arg_dims, size, nout](std::span<const Array> ps) {
    flat::Fun inner = [&](std::span<const Array> ys) {
      auto [o, r] = fwd->fwd(ys);
      o.insert(o.end(), r.begin(), r.end());
      return o;
    };
    std::vector<Array> all = trace::batch_fun(inner, ps, arg_dims, size);
    if (all.size() < nout)
      throw TypeError(op_message("custom_vjp", "the fwd rule returned too few primal outputs"));
    std::vector<Array> outs(all.begin(), all.begin() + nout), res(all.begin() + nout, all.end());
    return std::make_pair(std::move(outs), std::move(res));
  };
  // The batched bwd takes residuals and cotangents batched at 0 and returns each input's
  // cotangent batched like the input (summed over the batch when the input is unbatched).
  flat::BwdFun bbwd = [bwd, arg_dims, arg_avals, size](std::span<const Array> res,
                                                       std::span<const Array> cts) {
    std::vector<Array> xs(res.begin(), res.end());
    xs.insert(xs.end(), cts.begin(), cts.end());
    size_t nres = res.size();
    flat::Fun inner = [&](std::span<const Array> ys) {
      std::vector<Array> c = bwd->bwd(ys.first(nres), ys.subspan(nres));
      check_bwd_outs(c, arg_avals);
      for (size_t i = 0; i < c.size(); ++i)
        if (!c[i].defined() || !ad::has_tangent(arg_avals[i].dtype))
          c[i] = ad::zeros_like_aval(Aval{arg_avals[i].shape, arg_avals[i].dtype});
      return c;
    };
    std::vector<Array> c = trace::batch_fun(inner, xs, std::vector<int64_t>(xs.size(), 0), size);
    for (size_t i = 0; i < c.size(); ++i) {
      if (!ad::has_tangent(arg_avals[i].dtype))
        c[i] = Array();
      else if (arg_dims[i] < 0)
        c[i] = lax::reduce_sum(c[i], {0});
      else
        c[i] = batching::move_axis(c[i], 0, arg_dims[i]);
    }
    return c;
  };
  std::vector<Array> operands = new_consts;
  operands.insert(operands.end(), vals.begin(), vals.end());
  int64_t new_nc = static_cast<int64_t>(new_consts.size()) + nc;
  Params p = custom_vjp_params(std::move(call), std::move(bfwd), std::move(bbwd), new_nc);
  std::vector<Array> outs = tessera::bind(custom_vjp_call, operands, p);
  return {std::move(outs), std::vector<int64_t>(nout, 0)};
}

void define_custom_vjp_call() {
  Primitive& p = custom_vjp_call;
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    return call_abstract("custom_vjp_call", in, params);
  };
  p.impl = [](const ExecContext&, std::span<const Array> args, const Params& params,
              std::span<const Aval>) { return eval_jaxpr(call_of(params), {}, args); };
  p.jvp = [](std::span<const Array>, std::span<const Array>, const Params&) -> ad::JvpOut {
    throw TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
  };
  p.vjp_override = vjp_custom_vjp;
  p.transpose = transpose_body;
  p.batch = batch_custom_vjp;
  register_primitive(p);
}

}  // namespace

Params custom_jvp_params(std::shared_ptr<const Jaxpr> call, flat::JvpFun jvp, int64_t num_consts,
                         bool symbolic_zeros) {
  auto rule = std::make_shared<CustomJvpRule>();
  rule->jvp = std::move(jvp);
  return Params{{"call_jaxpr", std::move(call)},
                {"jvp", OpaquePtr(std::move(rule))},
                {"num_consts", num_consts},
                {"symbolic_zeros", symbolic_zeros}};
}

Params custom_vjp_params(std::shared_ptr<const Jaxpr> call, flat::FwdFun fwd, flat::BwdFun bwd,
                         int64_t num_consts) {
  auto f = std::make_shared<CustomVjpFwd>();
  f->fwd = std::move(fwd);
  auto b = std::make_shared<CustomVjpBwd>();
  b->bwd = std::move(bwd);
  return Params{{"bwd", OpaquePtr(std::move(b))},
                {"call_jaxpr", std::move(call)},
                {"fwd", OpaquePtr(std::move(f))},
                {"num_consts", num_consts}};
}

void register_custom_derivatives() {
  for (Primitive* p : {&custom_jvp_call, &custom_vjp_call}) p->kind = PrimitiveKind::kControlFlow;
  // Operands: num_consts constants then the call's arguments (the call jaxpr's invars).
  custom_jvp_call.signature = Signature::at_least(0, {{"call_jaxpr", ParamKind::kJaxpr},
                                                      {"jvp", ParamKind::kOpaque},
                                                      {"num_consts", ParamKind::kInt},
                                                      {"symbolic_zeros", ParamKind::kBool}});
  custom_vjp_call.signature = Signature::at_least(0, {{"bwd", ParamKind::kOpaque},
                                                      {"call_jaxpr", ParamKind::kJaxpr},
                                                      {"fwd", ParamKind::kOpaque},
                                                      {"num_consts", ParamKind::kInt}});
  define_custom_jvp_call();
  define_custom_vjp_call();
}

}  // namespace tessera::prims
