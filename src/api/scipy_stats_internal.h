// Shared helpers of src/api/scipy_stats_*.cpp (tessera/scipy_stats.h).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/numpy.h"
#include "tessera/scipy_stats.h"

namespace tessera::scipy::stats::detail {

namespace tnp = tessera::numpy;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kPi = std::numbers::pi;
inline const double kLog2Pi = std::log(2 * std::numbers::pi);

// JAX's promote_args_inexact: the arguments in one inexact dtype (their jnp result type, or
// the default float when that is integer or bool), and of one rank (promote_shapes: leading
// 1s added, so that the lax-level special functions see equal ranks; not yet broadcast).
template <class... A>
std::array<Array, sizeof...(A)> promote(const char* op, const A&... xs) {
  std::vector<Array> v = tnp::detail::promote_inexact(op, {ArrayLike(xs).array()...});
  int64_t rank = 0;
  for (const Array& a : v) rank = std::max(rank, a.ndim());
  std::array<Array, sizeof...(A)> out;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = v[i];
    if (v[i].ndim() < rank) {
      Shape s(static_cast<size_t>(rank - v[i].ndim()), 1);
      s.insert(s.end(), v[i].shape().begin(), v[i].shape().end());
      out[i] = tnp::reshape(v[i], s);
    }
  }
  return out;
}

// JAX's promote_dtypes_inexact (the multivariate laws): one inexact dtype, shapes unchanged.
template <class... A>
std::array<Array, sizeof...(A)> promote_dtypes(const char* op, const A&... xs) {
  std::vector<Array> v = tnp::detail::promote_inexact(op, {ArrayLike(xs).array()...});
  std::array<Array, sizeof...(A)> out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = v[i];
  return out;
}

// v as a rank-0 array of x's dtype (JAX's _lax_const / jnp.full_like(x, v) up to broadcasting).
inline Array cst(const Array& x, double v) { return tnp::scalar(v, x.dtype()); }

}  // namespace tessera::scipy::stats::detail
