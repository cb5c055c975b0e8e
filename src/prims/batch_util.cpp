// Shared pieces of the batching (vmap) rules; see batch_util.h.
#include "prims/batch_util.h"

#include <algorithm>
#include <map>
#include <string>

#include "tessera/errors.h"
#include "tessera/lax.h"

namespace tessera::prims::batching {

int64_t batch_size(std::span<const Array> args, std::span<const int64_t> dims) {
  for (size_t i = 0; i < args.size() && i < dims.size(); ++i) {
    if (dims[i] != kNotMapped) return args[i].shape()[dims[i]];
  }
  throw_internal("prims/batching", "a batching rule was called with no batched argument");
}

std::vector<int64_t> shift_dims(const std::vector<int64_t>& dims, int64_t pos) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (int64_t d : dims) out.push_back(shift_dim(d, pos));
  return out;
}

Array insert_unit_axis(const Array& x, int64_t pos) {
  Shape s = x.shape();
  s.insert(s.begin() + pos, 1);
  return lax::reshape(x, s);
}

Array batch_at(const Array& x, int64_t dim, int64_t size, int64_t pos) {
  return dim == kNotMapped ? broadcast_batched(x, size, pos) : move_axis(x, dim, pos);
}

int64_t common_dim(std::span<const Array> args, std::span<const int64_t> dims, int64_t rank) {
  std::map<int64_t, int> counts;
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] != kNotMapped && logical_rank(args[i], dims[i]) == rank) ++counts[dims[i]];
  }
  int64_t best = 0;
  int best_count = 0;
  for (const auto& [d, c] : counts) {  // increasing d: ties keep the smallest
    if (c > best_count) best = d, best_count = c;
  }
  return best;
}

Aligned align_broadcasting(std::span<const Array> args, std::span<const int64_t> dims) {
  const int64_t size = batch_size(args, dims);
  int64_t rank = 0;
  for (size_t i = 0; i < args.size(); ++i) rank = std::max(rank, logical_rank(args[i], dims[i]));
  Aligned out;
  out.args.assign(args.begin(), args.end());
  if (rank == 0) return out;  // batched operands are (B,), the others rank 0: bind as is
  out.out_dim = common_dim(args, dims, rank);
  const int64_t d = out.out_dim;
  for (size_t i = 0; i < args.size(); ++i) {
    const Array& x = args[i];
    const bool mapped = dims[i] != kNotMapped;
    const int64_t r = logical_rank(x, dims[i]);
    if (!mapped) {
      if (r != 0) out.args[i] = insert_unit_axis(x, d);
    } else if (r == 0) {
      Shape s(static_cast<size_t>(rank + 1), 1);
      s[d] = size;
      out.args[i] = lax::reshape(x, s);
    } else {
      out.args[i] = move_axis(x, dims[i], d);
    }
  }
  return out;
}

BatchRule vectorized_rule(const Primitive& p) {
  const Primitive* prim = &p;
  return [prim](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                const Params& params) -> BatchOut {
    return {tessera::bind(*prim, args, params), {dims[0]}};
  };
}

BatchRule broadcasting_rule(const Primitive& p) {
  const Primitive* prim = &p;
  return [prim](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                const Params& params) -> BatchOut {
    Aligned a = align_broadcasting(args, dims);
    return {tessera::bind(*prim, a.args, params), {a.out_dim}};
  };
}

}  // namespace tessera::prims::batching
