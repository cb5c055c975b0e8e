// Byte-moving kernels shared by the slicing family (slice, rev, dynamic_slice,
// dynamic_update_slice, concatenate, pad): a strided copy between two row-major buffers and a
// fill. They dispatch on the element size only (1, 2, 4 or 8 bytes; float0 moves nothing).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "prims/kernel_util.h"
#include "runtime/thread_pool.h"
#include "tessera/array.h"

namespace tessera::prims::slicing_kernels {

// Elements per parallel task: large enough that waking a worker pays.
inline constexpr int64_t kTaskElems = int64_t{1} << 16;

// For every index j of `dims`: out[out_off + j·out_st] = in[in_off + j·in_st] (element units;
// input strides may be negative, as rev's are).
struct CopyPlan {
  std::vector<int64_t> dims, in_st, out_st;
  int64_t in_off = 0, out_off = 0;
};

// Drops size-1 dims and merges neighbours that step through both buffers together, so that a
// contiguous innermost run becomes one memcpy.
inline CopyPlan collapse(const CopyPlan& p) {
  CopyPlan c;
  c.in_off = p.in_off;
  c.out_off = p.out_off;
  for (size_t d = 0; d < p.dims.size(); ++d) {
    if (p.dims[d] == 1) continue;
    if (!c.dims.empty() && c.in_st.back() == p.in_st[d] * p.dims[d] &&
        c.out_st.back() == p.out_st[d] * p.dims[d]) {
      c.dims.back() *= p.dims[d];
      c.in_st.back() = p.in_st[d];
      c.out_st.back() = p.out_st[d];
    } else {
      c.dims.push_back(p.dims[d]);
      c.in_st.push_back(p.in_st[d]);
      c.out_st.push_back(p.out_st[d]);
    }
  }
  if (c.dims.empty()) {
    c.dims = {1};
    c.in_st = {1};
    c.out_st = {1};
  }
  return c;
}

template <class U>
void strided_copy_typed(const U* in, U* out, const CopyPlan& plan) {
  const auto& dims = plan.dims;
  const int nd = static_cast<int>(dims.size());
  const int64_t inner = dims[nd - 1], ist = plan.in_st[nd - 1], ost = plan.out_st[nd - 1];
  int64_t outer = 1;
  for (int d = 0; d < nd - 1; ++d) outer *= dims[d];
  if (outer == 1 && ist == 1 && ost == 1) {  // one contiguous run: split it across the pool
    runtime::parallel_for(inner, kTaskElems, [&](int64_t j0, int64_t j1) {
      std::memcpy(out + plan.out_off + j0, in + plan.in_off + j0,
                  static_cast<size_t>(j1 - j0) * sizeof(U));
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kTaskElems / inner);
  runtime::parallel_for(outer, grain, [&](int64_t o0, int64_t o1) {
    // Odometer over the outer dims, started at o0.
    std::vector<int64_t> idx(static_cast<size_t>(std::max(nd - 1, 0)));
    int64_t ioff = plan.in_off, ooff = plan.out_off;
    int64_t rem = o0;
    for (int d = nd - 2; d >= 0; --d) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
      ioff += idx[d] * plan.in_st[d];
      ooff += idx[d] * plan.out_st[d];
    }
    for (int64_t o = o0; o < o1; ++o) {
      const U* src = in + ioff;
      U* dst = out + ooff;
      if (ist == 1 && ost == 1) {
        std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(U));
      } else if (ost == 1) {
        for (int64_t j = 0; j < inner; ++j) dst[j] = src[j * ist];
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[j * ost] = src[j * ist];
      }
      for (int d = nd - 2; d >= 0; --d) {
        ioff += plan.in_st[d];
        ooff += plan.out_st[d];
        if (++idx[d] < dims[d]) break;
        ioff -= idx[d] * plan.in_st[d];
        ooff -= idx[d] * plan.out_st[d];
        idx[d] = 0;
      }
    }
  });
}

// The strided copy for elements of `elem` bytes; nothing when any dim is 0.
inline void strided_copy(const void* in, void* out, size_t elem, const CopyPlan& plan) {
  for (int64_t d : plan.dims)
    if (d == 0) return;
  const CopyPlan c = collapse(plan);
  kernels::dispatch_bits(elem, [&]<class U>() {
    strided_copy_typed(static_cast<const U*>(in), static_cast<U*>(out), c);
  });
}

// out[0, n) = *value (elements of `elem` bytes).
inline void fill(void* out, const void* value, size_t elem, int64_t n) {
  if (n == 0) return;
  kernels::dispatch_bits(elem, [&]<class U>() {
    U v;
    std::memcpy(&v, value, sizeof(U));
    U* o = static_cast<U*>(out);
    runtime::parallel_for(n, runtime::kElementwiseGrain,
                          [&](int64_t i0, int64_t i1) { std::fill(o + i0, o + i1, v); });
  });
}

// The value of a rank-0 concrete integer array as int64 (uint64 values past int64's range
// saturate; clamping makes them the largest start anyway).
inline int64_t index_value(const Array& i) {
  if (i.dtype() == DType::kUInt64) {
    const uint64_t v = *static_cast<const uint64_t*>(i.raw_data());
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
  }
  if (i.dtype() == DType::kInt64) return *static_cast<const int64_t*>(i.raw_data());
  return static_cast<int64_t>(load_as_double(i.dtype(), i.raw_data()));  // exact below 2^53
}

// XLA's clamp of a dynamic start: into [0, dim - size].
inline int64_t clamp_start(int64_t start, int64_t dim, int64_t size) {
  return std::clamp<int64_t>(start, 0, dim - size);
}

}  // namespace tessera::prims::slicing_kernels
