// tessera::nn — jax.nn's activations and normalizing functions (src/api/nn_activations.cpp,
// src/api/nn_softmax.cpp): composites of jnp/lax ops, so jit, vmap and grad work through them.
//
//   namespace tnn = tessera::nn;
//   Array h = tnn::gelu(x);                      // approximate=true (the tanh form), as JAX
//   Array p = tnn::softmax(logits, -1, mask);    // where=mask: masked entries give 0
//   Array lse = tnn::logsumexp(a, {.axis = 1, .keepdims = true});
//
// Derivatives are JAX's: relu and relu6 have custom JVPs (the gradient is 0 at the kinks: at 0
// for relu, at 0 and 6 for relu6, hence also at ±3 for hard_sigmoid/hard_silu); softmax has
// JAX's custom JVP y * (t - sum(y * t)); logsumexp has JAX's custom JVP (the max is subtracted
// and stopped); log_softmax differentiates through a stopped max. Everything else is plain
// autodiff of its composition. Where JAX gives NaN or inf (a +inf entry in softmax, an all
// -inf row in log_softmax), so does Tessera.
//
// dtypes follow JAX's compositions: float inputs keep their dtype (16-bit floats are computed
// by the jnp ops each function is built from, as JAX's are); integer inputs keep their dtype
// where JAX's composition does (relu, hard_tanh, identity) and are promoted to the default
// float otherwise (jnp's promote_args_inexact). Unlike jax.nn.sigmoid (lax.logistic, which
// rejects integers), sigmoid, silu and glu promote integers too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "tessera/array.h"
#include "tessera/numpy.h"
#include "tessera/numpy_reductions.h"

namespace tessera::nn {

using numpy::ArrayLike;
using numpy::AxisArg;

// ---- activations (elementwise; src/api/nn_activations.cpp) ----
// max(x, 0); integers keep their dtype. d/dx at 0 is 0.
Array relu(const ArrayLike& x);
// min(max(x, 0), 6); d/dx at 0 and at 6 is 0.
Array relu6(const ArrayLike& x);
// x * Phi(x): approximate=true uses 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), false the
// exact 0.5 erfc(-x / sqrt(2)).
Array gelu(const ArrayLike& x, bool approximate = true);
Array sigmoid(const ArrayLike& x);      // 1 / (1 + e^-x) (lax.logistic)
Array silu(const ArrayLike& x);         // x * sigmoid(x)
Array swish(const ArrayLike& x);        // = silu
Array log_sigmoid(const ArrayLike& x);  // -softplus(-x)
Array softplus(const ArrayLike& x);     // log(1 + e^x) = logaddexp(x, 0)
Array soft_sign(const ArrayLike& x);    // x / (|x| + 1)
// x > 0: x; else alpha (e^x - 1).
Array elu(const ArrayLike& x, const ArrayLike& alpha = 1.0);
// max(x, 0) + alpha expm1(min(x, 0) / alpha).
Array celu(const ArrayLike& x, const ArrayLike& alpha = 1.0);
// scale * elu(x, alpha) with the self-normalizing constants.
Array selu(const ArrayLike& x);
// x >= 0: x; else negative_slope x.
Array leaky_relu(const ArrayLike& x, const ArrayLike& negative_slope = 0.01);
Array hard_tanh(const ArrayLike& x);     // clamp to [-1, 1]; integers keep their dtype
Array hard_sigmoid(const ArrayLike& x);  // relu6(x + 3) / 6
Array hard_silu(const ArrayLike& x);     // x * hard_sigmoid(x)
Array hard_swish(const ArrayLike& x);    // = hard_silu
// (x + sqrt(x^2 + b)) / 2.
Array squareplus(const ArrayLike& x, const ArrayLike& b = 4);
Array mish(const ArrayLike& x);            // x * tanh(softplus(x))
Array sparse_plus(const ArrayLike& x);     // 0 | (x + 1)^2 / 4 | x, pieces at -1 and 1
Array sparse_sigmoid(const ArrayLike& x);  // clip((x + 1) / 2, 0, 1)
Array tanh(const ArrayLike& x);            // jnp.tanh (jax.nn re-exports it)
Array identity(const ArrayLike& x);        // x itself (as an Array)
// Splits x in two halves along axis and returns first * sigmoid(second); ValueError when the
// axis length is odd.
Array glu(const ArrayLike& x, int64_t axis = -1);

// ---- normalizing functions (src/api/nn_softmax.cpp) ----
// axis: one int, a list of ints, or none (every axis). where: a mask broadcastable to x's
// shape; masked-out entries are excluded from the reductions, and give 0 (softmax) or -inf
// (log_softmax). A +inf entry makes its slice NaN; a fully masked slice gives 0 / -inf.
Array softmax(const ArrayLike& x, const AxisArg& axis = -1,
              const std::optional<ArrayLike>& where = std::nullopt);
Array log_softmax(const ArrayLike& x, const AxisArg& axis = -1,
                  const std::optional<ArrayLike>& where = std::nullopt);

// jax.nn.logsumexp (= jax.scipy.special.logsumexp)'s keywords; axis none reduces every axis.
struct LogsumexpOptions {
  AxisArg axis{};                    // none = all axes
  std::optional<ArrayLike> b{};      // scale factors broadcastable to a's shape
  bool keepdims = false;             // keep reduced axes as size 1
  std::optional<ArrayLike> where{};  // elements to include
};
// log(sum(b * exp(a))), computed stably (the finite max subtracted). With b, a negative sum
// gives NaN (use logsumexp_with_sign). An all -inf (or empty, or fully masked) slice gives
// -inf; a +inf entry gives +inf.
Array logsumexp(const ArrayLike& a, const LogsumexpOptions& o = {});
// return_sign=True: (log|sum(b * exp(a))|, sign of the sum).
std::pair<Array, Array> logsumexp_with_sign(const ArrayLike& a, const LogsumexpOptions& o = {});

// (x - mean) * rsqrt(variance + epsilon); mean defaults to mean(x) over axis and variance to
// mean(x^2) - mean^2 (JAX's formula), both over the `where` entries when a mask is given.
Array standardize(const ArrayLike& x, const AxisArg& axis = -1,
                  const std::optional<ArrayLike>& mean = std::nullopt,
                  const std::optional<ArrayLike>& variance = std::nullopt,
                  const ArrayLike& epsilon = 1e-5,
                  const std::optional<ArrayLike>& where = std::nullopt);

// One-hot encoding along a new axis (negative: counted in the result's rank) of num_classes
// entries: out[..., k, ...] = (x == k). Labels outside [0, num_classes) give all-zero rows.
// dtype defaults to the default float (float32; float64 with x64).
Array one_hot(const ArrayLike& x, int64_t num_classes, std::optional<DType> dtype = std::nullopt,
              int64_t axis = -1);

// jax.nn.dot_product_attention's keywords.
struct AttentionOptions {
  std::optional<ArrayLike> bias{};  // broadcastable to [B, N, T, S] (fewer dims: leading 1s)
  std::optional<ArrayLike> mask{};  // bool, broadcastable to [B, N, T, S]: false = masked out
  std::optional<double> scale{};    // none: 1 / sqrt(H)
  bool is_causal = false;           // query t attends to keys s <= t
  std::optional<ArrayLike> query_seq_lengths{};      // int32 [B]: valid queries per batch row
  std::optional<ArrayLike> key_value_seq_lengths{};  // int32 [B]: valid keys per batch row
  // (left, right): query t attends to keys in [t - left, t + right].
  std::optional<std::pair<int64_t, int64_t>> local_window_size{};
  std::string implementation{};  // "" (None) or "xla"; "cudnn" needs a GPU
};

// Scaled dot-product attention, JAX's XLA formulation: query [B, T, N, H] (or [T, N, H]), key
// and value [B, S, K, H] with N a multiple of K (grouped-query attention: query head n uses key
// head n / (N / K)); logits in float32 (or wider), masked entries set to -0.7 * the dtype's max,
// softmax in float32, probabilities cast to the key's dtype, then weighted values:
// [B, T, N, H]. With both sequence lengths given, query rows past their length are zero.
Array dot_product_attention(const ArrayLike& query, const ArrayLike& key, const ArrayLike& value,
                            const AttentionOptions& options = {});

}  // namespace tessera::nn
