// jax.lax.linalg's eigh / svd / qr / geqrf / geqp3 / householder_product (argument checks, then
// one bind of the primitives of src/prims/linalg_{eigh,svd,qr,householder}.cpp) and the
// jnp.linalg / jax.scipy.linalg functions built on them: eigh, eigvalsh, svd, svdvals, qr (also
// mode='raw', and scipy's pivoting), pinv (custom JVP), matrix_rank, lstsq, cond, expm and the
// scipy forms. Everything is Tessera ops, so jit, vmap and grad compose through it.
#include "tessera/linalg_spectral.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/custom_derivatives.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_sort.h"
#include "tessera/linalg_solve.h"
#include "tessera/numpy.h"
#include "tessera/numpy_indexing.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/primitive.h"

namespace tessera {

namespace {

const Primitive& prim(const char* name) { return *find_primitive(name); }

// x with its last two axes swapped.
Array mT(const Array& x) { return numpy::swapaxes(x, -1, -2); }

double eps_of(DType d) {
  return d == DType::kFloat64 ? std::numeric_limits<double>::epsilon()
                              : static_cast<double>(std::numeric_limits<float>::epsilon());
}

Array scalar_of(double v, DType d) { return numpy::scalar(v, d); }

// jnp's promote_dtypes_inexact for one operand.
Array inexact(const char* op, const Array& a) { return numpy::detail::promote_inexact(op, {a})[0]; }

void check_rank2(const char* op, const Array& a) {
  if (a.ndim() < 2)
    throw ValueError(
        op_message(op, std::string("input must be at least 2-dimensional, got shape ") +
                           shape_str(a.shape()) + "."));
}

}  // namespace

// ======================= jax.lax.linalg =======================
namespace lax::linalg {

Array symmetrize(const Array& x) { return lax::div(lax::add(x, mT(x)), scalar_of(2.0, x.dtype())); }

std::pair<Array, Array> eigh(const Array& x, bool lower, bool symmetrize_input,
                             bool sort_eigenvalues) {
  Array a = x;
  if (symmetrize_input && x.ndim() >= 2 && x.shape()[x.ndim() - 1] == x.shape()[x.ndim() - 2] &&
      (x.dtype() == DType::kFloat32 || x.dtype() == DType::kFloat64))
    a = symmetrize(x);
  std::vector<Array> r = tessera::bind(
      prim("eigh"), {a}, Params{{"lower", lower}, {"sort_eigenvalues", sort_eigenvalues}});
  return {r[0], r[1]};
}

std::vector<Array> svd(const Array& x, bool full_matrices, bool compute_uv) {
  std::vector<Array> r = tessera::bind(
      prim("svd"), {x}, Params{{"full_matrices", full_matrices}, {"compute_uv", compute_uv}});
  if (!compute_uv) return {r[0]};
  return {r[1], r[0], r[2]};
}

std::vector<Array> qr(const Array& x, bool pivoting, bool full_matrices) {
  return tessera::bind(prim("qr"), {x},
                       Params{{"full_matrices", full_matrices}, {"pivoting", pivoting}});
}

std::pair<Array, Array> qr(const Array& x, bool full_matrices) {
  std::vector<Array> r = qr(x, false, full_matrices);
  return {r[0], r[1]};
}

std::pair<Array, Array> geqrf(const Array& a) {
  std::vector<Array> r = tessera::bind(prim("geqrf"), {a}, Params{});
  return {r[0], r[1]};
}

std::vector<Array> geqp3(const Array& a, const Array& jpvt) {
  return tessera::bind(prim("geqp3"), {a, jpvt}, Params{});
}

Array householder_product(const Array& a, const Array& taus) {
  return tessera::bind(prim("householder_product"), {a, taus}, Params{})[0];
}

}  // namespace lax::linalg

// ======================= jnp.linalg / scipy.linalg =======================
namespace linalg {

namespace ll = lax::linalg;

EighResult eigh(const Array& a0, const std::string& UPLO, bool symmetrize_input) {
  if (UPLO != "L" && UPLO != "U")
    throw ValueError(op_message("eigh", "UPLO must be 'L' or 'U', got '" + UPLO + "'."));
  Array a = inexact("eigh", a0);
  auto [v, w] = ll::eigh(a, UPLO == "L", symmetrize_input);
  return {w, v};
}

Array eigvalsh(const Array& a, const std::string& UPLO, bool symmetrize_input) {
  return eigh(a, UPLO, symmetrize_input).eigenvalues;
}

namespace {

// The reversed last axis.
Array rev_last(const Array& x) { return lax::rev(x, {x.ndim() - 1}); }

std::vector<Array> hermitian_svd(const Array& a, bool compute_uv) {
  auto [v, w] = ll::eigh(a);
  Array s = lax::abs(w);
  if (!compute_uv) return {rev_last(lax::sort(s, -1))};
  Array sign = lax::sign(w);
  Array idx = lax::broadcasted_iota(DType::kInt32, s.shape(), s.ndim() - 1);
  std::vector<Array> sorted = lax::sort({s, idx, sign}, -1, true, 1);
  s = rev_last(sorted[0]);
  idx = rev_last(sorted[1]);
  sign = rev_last(sorted[2]);
  Array u = numpy::take_along_axis(v, numpy::expand_dims(idx, -2), -1);
  Array vh = mT(lax::mul(u, numpy::expand_dims(sign, -2)));
  return {u, s, vh};
}

}  // namespace

std::vector<Array> svd(const Array& a0, bool full_matrices, bool compute_uv, bool hermitian) {
  Array a = inexact("svd", a0);
  check_rank2("svd", a);
  if (hermitian) return hermitian_svd(a, compute_uv);
  return ll::svd(a, full_matrices, compute_uv);
}

Array svdvals(const Array& a) { return svd(a, true, false, false)[0]; }

std::vector<Array> qr(const Array& a0, const std::string& mode) {
  if (mode != "reduced" && mode != "complete" && mode != "r" && mode != "full" && mode != "raw")
    throw ValueError(op_message("qr", "Unsupported QR decomposition mode '" + mode +
                                          "'; use 'reduced', 'complete', 'r' or 'raw'."));
  Array a = inexact("qr", a0);
  check_rank2("qr", a);
  if (mode == "raw") {  // NumPy's h is the Fortran-order factored matrix: geqrf's, transposed
    auto [h, tau] = ll::geqrf(a);
    return {mT(h), tau};
  }
  auto [q, r] = ll::qr(a, mode == "complete");
  if (mode == "r") return {r};
  return {q, r};
}

namespace {

// The pseudo-inverse of a (..., m, n) with rtol (..., ) already of a's dtype.
Array pinv_value(const Array& a, const Array& rtol, bool hermitian) {
  const int64_t r = a.ndim(), m = a.shape()[r - 2], n = a.shape()[r - 1];
  if (m == 0 || n == 0) {
    Shape s(a.shape().begin(), a.shape().end() - 2);
    s.insert(s.end(), {n, m});
    return numpy::zeros(s, a.dtype());
  }
  std::vector<Array> usv = svd(a, false, true, hermitian);
  const Array &u = usv[0], &s = usv[1], &vh = usv[2];
  // Singular values <= rtol * the largest are set to zero (1/inf).
  Array cutoff =
      numpy::multiply(numpy::expand_dims(rtol, -1), lax::slice_in_dim(s, 0, 1, 1, s.ndim() - 1));
  Array s2 = numpy::where(numpy::greater(s, cutoff), s,
                          scalar_of(std::numeric_limits<double>::infinity(), a.dtype()));
  return numpy::matmul(mT(vh), numpy::divide(mT(u), numpy::expand_dims(s2, -1)));
}

Array pinv_jvp_tangent(const Array& a, const Array& p, const Array& da) {
  const int64_t r = a.ndim(), m = a.shape()[r - 2], n = a.shape()[r - 1];
  using numpy::matmul;
  Array pH = mT(p), daH = mT(da);
  if (m >= n) {
    Array s = matmul(matmul(p, pH), daH);
    Array t = matmul(matmul(daH, pH), p);
    Array out = numpy::negative(matmul(matmul(p, da), p));
    out = numpy::add(out, s);
    out = numpy::subtract(out, matmul(matmul(s, a), p));
    out = numpy::add(out, t);
    return numpy::subtract(out, matmul(matmul(p, a), t));
  }
  Array s = matmul(p, matmul(pH, daH));
  Array t = matmul(daH, matmul(pH, p));
  Array out = numpy::negative(matmul(p, matmul(da, p)));
  out = numpy::add(out, s);
  out = numpy::subtract(out, matmul(s, matmul(a, p)));
  out = numpy::add(out, t);
  return numpy::subtract(out, matmul(p, matmul(a, t)));
}

}  // namespace

Array pinv(const Array& a0, const std::optional<Array>& rtol0, bool hermitian) {
  Array a = inexact("pinv", a0);
  check_rank2("pinv", a);
  const int64_t r = a.ndim(), m = a.shape()[r - 2], n = a.shape()[r - 1];
  Array rtol =
      rtol0 ? lax::convert_element_type(*rtol0, a.dtype())
            : scalar_of(10.0 * static_cast<double>(std::max(m, n)) * eps_of(a.dtype()), a.dtype());
  auto f = custom_jvp([hermitian](const Array& x, const Array& t) {
             return pinv_value(x, t, hermitian);
           }).defjvp([hermitian](auto primals, auto tangents) {
    auto [x, t] = primals;
    auto [dx, dt] = tangents;
    (void)dt;
    Array p = pinv_value(x, t, hermitian);
    return std::make_pair(p, pinv_jvp_tangent(x, p, dx));
  });
  return f(a, rtol);
}

Array matrix_rank(const Array& M0, const std::optional<Array>& rtol) {
  Array M = inexact("matrix_rank", M0);
  if (M.ndim() < 2)
    return lax::convert_element_type(numpy::any(numpy::not_equal(M, 0)), DType::kInt32);
  Array s = svd(M, false, false)[0];
  const int64_t r = M.ndim();
  Array tol;
  if (rtol) {
    tol = lax::convert_element_type(*rtol, s.dtype());
  } else {
    const double f =
        static_cast<double>(std::max(M.shape()[r - 2], M.shape()[r - 1])) * eps_of(s.dtype());
    tol = numpy::multiply(numpy::amax(s, -1), scalar_of(f, s.dtype()));
  }
  return numpy::sum(numpy::greater(s, numpy::expand_dims(tol, tol.ndim())), -1);
}

std::vector<Array> lstsq(const Array& a0, const Array& b0, const std::optional<double>& rcond) {
  std::vector<Array> ab = numpy::detail::promote_inexact("lstsq", {a0, b0});
  Array a = ab[0], b = ab[1];
  if (a.ndim() != 2)
    throw TypeError(op_message("lstsq", std::to_string(a.ndim()) +
                                            "-dimensional array given. Array must be "
                                            "two-dimensional"));
  if (b.ndim() != 1 && b.ndim() != 2)
    throw TypeError(op_message("lstsq", std::to_string(b.ndim()) +
                                            "-dimensional array given. Array must be one or "
                                            "two-dimensional"));
  if (a.shape()[0] != b.shape()[0])
    throw ValueError(op_message("lstsq", "Leading dimensions of input arrays must match, got " +
                                             shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                                             "."));
  const bool b1 = b.ndim() == 1;
  if (b1) b = numpy::expand_dims(b, -1);
  const int64_t m = a.shape()[0], n = a.shape()[1];
  const DType dt = a.dtype();
  Array x, s, rank;
  if (m * n == 0) {
    s = numpy::zeros({0}, dt);
    rank = numpy::sum(numpy::zeros({0}, DType::kBool));
    x = numpy::zeros({n, b.shape()[1]}, dt);
  } else {
    double rc = rcond ? (*rcond < 0 ? eps_of(dt) : *rcond)
                      : eps_of(dt) * static_cast<double>(std::max(m, n));
    std::vector<Array> usv = ll::svd(a, false, true);
    const Array &u = usv[0], &vt = usv[2];
    s = usv[1];
    Array mask = numpy::greater_equal(
        s, numpy::multiply(scalar_of(rc, dt), lax::slice_in_dim(s, 0, 1, 1, 0)));
    rank = numpy::sum(mask);
    Array safe = numpy::where(mask, s, scalar_of(1.0, dt));
    Array s_inv = numpy::expand_dims(
        numpy::where(mask, numpy::divide(scalar_of(1.0, dt), safe), scalar_of(0.0, dt)), -1);
    x = numpy::matmul(mT(vt), numpy::multiply(s_inv, numpy::matmul(mT(u), b)));
  }
  Array resid_v = numpy::subtract(b, numpy::matmul(a, x));
  Array resid = numpy::sum(numpy::multiply(resid_v, resid_v), 0);
  if (b1) x = numpy::reshape(x, {n});
  return {x, resid, rank, s};
}

[[noreturn]] void eig(const Array& a) {
  throw NotImplementedError(op_message(
      "eig", "the eigenvalues and eigenvectors of a general (non-symmetric) matrix of shape " +
                 shape_str(a.shape()) +
                 " are complex, and Tessera has no complex dtypes (complex64, complex128); "
                 "for a symmetric matrix use jnp.linalg.eigh."));
}

[[noreturn]] void eigvals(const Array& a) {
  throw NotImplementedError(op_message(
      "eigvals", "the eigenvalues of a general (non-symmetric) matrix of shape " +
                     shape_str(a.shape()) +
                     " are complex, and Tessera has no complex dtypes (complex64, complex128); "
                     "for a symmetric matrix use jnp.linalg.eigvalsh."));
}

namespace {

bool ord_is(const NormOrd& p, double v) { return p.number() && *p.number() == v; }

}  // namespace

Array cond(const Array& x0, const NormOrd& p) {
  Array x = inexact("cond", x0);
  if (x.ndim() < 2)
    throw ValueError(op_message("cond",
                                "jnp.linalg.cond: input array must be at least 2D; got "
                                "shape " +
                                    shape_str(x.shape()) + "."));
  const int64_t r = x.ndim();
  if (p.is_none() || ord_is(p, 2) || ord_is(p, -2)) {
    Array s = svdvals(x);
    const int64_t k = s.shape().back();
    Array first = lax::index_in_dim(s, 0, r - 2, false);
    Array last = lax::index_in_dim(s, k - 1, r - 2, false);
    if (!ord_is(p, -2)) return lax::div(first, last);
    Array res = lax::div(last, first);
    return numpy::where(
        numpy::logical_and(
            numpy::isnan(res),
            numpy::logical_not(
                numpy::any(numpy::isnan(x), numpy::ReduceOptions{std::vector<int64_t>{-2, -1}}))),
        scalar_of(std::numeric_limits<double>::infinity(), x.dtype()), res);
  }
  if (x.shape()[r - 1] != x.shape()[r - 2])
    throw ValueError(op_message(
        "cond", "jnp.linalg.cond: for p=" + (p.number() ? std::to_string(*p.number()) : p.name()) +
                    ", array must be square; got shape " + shape_str(x.shape()) + "."));
  Array inv = linalg::inv(x);
  numpy::AxisArg axes(std::vector<int64_t>{-2, -1});
  Array res = lax::mul(numpy::linalg::norm(x, p, axes), numpy::linalg::norm(inv, p, axes));
  return numpy::where(
      numpy::logical_and(numpy::isnan(res),
                         numpy::logical_not(numpy::any(
                             numpy::isnan(x), numpy::ReduceOptions{std::vector<int64_t>{-2, -1}}))),
      scalar_of(std::numeric_limits<double>::infinity(), x.dtype()), res);
}

}  // namespace linalg

// ======================= jax.scipy.linalg =======================
namespace linalg::scipy {

namespace ll = lax::linalg;

namespace {

// U and V of the Padé approximant of order `order` (3, 5, 7, 9 or 13) of exp at A (..., n, n).
std::pair<Array, Array> pade(const Array& A, int order, const Array& I) {
  using numpy::add;
  using numpy::matmul;
  using numpy::multiply;
  auto lin = [&](std::initializer_list<std::pair<double, Array>> terms) {
    Array acc;
    for (const auto& [c, m] : terms) {
      Array t = multiply(m, c);
      acc = acc.defined() ? add(acc, t) : t;
    }
    return acc;
  };
  Array A2 = matmul(A, A);
  if (order == 3) {
    const double b[] = {120., 60., 12., 1.};
    return {matmul(A, lin({{b[3], A2}, {b[1], I}})), lin({{b[2], A2}, {b[0], I}})};
  }
  Array A4 = matmul(A2, A2);
  if (order == 5) {
    const double b[] = {30240., 15120., 3360., 420., 30., 1.};
    return {matmul(A, lin({{b[5], A4}, {b[3], A2}, {b[1], I}})),
            lin({{b[4], A4}, {b[2], A2}, {b[0], I}})};
  }
  Array A6 = matmul(A4, A2);
  if (order == 7) {
    const double b[] = {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
    return {matmul(A, lin({{b[7], A6}, {b[5], A4}, {b[3], A2}, {b[1], I}})),
            lin({{b[6], A6}, {b[4], A4}, {b[2], A2}, {b[0], I}})};
  }
  if (order == 9) {
    Array A8 = matmul(A6, A2);
    const double b[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                        2162160.,     110880.,     3960.,       90.,        1.};
    return {matmul(A, lin({{b[9], A8}, {b[7], A6}, {b[5], A4}, {b[3], A2}, {b[1], I}})),
            lin({{b[8], A8}, {b[6], A6}, {b[4], A4}, {b[2], A2}, {b[0], I}})};
  }
  const double b[] = {64764752532480000.,
                      32382376266240000.,
                      7771770303897600.,
                      1187353796428800.,
                      129060195264000.,
                      10559470521600.,
                      670442572800.,
                      33522128640.,
                      1323241920.,
                      40840800.,
                      960960.,
                      16380.,
                      182.,
                      1.};
  Array u_inner = add(matmul(A6, lin({{b[13], A6}, {b[11], A4}, {b[9], A2}})),
                      lin({{b[7], A6}, {b[5], A4}, {b[3], A2}, {b[1], I}}));
  Array v = add(matmul(A6, lin({{b[12], A6}, {b[10], A4}, {b[8], A2}})),
                lin({{b[6], A6}, {b[4], A4}, {b[2], A2}, {b[0], I}}));
  return {matmul(A, u_inner), v};
}

}  // namespace

Array expm(const Array& A0, bool upper_triangular, int64_t max_squarings) {
  Array A = inexact("expm", A0);
  const int64_t r = A.ndim();
  if (r < 2 || A.shape()[r - 1] != A.shape()[r - 2])
    throw ValueError(op_message("expm",
                                "Expected A to be a (batched) square matrix, got "
                                "A.shape=" +
                                    shape_str(A.shape()) + "."));
  const int64_t n = A.shape()[r - 1];
  if (A.size() == 0) return A;
  const DType dt = A.dtype();
  const bool f64 = dt == DType::kFloat64;
  // The 1-norm per matrix, with the matrices' axes kept as size 1.
  Array l1 = numpy::amax(numpy::sum(lax::abs(A), r - 2, true), r - 1, true);
  const double maxnorm = f64 ? 5.371920351148152 : 3.925724783138660;
  Array n_sq =
      numpy::maximum(scalar_of(0.0, dt), lax::floor(numpy::log2(numpy::divide(l1, maxnorm))));
  Array As = numpy::divide(A, lax::exp2(n_sq));
  const std::vector<double> conds =
      f64 ? std::vector<double>{1.495585217958292e-002, 2.539398330063230e-001,
                                9.504178996162932e-001, 2.097847961257068e+000}
          : std::vector<double>{4.258730016922831e-001, 1.880152677804762e+000};
  const std::vector<int> orders =
      f64 ? std::vector<int>{3, 5, 7, 9, 13} : std::vector<int>{3, 5, 7};
  Array I = numpy::eye(n, std::nullopt, 0, dt);
  // The branch np.digitize(l1, conds) picks, selected per matrix.
  Array U, V;
  for (size_t i = 0; i < orders.size(); ++i) {
    auto [u, v] = pade(As, orders[i], I);
    if (i == 0) {
      U = u;
      V = v;
      continue;
    }
    Array take = numpy::greater_equal(l1, scalar_of(conds[i - 1], dt));
    U = numpy::where(take, u, U);
    V = numpy::where(take, v, V);
  }
  Array P = numpy::add(U, V), Q = numpy::subtract(V, U);
  Array R = upper_triangular ? ll::triangular_solve(Q, P, /*left_side=*/true, /*lower=*/false)
                             : ll::solve(Q, P);
  for (int64_t i = 0; i < max_squarings; ++i)
    R = numpy::where(numpy::less(scalar_of(static_cast<double>(i), dt), n_sq), numpy::matmul(R, R),
                     R);
  return numpy::where(numpy::greater(n_sq, scalar_of(static_cast<double>(max_squarings), dt)),
                      scalar_of(std::numeric_limits<double>::quiet_NaN(), dt), R);
}

std::vector<Array> eigh(const Array& a0, bool lower, bool eigvals_only) {
  Array a = inexact("eigh", a0);
  auto [v, w] = ll::eigh(a, lower, /*symmetrize_input=*/false);
  if (eigvals_only) return {w};
  return {w, v};
}

std::vector<Array> svd(const Array& a0, bool full_matrices, bool compute_uv) {
  return linalg::svd(a0, full_matrices, compute_uv, false);
}

std::vector<Array> qr(const Array& a0, const std::string& mode, bool pivoting) {
  if (mode != "full" && mode != "r" && mode != "economic" && mode != "raw")
    throw ValueError(op_message("qr", "Unsupported QR decomposition mode '" + mode +
                                          "'; use 'full', 'r', 'economic' or 'raw'."));
  Array a = inexact("qr", a0);
  check_rank2("qr", a);
  if (mode == "raw") {
    const int64_t rk = a.ndim(), m = a.shape()[rk - 2], n = a.shape()[rk - 1];
    Array h, tau, p;
    if (pivoting) {
      Shape js(a.shape().begin(), a.shape().end() - 2);
      js.push_back(n);
      std::vector<Array> f = ll::geqp3(a, numpy::zeros(js, DType::kInt32));  // all columns free
      h = f[0];
      tau = f[2];
      p = lax::sub(f[1], numpy::scalar(1.0, DType::kInt32));  // LAPACK's 1-based -> 0-based
    } else {
      std::tie(h, tau) = ll::geqrf(a);
    }
    // SciPy's raw R is the economic one: the first k rows of h's upper triangle.
    Array r = numpy::triu(lax::slice_in_dim(h, 0, std::min(m, n), 1, rk - 2));
    if (pivoting) return {h, tau, r, p};
    return {h, tau, r};
  }
  std::vector<Array> res = ll::qr(a, pivoting, mode != "economic");
  if (mode == "r") res.erase(res.begin());  // {R} or {R, P}
  return res;
}

}  // namespace linalg::scipy

}  // namespace tessera
