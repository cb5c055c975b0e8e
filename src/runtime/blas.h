// Thin, checked wrappers over OpenBLAS's cblas, and a batched GEMM that Tessera's one thread pool
// parallelizes (OpenBLAS itself runs single-threaded: two pools on two cores fight).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::runtime::blas {

// Sets OpenBLAS to one thread (our pool splits the work around it). Idempotent, thread-safe;
// every entry point below calls it, register_dot_general() calls it at registration.
void init();

// One row-major GEMM, C[m,n] = op(A)·op(B) (alpha 1, beta 0), on the calling thread.
// op(A) is m×k: A is stored m×k with leading dimension lda (trans_a false) or k×m (trans_a
// true); likewise op(B) is k×n from k×n (trans_b false) or n×k storage. Throws InternalError
// on sizes that BLAS would reject (negative, leading dimension too small, > INT_MAX).
// k == 0 writes zeros; m == 0 or n == 0 does nothing.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc);
void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
           int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc);

// A batch of GEMMs with one geometry: C[b] = op(A[b])·op(B[b]) for b < batch, where A[b] starts
// at a + a_offsets[b] (elements), B[b] at b + b_offsets[b], and C is dense [batch, m, n].
struct GemmSpec {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  int64_t lda = 0, ldb = 0;
  std::vector<int64_t> a_offsets, b_offsets;  // size batch; empty means all zero
};

// Runs the batch on the pool: tasks are batch entries, each split into a fixed number of row
// (or column) blocks chosen from the geometry alone, so results never depend on the thread count.
void gemm_batched(const GemmSpec& spec, const float* a, const float* b, float* c);
void gemm_batched(const GemmSpec& spec, const double* a, const double* b, double* c);

// Row (or column) blocks one GEMM of this geometry is split into (exposed for tests/benchmarks).
int64_t gemm_blocks(int64_t batch, int64_t m, int64_t n, int64_t k);

}  // namespace tessera::runtime::blas
