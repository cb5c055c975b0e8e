// Reductions over a set of axes: reduce_sum, reduce_max, reduce_prod, reduce_min and the
// logical reduce_and, reduce_or, reduce_xor (bool and integers), one kernel templated on the Op.
//
// Floats sum pairwise (fixed leaves, fixed tree), so the error grows as O(log n) eps and the
// result is bitwise the same for any thread count: work is cut into chunks whose boundaries
// depend only on the shape, and partials are combined in a fixed order. 16-bit floats
// accumulate in float32 and round once; integers wrap around in their own dtype.
//
// Plan: drop size-1 dims, merge neighbouring dims of the same kind (kept/reduced), then reduce
// one reduced group per pass, innermost first: a trailing group is a row reduction
// (contiguous, lane-vectorized), an inner one a column reduction [O, R, I] -> [O, I]
// (rows accumulated into a vector along the contiguous axis).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <type_traits>

#include "compiler/reduce_order.h"
#include "compiler/reduce_rule.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/reduce_tree.h"
#include "prims/scratch.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive reduce_sum("reduce_sum");
Primitive reduce_max("reduce_max");
Primitive reduce_prod("reduce_prod");
Primitive reduce_min("reduce_min");
Primitive reduce_and("reduce_and");
Primitive reduce_or("reduce_or");
Primitive reduce_xor("reduce_xor");

namespace {

using ad::one;

using kernels::compute_t;
using runtime::parallel_for;

constexpr int64_t kTaskElems = int64_t{1} << 16;  // elements per parallel task, at least
// Lanes of the contiguous reduction: 256 bytes of accumulators (8 AVX registers); a block is
// 8 elements per lane, summed in order before the pairing.
// The order's constants are reduce_order.h's (the compiler reproduces it).
template <class Acc>
inline constexpr int64_t kLanes = reduce_order::lanes_for_bytes(static_cast<int64_t>(sizeof(Acc)));
template <class Acc>
inline constexpr int64_t kBlock = reduce_order::kPerLane* kLanes<Acc>;
constexpr int64_t kHalfBlock = kBlock<float>;  // 16-bit floats convert this many at a time
using reduce_order::kColWidth;
using reduce_order::kLeafRows;
using reduce_order::kRowChunk;

// Scratch memory (std::vector<bool> has no data()): scratch.h.
template <class T>
using Buf = ScratchBuf<T>;

// Each Op: kName, kAccepts<A> (the storage/compute types its primitive accepts), identity<A>()
// and combine(a, b).
struct SumOp {
  static constexpr const char* kName = "reduce_sum";
  template <class A>
  static constexpr bool kAccepts = !std::is_same_v<A, bool>;
  template <class A>
  static A identity() {
    return A(0);
  }
  template <class A>
  static A combine(A a, A b) {
    if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
      using U = std::make_unsigned_t<A>;
      return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));  // wraps
    } else {
      return a + b;
    }
  }
};

// reduce_max (kMax) and reduce_min: NaN wins; on bool, logical or / and.
template <bool kMax>
struct ExtremumOp {
  static constexpr const char* kName = kMax ? "reduce_max" : "reduce_min";
  template <class A>
  static constexpr bool kAccepts = true;
  template <class A>
  static A identity() {
    if constexpr (std::is_same_v<A, bool>)
      return !kMax;
    else if constexpr (std::is_floating_point_v<A>)
      return kMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    else
      return kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
  template <class A>
  static A combine(A a, A b) {
    if constexpr (std::is_same_v<A, bool>)
      return kMax ? (a | b) : (a & b);
    else if constexpr (std::is_floating_point_v<A>)
      return ((kMax ? b > a : b < a) || b != b) ? b : a;  // NaN wins
    else
      return (kMax ? b > a : b < a) ? b : a;
  }
};
using MaxOp = ExtremumOp<true>;
using MinOp = ExtremumOp<false>;

// Integer products wrap: the low bits of a product depend only on the low bits of its factors,
// so multiplying in uint64 and truncating is exact modular arithmetic (no signed overflow).
struct ProdOp {
  static constexpr const char* kName = "reduce_prod";
  template <class A>
  static constexpr bool kAccepts = !std::is_same_v<A, bool>;
  template <class A>
  static A identity() {
    return A(1);
  }
  template <class A>
  static A combine(A a, A b) {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else
      return a * b;
  }
};

// The logical reductions: bool and integers (bitwise on integers).
template <class A>
inline constexpr bool kIsLogical = std::is_integral_v<A>;

struct AndOp {
  static constexpr const char* kName = "reduce_and";
  template <class A>
  static constexpr bool kAccepts = kIsLogical<A>;
  template <class A>
  static A identity() {
    if constexpr (std::is_same_v<A, bool>)
      return true;
    else
      return static_cast<A>(~std::make_unsigned_t<A>(0));  // all bits set
  }
  template <class A>
  static A combine(A a, A b) {
    return static_cast<A>(a & b);
  }
};

struct OrOp {
  static constexpr const char* kName = "reduce_or";
  template <class A>
  static constexpr bool kAccepts = kIsLogical<A>;
  template <class A>
  static A identity() {
    return A(0);
  }
  template <class A>
  static A combine(A a, A b) {
    return static_cast<A>(a | b);
  }
};

struct XorOp {
  static constexpr const char* kName = "reduce_xor";
  template <class A>
  static constexpr bool kAccepts = kIsLogical<A>;
  template <class A>
  static A identity() {
    return A(0);
  }
  template <class A>
  static A combine(A a, A b) {
    return static_cast<A>(a ^ b);
  }
};

template <class Acc, class In>
inline Acc ld(In v) {
  return static_cast<Acc>(kernels::load(v));
}

// 16-bit floats -> float32 for a block (F16C where available); exact.
template <class In>
void to_float_block(const In* p, int64_t n, float* out) {
  int64_t i = 0;
  if constexpr (std::is_same_v<In, float16_t>) {
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i,
                       _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
#endif
    for (; i < n; ++i) out[i] = half_bits_to_float(p[i].bits);
  } else {
    for (; i < n; ++i) out[i] = bfloat16_bits_to_float(p[i].bits);
  }
}

// float32 -> 16-bit floats, rounding to nearest even (as kernels::store).
template <class T>
void from_float_block(const float* p, int64_t n, T* out) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float16_t>) {
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                       _mm256_cvtps_ph(_mm256_loadu_ps(p + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  }
  for (; i < n; ++i) out[i] = kernels::store<T>(p[i]);
}

// Short runs: L independent accumulators (the tail of fewer than L elements one per lane),
// then a fixed tree over the lanes.
template <class Op, class Acc, int64_t L, class In>
Acc reduce_lanes(const In* p, int64_t n) {
  const int64_t nv = n / L * L;
  Acc lanes[L];
  for (int64_t l = 0; l < L; ++l) lanes[l] = Op::template identity<Acc>();
  for (int64_t i = 0; i < nv; i += L)
    for (int64_t l = 0; l < L; ++l) lanes[l] = Op::combine(lanes[l], ld<Acc>(p[i + l]));
  for (int64_t i = nv; i < n; ++i) lanes[i - nv] = Op::combine(lanes[i - nv], ld<Acc>(p[i]));
  for (int64_t w = L / 2; w > 0; w /= 2)
    for (int64_t l = 0; l < w; ++l) lanes[l] = Op::combine(lanes[l], lanes[l + w]);
  return lanes[0];
}

// Reduces n contiguous elements, pairwise: kLanes accumulators (vector registers) sum blocks
// of kBlock elements (8 in order per lane); the blocks' lane vectors are paired
// as they stream by (a binary counter: whole vectors are added, so no horizontal work per
// block); the last n % kLanes elements go one per lane, then a fixed tree reduces the lanes.
// Error O(log n) eps; the order depends on n only.
template <class Op, class Acc, class In>
Acc reduce_contig(const In* p, int64_t n) {
  if constexpr (kernels::is_half_v<In>) {
    // Convert a block at a time to float and reduce it there; pair the blocks' results.
    float buf[kHalfBlock];
    constexpr int kMaxLevels = 64;
    Acc stack[kMaxLevels];
    int levels[kMaxLevels], top = 0;
    for (int64_t i = 0;;) {
      const int64_t m = std::min(kHalfBlock, n - i);
      to_float_block(p + i, m, buf);
      Acc cur = reduce_contig<Op, Acc>(static_cast<const float*>(buf), m);
      i += m;
      if (i >= n) {
        while (top > 0) cur = Op::combine(stack[--top], cur);
        return cur;
      }
      int lvl = 0;
      while (top > 0 && levels[top - 1] == lvl) cur = Op::combine(stack[--top], cur), ++lvl;
      stack[top] = cur;
      levels[top++] = lvl;
    }
  } else {
    if (n < reduce_order::kShortRow) {
      Acc a = Op::template identity<Acc>();
      for (int64_t i = 0; i < n; ++i) a = Op::combine(a, ld<Acc>(p[i]));
      return a;
    }
    constexpr int64_t L = kLanes<Acc>, kB = kBlock<Acc>, kPer = kB / L;
    if (n < kB) return reduce_lanes<Op, Acc, reduce_order::kSmallRowLanes>(p, n);
    constexpr int kMaxLevels = 64;
    Acc stack[kMaxLevels][L];
    int levels[kMaxLevels], top = 0;
    const int64_t nblocks = n / kB;
    Acc cur[L];
    for (int64_t b = 0; b < nblocks; ++b) {
      const In* q = p + b * kB;
      for (int64_t l = 0; l < L; ++l) cur[l] = ld<Acc>(q[l]);
      for (int64_t k = 1; k < kPer; ++k)
        for (int64_t l = 0; l < L; ++l) cur[l] = Op::combine(cur[l], ld<Acc>(q[k * L + l]));
      int lvl = 0;
      while (top > 0 && levels[top - 1] == lvl) {
        --top;
        for (int64_t l = 0; l < L; ++l) cur[l] = Op::combine(stack[top][l], cur[l]);
        ++lvl;
      }
      for (int64_t l = 0; l < L; ++l) stack[top][l] = cur[l];
      levels[top++] = lvl;
    }
    // The partial last block: whole lane groups, as one more item.
    const In* q = p + nblocks * kB;
    const int64_t rest = n - nblocks * kB, nv = rest / L * L;
    for (int64_t l = 0; l < L; ++l) cur[l] = Op::template identity<Acc>();
    for (int64_t i = 0; i < nv; i += L)
      for (int64_t l = 0; l < L; ++l) cur[l] = Op::combine(cur[l], ld<Acc>(q[i + l]));
    for (int64_t i = nv; i < rest; ++i) cur[i - nv] = Op::combine(cur[i - nv], ld<Acc>(q[i]));
    while (top > 0) {
      --top;
      for (int64_t l = 0; l < L; ++l) cur[l] = Op::combine(stack[top][l], cur[l]);
    }
    for (int64_t w = L / 2; w > 0; w /= 2)
      for (int64_t l = 0; l < w; ++l) cur[l] = Op::combine(cur[l], cur[l + w]);
    return cur[0];
  }
}

// out[o] = reduce(in[o, 0:R]) for o < O.
template <class Op, class Acc, class In>
void reduce_rows(const In* in, int64_t O, int64_t R, Acc* out) {
  if (R < reduce_order::kShortRow) {  // short rows: in order, inline
    parallel_for(O, std::max<int64_t>(1, kTaskElems / R), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        Acc a = Op::template identity<Acc>();
        for (int64_t r = 0; r < R; ++r) a = Op::combine(a, ld<Acc>(in[o * R + r]));
        out[o] = a;
      }
    });
    return;
  }
  if (R <= kRowChunk) {
    parallel_for(O, std::max<int64_t>(1, kTaskElems / R), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) out[o] = reduce_contig<Op, Acc>(in + o * R, R);
    });
    return;
  }
  const int64_t nch = (R + kRowChunk - 1) / kRowChunk;
  Buf<Acc> partial(O * nch, Op::kName);
  parallel_for(O * nch, std::max<int64_t>(1, kTaskElems / kRowChunk), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / nch, c = t % nch;
      const int64_t b = c * kRowChunk;
      partial[t] = reduce_contig<Op, Acc>(in + o * R + b, std::min(kRowChunk, R - b));
    }
  });
  for (int64_t o = 0; o < O; ++o) out[o] = reduce_contig<Op, Acc>(partial.data() + o * nch, nch);
}

// out[0:w] = reduce over r < rows of p[r*ld + 0:w]: leaves of kLeafRows rows, paired
// recursively. scratch holds w * (depth + 1) accumulators.
template <class Op, class Acc, class In>
void col_block(const In* p, int64_t ld_, int64_t rows, int64_t w, Acc* out, Acc* scratch) {
  if (rows <= kLeafRows) {
    if constexpr (kernels::is_half_v<In>) {
      float buf[kColWidth];
      to_float_block(p, w, out);
      for (int64_t r = 1; r < rows; ++r) {
        to_float_block(p + r * ld_, w, buf);
        for (int64_t j = 0; j < w; ++j) out[j] = Op::combine(out[j], buf[j]);
      }
      return;
    }
    for (int64_t j = 0; j < w; ++j) out[j] = ld<Acc>(p[j]);
    for (int64_t r = 1; r < rows; ++r) {
      const In* row = p + r * ld_;
      for (int64_t j = 0; j < w; ++j) out[j] = Op::combine(out[j], ld<Acc>(row[j]));
    }
    return;
  }
  const int64_t half = reduce_order::leaf_half(rows);
  col_block<Op>(p, ld_, half, w, out, scratch);
  col_block<Op>(p + half * ld_, ld_, rows - half, w, scratch, scratch + w);
  for (int64_t j = 0; j < w; ++j) out[j] = Op::combine(out[j], scratch[j]);
}

inline int64_t col_depth(int64_t rows) {
  int64_t d = 1;
  while (rows > kLeafRows) {
    rows = reduce_order::leaf_half(rows);
    ++d;
  }
  return d + 1;
}

// out[o, i] = reduce over r < R of in[o*ostride + r*I + i]; R >= 1.
template <class Op, class Acc, class In>
void reduce_cols_wide(const In* in, int64_t O, int64_t R, int64_t I, int64_t ostride, Acc* out) {
  const int64_t nb = (I + kColWidth - 1) / kColWidth;
  const int64_t wmax = std::min(I, kColWidth);
  const int64_t rchunk = reduce_order::column_chunk_rows(I);
  const int64_t nrc = (R + rchunk - 1) / rchunk;
  Buf<Acc> partial(nrc > 1 ? O * nrc * I : 0, Op::kName);
  Acc* dest = nrc > 1 ? partial.data() : out;
  const int64_t task_elems = std::min(rchunk, R) * wmax;
  parallel_for(O * nrc * nb, std::max<int64_t>(1, kTaskElems / task_elems),
               [&](int64_t t0, int64_t t1) {
                 Buf<Acc> scratch(wmax * col_depth(std::min(rchunk, R)), Op::kName);
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t b = t % nb, rc = (t / nb) % nrc, o = t / (nb * nrc);
                   const int64_t r0 = rc * rchunk, c0 = b * kColWidth;
                   const int64_t w = std::min(kColWidth, I - c0);
                   col_block<Op>(in + o * ostride + r0 * I + c0, I, std::min(rchunk, R - r0), w,
                                 dest + (o * nrc + rc) * I + c0, scratch.data());
                 }
               });
  if (nrc == 1) return;
  parallel_for(O * nb, std::max<int64_t>(1, kTaskElems / (nrc * wmax)),
               [&](int64_t t0, int64_t t1) {
                 Buf<Acc> scratch(wmax * col_depth(nrc), Op::kName);
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t b = t % nb, o = t / nb, c0 = b * kColWidth;
                   col_block<Op>(partial.data() + o * nrc * I + c0, I, nrc,
                                 std::min(kColWidth, I - c0), out + o * I + c0, scratch.data());
                 }
               });
}

// out[o, i] = reduce over r < R of in[o, r, i]; R >= 1. Narrow rows (I small) are first
// reduced k rows at a time as rows of width k*I (so the inner loop is wide enough to
// vectorize), the R % k leftover rows are added into that wide row, then its k parts are paired.
template <class Op, class Acc, class In>
void reduce_cols(const In* in, int64_t O, int64_t R, int64_t I, Acc* out) {
  if (!reduce_order::narrow_column_path(R, I)) return reduce_cols_wide<Op>(in, O, R, I, R * I, out);
  const int64_t k = reduce_order::kFoldWidth / I;
  const int64_t R2 = R / k, W = k * I;
  Buf<Acc> wide(O * W, Op::kName);
  reduce_cols_wide<Op>(in, O, R2, W, R * I, wide.data());
  parallel_for(O, std::max<int64_t>(1, kTaskElems / (W + (R - R2 * k) * I)),
               [&](int64_t o0, int64_t o1) {
                 Buf<Acc> scratch(I * col_depth(k), Op::kName);
                 for (int64_t o = o0; o < o1; ++o) {
                   // The leftover rows are shorter than one wide row: add them into it.
                   Acc* w = wide.data() + o * W;
                   const In* left = in + (o * R + R2 * k) * I;
                   for (int64_t j = 0; j < (R - R2 * k) * I; ++j)
                     w[j] = Op::combine(w[j], ld<Acc>(left[j]));
                   col_block<Op>(w, I, k, I, out + o * I, scratch.data());
                 }
               });
}

struct Group {
  int64_t size;
  bool reduced;
};

template <class Op, class T>
void reduce_kernel(const T* in, const Shape& shape, const std::vector<int64_t>& axes, T* out,
                   int64_t out_size) {
  using Acc = compute_t<T>;
  std::vector<bool> red(shape.size(), false);
  for (int64_t a : axes) red[a] = true;
  std::vector<Group> groups;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!groups.empty() && groups.back().reduced == red[d])
      groups.back().size *= shape[d];
    else
      groups.push_back({shape[d], red[d]});
  }
  int64_t passes = 0;
  for (const Group& g : groups) passes += g.reduced;
  if (passes == 0) {  // only size-1 axes reduced: the values are unchanged
    std::memcpy(out, in, static_cast<size_t>(out_size) * sizeof(T));
    return;
  }
  Buf<Acc> bufs[2];
  const void* cur = in;
  bool cur_is_input = true;
  for (int64_t pass = 0; pass < passes; ++pass) {
    int64_t g = static_cast<int64_t>(groups.size()) - 1;
    while (!groups[g].reduced) --g;
    int64_t O = 1, I = 1;
    for (int64_t i = 0; i < g; ++i) O *= groups[i].size;
    for (size_t i = g + 1; i < groups.size(); ++i) I *= groups[i].size;
    const int64_t R = groups[g].size;
    Acc* dst;
    const bool last = pass == passes - 1;
    if (last && std::is_same_v<Acc, T>) {
      dst = reinterpret_cast<Acc*>(out);
    } else {
      bufs[pass % 2] = Buf<Acc>(O * I, Op::kName);
      dst = bufs[pass % 2].data();
    }
    auto run = [&]<class In>(const In* src) {
      if (I == 1)
        reduce_rows<Op>(src, O, R, dst);
      else
        reduce_cols<Op>(src, O, R, I, dst);
    };
    if (cur_is_input)
      run(static_cast<const T*>(cur));
    else
      run(static_cast<const Acc*>(cur));
    cur = dst;
    cur_is_input = false;
    groups.erase(groups.begin() + g);
    if (g > 0 && g < static_cast<int64_t>(groups.size())) {  // kept neighbours now touch
      groups[g - 1].size *= groups[g].size;
      groups.erase(groups.begin() + g);
    }
  }
  if constexpr (!std::is_same_v<Acc, T>) {
    const Acc* src = static_cast<const Acc*>(cur);
    parallel_for(out_size, kTaskElems,
                 [&](int64_t i0, int64_t i1) { from_float_block(src + i0, i1 - i0, out + i0); });
  }
}

// The dtypes a reduction accepts, as JAX's dtype rules: numbers (reduce_sum, reduce_prod),
// numbers or bool (reduce_max, reduce_min), bool or integers (the logical reductions).
enum class Accepts { kNumber, kNumberOrBool, kLogical };

std::vector<Aval> reduce_abstract(const char* op, Accepts acc, std::span<const Aval> in,
                                  const Params& p) {
  kernels::check_num_operands(op, in, 1);
  const Aval& x = in[0];
  const auto& axes = p.get_ints("axes");
  const bool ok = !is_extended(x.dtype) &&
                  (acc == Accepts::kLogical ? (is_bool(x.dtype) || is_integer(x.dtype))
                                            : acc == Accepts::kNumberOrBool || !is_bool(x.dtype));
  if (!ok)
    throw TypeError(op_message(
        op, std::string(op) + " does not accept dtype " + std::string(dtype_name(x.dtype)) +
                (acc == Accepts::kLogical
                     ? ". Logical reductions require operand dtype bool or an integer type"
                     : std::string(". Accepted dtypes are subtypes of number") +
                           (acc == Accepts::kNumberOrBool ? " or bool" : "")) +
                "; convert the operand first (convert_element_type)."));
  std::set<int64_t> seen(axes.begin(), axes.end());
  if (seen.size() != axes.size())
    throw ValueError(
        op_message(op, "duplicate value in 'axes' of reduction: " + shape_str(axes) + "."));
  for (int64_t a : axes) {
    if (a < 0 || a >= x.ndim())
      throw IndexError(op_message(op, "reduction axes " + shape_str(axes) +
                                          " contains out-of-bounds indices for " + x.str() +
                                          "; axes must be in [0, " + std::to_string(x.ndim()) +
                                          ") at the lax level (normalize negative axes first)."));
  }
  Shape out;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!seen.count(d)) out.push_back(x.shape[d]);
  return {Aval{out, x.dtype, x.weak_type}};
}

template <class Op>
std::vector<Array> reduce_impl(const ExecContext& ctx, const char* op, std::span<const Array> args,
                               const Params& p, std::span<const Aval> outs) {
  const Array& x = args[0];
  const Aval& oa = outs[0];
  Array out = empty_array(oa, op, ctx.device);
  if (oa.size() == 0) return {out};
  kernels::dispatch_dtype(oa.dtype, [&]<class T>() {
    if constexpr (!Op::template kAccepts<T>) {
      throw_internal(
          "prims/reductions",
          std::string(op) + " of " + std::string(dtype_name(oa.dtype)) + " passed abstract eval");
    } else {
      T* o = static_cast<T*>(out.buffer()->data());
      if (x.size() == 0) {  // reducing an empty axis: the identity
        const T v = kernels::store<T>(Op::template identity<compute_t<T>>());
        std::fill(o, o + oa.size(), v);
        return;
      }
      reduce_kernel<Op>(static_cast<const T*>(x.raw_data()), x.shape(), p.get_ints("axes"), o,
                        oa.size());
    }
  });
  return {out};
}

// ---------------------------------------------------------------- autodiff rules (JAX's lax)
// Rules compute only with tessera::lax so that they work under any trace.

// The operand dims a reduction over `axes` keeps (the output's dims, in order).
std::vector<int64_t> kept_dims(int64_t rank, const std::vector<int64_t>& axes) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
  return kept;
}

std::pair<std::vector<Array>, std::vector<Array>> reduce_sum_jvp(std::span<const Array> primals,
                                                                 std::span<const Array> tangents,
                                                                 const Params& p) {
  const auto& axes = p.get_ints("axes");
  Array out = lax::reduce_sum(primals[0], axes);
  Array t;
  if (tangents[0].defined() && is_inexact(primals[0].dtype()))
    t = lax::reduce_sum(tangents[0], axes);
  return {one(out), one(t)};
}

// Broadcasts ct back to the operand's shape along the dims the reduction kept.
std::vector<Array> reduce_sum_transpose(std::span<const Array> cts, std::span<const Array>,
                                        std::span<const Aval> arg_avals, const Params& p) {
  const Aval& xa = arg_avals[0];
  const auto kept = kept_dims(xa.ndim(), p.get_ints("axes"));
  return one(lax::broadcast_in_dim(cts[0], xa.shape, kept));
}

// JAX's rule for reduce_max and reduce_min (_reduce_chooser_jvp_rule): the tangent is the mean
// of the tangents at the locations of the extremum, so ties share the derivative evenly.
JvpRule chooser_jvp(const Primitive& prim) {
  const Primitive* pp = &prim;
  return [pp](std::span<const Array> primals, std::span<const Array> tangents,
              const Params& p) -> std::pair<std::vector<Array>, std::vector<Array>> {
    const Array& x = primals[0];
    const auto& axes = p.get_ints("axes");
    Array out = tessera::bind1(*pp, {x}, p);
    Array t;
    if (tangents[0].defined() && is_inexact(x.dtype())) {
      const auto kept = kept_dims(x.ndim(), axes);
      Array loc = lax::eq(x, lax::broadcast_in_dim(out, x.shape(), kept));
      Array mask = lax::convert_element_type(loc, tangents[0].dtype());
      Array counts = lax::reduce_sum(mask, axes);
      t = lax::div(lax::reduce_sum(lax::mul(tangents[0], mask), axes), counts);
    }
    return {one(out), one(t)};
  };
}

// JAX's _reduce_prod_jvp_rule: the product's tangent pushed through a pairwise tree of
// multiplications (p = p1 p2, t = t1 p2 + p1 t2), i.e. sums of products of the others; no
// division, so zeros in x are handled exactly.
std::pair<std::vector<Array>, std::vector<Array>> reduce_prod_jvp(std::span<const Array> primals,
                                                                  std::span<const Array> tangents,
                                                                  const Params& p) {
  const Array& x = primals[0];
  const auto& axes = p.get_ints("axes");
  Array out = lax::reduce_prod(x, axes);
  Array t;
  if (tangents[0].defined() && is_inexact(x.dtype())) {
    int64_t n = 1;
    for (int64_t a : axes) n *= x.shape()[a];
    if (n == 0 || out.size() == 0) {
      t = ad::zeros_like_aval(out.aval());  // the empty product is the constant 1
    } else {
      auto mul_pairs = [](const std::vector<Array>& l, const std::vector<Array>& r) {
        return std::vector<Array>{lax::mul(l[0], r[0]),
                                  lax::add(lax::mul(l[1], r[0]), lax::mul(l[0], r[1]))};
      };
      std::vector<Array> rows = reduce_tree::reduce_rows(
          {reduce_tree::to_rows(x, axes), reduce_tree::to_rows(tangents[0], axes)}, mul_pairs);
      t = lax::reshape(rows[1], out.shape());
    }
  }
  return {one(out), one(t)};
}

// Batching: reduce the same logical axes, shifted past the batch axis, which stays put; it
// lands after the kept axes that precede it.
BatchRule reduce_batch(const Primitive& prim) {
  const Primitive* pp = &prim;
  return [pp](const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
              const Params& p) -> batching::BatchOut {
    const int64_t b = dims[0];
    const auto& axes = p.get_ints("axes");
    int64_t before = 0;
    for (int64_t a : axes) before += a < b ? 1 : 0;
    Params np = p;
    np.set("axes", batching::shift_dims(axes, b));
    return {tessera::bind(*pp, args, np), {b - before}};
  };
}

template <class Op>
void set_rules(Primitive& prim, Accepts acc) {
  const char* name = Op::kName;
  prim.abstract_eval = [name, acc](std::span<const Aval> in, const Params& p) {
    return reduce_abstract(name, acc, in, p);
  };
  prim.impl = [name](const ExecContext& ctx, std::span<const Array> a, const Params& p,
                     std::span<const Aval> o) { return reduce_impl<Op>(ctx, name, a, p, o); };
  prim.batch = reduce_batch(prim);
  register_primitive(prim);
}

}  // namespace

void register_reductions() {
  for (Primitive* p :
       {&reduce_sum, &reduce_max, &reduce_prod, &reduce_min, &reduce_and, &reduce_or, &reduce_xor})
    p->kind = PrimitiveKind::kReduction;
  for (Primitive* prim :
       {&reduce_sum, &reduce_max, &reduce_prod, &reduce_min, &reduce_and, &reduce_or, &reduce_xor})
    prim->signature = Signature::fixed(1, {{"axes", ParamKind::kInts}});
  set_rules<SumOp>(reduce_sum, Accepts::kNumber);
  set_rules<MaxOp>(reduce_max, Accepts::kNumberOrBool);
  set_rules<ProdOp>(reduce_prod, Accepts::kNumber);
  set_rules<MinOp>(reduce_min, Accepts::kNumberOrBool);
  set_rules<AndOp>(reduce_and, Accepts::kLogical);
  set_rules<OrOp>(reduce_or, Accepts::kLogical);
  set_rules<XorOp>(reduce_xor, Accepts::kLogical);
  reduce_sum.jvp = reduce_sum_jvp;
  reduce_sum.transpose = reduce_sum_transpose;
  reduce_max.jvp = chooser_jvp(reduce_max);
  reduce_min.jvp = chooser_jvp(reduce_min);
  reduce_prod.jvp = reduce_prod_jvp;
  // The logical reductions have integer/bool outputs: no tangents.
  for (Primitive* prim : {&reduce_and, &reduce_or, &reduce_xor}) prim->jvp = ad::zero_jvp(*prim);
  // Fusion: each folds with one scalar op in its own dtype (16-bit floats accumulate in float32
  // here, so they are left to the eager kernel). The op on bool is the logical one.
  const std::pair<Primitive*, scalar::Op> folds[] = {
      {&reduce_sum, scalar::Op::kAdd},  {&reduce_max, scalar::Op::kMax},
      {&reduce_prod, scalar::Op::kMul}, {&reduce_min, scalar::Op::kMin},
      {&reduce_and, scalar::Op::kAnd},  {&reduce_or, scalar::Op::kOr},
      {&reduce_xor, scalar::Op::kXor}};
  for (const auto& [prim, op] : folds)
    compiler::register_reduction(*prim,
                                 [op](std::span<const Aval> in, const Aval& out,
                                      const Params& p) -> std::optional<compiler::ReductionInfo> {
                                   scalar::Op fold = op;
                                   if (out.dtype == DType::kBool && fold == scalar::Op::kMax)
                                     fold = scalar::Op::kOr;
                                   if (out.dtype == DType::kBool && fold == scalar::Op::kMin)
                                     fold = scalar::Op::kAnd;
                                   if (in.size() != 1 || in[0].dtype != out.dtype ||
                                       !compiler::kir::Reducer::supported(fold, out.dtype))
                                     return std::nullopt;
                                   std::vector<int64_t> axes = p.get_ints("axes");
                                   std::sort(axes.begin(), axes.end());
                                   return compiler::ReductionInfo{std::move(axes), fold};
                                 });
}

}  // namespace tessera::prims
