// Eager CPU kernels of gather and scatter (gather_scatter.h), over one description of where
// each window lies: the window plan.
//
// A gather or scatter visits "points" (the indices' shape without its index-vector dim, row
// major). At point g the window's start in the operand is, per operand dim d, the index
// component k with index_map[k] == d, or g's coordinate along the indices batching dim paired
// with d, or 0; the start is clamped into [0, dim - window] (clamp) or the point is out of
// bounds when any start leaves that range. The window's elements pair operand dims `wdims`
// (in operand order) with strides of the other array (gather's output, scatter's updates),
// whose point offset is Σ g_j · other_bst[j].
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/array.h"

namespace tessera::prims::gather_kernels {

struct WindowPlan {
  Shape operand;                   // the operand's shape
  std::vector<int64_t> window;     // per operand dim: the window's extent
  std::vector<int64_t> index_map;  // per index component: the operand dim it starts
  // Per operand batching dim: (operand dim, the point's coordinate that is its start).
  std::vector<std::pair<int64_t, int64_t>> batching;
  Shape points;                    // the indices' shape without the index-vector dim
  std::vector<int64_t> wdims;      // operand dims the window spans (extent may be > 1)
  std::vector<int64_t> other_wst;  // per wdims entry: its stride in the other array
  std::vector<int64_t> other_bst;  // per point coordinate: its stride in the other array
};

enum class Combine { kSet, kAdd, kMul, kMin, kMax };

// out (the gather's result buffer) receives every point's window; a point out of bounds when
// !clamp gets `fill` (one element of the operand's dtype) over its whole window.
void gather(const Array& operand, const Array& indices, const WindowPlan& plan, bool clamp,
            const void* fill, void* out);

// out holds a copy of the operand; every point's update window is combined into it in point
// order, the same bits for any thread count. Out-of-bounds points are clamped (clamp) or
// dropped. An add with at least 2^20 update elements and 16 per operand element splits the
// points into 2-8 chunks fixed by the sizes: each chunk is summed in point order (chunk c > 0
// from -0, the identity), and the chunk sums are added to the operand in chunk order — integer
// and bool results are the sequential ones, float results the chunked sum, still the same
// for any thread count.
void scatter(void* out, const Array& updates, const Array& indices, const WindowPlan& plan,
             bool clamp, Combine combine);

}  // namespace tessera::prims::gather_kernels
