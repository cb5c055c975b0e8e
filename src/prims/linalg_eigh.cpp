// eigh(x) {lower, sort_eigenvalues} (jax.lax.linalg's eigh_p): the eigendecomposition of
// symmetric matrices over the leading (batch) dims of x, shape (..., n, n), float32/float64.
// Outputs (v, w): v (..., n, n) with the eigenvectors as columns, w (..., n) the eigenvalues in
// ascending order. Only the lower (lower=true) or upper triangle of x is read.
//
// Eager kernel: LAPACK ?syevd (divide and conquer) per matrix. A row-major matrix read as
// column-major is its transpose, so the lower triangle of x is the upper one of that view: no
// copy beyond the one ?syevd overwrites. The eigenvectors come back column-major and are
// transposed into v. A matrix whose read triangle holds a NaN/inf, or for which ?syevd does not
// converge (info > 0), gets all-NaN v and w (JAX's convention); info < 0 is an InternalError.
// Batches: one ?syevd per matrix, matrices in parallel on Tessera's pool; one matrix runs on the
// calling thread (OpenBLAS single-threaded: see linalg_spectral_util.h).
//
// JVP (JAX's eigh_jvp_rule; the tangent is taken as given, the lax-level wrapper symmetrizes
// both x and its tangent): with F_ij = 1/(w_j - w_i) off the diagonal and 0 on it,
// vᵀ ẋ v = M, dv = v (F ∘ M), dw = diag(M).
// Batching: the batch axis moves to the front (the primitive is batched over leading dims).
#include <string>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/linalg_spectral_util.h"
#include "prims/prims.h"

namespace tessera::prims {

Primitive eigh_p("eigh", /*multiple_results=*/true);

namespace {

using ad::JvpOut;
using batching::BatchOut;
namespace lu = linalg_util;

constexpr const char* kOp = "eigh";

std::vector<Aval> eigh_abstract(std::span<const Aval> in, const Params&) {
  kernels::check_num_operands(kOp, in, 1);
  const Aval& x = in[0];
  if (x.ndim() < 2 || x.shape[x.ndim() - 1] != x.shape[x.ndim() - 2])
    throw ValueError(op_message(
        kOp, "Argument to symmetric eigendecomposition must have shape [..., n, n], got shape " +
                 shape_str(x.shape) + "."));
  lu::check_matrix_operand(kOp, "Argument to symmetric eigendecomposition", x);
  Shape ws(x.shape.begin(), x.shape.end() - 1);
  return {Aval{x.shape, x.dtype, false}, Aval{ws, x.dtype, false}};
}

template <class T>
void eigh_one(const T* a, T* v, T* w, int64_t n, bool lower) {
  // The triangle LAPACK reads must be finite.
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = lower ? 0 : i; j < (lower ? i + 1 : n); ++j)
      if (!std::isfinite(a[i * n + j])) {
        lu::fill_nan(v, n * n);
        lu::fill_nan(w, n);
        return;
      }
  const lapack_int ln = lu::lap_int(kOp, n);
  std::vector<T> buf(a, a + n * n);
  const char uplo = lower ? 'U' : 'L';  // the column-major view is the transpose
  T wq = 0;
  lapack_int iwq = 0;
  lapack_int info = lu::syevd('V', uplo, ln, buf.data(), ln, w, &wq, -1, &iwq, -1);
  lu::check_info(kOp, "?syevd (workspace query)", info);
  const lapack_int lwork = lu::work_size(wq), liwork = std::max<lapack_int>(1, iwq);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<lapack_int> iwork(static_cast<size_t>(liwork));
  info = lu::syevd('V', uplo, ln, buf.data(), ln, w, work.data(), lwork, iwork.data(), liwork);
  lu::check_info(kOp, "?syevd", info);
  if (info > 0) {
    lu::fill_nan(v, n * n);
    lu::fill_nan(w, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) v[i * n + j] = buf[static_cast<size_t>(i + j * n)];
}

std::vector<Array> eigh_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                             std::span<const Aval> outs) {
  const Array& x = args[0];
  const bool lower = p.get_bool("lower");
  Array v = empty_array(outs[0], kOp, ctx.device);
  Array w = empty_array(outs[1], kOp, ctx.device);
  const int64_t n = x.shape().back();
  if (n == 0) return {v, w};
  const int64_t batch = x.size() / (n * n);
  auto run = [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    T* vo = static_cast<T*>(v.buffer()->data());
    T* wo = static_cast<T*>(w.buffer()->data());
    lu::for_each_matrix(batch, n * n * n, [&](int64_t b) {
      eigh_one<T>(in + b * n * n, vo + b * n * n, wo + b * n, n, lower);
    });
  };
  if (x.dtype() == DType::kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  return {v, w};
}

JvpOut eigh_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  std::vector<Array> out = tessera::bind(eigh_p, primals, p);
  if (ad::zero_tangent(primals[0], tangents[0])) return {out, {Array(), Array()}};
  const Array& v = out[0];
  const Array& w = out[1];
  const int64_t rank = v.ndim();
  Array eye = lu::eye(v.dtype(), v.shape().back(), rank);
  // F_ij = 1/(w_j - w_i), zero on the diagonal.
  Array f = lax::sub(lax::reciprocal(lax::add(eye, lax::sub(lu::as_row(w), lu::as_col(w)))), eye);
  Array m = lu::matmul(lu::matmul(lu::mT(v), tangents[0]), v);
  Array dv = lu::matmul(v, lax::mul(f, m));
  Array dw = lu::diagonal(m);
  return {out, {dv, dw}};
}

BatchOut eigh_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                    const Params& p) {
  Array x = batching::move_axis(args[0], bdims[0], 0);
  return {tessera::bind(eigh_p, {x}, p), {0, 0}};
}

}  // namespace

void register_eigh() {
  eigh_p.kind = PrimitiveKind::kLibraryCall;
  eigh_p.signature =
      Signature::fixed(1, {{"lower", ParamKind::kBool}, {"sort_eigenvalues", ParamKind::kBool}});
  eigh_p.abstract_eval = eigh_abstract;
  eigh_p.impl = eigh_impl;
  eigh_p.jvp = eigh_jvp;
  eigh_p.batch = eigh_batch;
  register_primitive(eigh_p);
}

}  // namespace tessera::prims
