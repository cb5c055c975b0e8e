// Batching of jaxprs and of functions (see jaxpr_transforms.h).
#include <string>

#include "tessera/errors.h"
#include "trace/batch_trace.h"
#include "trace/jaxpr_transforms.h"

namespace tessera::trace {

namespace {

// f on batch-trace tracers of xs (batched at dims); each output's (value, batch dim) or, when
// it is unbatched, (value, -1).
template <class Finish>
std::vector<Array> run_batched(const Fun& f, std::span<const Array> xs,
                               std::span<const int64_t> dims, int64_t size, Finish finish) {
  // Named after the rule's axis when a batching rule batches its sub-jaxpr (collectives inside
  // it find their axis), unnamed otherwise.
  auto bt = std::make_shared<BatchTrace>(current_trace(), size, rule_axis_name());
  TraceLifetime life(bt.get());
  std::vector<Array> ins;
  ins.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) ins.push_back(bt->make(xs[i], dims[i]));
  std::vector<Array> outs;
  {
    TraceScope scope(bt.get());
    outs = f(ins);
  }
  std::vector<Array> res;
  res.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    auto [v, d] = bt->split(outs[i], "vmap");
    res.push_back(finish(i, std::move(v), d));
  }
  return res;
}

}  // namespace

std::vector<Array> batch_fun(const Fun& f, std::span<const Array> args,
                             std::span<const int64_t> dims, int64_t size) {
  if (dims.size() != args.size())
    throw_internal("jaxpr_transforms", "batch_fun: one batch dim per argument");
  return run_batched(f, args, dims, size, [size](size_t, Array v, int64_t d) {
    return d >= 0 ? moveaxis(v, d, 0) : broadcast_batched(v, size, 0);
  });
}

BatchedJaxpr batch_jaxpr(const Jaxpr& j, const std::vector<bool>& batched, int64_t size,
                         const std::vector<bool>& force_out_batched) {
  const size_t n = j.invars.size(), m = j.outvars.size();
  if (batched.size() != n || force_out_batched.size() != m)
    throw_internal("jaxpr_transforms", "batch_jaxpr: mask sizes do not match the jaxpr");
  std::vector<Aval> avals = in_avals(j);
  for (size_t i = 0; i < n; ++i)
    if (batched[i]) avals[i].shape.insert(avals[i].shape.begin(), size);
  std::vector<bool> out_b(m, false);
  std::vector<int64_t> dims(n);
  for (size_t i = 0; i < n; ++i) dims[i] = batched[i] ? 0 : -1;
  Fun f = [&](std::span<const Array> xs) {
    return run_batched([&j](std::span<const Array> ys) { return eval_jaxpr(j, {}, ys); }, xs, dims,
                       size,
                       [&](size_t i, Array v, int64_t d) {
                         if (d >= 0) {
                           out_b[i] = true;
                           return moveaxis(v, d, 0);
                         }
                         if (force_out_batched[i]) {
                           out_b[i] = true;
                           return broadcast_batched(v, size, 0);
                         }
                         return v;
                       });
  };
  Staged st = stage(f, avals);
  return {std::move(st.jaxpr), std::move(out_b), std::move(st.consts)};
}

}  // namespace tessera::trace
