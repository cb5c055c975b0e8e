// jax.scipy.special's exponential integrals (exp1, expi, expn) and Spence's function
// (tessera/scipy_special.h). The integrals sum their power series (up to x = 1, or 40 for Ei),
// continued fractions (modified Lentz) or asymptotic series in lax.while_loops to relative
// precision eps; spence is the dilogarithm's Bernoulli series after reflection and inversion.
// Derivatives are custom JVPs from the closed forms.
#include <cmath>
#include <limits>
#include <numbers>
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
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEuler = 0.57721566490153286061;

// E1(x) for x > 0: the series -gamma - log x + sum (-1)^(k+1) x^k / (k k!) up to x = 1, the
// continued fraction e^-x / (x + 1 - 1 / (x + 3 - 4 / (x + 5 - ...))) above.
Array e1_positive(const Array& x) {
  const double eps = finfo(x.dtype()).eps;
  const Array small = x <= 1;
  const Array xs = tnp::where(small, x, 1.0);
  const Array series = series_loop(
      [&](const std::vector<Array>& s) {
        const Array &k = s[0], &done = s[1];
        const Array term = s[2] * (-xs) / k;
        const Array add = tnp::where(done, 0.0, -term / k);
        const Array total = s[3] + add;
        return std::vector<Array>{k + 1.0, done | (tnp::abs(add) <= eps * tnp::abs(total)), term,
                                  total};
      },
      {scalar_like(x, 1), ~small, tnp::ones_like(x), -kEuler - tnp::log(xs)}, 60)[3];
  const Array xl = tnp::where(small, 2.0, x);
  const double tiny = finfo(x.dtype()).tiny / eps;
  const Array b0 = xl + 1.0;
  const Array frac =
      series_loop(
          [&](const std::vector<Array>& s) {
            const Array &i = s[0], &done = s[1];
            const Array an = -i * i;
            const Array b = s[2] + 2.0;
            const Array d = 1.0 / (an * s[4] + b);
            const Array c = b + an / s[3];
            const Array delta = c * d;
            const Array h = tnp::where(done, s[5], s[5] * delta);
            return std::vector<Array>{i + 1.0, done | (tnp::abs(delta - 1.0) <= eps), b, c, d, h};
          },
          {scalar_like(x, 1), small, b0, tnp::full_like(x, 1 / tiny), 1.0 / b0, 1.0 / b0}, 500)[5] *
      tnp::exp(-xl);
  return tnp::where(small, series, frac);
}

// Ei(x) for x > 0: gamma + log x + sum x^k / (k k!) up to x = 40, the asymptotic
// e^x / x sum k! / x^k (cut at its smallest term) above.
Array ei_positive(const Array& x) {
  const double eps = finfo(x.dtype()).eps;
  const Array big = x > 40;
  const Array xs = tnp::where(big, 1.0, x);
  const Array series = series_loop(
      [&](const std::vector<Array>& s) {
        const Array &k = s[0], &done = s[1];
        const Array term = s[2] * xs / k;
        const Array add = tnp::where(done, 0.0, term / k);
        const Array total = s[3] + add;
        return std::vector<Array>{k + 1.0, done | (add <= eps * tnp::abs(total)), term, total};
      },
      {scalar_like(x, 1), big, tnp::ones_like(x), kEuler + tnp::log(xs)}, 400)[3];
  const Array xl = tnp::where(big, x, 50.0);
  const Array asym = series_loop(
                         [&](const std::vector<Array>& s) {
                           const Array &k = s[0], &done = s[1], &term = s[2];
                           const Array next = term * k / xl;
                           const Array stop = done | (next >= term) | (next <= eps * s[3]);
                           return std::vector<Array>{k + 1.0, stop, tnp::where(stop, term, next),
                                                     s[3] + tnp::where(stop, 0.0, next)};
                         },
                         {scalar_like(x, 1), ~big, tnp::ones_like(x), tnp::ones_like(x)}, 60)[3] *
                     tnp::exp(xl) / xl;
  return tnp::where(big, asym, series);
}

Array expi_primal(const Array& x) {
  const Array xp = tnp::where(x > 0, x, 1.0);
  const Array xn = tnp::where(x < 0, -x, 1.0);
  Array out = tnp::where(x > 0, ei_positive(xp), -e1_positive(xn));
  out = tnp::where(x == 0, -kInf, out);
  return tnp::where(tnp::isnan(x), x, out);
}

Array exp1_primal(const Array& x) {
  const Array xp = tnp::where(x > 0, x, 1.0);
  Array out = tnp::where(x > 0, e1_positive(xp), kNaN);
  out = tnp::where(x == 0, kInf, out);
  return tnp::where(tnp::isnan(x), x, out);
}

Array expi_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& a) {
                          return expi_primal(a);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    Array out = expi_custom(a);
    return std::make_pair(out, tnp::astype(t * tnp::exp(a) / a, out.dtype()));
  });
  return f(x);
}

Array exp1_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& a) {
                          return exp1_primal(a);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    Array out = exp1_custom(a);
    return std::make_pair(out, tnp::astype(-t * tnp::exp(-a) / a, out.dtype()));
  });
  return f(x);
}

// E_n(x) for integer n >= 0, x >= 0 (NaN otherwise): the series up to x = 1 (its k = n - 1
// term replaced by the log term), the continued fraction above.
Array expn_impl(const Array& n, const Array& x) {
  const double eps = finfo(x.dtype()).eps;
  const Array nn = tnp::maximum(n, 0.0);
  const Array small = x <= 1;
  const Array xs = tnp::where(small & (x > 0), x, 0.5);
  const Array psi = lax::digamma(tnp::maximum(nn, 1.0));  // -gamma + sum_{i<n} 1/i
  const Array start =
      tnp::where(nn == 1, -tnp::log(xs) - kEuler, 1.0 / tnp::where(nn == 1, 1.0, nn - 1.0));
  const Array series = series_loop(
      [&](const std::vector<Array>& s) {
        const Array &k = s[0], &done = s[1];
        const Array fact = s[2] * (-xs) / k;
        const Array at_log = k == nn - 1.0;
        const Array log_term = fact * (-tnp::log(xs) + psi);
        Array add =
            tnp::where(at_log, log_term, -fact / (k - nn + 1.0 + tnp::astype(at_log, x.dtype())));
        add = tnp::where(done, 0.0, add);
        const Array total = s[3] + add;
        return std::vector<Array>{
            k + 1.0, done | ((tnp::abs(add) <= eps * tnp::abs(total)) & (k >= nn - 1.0)), fact,
            total};
      },
      {scalar_like(x, 1), ~small, tnp::ones_like(x), start}, 200)[3];
  const Array xl = tnp::where(small, 2.0, x);
  const double tiny = finfo(x.dtype()).tiny / eps;
  const Array b0 = xl + nn;
  const Array frac =
      series_loop(
          [&](const std::vector<Array>& s) {
            const Array &i = s[0], &done = s[1];
            const Array an = -i * (nn - 1.0 + i);
            const Array b = s[2] + 2.0;
            const Array d = 1.0 / (an * s[4] + b);
            const Array c = b + an / s[3];
            const Array delta = c * d;
            const Array h = tnp::where(done, s[5], s[5] * delta);
            return std::vector<Array>{i + 1.0, done | (tnp::abs(delta - 1.0) <= eps), b, c, d, h};
          },
          {scalar_like(x, 1), small, b0, tnp::full_like(x, 1 / tiny), 1.0 / b0, 1.0 / b0}, 500)[5] *
      tnp::exp(-xl);
  Array out = tnp::where(small, series, frac);
  out = tnp::where(nn == 0, tnp::exp(-x) / x, out);
  const Array at_zero = tnp::where(nn > 1, 1.0 / tnp::where(nn > 1, nn - 1.0, 1.0), kInf);
  out = tnp::where(x == 0, at_zero, out);
  const Array bad = (n < 0) | (x < 0) | (n != tnp::floor(n)) | tnp::isnan(x) | tnp::isnan(n);
  return tnp::where(bad, kNaN, out);
}

Array expn_custom(const Array& n, const Array& x) {
  static const auto f = custom_jvp([](const Array& a, const Array& b) {
                          return expn_impl(a, b);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const auto& [a, b] = primals;
    const Array& t = std::get<1>(tangents);
    Array out = expn_custom(a, b);
    // d/dx E_n(x) = -E_{n-1}(x); E_{-1}(x) = e^-x (x + 1) / x^2.
    const Array prev = tnp::where(a == 0, tnp::exp(-b) * (b + 1.0) / (b * b),
                                  expn_impl(tnp::maximum(a - 1.0, 0.0), b));
    return std::make_pair(out, tnp::astype(-t * prev, out.dtype()));
  });
  return f(n, x);
}

// ---- Spence's function ----

// Li2(u) for u in [-1, 1/2]: sum_n B_n w^(n+1) / (n+1)! in w = -log(1 - u) (|w| <= log 2),
// with B_{2k} / (2k + 1)! = (-1)^(k+1) 2 zeta(2k) / ((2 pi)^(2k) (2k + 1)) for k = 1..14.
Array li2_near_zero(const Array& u) {
  static const std::vector<double> coeffs = [] {
    std::vector<double> c;
    const long double two_pi = 2 * std::numbers::pi_v<long double>;
    long double pw = 1;
    for (int k = 1; k <= 14; ++k) {
      pw *= two_pi * two_pi;
      const long double v = 2 * detail::zeta_even(k) / pw / (2 * k + 1);
      c.push_back(static_cast<double>(k % 2 ? v : -v));
    }
    return c;
  }();
  const Array w = -tnp::log1p(-u);
  const Array w2 = w * w;
  Array total = tnp::zeros_like(w);
  for (auto it = coeffs.rbegin(); it != coeffs.rend(); ++it) total = (total + *it) * w2;
  return w - w2 / 4.0 + w * total;
}

// Li2(u) for u <= 1, reduced to [-1, 1/2] by the reflection Li2(u) = pi^2/6 -
// log(u) log(1-u) - Li2(1-u) and the inversion Li2(u) = -pi^2/6 - log^2(-u)/2 - Li2(1/u).
Array li2_real(const Array& u) {
  const double zeta2 = std::numbers::pi * std::numbers::pi / 6;
  const Array upper = u > 0.5;
  const Array lower = u < -1;
  const Array mid = tnp::where(upper | lower, 0.0, u);
  const Array up = tnp::where(upper, u, 0.75);
  const Array lo = tnp::where(lower, u, -2.0);
  Array v_up = zeta2 - tnp::log(up) * tnp::log1p(-up) - li2_near_zero(1.0 - up);
  v_up = tnp::where(up == 1, zeta2, v_up);
  const Array log_neg = tnp::log(-lo);
  const Array v_lo = -zeta2 - 0.5 * log_neg * log_neg - li2_near_zero(1.0 / lo);
  return tnp::where(upper, v_up, tnp::where(lower, v_lo, li2_near_zero(mid)));
}

Array spence_primal(const Array& x) {
  const Array out = li2_real(1.0 - tnp::where(x >= 0, x, 1.0));
  return tnp::where((x < 0) | tnp::isnan(x), kNaN, out);
}

Array spence_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& a) {
                          return spence_primal(a);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    Array out = spence_custom(a);
    const Array one = a == 1;
    const Array slope = tnp::where(one, -1.0, tnp::log(a) / (1.0 - tnp::where(one, 0.0, a)));
    return std::make_pair(out, tnp::astype(t * slope, out.dtype()));
  });
  return f(x);
}

}  // namespace

Array expi(const ArrayLike& x) { return expi_custom(promote_strong("expi", {x.array()})[0]); }
Array exp1(const ArrayLike& x) { return exp1_custom(promote_strong("exp1", {x.array()})[0]); }

Array expn(const ArrayLike& n, const ArrayLike& x) {
  std::vector<Array> v = promote_strong("expn", {n.array(), x.array()});
  return expn_custom(v[0], v[1]);
}

Array spence(const ArrayLike& x) { return spence_custom(promote_strong("spence", {x.array()})[0]); }

}  // namespace tessera::scipy::special
