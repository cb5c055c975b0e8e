// Sweep rows of special.cpp's primitives: operands inside the smooth domains, references from
// mpmath (tests/oracle/oracle_special.py). Derivatives that JAX does not define (zeta in x,
// igamma_grad_a) are left out here (diff = false, behind stop_gradient) and tested as errors in
// test_special.cpp;
// igamma/igammac in a differentiate through igamma_grad_a, so those rows are first order only
// and second order is swept in x alone.
#include <string>

#include "util/oracle.h"
#include "util/sweep_rows.h"

namespace tessera::sweep {

namespace {

using testing::json_int;
using testing::json_obj;

Row special_row(std::string name, std::vector<Operand> operands) {
  Row r;
  r.prim = name;
  r.oracle_op = "lax." + name;
  r.name = std::move(name);
  r.family = "special";
  r.operands = std::move(operands);
  r.shapes = r.operands.size() == 1 ? kUnaryShapes : kBinaryShapes;
  r.dtypes = floats();
  // Second derivatives of the special functions sum cancelling terms (betainc's near its mode,
  // the Bessel functions' i0e/i1e/x terms): linearized and transposed they round differently by
  // a few times 64 eps of |u| |L w| (seen: 2.5e-14 for bessel_i1e, 2.6e-14 for betainc).
  r.adjoint_tol_scale = 16;
  return r;
}

Row unary(std::string name, Array (*op)(const Array&), Operand x) {
  Row r = special_row(std::move(name), {x});
  r.fn = [op](const Args& a) { return op(a[0]); };
  return r;
}

// Operands with diff = false go through stop_gradient: the reverse-mode checks linearize in
// every operand, and a tangent in those would raise.
Row binary(std::string name, Array (*op)(const Array&, const Array&), Operand a, Operand b) {
  Row r = special_row(std::move(name), {a, b});
  const bool da = a.diff, db = b.diff;
  r.fn = [op, da, db](const Args& v) {
    return op(da ? v[0] : stop_gradient(v[0]), db ? v[1] : stop_gradient(v[1]));
  };
  return r;
}

Operand fixed(Operand o) {
  o.diff = false;
  return o;
}

// polygamma(m, x) with the integer order m a constant of x's dtype (the oracle gets it as a
// param); m has no derivative.
Row polygamma(int64_t m) {
  Row r = special_row("polygamma", {any(0.5, 5.0)});
  r.name = "polygamma_m" + std::to_string(m);
  r.fn = [m](const Args& a) {
    return lax::polygamma(numpy::scalar(static_cast<double>(m), a[0].dtype()), a[0]);
  };
  r.oracle_params = json_obj({{"m", json_int(m)}});
  return r;
}

}  // namespace

std::vector<Row> rows_special() {
  std::vector<Row> rows;
  rows.push_back(unary("erf", lax::erf, any(-2.5, 2.5)));
  rows.push_back(unary("erfc", lax::erfc, any(-2.0, 3.0)));
  rows.push_back(unary("erf_inv", lax::erf_inv, any(-0.9, 0.9)));
  rows.push_back(unary("lgamma", lax::lgamma, any(0.5, 5.0)));
  rows.push_back(unary("digamma", lax::digamma, any(0.5, 5.0)));
  for (int64_t m = 0; m <= 3; ++m) rows.push_back(polygamma(m));
  // zeta: differentiable in q only (as JAX).
  rows.push_back(binary("zeta", lax::zeta, fixed(any(2.0, 5.0)), any(0.5, 3.0)));
  using BinaryFn = Array (*)(const Array&, const Array&);
  const std::pair<const char*, BinaryFn> incomplete[] = {{"igamma", lax::igamma},
                                                         {"igammac", lax::igammac}};
  for (auto [name, op] : incomplete) {
    // In a and x (first order: the second derivative in a would need igamma_grad_a's).
    Row both = binary(name, op, any(0.5, 4.0), any(0.2, 5.0));
    both.second_order = false;
    rows.push_back(both);
    // In x alone, second order as well.
    Row in_x = binary(name, op, fixed(any(0.5, 4.0)), any(0.2, 5.0));
    in_x.name = std::string(name) + "_in_x";
    rows.push_back(in_x);
  }
  // igamma_grad_a has no derivative rule (JAX raises): forward and vmap only.
  Row grad_a =
      binary("igamma_grad_a", lax::igamma_grad_a, fixed(any(0.5, 4.0)), fixed(any(0.2, 5.0)));
  grad_a.deriv = Deriv::kZeroTangent;
  rows.push_back(grad_a);
  rows.push_back(unary("bessel_i0e", lax::bessel_i0e, any(-6.0, 6.0)));
  rows.push_back(unary("bessel_i1e", lax::bessel_i1e, any(-6.0, 6.0)));
  // random_gamma_grad has no derivative rule (JAX has none): forward and vmap only.
  Row gamma_grad = binary("random_gamma_grad", lax::random_gamma_grad, fixed(any(0.5, 4.0)),
                          fixed(any(0.3, 5.0)));
  gamma_grad.deriv = Deriv::kZeroTangent;
  rows.push_back(gamma_grad);
  // betainc(a, b, x): differentiable in x only (as JAX); a and b behind stop_gradient.
  Row beta = special_row("betainc", {fixed(any(0.5, 4.0)), fixed(any(0.5, 4.0)), any(0.05, 0.95)});
  beta.prim = "regularized_incomplete_beta";
  beta.fn = [](const Args& v) {
    return lax::betainc(stop_gradient(v[0]), stop_gradient(v[1]), v[2]);
  };
  beta.shapes = {{{3, 4}, {3, 4}, {3, 4}},
                 {{}, {}, {3, 4}},
                 {{}, {}, {}},
                 {{3, 1}, {1, 4}, {3, 4}},
                 {{0, 3}, {1, 3}, {0, 3}}};
  rows.push_back(beta);
  return rows;
}

}  // namespace tessera::sweep
