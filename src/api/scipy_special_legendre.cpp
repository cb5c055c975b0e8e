// jax.scipy.special's lpmn and lpmn_values (associated Legendre functions by their three-term
// recurrences, unrolled over the static orders and degrees), fresnel (64-point Gauss-Legendre
// quadrature up to |x| = 5, the asymptotic expansions above; custom JVP (sin, cos)(pi x^2 / 2)),
// and sph_harm / sph_harm_y, which need complex dtypes Tessera does not have
// (tessera/scipy_special.h).
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "api/numpy_internal.h"
#include "api/scipy_special_internal.h"
#include "tessera/custom_derivatives.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/scipy_special.h"

namespace tessera::scipy::special {

namespace tnp = tessera::numpy;
using detail::promote_strong;

namespace {

constexpr double kPi = std::numbers::pi;

// ---- associated Legendre functions ----

// P_l^m(z) (with the Condon-Shortley phase (-1)^m, as SciPy) for 0 <= m <= m_max,
// 0 <= l <= n_max, as table[m][l] arrays shaped like z; normalized:
// sqrt((2l+1)/(4 pi) (l-m)!/(l+m)!) P_l^m by its own recurrences (no overflow).
std::vector<std::vector<Array>> legendre_table(int64_t m_max, int64_t n_max, const Array& z,
                                               bool normalized) {
  const Array zero = tnp::zeros_like(z);
  const Array s = tnp::sqrt(tnp::maximum(1.0 - z * z, 0.0));
  std::vector<std::vector<Array>> table(static_cast<size_t>(m_max + 1),
                                        std::vector<Array>(static_cast<size_t>(n_max + 1), zero));
  Array diag = tnp::full_like(z, normalized ? 1 / std::sqrt(4 * kPi) : 1.0);
  for (int64_t m = 0; m <= m_max; ++m) {
    const double md = static_cast<double>(m);
    if (m > 0)
      diag = normalized ? -std::sqrt((2 * md + 1) / (2 * md)) * s * diag : -(2 * md - 1) * s * diag;
    if (m > n_max) break;
    auto& row = table[static_cast<size_t>(m)];
    row[static_cast<size_t>(m)] = diag;
    if (m + 1 <= n_max)
      row[static_cast<size_t>(m + 1)] =
          (normalized ? std::sqrt(2 * md + 3) : 2 * md + 1) * z * diag;
    for (int64_t l = m + 2; l <= n_max; ++l) {
      const double ld = static_cast<double>(l);
      const Array& p1 = row[static_cast<size_t>(l - 1)];
      const Array& p2 = row[static_cast<size_t>(l - 2)];
      if (normalized) {
        const double c1 = std::sqrt((4 * ld * ld - 1) / (ld * ld - md * md));
        const double c2 = std::sqrt(((2 * ld + 1) * ((ld - 1) * (ld - 1) - md * md)) /
                                    ((2 * ld - 3) * (ld * ld - md * md)));
        row[static_cast<size_t>(l)] = c1 * z * p1 - c2 * p2;
      } else {
        row[static_cast<size_t>(l)] = ((2 * ld - 1) * z * p1 - (ld + md - 1) * p2) / (ld - md);
      }
    }
  }
  return table;
}

Array check_lpmn(const char* op, int64_t m, int64_t n, const ArrayLike& zl) {
  if (m < 0 || n < 0)
    throw ValueError(op_message(op, "m and n must be non-negative, got m=" + std::to_string(m) +
                                        ", n=" + std::to_string(n)));
  if (n < m)
    throw ValueError(op_message(op, "Degree " + std::to_string(n) +
                                        " must be greater than or equal to order " +
                                        std::to_string(m) + "."));
  const Array& z = zl.array();
  tnp::detail::check_defined(op, z);
  if (z.dtype() != DType::kFloat32 && z.dtype() != DType::kFloat64)
    throw TypeError(op_message(op, "z.dtype=" + tnp::detail::dtype_str(z.dtype()) +
                                       " is not supported, see docstring for supported types. (" +
                                       op + " takes float32 or float64)"));
  if (z.ndim() != 1)
    throw ValueError(op_message(op, "z must be a 1D array. (" + std::string(op) + " got shape " +
                                        tnp::detail::tuple_str(z.shape()) + ")"));
  return tnp::detail::convert(op, z, z.dtype());
}

Array stack_table(const std::vector<std::vector<Array>>& table) {
  std::vector<Array> rows;
  rows.reserve(table.size());
  for (const auto& row : table) rows.push_back(tnp::stack(row, 0));
  return tnp::stack(rows, 0);
}

// ---- Fresnel integrals ----

struct GaussLegendre {
  std::array<double, 64> nodes, weights;
};

// The 64-point Gauss-Legendre rule on [-1, 1]: Newton's method on P_64 from Chebyshev guesses.
const GaussLegendre& gauss_legendre_64() {
  static const GaussLegendre gl = [] {
    constexpr int n = 64;
    GaussLegendre r{};
    for (int i = 0; i < n / 2; ++i) {
      long double x = std::cos(kPi * (i + 0.75) / (n + 0.5));
      long double dp = 0;
      for (int it = 0; it < 100; ++it) {
        long double p0 = 1, p1 = x;
        for (int k = 2; k <= n; ++k) {
          const long double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (x * p1 - p0) / (x * x - 1);
        const long double dx = p1 / dp;
        x -= dx;
        if (std::fabs(static_cast<double>(dx)) < 1e-19) break;
      }
      const double w = static_cast<double>(2 / ((1 - x * x) * dp * dp));
      r.nodes[static_cast<size_t>(i)] = -static_cast<double>(x);
      r.nodes[static_cast<size_t>(n - 1 - i)] = static_cast<double>(x);
      r.weights[static_cast<size_t>(i)] = w;
      r.weights[static_cast<size_t>(n - 1 - i)] = w;
    }
    return r;
  }();
  return gl;
}

// (sin, cos)(pi x^2 / 2) with x^2 reduced modulo 4 in double-length arithmetic (Dekker's
// product), so that large x keep their phase.
std::pair<Array, Array> sincos_pi_half_sq(const Array& x) {
  const double split = x.dtype() == DType::kFloat64 ? 134217729.0 : 4097.0;
  const Array t = split * x;
  const Array hi = t - (t - x);
  const Array lo = x - hi;
  const Array p = x * x;
  const Array err = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo;
  Array r = p - 4.0 * tnp::floor(p / 4.0);
  r = r + err;
  r = r - 4.0 * tnp::floor(r / 4.0);
  const Array ang = (kPi / 2) * r;
  return {tnp::sin(ang), tnp::cos(ang)};
}

std::pair<Array, Array> fresnel_impl(const Array& x) {
  const Array ax = tnp::abs(x);
  const Array big = ax > 5;
  // |x| <= 5: Gauss-Legendre quadrature of the smooth integrands on [0, |x|].
  const GaussLegendre& gl = gauss_legendre_64();
  const Array xs = tnp::where(big, 0.0, ax);
  const Shape q{64};
  const Array nodes =
      tnp::array(std::vector<double>(gl.nodes.begin(), gl.nodes.end()), q, x.dtype());
  const Array weights =
      tnp::array(std::vector<double>(gl.weights.begin(), gl.weights.end()), q, x.dtype());
  const Array tq = 0.5 * tnp::expand_dims(xs, -1) * (nodes + 1.0);
  const Array ang = (kPi / 2) * tq * tq;
  const Array s_q = 0.5 * xs * tnp::sum(weights * tnp::sin(ang), -1);
  const Array c_q = 0.5 * xs * tnp::sum(weights * tnp::cos(ang), -1);
  // |x| > 5: 1/2 plus the auxiliary functions f, g by their asymptotic series in
  // 1 / (pi x^2)^2 (12 terms: below eps from |x| = 5 on).
  const Array xl = tnp::where(big, ax, 10.0);
  const Array u = 1.0 / (kPi * xl * xl);
  const Array u2 = u * u;
  std::vector<double> f_c{1.0}, g_c{1.0};
  for (int k = 1; k < 12; ++k) {
    f_c.push_back(f_c.back() * -(4.0 * k - 3) * (4.0 * k - 1));
    g_c.push_back(g_c.back() * -(4.0 * k - 1) * (4.0 * k + 1));
  }
  Array f_sum = tnp::zeros_like(xl), g_sum = tnp::zeros_like(xl);
  for (int k = 11; k >= 0; --k) {
    f_sum = f_sum * u2 + f_c[static_cast<size_t>(k)];
    g_sum = g_sum * u2 + g_c[static_cast<size_t>(k)];
  }
  const Array f = f_sum / (kPi * xl);
  const Array g = g_sum * u / (kPi * xl);
  const auto [sn, cs] = sincos_pi_half_sq(xl);
  const Array s_a = 0.5 - f * cs - g * sn;
  const Array c_a = 0.5 + f * sn - g * cs;
  const Array inf = tnp::isinf(x);
  const Array s = tnp::where(inf, 0.5, tnp::where(big, s_a, s_q));
  const Array c = tnp::where(inf, 0.5, tnp::where(big, c_a, c_q));
  const Array sign = tnp::where(x < 0, -1.0, tnp::ones_like(x));
  return {sign * s, sign * c};
}

std::pair<Array, Array> fresnel_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& a) {
                          return fresnel_impl(a);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    const auto [sn, cs] = sincos_pi_half_sq(a);
    return std::make_pair(fresnel_impl(a), std::make_pair(t * sn, t * cs));
  });
  return f(x);
}

}  // namespace

Array lpmn_values(int64_t m, int64_t n, const ArrayLike& z, bool is_normalized) {
  const Array zz = check_lpmn("lpmn_values", m, n, z);
  return stack_table(legendre_table(m, n, zz, is_normalized));
}

std::pair<Array, Array> lpmn(int64_t m, int64_t n, const ArrayLike& z) {
  const Array zz = check_lpmn("lpmn", m, n, z);
  const auto table = legendre_table(m, n, zz, false);
  // (z^2 - 1) P_l^k' = l z P_l^k - (l + k) P_{l-1}^k.
  const Array zero = tnp::zeros_like(zz);
  std::vector<std::vector<Array>> deriv(static_cast<size_t>(m + 1));
  for (int64_t k = 0; k <= m; ++k) {
    for (int64_t l = 0; l <= n; ++l) {
      if (l < k || l == 0) {
        deriv[static_cast<size_t>(k)].push_back(zero);
        continue;
      }
      const Array& cur = table[static_cast<size_t>(k)][static_cast<size_t>(l)];
      const Array prev =
          l - 1 >= k ? table[static_cast<size_t>(k)][static_cast<size_t>(l - 1)] : zero;
      deriv[static_cast<size_t>(k)].push_back(
          (static_cast<double>(l) * zz * cur - static_cast<double>(l + k) * prev) /
          (zz * zz - 1.0));
    }
  }
  return {stack_table(table), stack_table(deriv)};
}

std::pair<Array, Array> fresnel(const ArrayLike& x) {
  return fresnel_custom(promote_strong("fresnel", {x.array()})[0]);
}

Array sph_harm(const ArrayLike&, const ArrayLike&, const ArrayLike&, const ArrayLike&,
               std::optional<int64_t>) {
  throw NotImplementedError(op_message(
      "sph_harm",
      "jax.scipy.special.sph_harm returns complex values (complex64/complex128), which Tessera "
      "does not have; the real parts are lpmn_values(m, n, cos(phi), true) * cos(m * theta)"));
}

Array sph_harm_y(const ArrayLike&, const ArrayLike&, const ArrayLike&, const ArrayLike&, int,
                 std::optional<int64_t>) {
  throw NotImplementedError(
      op_message("sph_harm_y",
                 "jax.scipy.special.sph_harm_y returns complex values (complex64/complex128), "
                 "which Tessera does not have"));
}

}  // namespace tessera::scipy::special
