// jax.random's counting distributions (random_dists.h): poisson, binomial and geometric, JAX's
// jax/_src/random.py algorithms step by step (TensorFlow's, for binomial).
//
// poisson and binomial each run two whole-array samplers, one per parameter regime, and merge
// them with select; the regime a sampler does not own gets a harmless stand-in parameter so
// its loop ends quickly. Each sampler is one while_loop over the whole array with its own key
// stream (a split per iteration): Knuth's product of uniforms for lam < 10 and Hormann's PTRS
// otherwise (poisson); sums of geometric draws where n min(p, 1 - p) <= 10 and Hormann's BTRS
// otherwise (binomial).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

#include "random_dists_util.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_cond.h"
#include "tessera/numpy_indexing.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/random.h"

namespace tessera::random {

namespace {

namespace np = tessera::numpy;
using namespace dists;  // NOLINT(google-build-using-namespace): the shared argument handling

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

Array i32(int64_t v) { return cst(DType::kInt32, static_cast<double>(v)); }

// ---------------------------------------------------------------- poisson

// Knuth: count uniforms until their product drops below exp(-lam).
Array poisson_knuth(const Array& key, const Array& lam, const Shape& shape, DType dtype,
                    const Array& max_iters) {
  const Array neg_lam = lax::neg(lam);
  using Carry = std::tuple<Array, Array, Array, Array>;  // i, k, rng, log_prod
  auto body_fn = [&](const Carry& c) {
    const auto& [i, k, rng, log_prod] = c;
    const Array keys = split(rng);
    const Array kk = select(lax::gt(log_prod, neg_lam), k + 1, k);
    const Array u = uniform(key_at(keys, 1), shape, DType::kFloat32);
    return Carry{i + 1, kk, key_at(keys, 0), log_prod + lax::log(u)};
  };
  auto cond_fn = [&](const Carry& c) {
    return np::logical_and(np::any(lax::gt(std::get<3>(c), neg_lam)), std::get<0>(c) < max_iters);
  };
  const Carry init{i32(0), np::zeros(shape, dtype), key, np::zeros(shape, DType::kFloat32)};
  const Array k = std::get<1>(lax::while_loop(cond_fn, body_fn, init));
  return np::astype(k - 1, dtype);
}

// Hormann's transformed rejection (PTRS).
Array poisson_rejection(const Array& key, const Array& lam, const Shape& shape, DType dtype,
                        const Array& max_iters) {
  const Array log_lam = lax::log(lam);
  const Array b = 0.931 + 2.53 * lax::sqrt(lam);
  const Array a = -0.059 + 0.02483 * b;
  const Array inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const Array v_r = 0.9277 - 3.6224 / (b - 2);
  using Carry = std::tuple<Array, Array, Array, Array>;  // i, k_out, accepted, key
  auto body_fn = [&](const Carry& c) {
    const auto& [i, k_out, accepted, k0] = c;
    const Array keys = split(k0, 3);
    const Array u = uniform(key_at(keys, 1), shape, lam.dtype()) - 0.5;
    const Array v = uniform(key_at(keys, 2), shape, lam.dtype());
    const Array u_shifted = 0.5 - np::abs(u);
    const Array k = lax::floor((2 * a / u_shifted + b) * u + lam + 0.43);
    const Array s = lax::log(v * inv_alpha / (a / (u_shifted * u_shifted) + b));
    const Array t = -lam + k * log_lam - lax::lgamma(k + 1);
    const Array accept1 = np::bitwise_and(u_shifted >= 0.07, v <= v_r);
    const Array reject = np::bitwise_or(k < 0, np::bitwise_and(u_shifted<0.013, v> u_shifted));
    const Array accept2 = s <= t;
    const Array accept = np::bitwise_or(accept1, np::bitwise_and(np::invert(reject), accept2));
    return Carry{i + 1, select(accept, k, k_out), np::bitwise_or(accepted, accept),
                 key_at(keys, 0)};
  };
  auto cond_fn = [&](const Carry& c) {
    return np::logical_and(np::any(np::invert(std::get<2>(c))), std::get<0>(c) < max_iters);
  };
  const Carry init{i32(0), np::full(shape, -1, lam.dtype()), np::zeros(shape, DType::kBool), key};
  const Array k = std::get<1>(lax::while_loop(cond_fn, body_fn, init));
  return np::astype(k, dtype);
}

// ---------------------------------------------------------------- binomial

constexpr double kStirlingTail[10] = {0.0810614667953272,  0.0413406959554092, 0.0276779256849983,
                                      0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                                      0.0118967099458917,  0.0104112652619720, 0.00925546218271273,
                                      0.00833056343336287};

Array stirling_approx_tail(const Array& k_in) {
  const Array vals = np::array(
      std::vector<double>(std::begin(kStirlingTail), std::end(kStirlingTail)), {10}, k_in.dtype());
  const Array use_tail_values = k_in <= 9;
  Array k = lax::clamp(cst(k_in.dtype(), 0.0), k_in, cst(k_in.dtype(), 9.0));
  const Array kp1sq = (k + 1) * (k + 1);
  const Array approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
  k = lax::floor(k);
  return select(use_tail_values, np::take(vals, np::astype(k, DType::kInt32)), approx);
}

Array binomial_inversion(const Array& key, const Array& count, const Array& prob,
                         const Shape& shape, const Array& max_iters) {
  const Array log1minusprob = lax::log1p(-prob);
  using Carry = std::tuple<Array, Array, Array, Array>;  // i, num_geom, geom_sum, key
  auto body_fn = [&](const Carry& c) {
    const auto& [i, num_geom, geom_sum, k0] = c;
    const Array keys = split(k0);  // JAX uses (subkey, key) = split(key) here
    const Array num_geom_out = select(geom_sum <= count, num_geom + 1, num_geom);
    const Array u = uniform(key_at(keys, 0), shape, prob.dtype());
    const Array geom = lax::ceil(lax::log(u) / log1minusprob);
    return Carry{i + 1, num_geom_out, geom_sum + geom, key_at(keys, 1)};
  };
  auto cond_fn = [&](const Carry& c) {
    return np::logical_and(np::any(std::get<2>(c) <= count), std::get<0>(c) < max_iters);
  };
  const Array zeros = np::zeros(shape, prob.dtype());
  const Array k = std::get<1>(lax::while_loop(cond_fn, body_fn, Carry{i32(0), zeros, zeros, key}));
  return k - 1;
}

// Hormann's BTRS transformed rejection.
Array btrs(const Array& key, const Array& count, const Array& prob, const Shape& shape,
           const Array& max_iters) {
  const Array stddev = lax::sqrt(count * prob * (1 - prob));
  const Array b = 1.15 + 2.53 * stddev;
  const Array a = -0.0873 + 0.0248 * b + 0.01 * prob;
  const Array c = count * prob + 0.5;
  const Array v_r = 0.92 - 4.2 / b;
  const Array r = prob / (1 - prob);
  const Array alpha = (2.83 + 5.1 / b) * stddev;
  const Array m = lax::floor((count + 1) * prob);
  using Carry = std::tuple<Array, Array, Array, Array>;  // i, k_out, accepted, key
  auto body_fn = [&](const Carry& cr) {
    const auto& [i, k_out, accepted, k0] = cr;
    const Array keys = split(k0, 3);
    Array u = uniform(key_at(keys, 1), shape, prob.dtype());
    Array v = uniform(key_at(keys, 2), shape, prob.dtype());
    u = u - 0.5;
    const Array us = 0.5 - np::abs(u);
    const Array accept1 = np::bitwise_and(us >= 0.07, v <= v_r);
    const Array k = lax::floor((2 * a / us + b) * u + c);
    const Array reject = np::bitwise_or(k<0, k> count);
    v = lax::log(v * alpha / (a / (us * us) + b));
    const Array ub = (m + 0.5) * lax::log((m + 1) / (r * (count - m + 1))) +
                     (count + 1) * lax::log((count - m + 1) / (count - k + 1)) +
                     (k + 0.5) * lax::log(r * (count - k + 1) / (k + 1)) + stirling_approx_tail(m) +
                     stirling_approx_tail(count - m) - stirling_approx_tail(k) -
                     stirling_approx_tail(count - k);
    const Array accept2 = v <= ub;
    const Array accept = np::bitwise_or(accept1, np::bitwise_and(np::invert(reject), accept2));
    return Carry{i + 1, select(accept, k, k_out), np::bitwise_or(accepted, accept),
                 key_at(keys, 0)};
  };
  auto cond_fn = [&](const Carry& cr) {
    return np::logical_and(np::any(np::invert(std::get<2>(cr))), std::get<0>(cr) < max_iters);
  };
  const Carry init{i32(0), np::full(shape, -1, prob.dtype()), np::zeros(shape, DType::kBool), key};
  return std::get<1>(lax::while_loop(cond_fn, body_fn, init));
}

}  // namespace

Array poisson(const Array& key, const ArrayLike& lam, std::optional<Shape> shape,
              std::optional<DType> dtype) {
  const Array k = typed_key("poisson", key);
  const DType d = int_dtype("poisson", dtype);
  const Shape s = shape ? *shape : lam.array().shape();
  const Array l = convert(broadcast_to(lam.array(), s), DType::kFloat32);
  const Array use_knuth = np::bitwise_or(l != l, l < 10);
  const Array lam_knuth = select(use_knuth, l, broadcast_to(cst(DType::kFloat32, 0.0), s));
  const Array lam_rejection = select(use_knuth, broadcast_to(cst(DType::kFloat32, 1e5), s), l);
  const Array max_iters =
      i32(static_cast<int64_t>(std::min<uint64_t>(iinfo(d).max, uint64_t{kInt32Max})));
  const Array result = select(use_knuth, poisson_knuth(k, lam_knuth, s, d, max_iters),
                              poisson_rejection(k, lam_rejection, s, d, max_iters));
  return select(l == 0, broadcast_to(cst(d, 0), s), result);
}

Array binomial(const Array& key, const ArrayLike& n, const ArrayLike& p, std::optional<Shape> shape,
               std::optional<DType> dtype) {
  const Array k = typed_key("binomial", key);
  const DType d = float_dtype("binomial", dtype);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("binomial", s, {n.array().shape(), p.array().shape()});
  } else {
    s = broadcast_all({n.array().shape(), p.array().shape()});
  }
  Array prob = float_of(p);
  Array count = broadcast_to(convert(n, prob.dtype()), s);
  prob = broadcast_to(prob, s);
  const Array p_lt_half = prob < 0.5;
  Array q = select(p_lt_half, prob, 1.0 - prob);
  const Array count_nan_or_neg = np::bitwise_or(count != count, count < 0.0);
  const Array count_inf = np::isinf(count);
  const Array q_is_nan = q != q;
  const Array q_l_0 = q < 0.0;
  q = select(np::bitwise_or(q_is_nan, q_l_0), np::full_like(q, 0.01), q);
  const Array use_inversion = np::bitwise_or(count_nan_or_neg, count * q <= 10.0);
  count = lax::floor(count);
  const Array count_inv = select(use_inversion, count, np::full_like(count, 0.0));
  const Array count_btrs = select(use_inversion, np::full_like(count, 1e4), count);
  const Array q_btrs = select(use_inversion, np::full_like(q, 0.5), q);
  const Array max_iters = i32(kInt32Max);
  Array samples = select(use_inversion, binomial_inversion(k, count_inv, q, s, max_iters),
                         btrs(k, count_btrs, q_btrs, s, max_iters));
  samples = convert(samples, d);
  const Array invalid = np::bitwise_or(np::bitwise_or(q_l_0, q_is_nan), count_nan_or_neg);
  samples =
      select(invalid, np::full_like(samples, std::numeric_limits<double>::quiet_NaN()), samples);
  samples = select(np::bitwise_and(count_inf, np::invert(invalid)),
                   np::full_like(samples, std::numeric_limits<double>::infinity()), samples);
  const Array keep = np::bitwise_or(
      np::bitwise_or(np::bitwise_or(p_lt_half, count_nan_or_neg), q_is_nan), count_inf);
  return select(keep, samples, convert(count, d) - samples);
}

Array geometric(const Array& key, const ArrayLike& p, std::optional<Shape> shape,
                std::optional<DType> dtype) {
  const Array k = typed_key("geometric", key);
  const DType d = int_dtype("geometric", dtype);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("geometric", s, {p.array().shape()});
  } else {
    s = p.array().shape();
  }
  const Array pf = float_of(p);
  const Array u = uniform(k, s, pf.dtype());
  const Array log_one_minus_p = broadcast_to(lax::log1p(-pf), s);
  const Array g = lax::floor(lax::div(lax::log(u), log_one_minus_p)) + 1;
  return np::astype(g, d);
}

}  // namespace tessera::random
