// jax.scipy.special's gamma/beta, error-function, Bessel, logistic and information-theory
// functions (tessera/scipy_special.h): compositions of lax primitives and jnp ops, with JAX's
// custom JVPs (xlogy, xlog1py, x log x, logit, log_ndtr) through tessera::custom_jvp.
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "api/numpy_internal.h"
#include "api/scipy_special_internal.h"
#include "tessera/control_flow.h"
#include "tessera/custom_derivatives.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/scipy_special.h"

namespace tessera::scipy::special {

namespace tnp = tessera::numpy;

namespace detail {

std::vector<Array> promote_strong(const char* op, const std::vector<Array>& xs) {
  std::vector<Array> v = tnp::detail::promote_inexact(op, xs);
  for (Array& a : v) a = tnp::detail::convert(op, a, a.dtype());
  return v.size() > 1 ? tnp::broadcast_arrays(v) : v;
}

std::vector<Array> series_loop(const LoopBody& body, std::vector<Array> init, int max_iter) {
  return lax::while_loop(
      [max_iter](const std::vector<Array>& s) {
        return (s[0] < static_cast<double>(max_iter)) & ~tnp::all(s[1]);
      },
      body, init);
}

Array scalar_like(const Array& x, double v) { return tnp::full({}, v, x.dtype()); }

long double zeta_even(int k) {
  // Borwein (2000), algorithm 2 with n = 40 terms: error below 3 / (3 + sqrt 8)^40 ~ 1e-30.
  constexpr int n = 40;
  const long double s = 2.0L * k;
  long double d[n + 1];
  long double term = 1, sum = 1;  // n (n + i - 1)! 4^i / ((n - i)! (2i)!) at i = 0 is 1
  d[0] = 1;
  for (int i = 1; i <= n; ++i) {
    term *= 4.0L * (n + i - 1) * (n - i + 1) / ((2.0L * i - 1) * (2.0L * i));
    sum += term;
    d[i] = sum;
  }
  long double acc = 0;
  for (int j = 0; j < n; ++j) {
    const long double t = (d[j] - d[n]) / std::pow(static_cast<long double>(j + 1), s);
    acc += j % 2 ? -t : t;
  }
  return -acc / (d[n] * (1 - std::pow(2.0L, 1 - s)));
}

}  // namespace detail

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kLog2Pi = std::log(2 * std::numbers::pi);

// jnp's promote_args_inexact: the arguments in one inexact dtype.
Array inexact1(const char* op, const ArrayLike& x) {
  return tnp::detail::promote_inexact(op, {x.array()})[0];
}
std::pair<Array, Array> inexact2(const char* op, const ArrayLike& x, const ArrayLike& y) {
  std::vector<Array> v = tnp::detail::promote_inexact(op, {x.array(), y.array()});
  return {v[0], v[1]};
}

// ndtr, ndtri and log_ndtr take float32 or float64 only (no promotion), as JAX's.
Array f32_f64(const char* op, const ArrayLike& x) {
  const Array& a = x.array();
  tnp::detail::check_defined(op, a);
  if (a.dtype() != DType::kFloat32 && a.dtype() != DType::kFloat64)
    throw TypeError(op_message(op, "x.dtype=" + tnp::detail::dtype_str(a.dtype()) +
                                       " is not supported, see docstring for supported types. (" +
                                       op +
                                       " takes float32 or float64; convert with "
                                       "x.astype(jnp.float32))"));
  return a;
}

// ---- the custom-JVP functions (each rule's primal is the custom function itself, so higher
// derivatives use the rule again, as JAX's) ----

Array xlogy_primal(const Array& x, const Array& y) {
  return tnp::where(x != 0, x * tnp::log(y), tnp::zeros_like(x));
}
Array xlog1py_primal(const Array& x, const Array& y) {
  return tnp::where(x != 0, x * tnp::log1p(y), tnp::zeros_like(x));
}

Array xlogy_custom(const Array& x, const Array& y);
Array xlog1py_custom(const Array& x, const Array& y);
Array xlogx_custom(const Array& x);

// JAX: d xlogy = dx log(y) + dy x / y.
Array xlogy_custom(const Array& x, const Array& y) {
  static const auto f = custom_jvp([](const Array& a, const Array& b) {
                          return xlogy_primal(a, b);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const auto& [a, b] = primals;
    const auto& [da, db] = tangents;
    Array out = xlogy_custom(a, b);
    return std::make_pair(out, tnp::astype(da * tnp::log(b) + db * a / b, out.dtype()));
  });
  return f(x, y);
}

// JAX: d xlog1py = dx log1p(y) + dy x / (1 + y).
Array xlog1py_custom(const Array& x, const Array& y) {
  static const auto f = custom_jvp([](const Array& a, const Array& b) {
                          return xlog1py_primal(a, b);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const auto& [a, b] = primals;
    const auto& [da, db] = tangents;
    Array out = xlog1py_custom(a, b);
    return std::make_pair(out, tnp::astype(da * tnp::log1p(b) + db * a / (1.0 + b), out.dtype()));
  });
  return f(x, y);
}

// x log x with the derivative log(x) + 1 (-inf at 0, as JAX's _xlogx).
Array xlogx_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& a) {
                          return xlogy_custom(a, a);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    return std::make_pair(xlogx_custom(a), t * (tnp::log(a) + 1.0));
  });
  return f(x);
}

Array logit_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& a) {
                          return tnp::log(a / (1.0 - a));
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    return std::make_pair(logit_custom(a), t / (a * (1.0 - a)));
  });
  return f(x);
}

// ---- Stirling's series for betaln ----

// lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 8.
Array lgamma_correction(const Array& x) {
  const Array r = 1.0 / x;
  const Array r2 = r * r;
  return r *
         (1.0 / 12 + r2 * (-1.0 / 360 +
                           r2 * (1.0 / 1260 +
                                 r2 * (-1.0 / 1680 + r2 * (1.0 / 1188 + r2 * (-691.0 / 360360))))));
}

// ---- the normal distribution ----

Array ndtr_impl(const Array& x) {
  const double half_sqrt_2 = 0.5 * std::numbers::sqrt2;
  const Array w = x * half_sqrt_2;
  const Array z = tnp::abs(w);
  // erf near 0, erfc in the tails (1 - erf would cancel there).
  const Array y = tnp::where(z < half_sqrt_2, 1.0 + lax::erf(w),
                             tnp::where(w > 0, 2.0 - lax::erfc(z), lax::erfc(z)));
  return 0.5 * y;
}

// Cephes ndtri.c (S. Moshier) rational approximations, highest degree first; the Q polynomials
// have an implicit leading 1.
constexpr double kNdtriP0[] = {-5.99633501014107895267e1, 9.80010754185999661536e1,
                               -5.66762857469070293439e1, 1.39312609387279679503e1,
                               -1.23916583867381258016e0};
constexpr double kNdtriQ0[] = {1.95448858338141759834e0, 4.67627912898881538453e0,
                               8.63602421390890590575e1, -2.25462687854119370527e2,
                               2.00260212380060660359e2, -8.20372256168333339912e1,
                               1.59056225126211695515e1, -1.18331621121330003142e0};
constexpr double kNdtriP1[] = {
    4.05544892305962419923e0,   3.15251094599893866154e1,   5.71628192246421288162e1,
    4.40805073893200834700e1,   1.46849561928858024014e1,   2.18663306850790267539e0,
    -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4};
constexpr double kNdtriQ1[] = {1.57799883256466749731e1,   4.53907635128879210584e1,
                               4.13172038254672030440e1,   1.50425385692907503408e1,
                               2.50464946208309415979e0,   -1.42182922854787788574e-1,
                               -3.80806407691578277194e-2, -9.33259480895457427372e-4};
constexpr double kNdtriP2[] = {
    3.23774891776946035970e0,  6.91522889068984211695e0,  3.93881025292474443415e0,
    1.33303460815807542389e0,  2.01485389549179081538e-1, 1.23716634817820021358e-2,
    3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9};
constexpr double kNdtriQ2[] = {6.02427039364742014255e0,  3.67983563856160859403e0,
                               1.37702099489081330271e0,  2.16236993594496635890e-1,
                               1.34204006088543189037e-2, 3.28014464682127739104e-4,
                               2.89247864745380683936e-6, 6.79019408009981274425e-9};

// sum c_i x^(n-i) (highest degree first); monic: an implicit leading 1.
template <size_t N>
Array horner(const Array& x, const double (&c)[N], bool monic = false) {
  Array acc = monic ? tnp::ones_like(x) : tnp::full_like(x, c[0]);
  for (size_t i = monic ? 0 : 1; i < N; ++i) acc = acc * x + c[i];
  return acc;
}

Array ndtri_impl(const Array& p) {
  const double exp_m2 = std::exp(-2.0);
  const Array upper = p > 1.0 - exp_m2;
  // The tail probability (p or 1 - p), kept away from 0 so that unused branches stay finite.
  Array y = tnp::where(upper, 1.0 - p, p);
  y = tnp::where((y > 0) & (y <= 1), y, 0.5);
  // central region: x = sqrt(2 pi) (w + w^3 P0(w^2) / Q0(w^2)), w = p - 1/2
  const Array w = y - 0.5;
  const Array w2 = w * w;
  const Array central = (w + w * w2 * horner(w2, kNdtriP0) / horner(w2, kNdtriQ0, true)) *
                        std::sqrt(2 * std::numbers::pi);
  // tails: z = sqrt(-2 log y), x = z - log(z)/z - (1/z) P(1/z) / Q(1/z)
  const Array z = tnp::sqrt(-2.0 * tnp::log(y));
  const Array t = 1.0 / z;
  const Array near = t * horner(t, kNdtriP1) / horner(t, kNdtriQ1, true);
  const Array far = t * horner(t, kNdtriP2) / horner(t, kNdtriQ2, true);
  const Array tail = z - tnp::log(z) / z - tnp::where(z < 8.0, near, far);
  Array x = tnp::where(~upper & (p > exp_m2), central, tnp::where(upper, tail, -tail));
  x = tnp::where(p == 0, -kInf, tnp::where(p == 1, kInf, x));
  return tnp::where((p < 0) | (p > 1) | tnp::isnan(p), kNaN, x);
}

Array norm_logpdf(const Array& x) { return -0.5 * x * x - 0.5 * kLog2Pi; }

// log ndtr(x) for x << -1: log(phi(x) / -x) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n)).
Array log_ndtr_lower(const Array& x, int series_order) {
  const Array x2 = x * x;
  const Array log_scale = -0.5 * x2 - tnp::log(-x) - 0.5 * kLog2Pi;
  Array series = tnp::ones_like(x);
  Array x2n = x2;
  double double_fact = 1;
  for (int n = 1; n <= series_order; ++n) {
    double_fact *= 2 * n - 1;
    const Array term = double_fact / x2n;
    series = n % 2 ? series - term : series + term;
    x2n = x2n * x2;
  }
  return log_scale + tnp::log(series);
}

Array log_ndtr_primal(const Array& x, int series_order) {
  // JAX's bounds: below, the asymptotic series; above, log(1 - ndtr(-x)) ~ -ndtr(-x).
  const bool f64 = x.dtype() == DType::kFloat64;
  const double lower = f64 ? -20.0 : -10.0;
  const double upper = f64 ? 8.0 : 5.0;
  // Between the bounds: log(ndtr(x)) below 0, log1p(-ndtr(-x)) above (JAX takes the log of
  // ndtr there too, which loses the digits of a result near 0).
  const Array mid = tnp::minimum(tnp::maximum(x, lower), upper);
  const Array middle = tnp::where(mid > 0, tnp::log1p(-ndtr_impl(-mid)), tnp::log(ndtr_impl(mid)));
  return tnp::where(
      x > upper, -ndtr_impl(-x),
      tnp::where(x > lower, middle, log_ndtr_lower(tnp::minimum(x, lower), series_order)));
}

Array log_ndtr_custom(const Array& x, int series_order) {
  const auto f = custom_jvp([series_order](const Array& a) {
                   return log_ndtr_primal(a, series_order);
                 }).defjvp([series_order](const auto& primals, const auto& tangents) {
    const Array& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    Array ans = log_ndtr_custom(a, series_order);
    return std::make_pair(ans, t * tnp::exp(norm_logpdf(a) - ans));
  });
  return f(x);
}

}  // namespace

// ---- gamma and beta functions ----

Array gammaln(const ArrayLike& x) { return lax::lgamma(inexact1("gammaln", x)); }

Array gammasgn(const ArrayLike& x) {
  const Array a = inexact1("gammasgn", x);
  const Array floor_x = tnp::floor(a);
  const Array pole = ((a < 0) & (floor_x == a)) | tnp::isnan(a);
  const Array neg_odd = (a < 0) & (tnp::remainder(floor_x, 2) != 0);
  const Array one = tnp::where(tnp::signbit(a) & (a == 0), tnp::full_like(a, -1.0), 1.0);
  return tnp::where(pole, kNaN, tnp::where(neg_odd, -1.0, one));
}

Array gamma(const ArrayLike& x) {
  const Array a = inexact1("gamma", x);
  return gammasgn(a) * tnp::exp(lax::lgamma(a));
}

Array betaln(const ArrayLike& a, const ArrayLike& b) {
  const auto [x, y] = inexact2("betaln", a, b);
  const Array lo = tnp::minimum(x, y);
  const Array hi = tnp::maximum(x, y);
  constexpr double big = 8.0;
  // both >= 8: log(2 pi)/2 + (lo - 1/2) log(lo/s) + (hi - 1/2) log(hi/s) - log(s)/2 + corr
  const Array both_big = lo >= big;
  const Array lo_b = tnp::where(both_big, lo, big);
  const Array hi_b = tnp::where(both_big, hi, big);
  const Array s_b = lo_b + hi_b;
  const Array both = 0.5 * kLog2Pi - 0.5 * tnp::log(s_b) + (lo_b - 0.5) * tnp::log(lo_b / s_b) +
                     (hi_b - 0.5) * tnp::log1p(-lo_b / s_b) + lgamma_correction(lo_b) +
                     lgamma_correction(hi_b) - lgamma_correction(s_b);
  // 0 < lo < 8 <= hi: lgamma(lo) + Stirling for lgamma(hi) - lgamma(lo + hi)
  const Array one_ok = (lo > 0) & (lo < big) & (hi >= big);
  const Array lo_o = tnp::where(one_ok, lo, 1.0);
  const Array hi_o = tnp::where(one_ok, hi, big);
  const Array s_o = lo_o + hi_o;
  const Array one = lax::lgamma(lo_o) + (hi_o - 0.5) * tnp::log1p(-lo_o / s_o) -
                    lo_o * tnp::log(s_o) + lo_o + lgamma_correction(hi_o) - lgamma_correction(s_o);
  const Array direct = lax::lgamma(x) + lax::lgamma(y) - lax::lgamma(x + y);
  return tnp::where(both_big, both, tnp::where(one_ok, one, direct));
}

Array beta(const ArrayLike& a, const ArrayLike& b) {
  const auto [x, y] = inexact2("beta", a, b);
  const Array sign = gammasgn(x) * gammasgn(y) * gammasgn(x + y);
  return sign * tnp::exp(betaln(x, y));
}

Array betainc(const ArrayLike& a, const ArrayLike& b, const ArrayLike& x) {
  std::vector<Array> v = tnp::detail::promote_inexact("betainc", {a.array(), b.array(), x.array()});
  return lax::betainc(v[0], v[1], v[2]);
}

Array gammainc(const ArrayLike& a, const ArrayLike& x) {
  const auto [p, q] = inexact2("gammainc", a, x);
  return lax::igamma(p, q);
}

Array gammaincc(const ArrayLike& a, const ArrayLike& x) {
  const auto [p, q] = inexact2("gammaincc", a, x);
  return lax::igammac(p, q);
}

Array factorial(const ArrayLike& n, bool exact) {
  if (exact) throw NotImplementedError(op_message("factorial", "factorial with exact=True"));
  const Array a = inexact1("factorial", n);
  return tnp::where(a < 0, tnp::zeros_like(a), tnp::exp(lax::lgamma(a + 1.0)));
}

Array poch(const ArrayLike& z, const ArrayLike& m) {
  const auto [a, b] = inexact2("poch", z, m);
  const Array r = gamma(a + b) / gamma(a);
  return tnp::where(b == 0, tnp::ones_like(r), r);
}

Array multigammaln(const ArrayLike& a, int64_t d) {
  const Array x = inexact1("multigammaln", a);
  const double constant =
      0.25 * static_cast<double>(d) * static_cast<double>(d - 1) * std::log(std::numbers::pi);
  const Array offsets = tnp::arange(static_cast<int64_t>(std::max<int64_t>(d, 0)), x.dtype()) / 2.0;
  const Array terms = lax::lgamma(tnp::expand_dims(x, -1) - offsets);
  return tnp::sum(terms, -1) + constant;
}

Array digamma(const ArrayLike& x) { return lax::digamma(inexact1("digamma", x)); }

Array polygamma(const ArrayLike& n, const ArrayLike& x) {
  tnp::detail::check_defined("polygamma", n.array());
  const DType nd = n.array().dtype();
  if (is_floating(nd))
    throw TypeError(op_message("polygamma", "n must be an integer array or Python int, got dtype " +
                                                tnp::detail::dtype_str(nd) +
                                                "; pass n.astype(jnp.int32)"));
  const auto [m, y] = inexact2("polygamma", n, x);
  auto b = tnp::broadcast_arrays({m, y});
  return lax::polygamma(b[0], b[1]);
}

Array zeta(const ArrayLike& x, const ArrayLike& q) {
  const auto [a, b] = inexact2("zeta", x, q);
  auto v = tnp::broadcast_arrays({a, b});
  return lax::zeta(v[0], v[1]);
}

// ---- error function and the normal distribution ----

Array erf(const ArrayLike& x) { return lax::erf(inexact1("erf", x)); }
Array erfc(const ArrayLike& x) { return lax::erfc(inexact1("erfc", x)); }
Array erfinv(const ArrayLike& x) { return lax::erf_inv(inexact1("erfinv", x)); }

Array ndtr(const ArrayLike& x) { return ndtr_impl(f32_f64("ndtr", x)); }
Array ndtri(const ArrayLike& p) { return ndtri_impl(f32_f64("ndtri", p)); }

Array log_ndtr(const ArrayLike& x, int series_order) {
  if (series_order < 0)
    throw ValueError(op_message("log_ndtr", "series_order must be non-negative."));
  if (series_order > 30) throw ValueError(op_message("log_ndtr", "series_order must be <= 30."));
  return log_ndtr_custom(f32_f64("log_ndtr", x), series_order);
}

// ---- modified Bessel functions ----

Array i0e(const ArrayLike& x) { return lax::bessel_i0e(inexact1("i0e", x)); }
Array i1e(const ArrayLike& x) { return lax::bessel_i1e(inexact1("i1e", x)); }
Array i0(const ArrayLike& x) {
  const Array a = inexact1("i0", x);
  return tnp::exp(tnp::abs(a)) * lax::bessel_i0e(a);
}
Array i1(const ArrayLike& x) {
  const Array a = inexact1("i1", x);
  return tnp::exp(tnp::abs(a)) * lax::bessel_i1e(a);
}

// ---- logistic functions and normalizers ----

Array logit(const ArrayLike& x) { return logit_custom(inexact1("logit", x)); }
Array expit(const ArrayLike& x) { return lax::logistic(inexact1("expit", x)); }

Array logsumexp(const ArrayLike& a, const LogsumexpOptions& o) { return nn::logsumexp(a, o); }
std::pair<Array, Array> logsumexp_with_sign(const ArrayLike& a, const LogsumexpOptions& o) {
  return nn::logsumexp_with_sign(a, o);
}
Array softmax(const ArrayLike& x, const AxisArg& axis) { return nn::softmax(x, axis); }
Array log_softmax(const ArrayLike& x, const AxisArg& axis) { return nn::log_softmax(x, axis); }

// ---- Bernoulli numbers ----

Array bernoulli(int64_t n) {
  if (n < 0)
    throw ValueError(op_message(
        "bernoulli", "n must be a non-negative integer, got " + std::to_string(n) + "."));
  // B_0 = 1, B_1 = -1/2, B_odd = 0, B_2k = (-1)^(k+1) 2 zeta(2k) (2k)! / (2 pi)^(2k), the
  // factorial ratio accumulated in long double (it overflows double from n = 260 on: +-inf).
  std::vector<double> out(static_cast<size_t>(n) + 1, 0.0);
  out[0] = 1;
  if (n >= 1) out[1] = -0.5;
  const long double two_pi = 2 * std::numbers::pi_v<long double>;
  long double ratio = 1;  // (2k)! / (2 pi)^(2k)
  for (int64_t k = 1; 2 * k <= n; ++k) {
    ratio *= (2.0L * k - 1) / two_pi * (2.0L * k) / two_pi;
    // zeta(2k) rounds to 1 in long double from 2k = 66 on.
    const long double z = k < 40 ? detail::zeta_even(static_cast<int>(k)) : 1.0L;
    const long double v = 2 * z * ratio;
    out[static_cast<size_t>(2 * k)] = static_cast<double>(k % 2 ? v : -v);
  }
  const DType dt = x64_enabled() ? DType::kFloat64 : DType::kFloat32;
  return tnp::array(out, Shape{n + 1}, dt);
}

// ---- information theory ----

Array xlogy(const ArrayLike& x, const ArrayLike& y) {
  const auto [a, b] = inexact2("xlogy", x, y);
  return xlogy_custom(a, b);
}

Array xlog1py(const ArrayLike& x, const ArrayLike& y) {
  const auto [a, b] = inexact2("xlog1py", x, y);
  return xlog1py_custom(a, b);
}

Array entr(const ArrayLike& x) {
  const Array a = inexact1("entr", x);
  return tnp::where(a < 0, tnp::full_like(a, -kInf), -xlogx_custom(a));
}

Array rel_entr(const ArrayLike& p, const ArrayLike& q) {
  const auto [a, b] = inexact2("rel_entr", p, q);
  const Array both_pos = (a > 0) & (b > 0);
  const Array p_zero = (a == 0) & (b >= 0);
  const Array safe_p = tnp::where(both_pos, a, 1.0);
  const Array safe_q = tnp::where(both_pos, b, 1.0);
  const Array val = xlogx_custom(safe_p) - xlogy_custom(safe_p, safe_q);
  return tnp::where(both_pos, val, tnp::where(p_zero, tnp::zeros_like(val), kInf));
}

Array kl_div(const ArrayLike& p, const ArrayLike& q) {
  const auto [a, b] = inexact2("kl_div", p, q);
  return rel_entr(a, b) - a + b;
}

}  // namespace tessera::scipy::special
