// The batch trace (vmap). A BatchTracer carries a value of the parent trace with one extra
// axis of size axis_size at position bdim; its aval is the per-example aval (the value's shape
// without that axis). Unbatched values are never wrapped. process_primitive applies the
// primitive's batching rule with the parent current. The trace has an optional axis name so
// that collectives (psum ...) bound inside vmap can find it by name.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "trace/trace_util.h"

namespace tessera::trace {

class BatchTrace;

class BatchTracer final : public TracerFor<BatchTrace> {
 public:
  BatchTracer(std::shared_ptr<BatchTrace> t, Array val, int64_t bdim);
  const Aval& aval() const override { return aval_; }
  std::string str() const override;
  std::string origin() const override {
    return val_.is_tracer() ? val_.tracer()->origin() : std::string();
  }
  const Array& val() const { return val_; }
  int64_t bdim() const { return bdim_; }

 private:
  Array val_;
  int64_t bdim_;
  Aval aval_;
};

class BatchTrace final : public Trace, public std::enable_shared_from_this<BatchTrace> {
 public:
  BatchTrace(Trace* parent, int64_t axis_size, std::string axis_name)
      : Trace(parent), axis_size_(axis_size), axis_name_(std::move(axis_name)) {}
  const char* kind() const override { return "batch"; }
  int64_t axis_size() const { return axis_size_; }
  const std::string& axis_name() const { return axis_name_; }

  // A tracer for val batched at bdim, or val itself when bdim is -1.
  Array make(Array val, int64_t bdim);
  // (value, bdim) as seen by this trace; foreign values are unbatched (-1).
  std::pair<Array, int64_t> split(const Array& x, std::string_view op) const;

  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> args,
                                       const Params& params) override;

 private:
  int64_t axis_size_;
  std::string axis_name_;
};

// The axis name of the batching rule running now ("" outside rules and for unnamed vmaps): a
// rule batches its sub-jaxprs (batch_jaxpr, batch_fun) over the same axis, so they name their
// batch traces after it and the collectives inside (psum ...) still find it.
class RuleAxisScope {
 public:
  explicit RuleAxisScope(std::string_view name);
  ~RuleAxisScope();
  RuleAxisScope(const RuleAxisScope&) = delete;
  RuleAxisScope& operator=(const RuleAxisScope&) = delete;

 private:
  std::string prev_;
};
const std::string& rule_axis_name();

// The innermost live batch trace named `name` on the current trace chain, or null.
BatchTrace* find_batch_trace(std::string_view name);

// Moving and making batch axes (what the trace, the jaxpr transformations and the families'
// batching rules use). moveaxis: lax.transpose moving axis `from` to position `to` (no-op when
// equal). broadcast_batched: x (unbatched) broadcast to carry a batch axis of `size` at `pos`.
Array moveaxis(const Array& x, int64_t from, int64_t to);
Array broadcast_batched(const Array& x, int64_t size, int64_t pos);

}  // namespace tessera::trace
