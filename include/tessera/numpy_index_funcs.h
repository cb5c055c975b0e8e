// tessera::numpy's index-producing and index-consuming functions (jax.numpy's semantics) —
// src/api/numpy_index_funcs.cpp (nonzero to ediff1d), numpy_index_arith.cpp (unravel_index to
// put_along_axis) and src/api/numpy_histogram.cpp (histogram, histogram_bin_edges,
// histogram2d, histogramdd, interp), composed from gather/scatter (`at`, take), sort,
// cumsum and where as JAX composes them; no primitive of their own, so every transformation
// works through the primitives they bind.
//
// Sizes that depend on values (nonzero, flatnonzero, argwhere, where(cond), unique, compress,
// extract, bincount without `length`, choose and ravel_multi_index with mode "raise") read the
// concrete value (also through a grad tracer over eager code); under jit/vmap they need the
// static `size` (`length` for bincount; mode "clip"/"wrap") and otherwise raise
// ConcretizationError with jnp's text ("The size argument of jnp.nonzero must be statically
// specified ..."). With `size`, missing entries are filled (nonzero: fill_value, default 0;
// compress/extract: fill_value; unique: fill_value, default the smallest unique value) and extra
// ones dropped.
//
// Dtypes: produced indices are the default int (int32; int64 with x64) as JAX's nonzero,
// bincount, unique's indices/inverse/counts, indices, *_indices; searchsorted and digitize
// return int32 (JAX's, for arrays under 2^31 elements), argpartition int32 (JAX's top_k
// indices); unravel_index, ravel_multi_index and ix_ keep the index arrays' dtypes.
//
// Decisions where NumPy and JAX differ, or JAX leaves freedom:
//  - searchsorted's methods "scan" (a binary search in a fori_loop), "scan_unrolled" (the same
//    steps unrolled), "sort" (a stable co-sort of a and v) and "compare_all" (a count of the
//    comparisons) give identical results; NaNs order last (lax.sort's order). `a` is not checked
//    to be sorted (as JAX).
//  - partition/argpartition return the sorted order (stable), which is a valid partition; JAX's
//    lays out the elements after kth in descending order. Both put kth in its sorted place.
//  - unravel_index wraps negative indices and clips out-of-range ones (JAX's, not NumPy's error).
//  - unique: axis=None (the flattened array) or an axis (its slices, ordered lexicographically);
//    equal_nan merges NaNs.
//  - put/put_along_axis are JAX's functional forms: inplace must be false (ValueError
//    otherwise, JAX's text); put's mode "raise" is NotImplementedError (as JAX).
//  - histogram counts a value v in bin i when edges[i] <= v < edges[i + 1], the last bin
//    closed; values outside the edges or NaN are not counted. hist is floating (a's dtype made
//    inexact, promoted with the weights'), as JAX's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

// ---- nonzero & co. ----
// size: the static number of results (entries past the count of nonzeros are fill_value,
// extra nonzeros are dropped). fill_value: empty (0), one value for every dimension, or one per
// dimension of a (ValueError otherwise).
struct NonzeroOptions {
  std::optional<int64_t> size = std::nullopt;
  std::vector<int64_t> fill_value = {};
};
// One index array per dimension of a (rank 0: ValueError, as JAX).
std::vector<Array> nonzero(const ArrayLike& a, const NonzeroOptions& o = {});
// jnp.where(condition) with one argument: nonzero(condition).
std::vector<Array> where(const ArrayLike& condition, const NonzeroOptions& o = {});
// nonzero(ravel(a))[0].
Array flatnonzero(const ArrayLike& a, const NonzeroOptions& o = {});
// The nonzero indices stacked: shape (count or size, a.ndim()); rank-0 a gives (count, 0).
Array argwhere(const ArrayLike& a, const NonzeroOptions& o = {});

// ---- searching and counting ----
// Indices where v's elements would be inserted into the 1-D sorted a (a[sorter] when given) to
// keep it sorted: side "left" (first suitable) or "right" (last); method "scan",
// "scan_unrolled", "sort" or "compare_all". Computed in result_type(a, v).
Array searchsorted(const ArrayLike& a, const ArrayLike& v, const std::string& side = "left",
                   const std::optional<Array>& sorter = std::nullopt,
                   const std::string& method = "scan");
// The bin of each x for monotonic (increasing or decreasing) 1-D bins, NumPy's convention;
// right=true closes bins on the right. Empty bins: zeros.
Array digitize(const ArrayLike& x, const ArrayLike& bins, bool right = false,
               const std::optional<std::string>& method = std::nullopt);
// Counts (or sums of weights) of each non-negative integer in the 1-D x. The result has
// max(max(x) + 1, minlength) entries (concrete x only) or `length` (static; larger values are
// dropped). Negative values count in bin 0 (JAX's clip; NumPy raises). weights: x's shape
// (ValueError otherwise). dtype: the default int, or the weights' dtype.
Array bincount(const ArrayLike& x, const std::optional<Array>& weights = std::nullopt,
               int64_t minlength = 0, std::optional<int64_t> length = std::nullopt);

// ---- unique, partition ----
struct UniqueOptions {
  bool return_index = false;    // the first index of each unique value in ravel(ar)
  bool return_inverse = false;  // the unique value's position for each element, ar's shape
  bool return_counts = false;   // how often each unique value occurs
  bool equal_nan = true;        // NaNs count as one value
  std::optional<int64_t> size = std::nullopt;       // static number of unique values
  std::optional<double> fill_value = std::nullopt;  // for padding; default: the smallest value
  // None: the unique elements of ravel(ar). An axis: the unique slices along it (sorted
  // lexicographically, first element most significant; NaNs equal when equal_nan), inverse and
  // the rest indexed along that axis, inverse of shape (ar.shape[axis],).
  std::optional<int64_t> axis = std::nullopt;
};
// The requested fields are defined, the others empty handles. With size, padded entries have
// the first unique value's index (JAX pads the positions with 0) and count 0; a size below the
// number of unique values keeps the smallest ones (their counts exact); an empty ar with size > 0
// needs fill_value (ValueError, JAX's text). inverse has ar's shape (also rank 0, as JAX), or
// (ar.shape[axis],) with an axis.
struct UniqueResult {
  Array values, indices, inverse, counts;
};
// The sorted unique values of ravel(ar), or the unique slices along o.axis.
UniqueResult unique(const ArrayLike& ar, const UniqueOptions& o = {});
Array unique_values(const ArrayLike& ar);  // the array API's name: unique(ar).values

// a with its kth element (along axis) in sorted position, smaller ones before, larger after.
Array partition(const ArrayLike& a, int64_t kth, int64_t axis = -1);
Array argpartition(const ArrayLike& a, int64_t kth, int64_t axis = -1);

// ---- selection ----
// Where condlist[k] holds (the first such k), choicelist[k]; elsewhere default_. conditions
// must be bool; ValueError for differing lengths or none.
Array select(const std::vector<Array>& condlist, const std::vector<Array>& choicelist,
             const ArrayLike& default_ = 0);
// choices[a] elementwise (a broadcast with the choices); mode "raise" (concrete a: ValueError
// for entries outside [0, n)), "wrap" (modulo n) or "clip".
Array choose(const ArrayLike& a, const std::vector<Array>& choices,
             const std::string& mode = "raise");
// The slices of a along axis (none: the flattened a) where the 1-D condition is true; a short
// condition counts as false past its end. size: static count, padded with fill_value.
Array compress(const ArrayLike& condition, const ArrayLike& a,
               std::optional<int64_t> axis = std::nullopt,
               std::optional<int64_t> size = std::nullopt, double fill_value = 0);
// compress(ravel(condition), ravel(arr)).
Array extract(const ArrayLike& condition, const ArrayLike& arr,
              std::optional<int64_t> size = std::nullopt, double fill_value = 0);

// ---- differences ----
// The n-th discrete difference along axis (bool: !=), with prepend/append joined first (a
// scalar is broadcast to one slice).
Array diff(const ArrayLike& a, int64_t n = 1, int64_t axis = -1,
           const std::optional<ArrayLike>& prepend = std::nullopt,
           const std::optional<ArrayLike>& append = std::nullopt);
// diff of ravel(ary) with to_begin/to_end (raveled, cast to the result's dtype) joined.
Array ediff1d(const ArrayLike& ary, const std::optional<ArrayLike>& to_end = std::nullopt,
              const std::optional<ArrayLike>& to_begin = std::nullopt);

// ---- index arithmetic ----
// The coordinates of flat indices into shape, one array per dimension.
std::vector<Array> unravel_index(const ArrayLike& indices, const Shape& shape);
// The flat index of coordinates (one integer array per dimension of dims): mode "raise"
// (concrete only: ValueError for out-of-range), "wrap" or "clip"; order "C" or "F".
Array ravel_multi_index(const std::vector<Array>& multi_index, const Shape& dims,
                        const std::string& mode = "raise", const std::string& order = "C");
// The grid of indices: shape (len(dims),) + dims (jnp.indices); default dtype: the default int.
Array indices(const Shape& dimensions, std::optional<DType> dtype = std::nullopt);
// jnp.indices(..., sparse=True): one array per dimension, size 1 in the others.
std::vector<Array> indices_sparse(const Shape& dimensions,
                                  std::optional<DType> dtype = std::nullopt);
// Open mesh of 1-D integer sequences (bool: NotImplementedError, as JAX).
std::vector<Array> ix_(const std::vector<Array>& args);
// Row and column indices of the lower/upper triangle of an (n, m) matrix, diagonal offset k.
std::vector<Array> tril_indices(int64_t n, int64_t k = 0, std::optional<int64_t> m = std::nullopt);
std::vector<Array> triu_indices(int64_t n, int64_t k = 0, std::optional<int64_t> m = std::nullopt);
std::vector<Array> tril_indices_from(const Array& arr, int64_t k = 0);
std::vector<Array> triu_indices_from(const Array& arr, int64_t k = 0);
// ndim copies of arange(n).
std::vector<Array> diag_indices(int64_t n, int64_t ndim = 2);
std::vector<Array> diag_indices_from(const Array& arr);

// ---- functional puts ----
// a with ravel(a)[ind] = v (v repeated to ind's length); mode none/"fill" (out of range:
// dropped), "clip" or "wrap". Negative indices count from the end before clipping (JAX's
// normalization; NumPy's "clip" sends them to 0). inplace must be false.
Array put(const ArrayLike& a, const ArrayLike& ind, const ArrayLike& v,
          const std::optional<std::string>& mode = std::nullopt, bool inplace = true);
// put_along_axis: arr with values written at indices along axis (none: flattened); inplace
// must be false. mode: none (out of range dropped), "clip", "fill"/"drop", "promise_in_bounds".
Array put_along_axis(const ArrayLike& arr, const ArrayLike& indices, const ArrayLike& values,
                     std::optional<int64_t> axis, bool inplace = true,
                     const std::optional<std::string>& mode = std::nullopt);

// ---- histograms and interpolation (src/api/numpy_histogram.cpp) ----
// A bin count (static) or the 1-D bin edges (increasing; checked when concrete).
using HistogramBins = std::variant<int64_t, Array>;
// histogram's range: none (the data's min and max), two numbers, or two rank-0 arrays (traced
// ones give traced edges, as JAX's asarray(range)).
class HistogramRange {
 public:
  HistogramRange() = default;
  HistogramRange(std::nullopt_t) {}            // NOLINT: implicit by design
  HistogramRange(std::pair<double, double> r)  // NOLINT
      : lo_(r.first), hi_(r.second), set_(true) {}
  HistogramRange(const std::optional<std::pair<double, double>>& r)  // NOLINT
      : set_(r.has_value()) {
    if (r) std::tie(lo_, hi_) = *r;
  }
  HistogramRange(const Array& lo, const Array& hi) : lo_a_(lo), hi_a_(hi), set_(true) {}
  bool has_value() const { return set_; }
  explicit operator bool() const { return set_; }
  // The two ends as arrays (nullopt when given as numbers).
  const std::optional<Array>& lo_array() const { return lo_a_; }
  const std::optional<Array>& hi_array() const { return hi_a_; }
  double lo() const { return lo_; }
  double hi() const { return hi_; }

 private:
  double lo_ = 0, hi_ = 0;
  std::optional<Array> lo_a_, hi_a_;
  bool set_ = false;
};
// Edges for a bin count: bins + 1 evenly spaced over range (default: the data's min and max;
// an empty range widens by 0.5 each side). Floating dtype of a (made inexact).
Array histogram_bin_edges(const ArrayLike& a, const HistogramBins& bins = int64_t{10},
                          const HistogramRange& range = std::nullopt,
                          const std::optional<Array>& weights = std::nullopt);
// {hist, bin_edges}. weights: a's shape. density: hist / bin widths / total.
std::vector<Array> histogram(const ArrayLike& a, const HistogramBins& bins = int64_t{10},
                             const HistogramRange& range = std::nullopt,
                             const std::optional<Array>& weights = std::nullopt,
                             bool density = false);

// histogramdd of an (N, D) sample: bins has one entry for all dimensions or one per dimension;
// range is empty or has D entries (each none or a pair). hist has shape (bins_0, ..., bins_D-1):
// the default int without weights or density (as JAX), else the sample's dtype made inexact
// (promoted with the weights'). weights: shape (N,). density: hist / total / bin volumes.
struct HistogramDD {
  Array hist;
  std::vector<Array> edges;  // one per dimension
};
HistogramDD histogramdd(const ArrayLike& sample,
                        const std::vector<HistogramBins>& bins = {int64_t{10}},
                        const std::vector<HistogramRange>& range = {},
                        const std::optional<Array>& weights = std::nullopt, bool density = false);
// histogramdd of the points (x[i], y[i]): {hist, xedges, yedges}. bins: one entry for both
// dimensions or two.
std::vector<Array> histogram2d(const ArrayLike& x, const ArrayLike& y,
                               const std::vector<HistogramBins>& bins = {int64_t{10}},
                               const std::vector<HistogramRange>& range = {},
                               const std::optional<Array>& weights = std::nullopt,
                               bool density = false);

// interp's left/right: none (fp[0] / fp[-1]), a value, or "extrapolate" (continue the end
// segment).
class InterpEnd {
 public:
  InterpEnd() = default;
  InterpEnd(const Array& v) : value_(v) {}  // NOLINT: implicit by design
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
  InterpEnd(S s) : value_(ArrayLike(s).array()) {}   // NOLINT
  InterpEnd(std::string s) : mode_(std::move(s)) {}  // NOLINT
  InterpEnd(const char* s) : mode_(s) {}             // NOLINT
  const std::optional<Array>& value() const { return value_; }
  const std::optional<std::string>& mode() const { return mode_; }

 private:
  std::optional<Array> value_;
  std::optional<std::string> mode_;
};
// Piecewise-linear interpolation of (xp, fp) at x: xp increasing (not checked); with period,
// x and xp are taken modulo period (left/right ignored). Differentiable in x, xp and fp.
Array interp(const ArrayLike& x, const ArrayLike& xp, const ArrayLike& fp,
             const InterpEnd& left = {}, const InterpEnd& right = {},
             const std::optional<ArrayLike>& period = std::nullopt);

}  // namespace tessera::numpy
