// tessera::numpy sorting and order statistics (jax.numpy's semantics) — src/api/numpy_sort.cpp,
// over lax.sort (tessera/lax_sort.h): sort, argsort, lexsort, sort_complex, median, quantile,
// percentile and their nan* forms.
//
// Axes: none flattens (sort, argsort) or reduces over every axis (the statistics); negative axes
// count from the end. Rank-0 inputs to sort/argsort raise ValueError (JAX's canonicalize_axis).
// Sorting is always stable; `stable` is accepted for JAX's signature. NaNs sort to the end;
// descending=true reverses the ascending result (NaNs then come first, as JAX), except that a
// stable descending argsort keeps tied elements in their original order (as JAX documents).
// jnp's `kind` and `order` exist only in Python (where they raise TypeError, as JAX's do).
//
// Statistics: q is a scalar or a rank-1 array (ValueError for higher ranks, as JAX); the result
// has q's shape in front of the reduced shape. As JAX, q is not range-checked: positions outside
// [0, n - 1] are clamped to the ends (so q < 0 gives the minimum, q > 1 the maximum). Integer
// and bool inputs are promoted to floating first; the result has the (promoted) input dtype.
// An empty reduced axis gives NaN. method: "linear", "lower", "higher", "midpoint", "nearest"
// (JAX's set; nearest breaks exact ties toward the lower element, as JAX does). Positions are
// computed in q's floating dtype (float32 for C++ doubles, float64 with x64).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy.h"
#include "tessera/numpy_reductions.h"

namespace tessera::numpy {

Array sort(const ArrayLike& a, std::optional<int64_t> axis = -1, bool stable = true,
           bool descending = false);
// Indices that sort a along axis, in the default int dtype (int32; int64 with x64 or for axes
// of 2^31 elements or more).
Array argsort(const ArrayLike& a, std::optional<int64_t> axis = -1, bool stable = true,
              bool descending = false);
// Indirect stable sort by several keys of one shape, the LAST key primary (NumPy's order).
// TypeError for no keys, ValueError for differing shapes; rank-0 keys give the scalar 0.
Array lexsort(const std::vector<Array>& keys, int64_t axis = -1);
// NotImplementedError: Tessera has no complex dtypes (complex64, complex128).
Array sort_complex(const ArrayLike& a);

Array quantile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis = {},
               const std::string& method = "linear", bool keepdims = false);
// q in percent (divided by 100 in q's floating dtype).
Array percentile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis = {},
                 const std::string& method = "linear", bool keepdims = false);
// quantile 0.5 with method "midpoint".
Array median(const ArrayLike& a, const AxisArg& axis = {}, bool keepdims = false);
// NaNs ignored (each slice's quantile among its non-NaN elements); an all-NaN slice gives NaN.
Array nanquantile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis = {},
                  const std::string& method = "linear", bool keepdims = false);
Array nanpercentile(const ArrayLike& a, const ArrayLike& q, const AxisArg& axis = {},
                    const std::string& method = "linear", bool keepdims = false);
Array nanmedian(const ArrayLike& a, const AxisArg& axis = {}, bool keepdims = false);

}  // namespace tessera::numpy
