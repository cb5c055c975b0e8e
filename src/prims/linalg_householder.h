// The per-matrix LAPACK kernels of the Householder QR family (linalg_householder.cpp: geqrf,
// geqp3, householder_product; linalg_qr.cpp: qr), on column-major scratch copies: the one place
// Tessera calls ?geqrf, ?geqp3 and ?orgqr. Each kernel works on one matrix; the primitives' impls
// run them over the batch with linalg_util::for_each_matrix (one LAPACK call sequence per
// matrix per pool task; see linalg_spectral_util.h for the threading).
#pragma once

#include <lapacke.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "prims/linalg_spectral_util.h"

namespace tessera::prims::householder {

namespace lu = linalg_util;

// ---- LAPACKE ?geqp3 (column-major, caller-owned workspace) ----
inline lapack_int geqp3(lapack_int m, lapack_int n, float* a, lapack_int lda, lapack_int* jpvt,
                        float* tau, float* work, lapack_int lwork) {
  return LAPACKE_sgeqp3_work(LAPACK_COL_MAJOR, m, n, a, lda, jpvt, tau, work, lwork);
}
inline lapack_int geqp3(lapack_int m, lapack_int n, double* a, lapack_int lda, lapack_int* jpvt,
                        double* tau, double* work, lapack_int lwork) {
  return LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, m, n, a, lda, jpvt, tau, work, lwork);
}

// The leading dimension of a column-major scratch with m rows (LAPACK wants at least 1).
inline int64_t ld_of(int64_t m) { return std::max<int64_t>(1, m); }

// Row-major m x n `src` into the first n columns of the column-major scratch `dst` (ld ld_of(m)).
template <class T>
void to_col_major(const T* src, T* dst, int64_t m, int64_t n) {
  const int64_t ld = ld_of(m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) dst[i + j * ld] = src[i * n + j];
}

// The first n columns of the column-major scratch `src` (ld ld_of(m)) into row-major m x n `dst`.
template <class T>
void to_row_major(const T* src, T* dst, int64_t m, int64_t n) {
  const int64_t ld = ld_of(m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) dst[i * n + j] = src[i + j * ld];
}

// Householder QR of the column-major m x n matrix `a` (ld ld_of(m)) in place: R in its upper
// triangle, the reflectors' vectors below the diagonal and their scalars in tau
// (min(m, n) entries). jpvt null: ?geqrf. Otherwise ?geqp3 with column pivoting: jpvt holds n
// LAPACK pivots, on entry nonzero for a column moved to the front and kept there (zero: free),
// on exit the 1-based original index of each factored column. Empty matrices only set jpvt.
template <class T>
void factor(const char* op, T* a, int64_t m, int64_t n, T* tau, lapack_int* jpvt) {
  if (n == 0) return;
  const lapack_int lm = lu::lap_int(op, m), ln = lu::lap_int(op, n), ld = lu::lap_int(op, ld_of(m));
  T wq = 0;
  lapack_int info = jpvt == nullptr ? lu::geqrf(lm, ln, a, ld, tau, &wq, -1)
                                    : geqp3(lm, ln, a, ld, jpvt, tau, &wq, -1);
  lu::check_info(op, jpvt == nullptr ? "?geqrf (workspace query)" : "?geqp3 (workspace query)",
                 info);
  // ?geqp3 needs at least 3n + 1 (2n + 1 unblocked); some LAPACKs under-report for tiny n.
  const lapack_int lwork = std::max<lapack_int>(lu::work_size(wq), 3 * ln + 1);
  std::vector<T> work(static_cast<size_t>(lwork));
  info = jpvt == nullptr ? lu::geqrf(lm, ln, a, ld, tau, work.data(), lwork)
                         : geqp3(lm, ln, a, ld, jpvt, tau, work.data(), lwork);
  lu::check_info(op, jpvt == nullptr ? "?geqrf" : "?geqp3", info);
}

// ?orgqr: overwrites the column-major m x c scratch `a` (ld ld_of(m), c <= m), whose first k
// columns hold reflectors below the diagonal (k <= c), with the first c columns of
// Q = H(1) H(2) ... H(k). k = 0 gives the identity's leading columns.
template <class T>
void form_q(const char* op, T* a, int64_t m, int64_t c, int64_t k, const T* tau) {
  if (c == 0) return;
  const lapack_int lm = lu::lap_int(op, m), lc = lu::lap_int(op, c), lk = lu::lap_int(op, k),
                   ld = lu::lap_int(op, ld_of(m));
  T wq = 0;
  lapack_int info = lu::orgqr(lm, lc, lk, a, ld, tau, &wq, -1);
  lu::check_info(op, "?orgqr (workspace query)", info);
  const lapack_int lwork = std::max<lapack_int>(lu::work_size(wq), lc);
  std::vector<T> work(static_cast<size_t>(lwork));
  info = lu::orgqr(lm, lc, lk, a, ld, tau, work.data(), lwork);
  lu::check_info(op, "?orgqr", info);
}

}  // namespace tessera::prims::householder
