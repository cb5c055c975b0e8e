// jax.random as composites of the threefry2x32 primitive, the key casts random_wrap/unwrap and
// lax/numpy ops (random.h). The algorithms are JAX's (jax/_src/prng.py, jax/_src/random.py),
// step by step, so that the bits are JAX's and every transformation reaches them through the
// primitives' rules: vmap over keys batches threefry2x32, jit stages it, grad flows through the
// float arithmetic of reparameterized samples.
//
// Internally a key is its data, uint32[2]; typed keys are unwrapped on entry and split/fold_in
// wrap their results again. The counter layouts (jax_threefry_partitionable):
//  * True: an output of `shape` hashes, at each element, the 64-bit flat index as the counter
//    words (hi, lo); 32-bit bits are y0 ^ y1, 64-bit ones y0 << 32 | y1, 8/16-bit ones the low
//    bits of y0 ^ y1; split hashes the index of each new key and takes (y0, y1) as its words.
//  * False: threefry_2x32(key, iota(n)) splits the n counters in halves (x0 = first half,
//    x1 = second; a zero pads odd n) and concatenates (y0, y1); bits take ceil(bits * size / 32)
//    words (64-bit: the first half high words, the second low; 8/16-bit: each word's pieces from
//    its low bits up); split(num) takes 2 * num words as num key pairs.
// fold_in(key, d) is threefry_2x32(key, (0, d)) under both settings.
//
// normal uses lax.erf_inv (Tessera's float32 kernel: float64 Halley refinement rounded once,
// so within 1 ulp of the true inverse) where XLA uses Giles' single-precision polynomial; the
// two differ by a few float32 ulps on the sampled domain (test_random.cpp measures the bound).
#include "tessera/random.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/config.h"
#include "tessera/errors.h"
#include "tessera/jit.h"
#include "tessera/lax.h"
#include "tessera/lax_sort.h"
#include "tessera/numpy.h"
#include "tessera/numpy_cumulative.h"
#include "tessera/numpy_indexing.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/primitive.h"

namespace tessera::random {

namespace {

namespace np = tessera::numpy;

constexpr const char* kImpl = "threefry2x32";

const Primitive& prim(const char* name) {
  const Primitive* p = find_primitive(name);
  if (!p) throw InternalError(std::string("internal error in api/random: no primitive ") + name);
  return *p;
}

bool partitionable() { return config::threefry_partitionable(); }

// A rank-0 constant of integer dtype d holding v exactly (v in d's range).
Array iconst(__int128 v, DType d) {
  unsigned char buf[8] = {};
  switch (d) {
#define TESSERA_RANDOM_ICONST(D, T) \
  case D: {                         \
    const T t = static_cast<T>(v);  \
    std::memcpy(buf, &t, sizeof t); \
    break;                          \
  }
    TESSERA_RANDOM_ICONST(DType::kInt8, int8_t)
    TESSERA_RANDOM_ICONST(DType::kInt16, int16_t)
    TESSERA_RANDOM_ICONST(DType::kInt32, int32_t)
    TESSERA_RANDOM_ICONST(DType::kInt64, int64_t)
    TESSERA_RANDOM_ICONST(DType::kUInt8, uint8_t)
    TESSERA_RANDOM_ICONST(DType::kUInt16, uint16_t)
    TESSERA_RANDOM_ICONST(DType::kUInt32, uint32_t)
    TESSERA_RANDOM_ICONST(DType::kUInt64, uint64_t)
#undef TESSERA_RANDOM_ICONST
    default:
      throw InternalError("internal error in api/random: iconst of " + std::string(dtype_name(d)));
  }
  return array_from_host(Aval{{}, d, false}, buf);
}
Array u32(uint32_t v) { return iconst(v, DType::kUInt32); }
Array fconst(double v, DType d) { return np::scalar(v, d); }

DType uint_of_bits(int bits) {
  switch (bits) {
    case 8:
      return DType::kUInt8;
    case 16:
      return DType::kUInt16;
    case 32:
      return DType::kUInt32;
    default:
      return DType::kUInt64;
  }
}

std::string py_shape(const Shape& s) { return shape_str(s); }

// ---- keys in and out ----

// The data uint32[2] of a single key (typed key<fry>[] or raw uint32[2]); JAX's errors.
struct KeyIn {
  Array data;
  bool typed = false;
};

void check_key_data(const Array& d) {
  if (d.ndim() < 1)
    throw TypeError(
        "JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim=0");
  if (d.shape().back() != 2)
    throw TypeError(
        "JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got "
        "shape=" +
        py_shape(d.shape()) + " for impl=PRNGImpl[fry]");
  if (d.dtype() != DType::kUInt32)
    throw TypeError(
        "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype=" +
        std::string(dtype_name(d.dtype())));
}

KeyIn single_key(const char* op, const Array& key) {
  if (!key.defined()) throw TypeError(std::string(op) + ": the key is an undefined Array");
  KeyIn k;
  Shape key_shape;
  if (key.dtype() == DType::kKeyThreefry) {
    key_shape = key.shape();
    k.typed = true;
  } else {
    check_key_data(key);
    key_shape = Shape(key.shape().begin(), key.shape().end() - 1);
  }
  if (!key_shape.empty())
    throw TypeError(std::string(op) + " accepts a single key, but was given a key array of shape " +
                    py_shape(key_shape) + " != (). Use jax.vmap for batching.");
  k.data = k.typed ? bind1(prim("random_unwrap"), {key}) : key;
  return k;
}

Array wrap(const Array& data) { return bind1(prim("random_wrap"), {data}); }
Array out_keys(const KeyIn& k, const Array& data) { return k.typed ? wrap(data) : data; }

// The two words of key data uint32[2], rank 0.
std::pair<Array, Array> words(const Array& data) {
  return {lax::index_in_dim(data, 0, 0, false), lax::index_in_dim(data, 1, 0, false)};
}

std::pair<Array, Array> hash(const Array& k0, const Array& k1, const Array& x0, const Array& x1) {
  std::vector<Array> y = bind(prim("threefry2x32"), {k0, k1, x0, x1});
  return {y[0], y[1]};
}

// JAX's iota_2x32_shape: the (hi, lo) words of each element's flat index (hi rank 0: sizes up
// to 2^32 elements).
std::pair<Array, Array> counts_2x32(const char* op, const Shape& shape) {
  const int64_t n = shape_size(shape);
  if (n > (int64_t{1} << 32))
    throw ValueError(std::string(op) + ": random arrays of more than 2**32 elements (shape " +
                     py_shape(shape) + ") are not supported");
  Array lo = shape.empty() ? u32(0) : lax::reshape(lax::iota(DType::kUInt32, n), shape);
  return {u32(0), lo};
}

Array threefry_2x32_data(const Array& data, const Array& count) {
  auto [k0, k1] = words(data);
  const int64_t n = count.size();
  Array flat = lax::reshape(count, {n});
  const bool odd = n % 2 == 1;
  if (odd) flat = lax::concatenate({flat, lax::reshape(u32(0), {1})}, 0);
  const int64_t half = (n + 1) / 2;
  auto [y0, y1] =
      hash(k0, k1, lax::slice_in_dim(flat, 0, half), lax::slice_in_dim(flat, half, 2 * half));
  Array out = lax::concatenate({y0, y1}, 0);
  if (odd) out = lax::slice_in_dim(out, 0, n);
  return lax::reshape(out, count.shape());
}

// JAX's threefry_seed: (high word, low word) of the integer seed.
Array seed_data(const char* ctor, const Array& seed) {
  if (seed.dtype() == DType::kKeyThreefry)
    throw TypeError(std::string(ctor) + " accepts a scalar seed, but was given a PRNG key.");
  if (seed.ndim() != 0)
    throw TypeError(std::string(ctor) + " accepts a scalar seed, but was given an array of shape " +
                    py_shape(seed.shape()) + " != (). Use jax.vmap for batching");
  if (!is_integer(seed.dtype()))
    throw TypeError("PRNG key seed must be an integer; got " + seed.repr());
  // shift_right_logical by 32 is 0 for 32-bit and narrower seeds (XLA's shift rule).
  Array hi = lax::convert_element_type(lax::shift_right_logical(seed, iconst(32, seed.dtype())),
                                       DType::kUInt32);
  Array lo = lax::convert_element_type(seed, DType::kUInt32);  // wraps / sign-extends, as JAX
  return lax::concatenate({lax::reshape(hi, {1}), lax::reshape(lo, {1})}, 0);
}

// A C++ integer seed as JAX treats a Python int: int64 under x64, else wrapped to int32.
Array int_seed(int64_t seed) {
  if (x64_enabled()) return iconst(seed, DType::kInt64);
  return iconst(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(seed))),
                DType::kInt32);
}

Array split_data(const Array& data, const Shape& shape) {
  if (partitionable()) {
    auto [k0, k1] = words(data);
    auto [hi, lo] = counts_2x32("split", shape);
    auto [b0, b1] = hash(k0, k1, hi, lo);
    Shape s = shape;
    s.push_back(1);
    return lax::concatenate({lax::reshape(b0, s), lax::reshape(b1, s)},
                            static_cast<int64_t>(shape.size()));
  }
  const int64_t num = shape_size(shape);
  Shape s = shape;
  s.push_back(2);
  return lax::reshape(threefry_2x32_data(data, lax::iota(DType::kUInt32, 2 * num)), s);
}

Array fold_in_data(const Array& data, const Array& d32) {
  Array count = lax::concatenate({lax::reshape(u32(0), {1}), lax::reshape(d32, {1})}, 0);
  return threefry_2x32_data(data, count);
}

// JAX's _threefry_random_bits: uint<bit_width>[shape].
Array bits_data(const Array& data, int bit_width, const Shape& shape) {
  const DType out = uint_of_bits(bit_width);
  if (partitionable()) {
    auto [k0, k1] = words(data);
    auto [hi, lo] = counts_2x32("bits", shape);
    auto [b0, b1] = hash(k0, k1, hi, lo);
    if (bit_width == 64) {
      Array h = lax::convert_element_type(b0, out), l = lax::convert_element_type(b1, out);
      return lax::bitwise_or(lax::shift_left(h, iconst(32, out)), l);
    }
    Array x = lax::bitwise_xor(b0, b1);
    return bit_width == 32 ? x : lax::convert_element_type(x, out);
  }
  const int64_t size = shape_size(shape);
  const int64_t words_needed = (bit_width * size + 31) / 32;
  if (words_needed >= int64_t{0xFFFFFFFF})
    throw ValueError(
        "bits: random arrays of more than 2**32 - 1 words are not supported with "
        "jax_threefry_partitionable=False (shape " +
        py_shape(shape) + ")");
  Array bits = threefry_2x32_data(data, lax::iota(DType::kUInt32, words_needed));
  if (bit_width == 64) {
    Array h = lax::convert_element_type(lax::slice_in_dim(bits, 0, size), out);
    Array l = lax::convert_element_type(lax::slice_in_dim(bits, size, 2 * size), out);
    bits = lax::bitwise_or(lax::shift_left(h, iconst(32, out)), l);
  } else if (bit_width < 32) {
    // Each word's pieces from its low bits up: piece j of word w is element w * per + j.
    const int64_t per = 32 / bit_width;
    Array shifts = lax::mul(lax::broadcasted_iota(DType::kUInt32, {per, 1}, 0),
                            u32(static_cast<uint32_t>(bit_width)));
    Array pieces =
        lax::bitwise_and(lax::shift_right_logical(lax::reshape(bits, {1, words_needed}), shifts),
                         u32(static_cast<uint32_t>((uint64_t{1} << bit_width) - 1)));
    pieces = lax::reshape(lax::transpose(pieces, {1, 0}), {words_needed * per});
    bits = lax::slice_in_dim(lax::convert_element_type(pieces, out), 0, size);
  }
  return lax::reshape(bits, shape);
}

// JAX jits its random functions with the shape and dtype static: an eager draw runs as one cached
// executable (threefry, the bit twiddling and the transform fuse into one kernel instead of a
// dozen passes over memory), and under a transformation it is one `jit` equation, as in JAX's
// jaxprs. One cache per function and static configuration (`statics` names everything the body
// reads besides `args`: shapes, dtypes, the threefry flag); each keeps one program per argument
// signature, as jit does.
std::vector<Array> jitted(const std::string& name, const std::string& statics,
                          const std::vector<Array>& args, const flat::Fun& body) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<flat::JitCache>> caches;
  std::shared_ptr<flat::JitCache> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = caches[name + "|" + statics + "|" + (partitionable() ? "p" : "np")];
    if (!slot) {
      JitOptions o;
      o.name = name;
      slot = std::make_shared<flat::JitCache>(o);
    }
    cache = slot;
  }
  const TreeDef in = TreeDef::tuple(std::vector<TreeDef>(args.size(), TreeDef::leaf()));
  TreeDef out;
  return cache->call(in, args, body, out);
}

std::string statics_of(const Shape& shape, DType d, int64_t extra = 0) {
  return shape_str(shape) + std::string(dtype_name(d)) + "/" + std::to_string(extra);
}

// ---- distributions' shared checks ----

DType float_dtype(const char* op, std::optional<DType> dtype) {
  const DType d = canonicalize_dtype(dtype.value_or(default_float_dtype()));
  if (!is_floating(d))
    throw ValueError(std::string("dtype argument to `") + op + "` must be a float dtype, got " +
                     std::string(dtype_name(d)));
  return d;
}

// JAX's _check_shape: the parameters' shapes broadcast to exactly `shape`.
void check_shape(const char* op, const Shape& shape, std::initializer_list<Shape> params) {
  Shape r = shape;
  try {
    for (const Shape& p : params) r = np::broadcast_shapes(r, p, op);
  } catch (const ValueError&) {
    r = {};
  }
  if (r != shape)
    throw ValueError(std::string(op) +
                     " parameter shapes must be broadcast-compatible with shape argument, and "
                     "the result of broadcasting the shapes must equal the shape argument, but "
                     "got result " +
                     py_shape(r) + " for shape argument " + py_shape(shape) + ".");
}

// lax.broadcast_to_rank: leading size-1 dims up to rank.
Array to_rank(const Array& x, size_t rank) {
  if (x.ndim() >= static_cast<int64_t>(rank)) return x;
  Shape s(rank - static_cast<size_t>(x.ndim()), 1);
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return lax::reshape(x, s);
}

Array uniform_data(const Array& data, const Shape& shape, DType dtype, const Array& minv,
                   const Array& maxv) {
  Array lo = to_rank(lax::convert_element_type(minv, dtype), shape.size());
  Array hi = to_rank(lax::convert_element_type(maxv, dtype), shape.size());
  const FInfo fi = finfo(dtype);
  const int nbits = fi.bits, nmant = fi.nmant;
  const int rng_bits = nmant < 8 ? 8 : nbits;
  const DType ut = uint_of_bits(nbits);
  Array b = bits_data(data, rng_bits, shape);
  if (rng_bits != nbits) b = lax::convert_element_type(b, ut);
  const uint64_t one_bits = nbits == 16   ? (dtype == DType::kBFloat16 ? 0x3F80u : 0x3C00u)
                            : nbits == 32 ? uint64_t{0x3F800000}
                                          : uint64_t{0x3FF0000000000000};
  Array fb = lax::bitwise_or(lax::shift_right_logical(b, iconst(rng_bits - nmant, ut)),
                             iconst(static_cast<__int128>(one_bits), ut));
  Array floats = lax::sub(lax::bitcast_convert_type(fb, dtype), fconst(1.0, dtype));
  return lax::max(lo, lax::reshape(lax::add(lax::mul(floats, lax::sub(hi, lo)), lo), shape));
}

// JAX's _convert_and_clip_integer: val clipped to dtype's range (within its own), converted.
Array convert_and_clip(const Array& val, DType dtype) {
  const IInfo a = iinfo(dtype), b = iinfo(val.dtype());
  const __int128 lo = std::max<__int128>(a.min, b.min);
  const __int128 hi = std::min<__int128>(a.max, b.max);
  return lax::convert_element_type(
      lax::clamp(iconst(lo, val.dtype()), val, iconst(hi, val.dtype())), dtype);
}

Array shuffle_data(Array data, Array x, int64_t axis) {
  const double size = static_cast<double>(std::max<int64_t>(1, x.size()));
  const int rounds = static_cast<int>(std::ceil(3.0 * std::log(size) / std::log(4294967295.0)));
  for (int r = 0; r < rounds; ++r) {
    Array keys = split_data(data, {2});
    data = lax::index_in_dim(keys, 0, 0, false);
    Array sort_keys = bits_data(lax::index_in_dim(keys, 1, 0, false), 32, x.shape());
    x = lax::sort_key_val(sort_keys, x, axis).second;
  }
  return x;
}

int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ValueError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of bounds for array of dimension " + std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

}  // namespace

// ---------------------------------------------------------------- keys

Array PRNGKey(int64_t seed) { return seed_data("PRNGKey", int_seed(seed)); }
Array PRNGKey(const Array& seed) { return seed_data("PRNGKey", seed); }
Array key(int64_t seed) { return wrap(seed_data("key", int_seed(seed))); }
Array key(const Array& seed) { return wrap(seed_data("key", seed)); }

Array key_data(const Array& keys) {
  if (keys.dtype() == DType::kKeyThreefry) return bind1(prim("random_unwrap"), {keys});
  check_key_data(keys);
  return keys;
}

Array wrap_key_data(const Array& key_bits, const std::string& impl) {
  if (impl != kImpl && impl != "fry")
    throw ValueError("unrecognized PRNG implementation \"" + impl +
                     "\"; Tessera has threefry2x32 only");
  if (key_bits.dtype() == DType::kKeyThreefry)
    throw TypeError(
        "wrap_key_data accepts only uint32 key data, got a key array of dtype "
        "key<fry>; it is already wrapped");
  check_key_data(key_bits);
  return wrap(key_bits);
}

std::string key_impl(const Array& keys) {
  key_data(keys);  // validates
  return kImpl;
}

Array clone(const Array& key) {
  key_data(key);
  return key;
}

Array split(const Array& key, int64_t num) {
  if (num < 0) throw ValueError("split: num must be nonnegative, got " + std::to_string(num));
  return split(key, Shape{num});
}

Array split(const Array& key, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) throw ValueError("split: negative dimension in shape " + py_shape(shape));
  KeyIn k = single_key("split", key);
  return out_keys(k, split_data(k.data, shape));
}

Array fold_in(const Array& key, const ArrayLike& data) {
  KeyIn k = single_key("fold_in", key);
  Array d = data.array();
  if (d.ndim() != 0)
    throw TypeError("fold_in accepts a scalar, but was given an array of shape " +
                    py_shape(d.shape()) + " != (). Use jax.vmap for batching.");
  if (!is_integer(d.dtype()) && !is_bool(d.dtype()))
    throw TypeError("fold_in: data must be an integer, got " + d.repr());
  return out_keys(k, fold_in_data(k.data, lax::convert_element_type(d, DType::kUInt32)));
}

Array bits(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = canonicalize_dtype(dtype.value_or(default_uint_dtype()));
  if (!is_unsigned_integer(d))
    throw ValueError(std::string("dtype argument to `bits` must be an unsigned int dtype, got ") +
                     std::string(dtype_name(d)));
  KeyIn k = single_key("bits", key);
  const int width = iinfo(d).bits;
  return jitted("_bits", statics_of(shape, d), {k.data}, [=](std::span<const Array> a) {
    return std::vector<Array>{bits_data(a[0], width, shape)};
  })[0];
}

Array threefry_2x32(const Array& keypair, const Array& count) {
  if (keypair.dtype() != DType::kUInt32 || count.dtype() != DType::kUInt32 ||
      keypair.shape() != Shape{2})
    throw TypeError("threefry_2x32 requires uint32 arguments, got keypair " +
                    std::string(dtype_name(keypair.dtype())) + py_shape(keypair.shape()) +
                    " and count " + std::string(dtype_name(count.dtype())));
  return threefry_2x32_data(keypair, count);
}

// ---------------------------------------------------------------- distributions

Array uniform(const Array& key, const Shape& shape, std::optional<DType> dtype,
              const ArrayLike& minval, const ArrayLike& maxval) {
  const DType d = float_dtype("uniform", dtype);
  check_shape("uniform", shape, {minval.array().shape(), maxval.array().shape()});
  KeyIn k = single_key("uniform", key);
  return jitted("_uniform", statics_of(shape, d), {k.data, minval.array(), maxval.array()},
                [=](std::span<const Array> a) {
                  return std::vector<Array>{uniform_data(a[0], shape, d, a[1], a[2])};
                })[0];
}

Array normal(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = canonicalize_dtype(dtype.value_or(default_float_dtype()));
  if (!is_floating(d))
    throw ValueError(
        std::string("dtype argument to `normal` must be a float or complex dtype, got ") +
        std::string(dtype_name(d)));
  KeyIn k = single_key("normal", key);
  return jitted("_normal", statics_of(shape, d), {k.data}, [=](std::span<const Array> a) {
    // nextafter(-1, 0) in d: -1 + 2^-(nmant + 1).
    const double lo = -1.0 + std::ldexp(1.0, -(finfo(d).nmant + 1));
    Array u = uniform_data(a[0], shape, d, fconst(lo, d), fconst(1.0, d));
    return std::vector<Array>{lax::mul(fconst(std::sqrt(2.0), d), lax::erf_inv(u))};
  })[0];
}

Array truncated_normal(const Array& key, const ArrayLike& lower, const ArrayLike& upper,
                       std::optional<Shape> shape, std::optional<DType> dtype) {
  const DType d = float_dtype("truncated_normal", dtype);
  const Array& l0 = lower.array();
  const Array& u0 = upper.array();
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("truncated_normal", s, {l0.shape(), u0.shape()});
  } else {
    s = np::broadcast_shapes(l0.shape(), u0.shape(), "truncated_normal");
  }
  KeyIn k = single_key("truncated_normal", key);
  return jitted("_truncated_normal", statics_of(s, d), {k.data, l0, u0},
                [=](std::span<const Array> in) {
                  const Array sqrt2 = fconst(std::sqrt(2.0), d);
                  Array lo = lax::convert_element_type(in[1], d);
                  Array hi = lax::convert_element_type(in[2], d);
                  Array a = lax::erf(np::divide(lo, sqrt2)), b = lax::erf(np::divide(hi, sqrt2));
                  Array u = uniform_data(in[0], s, d, a, b);
                  Array out = np::multiply(sqrt2, lax::erf_inv(u));
                  // Clamped to the open interval: rounding (or u == a) must not reach the bounds.
                  return std::vector<Array>{
                      np::clip(out, np::nextafter(lax::stop_gradient(lo), fconst(INFINITY, d)),
                               np::nextafter(lax::stop_gradient(hi), fconst(-INFINITY, d)))};
                })[0];
}

Array bernoulli(const Array& key, const ArrayLike& p, std::optional<Shape> shape) {
  Array pa = p.array();
  const DType d = canonicalize_dtype(pa.dtype());
  if (!is_floating(d))
    throw TypeError("bernoulli probability `p` must have a floating dtype, got " +
                    std::string(dtype_name(d)) + ".");
  pa = lax::convert_element_type(pa, d);
  Shape s = pa.shape();
  if (shape) {
    s = *shape;
    check_shape("bernoulli", s, {pa.shape()});
  }
  KeyIn k = single_key("bernoulli", key);
  return jitted("_bernoulli", statics_of(s, d), {k.data, pa}, [=](std::span<const Array> a) {
    return std::vector<Array>{
        np::less(uniform_data(a[0], s, d, fconst(0.0, d), fconst(1.0, d)), a[1])};
  })[0];
}

Array randint(const Array& key, const Shape& shape, const ArrayLike& minval,
              const ArrayLike& maxval, std::optional<DType> dtype) {
  const DType d = canonicalize_dtype(dtype.value_or(default_int_dtype()));
  if (!is_integer(d))
    throw TypeError("randint only accepts integer dtypes, got " + std::string(dtype_name(d)));
  Array lo = minval.array(), hi = maxval.array();
  check_shape("randint", shape, {lo.shape(), hi.shape()});
  KeyIn k = single_key("randint", key);
  if (!is_integer(lo.dtype())) lo = np::astype(lo, default_int_dtype());
  if (!is_integer(hi.dtype())) hi = np::astype(hi, default_int_dtype());
  // maxval beyond the dtype's maximum (randint(key, s, 0, 256, uint8)) makes the span one larger.
  Array hi_out_of_range =
      lax::gt(hi, convert_and_clip(iconst(static_cast<__int128>(iinfo(d).max), d), hi.dtype()));
  lo = to_rank(convert_and_clip(lo, d), shape.size());
  hi = to_rank(convert_and_clip(hi, d), shape.size());
  const int nbits = iinfo(d).bits;
  Array keys = split_data(k.data, {2});
  Array higher = bits_data(lax::index_in_dim(keys, 0, 0, false), nbits, shape);
  Array lower = bits_data(lax::index_in_dim(keys, 1, 0, false), nbits, shape);
  const DType ut = uint_of_bits(nbits);
  Array span = lax::convert_element_type(lax::sub(hi, lo), ut);
  span = np::where(lax::le(hi, lo), iconst(1, ut), span);  // maxval <= minval gives minval
  span = np::where(np::logical_and(hi_out_of_range, lax::gt(hi, lo)), lax::add(span, iconst(1, ut)),
                   span);
  // 2^nbits mod span without overflow: ((2^(nbits/2) mod span)^2) mod span.
  Array mult = lax::rem(iconst(static_cast<__int128>(1) << (nbits / 2), ut), span);
  mult = lax::rem(lax::mul(mult, mult), span);
  Array offset = lax::add(lax::mul(lax::rem(higher, span), mult), lax::rem(lower, span));
  offset = lax::rem(offset, span);
  return lax::add(lo, lax::convert_element_type(offset, d));
}

Array gumbel(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = float_dtype("gumbel", dtype);
  KeyIn k = single_key("gumbel", key);
  return jitted("_gumbel", statics_of(shape, d), {k.data}, [=](std::span<const Array> a) {
    Array u = uniform_data(a[0], shape, d, fconst(finfo(d).tiny, d), fconst(1.0, d));
    return std::vector<Array>{lax::neg(lax::log(lax::neg(lax::log(u))))};
  })[0];
}

Array categorical(const Array& key, const Array& logits, int64_t axis, std::optional<Shape> shape) {
  const int64_t nd = logits.ndim();
  if (nd == 0) throw ValueError("categorical: logits must have at least one dimension");
  const int64_t ax = canonical_axis("categorical", axis, nd);
  Shape batch = logits.shape();
  batch.erase(batch.begin() + ax);
  Shape s = batch;
  if (shape) {
    s = *shape;
    check_shape("categorical", s, {batch});
  }
  if (!is_floating(logits.dtype()))
    throw ValueError(std::string("dtype argument to `gumbel` must be a float dtype, got ") +
                     std::string(dtype_name(logits.dtype())) +
                     "; categorical needs floating logits");
  const size_t prefix = s.size() - batch.size();
  Shape full(s.begin(), s.begin() + static_cast<int64_t>(prefix));
  Shape tail(s.begin() + static_cast<int64_t>(prefix), s.end());
  tail.insert(tail.begin() + ax, logits.shape()[static_cast<size_t>(ax)]);
  full.insert(full.end(), tail.begin(), tail.end());
  std::vector<int64_t> lead;
  for (size_t i = 0; i < prefix; ++i) lead.push_back(static_cast<int64_t>(i));
  Array g = gumbel(key, full, logits.dtype());
  Array l = lead.empty() ? logits : lax::expand_dims(logits, lead);
  return np::argmax(np::add(g, l), static_cast<int64_t>(prefix) + ax);
}

Array exponential(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = float_dtype("exponential", dtype);
  KeyIn k = single_key("exponential", key);
  return jitted("_exponential", statics_of(shape, d), {k.data}, [=](std::span<const Array> a) {
    Array u = uniform_data(a[0], shape, d, fconst(0.0, d), fconst(1.0, d));
    return std::vector<Array>{lax::neg(lax::log1p(lax::neg(u)))};  // log of 1 - u in (0, 1]
  })[0];
}

Array laplace(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = float_dtype("laplace", dtype);
  KeyIn k = single_key("laplace", key);
  const double epsneg = finfo(d).eps / 2;
  return jitted("_laplace", statics_of(shape, d), {k.data}, [=](std::span<const Array> a) {
    Array u = uniform_data(a[0], shape, d, fconst(-1.0 + epsneg, d), fconst(1.0, d));
    return std::vector<Array>{lax::mul(lax::sign(u), lax::log1p(lax::neg(lax::abs(u))))};
  })[0];
}

Array logistic(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = float_dtype("logistic", dtype);
  KeyIn k = single_key("logistic", key);
  return jitted("_logistic", statics_of(shape, d), {k.data}, [=](std::span<const Array> a) {
    Array x = uniform_data(a[0], shape, d, fconst(finfo(d).eps, d), fconst(1.0, d));
    return std::vector<Array>{lax::log(lax::div(x, lax::sub(fconst(1.0, d), x)))};
  })[0];
}

Array cauchy(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = float_dtype("cauchy", dtype);
  KeyIn k = single_key("cauchy", key);
  return jitted("_cauchy", statics_of(shape, d), {k.data}, [=](std::span<const Array> a) {
    Array u = uniform_data(a[0], shape, d, fconst(finfo(d).eps, d), fconst(1.0, d));
    return std::vector<Array>{lax::tan(lax::mul(fconst(M_PI, d), lax::sub(u, fconst(0.5, d))))};
  })[0];
}

Array rademacher(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const DType d = canonicalize_dtype(dtype.value_or(default_int_dtype()));
  Array b = np::astype(bernoulli(key, 0.5, shape), d);
  return np::astype(np::subtract(np::multiply(2, b), 1), d);
}

Array rayleigh(const Array& key, const ArrayLike& scale, std::optional<Shape> shape,
               std::optional<DType> dtype) {
  const DType d = float_dtype("rayleigh", dtype);
  Shape s = scale.array().shape();
  if (shape) {
    s = *shape;
    check_shape("rayleigh", s, {scale.array().shape()});
  }
  KeyIn k = single_key("rayleigh", key);
  return jitted(
      "_rayleigh", statics_of(s, d), {k.data, scale.array()}, [=](std::span<const Array> a) {
        Array u = uniform_data(a[0], s, d, fconst(0.0, d), fconst(1.0, d));
        Array sc = np::broadcast_to(np::astype(a[1], d), s);
        return std::vector<Array>{lax::mul(sc, lax::sqrt(lax::mul(lax::log(u), fconst(-2.0, d))))};
      })[0];
}

Array weibull_min(const Array& key, const ArrayLike& scale, const ArrayLike& concentration,
                  const Shape& shape, std::optional<DType> dtype) {
  const DType d = float_dtype("weibull_min", dtype);
  KeyIn k = single_key("weibull_min", key);
  Array u = uniform_data(k.data, shape, d, fconst(0.0, d), fconst(1.0, d));
  // The inverse Weibull CDF, with jnp's promotion (as JAX's jnp.power and *).
  return np::multiply(
      np::power(np::negative(np::log1p(np::negative(u))), np::divide(1.0, concentration)), scale);
}

Array permutation(const Array& key, int64_t n) {
  if (n < 0) throw ValueError("permutation: n must be nonnegative, got " + std::to_string(n));
  KeyIn k = single_key("permutation", key);
  return shuffle_data(k.data, np::arange(n), 0);
}

Array permutation(const Array& key, const Array& x, int64_t axis, bool independent) {
  if (x.ndim() == 0) {
    if (!is_integer(x.dtype())) throw TypeError("x must be an integer or at least 1-dimensional");
    if (!x.is_concrete())
      throw ConcretizationError(
          "permutation: argument x of jax.random.permutation() must be concrete when it is an "
          "integer; pass a static int");
    return permutation(key, np::astype(x, DType::kInt64).item<int64_t>());
  }
  const int64_t ax = canonical_axis("permutation", axis, x.ndim());
  KeyIn k = single_key("permutation", key);
  if (independent || x.ndim() == 1) return shuffle_data(k.data, x, ax);
  Array ind = shuffle_data(k.data, np::arange(x.shape()[static_cast<size_t>(ax)]), 0);
  return np::take(x, ind, ax);
}

namespace {

Array choice_impl(const Array& key, const Array& arr, int64_t n_inputs, const Shape& shape,
                  bool replace, const std::optional<Array>& p, int64_t axis) {
  const int64_t n_draws = shape_size(shape);
  if (n_draws == 0) return np::zeros(shape, arr.dtype());
  if (n_inputs <= 0) throw ValueError("a must be greater than 0 unless no samples are taken");
  if (!replace && n_draws > n_inputs)
    throw ValueError("Cannot take a larger sample than population when 'replace=False'");
  const bool scalar = arr.ndim() == 0;
  Array result;
  if (!p) {
    if (replace) {
      Array ind = randint(key, shape, 0, n_inputs);
      result = scalar ? ind : np::take(arr, ind, axis);
    } else {
      Array perm = scalar ? permutation(key, n_inputs) : permutation(key, arr, axis);
      result = lax::slice_in_dim(perm, 0, n_draws, 1, scalar ? 0 : axis);
    }
  } else {
    Array pa = *p;
    if (!is_floating(pa.dtype())) pa = np::astype(pa, default_float_dtype());
    if (pa.shape() != Shape{n_inputs}) throw ValueError("p must be None or match the shape of a");
    Array ind;
    if (replace) {
      Array cum = np::cumsum(pa);
      Array r = np::multiply(lax::index_in_dim(cum, n_inputs - 1, 0, false),
                             np::subtract(1, uniform(key, shape, cum.dtype())));
      // searchsorted(cum, r, side='left'): how many cumulative sums are below each draw.
      Shape cs(shape.size(), 1);
      cs.push_back(n_inputs);
      ind = np::sum(
          np::astype(np::less(lax::reshape(cum, cs), np::expand_dims(r, -1)), default_int_dtype()),
          int64_t{-1});
    } else {
      // The Gumbel top-k trick: the n_draws largest of log p + Gumbel noise.
      Array g = np::add(gumbel(key, {n_inputs}, pa.dtype()), np::log(pa));
      ind = np::astype(lax::top_k(g, n_draws).second, default_int_dtype());
    }
    result = scalar ? ind : np::take(arr, ind, axis);
  }
  Shape out = shape;
  if (!scalar) {
    out = Shape(arr.shape().begin(), arr.shape().begin() + axis);
    out.insert(out.end(), shape.begin(), shape.end());
    out.insert(out.end(), arr.shape().begin() + axis + 1, arr.shape().end());
  }
  return lax::reshape(result, out);
}

}  // namespace

Array choice(const Array& key, int64_t n, const Shape& shape, bool replace,
             const std::optional<Array>& p) {
  single_key("choice", key);
  return choice_impl(key, np::scalar(static_cast<double>(n), default_int_dtype()), n, shape,
                     replace, p, 0);
}

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             const std::optional<Array>& p, int64_t axis) {
  single_key("choice", key);
  if (a.ndim() == 0) {
    if (!is_integer(a.dtype()) || !a.is_concrete())
      throw TypeError("choice: a must be a concrete integer or an array of rank >= 1");
    return choice(key, np::astype(a, DType::kInt64).item<int64_t>(), shape, replace, p);
  }
  const int64_t ax = canonical_axis("choice", axis, a.ndim());
  return choice_impl(key, a, a.shape()[static_cast<size_t>(ax)], shape, replace, p, ax);
}

}  // namespace tessera::random
