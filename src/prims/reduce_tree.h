// Pairwise reductions through an arbitrary combine, on whole slices: the kernel of the generic
// `reduce` primitive and the JVP of reduce_prod and reduce (JAX's _reduce_jvp). Operands are
// viewed as rows [n, M] (reduced dims first); each level combines adjacent rows, so a reduction
// costs about log2(n) combines on slices instead of n on scalars. Computes with lax ops only
// (plain copies at the eval trace), so it runs under any trace.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/array.h"

namespace tessera::prims::reduce_tree {

// x with the (sorted) reduced dims moved to the front and flattened: [n, M], M the kept size.
// The elements of a row keep their row-major order.
Array to_rows(const Array& x, const std::vector<int64_t>& dims);

// Combines lhs[i] and rhs[i] (each [k, M], one per operand) into [k, M] arrays.
using Combine =
    std::function<std::vector<Array>(const std::vector<Array>&, const std::vector<Array>&)>;

// Reduces rows xs (each [n, M], n >= 1) in order: adjacent rows are combined level by level and
// the odd row out of a level is combined at the end, on the right, so `f` need only be
// associative (not commutative). Returns [1, M] arrays.
std::vector<Array> reduce_rows(std::vector<Array> xs, const Combine& f);

// Rows [r0, r1) and columns [c0, c1) of a 2-D x (a copy at the eval trace, lax::slice otherwise).
Array take(const Array& x, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

}  // namespace tessera::prims::reduce_tree
