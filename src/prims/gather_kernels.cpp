// Gather and scatter kernels (gather_kernels.h). Both first find each point's operand offset
// (the index dtype is dispatched once for the whole loop), then move windows: a gather copies
// each window into its slot of the output (points in parallel: they write disjoint slots); a
// scatter combines each update window into the operand in point order. The scatter's threads
// split the *operand* into ranges and each applies, in point order, only the elements that land
// in its range: every element sees its updates in the same order whatever the thread count, so
// results are bitwise the same for any number of threads, duplicates included. Adds of many
// more update elements than operand elements also split the points into chunks fixed by the
// sizes (point_chunks below): still the same bits for any thread count.
#include "prims/gather_kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "prims/kernel_util.h"
#include "prims/scratch.h"
#include "prims/slicing_kernels.h"
#include "runtime/thread_pool.h"

namespace tessera::prims::gather_kernels {

namespace {

using kernels::compute_t;
using slicing_kernels::CopyPlan;

constexpr int64_t kTaskElems = int64_t{1} << 16;

template <class F>
void dispatch_index(DType d, F&& f) {
  switch (d) {
    case DType::kInt8:
      return f.template operator()<int8_t>();
    case DType::kInt16:
      return f.template operator()<int16_t>();
    case DType::kInt32:
      return f.template operator()<int32_t>();
    case DType::kInt64:
      return f.template operator()<int64_t>();
    case DType::kUInt8:
      return f.template operator()<uint8_t>();
    case DType::kUInt16:
      return f.template operator()<uint16_t>();
    case DType::kUInt32:
      return f.template operator()<uint32_t>();
    case DType::kUInt64:
      return f.template operator()<uint64_t>();
    default:
      break;
  }
  throw InternalError(std::string("internal error in gather/scatter: index dtype ") +
                      std::string(dtype_name(d)) + " is not an integer");
}

template <class I>
inline int64_t as_i64(I v) {
  if constexpr (std::is_same_v<I, uint64_t>)
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(v);
  else
    return static_cast<int64_t>(v);
}

// What finding a point's offsets needs, precomputed from the plan.
struct Locator {
  int64_t K = 0;
  std::vector<int64_t> comp_stride;         // per index component: the operand stride of its dim
  std::vector<int64_t> comp_lim;            // per index component: dim - window (the largest start)
  std::vector<int64_t> batch_coord;         // per batching pair: the point coordinate
  std::vector<int64_t> batch_stride;        // per batching pair: the operand stride
  std::vector<int64_t> point_dims;          // the points' shape
  std::vector<int64_t> other_bst;           // per point coordinate: stride in the other array
  std::vector<int64_t> point_batch_stride;  // per point coordinate: operand stride (batching)
  bool clamp = true;
  int64_t flat_bst = -1;  // points of rank <= 1 without batching: g's stride (else -1)

  explicit Locator(const WindowPlan& p, bool clamp_) : clamp(clamp_) {
    const std::vector<int64_t> ost = row_major_strides(p.operand);
    K = static_cast<int64_t>(p.index_map.size());
    for (int64_t d : p.index_map) {
      comp_stride.push_back(ost[d]);
      comp_lim.push_back(p.operand[d] - p.window[d]);
    }
    for (auto [d, j] : p.batching) {
      batch_coord.push_back(j);
      batch_stride.push_back(ost[d]);
    }
    point_dims.assign(p.points.begin(), p.points.end());
    other_bst = p.other_bst;
    other_bst.resize(point_dims.size(), 0);
    point_batch_stride.assign(point_dims.size(), 0);
    for (size_t b = 0; b < batch_coord.size(); ++b)
      point_batch_stride[static_cast<size_t>(batch_coord[b])] += batch_stride[b];
    if (batch_coord.empty() && point_dims.size() <= 1)
      flat_bst = other_bst.empty() ? 0 : other_bst[0];
  }

  // Point coordinates walked in order: seek() once per task (divisions), then step() per point
  // (an odometer: no division per point).
  struct Cursor {
    std::vector<int64_t> c;  // the point's coordinates
    int64_t other = 0;       // its offset in the other array
    int64_t batch = 0;       // its operand offset from the batching dims
  };

  void seek(Cursor& k, int64_t g) const {
    k.c.assign(point_dims.size(), 0);
    k.other = k.batch = 0;
    if (flat_bst >= 0) {
      k.other = g * flat_bst;
      return;
    }
    int64_t rem = g;
    for (int64_t j = static_cast<int64_t>(point_dims.size()) - 1; j >= 0; --j) {
      const int64_t c = rem % point_dims[j];
      rem /= point_dims[j];
      k.c[j] = c;
      k.other += c * other_bst[j];
      k.batch += c * point_batch_stride[j];
    }
  }

  void step(Cursor& k) const {
    if (flat_bst >= 0) {
      k.other += flat_bst;
      return;
    }
    for (int64_t j = static_cast<int64_t>(point_dims.size()) - 1; j >= 0; --j) {
      k.other += other_bst[j];
      k.batch += point_batch_stride[j];
      if (++k.c[j] < point_dims[j]) return;
      k.other -= other_bst[j] * point_dims[j];
      k.batch -= point_batch_stride[j] * point_dims[j];
      k.c[j] = 0;
    }
  }

  // The operand offset of point g's window (false: out of bounds and not clamping) and the
  // point's offset in the other array; k is the cursor at g.
  template <class I>
  bool locate(const Cursor& k, const I* idx, int64_t g, int64_t* operand_off,
              int64_t* other_off) const {
    int64_t off = k.batch;
    *other_off = k.other;
    const I* v = idx + g * K;
    for (int64_t c = 0; c < K; ++c) {
      int64_t s = as_i64(v[c]);
      if (s < 0 || s > comp_lim[c]) {
        if (!clamp) return false;
        s = std::clamp<int64_t>(s, 0, comp_lim[c]);
      }
      off += s * comp_stride[c];
    }
    *operand_off = off;
    return true;
  }
};

// The window as a copy plan: in = the operand, out = the other array (offsets 0).
CopyPlan window_plan(const WindowPlan& p) {
  const std::vector<int64_t> ost = row_major_strides(p.operand);
  CopyPlan c;
  for (size_t i = 0; i < p.wdims.size(); ++i) {
    c.dims.push_back(p.window[p.wdims[i]]);
    c.in_st.push_back(ost[p.wdims[i]]);
    c.out_st.push_back(p.other_wst[i]);
  }
  return slicing_kernels::collapse(c);
}

int64_t window_elems(const CopyPlan& w) {
  int64_t n = 1;
  for (int64_t d : w.dims) n *= d;
  return n;
}

// Visits every window position: f(operand_offset, other_offset, run) over runs of the
// innermost dim (run elements, strides w.in_st.back() / w.out_st.back()).
template <class F>
inline void for_each_run(const CopyPlan& w, int64_t in0, int64_t out0, F&& f) {
  const int nd = static_cast<int>(w.dims.size());
  const int64_t inner = w.dims[nd - 1];
  int64_t outer = 1;
  for (int d = 0; d < nd - 1; ++d) outer *= w.dims[d];
  if (outer == 1) {
    f(in0, out0, inner);
    return;
  }
  int64_t stack[16] = {0};  // the window's rank is at most the operand's
  std::vector<int64_t> heap;
  int64_t* idx = stack;
  if (nd > 16) {
    heap.assign(static_cast<size_t>(nd), 0);
    idx = heap.data();
  }
  int64_t io = in0, oo = out0;
  for (int64_t o = 0; o < outer; ++o) {
    f(io, oo, inner);
    for (int d = nd - 2; d >= 0; --d) {
      io += w.in_st[d];
      oo += w.out_st[d];
      if (++idx[d] < w.dims[d]) break;
      io -= w.in_st[d] * w.dims[d];
      oo -= w.out_st[d] * w.dims[d];
      idx[d] = 0;
    }
  }
}

// Window starts are random addresses: a copy that waits for each row's first cache miss runs at
// the memory's latency, not its bandwidth. So the points are located kAhead ahead of the copy
// and the first bytes of each window are prefetched then (a ring of located points per task).
constexpr int64_t kAhead = 64;
constexpr int64_t kPrefetchBytes = 1024;  // per window: the hardware prefetcher does the rest
// Gathers of single elements whose output is at most this many bytes skip the prefetch ring.
constexpr int64_t kCachedBytes = int64_t{1} << 20;
// A scatter's read-modify-writes wait on their destination rows: more of them in flight.
constexpr int64_t kScatterAhead = 32;

struct Located {
  int64_t off = 0, other = 0;
  bool ok = false;
};

// One cache line. g++ 12 at -O2 deletes a loop of __builtin_prefetch calls whose trip count it
// does not know (the builtin counts as free of side effects and the loop as finite), so on x86
// the instruction is written out.
inline void prefetch_line(const char* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht1 (%0)" ::"r"(p));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

template <class U>
inline void prefetch_window(const U* src, const Located& s, int64_t bytes) {
  if (!s.ok) return;
  const char* p = reinterpret_cast<const char*>(src + s.off);
  for (int64_t b = 0; b < bytes; b += 64) prefetch_line(p + b);
}

template <class U>
void gather_typed(const U* src, const void* idx_data, DType idx_dt, const Locator& loc,
                  const CopyPlan& w, int64_t npoints, U fill, U* dst) {
  const int64_t wn = window_elems(w);
  const int64_t ist = w.in_st.back(), ost = w.out_st.back();
  const int64_t grain = std::max<int64_t>(1, kTaskElems / std::max<int64_t>(wn, 1));
  // Bytes worth prefetching per window: its first run when contiguous, else one element.
  const int64_t run_bytes = ist == 1 ? w.dims.back() * static_cast<int64_t>(sizeof(U)) : 1;
  const int64_t pf_bytes = std::min(run_bytes, kPrefetchBytes);
  dispatch_index(idx_dt, [&]<class I>() {
    const I* idx = static_cast<const I*>(idx_data);
    if (wn == 1 && loc.flat_bst >= 0 && loc.K == 1) {
      // One element per point from one index component (x[mask], take of scalars): a tight
      // loop whose independent loads the core overlaps by itself.
      const int64_t lim = loc.comp_lim[0], st = loc.comp_stride[0], bst = loc.flat_bst;
      const bool clamp = loc.clamp;
      runtime::parallel_for(npoints, runtime::kElementwiseGrain, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          const int64_t i = as_i64(idx[g]);
          const bool in = i >= 0 && i <= lim;
          dst[g * bst] = in || clamp ? src[std::clamp<int64_t>(i, 0, lim) * st] : fill;
        }
      });
      return;
    }
    if (wn == 1 && npoints * static_cast<int64_t>(sizeof(U)) <= kCachedBytes) {
      // One element per point from an operand small enough to sit in cache (a row permutation
      // of a batch of small matrices): a plain loop; prefetching would only add work.
      runtime::parallel_for(npoints, runtime::kElementwiseGrain, [&](int64_t g0, int64_t g1) {
        Locator::Cursor cur;
        loc.seek(cur, g0);
        for (int64_t g = g0; g < g1; ++g, loc.step(cur)) {
          int64_t off = 0, other = 0;
          const bool ok = loc.locate(cur, idx, g, &off, &other);
          dst[other] = ok ? src[off] : fill;
        }
      });
      return;
    }
    runtime::parallel_for(npoints, grain, [&](int64_t g0, int64_t g1) {
      Located ring[kAhead];
      Locator::Cursor cur;  // at the next point to fetch (fetches go in point order)
      loc.seek(cur, g0);
      auto fetch = [&](int64_t g, Located& s) {
        s.ok = loc.locate(cur, idx, g, &s.off, &s.other);
        loc.step(cur);
        prefetch_window(src, s, pf_bytes);
      };
      for (int64_t g = g0; g < std::min(g1, g0 + kAhead); ++g) fetch(g, ring[g % kAhead]);
      for (int64_t g = g0; g < g1; ++g) {
        Located& slot = ring[g % kAhead];
        const Located s = slot;
        if (g + kAhead < g1) fetch(g + kAhead, slot);
        if (wn == 1) {  // one element per point: no run loop
          dst[s.other] = s.ok ? src[s.off] : fill;
          continue;
        }
        for_each_run(w, s.off, s.other, [&](int64_t i, int64_t o, int64_t n) {
          if (!s.ok) {
            for (int64_t j = 0; j < n; ++j) dst[o + j * ost] = fill;
          } else if (ist == 1 && ost == 1) {
            std::memcpy(dst + o, src + i, static_cast<size_t>(n) * sizeof(U));
          } else {
            for (int64_t j = 0; j < n; ++j) dst[o + j * ost] = src[i + j * ist];
          }
        });
      }
    });
  });
}

template <Combine C, class T>
inline T combine(T acc, T v) {
  if constexpr (C == Combine::kSet) {
    return v;
  } else {
    using Cp = compute_t<T>;
    const Cp a = kernels::load(acc), b = kernels::load(v);
    Cp r;
    if constexpr (std::is_same_v<Cp, bool>) {
      if constexpr (C == Combine::kAdd || C == Combine::kMax)
        r = a || b;
      else
        r = a && b;
    } else if constexpr (C == Combine::kAdd) {
      if constexpr (std::is_integral_v<Cp>) {
        using Un = std::make_unsigned_t<Cp>;
        r = static_cast<Cp>(static_cast<Un>(static_cast<Un>(a) + static_cast<Un>(b)));
      } else {
        r = a + b;
      }
    } else if constexpr (C == Combine::kMul) {
      if constexpr (std::is_integral_v<Cp>)
        r = static_cast<Cp>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      else
        r = a * b;
    } else if constexpr (C == Combine::kMax) {
      if constexpr (std::is_floating_point_v<Cp>)
        r = (b > a || b != b) ? b : a;  // NaN propagates, as lax.max
      else
        r = b > a ? b : a;
    } else {
      if constexpr (std::is_floating_point_v<Cp>)
        r = (b < a || b != b) ? b : a;
      else
        r = b < a ? b : a;
    }
    return kernels::store<T>(r);
  }
}

// Adds with many more update elements than operand elements (embedding gradients, histograms)
// split their points into a fixed number of chunks: chunk 0 adds into the operand, chunk c > 0
// into a table of its own that starts at the add's identity, and the tables are added to the
// operand in chunk order at the end. Each thread then streams its own stretch of the updates
// (with one chunk, every thread would read every update row to find the few in its range). The
// chunk count depends on the sizes only, so the bits are the same for any thread count; for
// integers (wrapping) and bools the sum is the sequential one exactly, for floats it is the
// sum of the chunks' sequential sums.
constexpr int64_t kChunkMinElems = int64_t{1} << 20;  // update elements
constexpr int64_t kChunkRatio = 8;  // update elements per operand element, per chunk
constexpr int64_t kMaxChunks = 8;

template <Combine C>
int64_t point_chunks(int64_t update_elems, int64_t operand_size) {
  if constexpr (C != Combine::kAdd) {
    return 1;
  } else {
    if (update_elems < kChunkMinElems || operand_size <= 0) return 1;
    return std::clamp<int64_t>(update_elems / (kChunkRatio * operand_size), 1, kMaxChunks);
  }
}

// The add's identity: -0.0 for floats (-0 + x is x for every x, +0 and -0 included).
template <class T>
T add_identity() {
  using Cp = compute_t<T>;
  if constexpr (std::is_floating_point_v<Cp>)
    return kernels::store<T>(static_cast<Cp>(-0.0));
  else
    return kernels::store<T>(Cp{});
}

template <Combine C, class T>
void scatter_typed(T* dst, const T* upd, const int64_t* base_op, const int64_t* base_up,
                   int64_t npoints, const CopyPlan& w, int64_t operand_size) {
  // The window plan's "in" is the operand (dst) and "out" the updates.
  const int64_t wn = window_elems(w);
  int64_t span = 1;  // operand elements from a window's first to its last, plus one
  for (size_t d = 0; d < w.dims.size(); ++d) span += (w.dims[d] - 1) * std::abs(w.in_st[d]);
  const int64_t dst_st = w.in_st.back(), up_st = w.out_st.back();
  const int64_t pf_bytes =
      dst_st == 1 ? std::min(w.dims.back() * static_cast<int64_t>(sizeof(T)), kPrefetchBytes) : 1;
  const int64_t up_pf_bytes =
      up_st == 1 ? std::min(w.dims.back() * static_cast<int64_t>(sizeof(T)), kPrefetchBytes) : 1;
  const int64_t chunks = point_chunks<C>(npoints * wn, operand_size);
  const bool parallel = npoints * wn > kTaskElems && runtime::num_threads() > 1;
  // Tasks: per chunk, `parts` ranges of the operand (one, when there are as many chunks as
  // threads or more).
  const int64_t threads = parallel ? runtime::num_threads() : 1;
  const int64_t parts = std::max<int64_t>(1, threads / chunks);
  ScratchBuf<T> partial((chunks - 1) * operand_size, "scatter");
  runtime::parallel_for(chunks * parts, 1, [&](int64_t t0, int64_t t1) {
    ScratchBuf<int64_t> own(npoints / chunks + 1, "scatter");  // the task's points, in order
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c = t / parts, part = t % parts;
      const int64_t lo = operand_size * part / parts, hi = operand_size * (part + 1) / parts;
      const int64_t g_lo = npoints * c / chunks, g_hi = npoints * (c + 1) / chunks;
      T* table = c == 0 ? dst : partial.data() + (c - 1) * operand_size;
      if (c > 0) std::fill(table + lo, table + hi, add_identity<T>());
      auto mine = [&](int64_t b) { return b >= 0 && b < hi && b + span > lo; };
      // One branch-free pass picks the task's points (a data-dependent branch per point would
      // mispredict half the time), so the update loop below and its prefetches see only them.
      int64_t count = 0;
      for (int64_t g = g_lo; g < g_hi; ++g) {
        own[count] = g;
        count += mine(base_op[g]) ? 1 : 0;
      }
      for (int64_t k = 0; k < count; ++k) {
        // The destination windows are random rows: prefetch the one kScatterAhead points on.
        if (k + kScatterAhead < count) {
          const int64_t ga = own[k + kScatterAhead];
          const char* p = reinterpret_cast<const char*>(table + base_op[ga]);
          for (int64_t q = 0; q < pf_bytes; q += 64) prefetch_line(p + q);
          const char* pu = reinterpret_cast<const char*>(upd + base_up[ga]);
          for (int64_t q = 0; q < up_pf_bytes; q += 64) prefetch_line(pu + q);
        }
        const int64_t g = own[k];
        const int64_t b = base_op[g];
        for_each_run(w, b, base_up[g], [&](int64_t i, int64_t u, int64_t n) {
          int64_t j0 = 0, j1 = n;
          if (dst_st == 1) {  // the run's operand elements are contiguous: cut it to [lo, hi)
            j0 = std::max<int64_t>(0, lo - i);
            j1 = std::min<int64_t>(n, hi - i);
            for (int64_t j = j0; j < j1; ++j)
              table[i + j] = combine<C>(table[i + j], upd[u + j * up_st]);
            return;
          }
          for (int64_t j = 0; j < n; ++j) {
            const int64_t at = i + j * dst_st;
            if (at >= lo && at < hi) table[at] = combine<C>(table[at], upd[u + j * up_st]);
          }
        });
      }
    }
  });
  if (chunks == 1) return;
  runtime::parallel_for(operand_size, kTaskElems, [&](int64_t i0, int64_t i1) {
    for (int64_t c = 1; c < chunks; ++c) {
      const T* src = partial.data() + (c - 1) * operand_size;
      for (int64_t i = i0; i < i1; ++i) dst[i] = combine<C>(dst[i], src[i]);
    }
  });
}

}  // namespace

void gather(const Array& operand, const Array& indices, const WindowPlan& plan, bool clamp,
            const void* fill, void* out) {
  int64_t npoints = 1;
  for (int64_t n : plan.points) npoints *= n;
  const CopyPlan w = window_plan(plan);
  if (npoints == 0 || window_elems(w) == 0) return;
  const Locator loc(plan, clamp);
  kernels::dispatch_bits(itemsize(operand.dtype()), [&]<class U>() {
    U f;
    std::memcpy(&f, fill, sizeof(U));
    gather_typed<U>(static_cast<const U*>(operand.raw_data()), indices.raw_data(), indices.dtype(),
                    loc, w, npoints, f, static_cast<U*>(out));
  });
}

void scatter(void* out, const Array& updates, const Array& indices, const WindowPlan& plan,
             bool clamp, Combine combine_kind) {
  int64_t npoints = 1;
  for (int64_t n : plan.points) npoints *= n;
  const CopyPlan w = window_plan(plan);
  if (npoints == 0 || window_elems(w) == 0) return;
  const Locator loc(plan, clamp);
  ScratchBuf<int64_t> base_op(npoints, "scatter"), base_up(npoints, "scatter");
  dispatch_index(indices.dtype(), [&]<class I>() {
    const I* idx = static_cast<const I*>(indices.raw_data());
    if (loc.flat_bst >= 0 && loc.K == 1) {
      // One index component, points of rank <= 1 (rows of an embedding table): a loop the
      // compiler vectorizes, no cursor.
      const int64_t lim = loc.comp_lim[0], st = loc.comp_stride[0], bst = loc.flat_bst;
      const bool clamp_ = loc.clamp;
      runtime::parallel_for(npoints, kTaskElems, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          const int64_t i = as_i64(idx[g]);
          const bool in = i >= 0 && i <= lim;
          base_op[g] = in || clamp_ ? std::clamp<int64_t>(i, 0, lim) * st : -1;
          base_up[g] = g * bst;
        }
      });
      return;
    }
    runtime::parallel_for(npoints, kTaskElems, [&](int64_t g0, int64_t g1) {
      Locator::Cursor cur;
      loc.seek(cur, g0);
      for (int64_t g = g0; g < g1; ++g, loc.step(cur)) {
        int64_t off = 0, uo = 0;
        base_op[g] = loc.locate(cur, idx, g, &off, &uo) ? off : -1;
        base_up[g] = uo;
      }
    });
  });
  int64_t operand_size = 1;
  for (int64_t n : plan.operand) operand_size *= n;
  kernels::dispatch_dtype(updates.dtype(), [&]<class T>() {
    T* dst = static_cast<T*>(out);
    const T* upd = static_cast<const T*>(updates.raw_data());
    switch (combine_kind) {
      case Combine::kSet:
        return scatter_typed<Combine::kSet, T>(dst, upd, base_op.data(), base_up.data(), npoints, w,
                                               operand_size);
      case Combine::kAdd:
        return scatter_typed<Combine::kAdd, T>(dst, upd, base_op.data(), base_up.data(), npoints, w,
                                               operand_size);
      case Combine::kMul:
        return scatter_typed<Combine::kMul, T>(dst, upd, base_op.data(), base_up.data(), npoints, w,
                                               operand_size);
      case Combine::kMin:
        return scatter_typed<Combine::kMin, T>(dst, upd, base_op.data(), base_up.data(), npoints, w,
                                               operand_size);
      case Combine::kMax:
        return scatter_typed<Combine::kMax, T>(dst, upd, base_op.data(), base_up.data(), npoints, w,
                                               operand_size);
    }
  });
}

}  // namespace tessera::prims::gather_kernels
