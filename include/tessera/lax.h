// tessera::lax — thin functions that bind primitives, with JAX's lax names and semantics.
// Binary ops require one dtype (no promotion; use tessera::numpy for that) and follow lax's
// broadcasting rule: rank-0 operands broadcast, other operands have equal rank with each
// dimension equal or 1.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/array.h"

namespace tessera::lax {

// ---- elementwise (src/api/lax_elementwise.cpp) ----
Array add(const Array& x, const Array& y);
Array sub(const Array& x, const Array& y);
Array mul(const Array& x, const Array& y);
// Integer division truncates toward zero; x / 0 == -1 (all ones for unsigned) and
// INT_MIN / -1 == INT_MIN, as XLA defines them.
Array div(const Array& x, const Array& y);
Array max(const Array& x, const Array& y);  // NaN-propagating
Array min(const Array& x, const Array& y);  // NaN-propagating
Array pow(const Array& x, const Array& y);  // floating
Array neg(const Array& x);
Array exp(const Array& x);
Array log(const Array& x);
Array sin(const Array& x);
Array cos(const Array& x);
Array tanh(const Array& x);
Array logistic(const Array& x);
Array sqrt(const Array& x);
Array integer_pow(const Array& x, int64_t y);
Array eq(const Array& x, const Array& y);
Array ne(const Array& x, const Array& y);
Array lt(const Array& x, const Array& y);
Array le(const Array& x, const Array& y);
Array gt(const Array& x, const Array& y);
Array ge(const Array& x, const Array& y);
// select_n(which, cases): which is bool (2 cases) or int32; picks cases[which] elementwise.
// which is rank 0 or has the cases' shape.
Array select_n(const Array& which, const std::vector<Array>& cases);
Array convert_element_type(const Array& x, DType new_dtype);

// ---- structural (src/api/lax_structural.cpp) ----
Array broadcast_in_dim(const Array& x, const Shape& shape,
                       const std::vector<int64_t>& broadcast_dimensions);
// lax.broadcast: prepends sizes.
Array broadcast(const Array& x, const Shape& sizes);
Array reshape(const Array& x, const Shape& new_sizes);
Array transpose(const Array& x, const std::vector<int64_t>& permutation);
Array iota(DType dtype, int64_t size);
Array broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension);
Array reduce_sum(const Array& x, const std::vector<int64_t>& axes);
Array reduce_max(const Array& x, const std::vector<int64_t>& axes);

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contracting, rhs_contracting;
  std::vector<int64_t> lhs_batch, rhs_batch;
};
// Output dims: batch dims, then lhs free dims, then rhs free dims (lax.dot_general's order).
// preferred_element_type sets the accumulation/result dtype (e.g. int8 x int8 -> int32).
Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type = std::nullopt);
// lax.dot: vector·vector, matrix·vector, matrix·matrix.
Array dot(const Array& lhs, const Array& rhs,
          std::optional<DType> preferred_element_type = std::nullopt);

// The identity whose derivative is zero (its tangent is a symbolic zero).
Array stop_gradient(const Array& x);

}  // namespace tessera::lax
