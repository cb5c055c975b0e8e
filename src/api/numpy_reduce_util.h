// Helpers shared by numpy_reductions.cpp and numpy_stats.cpp: option checks, where masks, and
// jnp's generic reduction (jax/_src/numpy/reductions.py's _reduction, restated).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy_reductions.h"

namespace tessera::numpy::detail {

// Which ReduceOptions fields a function accepts (jnp's keywords for it).
enum OptionBits : unsigned {
  kOptDType = 1,
  kOptInitial = 2,
  kOptWhere = 4,
  kOptDdof = 8,
};
// Raises TypeError "[op] got an unexpected option '.initial'" for a set option outside
// `allowed` (axis and keepdims are always accepted).
void check_options(const char* op, const ReduceOptions& o, unsigned allowed);

// Raises for undefined handles and extended dtypes (keys, float0).
void check_reducible(const char* op, const Array& x);
// Raises TypeError for an extended `dtype` option.
void check_dtype_option(const char* op, const std::optional<DType>& dtype);

// The where mask as bool (non-bool masks: != 0) broadcast to `shape`; ValueError when it does
// not broadcast to that shape.
Array where_mask(const char* op, const Array& where, const Shape& shape);

// jnp's _upcast_f16: 16-bit floats are reduced in float32.
DType upcast_f16(DType d);
// jnp's _promote_integer_dtype: bool -> default int, narrow ints -> default int/uint.
DType promote_integer_dtype(DType d);

// lax._isnan: x != x (all false for integers and bool).
Array isnan_lax(const Array& x);

enum class Monoid { kSum, kProd, kMax, kMin, kAnd, kOr };
struct ReductionSpec {
  Monoid monoid;
  bool has_identity = true;       // false: empty reductions and where need `initial`
  bool upcast_f16 = false;        // 16-bit float results computed in float32
  bool promote_integers = false;  // no dtype: bool/narrow ints -> default int/uint
  enum Pre { kNone, kNumeric, kBool } pre = kNone;  // bool -> int, or anything -> bool
};
// The reduction of x with o's axis/dtype/keepdims/initial/where (options already checked).
Array reduction(const char* op, const Array& x, const ReduceOptions& o, const ReductionSpec& s);

// The reduced shape's size product (the element count per output).
int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& axes);

}  // namespace tessera::numpy::detail
