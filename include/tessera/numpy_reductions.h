// tessera::numpy reductions, statistics and comparisons (jax.numpy's semantics): sum/prod/max/
// min with where and initial, mean/var/std, the nan* family, argmax/argmin, all/any,
// count_nonzero, ptp, isclose/allclose/array_equal, nan_to_num, clip, and linalg::norm.
//
// Options are one aggregate so that C++ code reads like the Python call (designators must
// follow the declaration order: axis, dtype, keepdims, initial, where, ddof):
//
//   namespace tnp = tessera::numpy;
//   tnp::var(x, {.axis = 0, .ddof = 1});                  // jnp.var(x, axis=0, ddof=1)
//   tnp::sum(x, {.axis = {0, 2}, .keepdims = true});      // axis=(0, 2)
//   tnp::max(x, {.axis = -1, .initial = 0.0, .where = m}); // a mask needs initial for max/min
//   tnp::prod(x, 1);                                       // axis=1 (positional shorthand)
//
// Every reduction also has `f(x, int64_t axis, bool keepdims = false)`. A braced list of several
// axes alone (`f(x, {0, 1})`) does not compile for the functions declared here: write
// `{.axis = {0, 1}}`. Results are strongly typed, as JAX's reductions are.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

// A reduction's axis argument: none (all axes, the default), one int, or a list (negative axes
// allowed; an empty list reduces nothing).
class AxisArg {
 public:
  AxisArg() = default;
  AxisArg(std::nullopt_t) {}  // NOLINT: implicit by design
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  AxisArg(I axis) : axes_(std::vector<int64_t>{static_cast<int64_t>(axis)}) {}         // NOLINT
  AxisArg(std::initializer_list<int64_t> axes) : axes_(std::vector<int64_t>(axes)) {}  // NOLINT
  AxisArg(std::vector<int64_t> axes) : axes_(std::move(axes)) {}                       // NOLINT
  AxisArg(const Axes& axes) : axes_(axes) {}                                           // NOLINT
  const Axes& axes() const { return axes_; }

 private:
  Axes axes_;
};

// jax.numpy's reduction keywords. Each function accepts the subset its jnp namesake accepts and
// raises TypeError naming any other option that is set (as Python does for an unexpected
// keyword).
struct ReduceOptions {
  AxisArg axis{};                   // none = all axes
  std::optional<DType> dtype{};     // result dtype (and accumulation dtype, as jnp)
  bool keepdims = false;            // keep reduced axes as size 1
  std::optional<double> initial{};  // sum/prod/max/min and nan* variants: combined with the result
  std::optional<Array> where{};     // mask broadcastable to x's shape (non-bool: != 0)
  double ddof = 0;                  // var/std/nanvar/nanstd: divisor N - ddof (JAX's correction)
};

// ---- reductions (the Axes/int64_t overloads of sum, max and mean are in numpy.h) ----
// sum/prod: bool and small integers accumulate in the default int/uint (jnp's
// promote_integers); 16-bit floats in float32. dtype=bool gives any/all.
Array sum(const Array& x, const ReduceOptions& o);
Array prod(const Array& x, const ReduceOptions& o = {});
Array prod(const Array& x, int64_t axis, bool keepdims = false);
// max/min: no identity: empty reductions raise ValueError unless `initial` is given, and so
// does `where` without `initial`. NaN propagates.
Array max(const Array& x, const ReduceOptions& o);
Array min(const Array& x, const ReduceOptions& o = {});
Array min(const Array& x, int64_t axis, bool keepdims = false);
Array amax(const Array& x, const ReduceOptions& o = {});
Array amax(const Array& x, int64_t axis, bool keepdims = false);
Array amin(const Array& x, const ReduceOptions& o = {});
Array amin(const Array& x, int64_t axis, bool keepdims = false);
// max - min (jnp.ptp: axis, keepdims); bool raises TypeError as lax.sub does.
Array ptp(const Array& x, const ReduceOptions& o = {});
Array ptp(const Array& x, int64_t axis, bool keepdims = false);
// all/any: x is converted to bool (nonzero, NaN counts as true); options axis, keepdims, where.
Array all(const Array& x, const ReduceOptions& o = {});
Array all(const Array& x, int64_t axis, bool keepdims = false);
Array any(const Array& x, const ReduceOptions& o = {});
Array any(const Array& x, int64_t axis, bool keepdims = false);
// The number of nonzero elements, in the default int dtype (axis, keepdims).
Array count_nonzero(const Array& x, const ReduceOptions& o = {});
Array count_nonzero(const Array& x, int64_t axis, bool keepdims = false);

// ---- statistics: integers -> float (jnp's to_inexact), 16-bit floats computed in float32 ----
// An empty reduction gives NaN (0/0), as jnp.
Array mean(const Array& x, const ReduceOptions& o);
// var/std: two-pass (mean, then the mean squared deviation) over N - ddof; NaN where
// N - ddof <= 0. std's dtype must be inexact (ValueError otherwise).
Array var(const Array& x, const ReduceOptions& o = {});
Array var(const Array& x, int64_t axis, bool keepdims = false);
Array std(const Array& x, const ReduceOptions& o = {});
Array std(const Array& x, int64_t axis, bool keepdims = false);

// ---- NaN-ignoring variants (integer and bool inputs: the plain reduction) ----
Array nansum(const Array& x, const ReduceOptions& o = {});  // all-NaN -> 0
Array nansum(const Array& x, int64_t axis, bool keepdims = false);
Array nanprod(const Array& x, const ReduceOptions& o = {});  // all-NaN -> 1
Array nanprod(const Array& x, int64_t axis, bool keepdims = false);
Array nanmax(const Array& x, const ReduceOptions& o = {});  // all-NaN -> NaN (without initial)
Array nanmax(const Array& x, int64_t axis, bool keepdims = false);
Array nanmin(const Array& x, const ReduceOptions& o = {});
Array nanmin(const Array& x, int64_t axis, bool keepdims = false);
Array nanmean(const Array& x, const ReduceOptions& o = {});  // all-NaN -> NaN
Array nanmean(const Array& x, int64_t axis, bool keepdims = false);
Array nanvar(const Array& x, const ReduceOptions& o = {});
Array nanvar(const Array& x, int64_t axis, bool keepdims = false);
Array nanstd(const Array& x, const ReduceOptions& o = {});
Array nanstd(const Array& x, int64_t axis, bool keepdims = false);

// ---- indices of extrema: axis none = the flattened array; the index dtype is the default int
// (int32 unless x64). The first occurrence wins; NaN counts as both the maximum and the
// minimum (the first NaN is returned). Empty axes raise ValueError.
Array argmax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
// NaNs ignored; -1 where every element is NaN (jnp's nanargmax/nanargmin).
Array nanargmax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array nanargmin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);

// ---- comparison ----
// |a - b| <= atol + rtol * |b| elementwise, computed in the promoted inexact dtype (integers
// become float, rtol/atol are rounded to that dtype); infinities are close only to the same
// infinity; NaN is close to nothing unless equal_nan. Shapes broadcast; result bool.
Array isclose(const ArrayLike& a, const ArrayLike& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// all(isclose(...)): a rank-0 bool array.
Array allclose(const ArrayLike& a, const ArrayLike& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
// Same shape and all elements equal (after promotion): a rank-0 bool array; false for different
// shapes. equal_nan: NaN equals NaN.
Array array_equal(const ArrayLike& a, const ArrayLike& b, bool equal_nan = false);
// Equal after broadcasting; false when the shapes do not broadcast.
Array array_equiv(const ArrayLike& a, const ArrayLike& b);

// ---- cleaning ----
// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: the dtype's finfo max and min). Integer
// and bool arrays are returned as they are.
Array nan_to_num(const ArrayLike& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                 std::optional<double> neginf = std::nullopt);
// jnp.clip(x, min, max) = minimum(maximum(x, min), max) with jnp's promotion; either bound may
// be absent (both absent: x). NaN propagates.
Array clip(const ArrayLike& x, const std::optional<ArrayLike>& min = std::nullopt,
           const std::optional<ArrayLike>& max = std::nullopt);

namespace linalg {

// A norm's `ord`: none (the default), a number (inf and -inf included), or "fro" / "nuc".
class NormOrd {
 public:
  NormOrd() = default;
  NormOrd(std::nullopt_t) {}                             // NOLINT
  NormOrd(double p) : p_(p) {}                           // NOLINT
  NormOrd(int p) : p_(p) {}                              // NOLINT
  NormOrd(const char* name) : name_(name) {}             // NOLINT
  NormOrd(std::string name) : name_(std::move(name)) {}  // NOLINT
  bool is_none() const { return !p_ && name_.empty(); }
  const std::optional<double>& number() const { return p_; }
  const std::string& name() const { return name_; }

 private:
  std::optional<double> p_;
  std::string name_;
};

// jnp.linalg.norm. x is promoted to an inexact dtype. axis none with ord none: the 2-norm of
// the flattened array (any rank). One axis (or a 1-D x): vector norms — ord none/2, 1, inf,
// -inf, 0 (count of nonzeros), any other p: sum(|x|^p)^(1/p). Two axes (or a 2-D x): matrix
// norms — none/"fro", 1, -1, inf, -inf, and 2, -2, "nuc" (the largest, smallest and summed
// singular values, from tessera::linalg::svdvals).
Array norm(const Array& x, const NormOrd& ord = {}, const AxisArg& axis = {},
           bool keepdims = false);
// jnp.linalg.vector_norm (ord default 2; axis none = all axes, flattened).
Array vector_norm(const Array& x, const NormOrd& ord = 2, const AxisArg& axis = {},
                  bool keepdims = false);

}  // namespace linalg

}  // namespace tessera::numpy
