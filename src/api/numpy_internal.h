// Helpers shared by the tessera::numpy files: argument checks, jax.numpy's dtype promotion
// (with weak scalars) and NumPy broadcasting expressed through lax's rank rule.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy::detail {

// Throws ValueError naming op when x is an empty handle (Array()).
void check_defined(const char* op, const Array& x);

// Converts x to (dtype, weak) when either differs (lax.convert_element_type with JAX's
// weak_type parameter). A concrete weak integer scalar that does not fit an integer target
// raises ValueError, as JAX raises OverflowError for Python ints.
Array convert(const char* op, const Array& x, TypedDType to);
// Strong conversion (jnp.astype, reductions).
inline Array convert(const char* op, const Array& x, DType to) {
  return convert(op, x, TypedDType{to, false});
}

// Raises ValueError when x is a concrete weak integer scalar (a C++ int) outside to's range.
void check_weak_int_fits(const char* op, const Array& x, DType to);
// A rank-0 constant of (dtype, weak) on the host.
Array constant(double v, TypedDType t);

// JAX's result type of the arrays' (dtype, weak) pairs.
TypedDType typed_result(const std::vector<Array>& xs);
// jnp's to_inexact_dtype: bool and integers up to 32 bits -> float32, 64-bit integers -> float64,
// canonicalized; floating dtypes unchanged.
DType to_inexact(DType d);
// jnp's to_numeric_dtype: bool -> the default int; others unchanged.
DType to_numeric(DType d);

// Promotes xs to their common (dtype, weak) and converts each (jnp's promote_dtypes).
std::vector<Array> promote(const char* op, const std::vector<Array>& xs);
// As promote, then bool/integer results become inexact (promote_dtypes_inexact).
std::vector<Array> promote_inexact(const char* op, const std::vector<Array>& xs);

// The ufunc patterns: promote (jnp's promote_dtypes, or promote_dtypes_inexact), check that the
// shapes broadcast, align ranks (zero-copy), apply the lax function.
using LaxBinary = std::function<Array(const Array&, const Array&)>;
using LaxUnary = std::function<Array(const Array&)>;
Array binary(const char* op, const Array& x, const Array& y, LaxBinary f);
Array binary_inexact(const char* op, const Array& x, const Array& y, LaxBinary f);
Array unary_inexact(const char* op, const Array& x, LaxUnary f);

// NumPy broadcast shape of a and b; ValueError "[op] operands could not be broadcast together
// with shapes (3,) (4,)" when incompatible.
Shape broadcast_shape(const char* op, const Shape& a, const Shape& b);
// Makes x and y acceptable to a lax binary op without materializing the broadcast: checks that
// their shapes broadcast, then reshapes the lower-rank one to the other's rank by prepending 1s
// (zero-copy). Rank-0 operands are passed as they are (lax broadcasts them).
std::pair<Array, Array> align_ranks(const char* op, const Array& x, const Array& y);
// Materializing broadcast of x to shape (lax.broadcast_in_dim, trailing alignment); returns x
// itself when the shape already matches. Shapes are assumed compatible.
Array broadcast_to_shape(const Array& x, const Shape& shape);

// Normalizes reduction axes (None = all; negatives allowed); ValueError "[op] duplicate value in
// 'axis'" for duplicates, IndexError for out-of-range axes. Returned sorted.
std::vector<int64_t> normalize_axes(const char* op, const Axes& axis, int64_t ndim);

// "float32" etc.
std::string dtype_str(DType d);
// "(0, 1)" (a Python tuple).
std::string tuple_str(const std::vector<int64_t>& v);

}  // namespace tessera::numpy::detail
