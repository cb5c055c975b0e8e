// jax.lax.linalg's eigh / svd / qr (argument checks, then one bind of the primitives of
// src/prims/linalg_{eigh,svd,qr}.cpp) and the jnp.linalg / jax.scipy.linalg functions built on
// them: eigh, eigvalsh, svd, svdvals, qr, pinv (custom JVP), matrix_rank, lstsq, cond, expm and
// the scipy forms. Everything is Tessera ops, so jit, vmap and grad compose through it.
#include "tessera/linalg_spectral.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/custom_derivatives.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_sort.h"
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

std::pair<Array, Array> qr(const Array& x, bool full_matrices) {
  std::vector<Array> r = tessera::bind(prim("qr"), {x}, Params{{"full_matrices", full_matrices}});
  return {r[0], r[1]};
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
  if (mode == "raw")
    throw NotImplementedError(
        op_message("qr",
                   "mode='raw' returns LAPACK's Householder reflectors and their scaling factors, "
                   "which Tessera does not expose; use mode='reduced', 'complete' or 'r'."));
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw ValueError(op_message("qr", "Unsupported QR decomposition mode '" + mode +
                                          "'; use 'reduced', 'complete', 'r' or 'raw'."));
  Array a = inexact("qr", a0);
  check_rank2("qr", a);
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

std::vector<Array> scipy_eigh(const Array& a0, bool lower, bool eigvals_only) {
  Array a = inexact("eigh", a0);
  auto [v, w] = ll::eigh(a, lower, /*symmetrize_input=*/false);
  if (eigvals_only) return {w};
  return {w, v};
}

std::vector<Array> scipy_svd(const Array& a0, bool full_matrices, bool compute_uv) {
  return svd(a0, full_matrices, compute_uv, false);
}

std::vector<Array> scipy_qr(const Array& a0, const std::string& mode, bool pivoting) {
  if (pivoting)
    throw NotImplementedError(
        op_message("qr",
                   "pivoting=True (column-pivoted QR, LAPACK's ?geqp3) is not implemented in "
                   "Tessera; use pivoting=False."));
  if (mode != "full" && mode != "r" && mode != "economic")
    throw ValueError(op_message(
        "qr", "Unsupported QR decomposition mode '" + mode + "'; use 'full', 'r' or 'economic'."));
  Array a = inexact("qr", a0);
  check_rank2("qr", a);
  auto [q, r] = ll::qr(a, mode != "economic");
  if (mode == "r") return {r};
  return {q, r};
}

}  // namespace linalg

}  // namespace tessera
