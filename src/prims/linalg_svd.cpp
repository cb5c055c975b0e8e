// svd(x) {full_matrices, compute_uv} (jax.lax.linalg's svd_p): singular value decomposition
// x = u · diag(s) · vt over the leading (batch) dims of x, shape (..., m, n), float32/float64,
// k = min(m, n). Outputs (s, u, vt): s (..., k) descending; u (..., m, m or k) and vt
// (..., n or k, n) as full_matrices says. compute_uv=false: only s.
//
// Eager kernel: LAPACK ?gesdd per matrix, falling back to ?gesvd when ?gesdd does not converge;
// a matrix that holds a NaN/inf or that neither routine decomposes gets all-NaN outputs (JAX's
// convention). A row-major (m, n) matrix read column-major is xᵀ (n, m) = vt'ᵀ... precisely:
// LAPACK factors xᵀ = U' S VT', so x = VT'ᵀ S U'ᵀ, and the column-major buffers LAPACK writes for
// VT' and U' are, byte for byte, the row-major u and vt of x: no transposes at all. Empty
// matrices (m or n = 0): s empty, u and vt identities (full_matrices) or empty, as JAX.
// Batches: one LAPACK call per matrix, matrices in parallel on Tessera's pool; one matrix runs on
// the calling thread (OpenBLAS single-threaded: see linalg_spectral_util.h).
//
// JVP: JAX's svd_jvp_rule, on the reduced decomposition. compute_uv=false: ds = diag(uᵀ ẋ v).
// compute_uv=true needs full_matrices=false, or a square x (where the two coincide); otherwise
// NotImplementedError as JAX. Batching: the batch axis moves to the front.
#include <string>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/linalg_spectral_util.h"
#include "prims/prims.h"

namespace tessera::prims {

Primitive svd_p("svd", /*multiple_results=*/true);

namespace {

using ad::JvpOut;
using batching::BatchOut;
namespace lu = linalg_util;

constexpr const char* kOp = "svd";

std::vector<Aval> svd_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(kOp, in, 1);
  const Aval& x = in[0];
  if (x.ndim() < 2)
    throw ValueError(op_message(kOp,
                                "Argument to singular value decomposition must have "
                                "ndims >= 2, got shape " +
                                    shape_str(x.shape) + "."));
  lu::check_matrix_operand(kOp, "Argument to singular value decomposition", x);
  const int64_t r = x.ndim(), m = x.shape[r - 2], n = x.shape[r - 1], k = std::min(m, n);
  const bool full = p.get_bool("full_matrices");
  Shape batch(x.shape.begin(), x.shape.end() - 2);
  Shape s = batch, u = batch, vt = batch;
  s.push_back(k);
  u.insert(u.end(), {m, full ? m : k});
  vt.insert(vt.end(), {full ? n : k, n});
  std::vector<Aval> outs{Aval{s, x.dtype, false}};
  if (p.get_bool("compute_uv")) {
    outs.push_back(Aval{u, x.dtype, false});
    outs.push_back(Aval{vt, x.dtype, false});
  }
  return outs;
}

// One (m, n) matrix a (row-major) into s (k), u (m, ucols) and vt (vrows, n) (row-major; u/vt
// null when !uv). m, n >= 1.
template <class T>
void svd_one(const T* a, T* s, T* u, T* vt, int64_t m, int64_t n, bool full, bool uv) {
  const int64_t k = std::min(m, n);
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  auto fail = [&] {
    lu::fill_nan(s, k);
    if (uv) {
      lu::fill_nan(u, m * ucols);
      lu::fill_nan(vt, vrows * n);
    }
  };
  if (!lu::all_finite(a, m * n)) return fail();
  // Column-major view: M' = n rows, N' = m columns (xᵀ). LAPACK's U' (n x n or n x k, ld n)
  // is our vt; its VT' (m x m or k x m, ld ucols) is our u.
  const lapack_int lm = lu::lap_int(kOp, n), ln = lu::lap_int(kOp, m);
  const lapack_int ldu = lm, ldvt = uv ? lu::lap_int(kOp, ucols) : 1;
  std::vector<T> dummy(1);
  T* up = uv ? vt : dummy.data();
  T* vtp = uv ? u : dummy.data();
  const lapack_int ldu_eff = uv ? ldu : 1;
  std::vector<T> buf(a, a + m * n);
  const char jobz = uv ? (full ? 'A' : 'S') : 'N';
  std::vector<lapack_int> iwork(static_cast<size_t>(8 * k));
  T wq = 0;
  lapack_int info =
      lu::gesdd(jobz, lm, ln, buf.data(), lm, s, up, ldu_eff, vtp, ldvt, &wq, -1, iwork.data());
  lu::check_info(kOp, "?gesdd (workspace query)", info);
  lapack_int lwork = lu::work_size(wq);
  std::vector<T> work(static_cast<size_t>(lwork));
  info = lu::gesdd(jobz, lm, ln, buf.data(), lm, s, up, ldu_eff, vtp, ldvt, work.data(), lwork,
                   iwork.data());
  lu::check_info(kOp, "?gesdd", info);
  if (info == 0) return;
  // ?gesdd did not converge: ?gesvd (QR iteration) on a fresh copy.
  buf.assign(a, a + m * n);
  const char job = uv ? (full ? 'A' : 'S') : 'N';
  info = lu::gesvd(job, job, lm, ln, buf.data(), lm, s, up, ldu_eff, vtp, ldvt, &wq, -1);
  lu::check_info(kOp, "?gesvd (workspace query)", info);
  lwork = lu::work_size(wq);
  work.assign(static_cast<size_t>(lwork), T(0));
  info = lu::gesvd(job, job, lm, ln, buf.data(), lm, s, up, ldu_eff, vtp, ldvt, work.data(), lwork);
  lu::check_info(kOp, "?gesvd", info);
  if (info > 0) fail();
}

std::vector<Array> svd_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                            std::span<const Aval> outs) {
  const Array& x = args[0];
  const bool full = p.get_bool("full_matrices"), uv = p.get_bool("compute_uv");
  std::vector<Array> res;
  for (const Aval& a : outs) res.push_back(empty_array(a, kOp, ctx.device));
  const int64_t r = x.ndim(), m = x.shape()[r - 2], n = x.shape()[r - 1], k = std::min(m, n);
  const int64_t batch = outs[0].size() / std::max<int64_t>(k, 1) * (k == 0 ? 0 : 1);
  auto run = [&]<class T>() {
    T* so = static_cast<T*>(res[0].buffer()->data());
    T* uo = uv ? static_cast<T*>(res[1].buffer()->data()) : nullptr;
    T* vo = uv ? static_cast<T*>(res[2].buffer()->data()) : nullptr;
    const int64_t ucols = full ? m : k, vrows = full ? n : k;
    if (k == 0) {  // empty matrices: identities (full) or nothing
      if (!uv) return;
      const int64_t bsz = m == 0 ? res[2].size() / std::max<int64_t>(1, vrows * n)
                                 : res[1].size() / std::max<int64_t>(1, m * ucols);
      for (int64_t b = 0; b < bsz; ++b) {
        if (full) {
          T* ub = uo + b * m * m;
          T* vb = vo + b * n * n;
          for (int64_t i = 0; i < m * m; ++i) ub[i] = (i % (m + 1) == 0) ? T(1) : T(0);
          for (int64_t i = 0; i < n * n; ++i) vb[i] = (i % (n + 1) == 0) ? T(1) : T(0);
        }
      }
      return;
    }
    const T* in = static_cast<const T*>(x.raw_data());
    lu::for_each_matrix(batch, m * n * k, [&](int64_t b) {
      svd_one<T>(in + b * m * n, so + b * k, uv ? uo + b * m * ucols : nullptr,
                 uv ? vo + b * vrows * n : nullptr, m, n, full, uv);
    });
  };
  if (x.dtype() == DType::kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  return res;
}

JvpOut svd_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  const Array& a = primals[0];
  const bool full = p.get_bool("full_matrices"), uv = p.get_bool("compute_uv");
  const int64_t r = a.ndim(), m = a.shape()[r - 2], n = a.shape()[r - 1];
  if (uv && full && m != n)
    throw NotImplementedError(op_message(
        kOp, "Singular value decomposition JVP not implemented for full matrices (shape " +
                 shape_str(a.shape()) +
                 "); use full_matrices=False, which has the same singular values and the "
                 "leading singular vectors."));
  std::vector<Array> out = tessera::bind(svd_p, primals, p);
  std::vector<Array> none(out.size());
  if (ad::zero_tangent(primals[0], tangents[0])) return {out, none};
  const Array& da = tangents[0];
  // The reduced factors (for a square x, the full ones are the same: reuse them).
  std::vector<Array> red =
      uv ? out
         : tessera::bind(svd_p, primals, Params{{"full_matrices", false}, {"compute_uv", true}});
  const Array& s = red[0];
  const Array& u = red[1];
  const Array& vt = red[2];
  Array ut = lu::mT(u), v = lu::mT(vt);
  Array s_row = lu::as_row(s);  // (..., 1, k)
  Array ds_mat = lu::matmul(lu::matmul(ut, da), v);
  Array ds = lu::diagonal(ds_mat);
  if (!uv) return {out, {ds}};
  const DType dt = a.dtype();
  const int64_t k = s.shape().back();
  Array s_col = lu::mT(s_row);
  Array eye = lu::eye(dt, k, r);
  Array diffs = lax::mul(lax::add(s_row, s_col), lax::sub(s_row, s_col));
  Array f = lax::sub(lax::reciprocal(lax::add(diffs, eye)), eye);
  Array dss = lax::mul(s_row, ds_mat);
  Array sds = lax::mul(s_col, ds_mat);
  Array s_zeros = lax::convert_element_type(lax::eq(s, ad::scalar_const(0, dt)), dt);
  Array s_inv = lax::sub(lax::reciprocal(lax::add(s, s_zeros)), s_zeros);
  Array dudv_diag = lax::mul(lax::mul(ad::scalar_const(0.5, dt), lax::sub(ds_mat, lu::mT(ds_mat))),
                             lu::diag_embed(s_inv));
  Array du = lu::matmul(u, lax::add(lax::mul(f, lax::add(dss, lu::mT(dss))), dudv_diag));
  Array dv = lu::matmul(v, lax::mul(f, lax::add(sds, lu::mT(sds))));
  if (m > n) {
    Array dav = lu::matmul(da, v);
    du = lax::add(du, lax::div(lax::sub(dav, lu::matmul(u, lu::matmul(ut, dav))), s_row));
  }
  if (n > m) {
    Array dahu = lu::matmul(lu::mT(da), u);
    dv = lax::add(dv, lax::div(lax::sub(dahu, lu::matmul(v, lu::matmul(vt, dahu))), s_row));
  }
  return {out, {ds, du, lu::mT(dv)}};
}

BatchOut svd_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                   const Params& p) {
  Array x = batching::move_axis(args[0], bdims[0], 0);
  std::vector<Array> outs = tessera::bind(svd_p, {x}, p);
  return {outs, std::vector<int64_t>(outs.size(), 0)};
}

}  // namespace

void register_svd() {
  svd_p.kind = PrimitiveKind::kLibraryCall;
  svd_p.signature =
      Signature::fixed(1, {{"full_matrices", ParamKind::kBool}, {"compute_uv", ParamKind::kBool}});
  svd_p.abstract_eval = svd_abstract;
  svd_p.impl = svd_impl;
  svd_p.jvp = svd_jvp;
  svd_p.batch = svd_batch;
  register_primitive(svd_p);
}

}  // namespace tessera::prims
