// tessera::numpy cumulative reductions (jax.numpy's semantics): cumsum, cumprod, nancumsum,
// nancumprod, cumulative_sum, cumulative_prod — src/api/numpy_cumulative.cpp, over lax.cumsum /
// lax.cumprod (tessera/lax_assoc_scan.h).
//
// axis: none flattens (cumsum family); negative axes count from the end. dtype as jnp's
// _cumulative_reduction: without dtype the result keeps x's dtype except bool, which
// accumulates in the default int; with dtype the input is converted to it (dtype=bool
// accumulates in the default int and converts back). cumulative_sum promotes bool and narrow
// integers to the default int/uint (jnp's promote_integers); cumulative_prod does not.
#pragma once

#include <cstdint>
#include <optional>

#include "tessera/array.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

Array cumsum(const ArrayLike& x, std::optional<int64_t> axis = std::nullopt,
             std::optional<DType> dtype = std::nullopt);
Array cumprod(const ArrayLike& x, std::optional<int64_t> axis = std::nullopt,
              std::optional<DType> dtype = std::nullopt);
// NaNs count as 0 (nancumsum) or 1 (nancumprod).
Array nancumsum(const ArrayLike& x, std::optional<int64_t> axis = std::nullopt,
                std::optional<DType> dtype = std::nullopt);
Array nancumprod(const ArrayLike& x, std::optional<int64_t> axis = std::nullopt,
                 std::optional<DType> dtype = std::nullopt);
// The array API's forms: x is not rank 0; axis may be omitted only for 1-D x (ValueError
// otherwise, JAX's messages); include_initial prepends the identity (0 or 1) along axis.
Array cumulative_sum(const ArrayLike& x, std::optional<int64_t> axis = std::nullopt,
                     std::optional<DType> dtype = std::nullopt, bool include_initial = false);
Array cumulative_prod(const ArrayLike& x, std::optional<int64_t> axis = std::nullopt,
                      std::optional<DType> dtype = std::nullopt, bool include_initial = false);

}  // namespace tessera::numpy
