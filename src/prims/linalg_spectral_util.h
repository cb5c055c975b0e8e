// Private helpers of the spectral linear-algebra primitives (linalg_eigh.cpp, linalg_svd.cpp,
// linalg_qr.cpp): the checks their abstract_eval rules share, typed LAPACKE wrappers (float and
// double overloads), the per-matrix scheduler of the batched eager kernels, and the lax-only
// matrix helpers their JVP rules compute with (so the rules work under any trace).
//
// Threads: OpenBLAS runs single-threaded (runtime::blas::init()). A batch of matrices is split
// over Tessera's one pool, one LAPACK call per matrix inside a task; a single matrix is one
// LAPACK call on the calling thread. Each matrix's result depends only on its own input, so the
// results never depend on the thread count, and the two thread pools never compete.
#pragma once

#include <lapacke.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "runtime/blas.h"
#include "runtime/thread_pool.h"
#include "tessera/array.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/tangents.h"

namespace tessera::prims::linalg_util {

// TypeError unless x is float32/float64 with rank >= 2 (the spectral primitives' operands).
// Complex inputs do not exist in Tessera; integer inputs are promoted by the jnp wrappers.
inline void check_matrix_operand(const char* op, const char* what, const Aval& x) {
  if (x.ndim() < 2)
    throw ValueError(op_message(
        op, std::string(what) + " must have ndims >= 2, got shape " + shape_str(x.shape) + "."));
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    throw TypeError(
        op_message(op, std::string(what) +
                           " must be float32 or float64 (complex64/complex128 do not exist "
                           "in Tessera), got " +
                           std::string(dtype_name(x.dtype)) +
                           "; convert integer or low-precision inputs with astype first."));
}

// lapack_int for a dimension; InternalError beyond LAPACK's 32-bit range.
inline lapack_int lap_int(const char* op, int64_t v) {
  if (v < 0 || v > INT_MAX)
    throw InternalError(op_message(
        op, "matrix dimension " + std::to_string(v) + " is outside LAPACK's 32-bit index range"));
  return static_cast<lapack_int>(v);
}

// info < 0 from LAPACK means a bad argument: a bug in the caller.
inline void check_info(const char* op, const char* routine, lapack_int info) {
  if (info < 0)
    throw InternalError(op_message(op, std::string(routine) + " rejected argument " +
                                           std::to_string(-info) + " (a Tessera bug)"));
}

// Runs f(b) for each of `batch` matrices: on the calling thread for one matrix, else in pool
// tasks of whole matrices (grain chosen from the per-matrix work alone).
template <class F>
void for_each_matrix(int64_t batch, int64_t work_per_matrix, F&& f) {
  runtime::blas::init();
  if (batch <= 0) return;
  if (batch == 1) {
    f(int64_t{0});
    return;
  }
  const int64_t grain =
      std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, work_per_matrix));
  runtime::parallel_for(batch, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b);
  });
}

template <class T>
bool all_finite(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

template <class T>
void fill_nan(T* p, int64_t n) {
  std::fill(p, p + n, std::numeric_limits<T>::quiet_NaN());
}

// ---- LAPACKE (column-major, _work variants: no NaN pre-check, caller-owned workspace) ----
inline lapack_int syevd(char jobz, char uplo, lapack_int n, float* a, lapack_int lda, float* w,
                        float* work, lapack_int lwork, lapack_int* iwork, lapack_int liwork) {
  return LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, work, lwork, iwork,
                             liwork);
}
inline lapack_int syevd(char jobz, char uplo, lapack_int n, double* a, lapack_int lda, double* w,
                        double* work, lapack_int lwork, lapack_int* iwork, lapack_int liwork) {
  return LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, work, lwork, iwork,
                             liwork);
}
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, float* a, lapack_int lda, float* s,
                        float* u, lapack_int ldu, float* vt, lapack_int ldvt, float* work,
                        lapack_int lwork, lapack_int* iwork) {
  return LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork,
                             iwork);
}
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, double* a, lapack_int lda, double* s,
                        double* u, lapack_int ldu, double* vt, lapack_int ldvt, double* work,
                        lapack_int lwork, lapack_int* iwork) {
  return LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork,
                             iwork);
}
inline lapack_int gesvd(char jobu, char jobvt, lapack_int m, lapack_int n, float* a, lapack_int lda,
                        float* s, float* u, lapack_int ldu, float* vt, lapack_int ldvt, float* work,
                        lapack_int lwork) {
  return LAPACKE_sgesvd_work(LAPACK_COL_MAJOR, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work,
                             lwork);
}
inline lapack_int gesvd(char jobu, char jobvt, lapack_int m, lapack_int n, double* a,
                        lapack_int lda, double* s, double* u, lapack_int ldu, double* vt,
                        lapack_int ldvt, double* work, lapack_int lwork) {
  return LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work,
                             lwork);
}
inline lapack_int geqrf(lapack_int m, lapack_int n, float* a, lapack_int lda, float* tau,
                        float* work, lapack_int lwork) {
  return LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
}
inline lapack_int geqrf(lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau,
                        double* work, lapack_int lwork) {
  return LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda,
                        const float* tau, float* work, lapack_int lwork) {
  return LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda,
                        const double* tau, double* work, lapack_int lwork) {
  return LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
}

// The workspace size LAPACK reported in a query's work[0].
template <class T>
lapack_int work_size(T w) {
  return std::max<lapack_int>(1, static_cast<lapack_int>(std::ceil(static_cast<double>(w))));
}

// ---- lax-only matrix helpers for the JVP rules (operands of rank >= 2) ----

// x with its last two axes swapped.
inline Array mT(const Array& x) {
  std::vector<int64_t> perm(static_cast<size_t>(x.ndim()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return lax::transpose(x, perm);
}

// a @ b over equal leading (batch) dims: (..., m, k) x (..., k, n) -> (..., m, n).
inline Array matmul(const Array& a, const Array& b) {
  const int64_t r = a.ndim();
  DotDimensionNumbers d;
  for (int64_t i = 0; i + 2 < r; ++i) {
    d.lhs_batch.push_back(i);
    d.rhs_batch.push_back(i);
  }
  d.lhs_contracting = {r - 1};
  d.rhs_contracting = {r - 2};
  return lax::dot_general(a, b, d);
}

// The (n, n) identity of dtype d with `rank - 2` leading unit axes (broadcasts against
// (..., n, n) under lax's rule).
inline Array eye(DType d, int64_t n, int64_t rank) {
  Shape s(static_cast<size_t>(std::max<int64_t>(rank, 2)), 1);
  s[s.size() - 2] = n;
  s[s.size() - 1] = n;
  const int64_t r = static_cast<int64_t>(s.size());
  Array i = lax::broadcasted_iota(DType::kInt32, s, r - 2);
  Array j = lax::broadcasted_iota(DType::kInt32, s, r - 1);
  return lax::convert_element_type(lax::eq(i, j), d);
}

// (..., k) -> (..., 1, k) (row) or (..., k, 1) (column): a reshape.
inline Array as_row(const Array& v) {
  Shape s = v.shape();
  s.insert(s.end() - 1, 1);
  return lax::reshape(v, s);
}
inline Array as_col(const Array& v) {
  Shape s = v.shape();
  s.push_back(1);
  return lax::reshape(v, s);
}

// The diagonal of (..., n, n) x as (..., n) (masked sum over the last axis).
inline Array diagonal(const Array& x) {
  const int64_t r = x.ndim();
  return lax::reduce_sum(lax::mul(x, eye(x.dtype(), x.shape().back(), r)), {r - 1});
}

// (..., k) -> (..., k, k) with v on the diagonal.
inline Array diag_embed(const Array& v) {
  return lax::mul(as_row(v), eye(v.dtype(), v.shape().back(), v.ndim() + 1));
}

// The entries of (..., m, n) x with col - row <= k (k = -1: strictly lower), the others zero.
inline Array tril(const Array& x, int64_t k) {
  const int64_t r = x.ndim();
  Shape s = x.shape();
  Array i = lax::broadcasted_iota(DType::kInt32, s, r - 2);
  Array j = lax::broadcasted_iota(DType::kInt32, s, r - 1);
  Array keep = lax::le(lax::sub(j, i), trace::scalar_const(static_cast<double>(k), DType::kInt32));
  return lax::select_n(keep, {trace::zeros_like_aval(x.aval()), x});
}

}  // namespace tessera::prims::linalg_util
