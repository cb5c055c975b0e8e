// jvp, linearize, vjp (Linearized::vjp) and linear_transpose over flat argument lists.
#include <string>

#include "prims/ad_util.h"
#include "prims/prims.h"
#include "tessera/lax.h"
#include "tessera/transforms_flat.h"
#include "trace/backward_pass.h"
#include "trace/jaxpr_transforms.h"
#include "trace/jvp_trace.h"

namespace tessera::flat {

using trace::JVPTrace;
using trace::StagingTrace;
using trace::TraceLifetime;

namespace {

// The tangent aval of a primal aval: the same for floats, float0 otherwise.
Aval tangent_aval(const Aval& a) {
  if (prims::ad::has_tangent(a.dtype)) return Aval{a.shape, a.dtype, a.weak_type};
  return Aval{a.shape, DType::kFloat0, false};
}

Array zero_tangent(const Aval& primal) {
  Aval t = tangent_aval(primal);
  if (t.dtype == DType::kFloat0) return empty_array(t, "zeros");
  return prims::ad::zeros_like_aval(t);
}

void check_tangent(std::string_view op, size_t i, const Array& primal, const Array& tangent) {
  if (!tangent.defined()) return;
  Aval want = tangent_aval(primal.aval());
  if (tangent.shape() != primal.shape() || tangent.dtype() != want.dtype) {
    throw TypeError(op_message(
        op, "primal and tangent arguments do not match at argument " + std::to_string(i) +
                ": primal " + primal.aval().str() + ", tangent " + tangent.aval().str() +
                "; tangents must have the primal's shape and dtype (float0 for integer or "
                "boolean primals)"));
  }
}

void check_defined(std::string_view op, std::span<const Array> xs, const char* what) {
  for (size_t i = 0; i < xs.size(); ++i)
    if (!xs[i].defined())
      throw ValueError(op_message(op, std::string(what) + " " + std::to_string(i) +
                                          " is an empty Array handle (default-constructed)"));
}

}  // namespace

std::pair<std::vector<Array>, std::vector<Array>> jvp(const Fun& f, std::span<const Array> primals,
                                                      std::span<const Array> tangents) {
  if (primals.size() != tangents.size())
    throw TypeError(op_message("jvp", "got " + std::to_string(primals.size()) + " primals and " +
                                          std::to_string(tangents.size()) +
                                          " tangents; pass one tangent per primal"));
  check_defined("jvp", primals, "primal");
  for (size_t i = 0; i < primals.size(); ++i) check_tangent("jvp", i, primals[i], tangents[i]);
  // The JVP with symbolic zeros (the interpreter layer's), then every output tangent
  // instantiated (float0 zeros for integer/bool outputs).
  auto [po, to] = trace::jvp_fun(f, primals, tangents);
  for (size_t i = 0; i < po.size(); ++i)
    if (!to[i].defined()) to[i] = zero_tangent(po[i].aval());
  return {std::move(po), std::move(to)};
}

Linearized linearize(const Fun& f, std::span<const Array> primals) {
  check_defined("linearize", primals, "primal");
  Trace* parent = current_trace();
  auto tt = std::make_shared<StagingTrace>(parent, /*partial_eval=*/true);
  auto jt = std::make_shared<JVPTrace>(parent, tt.get());
  TraceLifetime life_j(jt.get());
  TraceLifetime life_t(tt.get());
  Linearized r;
  std::vector<Array> xs;
  int64_t nvar = 0;
  for (const Array& p : primals) {
    r.in_avals_.push_back(p.aval());
    if (prims::ad::has_tangent(p.dtype())) {
      r.in_var_.push_back(nvar++);
      xs.push_back(jt->make(p, tt->new_arg(tangent_aval(p.aval()))));
    } else {
      r.in_var_.push_back(-1);
      xs.push_back(p);
    }
  }
  std::vector<Array> outs;
  {
    TraceScope scope(jt.get());
    outs = f(xs);
  }
  std::vector<Array> lin_outs;
  for (const Array& o : outs) {
    auto [p, t] = jt->split(o, "linearize");
    r.out_avals_.push_back(p.aval());
    if (t.defined() && tt->is_own(t)) {
      r.out_var_.push_back(static_cast<int64_t>(lin_outs.size()));
      lin_outs.push_back(std::move(t));
    } else {
      r.out_var_.push_back(-1);  // zero, or a tangent that does not depend on the inputs
    }
    r.outs_.push_back(std::move(p));
  }
  r.lin_ = tt->build(lin_outs);
  return r;
}

std::vector<Array> Linearized::jvp(std::span<const Array> tangents) const {
  if (tangents.size() != in_avals_.size())
    throw TypeError(op_message("linearize",
                               "the linearized function takes " + std::to_string(in_avals_.size()) +
                                   " tangents, got " + std::to_string(tangents.size())));
  std::vector<Array> args;
  for (size_t i = 0; i < tangents.size(); ++i) {
    if (in_var_[i] < 0) continue;
    Aval want = tangent_aval(in_avals_[i]);
    if (tangents[i].defined() &&
        (tangents[i].shape() != want.shape || tangents[i].dtype() != want.dtype))
      throw TypeError(op_message("linearize", "tangent " + std::to_string(i) + " is " +
                                                  tangents[i].aval().str() + ", expected " +
                                                  want.str()));
    args.push_back(prims::ad::instantiate(tangents[i], want));
  }
  std::vector<Array> lo = eval_jaxpr(lin_, args);
  std::vector<Array> out;
  for (size_t i = 0; i < out_avals_.size(); ++i)
    out.push_back(out_var_[i] >= 0 ? lo[out_var_[i]] : zero_tangent(out_avals_[i]));
  return out;
}

std::vector<Array> Linearized::vjp(std::span<const Array> cts) const {
  if (cts.size() != out_avals_.size())
    throw TypeError(
        op_message("vjp", "the VJP function takes " + std::to_string(out_avals_.size()) +
                              " cotangents (one per output), got " + std::to_string(cts.size())));
  std::vector<Array> lin_cts(lin_.jaxpr->outvars.size());
  for (size_t i = 0; i < cts.size(); ++i) {
    if (!cts[i].defined()) continue;
    Aval want = tangent_aval(out_avals_[i]);
    bool ok = cts[i].shape() == want.shape &&
              (cts[i].dtype() == want.dtype || want.dtype == DType::kFloat0);
    if (!ok)
      throw TypeError(
          op_message("vjp", "cotangent " + std::to_string(i) + " is " + cts[i].aval().str() +
                                " but the primal output is " + out_avals_[i].str() +
                                "; a cotangent must have the output's shape and dtype (float0 for "
                                "integer or boolean outputs)"));
    if (out_var_[i] >= 0) lin_cts[out_var_[i]] = cts[i];
  }
  std::vector<Array> in_cts = trace::backward_pass(*lin_.jaxpr, lin_.consts, lin_cts);
  std::vector<Array> out;
  for (size_t i = 0; i < in_avals_.size(); ++i) {
    Array c = in_var_[i] >= 0 ? in_cts[in_var_[i]] : Array();
    if (!c.defined()) c = zero_tangent(in_avals_[i]);
    // A weakly typed input (a Python/C++ scalar) gets a weakly typed cotangent, as in JAX.
    if (in_avals_[i].weak_type && !c.weak_type() && c.dtype() == in_avals_[i].dtype)
      c = tessera::bind1(prims::convert_element_type, {c},
                         Params{{"new_dtype", c.dtype()}, {"weak_type", true}});
    out.push_back(std::move(c));
  }
  return out;
}

std::function<std::vector<Array>(std::span<const Array>)> linear_transpose(
    const Fun& f, std::span<const Array> primals) {
  check_defined("linear_transpose", primals, "primal");
  std::vector<Aval> in_avals;
  auto tt = std::make_shared<StagingTrace>(current_trace(), /*partial_eval=*/true);
  std::vector<Array> xs;
  for (const Array& p : primals) {
    if (!prims::ad::has_tangent(p.dtype()))
      throw TypeError(
          op_message("linear_transpose",
                     "linear_transpose only supports floating inputs, got " + p.aval().str()));
    in_avals.push_back(p.aval());
    xs.push_back(tt->new_arg(Aval{p.shape(), p.dtype(), false}));
  }
  std::vector<Array> outs;
  {
    TraceLifetime life(tt.get());
    TraceScope scope(tt.get());
    outs = f(xs);
  }
  std::vector<Aval> out_avals;
  for (const Array& o : outs) out_avals.push_back(o.aval());
  auto lin = std::make_shared<ClosedJaxpr>(tt->build(outs));
  return [lin, in_avals, out_avals](std::span<const Array> cts) {
    if (cts.size() != out_avals.size())
      throw TypeError(
          op_message("linear_transpose", "expected " + std::to_string(out_avals.size()) +
                                             " cotangents, got " + std::to_string(cts.size())));
    for (size_t i = 0; i < cts.size(); ++i)
      if (cts[i].defined() &&
          (cts[i].shape() != out_avals[i].shape || cts[i].dtype() != out_avals[i].dtype))
        throw TypeError(op_message("linear_transpose",
                                   "cotangent " + std::to_string(i) + " is " + cts[i].aval().str() +
                                       " but the output is " + out_avals[i].str()));
    std::vector<Array> in = trace::backward_pass(*lin->jaxpr, lin->consts, cts);
    for (size_t i = 0; i < in.size(); ++i)
      if (!in[i].defined())
        in[i] = prims::ad::zeros_like_aval(Aval{in_avals[i].shape, in_avals[i].dtype, false});
    return in;
  };
}

}  // namespace tessera::flat
