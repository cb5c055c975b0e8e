// tessera::lax — thin functions that bind primitives, with JAX's lax names and semantics.
// Binary ops require one dtype (no promotion; use tessera::numpy for that) and follow lax's
// broadcasting rule: rank-0 operands broadcast, other operands have equal rank with each
// dimension equal or 1.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "tessera/array.h"
#include "tessera/param_types.h"

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

// ---- more elementwise math (src/api/lax_math.cpp; rules in src/prims/elementwise_math.cpp)
// Number dtypes (no bool) unless noted; the transcendental ones take floating dtypes only.
Array abs(const Array& x);
Array sign(const Array& x);   // -1, 0, 1 (NaN stays NaN); unsigned: 0 or 1
Array floor(const Array& x);  // floating
Array ceil(const Array& x);   // floating
// lax.RoundingMethod: AWAY_FROM_ZERO (0, lax.round's default) or TO_NEAREST_EVEN (1)
// (param_types.h; round's param holds the value as an int, which is how JAX prints it).
using RoundingMethod = tessera::RoundingMethod;
Array round(const Array& x, RoundingMethod method = RoundingMethod::kAwayFromZero);
Array exp2(const Array& x);
Array expm1(const Array& x);
Array log1p(const Array& x);
Array rsqrt(const Array& x);
Array cbrt(const Array& x);
Array tan(const Array& x);
Array asin(const Array& x);
Array acos(const Array& x);
Array atan(const Array& x);
Array atan2(const Array& x, const Array& y);  // atan2(x, y) = angle of (y, x), as lax
Array sinh(const Array& x);
Array cosh(const Array& x);
Array asinh(const Array& x);
Array acosh(const Array& x);
Array atanh(const Array& x);
Array is_finite(const Array& x);                  // floating -> bool
Array nextafter(const Array& x, const Array& y);  // floating
// Remainder with the sign of the dividend (C's fmod / %); integers as XLA: x % 0 == x and
// INT_MIN % -1 == 0.
Array rem(const Array& x, const Array& y);
Array square(const Array& x);
Array reciprocal(const Array& x);  // integer_pow(x, -1)
// clamp(min, x, max): min and max are rank 0 or x's shape.
Array clamp(const Array& min, const Array& x, const Array& max);

// ---- special functions (src/api/lax_math.cpp; rules in src/prims/special.cpp) ----
// Floating dtypes.
Array erf(const Array& x);
Array erfc(const Array& x);
Array erf_inv(const Array& x);
Array lgamma(const Array& x);
Array digamma(const Array& x);
Array polygamma(const Array& m, const Array& x);      // m: integer-valued, same dtype as x
Array zeta(const Array& x, const Array& q);           // Hurwitz zeta
Array igamma(const Array& a, const Array& x);         // regularized lower incomplete gamma P(a, x)
Array igammac(const Array& a, const Array& x);        // 1 - P(a, x)
Array igamma_grad_a(const Array& a, const Array& x);  // d/da P(a, x)
// d sample / d a for a sample x ~ Gamma(a, 1) (implicit reparameterization).
Array random_gamma_grad(const Array& a, const Array& x);
Array bessel_i0e(const Array& x);  // exp(-|x|) I0(x)
Array bessel_i1e(const Array& x);  // exp(-|x|) I1(x)
// The regularized incomplete beta I_x(a, b) (lax.betainc; primitive regularized_incomplete_beta).
Array betainc(const Array& a, const Array& b, const Array& x);

// ---- bitwise (src/api/lax_math.cpp; rules in src/prims/bitwise.cpp) ----
// not/and/or/xor take bool and integers; shifts, population_count and clz integers.
Array bitwise_not(const Array& x);                  // primitive "not"
Array bitwise_and(const Array& x, const Array& y);  // "and"
Array bitwise_or(const Array& x, const Array& y);   // "or"
Array bitwise_xor(const Array& x, const Array& y);  // "xor"
// Shifts by >= the bit width give 0 (logical, left) or the sign fill (arithmetic), as XLA.
Array shift_left(const Array& x, const Array& y);
Array shift_right_logical(const Array& x, const Array& y);
Array shift_right_arithmetic(const Array& x, const Array& y);
Array population_count(const Array& x);
Array clz(const Array& x);
// Reinterprets the bits: equal widths keep the shape; a narrower target adds a trailing dim
// of width ratio, a wider one removes a trailing dim of that size (lax's rule).
Array bitcast_convert_type(const Array& x, DType new_dtype);
// Rounds a floating x to the given exponent and mantissa bits (nearest even), in its dtype.
Array reduce_precision(const Array& x, int64_t exponent_bits, int64_t mantissa_bits);

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

// ---- more reductions (src/api/lax_slicing.cpp, lax_reduce.cpp; rules in src/prims/) ----
Array reduce_prod(const Array& x, const std::vector<int64_t>& axes);
Array reduce_min(const Array& x, const std::vector<int64_t>& axes);
Array reduce_and(const Array& x, const std::vector<int64_t>& axes);  // bool and integers
Array reduce_or(const Array& x, const std::vector<int64_t>& axes);
Array reduce_xor(const Array& x, const std::vector<int64_t>& axes);
// Index of the first maximum/minimum along axis (NaN counts as the maximum and the minimum,
// as XLA); index_dtype is an integer dtype (int32 by default).
Array argmax(const Array& x, int64_t axis, DType index_dtype = DType::kInt32);
Array argmin(const Array& x, int64_t axis, DType index_dtype = DType::kInt32);
// lax.reduce: reduces operands (one shape) over dimensions with a computation of
// (accumulators..., values...) -> accumulators..., traced once on rank-0 values into a jaxpr;
// init_values are rank 0, one per operand. A computation that is one of add/mul/max/min/
// and/or/xor with the matching identity binds that monoid's primitive (as JAX does).
using ReduceComputation =
    std::function<std::vector<Array>(const std::vector<Array>&, const std::vector<Array>&)>;
std::vector<Array> reduce(const std::vector<Array>& operands, const std::vector<Array>& init_values,
                          const ReduceComputation& computation,
                          const std::vector<int64_t>& dimensions);
Array reduce(const Array& operand, const Array& init_value,
             const std::function<Array(const Array&, const Array&)>& computation,
             const std::vector<int64_t>& dimensions);

// ---- slicing, concatenation, padding (src/api/lax_slicing.cpp; rules in
// src/prims/slicing.cpp, src/prims/concat_pad.cpp, src/prims/squeeze_rev.cpp) ----
Array squeeze(const Array& x, const std::vector<int64_t>& dimensions);  // size-1 dims
// Inserts size-1 dims at the given positions of the result (a broadcast_in_dim, as JAX).
Array expand_dims(const Array& x, const std::vector<int64_t>& dimensions);
Array rev(const Array& x, const std::vector<int64_t>& dimensions);
// Static slice; strides >= 1 (empty = all 1).
Array slice(const Array& x, const std::vector<int64_t>& start_indices,
            const std::vector<int64_t>& limit_indices, const std::vector<int64_t>& strides = {});
Array slice_in_dim(const Array& x, int64_t start, int64_t limit, int64_t stride = 1,
                   int64_t axis = 0);
Array index_in_dim(const Array& x, int64_t index, int64_t axis = 0, bool keepdims = true);
// Start indices are rank-0 integer arrays (one per dim), clamped so the slice fits, as XLA.
Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices,
                    const std::vector<int64_t>& slice_sizes);
Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<Array>& start_indices);
Array dynamic_slice_in_dim(const Array& x, const Array& start, int64_t size, int64_t axis = 0);
Array dynamic_index_in_dim(const Array& x, const Array& index, int64_t axis = 0,
                           bool keepdims = true);
Array dynamic_update_slice_in_dim(const Array& x, const Array& update, const Array& start,
                                  int64_t axis);
Array concatenate(const std::vector<Array>& operands, int64_t dimension);
// One (low, high, interior) per dim; low/high may be negative (cropping).
struct PadConfig {
  int64_t low = 0, high = 0, interior = 0;
};
Array pad(const Array& x, const Array& padding_value, const std::vector<PadConfig>& config);

// {lhs_contracting, rhs_contracting, lhs_batch, rhs_batch} (param_types.h).
using DotDimensionNumbers = tessera::DotDimensionNumbers;
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
