// scan's batching rule (scan.h): the body vmapped over the batched consts, carries and x slices.
// Consts and carries carry their batch axis at 0; scanned operands and ys at 1 (the scan axis
// stays 0). A carry is batched when its initial value is or when the body makes it so (a fixed
// point).
#include "prims/scan.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::prims {

batching::BatchOut scan_batch(const BatchAxis&, std::span<const Array> args,
                              std::span<const int64_t> dims, const Params& params) {
  ScanParams sp = scan_params_of(params);
  const size_t nc = static_cast<size_t>(sp.num_consts), ncar = static_cast<size_t>(sp.num_carry);
  const size_t n = args.size(), nout = sp.jaxpr->outvars.size();
  const int64_t size = batching::batch_size(args, dims);
  std::vector<bool> batched(n);
  for (size_t i = 0; i < n; ++i) batched[i] = dims[i] != batching::kNotMapped;
  trace::BatchedJaxpr bj;
  for (;;) {
    std::vector<bool> force(nout, false);
    for (size_t k = 0; k < ncar; ++k) force[k] = batched[nc + k];
    bj = trace::batch_jaxpr(*sp.jaxpr, batched, size, force);
    bool changed = false;
    for (size_t k = 0; k < ncar; ++k)
      if (bj.out_batched[k] && !batched[nc + k]) batched[nc + k] = changed = true;
    if (!changed) break;
  }
  std::vector<Array> operands;
  operands.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < nc)
      operands.push_back(batched[i] ? batching::move_axis(args[i], dims[i], 0) : args[i]);
    else if (i < nc + ncar)
      operands.push_back(batched[i] ? batching::batch_at(args[i], dims[i], size, 0) : args[i]);
    else
      operands.push_back(batched[i] ? batching::move_axis(args[i], dims[i], 1) : args[i]);
  }
  // Values the batching rules closed over become leading constants of the scan.
  ScanParams nsp = sp;
  nsp.jaxpr = bj.jaxpr;
  nsp.num_consts += static_cast<int64_t>(bj.consts.size());
  operands.insert(operands.begin(), bj.consts.begin(), bj.consts.end());
  std::vector<Array> outs = bind_scan(nsp, operands);
  std::vector<int64_t> out_dims(nout);
  for (size_t k = 0; k < nout; ++k)
    out_dims[k] = !bj.out_batched[k] ? batching::kNotMapped : (k < ncar ? 0 : 1);
  return {std::move(outs), std::move(out_dims)};
}

}  // namespace tessera::prims
