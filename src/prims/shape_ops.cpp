// Structural primitives: broadcast_in_dim, reshape, transpose, iota. Their kernels move bits, so
// they dispatch on the element size only (1, 2, 4 or 8 bytes; float0 has none).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "compiler/index_map.h"
#include "compiler/passes/simplify.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive broadcast_in_dim("broadcast_in_dim");
Primitive reshape("reshape");
Primitive transpose("transpose");
Primitive iota("iota");

namespace {

using ad::one;

using runtime::parallel_for;

// Elements per parallel task: large enough that waking a worker pays.
constexpr int64_t kTaskElems = int64_t{1} << 16;

std::string tuple_str(const std::vector<int64_t>& v) { return shape_str(v); }

void check_shapelike(const char* op, const char* what, const std::vector<int64_t>& s) {
  for (int64_t d : s) {
    if (d < 0)
      throw TypeError(op_message(op, std::string(op) + " " + what +
                                         " must have every element be nonnegative, got " +
                                         tuple_str(s) + "."));
  }
}

// ---------------------------------------------------------------- broadcast_in_dim

std::vector<Aval> broadcast_in_dim_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("broadcast_in_dim", in, 1);  // before in[0]
  const Aval& x = in[0];
  const auto& shape = p.get_ints("shape");
  const auto& bdims = p.get_ints("broadcast_dimensions");
  const char* op = "broadcast_in_dim";
  check_shapelike(op, "shape", shape);
  check_shapelike(op, "broadcast_dimensions", bdims);
  check_shape(op, shape, itemsize(x.dtype));
  if (x.ndim() != static_cast<int64_t>(bdims.size()))
    throw TypeError(op_message(
        op,
        "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
        "broadcast_dimensions " +
            tuple_str(bdims) + " for operand ndim " + std::to_string(x.ndim()) + "."));
  if (static_cast<int64_t>(shape.size()) < x.ndim())
    throw TypeError(op_message(
        op,
        "broadcast_in_dim target broadcast shape must have equal or higher rank to the operand "
        "shape; got operand ndim " +
            std::to_string(x.ndim()) + " and target broadcast ndim " +
            std::to_string(shape.size()) + "."));
  for (int64_t b : bdims) {
    if (b >= static_cast<int64_t>(shape.size()))
      throw TypeError(op_message(
          op, "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got " +
                  tuple_str(bdims) + " for operand ndim " + std::to_string(x.ndim()) +
                  " and shape " + tuple_str(shape) + "."));
  }
  for (size_t i = 0; i < bdims.size(); ++i) {
    const int64_t d = x.shape[i];
    if (d != 1 && d != shape[bdims[i]])
      throw TypeError(op_message(
          op,
          "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
          "corresponding dimensions in the target broadcast shape; got operand of shape " +
              shape_str(x.shape) + ", target broadcast shape " + tuple_str(shape) +
              ", broadcast_dimensions " + tuple_str(bdims)));
  }
  for (size_t i = 1; i < bdims.size(); ++i) {
    if (bdims[i] <= bdims[i - 1])
      throw TypeError(op_message(op,
                                 "broadcast_in_dim broadcast_dimensions must be strictly "
                                 "increasing; got broadcast_dimensions " +
                                     tuple_str(bdims)));
  }
  return {Aval{shape, x.dtype, x.weak_type}};
}

template <class U>
void broadcast_kernel(const U* in, U* out, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& strides) {
  // dims/strides: collapsed output dims and the input stride of each (0 = broadcast).
  const int nd = static_cast<int>(dims.size());
  const int64_t inner = dims[nd - 1], ist = strides[nd - 1];
  int64_t outer = 1;
  for (int d = 0; d < nd - 1; ++d) outer *= dims[d];
  const int64_t grain = std::max<int64_t>(1, kTaskElems / inner);
  parallel_for(outer, grain, [&](int64_t o0, int64_t o1) {
    // Odometer over the outer dims, initialized from o0.
    std::vector<int64_t> idx(std::max(nd - 1, 0));
    int64_t off = 0;
    for (int64_t d = nd - 2, r = o0; d >= 0; --d) {
      idx[d] = r % dims[d];
      r /= dims[d];
      off += idx[d] * strides[d];
    }
    for (int64_t o = o0; o < o1; ++o) {
      U* dst = out + o * inner;
      const U* src = in + off;
      if (ist == 1) {
        std::memcpy(dst, src, inner * sizeof(U));
      } else if (ist == 0) {
        const U v = *src;
        for (int64_t j = 0; j < inner; ++j) dst[j] = v;
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[j] = src[j * ist];
      }
      for (int d = nd - 2; d >= 0; --d) {
        off += strides[d];
        if (++idx[d] < dims[d]) break;
        off -= idx[d] * strides[d];
        idx[d] = 0;
      }
    }
  });
}

std::vector<Array> broadcast_in_dim_impl(const ExecContext& ctx, std::span<const Array> args,
                                         const Params& p, std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  // Only size-1 dims added: the row-major bytes are the same.
  if (x.size() == oa.size()) return {Array(oa, x.buffer())};
  Array out = empty_array(oa, "broadcast_in_dim", ctx.device);
  if (oa.size() == 0) return {out};
  const auto& bdims = p.get_ints("broadcast_dimensions");
  const std::vector<int64_t> xs = row_major_strides(x.shape());
  std::vector<int64_t> st(oa.shape.size(), 0);
  for (size_t i = 0; i < bdims.size(); ++i)
    if (x.shape()[i] != 1) st[bdims[i]] = xs[i];
  // Collapse: drop size-1 output dims, merge neighbours that step through memory together.
  std::vector<int64_t> dims, strides;
  for (size_t d = 0; d < oa.shape.size(); ++d) {
    if (oa.shape[d] == 1) continue;
    if (!dims.empty() && strides.back() == st[d] * oa.shape[d]) {
      dims.back() *= oa.shape[d];
      strides.back() = st[d];
    } else {
      dims.push_back(oa.shape[d]);
      strides.push_back(st[d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    strides.push_back(0);
  }
  kernels::dispatch_bits(itemsize(oa.dtype), [&]<class U>() {
    broadcast_kernel(static_cast<const U*>(x.raw_data()), static_cast<U*>(out.buffer()->data()),
                     dims, strides);
  });
  return {out};
}

// ---------------------------------------------------------------- reshape

std::vector<Aval> reshape_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("reshape", in, 1);
  const Aval& x = in[0];
  const auto& ns = p.get_ints("new_sizes");
  for (int64_t d : ns) {
    if (d < 0)
      throw TypeError(
          op_message("reshape", "new_sizes must all be nonnegative, got " + tuple_str(ns) + "."));
  }
  check_shape("reshape", ns, itemsize(x.dtype));
  if (shape_size(ns, "reshape") != x.size())
    throw TypeError(op_message(
        "reshape", "cannot reshape " + x.str() + " (" + std::to_string(x.size()) +
                       " elements) into " + tuple_str(ns) + "; the total size must be unchanged"));
  return {Aval{ns, x.dtype, x.weak_type}};
}

std::vector<Array> reshape_impl(const ExecContext&, std::span<const Array> args, const Params&,
                                std::span<const Aval> outs) {
  return {Array(outs[0], args[0].buffer())};  // row-major: same bytes
}

// ---------------------------------------------------------------- transpose

std::vector<Aval> transpose_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("transpose", in, 1);
  const Aval& x = in[0];
  const auto& perm = p.get_ints("permutation");
  if (static_cast<int64_t>(perm.size()) != x.ndim())
    throw TypeError(
        op_message("transpose",
                   "transpose permutation must have the same length as the operand rank, got "
                   "permutation " +
                       tuple_str(perm) + " for operand shape " + shape_str(x.shape) + "."));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i))
      throw TypeError(
          op_message("transpose",
                     "transpose permutation isn't a permutation of operand dimensions, got "
                     "permutation " +
                         tuple_str(perm) + " for operand shape " + shape_str(x.shape) + "."));
  }
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = x.shape[perm[i]];
  return {Aval{out, x.dtype, x.weak_type}};
}

// Scalar tile: dst[c*dcs + r] = src[r*srs + c] for r < nr, c < nc.
template <class U>
inline void tile_scalar(const U* src, int64_t srs, U* dst, int64_t dcs, int64_t nr, int64_t nc) {
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t r = 0; r < nr; ++r) dst[c * dcs + r] = src[r * srs + c];
}

#if defined(__AVX2__)
// 8x8 transpose of 32-bit elements in registers.
inline void tile8x8_u32(const uint32_t* src, int64_t srs, uint32_t* dst, int64_t dcs) {
  __m256 r0 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 0 * srs));
  __m256 r1 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 1 * srs));
  __m256 r2 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 2 * srs));
  __m256 r3 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 3 * srs));
  __m256 r4 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * srs));
  __m256 r5 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 5 * srs));
  __m256 r6 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 6 * srs));
  __m256 r7 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 7 * srs));
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  float* d = reinterpret_cast<float*>(dst);
  _mm256_storeu_ps(d + 0 * dcs, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(d + 1 * dcs, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(d + 2 * dcs, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(d + 3 * dcs, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(d + 4 * dcs, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(d + 5 * dcs, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(d + 6 * dcs, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(d + 7 * dcs, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// 4x4 transpose of 64-bit elements in registers.
inline void tile4x4_u64(const uint64_t* src, int64_t srs, uint64_t* dst, int64_t dcs) {
  __m256d r0 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 0 * srs));
  __m256d r1 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 1 * srs));
  __m256d r2 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 2 * srs));
  __m256d r3 = _mm256_loadu_pd(reinterpret_cast<const double*>(src + 3 * srs));
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  double* d = reinterpret_cast<double*>(dst);
  _mm256_storeu_pd(d + 0 * dcs, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(d + 1 * dcs, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(d + 2 * dcs, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(d + 3 * dcs, _mm256_permute2f128_pd(t1, t3, 0x31));
}

// 8x8 transpose of 16-bit elements in registers.
inline void tile8x8_u16(const uint16_t* src, int64_t srs, uint16_t* dst, int64_t dcs) {
  __m128i r[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * srs));
  __m128i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    t[i + 4] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 8; h += 4) {
    u[h + 0] = _mm_unpacklo_epi32(t[h + 0], t[h + 1]);
    u[h + 1] = _mm_unpackhi_epi32(t[h + 0], t[h + 1]);
    u[h + 2] = _mm_unpacklo_epi32(t[h + 2], t[h + 3]);
    u[h + 3] = _mm_unpackhi_epi32(t[h + 2], t[h + 3]);
  }
  for (int h = 0; h < 8; h += 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (h + 0) * dcs),
                     _mm_unpacklo_epi64(u[h + 0], u[h + 2]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (h + 1) * dcs),
                     _mm_unpackhi_epi64(u[h + 0], u[h + 2]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (h + 2) * dcs),
                     _mm_unpacklo_epi64(u[h + 1], u[h + 3]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (h + 3) * dcs),
                     _mm_unpackhi_epi64(u[h + 1], u[h + 3]));
  }
}
#endif

// Cache tile edge: a tile row is at least one 64-byte line.
template <class U>
inline constexpr int64_t kTile = sizeof(U) >= 4 ? 32 : 64;

// One cache tile (at most kTile x kTile). Full tiles go through a contiguous buffer: with
// power-of-two strides every row of a tile maps to the same cache set, so the source is read
// row by row and each destination row segment is written whole, in one go.
template <class U>
inline void tile(const U* src, int64_t srs, U* dst, int64_t dcs, int64_t nr, int64_t nc) {
  constexpr int64_t kT = kTile<U>;
  if (nr != kT || nc != kT) {
    tile_scalar(src, srs, dst, dcs, nr, nc);
    return;
  }
  alignas(64) U buf[kT * kT];
#if defined(__AVX2__)
  if constexpr (sizeof(U) >= 2) {
    constexpr int64_t kM = sizeof(U) == 8 ? 4 : 8;
    for (int64_t r = 0; r < kT; r += kM) {
      for (int64_t c = 0; c < kT; c += kM) {
        if constexpr (sizeof(U) == 2)
          tile8x8_u16(src + r * srs + c, srs, buf + c * kT + r, kT);
        else if constexpr (sizeof(U) == 4)
          tile8x8_u32(src + r * srs + c, srs, buf + c * kT + r, kT);
        else
          tile4x4_u64(src + r * srs + c, srs, buf + c * kT + r, kT);
      }
    }
  } else
#endif
  {
    for (int64_t r = 0; r < kT; ++r)
      for (int64_t c = 0; c < kT; ++c) buf[c * kT + r] = src[r * srs + c];
  }
  for (int64_t c = 0; c < kT; ++c) std::memcpy(dst + c * dcs, buf + c * kT, kT * sizeof(U));
}

// A transpose after collapsing: input dims `dims` (row-major), output order `perm`.
struct TransposePlan {
  std::vector<int64_t> dims, perm;
};

// Drops size-1 dims and merges input dims that stay adjacent and in order in the output.
TransposePlan collapse_transpose(const Shape& shape, const std::vector<int64_t>& perm) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<int64_t> keep_id(nd, -1);
  std::vector<int64_t> kdims;
  for (int64_t d = 0; d < nd; ++d) {
    if (shape[d] != 1) {
      keep_id[d] = static_cast<int64_t>(kdims.size());
      kdims.push_back(shape[d]);
    }
  }
  std::vector<int64_t> kperm;
  for (int64_t p : perm)
    if (keep_id[p] >= 0) kperm.push_back(keep_id[p]);
  // Groups: runs in output order whose input dims are consecutive.
  std::vector<std::vector<int64_t>> groups;
  for (size_t j = 0; j < kperm.size(); ++j) {
    if (!groups.empty() && groups.back().back() + 1 == kperm[j])
      groups.back().push_back(kperm[j]);
    else
      groups.push_back({kperm[j]});
  }
  // Order groups by their first input dim to get the collapsed input shape.
  std::vector<int64_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return groups[a][0] < groups[b][0]; });
  std::vector<int64_t> rank(groups.size());
  TransposePlan plan;
  for (size_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = static_cast<int64_t>(i);
    int64_t sz = 1;
    for (int64_t d : groups[order[i]]) sz *= kdims[d];
    plan.dims.push_back(sz);
  }
  for (size_t g = 0; g < groups.size(); ++g) plan.perm.push_back(rank[g]);
  return plan;
}

template <class U>
void transpose_kernel(const U* in, U* out, const TransposePlan& plan) {
  const auto& dims = plan.dims;
  const auto& perm = plan.perm;
  const int64_t nd = static_cast<int64_t>(dims.size());
  const std::vector<int64_t> is = row_major_strides(dims);
  // Output dims in order, with the input stride of each.
  std::vector<int64_t> odims(nd), ostr_in(nd);
  for (int64_t j = 0; j < nd; ++j) {
    odims[j] = dims[perm[j]];
    ostr_in[j] = is[perm[j]];
  }
  const std::vector<int64_t> os = row_major_strides(odims);
  const int64_t last = nd - 1;
  if (perm[last] == last) {
    // The innermost input dim stays innermost: copy runs of it.
    const int64_t run = dims[last];
    const int64_t outer = shape_size(odims) / run;
    parallel_for(outer, std::max<int64_t>(1, kTaskElems / run), [&](int64_t o0, int64_t o1) {
      std::vector<int64_t> idx(nd - 1);
      int64_t off = 0;
      for (int64_t d = nd - 2, r = o0; d >= 0; --d) {
        idx[d] = r % odims[d];
        r /= odims[d];
        off += idx[d] * ostr_in[d];
      }
      for (int64_t o = o0; o < o1; ++o) {
        std::memcpy(out + o * run, in + off, run * sizeof(U));
        for (int64_t d = nd - 2; d >= 0; --d) {
          off += ostr_in[d];
          if (++idx[d] < odims[d]) break;
          off -= idx[d] * ostr_in[d];
          idx[d] = 0;
        }
      }
    });
    return;
  }
  // 2-D tiles between input dim `rd` (innermost in the output) and the innermost input dim;
  // the other dims are iterated in output order.
  const int64_t rd = perm[last];
  const int64_t nrows = dims[rd], ncols = dims[last];
  const int64_t srs = is[rd];
  int64_t dcs = 0;  // output stride of the innermost input dim
  std::vector<int64_t> rdims, rstr_in, rstr_out;
  for (int64_t j = 0; j < nd; ++j) {
    if (perm[j] == last) dcs = os[j];
    if (perm[j] == last || perm[j] == rd) continue;
    rdims.push_back(odims[j]);
    rstr_in.push_back(ostr_in[j]);
    rstr_out.push_back(os[j]);
  }
  const int64_t nrest = static_cast<int64_t>(rdims.size());
  const int64_t outer = shape_size(rdims);
  // Tasks are blocks of kBlock rows; within one, kBlock x kBlock blocks of tiles, so that the
  // pages a block touches stay within the TLB (rows of a big matrix are pages apart).
  constexpr int64_t kT = kTile<U>, kBlock = std::max<int64_t>(kT, 1024 / sizeof(U));
  const int64_t rblocks = (nrows + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, kTaskElems / (kBlock * ncols));
  parallel_for(outer * rblocks, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t o = t / rblocks;
      const int64_t rb = t % rblocks;
      int64_t ioff = 0, ooff = 0;
      for (int64_t d = nrest - 1; d >= 0; --d) {
        const int64_t i = o % rdims[d];
        o /= rdims[d];
        ioff += i * rstr_in[d];
        ooff += i * rstr_out[d];
      }
      const int64_t rend = std::min(nrows, (rb + 1) * kBlock);
      for (int64_t cb = 0; cb < ncols; cb += kBlock) {
        const int64_t cend = std::min(ncols, cb + kBlock);
        for (int64_t r0 = rb * kBlock; r0 < rend; r0 += kT) {
          const int64_t nr = std::min(kT, rend - r0);
          for (int64_t c0 = cb; c0 < cend; c0 += kT)
            tile(in + ioff + r0 * srs + c0, srs, out + ooff + c0 * dcs + r0, dcs, nr,
                 std::min(kT, cend - c0));
        }
      }
    }
  });
}

std::vector<Array> transpose_impl(const ExecContext& ctx, std::span<const Array> args,
                                  const Params& p, std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  const TransposePlan plan = collapse_transpose(x.shape(), p.get_ints("permutation"));
  bool identity = true;
  for (size_t i = 0; i < plan.perm.size(); ++i) identity &= plan.perm[i] == int64_t(i);
  // Only size-1 dims move (or none): the row-major bytes are the same.
  if (identity || x.size() == 0) return {Array(oa, x.buffer())};
  Array out = empty_array(oa, "transpose", ctx.device);
  kernels::dispatch_bits(itemsize(oa.dtype), [&]<class U>() {
    transpose_kernel(static_cast<const U*>(x.raw_data()), static_cast<U*>(out.buffer()->data()),
                     plan);
  });
  return {out};
}

// ---------------------------------------------------------------- iota

std::vector<Aval> iota_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands("iota", in, 0);
  const DType dt = p.get_dtype("dtype");
  const auto& shape = p.get_ints("shape");
  const int64_t dim = p.get_int("dimension");
  check_shapelike("iota", "shape", shape);
  // The shape param is user input: a valid array shape before anything sizes from it.
  check_shape("iota", shape, is_extended(dt) ? 1 : itemsize(dt));
  if (!is_integer(dt) && !is_floating(dt))
    throw TypeError(op_message("iota", "iota does not accept dtype " + std::string(dtype_name(dt)) +
                                           ". Accepted dtypes are subtypes of number."));
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    throw ValueError(op_message("iota",
                                "iota dimension must be between 0 and len(shape), got "
                                "dimension=" +
                                    std::to_string(dim) + " for shape=" + tuple_str(shape)));
  return {Aval{shape, dt, false}};
}

template <class T>
void iota_kernel(T* out, const Shape& shape, int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[dim];
  auto value = [](int64_t i) -> T {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<uint64_t>(i));  // wraps as XLA's iota
    else
      return kernels::store<T>(static_cast<kernels::compute_t<T>>(i));
  };
  // Rows r = (o, i) of `inner` equal values; a task finds its first row's i by one division,
  // then walks runs of consecutive i (a loop of value(i) per element that vectorizes).
  parallel_for(outer * n, std::max<int64_t>(1, kTaskElems / std::max<int64_t>(inner, 1)),
               [&](int64_t r0, int64_t r1) {
                 int64_t r = r0;
                 while (r < r1) {
                   const int64_t i0 = r % n;
                   const int64_t end = std::min(r1, r + (n - i0));
                   if (inner == 1) {
                     for (int64_t q = r; q < end; ++q) out[q] = value(i0 + (q - r));
                   } else {
                     for (int64_t q = r; q < end; ++q)
                       std::fill(out + q * inner, out + (q + 1) * inner, value(i0 + (q - r)));
                   }
                   r = end;
                 }
               });
}

std::vector<Array> iota_impl(const ExecContext& ctx, std::span<const Array>, const Params& p,
                             std::span<const Aval> outs) {
  const Aval& oa = outs[0];
  Array out = empty_array(oa, "iota", ctx.device);
  if (oa.size() == 0) return {out};
  kernels::dispatch_dtype(oa.dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>)
      iota_kernel(static_cast<T*>(out.buffer()->data()), oa.shape, p.get_int("dimension"));
  });
  return {out};
}

// ---------------------------------------------------------------- autodiff rules (JAX's lax)
// Rules compute only with tessera::lax so that they work under any trace.

std::pair<std::vector<Array>, std::vector<Array>> broadcast_in_dim_jvp(
    std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  const auto& shape = p.get_ints("shape");
  const auto& bdims = p.get_ints("broadcast_dimensions");
  return ad::linear_jvp(primals, tangents,
                        [&](const Array& x) { return lax::broadcast_in_dim(x, shape, bdims); });
}

// Sums ct over the new dims and the dims the operand broadcast from size 1, then reshapes to
// the operand's shape.
std::vector<Array> broadcast_in_dim_transpose(std::span<const Array> cts, std::span<const Array>,
                                              std::span<const Aval> arg_avals, const Params& p) {
  const Aval& xa = arg_avals[0];
  const auto& shape = p.get_ints("shape");
  const auto& bdims = p.get_ints("broadcast_dimensions");
  const int64_t out_rank = static_cast<int64_t>(shape.size());
  std::vector<bool> keep(out_rank, false);
  for (size_t i = 0; i < bdims.size(); ++i)
    if (!(xa.shape[i] == 1 && shape[bdims[i]] != 1)) keep[bdims[i]] = true;
  std::vector<int64_t> sum_axes;
  for (int64_t d = 0; d < out_rank; ++d)
    if (!keep[d]) sum_axes.push_back(d);
  Array r = cts[0];
  if (!sum_axes.empty()) r = lax::reduce_sum(r, sum_axes);
  // broadcast_dimensions is strictly increasing, so the kept dims are in the operand's order;
  // the reshape restores the operand's size-1 dims.
  if (r.shape() != xa.shape) r = lax::reshape(r, xa.shape);
  if (r.dtype() != xa.dtype) r = lax::convert_element_type(r, xa.dtype);
  return one(r);
}

std::pair<std::vector<Array>, std::vector<Array>> reshape_jvp(std::span<const Array> primals,
                                                              std::span<const Array> tangents,
                                                              const Params& p) {
  const auto& ns = p.get_ints("new_sizes");
  return ad::linear_jvp(primals, tangents, [&](const Array& x) { return lax::reshape(x, ns); });
}

std::vector<Array> reshape_transpose(std::span<const Array> cts, std::span<const Array>,
                                     std::span<const Aval> arg_avals, const Params&) {
  return one(lax::reshape(cts[0], arg_avals[0].shape));
}

std::pair<std::vector<Array>, std::vector<Array>> transpose_jvp(std::span<const Array> primals,
                                                                std::span<const Array> tangents,
                                                                const Params& p) {
  const auto& perm = p.get_ints("permutation");
  return ad::linear_jvp(primals, tangents, [&](const Array& x) { return lax::transpose(x, perm); });
}

std::vector<Array> transpose_transpose(std::span<const Array> cts, std::span<const Array>,
                                       std::span<const Aval>, const Params& p) {
  const auto& perm = p.get_ints("permutation");
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return one(lax::transpose(cts[0], inv));
}

// iota has no inputs: its output is not differentiable (an undefined tangent).
std::pair<std::vector<Array>, std::vector<Array>> iota_jvp(std::span<const Array>,
                                                           std::span<const Array>,
                                                           const Params& p) {
  Array out =
      lax::broadcasted_iota(p.get_dtype("dtype"), p.get_ints("shape"), p.get_int("dimension"));
  return {one(out), one(Array())};
}

// ---------------------------------------------------------------- batching rules
// Rules compute only with tessera::lax so that they work under any trace; none transposes
// except reshape when the batch axis cannot stay where it is.

using batching::BatchOut;

// The batch axis (operand axis b) maps to a new output axis p placed between the outputs of
// operand axes b-1 and b, so broadcast_dimensions stays strictly increasing and the operand
// is used as is.
BatchOut broadcast_in_dim_batch(const BatchAxis&, std::span<const Array> args,
                                std::span<const int64_t> dims, const Params& p) {
  const Array& x = args[0];
  const int64_t b = dims[0];
  const auto& bd = p.get_ints("broadcast_dimensions");
  const int64_t pos = b == 0 ? 0 : bd[b - 1] + 1;
  Shape shape = p.get_ints("shape");
  shape.insert(shape.begin() + pos, x.shape()[b]);
  std::vector<int64_t> new_bd = batching::shift_dims(bd, pos);
  new_bd.insert(new_bd.begin() + b, pos);
  return {one(lax::broadcast_in_dim(x, shape, new_bd)), {pos}};
}

// Row-major: with the batch axis at b, the operand's elements are blocks of the logical dims
// after b, one per (logical prefix before b, batch index). When a prefix of new_sizes has the
// same element count as the logical dims before b, the batch axis can sit right after it with
// no data moving; otherwise it moves to the front first (one transpose).
BatchOut reshape_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                       const Params& p) {
  const Array& x = args[0];
  const int64_t b = dims[0];
  const int64_t size = x.shape()[b];
  const auto& ns = p.get_ints("new_sizes");
  int64_t before = 1;
  for (int64_t d = 0; d < b; ++d) before *= x.shape()[d];
  int64_t pos = -1, prefix = 1;
  for (size_t k = 0; k <= ns.size(); ++k) {
    if (prefix == before) {
      pos = static_cast<int64_t>(k);
      break;
    }
    if (k < ns.size()) prefix *= ns[k];
  }
  Array y = x;
  if (pos < 0) {
    y = batching::move_axis(x, b, 0);
    pos = 0;
  }
  Shape shape = ns;
  shape.insert(shape.begin() + pos, size);
  if (y.shape() == shape) return {one(y), {pos}};
  return {one(lax::reshape(y, shape)), {pos}};
}

// The batch axis stays where it is: the permutation carries it to the same position.
BatchOut transpose_batch(const BatchAxis&, std::span<const Array> args,
                         std::span<const int64_t> dims, const Params& p) {
  const Array& x = args[0];
  const int64_t b = dims[0];
  const auto& perm = p.get_ints("permutation");
  std::vector<int64_t> new_perm = batching::shift_dims(perm, b);
  new_perm.insert(new_perm.begin() + b, b);
  bool identity = true;
  for (size_t i = 0; i < new_perm.size(); ++i)
    identity = identity && new_perm[i] == static_cast<int64_t>(i);
  if (identity) return {one(x), {b}};
  return {one(lax::transpose(x, new_perm)), {b}};
}

}  // namespace

namespace {

// Simplifications (compiler/passes/simplify.h): an op that keeps its operand's shape is the
// operand (identity transpose, same-shape reshape and broadcast); transpose of a transpose is
// one transpose (or none), reshape of a reshape one reshape, broadcast of a broadcast one
// broadcast (size-1 axes compose: each stretches at most once).
void set_simplifications() {
  using compiler::forward;
  using compiler::new_eqn;
  using compiler::replace_with;
  using compiler::Rewrite;
  using compiler::SimplifyView;
  compiler::register_simplification(transpose, [](const SimplifyView& v) -> std::optional<Rewrite> {
    std::vector<int64_t> perm = v.eqn.params.get_ints("permutation");
    Atom x = v.eqn.invars[0];
    const JaxprEqn* inner = v.producer(x);
    if (inner != nullptr && inner->primitive == &transpose) {
      const std::vector<int64_t>& p1 = inner->params.get_ints("permutation");
      for (int64_t& q : perm) q = p1[static_cast<size_t>(q)];
      x = inner->invars[0];
    }
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
    if (identity) return forward(x);
    if (inner == nullptr || inner->primitive != &transpose) return std::nullopt;
    return replace_with(
        new_eqn(transpose, {x}, {v.eqn.outvars[0].aval()}, Params{{"permutation", perm}}));
  });
  compiler::register_simplification(reshape, [](const SimplifyView& v) -> std::optional<Rewrite> {
    Atom x = v.eqn.invars[0];
    const JaxprEqn* inner = v.producer(x);
    if (inner != nullptr && inner->primitive == &reshape) x = inner->invars[0];
    if (atom_aval(x).shape == v.eqn.outvars[0].aval().shape) return forward(x);
    if (inner == nullptr || inner->primitive != &reshape) return std::nullopt;
    return replace_with(new_eqn(reshape, {x}, {v.eqn.outvars[0].aval()}, v.eqn.params));
  });
  compiler::register_simplification(
      broadcast_in_dim, [](const SimplifyView& v) -> std::optional<Rewrite> {
        const Atom& x = v.eqn.invars[0];
        if (atom_aval(x).shape == v.eqn.outvars[0].aval().shape) return forward(x);
        const JaxprEqn* inner = v.producer(x);
        if (inner == nullptr || inner->primitive != &broadcast_in_dim) return std::nullopt;
        const std::vector<int64_t>& d1 = inner->params.get_ints("broadcast_dimensions");
        const std::vector<int64_t>& d2 = v.eqn.params.get_ints("broadcast_dimensions");
        std::vector<int64_t> dims;
        for (int64_t k : d1) dims.push_back(d2[static_cast<size_t>(k)]);
        return replace_with(new_eqn(
            broadcast_in_dim, {inner->invars[0]}, {v.eqn.outvars[0].aval()},
            Params{{"broadcast_dimensions", dims}, {"shape", v.eqn.params.get_ints("shape")}}));
      });
}

}  // namespace

// ---- Index maps (compiler/index_map.h): what loop fusion composes.

namespace index_maps {

using compiler::IndexMapResult;
using compiler::kir::Affine;

std::optional<IndexMapResult> broadcast_in_dim_map(std::span<const Aval> in, const Aval& out,
                                                   const Params& p, std::span<const Affine> at) {
  const auto& bdims = p.get_ints("broadcast_dimensions");
  const Shape& xs = in[0].shape;
  const size_t rank = at.empty() ? 0 : at[0].coeff.size();
  IndexMapResult r;
  for (size_t k = 0; k < xs.size(); ++k) {
    const auto d = static_cast<size_t>(bdims[k]);
    r.point.push_back(xs[k] == 1 && out.shape[d] != 1 ? Affine::constant(0, rank) : at[d]);
  }
  return r;
}

std::optional<IndexMapResult> reshape_map(std::span<const Aval> in, const Aval& out, const Params&,
                                          std::span<const Affine> at) {
  // Only unit dimensions added or dropped: the point maps coordinate by coordinate.
  std::vector<size_t> in_dims, out_dims;
  for (size_t d = 0; d < in[0].shape.size(); ++d)
    if (in[0].shape[d] != 1) in_dims.push_back(d);
  for (size_t d = 0; d < out.shape.size(); ++d)
    if (out.shape[d] != 1) out_dims.push_back(d);
  bool same = in_dims.size() == out_dims.size();
  for (size_t k = 0; same && k < in_dims.size(); ++k)
    same = in[0].shape[in_dims[k]] == out.shape[out_dims[k]];
  IndexMapResult r;
  if (same) {
    const size_t rank = at.empty() ? 0 : at[0].coeff.size();
    r.point.assign(in[0].shape.size(), Affine::constant(0, rank));
    for (size_t k = 0; k < in_dims.size(); ++k) r.point[in_dims[k]] = at[out_dims[k]];
    return r;
  }
  r.kind = IndexMapResult::Kind::kLinear;
  r.value = compiler::linear_offset(at, out.shape);
  return r;
}

std::optional<IndexMapResult> transpose_map(std::span<const Aval> in, const Aval&, const Params& p,
                                            std::span<const Affine> at) {
  const auto& perm = p.get_ints("permutation");
  IndexMapResult r;
  r.point.resize(in[0].shape.size());
  for (size_t d = 0; d < perm.size(); ++d) r.point[static_cast<size_t>(perm[d])] = at[d];
  return r;
}

std::optional<IndexMapResult> iota_map(std::span<const Aval>, const Aval&, const Params& p,
                                       std::span<const Affine> at) {
  IndexMapResult r;
  r.kind = IndexMapResult::Kind::kIndex;
  r.value = at[static_cast<size_t>(p.get_int("dimension"))];
  return r;
}

}  // namespace index_maps

void register_shape_ops() {
  for (Primitive* p : {&broadcast_in_dim, &reshape, &transpose, &iota})
    p->kind = PrimitiveKind::kIndexMap;
  broadcast_in_dim.signature = Signature::fixed(
      1, {{"shape", ParamKind::kInts}, {"broadcast_dimensions", ParamKind::kInts}});
  reshape.signature = Signature::fixed(1, {{"new_sizes", ParamKind::kInts}});
  transpose.signature = Signature::fixed(1, {{"permutation", ParamKind::kInts}});
  iota.signature = Signature::fixed(
      0,
      {{"dtype", ParamKind::kDType}, {"shape", ParamKind::kInts}, {"dimension", ParamKind::kInt}});
  broadcast_in_dim.abstract_eval = broadcast_in_dim_abstract;
  broadcast_in_dim.impl = broadcast_in_dim_impl;
  broadcast_in_dim.jvp = broadcast_in_dim_jvp;
  broadcast_in_dim.transpose = broadcast_in_dim_transpose;
  reshape.abstract_eval = reshape_abstract;
  reshape.impl = reshape_impl;
  reshape.jvp = reshape_jvp;
  reshape.transpose = reshape_transpose;
  transpose.abstract_eval = transpose_abstract;
  transpose.impl = transpose_impl;
  transpose.jvp = transpose_jvp;
  transpose.transpose = transpose_transpose;
  iota.abstract_eval = iota_abstract;
  iota.impl = iota_impl;
  iota.jvp = iota_jvp;
  broadcast_in_dim.batch = broadcast_in_dim_batch;
  compiler::register_index_map(broadcast_in_dim, index_maps::broadcast_in_dim_map);
  compiler::register_index_map(reshape, index_maps::reshape_map);
  compiler::register_index_map(transpose, index_maps::transpose_map);
  compiler::register_index_map(iota, index_maps::iota_map);
  reshape.batch = reshape_batch;
  transpose.batch = transpose_batch;
  // iota has no operands, so vmap never meets a batched one: its outputs are unbatched.
  iota.batch = [](const BatchAxis&, std::span<const Array>, std::span<const int64_t>,
                  const Params&) -> BatchOut {
    throw_internal("prims/shape_ops", "iota has no operands and cannot be batched");
  };
  for (Primitive* p : {&broadcast_in_dim, &reshape, &transpose, &iota}) register_primitive(*p);
  set_simplifications();
}

}  // namespace tessera::prims
