// Shared pieces of the batching (vmap) rules. A batched argument carries one extra axis, of the
// vmap size B, at its batch dim; -1 marks an unbatched argument. The helpers move or insert
// that axis with as little data movement as possible: a size-1 axis is a reshape (no copy),
// lax broadcasting stretches size-1 axes for free, and a transpose is emitted only when two
// batched operands disagree on where the batch axis is. They compute with lax ops only, so the
// rules built on them work under any trace.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/primitive.h"
#include "trace/batch_trace.h"

namespace tessera::prims::batching {

inline constexpr int64_t kNotMapped = -1;

using BatchOut = std::pair<std::vector<Array>, std::vector<int64_t>>;

// The vmap axis size: the extent of the first batched argument's batch axis.
// InternalError when no argument is batched.
int64_t batch_size(std::span<const Array> args, std::span<const int64_t> dims);

// The rank of argument x without its batch axis.
inline int64_t logical_rank(const Array& x, int64_t dim) {
  return x.ndim() - (dim == kNotMapped ? 0 : 1);
}

// d shifted past an axis inserted at pos: d >= pos becomes d + 1.
inline int64_t shift_dim(int64_t d, int64_t pos) { return d >= pos ? d + 1 : d; }
std::vector<int64_t> shift_dims(const std::vector<int64_t>& dims, int64_t pos);

// x with axis `from` moved to position `to`: one transpose, none when from == to.
inline Array move_axis(const Array& x, int64_t from, int64_t to) {
  return trace::moveaxis(x, from, to);
}

// x with a size-1 axis inserted at pos: a reshape, no data moves.
Array insert_unit_axis(const Array& x, int64_t pos);

// An unbatched x broadcast to carry a batch axis of `size` at pos (materializes the copies;
// only for operands that a primitive cannot broadcast itself). The batch trace's.
using trace::broadcast_batched;

// x with its batch axis of `size` at pos: moved when batched elsewhere (dim >= 0),
// broadcast when unbatched (dim == -1).
Array batch_at(const Array& x, int64_t dim, int64_t size, int64_t pos);

// The batch position that needs the fewest transposes: the most common batch dim among the
// batched arguments whose logical rank is `rank` (ties: the smallest); 0 when there is none.
int64_t common_dim(std::span<const Array> args, std::span<const int64_t> dims, int64_t rank);

// Operands of an n-ary elementwise primitive with lax's broadcasting rule (rank-0 operands
// broadcast; the others have one rank, dims equal or 1), made to line up with a batch axis at
// out_dim: unbatched rank-0 operands stay as they are, unbatched full-rank ones get a size-1
// axis at out_dim (a reshape) that broadcasting stretches, batched rank-0 ones (shape (B,))
// are reshaped to B at out_dim and 1 elsewhere, and batched full-rank ones are transposed only
// when their batch dim differs from out_dim (chosen by common_dim).
struct Aligned {
  std::vector<Array> args;
  int64_t out_dim = 0;
};
Aligned align_broadcasting(std::span<const Array> args, std::span<const int64_t> dims);

// Rule for unary elementwise primitives (and convert_element_type): bind p as is, the output
// keeps the operand's batch dim.
BatchRule vectorized_rule(const Primitive& p);

// Rule for broadcasting elementwise primitives (binary arithmetic, comparisons):
// align_broadcasting, then bind p with the primitive's params.
BatchRule broadcasting_rule(const Primitive& p);

}  // namespace tessera::prims::batching
