// jax.lax's gather and scatter operators (the gather/scatter primitives; semantics in
// src/prims/gather_scatter.h and jax.lax.gather's documentation). Indices carry their index
// vector in the last dimension. `mode` left unset is JAX's None: PROMISE_IN_BOUNDS for gather
// (clamped on CPU) and FILL_OR_DROP for the scatters.
//
//   namespace lax = tessera::lax;
//   GatherDimensionNumbers dn{/*offset_dims=*/{1}, /*collapsed_slice_dims=*/{0},
//                             /*start_index_map=*/{0}, {}, {}};
//   Array rows = lax::gather(table, ids.reshape({n, 1}), dn, {1, dim});   // table[ids]
#pragma once

#include <optional>
#include <vector>

#include "tessera/array.h"
#include "tessera/param_types.h"

namespace tessera::lax {

struct GatherOptions {
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<GatherScatterMode> mode;  // none: PROMISE_IN_BOUNDS
  std::optional<double> fill_value;       // FILL_OR_DROP's fill; none: NaN / int min / max / true
};

struct ScatterOptions {
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<GatherScatterMode> mode;  // none: FILL_OR_DROP
};

Array gather(const Array& operand, const Array& start_indices,
             const GatherDimensionNumbers& dimension_numbers,
             const std::vector<int64_t>& slice_sizes, const GatherOptions& options = {});

// Each combines the update windows into the operand at the indices: scatter writes (the last
// of duplicates wins), the others add, subtract, multiply, take the min or the max.
Array scatter(const Array& operand, const Array& scatter_indices, const Array& updates,
              const ScatterDimensionNumbers& dimension_numbers, const ScatterOptions& options = {});
Array scatter_add(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_sub(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_mul(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_min(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});
Array scatter_max(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  const ScatterOptions& options = {});

}  // namespace tessera::lax
