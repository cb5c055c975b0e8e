// Shared by the windowed-reduction family (reduce_window.cpp, select_and_scatter.cpp): the
// window params as JAX prints them, the output shape rule, and the per-dimension index tables the
// eager kernels walk.
//
// Geometry (XLA's ReduceWindow): the operand is dilated (base_dilation - 1 holes between
// elements), padded (lo, hi), and a window of window_dimensions elements spaced window_dilation
// apart slides with window_strides. Output element o reads, for window index k, the dilated and
// padded position o * stride + k * window_dilation; that position is an operand element when it
// lies inside the dilated operand at a multiple of base_dilation, and padding or a hole
// otherwise (filled with the reducer's identity / the generic reducer's init value).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/primitive.h"
#include "tessera/shape.h"

namespace tessera::prims::window {

struct WindowParams {
  std::vector<int64_t> dims, strides, base_dilation, window_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;

  // With dilations = false (select_and_scatter_add) they read as all ones.
  static WindowParams from(const Params& p, bool dilations = true);
  // window_dimensions, window_strides, padding[, base_dilation, window_dilation], in JAX's order.
  void set(Params& p, bool dilations = true) const;
  // The params with a window dimension of size 1 (stride 1, no padding, no dilation) at pos:
  // the batching rules' batch axis.
  WindowParams with_unit_dim(int64_t pos) const;
};

// Checks the params against the operand's shape with JAX's errors (`op` names the primitive) and
// returns the output shape.
Shape out_shape(const char* op, const Shape& in, const WindowParams& w);

// The index tables of one (input shape, output shape, params): for each dimension d, entry
// o * dims[d] + k is the operand index read by output o at window index k, or -1 for padding and
// holes. Trailing dimensions with a trivial window (size 1, stride 1, no padding or dilation)
// fold into a contiguous `inner` block that kernels process as a vector.
struct Plan {
  int64_t rank = 0;                        // dimensions with a window (not folded into inner)
  std::vector<int64_t> out, win, in_step;  // per dim: output size, window size, operand stride
  std::vector<std::vector<int64_t>> table;
  int64_t inner = 1;
  int64_t outer_out = 1;  // product of out
  int64_t window_size = 1;
};
Plan make_plan(const Shape& in, const Shape& out, const WindowParams& w);

// For outer output position r (row-major over plan.out): the operand offset of each window
// position in window order (row-major over the window), -1 for padding and holes. `scratch`
// holds the decoded index.
void window_offsets(const Plan& plan, int64_t r, std::vector<int64_t>& offsets,
                    std::vector<int64_t>& scratch);

}  // namespace tessera::prims::window
