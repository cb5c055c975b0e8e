// Sweep rows of the spectral linear algebra family (src/prims/linalg_{eigh,svd,qr}.cpp). The
// decompositions are unique only up to signs (and order, for eigh's and svd's vectors), so each
// row returns a unique function of them: eigenvalues and squared eigenvector entries, singular
// values and squared singular vector entries, and the QR factors normalized to a positive
// diagonal of R. Forward references: tests/oracle/oracle_linalg_spectral.py (np.linalg in
// float64). The derivative checks redraw inputs whose eigenvalues / singular values are closer
// than min_kink (where the vectors' derivatives blow up). float32/float64 only (LAPACK).
#include <algorithm>
#include <string>

#include "tessera/linalg_spectral.h"
#include "util/oracle.h"
#include "util/sweep_rows.h"
#include "util/test_util.h"

namespace tessera::sweep {

namespace {

using testing::json_obj;
using testing::json_str;
namespace ll = lax::linalg;

Row base_row(const std::string& name, const std::string& prim, const std::string& op,
             const std::string& out) {
  Row r;
  r.name = name;
  r.prim = prim;
  r.family = "linalg_spectral";
  r.operands = {any()};
  r.dtypes = {DType::kFloat32, DType::kFloat64};
  r.oracle_op = op;
  r.oracle_params = json_obj({{"out", json_str(out)}});
  r.vmap_exact = false;  // the rows' products may block differently batched
  r.jvp_rtol = 1e-5;
  r.jvp2_rtol = 1e-4;
  r.adjoint_tol_scale = 16.0;
  return r;
}

double to_doubles_min(const Array& a) {
  const auto v = testing::to_doubles(a);
  return *std::min_element(v.begin(), v.end());
}

// The distance of the nearest pair of values (eigenvalues or singular values) of x.
double gap(const Array& v) { return v.size() < 2 ? 1.0 : min_pairwise_gap(v); }

// q and r scaled by sign(diag(r)): R's diagonal positive (unique for full-rank x).
std::pair<Array, Array> normalized_qr(const Array& x) {
  auto [q, r] = ll::qr(x, false);
  Array d = lax::sign(numpy::diagonal(r, 0, -2, -1));
  Shape row = d.shape(), col = d.shape();
  row.insert(row.end() - 1, 1);
  col.push_back(1);
  return {lax::mul(q, lax::reshape(d, row)), lax::mul(r, lax::reshape(d, col))};
}

}  // namespace

std::vector<Row> rows_linalg_spectral() {
  std::vector<Row> t;
  const std::vector<std::vector<Shape>> square = {{{3, 3}}, {{2, 4, 4}}, {{1, 1}}, {{0, 2, 2}}};
  for (const char* out : {"w", "vsq"}) {
    Row r = base_row(std::string("eigh_") + out, "eigh", "linalg.eigh", out);
    r.shapes = square;
    const bool w = std::string(out) == "w";
    r.fn = [w](const Args& x) {
      auto [v, ev] = ll::eigh(x[0]);
      return w ? ev : lax::mul(v, v);
    };
    r.kink = [](const Args& x) { return gap(ll::eigh(x[0]).second); };
    r.min_kink = 0.05;
    t.push_back(r);
  }
  for (const char* out : {"s", "usq", "vsq"}) {
    Row r = base_row(std::string("svd_") + out, "svd", "linalg.svd", out);
    r.shapes = {{{4, 3}}, {{3, 5}}, {{2, 3, 3}}, {{1, 1}}, {{0, 2, 3}}};
    const std::string o = out;
    r.fn = [o](const Args& x) {
      if (o == "s") return ll::svd(x[0], false, false)[0];
      std::vector<Array> usv = ll::svd(x[0], false, true);
      const Array& f = o == "usq" ? usv[0] : usv[2];
      return lax::mul(f, f);
    };
    // Vectors need distinct, nonzero singular values (s = 0 is the |.| kink of the values).
    r.kink = [](const Args& x) {
      Array s = ll::svd(x[0], false, false)[0];
      if (s.size() == 0) return 1.0;
      const double smallest = to_doubles_min(s);
      return std::min(gap(s), smallest);
    };
    r.min_kink = 0.05;
    t.push_back(r);
  }
  for (const char* out : {"q", "r"}) {
    Row r = base_row(std::string("qr_") + out, "qr", "linalg.qr", out);
    // Tall and square (the JVP's cases). Not 1x1: there R = |x| has a second derivative of
    // exactly 0, which the second-order adjoint check (relative to |u| |L w|) cannot resolve
    // from rounding; test_linalg_spectral.cpp covers 1x1.
    r.shapes = {{{4, 3}}, {{3, 3}}, {{2, 5, 2}}, {{0, 3, 2}}};
    const bool q = std::string(out) == "q";
    r.fn = [q](const Args& x) {
      auto [qq, rr] = normalized_qr(x[0]);
      return q ? qq : rr;
    };
    // R's diagonal away from 0 (the sign normalization's kink, and rank deficiency).
    r.kink = [](const Args& x) {
      Array d = numpy::abs(numpy::diagonal(ll::qr(x[0], false).second, 0, -2, -1));
      return d.size() == 0 ? 1.0 : to_doubles_min(d);
    };
    r.min_kink = 0.05;
    t.push_back(r);
  }
  return t;
}

}  // namespace tessera::sweep
