// tessera::numpy array manipulation and contraction (jax.numpy's semantics): axes, joining and
// splitting, tiling, flipping and rolling, padding modes, diagonals and triangles, grids, and the
// products (tensordot, einsum with contraction-order optimization and ellipses, outer, inner,
// vdot, kron). Included by tessera/numpy.h.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tessera/numpy.h"

namespace tessera::numpy {

// ---- axes ----
Array swapaxes(const Array& x, int64_t axis1, int64_t axis2);
Array moveaxis(const Array& x, const std::vector<int64_t>& source,
               const std::vector<int64_t>& destination);
Array moveaxis(const Array& x, int64_t source, int64_t destination);
// axis: none = every size-1 axis.
Array squeeze(const Array& x, std::optional<std::vector<int64_t>> axis = std::nullopt);
Array squeeze(const Array& x, int64_t axis);
Array expand_dims(const Array& x, const std::vector<int64_t>& axis);
Array expand_dims(const Array& x, int64_t axis);
Array ravel(const Array& x);
Array atleast_1d(const Array& x);
Array atleast_2d(const Array& x);
Array atleast_3d(const Array& x);
std::vector<Array> broadcast_arrays(const std::vector<Array>& xs);

// ---- joining and splitting ----
// Promotes to the common dtype (jnp.concatenate's rule).
Array concatenate(const std::vector<Array>& xs, int64_t axis = 0);
Array concatenate_flat(const std::vector<Array>& xs);  // axis=None: ravel each, then join
Array stack(const std::vector<Array>& xs, int64_t axis = 0);
Array hstack(const std::vector<Array>& xs);
Array vstack(const std::vector<Array>& xs);
Array dstack(const std::vector<Array>& xs);
Array column_stack(const std::vector<Array>& xs);
// split into `sections` equal parts (ValueError when the axis does not divide), or at indices.
std::vector<Array> split(const Array& x, int64_t sections, int64_t axis = 0);
std::vector<Array> split(const Array& x, const std::vector<int64_t>& indices, int64_t axis = 0);
std::vector<Array> array_split(const Array& x, int64_t sections, int64_t axis = 0);
std::vector<Array> hsplit(const Array& x, int64_t sections);
std::vector<Array> vsplit(const Array& x, int64_t sections);

// ---- repetition, flipping, rolling ----
Array tile(const Array& x, const std::vector<int64_t>& reps);
// repeats: one count for every element (axis none: of the flattened array) or one per element.
Array repeat(const Array& x, int64_t repeats, std::optional<int64_t> axis = std::nullopt);
Array repeat(const Array& x, const std::vector<int64_t>& repeats,
             std::optional<int64_t> axis = std::nullopt);
Array flip(const Array& x, std::optional<std::vector<int64_t>> axis = std::nullopt);
Array flip(const Array& x, int64_t axis);
Array fliplr(const Array& x);
Array flipud(const Array& x);
Array roll(const Array& x, int64_t shift, std::optional<int64_t> axis = std::nullopt);
Array roll(const Array& x, const std::vector<int64_t>& shift, const std::vector<int64_t>& axis);
Array rot90(const Array& x, int64_t k = 1, std::pair<int64_t, int64_t> axes = {0, 1});

// ---- padding ----
// pad_width: one (before, after) pair per axis, or one pair for all axes.
// mode: "constant" (constant_values), "edge", "reflect", "symmetric", "wrap", "linear_ramp"
// (end_values), "maximum", "minimum", "mean", "median" (stat_length), "empty" (zeros).
// NumPy's per-side arguments: constant_values, end_values and stat_length may differ per axis
// and side — one (before, after) pair per axis, or one pair for all axes; they override the
// single constant_value / end_value when not empty. stat_length: maximum/minimum/mean over at
// most that many values at each end of the axis (default: the whole axis).
using PadWidth = std::vector<std::pair<int64_t, int64_t>>;
using PadValues = std::vector<std::pair<double, double>>;
struct PadOptions {
  std::string mode = "constant";
  double constant_value = 0.0;
  double end_value = 0.0;
  std::string reflect_type = "even";  // "odd" for reflect/symmetric's odd extension
  PadValues constant_values = {};
  PadValues end_values = {};
  std::optional<PadWidth> stat_length = std::nullopt;
};
Array pad(const Array& x, const PadWidth& pad_width, const PadOptions& options = {});
Array pad(const Array& x, int64_t pad_width, const PadOptions& options = {});

// ---- diagonals and triangles ----
Array diagonal(const Array& x, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
Array diag(const Array& v, int64_t k = 0);  // 1-d -> matrix, 2-d -> its diagonal
Array trace(const Array& x, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1,
            std::optional<DType> dtype = std::nullopt);
Array tril(const Array& x, int64_t k = 0);
Array triu(const Array& x, int64_t k = 0);
Array tri(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType dtype = DType::kFloat32);
// indexing: "xy" (Cartesian, the default) or "ij" (matrix); sparse keeps size-1 axes.
std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing = "xy",
                            bool sparse = false);

// ---- products ----
Array tensordot(const Array& a, const Array& b, int64_t axes = 2);
Array tensordot(const Array& a, const Array& b, const std::vector<int64_t>& a_axes,
                const std::vector<int64_t>& b_axes);
Array outer(const Array& a, const Array& b);
Array inner(const Array& a, const Array& b);
Array vdot(const Array& a, const Array& b);
Array kron(const Array& a, const Array& b);
// einsum("bhqd,bhkd->bhqk", {q, k}): explicit or implicit output, '...' ellipses, repeated
// indices (diagonals), sums over indices of one operand; operands are contracted pairwise in a
// greedy order (smallest intermediate first), each pair one dot_general.
Array einsum(const std::string& subscripts, const std::vector<Array>& operands,
             std::optional<DType> preferred_element_type = std::nullopt);

}  // namespace tessera::numpy
