// jax.ops: segment reductions. Each is one scatter (lax.scatter_add / scatter_mul / scatter_max /
// scatter_min) of the rows of data into num_segments rows that start at the reduction's
// identity (0, 1, the dtype's lowest, its highest), so jit, vmap and grad compose through them.
// Segment ids outside [0, num_segments) are dropped (negative ones are not wrapped), as JAX's.
//
//   namespace ops = tessera::ops;
//   Array sums = ops::segment_sum(edge_values, edge_targets, num_nodes);   // [num_nodes, ...]
#pragma once

#include <optional>

#include "tessera/array.h"
#include "tessera/param_types.h"

namespace tessera::ops {

struct SegmentOptions {
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<GatherScatterMode> mode;  // none: FILL_OR_DROP (out-of-range ids dropped)
};

// data [n, ...], segment_ids int [n] -> [num_segments, ...]. num_segments unset: max(id) + 1,
// which needs concrete ids (under a transformation it must be given: it sets the shape).
Array segment_sum(const Array& data, const Array& segment_ids,
                  std::optional<int64_t> num_segments = std::nullopt,
                  const SegmentOptions& options = {});
Array segment_prod(const Array& data, const Array& segment_ids,
                   std::optional<int64_t> num_segments = std::nullopt,
                   const SegmentOptions& options = {});
Array segment_max(const Array& data, const Array& segment_ids,
                  std::optional<int64_t> num_segments = std::nullopt,
                  const SegmentOptions& options = {});
Array segment_min(const Array& data, const Array& segment_ids,
                  std::optional<int64_t> num_segments = std::nullopt,
                  const SegmentOptions& options = {});

}  // namespace tessera::ops
