// qr(x) {full_matrices, pivoting} (jax.lax.linalg's qr_p): x = q · r (x[..., :, p] = q · r with
// pivoting) over the leading (batch) dims of x, shape (..., m, n), float32/float64,
// k = min(m, n). Outputs q (..., m, m) and r (..., m, n) when full_matrices, else q (..., m, k)
// and r (..., k, n); with pivoting also p, int32 (..., n), the 0-based column permutation
// (LAPACK's ?geqp3: |diag r| non-increasing). q has orthonormal columns, r is upper triangular
// (trapezoidal). Tall and wide matrices both work.
//
// Eager kernel: the Householder family's kernels (linalg_householder.h: ?geqrf or ?geqp3, then
// ?orgqr) per matrix on a column-major scratch copy (ld m, max(n, q's columns) columns): r is read
// from the upper triangle the factorization leaves, q is formed in place, and both are
// transposed back into the row-major outputs. Householder QR has no convergence failure; NaNs
// propagate through the arithmetic. Empty matrices: q is the identity's leading columns, r is
// empty or zero, p is zero (JAX's). Batches: one matrix per pool task; one matrix runs on the
// calling thread (OpenBLAS single-threaded: see linalg_spectral_util.h).
//
// JVP: JAX's qr_jvp_rule on the reduced factors (m >= n; full_matrices only when square, else
// NotImplementedError as JAX): with X = qᵀ ẋ r⁻¹ (a right-side triangular_solve) and
// Ω = tril(X, -1) - tril(X, -1)ᵀ, dq = q (Ω - X) + ẋ r⁻¹ and dr = (X - Ω) r. With pivoting the
// permutation is piecewise constant: ẋ's columns are permuted by p first (ẋ P, P the one-hot
// matrix of p, so the rule stays lax-only), and p's tangent is zero.
// Batching: the batch axis moves to the front.
#include <string>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/linalg_householder.h"
#include "prims/linalg_spectral_util.h"
#include "prims/linalg_util.h"
#include "prims/prims.h"

namespace tessera::prims {

Primitive qr_p("qr", /*multiple_results=*/true);

namespace {

using ad::JvpOut;
using batching::BatchOut;
namespace lu = linalg_util;

constexpr const char* kOp = "qr";

// dx · r⁻¹ for upper-triangular r: one bind of the solve family's triangular_solve (right
// side, upper, no transpose), which carries its own JVP and batching rules.
Array right_solve_upper(const Array& r, const Array& dx) {
  return tessera::bind(triangular_solve_p, {r, dx},
                       Params{{"left_side", false},
                              {"lower", false},
                              {"transpose_a", false},
                              {"conjugate_a", false},
                              {"unit_diagonal", false}})[0];
}

std::vector<Aval> qr_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(kOp, in, 1);
  const Aval& x = in[0];
  lu::check_matrix_operand(kOp, "Argument to QR decomposition", x);
  const int64_t r = x.ndim(), m = x.shape[r - 2], n = x.shape[r - 1], k = std::min(m, n);
  const bool full = p.get_bool("full_matrices");
  Shape q(x.shape.begin(), x.shape.end() - 2), rs = q, ps = q;
  q.insert(q.end(), {m, full ? m : k});
  rs.insert(rs.end(), {full ? m : k, n});
  ps.push_back(n);
  std::vector<Aval> out = {Aval{q, x.dtype, false}, Aval{rs, x.dtype, false}};
  if (p.get_bool("pivoting")) out.push_back(Aval{ps, DType::kInt32, false});
  return out;
}

// One matrix: a (m, n) row-major -> q (m, qc), r (rr, n) and, when piv is set, the 0-based
// column permutation (n).
template <class T>
void qr_one(const T* a, T* q, T* r, int32_t* piv, int64_t m, int64_t n, bool full) {
  const int64_t k = std::min(m, n), qc = full ? m : k, rr = full ? m : k;
  std::fill(r, r + rr * n, T(0));
  if (k == 0) {  // q: the identity's leading columns; p: zeros, as JAX's
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < qc; ++j) q[i * qc + j] = i == j ? T(1) : T(0);
    if (piv != nullptr) std::fill(piv, piv + n, 0);
    return;
  }
  std::vector<T> buf(static_cast<size_t>(m * std::max(n, qc)), T(0)), tau(static_cast<size_t>(k));
  householder::to_col_major(a, buf.data(), m, n);
  if (piv != nullptr) {
    std::vector<lapack_int> jpvt(static_cast<size_t>(n), 0);  // every column free
    householder::factor<T>(kOp, buf.data(), m, n, tau.data(), jpvt.data());
    for (int64_t j = 0; j < n; ++j) piv[j] = static_cast<int32_t>(jpvt[j] - 1);
  } else {
    householder::factor<T>(kOp, buf.data(), m, n, tau.data(), nullptr);
  }
  for (int64_t i = 0; i < rr; ++i)
    for (int64_t j = i; j < n; ++j) r[i * n + j] = buf[static_cast<size_t>(i + j * m)];
  householder::form_q<T>(kOp, buf.data(), m, qc, k, tau.data());
  householder::to_row_major(buf.data(), q, m, qc);
}

std::vector<Array> qr_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                           std::span<const Aval> outs) {
  const Array& x = args[0];
  const bool full = p.get_bool("full_matrices"), pivoting = p.get_bool("pivoting");
  std::vector<Array> res;
  for (const Aval& o : outs) res.push_back(empty_array(o, kOp, ctx.device));
  const int64_t rk = x.ndim(), m = x.shape()[rk - 2], n = x.shape()[rk - 1];
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < rk; ++d) batch *= x.shape()[d];
  const int64_t k = std::min(m, n), qc = full ? m : k, rr = full ? m : k;
  auto run = [&]<class T>() {
    const T* in = m * n == 0 ? nullptr : static_cast<const T*>(x.raw_data());
    T* qo = static_cast<T*>(res[0].buffer()->data());
    T* ro = static_cast<T*>(res[1].buffer()->data());
    int32_t* po = pivoting ? static_cast<int32_t*>(res[2].buffer()->data()) : nullptr;
    lu::for_each_matrix(batch, m * n * std::max<int64_t>(k, 1), [&](int64_t b) {
      qr_one<T>(in == nullptr ? nullptr : in + b * m * n, qo + b * m * qc, ro + b * rr * n,
                po == nullptr ? nullptr : po + b * n, m, n, full);
    });
  };
  if (x.dtype() == DType::kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  return res;
}

// dx with its columns permuted by p (..., n) int32: dx · P with P[..., i, j] = (p[..., j] == i),
// i.e. dx[..., :, p] (lax ops only, linear in dx).
Array permute_columns(const Array& dx, const Array& p) {
  const int64_t n = p.shape().back();
  Shape s = p.shape();
  s.push_back(n);
  Array i = lax::broadcasted_iota(DType::kInt32, s, static_cast<int64_t>(s.size()) - 2);
  Array onehot = lax::convert_element_type(lax::eq(i, lu::as_row(p)), dx.dtype());
  return lu::matmul(dx, onehot);
}

JvpOut qr_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  const Array& x = primals[0];
  const bool full = p.get_bool("full_matrices");
  const int64_t rk = x.ndim(), m = x.shape()[rk - 2], n = x.shape()[rk - 1];
  if (m < n || (full && m != n))
    throw NotImplementedError(op_message(
        kOp, "Unimplemented case of QR decomposition derivative: shape " + shape_str(x.shape()) +
                 (m < n ? " is wide (m < n)" : " with full_matrices=True is not square") +
                 "; differentiate the reduced decomposition of a tall or square matrix."));
  const bool pivoting = p.get_bool("pivoting");
  std::vector<Array> out = tessera::bind(qr_p, primals, p);
  std::vector<Array> dout(out.size());  // undefined: zero (p's tangent stays so: float0)
  if (ad::zero_tangent(primals[0], tangents[0])) return {out, dout};
  const Array& q = out[0];
  const Array& r = out[1];
  const Array dx = pivoting ? permute_columns(tangents[0], out[2]) : tangents[0];
  Array dx_rinv = right_solve_upper(r, dx);
  Array qt_dx_rinv = lu::matmul(lu::mT(q), dx_rinv);
  Array low = lu::tril(qt_dx_rinv, -1);
  Array omega = lax::sub(low, lu::mT(low));
  Array dq = lax::add(lu::matmul(q, lax::sub(omega, qt_dx_rinv)), dx_rinv);
  Array dr = lu::matmul(lax::sub(qt_dx_rinv, omega), r);
  dout[0] = dq;
  dout[1] = dr;
  return {out, dout};
}

BatchOut qr_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                  const Params& p) {
  Array x = batching::move_axis(args[0], bdims[0], 0);
  std::vector<Array> out = tessera::bind(qr_p, {x}, p);
  return {out, std::vector<int64_t>(out.size(), 0)};
}

}  // namespace

void register_qr() {
  qr_p.kind = PrimitiveKind::kLibraryCall;
  qr_p.signature =
      Signature::fixed(1, {{"full_matrices", ParamKind::kBool}, {"pivoting", ParamKind::kBool}});
  qr_p.abstract_eval = qr_abstract;
  qr_p.impl = qr_impl;
  qr_p.jvp = qr_jvp;
  qr_p.batch = qr_batch;
  register_primitive(qr_p);
}

}  // namespace tessera::prims
