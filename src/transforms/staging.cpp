// make_jaxpr over flat argument lists, and the placeholder arrays of ShapeDtypeStruct.
#include "tessera/transforms_flat.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::flat {

namespace {

class PlaceholderTracer final : public Tracer {
 public:
  explicit PlaceholderTracer(Aval a) : aval_(std::move(a)) {}
  const Aval& aval() const override { return aval_; }
  uint64_t trace_tag() const override { return 0; }
  std::string str() const override {
    return "ShapeDtypeStruct(" + aval_.str() +
           ") placeholder: only make_jaxpr and eval_shape accept abstract arguments";
  }

 private:
  Aval aval_;
};

}  // namespace

Array abstract_placeholder(const Aval& aval) {
  return Array(std::make_shared<PlaceholderTracer>(aval));
}

ClosedJaxpr make_jaxpr(const Fun& f, std::span<const Array> args, const DebugInfo* debug) {
  std::vector<Aval> avals;
  avals.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined())
      throw ValueError(
          op_message("make_jaxpr", "argument " + std::to_string(i) + " is an empty Array handle"));
    avals.push_back(args[i].aval());
  }
  auto d = std::make_shared<DebugInfo>();
  if (debug) {
    *d = *debug;
  } else {
    d->traced_for = "make_jaxpr";
    d->func_src_info = "fn";
    for (size_t i = 0; i < args.size(); ++i)
      d->arg_names.push_back("args[" + std::to_string(i) + "]");
  }
  return trace::stage_closed(f, avals, std::move(d));
}

}  // namespace tessera::flat
