// jax.random: counter-based random numbers from explicit keys, with JAX's algorithms and JAX's
// exact bits (src/api/random.cpp; the threefry2x32 primitive is src/prims/random_bits.cpp).
//
//   Array key = tessera::random::key(0);                 // a typed key<fry> scalar
//   auto keys = tessera::random::split(key);             // key<fry>[2]
//   Array x = tessera::random::normal(index(keys, 0), {3, 4});
//
// Keys are either typed (dtype key<fry>, as random::key makes them) or raw (uint32[2], as
// random::PRNGKey makes them); every function accepts both, and split/fold_in return keys of the
// kind they were given. The bits follow jax_threefry_partitionable (tessera/config.h; True by
// default, as JAX since 0.5.0): True derives each output word from one Threefry block over the
// (hi, lo) words of the element's flat index; False is JAX's older scheme (the counter array
// split in halves). `split`, `fold_in`, `bits`, `uniform`, `randint`, `bernoulli`,
// `permutation`, `choice` are bit-exact with JAX by construction; `normal` and what builds on it
// use Tessera's erf_inv (see random.cpp for its distance to XLA's float32 polynomial).
//
// Functions that draw take a single key (a key array of shape () or a raw uint32[2]); for many
// keys, vmap over them. Errors are JAX's: TypeError for bad keys, seeds and dtypes, ValueError
// for shapes that do not broadcast to `shape`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "tessera/array.h"
#include "tessera/numpy.h"

namespace tessera::random {

using numpy::ArrayLike;

// ---- keys ----
// A raw key uint32[2] from an integer seed (JAX's threefry_seed): a 64-bit seed gives its high
// and low words; 32-bit and narrower seeds give (0, the seed's bits). A C++ int64 seed is a
// Python int: an int64 with x64, else wrapped to int32 (JAX's x32 behavior).
Array PRNGKey(int64_t seed);
Array PRNGKey(const Array& seed);  // an integer scalar (traced values allowed)
// A typed key<fry> scalar from a seed (jax.random.key).
Array key(int64_t seed);
Array key(const Array& seed);
// The uint32[..., 2] words of typed keys (raw keys are returned as they are).
Array key_data(const Array& keys);
// Typed keys over uint32[..., 2] words; impl must be "threefry2x32" (the only one Tessera has).
Array wrap_key_data(const Array& key_bits, const std::string& impl = "threefry2x32");
// "threefry2x32" for typed or raw keys (jax.random.key_impl's name).
std::string key_impl(const Array& keys);
// JAX's clone: a key equal to `key` (a no-op here: Tessera has no key-reuse checker).
Array clone(const Array& key);

// `num` new keys (shape (num,)), or a key array of `shape`.
Array split(const Array& key, int64_t num = 2);
Array split(const Array& key, const Shape& shape);
// A new key from a key and 32-bit data (data is converted to uint32 as JAX does).
Array fold_in(const Array& key, const ArrayLike& data);

// Random bits of an unsigned dtype: uint8/16/32/64 (uint64 becomes uint32 unless x64, as JAX's
// canonicalization); default uint32.
Array bits(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);

// The Threefry-2x32 hash of a uint32 count array under a raw key uint32[2] (jax.prng's
// threefry_2x32: the flat counts split in halves, padded with a zero when odd).
Array threefry_2x32(const Array& keypair, const Array& count);

// ---- distributions (dtype defaults: float32, int32; 64-bit with x64) ----
// Uniform in [minval, maxval): 23 (10, 7, 52) mantissa bits under exponent 0, minus one,
// scaled, and clamped below at minval (JAX's algorithm).
Array uniform(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt,
              const ArrayLike& minval = 0.0, const ArrayLike& maxval = 1.0);
// sqrt(2) * erf_inv(u), u uniform in (nextafter(-1, 0), 1).
Array normal(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);
// Standard normal truncated to (lower, upper); shape defaults to the bounds' broadcast shape.
Array truncated_normal(const Array& key, const ArrayLike& lower, const ArrayLike& upper,
                       std::optional<Shape> shape = std::nullopt,
                       std::optional<DType> dtype = std::nullopt);
// bool: uniform(p.dtype) < p; shape defaults to p's shape.
Array bernoulli(const Array& key, const ArrayLike& p = 0.5,
                std::optional<Shape> shape = std::nullopt);
// Integers in [minval, maxval) from two draws of the dtype's width (JAX's algorithm; minval when
// maxval <= minval; maxval beyond the dtype's range reaches its maximum).
Array randint(const Array& key, const Shape& shape, const ArrayLike& minval,
              const ArrayLike& maxval, std::optional<DType> dtype = std::nullopt);
// Samples of softmax(logits) along axis (the Gumbel-max trick), int32 (int64 with x64).
Array categorical(const Array& key, const Array& logits, int64_t axis = -1,
                  std::optional<Shape> shape = std::nullopt);
Array gumbel(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);
Array exponential(const Array& key, const Shape& shape = {},
                  std::optional<DType> dtype = std::nullopt);
Array laplace(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);
Array logistic(const Array& key, const Shape& shape = {},
               std::optional<DType> dtype = std::nullopt);
Array cauchy(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);
// -1 or +1 with probability 1/2 each, of an integer (default) or float dtype.
Array rademacher(const Array& key, const Shape& shape = {},
                 std::optional<DType> dtype = std::nullopt);
Array rayleigh(const Array& key, const ArrayLike& scale, std::optional<Shape> shape = std::nullopt,
               std::optional<DType> dtype = std::nullopt);
Array weibull_min(const Array& key, const ArrayLike& scale, const ArrayLike& concentration,
                  const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);

// A random permutation of arange(n), or of x along axis (the same permutation for every slice
// unless `independent`): JAX's repeated sorts by random 32-bit keys.
Array permutation(const Array& key, int64_t n);
Array permutation(const Array& key, const Array& x, int64_t axis = 0, bool independent = false);
// Draws from arange(n) or from x's slices along axis: uniform with replacement (randint),
// without (a permutation's prefix), or weighted by p (inverse CDF with replacement, Gumbel
// top-k without).
Array choice(const Array& key, int64_t n, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt);
Array choice(const Array& key, const Array& a, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt, int64_t axis = 0);

}  // namespace tessera::random

// The distributions built on gamma, rejection loops and linear algebra.
#include "tessera/random_dists.h"  // IWYU pragma: export
