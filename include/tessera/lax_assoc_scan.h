// lax.associative_scan and the cumulative reductions (lax.cumsum, cumprod, cummax, cummin,
// cumlogsumexp) — src/api/lax_assoc_scan.cpp; the primitives' rules are in
// src/prims/cumulative.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/array.h"
#include "tessera/transforms_flat.h"

namespace tessera::lax {

// The inclusive scan of `elems` (arrays with one extent along `axis`) with an associative
// combining function, as jax.lax.associative_scan: fn takes (a..., b...) — 2 * elems.size()
// arrays, the partial results a of the earlier positions and b of the later ones — and returns
// elems.size() arrays with a's shapes and dtypes. Computed as JAX does, by the parallel prefix
// of strided slices (combine the odd/even pairs, scan the half recursively, combine back and
// interleave): O(log n) calls of fn, each on whole slices, so fn's ops are vectorized and every
// transformation works through it. reverse scans from the end. Negative axes count from the
// end. ValueError when the elems disagree on the extent along axis (JAX's message), when the
// axis is out of range, or when fn returns the wrong number or shapes of arrays.
std::vector<Array> associative_scan(const flat::Fun& fn, const std::vector<Array>& elems,
                                    bool reverse = false, int64_t axis = 0);

// Cumulative reductions along axis (0 <= axis < ndim; lax does not wrap negative axes), each
// binding its primitive. Number dtypes (no bool); cumlogsumexp floating only. Integers wrap;
// max/min propagate NaN.
Array cumsum(const Array& x, int64_t axis = 0, bool reverse = false);
Array cumprod(const Array& x, int64_t axis = 0, bool reverse = false);
Array cummax(const Array& x, int64_t axis = 0, bool reverse = false);
Array cummin(const Array& x, int64_t axis = 0, bool reverse = false);
Array cumlogsumexp(const Array& x, int64_t axis = 0, bool reverse = false);

}  // namespace tessera::lax
