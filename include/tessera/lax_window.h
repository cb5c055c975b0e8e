// tessera::lax windowed reductions (jax.lax.reduce_window and its monoid forms) and the
// selection primitives behind max/min pooling gradients. Rules in src/prims/reduce_window.cpp
// and src/prims/select_and_scatter.cpp; semantics as XLA's ReduceWindow: the operand is dilated
// by base_dilation (holes between elements), padded (lo, hi), and a window of window_dimensions
// elements spaced window_dilation apart slides with window_strides. Padding and holes hold the
// init value (the reducer's identity for the monoid forms). Empty window_strides, base_dilation
// and window_dilation mean all ones.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/array.h"
#include "tessera/lax_padding.h"

namespace tessera::lax {

using Pads = std::vector<std::pair<int64_t, int64_t>>;
// (accumulators..., values...) -> accumulators..., on rank-0 values (lax::ReduceComputation's
// type).
using WindowComputation =
    std::function<std::vector<Array>(const std::vector<Array>&, const std::vector<Array>&)>;

// A padding argument: explicit (lo, hi) pairs, a PaddingType, or its name ("VALID", "SAME",
// "SAME_LOWER", any case). Strings and types resolve as jax.lax.reduce_window does: through
// padtype_to_pads on the operand's shape and the window dilated by window_dilation.
class WindowPadding {
 public:
  WindowPadding(Pads pairs) : v_(std::move(pairs)) {}
  WindowPadding(std::initializer_list<std::pair<int64_t, int64_t>> pairs) : v_(Pads(pairs)) {}
  WindowPadding(PaddingType type) : v_(type) {}
  WindowPadding(const char* name) : v_(parse_padding_type(name)) {}
  WindowPadding(const std::string& name) : v_(parse_padding_type(name)) {}
  Pads resolve(const Shape& in, const std::vector<int64_t>& window_dimensions,
               const std::vector<int64_t>& window_strides,
               const std::vector<int64_t>& window_dilation) const;

 private:
  std::variant<Pads, PaddingType> v_;
};

// The monoid windowed reductions: sum (number dtypes; integers wrap, 16-bit floats accumulate
// in float32), max and min (any dtype; NaN propagates).
Array reduce_window_sum(const Array& x, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides = {},
                        const WindowPadding& padding = PaddingType::kValid,
                        const std::vector<int64_t>& base_dilation = {},
                        const std::vector<int64_t>& window_dilation = {});
Array reduce_window_max(const Array& x, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides = {},
                        const WindowPadding& padding = PaddingType::kValid,
                        const std::vector<int64_t>& base_dilation = {},
                        const std::vector<int64_t>& window_dilation = {});
Array reduce_window_min(const Array& x, const std::vector<int64_t>& window_dimensions,
                        const std::vector<int64_t>& window_strides = {},
                        const WindowPadding& padding = PaddingType::kValid,
                        const std::vector<int64_t>& base_dilation = {},
                        const std::vector<int64_t>& window_dilation = {});

// lax.reduce_window: operands of one shape, one rank-0 init value each, and a computation
// (accumulators..., values...) -> accumulators... traced once on rank-0 values. With one operand,
// add/max/min and the identity as init value bind the monoid primitive (as JAX's
// _get_monoid_window_reducer) unless detect_monoid is false; otherwise the generic
// reduce_window primitive.
std::vector<Array> reduce_window(const std::vector<Array>& operands,
                                 const std::vector<Array>& init_values,
                                 const WindowComputation& computation,
                                 const std::vector<int64_t>& window_dimensions,
                                 const std::vector<int64_t>& window_strides = {},
                                 const WindowPadding& padding = PaddingType::kValid,
                                 const std::vector<int64_t>& base_dilation = {},
                                 const std::vector<int64_t>& window_dilation = {},
                                 bool detect_monoid = true);
Array reduce_window(const Array& operand, const Array& init_value,
                    const std::function<Array(const Array&, const Array&)>& computation,
                    const std::vector<int64_t>& window_dimensions,
                    const std::vector<int64_t>& window_strides = {},
                    const WindowPadding& padding = PaddingType::kValid,
                    const std::vector<int64_t>& base_dilation = {},
                    const std::vector<int64_t>& window_dilation = {});

// The selection primitives (JAX's internal _select_and_gather_add / _select_and_scatter_add),
// floating dtypes: select_ge true selects the max of each window (select_prim ge), false the min
// (le); ties go to the first element in window order, padding counts as -inf / +inf.
// select_and_gather_add: the tangent at each window's selected operand element (shape of the
// window output). select_and_scatter_add: each source element added at the operand position its
// window selects (operand's shape; no dilations).
Array select_and_gather_add(const Array& tangents, const Array& operand, bool select_ge,
                            const std::vector<int64_t>& window_dimensions,
                            const std::vector<int64_t>& window_strides, const Pads& padding,
                            const std::vector<int64_t>& base_dilation = {},
                            const std::vector<int64_t>& window_dilation = {});
Array select_and_scatter_add(const Array& source, const Array& operand, bool select_ge,
                             const std::vector<int64_t>& window_dimensions,
                             const std::vector<int64_t>& window_strides, const Pads& padding);

}  // namespace tessera::lax
