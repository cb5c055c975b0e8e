// jax.scipy.special's hyp1f1 and hyp2f1 (tessera/scipy_special.h): their series summed in
// lax.while_loops to relative precision eps, with JAX's special cases, Kummer's (1F1, x < 0),
// Euler's and Pfaff's (2F1) transformations and 1F1's asymptotic expansion for x >= 100.
// Derivatives are custom JVPs: 1F1 in a, b and x (symbolic zeros skip the unused series), 2F1
// in x.
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "api/scipy_special_internal.h"
#include "tessera/custom_derivatives.h"
#include "tessera/dtype.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/scipy_special.h"

namespace tessera::scipy::special {

namespace tnp = tessera::numpy;
using detail::promote_strong;
using detail::scalar_like;
using detail::series_loop;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Array false_like(const Array& x) { return tnp::zeros_like(x, DType::kBool); }

// sum_k (a)_k / (b)_k x^k / k!, to relative precision eps (at most 500 terms).
Array hyp1f1_series(const Array& a, const Array& b, const Array& x) {
  const double eps = finfo(x.dtype()).eps;
  return series_loop(
      [&](const std::vector<Array>& s) {
        const Array &k = s[0], &done = s[1];
        const Array term = s[2] * (a + k) / (b + k) * x / (k + 1.0);
        const Array add = tnp::where(done, 0.0, term);
        const Array total = s[3] + add;
        return std::vector<Array>{k + 1.0, done | (tnp::abs(add) <= eps * tnp::abs(total)), term,
                                  total};
      },
      {scalar_like(x, 0), false_like(x), tnp::ones_like(x), tnp::ones_like(x)}, 500)[3];
}

// Gamma(b) / Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k for large positive x (cut at
// its smallest term).
Array hyp1f1_asymptotic(const Array& a, const Array& b, const Array& x) {
  const double eps = finfo(x.dtype()).eps;
  const Array total = series_loop(
      [&](const std::vector<Array>& s) {
        const Array &k = s[0], &done = s[1], &term = s[2];
        const Array next = term * (b - a + k) * (1.0 - a + k) / ((k + 1.0) * x);
        const Array stop =
            done | (tnp::abs(next) >= tnp::abs(term)) | (tnp::abs(next) <= eps * tnp::abs(s[3]));
        return std::vector<Array>{k + 1.0, stop, tnp::where(stop, term, next),
                                  s[3] + tnp::where(done, 0.0, next)};
      },
      {scalar_like(x, 0), false_like(x), tnp::ones_like(x), tnp::ones_like(x)}, 250)[3];
  const Array log_scale = lax::lgamma(b) - lax::lgamma(a) + x + (a - b) * tnp::log(x);
  return gammasgn(b) * gammasgn(a) * tnp::exp(log_scale) * total;
}

Array hyp1f1_positive(const Array& a, const Array& b, const Array& x) {
  const Array big = x >= 100;
  const Array xs = tnp::where(big, 1.0, x);
  const Array xl = tnp::where(big, x, 200.0);
  return tnp::where(big, hyp1f1_asymptotic(a, b, xl), hyp1f1_series(a, b, xs));
}

Array hyp1f1_impl(const Array& a, const Array& b, const Array& x) {
  // Kummer's transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) for x < 0 keeps the series'
  // terms from cancelling.
  const Array neg = x < 0;
  const Array aa = tnp::where(neg, b - a, a);
  Array val = hyp1f1_positive(aa, b, tnp::abs(x));
  val = tnp::where(neg, tnp::exp(x) * val, val);
  return tnp::where(a == 0, tnp::ones_like(val),
                    tnp::where(a == b, tnp::exp(x), tnp::where(b == 0, kInf, val)));
}

// sum_{k>=1} (a)_k / (b)_k x^k / k! weight(k): the a- and b-derivative series.
Array hyp1f1_param_series(const Array& a, const Array& b, const Array& x,
                          const std::function<Array(const Array&)>& weight) {
  const double eps = finfo(x.dtype()).eps;
  return series_loop(
      [&](const std::vector<Array>& s) {
        const Array &k = s[0], &done = s[1], &term = s[2];
        const Array add = tnp::where(done, 0.0, term * weight(k));
        const Array total = s[3] + add;
        return std::vector<Array>{k + 1.0,
                                  done | ((tnp::abs(add) <= eps * tnp::abs(total)) & (k > 1.0)),
                                  term * (a + k) / (b + k) * x / (k + 1.0), total};
      },
      {scalar_like(x, 1), false_like(x), a / b * x, tnp::zeros_like(x)}, 500)[3];
}

Array hyp1f1_custom(const Array& a, const Array& b, const Array& x) {
  static const auto f = custom_jvp([](const Array& p, const Array& q, const Array& z) {
                          return hyp1f1_impl(p, q, z);
                        })
                            .defjvp(
                                [](const auto& primals, const auto& tangents) {
                                  const auto& [p, q, z] = primals;
                                  const auto& [dp, dq, dz] = tangents;
                                  Array out = hyp1f1_impl(p, q, z);
                                  Array t = tnp::zeros_like(out);
                                  if (dz.defined())
                                    t = t + dz * (p / q * hyp1f1_impl(p + 1.0, q + 1.0, z));
                                  if (dp.defined())
                                    t = t + dp * hyp1f1_param_series(p, q, z, [&](const Array& k) {
                                              return lax::digamma(p + k) - lax::digamma(p);
                                            });
                                  if (dq.defined())
                                    t = t + dq * hyp1f1_param_series(p, q, z, [&](const Array& k) {
                                              return lax::digamma(q) - lax::digamma(q + k);
                                            });
                                  return std::make_pair(out, tnp::astype(t, out.dtype()));
                                },
                                /*symbolic_zeros=*/true);
  return f(a, b, x);
}

// sum_k (a)_k (b)_k / (c)_k x^k / k! for 0 <= x < 1 (a polynomial when a or b is a
// non-positive integer), to relative precision eps, at most 20000 terms.
Array hyp2f1_series(const Array& a, const Array& b, const Array& c, const Array& x) {
  const double eps = finfo(x.dtype()).eps;
  return series_loop(
      [&](const std::vector<Array>& s) {
        const Array &k = s[0], &done = s[1];
        const Array term = s[2] * (a + k) * (b + k) / ((c + k) * (k + 1.0)) * x;
        const Array add = tnp::where(done, 0.0, term);
        const Array total = s[3] + add;
        return std::vector<Array>{k + 1.0, done | (tnp::abs(add) <= eps * tnp::abs(total)), term,
                                  total};
      },
      {scalar_like(x, 0), false_like(x), tnp::ones_like(x), tnp::ones_like(x)}, 20000)[3];
}

// 0 <= x < 1: Euler's transformation (1-x)^(c-a-b) 2F1(c-a, c-b; c; x) when c - a - b <= -1
// (its series converges faster), else the direct series.
Array hyp2f1_unit(const Array& a, const Array& b, const Array& c, const Array& x) {
  const Array d = c - a - b;
  const Array euler = d <= -1;
  const Array s = hyp2f1_series(tnp::where(euler, c - a, a), tnp::where(euler, c - b, b), c, x);
  return tnp::where(euler, tnp::power(1.0 - x, d) * s, s);
}

Array hyp2f1_impl(const Array& a, const Array& b, const Array& c, const Array& x) {
  // Pfaff's transformation (1-x)^-a 2F1(a, c-b; c; x/(x-1)) for x < 0.
  const Array neg = x < 0;
  const Array z = tnp::where(neg, x / (x - 1.0), tnp::where((x >= 0) & (x < 1), x, 0.0));
  const Array bb = tnp::where(neg, c - b, b);
  Array val = hyp2f1_unit(a, bb, c, z);
  val = tnp::where(neg, tnp::power(1.0 - x, -a) * val, val);
  const Array d = c - a - b;
  // Gauss's sum at x = 1.
  const Array gauss = tnp::exp(lax::lgamma(c) + lax::lgamma(tnp::where(d > 0, d, 1.0)) -
                               lax::lgamma(c - a) - lax::lgamma(c - b)) *
                      gammasgn(c) * gammasgn(c - a) * gammasgn(c - b);
  const Array c_pole = (c == 0) | ((c < 0) & (c == tnp::floor(c)));
  Array out = tnp::where(x == 1, tnp::where(d <= 0, kInf, gauss), val);
  out = tnp::where((b == c) & (x < 1), tnp::power(1.0 - x, -a), out);
  out = tnp::where((a == c) & (x < 1) & (b != c), tnp::power(1.0 - x, -b), out);
  out = tnp::where(x > 1, kInf, out);
  out = tnp::where(c_pole, kInf, out);
  return tnp::where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), tnp::ones_like(out), out);
}

Array hyp2f1_custom(const Array& a, const Array& b, const Array& c, const Array& x) {
  static const auto f =
      custom_jvp([](const Array& p, const Array& q, const Array& r, const Array& z) {
        return hyp2f1_impl(p, q, r, z);
      }).defjvp([](const auto& primals, const auto& tangents) {
        const auto& [p, q, r, z] = primals;
        const Array& dz = std::get<3>(tangents);
        Array out = hyp2f1_impl(p, q, r, z);
        const Array slope = p * q / r * hyp2f1_impl(p + 1.0, q + 1.0, r + 1.0, z);
        return std::make_pair(out, tnp::astype(dz * slope, out.dtype()));
      });
  return f(a, b, c, x);
}

}  // namespace

Array hyp1f1(const ArrayLike& a, const ArrayLike& b, const ArrayLike& x) {
  std::vector<Array> v = promote_strong("hyp1f1", {a.array(), b.array(), x.array()});
  return hyp1f1_custom(v[0], v[1], v[2]);
}

Array hyp2f1(const ArrayLike& a, const ArrayLike& b, const ArrayLike& c, const ArrayLike& x) {
  std::vector<Array> v = promote_strong("hyp2f1", {a.array(), b.array(), c.array(), x.array()});
  return hyp2f1_custom(v[0], v[1], v[2], v[3]);
}

}  // namespace tessera::scipy::special
