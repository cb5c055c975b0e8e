// im2col + gemm convolution (conv_kernels.h).
#include "prims/conv_kernels.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "prims/kernel_util.h"
#include "runtime/blas.h"
#include "runtime/thread_pool.h"
#include "tessera/errors.h"

namespace tessera::prims::conv {

namespace {

// Scratch elements one task's im2col matrix may hold (2 MiB of float32): big enough that the
// gemm's column count is a few hundred, small enough to stay in the L2 cache.
constexpr int64_t kScratchElems = int64_t{1} << 19;
// Columns a task aims for (a gemm narrower than this runs well below peak).
constexpr int64_t kTargetColumns = 256;

int64_t prod(const std::vector<int64_t>& v, size_t begin = 0) {
  int64_t p = 1;
  for (size_t i = begin; i < v.size(); ++i) p *= v[i];
  return p;
}

template <class T>
inline T mac(T c, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return c | (a & b);
  } else {
    using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
    return static_cast<T>(
        static_cast<W>(static_cast<W>(c) + static_cast<W>(a) * static_cast<W>(b)));
  }
}

// C[m, n] (ldc) = op(A)[m, k] · B[k, n] (ldb), op(A) = A [m, k] or, with trans_a, Aᵀ of
// A [k, m] (lda).
template <class T>
void small_gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                T* c, int64_t ldc, bool trans_a = false) {
  if constexpr (std::is_same_v<T, float>) {
    runtime::blas::sgemm(trans_a, false, m, n, k, a, lda, b, ldb, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    runtime::blas::dgemm(trans_a, false, m, n, k, a, lda, b, ldb, c, ldc);
  } else {
    for (int64_t i = 0; i < m; ++i) {
      T* crow = c + i * ldc;
      std::fill(crow, crow + n, T(0));
      for (int64_t kk = 0; kk < k; ++kk) {
        const T av = trans_a ? a[kk * lda + i] : a[i * lda + kk];
        const T* brow = b + kk * ldb;
        for (int64_t j = 0; j < n; ++j) crow[j] = mac<T>(crow[j], av, brow[j]);
      }
    }
  }
}

template <class T>
inline T add_wrapping(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a | b;
  } else if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
  }
}

// A per-thread scratch buffer that grows and never shrinks: no steady-state allocation.
template <class T, int kSlot>
T* scratch(int64_t n) {
  thread_local std::unique_ptr<T[]> buf;
  thread_local int64_t capacity = 0;
  if (capacity < n) {
    buf.reset(new T[static_cast<size_t>(n)]);
    capacity = n;
  }
  return buf.get();
}

// For each spatial dim d, window offset w and output index j: the input index read, or -1 when
// the position falls into padding or between dilated input elements.
std::vector<std::vector<int64_t>> index_tables(const Geometry& g) {
  std::vector<std::vector<int64_t>> tab(g.in.size());
  for (size_t d = 0; d < g.in.size(); ++d) {
    const int64_t dilated = g.in[d] == 0 ? 0 : 1 + g.lhs_dilation[d] * (g.in[d] - 1);
    tab[d].assign(static_cast<size_t>(g.window[d] * g.out[d]), -1);
    for (int64_t w = 0; w < g.window[d]; ++w)
      for (int64_t j = 0; j < g.out[d]; ++j) {
        const int64_t pos = j * g.strides[d] + w * g.rhs_dilation[d] - g.pad_lo[d];
        if (pos >= 0 && pos < dilated && pos % g.lhs_dilation[d] == 0)
          tab[d][static_cast<size_t>(w * g.out[d] + j)] = pos / g.lhs_dilation[d];
      }
  }
  return tab;
}

// By output position, on lhs [C, S..., N], rhs [I, K..., O], out [N', S'..., O]: one task per
// (group, output position p) computes out[:, p, group's features] = colᵀ · W, where col's rows
// are (input feature, window offset) pairs and its columns the group's batch elements, copied
// whole (contiguous in this layout). The inner dimension is split into chunks that fit the
// scratch (fixed by the geometry) and accumulated in order.
template <class T>
void run_by_position(const T* lhs, const T* rhs, T* out, const Geometry& g,
                     const std::vector<std::vector<int64_t>>& tab,
                     const std::vector<int64_t>& in_strides) {
  const size_t ns = g.in.size();
  const int64_t groups = g.feature_groups * g.batch_groups;
  const int64_t og = g.out_features / groups, cg = g.in_features;
  const int64_t ks = prod(g.window), kdim = cg * ks;
  const int64_t in_plane = prod(g.in), out_plane = prod(g.out);
  const int64_t n_out = g.batch / g.batch_groups;
  const int64_t kchunk = std::max<int64_t>(1, std::min(kdim, kScratchElems / n_out));
  runtime::parallel_for(groups * out_plane, 1, [&](int64_t t0, int64_t t1) {
    std::vector<int64_t> kk(ns), oi(ns);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t grp = t / out_plane, pos = t % out_plane;
      int64_t rem = pos;
      for (size_t d = ns; d-- > 0;) {
        oi[d] = rem % g.out[d];
        rem /= g.out[d];
      }
      const int64_t fgrp = g.feature_groups > 1 ? grp : 0;
      const int64_t bgrp = g.batch_groups > 1 ? grp : 0;
      const T* src = lhs + fgrp * cg * in_plane * g.batch + bgrp * n_out;
      T* col = scratch<T, 0>(kchunk * n_out);
      T* acc = scratch<T, 1>(og * n_out);
      T* part = scratch<T, 2>(og * n_out);
      for (int64_t k0 = 0; k0 < kdim; k0 += kchunk) {
        const int64_t k1 = std::min(kdim, k0 + kchunk);
        for (int64_t row = k0; row < k1; ++row) {
          const int64_t c = row / ks;
          int64_t w = row % ks, off = 0;
          bool valid = true;
          for (size_t d = ns; d-- > 0;) {
            kk[d] = w % g.window[d];
            w /= g.window[d];
            const int64_t idx = tab[d][static_cast<size_t>(kk[d] * g.out[d] + oi[d])];
            if (idx < 0) valid = false;
            off += idx * in_strides[d];
          }
          T* dst = col + (row - k0) * n_out;
          if (valid)
            std::memcpy(static_cast<void*>(dst), src + (c * in_plane + off) * g.batch,
                        sizeof(T) * n_out);
          else
            std::fill(dst, dst + n_out, T(0));
        }
        const T* weights = rhs + k0 * g.out_features + grp * og;
        small_gemm<T>(n_out, og, k1 - k0, col, n_out, weights, g.out_features, k0 == 0 ? acc : part,
                      og, /*trans_a=*/true);
        if (k0 > 0)
          for (int64_t i = 0; i < og * n_out; ++i) acc[i] = add_wrapping<T>(acc[i], part[i]);
      }
      for (int64_t n = 0; n < n_out; ++n)
        std::memcpy(static_cast<void*>(out + (n * out_plane + pos) * g.out_features + grp * og),
                    acc + n * og, sizeof(T) * og);
    }
  });
}

// Channels-last: out[n, p, grp·og + o] for a chunk of output positions p per task. Each row
// of the im2col matrix is one output position: for each window offset the group's input
// features, contiguous in the input, copied whole (or zeros in padding); the weights [K..., I,
// O] are already the gemm's right-hand side and the result rows land in the output directly.
template <class T>
void run_channels_last(const T* lhs, const T* rhs, T* out, const Geometry& g,
                       const std::vector<std::vector<int64_t>>& tab,
                       const std::vector<int64_t>& in_strides) {
  const size_t ns = g.in.size();
  const int64_t groups = g.feature_groups * g.batch_groups;
  const int64_t og = g.out_features / groups, cg = g.in_features;
  const int64_t ks = prod(g.window), kdim = cg * ks;
  const int64_t in_plane = prod(g.in), out_plane = prod(g.out);
  const int64_t n_out = g.batch / g.batch_groups;
  int64_t rows = kTargetColumns;
  while (rows > 1 && rows * kdim > kScratchElems) rows /= 2;
  rows = std::min(rows, out_plane);
  const int64_t chunks = (out_plane + rows - 1) / rows;
  const int64_t task_work = og * kdim * rows;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(task_work, 1));
  runtime::parallel_for(n_out * groups * chunks, grain, [&](int64_t t0, int64_t t1) {
    std::vector<int64_t> oi(ns), kk(ns);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t chunk = t % chunks;
      const int64_t grp = (t / chunks) % groups;
      const int64_t n = t / (chunks * groups);
      const int64_t p0 = chunk * rows, p1 = std::min(out_plane, p0 + rows);
      const int64_t fgrp = g.feature_groups > 1 ? grp : 0;
      const int64_t bgrp = g.batch_groups > 1 ? grp : 0;
      const T* src = lhs + (bgrp * n_out + n) * in_plane * g.features + fgrp * cg;
      T* col = scratch<T, 0>((p1 - p0) * kdim);
      for (int64_t p = p0; p < p1; ++p) {
        int64_t rem = p;
        for (size_t d = ns; d-- > 0;) {
          oi[d] = rem % g.out[d];
          rem /= g.out[d];
        }
        T* dst = col + (p - p0) * kdim;
        std::fill(kk.begin(), kk.end(), 0);
        for (int64_t w = 0; w < ks; ++w, dst += cg) {
          int64_t off = 0;
          bool valid = true;
          for (size_t d = 0; d < ns; ++d) {
            const int64_t idx = tab[d][static_cast<size_t>(kk[d] * g.out[d] + oi[d])];
            if (idx < 0) valid = false;
            off += idx * in_strides[d];
          }
          if (valid)
            std::memcpy(static_cast<void*>(dst), src + off * g.features, sizeof(T) * cg);
          else
            std::fill(dst, dst + cg, T(0));
          for (size_t d = ns; d-- > 0;) {  // next window offset, row-major
            if (++kk[d] < g.window[d]) break;
            kk[d] = 0;
          }
        }
      }
      T* o = out + (n * out_plane + p0) * g.out_features + grp * og;
      small_gemm<T>(p1 - p0, og, kdim, col, kdim, rhs + grp * og, g.out_features, o,
                    g.out_features);
    }
  });
}

template <class T>
void run(const T* lhs, const T* rhs, T* out, const Geometry& g) {
  const size_t ns = g.in.size();
  const int64_t groups = g.feature_groups * g.batch_groups;
  const int64_t og = g.out_features / groups;  // output features per group
  const int64_t cg = g.in_features;            // input features per group
  const int64_t ks = prod(g.window);           // window positions
  const int64_t kdim = cg * ks;                // gemm inner size
  const int64_t in_plane = prod(g.in);         // elements of one input feature map
  const int64_t out_plane = prod(g.out);       // P: output positions
  const int64_t n_out = g.batch / g.batch_groups;
  const int64_t wo = g.out[ns - 1];                   // columns per output row
  const int64_t rows = wo == 0 ? 0 : out_plane / wo;  // output rows (all dims but the last)
  if (n_out == 0 || g.out_features == 0 || out_plane == 0) return;
  if (kdim == 0) {
    std::memset(static_cast<void*>(out), 0, sizeof(T) * n_out * g.out_features * out_plane);
    return;
  }
  const auto tab = index_tables(g);
  std::vector<int64_t> in_strides(ns, 1);
  for (size_t d = ns - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * g.in[d];
  if (g.layout == Layout::kChannelsLast) {
    run_channels_last(lhs, rhs, out, g, tab, in_strides);
    return;
  }
  if (g.layout == Layout::kByPosition) {
    // Few output positions, many batch elements (the weight gradient's convolution: a window
    // as large as the image): one task per (group, output position), whose gemm columns are
    // the batch elements, so the weights are read once per position instead of once per
    // batch element.
    run_by_position(lhs, rhs, out, g, tab, in_strides);
    return;
  }
  // Output rows per task: about kTargetColumns columns, capped by the scratch size.
  int64_t rows_per_task = std::max<int64_t>(1, (kTargetColumns + wo - 1) / wo);
  while (rows_per_task > 1 && kdim * rows_per_task * wo > kScratchElems) rows_per_task /= 2;
  rows_per_task = std::min(rows_per_task, rows);
  const int64_t chunks = (rows + rows_per_task - 1) / rows_per_task;
  const int64_t tasks = n_out * groups * chunks;
  // Work per task decides the grain: one task per chunk unless tasks are tiny.
  const int64_t task_work = og * kdim * rows_per_task * wo;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(task_work, 1));

  runtime::parallel_for(tasks, grain, [&](int64_t t0, int64_t t1) {
    std::vector<int64_t> kk(ns), oi(ns);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t chunk = t % chunks;
      const int64_t grp = (t / chunks) % groups;
      const int64_t n = t / (chunks * groups);
      const int64_t r0 = chunk * rows_per_task, r1 = std::min(rows, r0 + rows_per_task);
      const int64_t cols = (r1 - r0) * wo;
      // Which lhs batch element and features this group reads.
      const int64_t fgrp = g.feature_groups > 1 ? grp : 0;
      const int64_t bgrp = g.batch_groups > 1 ? grp : 0;
      const int64_t nb = bgrp * n_out + n;
      const T* src = lhs + (nb * g.features + fgrp * cg) * in_plane;
      T* col = scratch<T, 0>(kdim * cols);
      for (int64_t row = 0; row < kdim; ++row) {
        const int64_t c = row / ks;
        int64_t w = row % ks;
        for (size_t d = ns; d-- > 0;) {
          kk[d] = w % g.window[d];
          w /= g.window[d];
        }
        const T* plane = src + c * in_plane;
        const int64_t* last = tab[ns - 1].data() + kk[ns - 1] * wo;
        T* dst = col + row * cols;
        for (int64_t r = r0; r < r1; ++r, dst += wo) {
          // The outer output index of row r, and the input offset it reads (or padding).
          int64_t rem = r, off = 0;
          bool valid = true;
          for (size_t d = ns - 1; d-- > 0;) {
            oi[d] = rem % g.out[d];
            rem /= g.out[d];
            const int64_t idx = tab[d][static_cast<size_t>(kk[d] * g.out[d] + oi[d])];
            if (idx < 0) valid = false;
            off += idx * in_strides[d];
          }
          if (!valid) {
            std::fill(dst, dst + wo, T(0));
            continue;
          }
          const T* p = plane + off;
          for (int64_t j = 0; j < wo; ++j) dst[j] = last[j] >= 0 ? p[last[j]] : T(0);
        }
      }
      const T* weights = rhs + grp * og * kdim;
      T* o = out + (n * g.out_features + grp * og) * out_plane + r0 * wo;
      small_gemm<T>(og, cols, kdim, weights, kdim, col, cols, o, out_plane);
    }
  });
}

}  // namespace

bool by_position(const Geometry& g) {
  const int64_t groups = g.feature_groups * g.batch_groups;
  const int64_t n_out = g.batch / std::max<int64_t>(g.batch_groups, 1);
  const int64_t out_plane = prod(g.out);
  return out_plane < n_out && out_plane * groups >= 2;
}

void conv_canonical(DType dtype, const void* lhs, const void* rhs, void* out, const Geometry& g) {
  kernels::dispatch_dtype(dtype, [&]<class T>() {
    if constexpr (kernels::is_half_v<T>) {
      throw InternalError("internal error in prims/conv: 16-bit floats reach the kernel");
    } else {
      run<T>(static_cast<const T*>(lhs), static_cast<const T*>(rhs), static_cast<T*>(out), g);
    }
  });
}

}  // namespace tessera::prims::conv
