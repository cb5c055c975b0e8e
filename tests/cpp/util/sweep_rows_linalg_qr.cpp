// Sweep rows of the Householder QR family (src/prims/linalg_householder.cpp: geqrf, geqp3,
// householder_product) and of qr with pivoting (src/prims/linalg_qr.cpp). Forward references:
// tests/oracle/oracle_linalg_qr.py (LAPACK through scipy.linalg.lapack, float64). The raw
// factorizations are deterministic LAPACK outputs, compared as they are; JAX defines no
// derivative for them (Deriv::kNone here; test_linalg_qr_raw.cpp checks that differentiating
// raises). Pivoted qr is differentiable away from pivot ties: its rows normalize R's diagonal to
// be positive (as the unpivoted qr rows) and redraw inputs whose pivot choice or R's diagonal is
// within min_kink of a tie or of zero.
#include <algorithm>
#include <cmath>
#include <string>

#include "tessera/linalg_spectral.h"
#include "util/oracle.h"
#include "util/sweep_rows.h"
#include "util/test_util.h"

namespace tessera::sweep {

namespace {

using testing::json_bool;
using testing::json_obj;
using testing::json_str;
namespace ll = lax::linalg;

Row base_row(const std::string& name, const std::string& prim, const std::string& op,
             const std::string& params) {
  Row r;
  r.name = name;
  r.prim = prim;
  r.family = "linalg_qr";
  r.operands = {any()};
  r.dtypes = {DType::kFloat32, DType::kFloat64};
  r.oracle_op = op;
  r.oracle_params = params;
  r.vmap_exact = false;  // the products may block differently batched
  return r;
}

// q and r of the reduced pivoted qr scaled by sign(diag(r)), and its permutation.
std::vector<Array> normalized_pivoted_qr(const Array& x) {
  std::vector<Array> qrp = ll::qr(x, /*pivoting=*/true, /*full_matrices=*/false);
  Array d = lax::sign(numpy::diagonal(qrp[1], 0, -2, -1));
  Shape row = d.shape(), col = d.shape();
  row.insert(row.end() - 1, 1);
  col.push_back(1);
  return {lax::mul(qrp[0], lax::reshape(d, row)), lax::mul(qrp[1], lax::reshape(d, col)), qrp[2]};
}

// The distance from a pivot tie or a zero on R's diagonal: at step j ?geqp3 picks the column of
// largest partial norm, |r_jj|; the others' partial norms are |r[j:, c]| (c > j), which must stay
// below it (and |r_jj| away from 0) for the permutation to be locally constant.
double pivot_gap(const Args& x) {
  Array r = ll::qr(x[0], true, false)[1];
  const Shape& s = r.shape();
  const int64_t k = s[s.size() - 2], n = s.back();
  if (r.size() == 0) return 1.0;
  const auto v = testing::to_doubles(r);
  double gap = 1.0;
  for (size_t b = 0; b < v.size() / static_cast<size_t>(k * n); ++b) {
    const double* rb = v.data() + b * k * n;
    for (int64_t j = 0; j < k; ++j) {
      const double d = std::abs(rb[j * n + j]);
      gap = std::min(gap, d);
      for (int64_t c = j + 1; c < n; ++c) {
        double ss = 0;
        for (int64_t i = j; i <= std::min(c, k - 1); ++i) ss += rb[i * n + c] * rb[i * n + c];
        gap = std::min(gap, d - std::sqrt(ss));
      }
    }
  }
  return gap;
}

}  // namespace

std::vector<Row> rows_linalg_qr() {
  std::vector<Row> t;
  const std::vector<std::vector<Shape>> any_matrix = {{{4, 3}},    {{3, 5}}, {{2, 3, 3}}, {{1, 1}},
                                                      {{0, 2, 3}}, {{3, 0}}, {{0, 3}}};
  for (const char* out : {"h", "taus"}) {
    Row r = base_row(std::string("geqrf_") + out, "geqrf", "linalg.geqrf",
                     json_obj({{"out", json_str(out)}}));
    r.shapes = any_matrix;
    const bool h = std::string(out) == "h";
    r.fn = [h](const Args& x) {
      auto [a, taus] = ll::geqrf(x[0]);
      return h ? a : taus;
    };
    r.deriv = Deriv::kNone;  // JAX defines no derivative for geqrf
    t.push_back(r);
  }
  for (int i = 0; i < 3; ++i) {
    const char* out = i == 0 ? "h" : i == 1 ? "jpvt" : "taus";
    Row r = base_row(std::string("geqp3_") + out, "geqp3", "linalg.geqp3",
                     json_obj({{"out", json_str(out)}}));
    r.operands = {any(), index(1)};  // jpvt all zero: every column free
    r.shapes.clear();
    for (const auto& p : any_matrix) {
      Shape js(p[0].begin(), p[0].end() - 2);  // jpvt: a's batch dims + (n,)
      js.push_back(p[0].back());
      r.shapes.push_back({p[0], js});
    }
    r.fn = [i](const Args& x) { return ll::geqp3(x[0], x[1])[static_cast<size_t>(i)]; };
    r.deriv = Deriv::kNone;  // JAX defines no derivative for geqp3
    t.push_back(r);
  }
  {
    Row r =
        base_row("householder_product", "householder_product", "linalg.householder_product", "{}");
    r.operands = {any(), any(-1.0, 1.0)};
    r.shapes = {{{4, 3}, {3}},       {{3, 3}, {2}}, {{2, 5, 2}, {2, 2}}, {{1, 1}, {1}},
                {{0, 3, 2}, {0, 1}}, {{3, 0}, {0}}, {{4, 2}, {0}}};
    r.fn = [](const Args& x) { return ll::householder_product(x[0], x[1]); };
    r.deriv = Deriv::kNone;  // JAX defines no derivative for householder_product
    t.push_back(r);
  }
  for (const char* out : {"q", "r", "p"}) {
    Row r = base_row(std::string("qr_pivoting_") + out, "qr", "linalg.qr_pivoting",
                     json_obj({{"out", json_str(out)},
                               {"mode", json_str("economic")},
                               {"normalize", json_bool(true)}}));
    // Tall and square (the JVP's cases), as the unpivoted qr rows.
    r.shapes = {{{4, 3}}, {{3, 3}}, {{2, 5, 2}}, {{0, 3, 2}}};
    const size_t which = out[0] == 'q' ? 0 : out[0] == 'r' ? 1 : 2;
    r.fn = [which](const Args& x) { return normalized_pivoted_qr(x[0])[which]; };
    r.kink = pivot_gap;
    r.min_kink = 0.05;
    if (which == 2) r.deriv = Deriv::kZeroTangent;  // the permutation is piecewise constant
    r.jvp_rtol = 1e-5;
    r.jvp2_rtol = 1e-4;
    r.adjoint_tol_scale = 16.0;
    t.push_back(r);
  }
  return t;
}

}  // namespace tessera::sweep
