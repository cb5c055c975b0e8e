// tessera::nn::initializers — jax.nn.initializers (src/api/nn_initializers.cpp): functions that
// make parameter arrays from a key, a shape and a dtype.
//
//   namespace init = tessera::nn::initializers;
//   init::Initializer w_init = init::glorot_uniform();        // in_axis -2, out_axis -1
//   Array w = w_init(key, {784, 256});                          // float32 (float64 with x64)
//   Array k = init::he_normal(/*in_axis=*/{0, 1}, 3)(key, {3, 3, 64, 128}, DType::kBFloat16);
//
// Each one is JAX's composition of jax.random and jnp arithmetic, step by step in the dtype
// asked for, so the values are JAX's for the same key (bit-exact where tessera::random is, i.e.
// uniform; normal and truncated_normal within its few ulps) and jit, vmap (over keys) and grad
// see ordinary primitives. variance_scaling computes the fans in double as JAX does in Python:
// receptive = size / in_size / out_size / batch_size, fan_in = in_size * receptive,
// fan_out = out_size * receptive (the axes not named are the receptive field).
//
// dtypes: a missing dtype is the factory's, whose default is JAX's jnp.float_ — float64,
// canonicalized to float32 unless x64 is on; every dtype is canonicalized at call time (an
// explicit float64 gives float32 without x64, as JAX's dtypes.canonicalize_dtype). The random
// initializers need a float dtype (the ValueError of the jax.random function they call);
// zeros/ones/constant take any dtype. Tessera has no complex dtypes, so JAX's complex branches
// of variance_scaling do not exist here; delta_orthogonal is not implemented yet.
//
// Errors are JAX's and are raised when an initializer is called, not when it is built (a bad
// mode or distribution of variance_scaling is a ValueError at the call, as in JAX): rank < 2
// for the fan-based ones is "Can't compute input and output sizes of a 1-dimensional weights
// tensor. Must be at least 2D." (ValueError); an axis outside the shape is IndexError. Where
// JAX's Python division would raise ZeroDivisionError (a fan-based initializer on a shape with
// a zero-size dimension), Tessera raises ValueError.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array.h"
#include "tessera/numpy.h"

namespace tessera::nn::initializers {

using numpy::ArrayLike;

// An initializer: init(key, shape) or init(key, shape, dtype) -> an Array of `shape`.
// Wraps Fn with the dtype used when a call gives none (the factory's `dtype`; none = the default
// float). Fn always receives a canonical dtype. Any callable Fn makes one:
//   Initializer mine = [](const Array& key, const Shape& s, DType d) { ... };
class Initializer {
 public:
  using Fn = std::function<Array(const Array& key, const Shape& shape, DType dtype)>;

  Initializer() = default;
  Initializer(Fn fn, std::optional<DType> dtype = std::nullopt)  // NOLINT: implicit by design
      : fn_(std::move(fn)), dtype_(dtype) {}

  // `dtype` (or this initializer's default) canonicalized, then Fn. ValueError when empty.
  Array operator()(const Array& key, const Shape& shape,
                   std::optional<DType> dtype = std::nullopt) const;
  // The default dtype as given to the factory (none: the default float at call time).
  std::optional<DType> dtype() const { return dtype_; }
  explicit operator bool() const { return static_cast<bool>(fn_); }

 private:
  Fn fn_;
  std::optional<DType> dtype_;
};

// An axis or a sequence of axes (JAX's int | Sequence[int]); negative axes count from the end,
// and a sequence stands for the product of its axes' sizes (a repeated axis counts twice).
struct Axes {
  Axes() = default;
  Axes(int64_t axis) : axes{axis} {}  // NOLINT: implicit, as JAX's int argument
  Axes(std::initializer_list<int64_t> a) : axes(a) {}
  Axes(std::vector<int64_t> a) : axes(std::move(a)) {}  // NOLINT
  std::vector<int64_t> axes;
};

// ---- constant initializers (the key is ignored) ----
Array zeros(const Array& key, const Shape& shape, std::optional<DType> dtype = std::nullopt);
Array ones(const Array& key, const Shape& shape, std::optional<DType> dtype = std::nullopt);
// jnp.full(shape, value, dtype): value (broadcast to shape) converted to the dtype.
Initializer constant(const ArrayLike& value, std::optional<DType> dtype = std::nullopt);

// ---- distributions ----
// uniform(key, shape, dtype) * scale: values in [0, scale).
Initializer uniform(const ArrayLike& scale = 1e-2, std::optional<DType> dtype = std::nullopt);
// normal(key, shape, dtype) * stddev.
Initializer normal(const ArrayLike& stddev = 1e-2, std::optional<DType> dtype = std::nullopt);
// truncated_normal(key, lower, upper, shape, dtype) * stddev: the bounds apply before the
// scaling, and stddev is that of the untruncated normal (no correction, as JAX).
Initializer truncated_normal(const ArrayLike& stddev = 1e-2,
                             std::optional<DType> dtype = std::nullopt,
                             const ArrayLike& lower = -2.0, const ArrayLike& upper = 2.0);

// ---- variance scaling ----
// JAX's _compute_fans: (fan_in, fan_out) of a weights shape of rank >= 2.
std::pair<double, double> compute_fans(const Shape& shape, const Axes& in_axis = -2,
                                       const Axes& out_axis = -1, const Axes& batch_axis = {});

// Samples of variance scale / n, n by mode: "fan_in", "fan_out", "fan_avg" ((in + out) / 2) or
// "fan_geo_avg" (sqrt(in * out)). distribution:
//  * "truncated_normal": truncated_normal(key, -2, 2) * sqrt(variance) / .87962566103423978
//    (the standard deviation of a standard normal truncated to (-2, 2));
//  * "normal": normal(key) * sqrt(variance);
//  * "uniform": uniform(key, minval=-1, maxval=1) * sqrt(3 * variance).
// `variance` is scale / n rounded to the dtype, and the arithmetic is in the dtype (JAX's).
Initializer variance_scaling(double scale, const std::string& mode, const std::string& distribution,
                             const Axes& in_axis = -2, const Axes& out_axis = -1,
                             const Axes& batch_axis = {},
                             std::optional<DType> dtype = std::nullopt);

// The named specializations of variance_scaling (scale, mode, distribution):
//   glorot_uniform (1, fan_avg, uniform)    glorot_normal (1, fan_avg, truncated_normal)
//   lecun_uniform  (1, fan_in, uniform)     lecun_normal  (1, fan_in, truncated_normal)
//   he_uniform     (2, fan_in, uniform)     he_normal     (2, fan_in, truncated_normal)
Initializer glorot_uniform(const Axes& in_axis = -2, const Axes& out_axis = -1,
                           const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer glorot_normal(const Axes& in_axis = -2, const Axes& out_axis = -1,
                          const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer lecun_uniform(const Axes& in_axis = -2, const Axes& out_axis = -1,
                          const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer lecun_normal(const Axes& in_axis = -2, const Axes& out_axis = -1,
                         const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer he_uniform(const Axes& in_axis = -2, const Axes& out_axis = -1,
                       const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer he_normal(const Axes& in_axis = -2, const Axes& out_axis = -1,
                      const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
// JAX's aliases.
Initializer xavier_uniform(const Axes& in_axis = -2, const Axes& out_axis = -1,
                           const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer xavier_normal(const Axes& in_axis = -2, const Axes& out_axis = -1,
                          const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer kaiming_uniform(const Axes& in_axis = -2, const Axes& out_axis = -1,
                            const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);
Initializer kaiming_normal(const Axes& in_axis = -2, const Axes& out_axis = -1,
                           const Axes& batch_axis = {}, std::optional<DType> dtype = std::nullopt);

// ---- orthogonal ----
// JAX's orthogonal: a (rows, cols) standard normal matrix (rows = the product of the other
// dims, cols = shape[column_axis]; transposed when rows < cols), its reduced QR with Q's columns
// sign-corrected by sign(diag(R)) (so Q is Haar-distributed), reshaped to shape with the columns
// on column_axis, times scale. ValueError for rank < 2.
Initializer orthogonal(const ArrayLike& scale = 1.0, int64_t column_axis = -1,
                       std::optional<DType> dtype = std::nullopt);

}  // namespace tessera::nn::initializers
