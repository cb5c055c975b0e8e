// jax.nn.dot_product_attention (tessera/nn.h), JAX's XLA formulation as a composite of einsum,
// where and softmax, so jit, vmap and grad compose through it. Grouped-query attention folds the
// N query heads into (K key heads, G = N / K groups) so one einsum serves every group.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_ufuncs.h"

namespace tessera::nn {

namespace {

constexpr const char* kOp = "dot_product_attention";

[[noreturn]] void fail(const std::string& what) {
  throw ValueError(std::string(kOp) + ": " + what);
}

// t with leading size-1 dims up to rank 4, broadcast to `target` (ValueError naming `what`).
Array to_bnts(const Array& t, const Shape& target, const char* what) {
  if (t.ndim() > 4)
    fail(std::string(what) + " must have rank <= 4 (broadcastable to [B, N, T, S] = " +
         shape_str(target) + "), got shape " + shape_str(t.shape()));
  Shape s(static_cast<size_t>(4 - t.ndim()), 1);
  s.insert(s.end(), t.shape().begin(), t.shape().end());
  for (int i = 0; i < 4; ++i)
    if (s[i] != 1 && s[i] != target[i])
      fail(std::string(what) + " of shape " + shape_str(t.shape()) +
           " does not broadcast to [B, N, T, S] = " + shape_str(target));
  return numpy::broadcast_to(lax::reshape(t, s), target);
}

Array seq_lengths(const ArrayLike& x, int64_t batch, const char* what) {
  Array a = numpy::asarray(x);
  if (!is_integer(a.dtype()))
    throw TypeError(std::string(kOp) + ": " + what + " must be integers, got " +
                    std::string(dtype_name(a.dtype())));
  if (a.ndim() != 1 || a.shape()[0] != batch)
    fail(std::string(what) + " must have shape [B] = [" + std::to_string(batch) + "], got " +
         shape_str(a.shape()));
  return lax::convert_element_type(a, DType::kInt32);
}

Array and_mask(const std::optional<Array>& acc, const Array& m) {
  return acc ? numpy::logical_and(*acc, m) : m;
}

}  // namespace

Array dot_product_attention(const ArrayLike& query, const ArrayLike& key, const ArrayLike& value,
                            const AttentionOptions& o) {
  if (!o.implementation.empty() && o.implementation != "xla") {
    if (o.implementation == "cudnn")
      throw NotImplementedError(std::string(kOp) +
                                ": implementation='cudnn' needs a CUDA GPU; use "
                                "implementation=None or 'xla' on CPU");
    fail("Unsupported implementation option: '" + o.implementation + "' (None, 'xla' or 'cudnn')");
  }
  Array q = numpy::asarray(query), k = numpy::asarray(key), v = numpy::asarray(value);
  if (!is_floating(q.dtype()) || q.dtype() != k.dtype() || k.dtype() != v.dtype())
    throw TypeError(std::string(kOp) +
                    ": query, key and value must have the same floating dtype, got " +
                    std::string(dtype_name(q.dtype())) + ", " + std::string(dtype_name(k.dtype())) +
                    " and " + std::string(dtype_name(v.dtype())));
  if (q.ndim() != k.ndim() || q.ndim() != v.ndim() || (q.ndim() != 3 && q.ndim() != 4))
    fail(
        "query, key and value must all have rank 4 [B, T/S, N/K, H] or all rank 3 (no batch), "
        "got shapes " +
        shape_str(q.shape()) + ", " + shape_str(k.shape()) + ", " + shape_str(v.shape()));
  const bool unbatched = q.ndim() == 3;
  if (unbatched) {
    q = lax::expand_dims(q, {0});
    k = lax::expand_dims(k, {0});
    v = lax::expand_dims(v, {0});
  }
  const int64_t B = q.shape()[0], T = q.shape()[1], N = q.shape()[2], H = q.shape()[3];
  const int64_t S = k.shape()[1], K = k.shape()[2];
  if (k.shape() != v.shape())
    fail("key and value must have the same shape, got " + shape_str(k.shape()) + " and " +
         shape_str(v.shape()));
  if (k.shape()[0] != B || k.shape()[3] != H)
    fail("query " + shape_str(q.shape()) + " and key " + shape_str(k.shape()) +
         " must agree in the batch B and head dim H");
  if (K == 0 || N % K != 0)
    fail("the number of query heads N = " + std::to_string(N) +
         " must be a multiple of the number of key/value heads K = " + std::to_string(K));
  const int64_t G = N / K;
  // Logits in the query's dtype promoted with float32 (float32 for 16-bit inputs: products of
  // 16-bit floats are exact in float32, so this is JAX's preferred_element_type einsum).
  const DType ld = q.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const double scale = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(H));
  Array qg = lax::reshape(numpy::astype(q, ld), {B, T, K, G, H});
  Array logits = numpy::einsum("BTKGH,BSKH->BKGTS", {qg, numpy::astype(k, ld)});
  logits = lax::reshape(logits, {B, N, T, S});
  logits = numpy::multiply(logits, scale);  // a weak scalar: keeps ld
  const Shape bnts{B, N, T, S};
  if (o.bias)
    logits = numpy::astype(numpy::add(logits, to_bnts(numpy::asarray(*o.bias), bnts, "bias")), ld);
  std::optional<Array> keep;
  if (o.mask) {
    Array m = numpy::asarray(*o.mask);
    if (m.dtype() != DType::kBool)
      throw TypeError(std::string(kOp) + ": mask must be boolean (true = attend), got " +
                      std::string(dtype_name(m.dtype())));
    keep = to_bnts(m, bnts, "mask");
  }
  const Shape ts{1, 1, T, S};
  Array t_idx = lax::broadcasted_iota(DType::kInt32, ts, 2);
  Array s_idx = lax::broadcasted_iota(DType::kInt32, ts, 3);
  if (o.is_causal) keep = and_mask(keep, lax::ge(t_idx, s_idx));
  if (o.local_window_size) {
    const auto [left, right] = *o.local_window_size;
    if (left < 0 || right < 0)
      fail("local_window_size must be non-negative, got (" + std::to_string(left) + ", " +
           std::to_string(right) + ")");
    Array lo = numpy::subtract(t_idx, left);
    Array hi = numpy::add(t_idx, right);
    keep = and_mask(keep, numpy::logical_and(lax::ge(s_idx, lo), lax::le(s_idx, hi)));
  }
  std::optional<Array> q_len, kv_len;
  if (o.query_seq_lengths) q_len = seq_lengths(*o.query_seq_lengths, B, "query_seq_lengths");
  if (o.key_value_seq_lengths)
    kv_len = seq_lengths(*o.key_value_seq_lengths, B, "key_value_seq_lengths");
  if (q_len) keep = and_mask(keep, lax::lt(t_idx, lax::reshape(*q_len, {B, 1, 1, 1})));
  if (kv_len) keep = and_mask(keep, lax::lt(s_idx, lax::reshape(*kv_len, {B, 1, 1, 1})));
  if (keep) {
    const double big = ld == DType::kFloat64 ? std::numeric_limits<double>::max()
                                             : std::numeric_limits<float>::max();
    logits = numpy::where(*keep, logits, -0.7 * big);
  }
  // The softmax always runs in float32, as JAX's.
  Array probs = numpy::astype(softmax(numpy::astype(logits, DType::kFloat32), -1), k.dtype());
  probs = lax::reshape(probs, {B, K, G, T, S});
  Array out = numpy::einsum("BKGTS,BSKH->BTKGH", {probs, v});
  out = lax::reshape(out, {B, T, N, H});
  if (q_len && kv_len) {
    Array valid = lax::lt(lax::broadcasted_iota(DType::kInt32, {B, T, 1, 1}, 1),
                          lax::reshape(*q_len, {B, 1, 1, 1}));
    out = lax::mul(out, numpy::astype(valid, out.dtype()));
  }
  return unbatched ? lax::squeeze(out, {0}) : out;
}

}  // namespace tessera::nn
