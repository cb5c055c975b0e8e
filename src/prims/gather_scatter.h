// The gather/scatter family (jax/_src/lax/slicing.py's gather_p and scatter*_p):
//
//   gather(operand, indices) {dimension_numbers: GatherDimensionNumbers, slice_sizes,
//          indices_are_sorted, unique_indices, mode: GatherScatterMode, fill_value (optional)}
//   scatter / scatter-add / scatter-mul / scatter-min / scatter-max (operand, indices, updates)
//          {dimension_numbers: ScatterDimensionNumbers, indices_are_sorted, unique_indices, mode}
//
// Indices carry their index vector in the last dimension (JAX's index_vector_dim). Modes:
// CLIP and PROMISE_IN_BOUNDS clamp a window's start so that the window lies inside the operand
// (PROMISE_IN_BOUNDS is "implementation-defined" in JAX and clamps on CPU, as XLA does);
// FILL_OR_DROP fills a gathered window that does not fit with fill_value (default: NaN for
// floats, the minimum of a signed integer, the maximum of an unsigned one, true for bool) and
// drops a scattered window that does not fit. ONE_HOT is accepted and computes as FILL_OR_DROP
// (JAX's one-hot lowering gives the same values). Negative indices are out of bounds here: the
// jnp layer wraps them. Duplicate scatter indices combine in update order (scatter: the last
// write wins), for any thread count; large float scatter-adds sum fixed chunks of the points
// in order, then the chunks in order (gather_kernels.h).
#pragma once

#include <optional>
#include <vector>

#include "tessera/param_types.h"
#include "tessera/primitive.h"

namespace tessera::prims {

extern Primitive gather_p, scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p;

// gather's params, typed.
struct GatherArgs {
  GatherDimensionNumbers dnums;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false, unique_indices = false;
  GatherScatterMode mode = GatherScatterMode::kPromiseInBounds;
  std::optional<double> fill_value;  // FILL_OR_DROP's value; none: the dtype's default

  Params params() const;
  static GatherArgs from(const Params& p);
};

// The scatters' params, typed.
struct ScatterArgs {
  ScatterDimensionNumbers dnums;
  bool indices_are_sorted = false, unique_indices = false;
  GatherScatterMode mode = GatherScatterMode::kFillOrDrop;

  Params params() const;
  static ScatterArgs from(const Params& p);
};

Array bind_gather(const Array& operand, const Array& indices, const GatherArgs& a);
Array bind_scatter(const Primitive& p, const Array& operand, const Array& indices,
                   const Array& updates, const ScatterArgs& a);

// The scatter that writes where a gather with these params reads (the gather's transpose),
// and the gather that reads where a scatter writes (operand shape and updates shape given).
ScatterArgs scatter_of_gather(const GatherArgs& g);
GatherArgs gather_of_scatter(const ScatterArgs& s, const Shape& updates);

void register_gather();          // gather.cpp
void register_gather_scatter();  // scatter.cpp: both

}  // namespace tessera::prims
