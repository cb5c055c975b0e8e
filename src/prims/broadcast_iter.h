// lax's broadcasting rule for n-ary elementwise primitives, and iteration over broadcast
// operands without materializing them: each operand gets per-dimension element strides (0 on
// broadcast dimensions), adjacent dimensions that stay contiguous for every operand are merged,
// and kernels receive runs along the innermost merged dimension where every operand's stride
// is 0 or 1, so their inner loops are plain loops over raw pointers. Also the run/map loops
// shared by the elementwise families (16-bit floats are computed in float32 blocks).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "prims/kernel_util.h"
#include "prims/vec_math.h"
#include "runtime/thread_pool.h"
#include "tessera/errors.h"
#include "tessera/shape.h"

namespace tessera::kernels {

// "(3,), (2, 3)": the operands' shapes for error messages.
std::string shapes_list(std::span<const Aval> in);
// "f32[3] and i32[3]" (or "a, b and c").
std::string avals_list(std::span<const Aval> in);

// TypeError unless there are exactly n operands.
void check_num_operands(const char* op, std::span<const Aval> in, size_t n);
// TypeError unless every operand has the first one's dtype. `hint` ends the message.
void check_same_dtype(const char* op, std::span<const Aval> in, const std::string& hint);
// TypeError for extended dtypes (float0, PRNG keys), which have no arithmetic.
void check_not_extended(const char* op, const Aval& a);

// The shape of lax's broadcast of the operands: rank-0 operands broadcast to anything; the
// others must have equal rank and each dimension equal or 1 (0 against 1 gives 0).
// Throws TypeError naming the op and the shapes.
Shape broadcast_shapes(const char* op, std::span<const Aval> in);

// Iteration plan over an output of shape `out` for N operands whose shapes broadcast to it.
template <int N>
struct BroadcastPlan {
  std::vector<int64_t> dims;                    // merged output dims (at least one)
  std::array<std::vector<int64_t>, N> strides;  // per operand, element strides per merged dim
  std::array<int64_t, N> inner{};               // strides[k].back(): 0 or 1
  int64_t size = 0;                             // output elements
};

template <int N>
BroadcastPlan<N> make_plan(const Shape& out, const std::array<const Shape*, N>& in) {
  BroadcastPlan<N> plan;
  plan.size = shape_size(out);
  const size_t rank = out.size();
  // Row-major strides per operand, 0 where the operand broadcasts; size-1 output dims dropped.
  std::array<std::vector<int64_t>, N> full;
  for (int k = 0; k < N; ++k) {
    const Shape& s = *in[k];
    full[k].assign(rank, 0);
    if (s.empty()) continue;  // rank 0: stride 0 everywhere
    int64_t st = 1;
    for (size_t d = rank; d-- > 0;) {
      full[k][d] = s[d] == 1 ? 0 : st;
      st *= s[d];
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const bool merge = !plan.dims.empty() && [&] {
      for (int k = 0; k < N; ++k) {
        if (plan.strides[k].back() != full[k][d] * out[d]) return false;
      }
      return true;
    }();
    if (merge) {
      plan.dims.back() *= out[d];
      for (int k = 0; k < N; ++k) plan.strides[k].back() = full[k][d];
    } else {
      plan.dims.push_back(out[d]);
      for (int k = 0; k < N; ++k) plan.strides[k].push_back(full[k][d]);
    }
  }
  if (plan.dims.empty()) {  // a single element
    plan.dims.push_back(1);
    for (int k = 0; k < N; ++k) plan.strides[k].push_back(0);
  }
  for (int k = 0; k < N; ++k) plan.inner[k] = plan.strides[k].back();
  return plan;
}

// Calls f(out_offset, const std::array<int64_t, N>& in_offsets, len) for the runs of the
// innermost merged dimension that cover output elements [begin, end), in order.
template <int N, class F>
void for_each_run(const BroadcastPlan<N>& plan, int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;
  const int r = static_cast<int>(plan.dims.size());
  const int64_t last = plan.dims[r - 1];
  std::vector<int64_t> idx(r);
  std::array<int64_t, N> off{};
  int64_t rem = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % plan.dims[d];
    rem /= plan.dims[d];
    for (int k = 0; k < N; ++k) off[k] += idx[d] * plan.strides[k][d];
  }
  int64_t pos = begin;
  while (pos < end) {
    const int64_t len = std::min(last - idx[r - 1], end - pos);
    f(pos, off, len);
    pos += len;
    idx[r - 1] += len;
    for (int k = 0; k < N; ++k) off[k] += len * plan.inner[k];
    // Carry into the outer dimensions.
    for (int d = r - 1; d > 0 && idx[d] == plan.dims[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
      for (int k = 0; k < N; ++k) {
        off[k] += plan.strides[k][d - 1] - plan.dims[d] * plan.strides[k][d];
      }
    }
  }
}

// for_each_run over the whole output, split into kElementwiseGrain chunks run by the pool.
// Each output element is computed by exactly one run, so results do not depend on threads.
template <int N, class F>
void parallel_runs(const BroadcastPlan<N>& plan, F&& f) {
  if (plan.size == 0) return;
  runtime::parallel_for(plan.size, runtime::kElementwiseGrain,
                        [&](int64_t b, int64_t e) { for_each_run<N>(plan, b, e, f); });
}

// Elements per block when 16-bit floats are computed in float32 (stack buffers).
inline constexpr int64_t kHalfBlock = 512;

// One run of a binary kernel: o[i] = op(a[i*sa], b[i*sb]) for i < n, with strides sa, sb in
// {0, 1}. Each stride pattern gets its own plain loop so that g++ vectorizes it. op takes two
// compute_t<T> values (float for 16-bit floats, which go through float32 blocks) and returns
// a value convertible to compute_t<R>.
template <class T, class R, class Op>
void run2(const T* a, int64_t sa, const T* b, int64_t sb, R* o, int64_t n, const Op& op) {
  if constexpr (is_half_v<T>) {
    float fa[kHalfBlock], fb[kHalfBlock];
    if (!sa) fa[0] = load(*a);
    if (!sb) fb[0] = load(*b);
    for (int64_t i0 = 0; i0 < n; i0 += kHalfBlock) {
      const int64_t m = std::min(kHalfBlock, n - i0);
      if (sa) vmath::to_float_n(a + i0, fa, m);
      if (sb) vmath::to_float_n(b + i0, fb, m);
      if constexpr (is_half_v<R>) {
        float fo[kHalfBlock];
        run2<float, float>(fa, sa, fb, sb, fo, m, op);
        vmath::from_float_n(fo, o + i0, m);
      } else {
        run2<float, R>(fa, sa, fb, sb, o + i0, m, op);
      }
    }
  } else {
    if (sa && sb) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(op(a[i], b[i]));
    } else if (sb) {
      const T x = *a;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(op(x, b[i]));
    } else if (sa) {
      const T y = *b;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(op(a[i], y));
    } else {
      const R v = static_cast<R>(op(*a, *b));
      std::fill(o, o + n, v);
    }
  }
}

// Unary kernels work on arrays: f(const C* x, C2* y, n) with C = compute_t<T>. 16-bit floats
// are converted to float32 in blocks (and back when R is a 16-bit float as well).
template <class T, class R, class F>
void map_blocks(const T* x, R* y, int64_t n, const F& f) {
  if constexpr (is_half_v<T> || is_half_v<R>) {
    for (int64_t i0 = 0; i0 < n; i0 += kHalfBlock) {
      const int64_t m = std::min(kHalfBlock, n - i0);
      auto with_input = [&](auto&& g) {
        if constexpr (is_half_v<T>) {
          float fx[kHalfBlock];
          vmath::to_float_n(x + i0, fx, m);
          g(static_cast<const float*>(fx));
        } else {
          g(x + i0);
        }
      };
      with_input([&](const compute_t<T>* px) {
        if constexpr (is_half_v<R>) {
          float fy[kHalfBlock];
          f(px, fy, m);
          vmath::from_float_n(fy, y + i0, m);
        } else {
          f(px, y + i0, m);
        }
      });
    }
  } else {
    f(x, y, n);
  }
}

// map_blocks over n elements, in kElementwiseGrain chunks run by the pool.
template <class T, class R, class F>
void parallel_map(const T* x, R* y, int64_t n, const F& f) {
  runtime::parallel_for(n, runtime::kElementwiseGrain,
                        [&](int64_t b, int64_t e) { map_blocks(x + b, y + b, e - b, f); });
}

}  // namespace tessera::kernels
