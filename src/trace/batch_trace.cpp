#include "trace/batch_trace.h"

#include "trace/interpreter_ops.h"

namespace tessera::trace {

BatchTracer::BatchTracer(std::shared_ptr<BatchTrace> t, Array val, int64_t bdim)
    : TracerFor(std::move(t)), val_(std::move(val)), bdim_(bdim) {
  aval_ = val_.aval();
  aval_.shape.erase(aval_.shape.begin() + bdim_);
}

std::string BatchTracer::str() const { return "BatchTracer(" + aval().str() + ")"; }

Array BatchTrace::make(Array val, int64_t bdim) {
  if (bdim < 0) return val;
  if (bdim >= val.ndim() || val.shape()[bdim] != axis_size_) {
    throw_internal("vmap", "batched value " + val.aval().str() + " has no axis of size " +
                               std::to_string(axis_size_) + " at position " + std::to_string(bdim));
  }
  return Array(std::make_shared<BatchTracer>(shared_from_this(), std::move(val), bdim));
}

std::pair<Array, int64_t> BatchTrace::split(const Array& x, std::string_view op) const {
  if (const auto* t = own_tracer<BatchTracer>(x, this, op)) return {t->val(), t->bdim()};
  return {x, -1};
}

std::vector<Array> BatchTrace::process_primitive(const Primitive& p, std::span<const Array> args,
                                                 const Params& params) {
  std::vector<Array> vals;
  std::vector<int64_t> dims;
  vals.reserve(args.size());
  dims.reserve(args.size());
  bool any = false;
  for (const Array& a : args) {
    auto [v, d] = split(a, p.name());
    any |= d >= 0;
    vals.push_back(std::move(v));
    dims.push_back(d);
  }
  if (!any) return bind_in(parent(), p, vals, params);
  if (!p.batch) {
    throw TypeError(op_message(p.name(), "batching rule for '" + p.name() +
                                             "' is not implemented; it cannot be used under vmap"));
  }
  std::pair<std::vector<Array>, std::vector<int64_t>> r;
  {
    TraceScope scope(parent());
    RuleAxisScope axis_scope(axis_name_);
    r = p.batch(BatchAxis{axis_size_, axis_name_}, vals, dims, params);
  }
  std::vector<Array> outs;
  outs.reserve(r.first.size());
  for (size_t i = 0; i < r.first.size(); ++i)
    outs.push_back(make(std::move(r.first[i]), r.second[i]));
  return outs;
}

namespace {
thread_local std::string t_rule_axis;
}

RuleAxisScope::RuleAxisScope(std::string_view name) : prev_(t_rule_axis) { t_rule_axis = name; }
RuleAxisScope::~RuleAxisScope() { t_rule_axis = std::move(prev_); }
const std::string& rule_axis_name() { return t_rule_axis; }

BatchTrace* find_batch_trace(std::string_view name) {
  for (Trace* t = current_trace(); t != nullptr; t = t->parent()) {
    auto* b = dynamic_cast<BatchTrace*>(t);
    if (b && b->alive() && b->axis_name() == name) return b;
  }
  return nullptr;
}

Array moveaxis(const Array& x, int64_t from, int64_t to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != from) perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  return interpreter_ops().transpose(x, perm);
}

Array broadcast_batched(const Array& x, int64_t size, int64_t pos) {
  Shape s = x.shape();
  s.insert(s.begin() + pos, size);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
    if (d != pos) dims.push_back(d);
  return interpreter_ops().broadcast_in_dim(x, s, dims);
}

}  // namespace tessera::trace
