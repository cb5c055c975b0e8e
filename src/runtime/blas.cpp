#include "runtime/blas.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>

#include "runtime/thread_pool.h"
#include "tessera/errors.h"

namespace tessera::runtime::blas {
namespace {

// Below this many flops per block a split does not pay for the extra packing of the shared
// operand; measured on 2048^3 sgemm: 2-4 blocks match OpenBLAS's own threading, 8+ lose 5-10%.
constexpr int64_t kMinBlockFlops = int64_t{1} << 24;
constexpr int64_t kMaxBlocks = 4;
constexpr int64_t kMinBlockRows = 128;
// Tasks a batch is cut into at most (before the split of each entry is considered).
constexpr int64_t kTargetTasks = 8;

void check_dims(const char* fn, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                int64_t lda, int64_t ldb, int64_t ldc) {
  auto fail = [&](const std::string& why) {
    throw_internal("runtime/blas", std::string(fn) + ": " + why + " (m=" + std::to_string(m) +
                                       " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                                       " lda=" + std::to_string(lda) + " ldb=" +
                                       std::to_string(ldb) + " ldc=" + std::to_string(ldc) + ")");
  };
  if (m < 0 || n < 0 || k < 0) fail("negative size");
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
    fail("size exceeds the 32-bit BLAS interface");
  const int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
  if (lda < std::max<int64_t>(1, a_cols)) fail("lda too small");
  if (ldb < std::max<int64_t>(1, b_cols)) fail("ldb too small");
  if (ldc < std::max<int64_t>(1, n)) fail("ldc too small");
}

template <class T>
void zero_c(int64_t m, int64_t n, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
}

// GEMM shapes that are matrix-vector products go to gemv (about 3x faster in OpenBLAS 0.3.21,
// whose gemm packs the operands even then). y is zeroed first: with beta 0, some OpenBLAS
// versions scale y by 0, which would keep NaNs of uninitialized memory.
template <class T, class Gemv>
bool try_gemv(Gemv gemv, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
              const T* b, int64_t ldb, T* c, int64_t ldc) {
  if (n == 1) {  // c[:, 0] = op(A) · op(B)[:, 0]
    for (int64_t i = 0; i < m; ++i) c[i * ldc] = T(0);
    const int64_t incx = tb ? 1 : ldb;
    if (!ta)
      gemv(CblasRowMajor, CblasNoTrans, int(m), int(k), T(1), a, int(lda), b, int(incx), T(0), c,
           int(ldc));
    else
      gemv(CblasRowMajor, CblasTrans, int(k), int(m), T(1), a, int(lda), b, int(incx), T(0), c,
           int(ldc));
    return true;
  }
  if (m == 1) {  // c[0, :] = op(A)[0, :] · op(B)
    std::fill(c, c + n, T(0));
    const int64_t incx = ta ? lda : 1;
    if (!tb)
      gemv(CblasRowMajor, CblasTrans, int(k), int(n), T(1), b, int(ldb), a, int(incx), T(0), c, 1);
    else
      gemv(CblasRowMajor, CblasNoTrans, int(n), int(k), T(1), b, int(ldb), a, int(incx), T(0), c,
           1);
    return true;
  }
  return false;
}

template <class T>
void gemm_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
              const T* b, int64_t ldb, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  } else {
    dgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  }
}

template <class T>
void gemm_batched_impl(const GemmSpec& s, const T* a, const T* b, T* c) {
  init();
  if (s.batch <= 0 || s.m == 0 || s.n == 0) return;
  if ((!s.a_offsets.empty() && static_cast<int64_t>(s.a_offsets.size()) != s.batch) ||
      (!s.b_offsets.empty() && static_cast<int64_t>(s.b_offsets.size()) != s.batch))
    throw_internal("runtime/blas", "gemm_batched: offsets do not match the batch size");
  const int64_t nb = gemm_blocks(s.batch, s.m, s.n, s.k);
  const bool split_m = s.m >= s.n;
  const int64_t extent = split_m ? s.m : s.n;
  // Block size rounded up to 16 so block edges fall on micro-kernel tile edges.
  const int64_t bs = ((extent + nb - 1) / nb + 15) / 16 * 16;
  const int64_t blocks = (extent + bs - 1) / bs;
  const int64_t tasks = s.batch * blocks;
  const double flops_per_task = 2.0 * double(s.m) * double(s.n) * double(s.k) / double(blocks);
  const int64_t grain = std::max<int64_t>(
      1, static_cast<int64_t>(double(int64_t{1} << 21) / std::max(1.0, flops_per_task)));
  parallel_for(tasks, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bi = t / blocks, blk = t % blocks;
      const T* ab = a + (s.a_offsets.empty() ? 0 : s.a_offsets[bi]);
      const T* bb = b + (s.b_offsets.empty() ? 0 : s.b_offsets[bi]);
      T* cb = c + bi * s.m * s.n;
      const int64_t lo = blk * bs, hi = std::min(extent, lo + bs);
      if (split_m) {
        // Rows lo..hi of op(A): row i of op(A) starts at i*lda (stored m×k) or column i (k×m).
        const T* ap = s.trans_a ? ab + lo : ab + lo * s.lda;
        gemm_one(s.trans_a, s.trans_b, hi - lo, s.n, s.k, ap, s.lda, bb, s.ldb, cb + lo * s.n, s.n);
      } else {
        const T* bp = s.trans_b ? bb + lo * s.ldb : bb + lo;
        gemm_one(s.trans_a, s.trans_b, s.m, hi - lo, s.k, ab, s.lda, bp, s.ldb, cb + lo, s.n);
      }
    }
  });
}

}  // namespace

void init() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

int64_t gemm_blocks(int64_t batch, int64_t m, int64_t n, int64_t k) {
  const double flops = 2.0 * double(m) * double(n) * double(k);
  int64_t nb = (kTargetTasks + std::max<int64_t>(batch, 1) - 1) / std::max<int64_t>(batch, 1);
  nb = std::min<int64_t>(nb, kMaxBlocks);
  nb = std::min<int64_t>(nb, static_cast<int64_t>(flops / double(kMinBlockFlops)));
  nb = std::min<int64_t>(nb, std::max(m, n) / kMinBlockRows);
  return std::max<int64_t>(nb, 1);
}

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc) {
  init();
  check_dims("sgemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (k == 0) return zero_c(m, n, c, ldc);
  if (try_gemv<float>(cblas_sgemv, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)) return;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0f, a, int(lda), b,
              int(ldb), 0.0f, c, int(ldc));
}

void dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
           int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc) {
  init();
  check_dims("dgemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (k == 0) return zero_c(m, n, c, ldc);
  if (try_gemv<double>(cblas_dgemv, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)) return;
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0, a, int(lda), b,
              int(ldb), 0.0, c, int(ldc));
}

void gemm_batched(const GemmSpec& spec, const float* a, const float* b, float* c) {
  gemm_batched_impl(spec, a, b, c);
}
void gemm_batched(const GemmSpec& spec, const double* a, const double* b, double* c) {
  gemm_batched_impl(spec, a, b, c);
}

}  // namespace tessera::runtime::blas
