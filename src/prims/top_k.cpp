// top_k(operand) {k} (jax.lax's top_k_p): along the last axis, the k largest values in
// descending order and their int32 indices. Order as the sort primitive's (sort.h), reversed:
// every NaN (either sign) is larger than +inf, -0.0 and +0.0 tie; ties keep the lower index
// first (stable), as XLA's TopK.
//
// Eager kernel: per row, (key, index) pairs with order-preserving integer keys and a partial
// sort of the first k (O(n log k)); rows in parallel. JVP: the tangent gathered at the indices
// (one gather whose leading dims are batching pairs), so the gradient is a scatter-add.
// Batching: the batch axis moves to the front (top_k works on the last axis).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/gather_scatter.h"
#include "prims/kernel_util.h"
#include "prims/sort.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive top_k_p("top_k", /*multiple_results=*/true);

namespace {

using ad::JvpOut;
using batching::BatchOut;
using batching::kNotMapped;

constexpr const char* kOp = "top_k";

std::vector<Aval> top_k_abstract(std::span<const Aval> in, const Params& p) {
  kernels::check_num_operands(kOp, in, 1);
  const Aval& x = in[0];
  const int64_t k = p.get_int("k");
  if (x.ndim() < 1)
    throw TypeError(op_message(kOp, "top_k operand must have >= 1 dimension, got " + x.str() +
                                        "; reshape a scalar to shape (1,)."));
  if (is_extended(x.dtype) || x.dtype == DType::kFloat0)
    throw TypeError(op_message(
        kOp, "top_k does not accept operands of dtype " + std::string(dtype_name(x.dtype)) + "."));
  if (k < 0)
    throw ValueError(
        op_message(kOp, "k argument to top_k must be nonnegative, got " + std::to_string(k) + "."));
  if (k > x.shape.back())
    throw ValueError(op_message(kOp,
                                "k argument to top_k must be no larger than minor "
                                "dimension; " +
                                    std::to_string(k) + " vs " + shape_str(x.shape) + "."));
  Shape s = x.shape;
  s.back() = k;
  return {Aval{s, x.dtype, x.weak_type}, Aval{s, DType::kInt32, false}};
}

// An order-preserving key: larger values give larger keys; NaNs the largest, -0 == +0.
template <class T>
inline uint64_t order_key(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ (uint64_t{1} << 63);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(v);
  } else {
    const double d = static_cast<double>(kernels::load(v));
    if (std::isnan(d)) return std::numeric_limits<uint64_t>::max();
    const double z = d == 0.0 ? 0.0 : d;  // -0 ties +0
    uint64_t b;
    std::memcpy(&b, &z, sizeof b);
    return (b >> 63) ? ~b : b | (uint64_t{1} << 63);
  }
}

std::vector<Array> top_k_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                              std::span<const Aval> outs) {
  const Array& x = args[0];
  const int64_t k = p.get_int("k");
  Array vals = empty_array(outs[0], kOp, ctx.device);
  Array idx = empty_array(outs[1], kOp, ctx.device);
  const int64_t n = x.shape().back();
  const int64_t rows = n == 0 ? 0 : x.size() / n;
  if (k == 0 || rows == 0) return {vals, idx};
  int32_t* io = static_cast<int32_t*>(idx.buffer()->data());
  kernels::dispatch_dtype(x.dtype(), [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    T* vo = static_cast<T*>(vals.buffer()->data());
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / n);
    runtime::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
      std::vector<std::pair<uint64_t, int64_t>> row(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = in + r * n;
        for (int64_t i = 0; i < n; ++i) row[i] = {order_key<T>(xr[i]), i};
        // Larger key first; equal keys: lower index first.
        auto before = [](const auto& a, const auto& b) {
          return a.first != b.first ? a.first > b.first : a.second < b.second;
        };
        std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          vo[r * k + j] = xr[row[j].second];
          io[r * k + j] = static_cast<int32_t>(row[j].second);
        }
      }
    });
  });
  return {vals, idx};
}

// The values of t at the indices along the last axis: one gather, the leading dims batching
// pairs.
Array take_last(const Array& t, const Array& idx) {
  const int64_t r = t.ndim();
  GatherArgs g;
  for (int64_t d = 0; d + 1 < r; ++d) {
    g.dnums.operand_batching_dims.push_back(d);
    g.dnums.start_indices_batching_dims.push_back(d);
  }
  g.dnums.collapsed_slice_dims = {r - 1};
  g.dnums.start_index_map = {r - 1};
  g.slice_sizes.assign(static_cast<size_t>(r), 1);
  for (int64_t d = 0; d + 1 < r; ++d)
    if (t.shape()[d] == 0) g.slice_sizes[d] = 0;
  if (t.shape().back() == 0) g.slice_sizes.back() = 0;
  Shape s = idx.shape();
  s.push_back(1);
  return bind_gather(t, lax::reshape(idx, s), g);
}

JvpOut top_k_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  std::vector<Array> out = tessera::bind(top_k_p, primals, p);
  if (ad::zero_tangent(primals[0], tangents[0])) return {out, {Array(), Array()}};
  return {out, {take_last(tangents[0], out[1]), Array()}};
}

BatchOut top_k_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                     const Params& p) {
  Array x = args[0];
  int64_t b = bdims[0];
  if (b == x.ndim() - 1) {  // the batch axis must not be the sorted one
    x = batching::move_axis(x, b, 0);
    b = 0;
  }
  return {tessera::bind(top_k_p, {x}, p), {b, b}};
}

}  // namespace

void register_top_k() {
  top_k_p.kind = PrimitiveKind::kLibraryCall;
  top_k_p.signature = Signature::fixed(1, {{"k", ParamKind::kInt}});
  top_k_p.abstract_eval = top_k_abstract;
  top_k_p.impl = top_k_impl;
  top_k_p.jvp = top_k_jvp;
  top_k_p.batch = top_k_batch;
  register_primitive(top_k_p);
}

}  // namespace tessera::prims
