#include "trace/jvp_trace.h"

#include <string>

#include "trace/custom_lin.h"

namespace tessera::trace {

std::string JVPTracer::str() const {
  return std::string(owner()->kind() == std::string_view("jvp") ? "JVPTracer" : "LinearizeTracer") +
         "(" + aval().str() + ")";
}

Array JVPTrace::make(Array primal, Array tangent) {
  if (!tangent.defined()) return primal;
  return Array(
      std::make_shared<JVPTracer>(shared_from_this(), std::move(primal), std::move(tangent)));
}

std::pair<Array, Array> JVPTrace::split(const Array& x, std::string_view op) const {
  if (const auto* t = own_tracer<JVPTracer>(x, this, op)) return {t->primal(), t->tangent()};
  return {x, Array()};
}

std::vector<Array> JVPTrace::process_primitive(const Primitive& p, std::span<const Array> args,
                                               const Params& params) {
  std::vector<Array> primals, tangents;
  primals.reserve(args.size());
  tangents.reserve(args.size());
  bool any_tangent = false;
  for (const Array& a : args) {
    auto [pr, tg] = split(a, p.name());
    any_tangent |= tg.defined();
    primals.push_back(std::move(pr));
    tangents.push_back(std::move(tg));
  }
  if (!any_tangent) return bind_in(parent(), p, primals, params);
  if (tangent_trace_ && p.vjp_override) return process_override(p, primals, tangents, params);
  const JvpRule& rule = tangent_trace_ && p.linearize ? p.linearize : p.jvp;
  if (!rule) {
    throw TypeError(op_message(p.name(), std::string("differentiation rule for '") + p.name() +
                                             "' is not implemented; it cannot be used under " +
                                             kind() + " (grad, jvp, vjp)"));
  }
  std::pair<std::vector<Array>, std::vector<Array>> r;
  {
    TraceScope scope(tangent_trace_ ? static_cast<Trace*>(tangent_trace_) : parent());
    r = rule(primals, tangents, params);
  }
  std::vector<Array> outs;
  outs.reserve(r.first.size());
  for (size_t i = 0; i < r.first.size(); ++i) {
    Array t = i < r.second.size() ? std::move(r.second[i]) : Array();
    outs.push_back(make(std::move(r.first[i]), std::move(t)));
  }
  return outs;
}

namespace {

std::vector<Array> stage_custom_lin(StagingTrace& tt, const std::string& name, VjpBwdFn bwd,
                                    std::span<const Array> residuals,
                                    std::span<const Array> lin_tangents,
                                    std::vector<int64_t> lin_index, int64_t num_inputs,
                                    std::vector<Aval> out_avals) {
  auto param = std::make_shared<CustomLinParam>();
  param->name = name;
  param->bwd = std::move(bwd);
  param->num_res = static_cast<int64_t>(residuals.size());
  param->lin_index = std::move(lin_index);
  param->num_inputs = num_inputs;
  for (Aval& a : out_avals) a.weak_type = false;
  param->out_avals = out_avals;
  std::vector<Array> operands(residuals.begin(), residuals.end());
  operands.insert(operands.end(), lin_tangents.begin(), lin_tangents.end());
  return tt.stage(custom_lin, operands, custom_lin_params(std::move(param)), std::move(out_avals));
}

}  // namespace

std::vector<Array> JVPTrace::process_override(const Primitive& p, std::span<const Array> primals,
                                              std::span<const Array> tangents,
                                              const Params& params) {
  VjpOverride r;
  {
    TraceScope scope(parent());
    r = p.vjp_override(primals, params);
  }
  std::vector<Array> lin_tangents;
  std::vector<int64_t> lin_index;
  for (size_t i = 0; i < tangents.size(); ++i) {
    if (tangents[i].defined()) {
      lin_tangents.push_back(tangents[i]);
      lin_index.push_back(static_cast<int64_t>(i));
    }
  }
  std::vector<Aval> out_avals;
  for (const Array& o : r.outs) out_avals.push_back(o.aval());
  std::vector<Array> out_tangents =
      stage_custom_lin(*tangent_trace_, p.name(), std::move(r.bwd), r.residuals, lin_tangents,
                       std::move(lin_index), static_cast<int64_t>(primals.size()), out_avals);
  std::vector<Array> outs;
  for (size_t i = 0; i < r.outs.size(); ++i)
    outs.push_back(make(std::move(r.outs[i]), std::move(out_tangents[i])));
  return outs;
}

}  // namespace tessera::trace
