// dot_general: lax's general tensor contraction. Output dims are the batch dims (in
// lhs_batch order), then lhs free dims, then rhs free dims, each in increasing order.
//
// Floats run on BLAS: each operand is viewed as a batch of (possibly transposed) matrices
// straight from its row-major layout when its dims allow it, and copied (transposed) into
// [batch, M, K] / [batch, K, N] only when they do not. 16-bit floats and integers that prefer
// a float result compute in float32 (float64 when either side is float64) and round once.
// Integer results accumulate in the result dtype (wrapping); bool is an or of ands.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include "compiler/passes/simplify.h"
#include "prims/batch_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "runtime/blas.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"
#include "tessera/param_types.h"

namespace tessera::prims {

Primitive dot_general("dot_general");

namespace {

using kernels::compute_t;
using runtime::parallel_for;
constexpr int64_t kTaskElems = int64_t{1} << 16;

struct DimNums {
  std::vector<int64_t> lc, rc, lb, rb;
};

DimNums dim_nums(const Params& p) {
  const DotDimensionNumbers d =
      DotDimensionNumbers::from_param(p.get_record("dimension_numbers", kDotDimensionNumbersDef));
  return {d.lhs_contracting, d.rhs_contracting, d.lhs_batch, d.rhs_batch};
}

// Dims that are neither batch nor contracting, in increasing order.
std::vector<int64_t> free_dims(int64_t ndim, const std::vector<int64_t>& batch,
                               const std::vector<int64_t>& contracting) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < ndim; ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end())
      out.push_back(d);
  return out;
}

Shape pick(const Shape& s, const std::vector<int64_t>& dims) {
  Shape out;
  for (int64_t d : dims) out.push_back(s[d]);
  return out;
}

int bit_width(DType d) { return static_cast<int>(itemsize(d)) * 8; }

// ---------------------------------------------------------------- abstract eval

std::vector<Aval> dot_general_abstract(std::span<const Aval> in, const Params& p) {
  if (in.size() != 2)
    throw TypeError(
        op_message("dot_general", "takes 2 operands (lhs, rhs), got " + std::to_string(in.size())));
  const Aval& l = in[0];
  const Aval& r = in[1];
  const DimNums dn = dim_nums(p);
  const char* op = "dot_general";
  auto in_range = [](const std::vector<int64_t>& v, int64_t nd) {
    return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= 0 && d < nd; });
  };
  if (!in_range(dn.lc, l.ndim()) || !in_range(dn.lb, l.ndim()))
    throw TypeError(
        op_message(op,
                   "dot_general requires lhs dimension numbers to be nonnegative and less than the "
                   "number of axes of the lhs value, got lhs_batch of " +
                       shape_str(dn.lb) + " and lhs_contracting of " + shape_str(dn.lc) +
                       " for lhs of rank " + std::to_string(l.ndim())));
  if (!in_range(dn.rc, r.ndim()) || !in_range(dn.rb, r.ndim()))
    throw TypeError(
        op_message(op,
                   "dot_general requires rhs dimension numbers to be nonnegative and less than the "
                   "number of axes of the rhs value, got rhs_batch of " +
                       shape_str(dn.rb) + " and rhs_contracting of " + shape_str(dn.rc) +
                       " for rhs of rank " + std::to_string(r.ndim())));
  if (dn.lb.size() != dn.rb.size())
    throw TypeError(op_message(op,
                               "dot_general requires equal numbers of lhs_batch and "
                               "rhs_batch dimensions, got lhs_batch " +
                                   shape_str(dn.lb) + " and rhs_batch " + shape_str(dn.rb) + "."));
  if (dn.lc.size() != dn.rc.size())
    throw TypeError(op_message(op,
                               "dot_general requires equal numbers of lhs_contracting and "
                               "rhs_contracting dimensions, got lhs_contracting " +
                                   shape_str(dn.lc) + " and rhs_contracting " + shape_str(dn.rc) +
                                   "."));
  auto distinct = [](const std::vector<int64_t>& v) {
    return std::set<int64_t>(v.begin(), v.end()).size() == v.size();
  };
  const std::pair<const std::vector<int64_t>*, const char*> lists[] = {{&dn.lb, "lhs batch"},
                                                                       {&dn.rb, "rhs batch"},
                                                                       {&dn.lc, "lhs contracting"},
                                                                       {&dn.rc, "rhs contracting"}};
  for (const auto& [v, name] : lists) {
    if (!distinct(*v))
      throw TypeError(op_message(op, std::string("dot_general requires ") + name +
                                         " dimensions to be distinct, got " + shape_str(*v) + "."));
  }
  auto disjoint = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    for (int64_t x : a)
      if (std::find(b.begin(), b.end(), x) != b.end()) return false;
    return true;
  };
  if (!disjoint(dn.lb, dn.lc))
    throw TypeError(op_message(op,
                               "dot_general requires lhs batch dimensions to be disjoint "
                               "from contracting dimensions, got lhs_batch " +
                                   shape_str(dn.lb) + " and lhs_contracting " + shape_str(dn.lc) +
                                   "."));
  if (!disjoint(dn.rb, dn.rc))
    throw TypeError(op_message(op,
                               "dot_general requires rhs batch dimensions to be disjoint "
                               "from contracting dimensions, got rhs_batch " +
                                   shape_str(dn.rb) + " and rhs_contracting " + shape_str(dn.rc) +
                                   "."));
  const Shape lbs = pick(l.shape, dn.lb), rbs = pick(r.shape, dn.rb);
  if (lbs != rbs)
    throw TypeError(op_message(op,
                               "dot_general requires lhs batch dimensions and rhs batch "
                               "dimensions to have the same shape, got " +
                                   shape_str(lbs) + " and " + shape_str(rbs) + "."));
  const Shape lcs = pick(l.shape, dn.lc), rcs = pick(r.shape, dn.rc);
  if (lcs != rcs)
    throw TypeError(op_message(op,
                               "dot_general requires contracting dimensions to have the "
                               "same shape, got " +
                                   shape_str(lcs) + " and " + shape_str(rcs) + "."));
  // dtypes
  if (l.dtype != r.dtype)
    throw TypeError(
        op_message(op, "lax.dot_general argument type error: " + std::string(dtype_name(l.dtype)) +
                           ", " + std::string(dtype_name(r.dtype)) +
                           "; both operands must have one dtype (convert one with "
                           "convert_element_type)."));
  const DType d = l.dtype;
  if (is_extended(d))
    throw TypeError(
        op_message(op, "dot_general does not accept dtype " + std::string(dtype_name(d)) + "."));
  const std::optional<DType> pref = p.get_optional_dtype("preferred_element_type");
  DType out_dtype = d;
  if (pref && *pref != d) {
    const DType pd = *pref;
    const std::string got = "got preferred_element_type of " + std::string(dtype_name(pd)) +
                            " for operands of dtype " + std::string(dtype_name(d));
    if (is_extended(pd) || is_bool(pd))
      throw TypeError(
          op_message(op, "`preferred_element_type` must be a numeric dtype, " + got + "."));
    if (is_floating(d) && !is_floating(pd))
      throw TypeError(op_message(
          op, "`preferred_element_type` must be floating for floating operands, " + got + "."));
    if (!is_floating(d) && is_integer(pd) && bit_width(pd) < bit_width(d))
      throw TypeError(op_message(op,
                                 "`preferred_element_type` must not be narrower than the "
                                 "original type, " +
                                     got + "."));
    out_dtype = pd;
  }
  Shape out = lbs;
  for (int64_t dd : free_dims(l.ndim(), dn.lb, dn.lc)) out.push_back(l.shape[dd]);
  for (int64_t dd : free_dims(r.ndim(), dn.rb, dn.rc)) out.push_back(r.shape[dd]);
  return {Aval{out, out_dtype, l.weak_type && r.weak_type && !pref}};
}

// ---------------------------------------------------------------- layout planning

// A group of dims flattened into one matrix axis: its size and element stride (-1 when the
// group has size <= 1, so any stride serves), or !ok when the dims do not step evenly.
struct GroupStride {
  bool ok = true;
  int64_t size = 1, stride = -1;
};

GroupStride group_stride(const Shape& s, const std::vector<int64_t>& st,
                         const std::vector<int64_t>& dims) {
  GroupStride g;
  int64_t prev = -1;
  for (int64_t d : dims) {
    g.size *= s[d];
    if (s[d] == 1) continue;
    if (prev >= 0 && st[prev] != st[d] * s[d]) g.ok = false;
    prev = d;
  }
  if (prev >= 0) g.stride = st[prev];
  if (g.size <= 1) g.stride = -1;
  return g;
}

// How an operand is read as a batch of BLAS matrices op(X) of shape rows x cols.
struct MatView {
  bool trans = false;
  int64_t ld = 1;
  std::vector<int64_t> offsets;  // per batch entry, in elements
};

// Succeeds when the operand's bytes already form such matrices (row-major or transposed).
bool make_view(const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& rows,
               const std::vector<int64_t>& cols, MatView& v) {
  const std::vector<int64_t> st = row_major_strides(s);
  const GroupStride p = group_stride(s, st, rows), q = group_stride(s, st, cols);
  if (!p.ok || !q.ok) return false;
  if ((q.stride == 1 || q.stride == -1) &&
      (p.stride == -1 || p.stride >= std::max<int64_t>(1, q.size))) {
    v.trans = false;
    v.ld = p.stride == -1 ? std::max<int64_t>(1, q.size) : p.stride;
  } else if ((p.stride == 1 || p.stride == -1) &&
             (q.stride == -1 || q.stride >= std::max<int64_t>(1, p.size))) {
    v.trans = true;
    v.ld = q.stride == -1 ? std::max<int64_t>(1, p.size) : q.stride;
  } else {
    return false;
  }
  // Batch offsets in row-major order over the batch dims (as listed).
  const Shape bs = pick(s, batch);
  const int64_t nb = shape_size(bs);
  v.offsets.assign(static_cast<size_t>(nb), 0);
  std::vector<int64_t> idx(batch.size(), 0);
  int64_t off = 0;
  for (int64_t b = 0; b < nb; ++b) {
    v.offsets[b] = off;
    for (int64_t i = static_cast<int64_t>(batch.size()) - 1; i >= 0; --i) {
      off += st[batch[i]];
      if (++idx[i] < bs[i]) break;
      off -= idx[i] * st[batch[i]];
      idx[i] = 0;
    }
  }
  return true;
}

Array transpose_copy(const Array& x, const std::vector<int64_t>& perm) {
  const Params p{{"permutation", perm}};
  const Aval a{pick(x.shape(), perm), x.dtype(), false};
  const ExecContext ctx{x.device()};
  return transpose.impl(ctx, std::span<const Array>(&x, 1), p, std::span<const Aval>(&a, 1))[0];
}

std::vector<int64_t> concat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> out;
  for (auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

std::vector<int64_t> iota_vec(int64_t b, int64_t e) {
  std::vector<int64_t> v(static_cast<size_t>(e - b));
  std::iota(v.begin(), v.end(), b);
  return v;
}

struct Sizes {
  int64_t B, M, N, K;
};

// ---------------------------------------------------------------- float path (BLAS)

// No contracting dims: an outer product per batch entry, out[b, i, :] = l[b, i] * r[b, :].
// A scaled-row loop (vectorized over N) instead of B*M GEMMs of inner size 1; this shape is
// the whole cost of per-example weight gradients (bench transforms: per_example_grads_128).
template <class C>
void outer_dot(const Array& lhs, const Array& rhs, const DimNums& dn, const Sizes& sz, C* out) {
  const std::vector<int64_t> lf = free_dims(lhs.ndim(), dn.lb, dn.lc);
  const std::vector<int64_t> rf = free_dims(rhs.ndim(), dn.rb, dn.rc);
  const Array l = transpose_copy(lhs, concat({&dn.lb, &lf}));  // [B, M] (no copy if already)
  const Array r = transpose_copy(rhs, concat({&dn.rb, &rf}));  // [B, N]
  const C* a = static_cast<const C*>(l.raw_data());
  const C* b = static_cast<const C*>(r.raw_data());
  const int64_t rows = sz.B * sz.M;
  const int64_t grain = std::max<int64_t>(1, kTaskElems / std::max<int64_t>(sz.N, 1));
  parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      const C av = a[row];
      const C* brow = b + (row / sz.M) * sz.N;
      C* crow = out + row * sz.N;
      for (int64_t j = 0; j < sz.N; ++j) crow[j] = av * brow[j];
    }
  });
}

template <class C>
void blas_dot(const Array& lhs, const Array& rhs, const DimNums& dn, const Sizes& sz, C* out) {
  if (dn.lc.empty()) {
    outer_dot<C>(lhs, rhs, dn, sz, out);
    return;
  }
  const std::vector<int64_t> lf = free_dims(lhs.ndim(), dn.lb, dn.lc);
  const std::vector<int64_t> rf = free_dims(rhs.ndim(), dn.rb, dn.rc);
  // The order the contracting pairs are flattened in is free: try the given order and the
  // orders of either operand's layout, and keep the one that needs the fewest copies.
  const size_t nc = dn.lc.size();
  std::vector<std::vector<size_t>> orders(3, std::vector<size_t>(nc));
  for (auto& o : orders) std::iota(o.begin(), o.end(), size_t{0});
  std::sort(orders[1].begin(), orders[1].end(),
            [&](size_t a, size_t b) { return dn.lc[a] < dn.lc[b]; });
  std::sort(orders[2].begin(), orders[2].end(),
            [&](size_t a, size_t b) { return dn.rc[a] < dn.rc[b]; });
  int best = -1;
  std::vector<int64_t> lc, rc;
  MatView lv, rv;
  bool lok = false, rok = false;
  for (const auto& o : orders) {
    std::vector<int64_t> lco, rco;
    for (size_t i : o) {
      lco.push_back(dn.lc[i]);
      rco.push_back(dn.rc[i]);
    }
    MatView a, b;
    const bool la = make_view(lhs.shape(), dn.lb, lf, lco, a);
    const bool rb = make_view(rhs.shape(), dn.rb, rco, rf, b);
    if (int(la) + int(rb) > best) {
      best = int(la) + int(rb);
      lc = lco;
      rc = rco;
      lv = a;
      rv = b;
      lok = la;
      rok = rb;
    }
  }
  Array l = lhs, r = rhs;
  const int64_t nbd = static_cast<int64_t>(dn.lb.size());
  if (!lok) {  // copy to [batch, M, K]
    l = transpose_copy(lhs, concat({&dn.lb, &lf, &lc}));
    const int64_t nd = l.ndim(), nf = static_cast<int64_t>(lf.size());
    make_view(l.shape(), iota_vec(0, nbd), iota_vec(nbd, nbd + nf), iota_vec(nbd + nf, nd), lv);
  }
  if (!rok) {  // copy to [batch, K, N]
    r = transpose_copy(rhs, concat({&dn.rb, &rc, &rf}));
    const int64_t nd = r.ndim(), ncd = static_cast<int64_t>(rc.size());
    make_view(r.shape(), iota_vec(0, nbd), iota_vec(nbd, nbd + ncd), iota_vec(nbd + ncd, nd), rv);
  }
  runtime::blas::GemmSpec spec;
  spec.batch = sz.B;
  spec.m = sz.M;
  spec.n = sz.N;
  spec.k = sz.K;
  spec.trans_a = lv.trans;
  spec.trans_b = rv.trans;
  spec.lda = lv.ld;
  spec.ldb = rv.ld;
  spec.a_offsets = std::move(lv.offsets);
  spec.b_offsets = std::move(rv.offsets);
  runtime::blas::gemm_batched(spec, static_cast<const C*>(l.raw_data()),
                              static_cast<const C*>(r.raw_data()), out);
}

// Elementwise conversion to the compute type C.
template <class C>
Array convert_to(const Array& x) {
  Array out = empty_array(Aval{x.shape(), dtype_v<C>, false}, "dot_general", x.device());
  C* d = static_cast<C*>(out.buffer()->data());
  kernels::dispatch_dtype(x.dtype(), [&]<class T>() {
    const T* s = static_cast<const T*>(x.raw_data());
    parallel_for(x.size(), kTaskElems, [&](int64_t i0, int64_t i1) {
      int64_t i = i0;
#if defined(__F16C__)
      if constexpr (std::is_same_v<T, float16_t> && std::is_same_v<C, float>) {
        for (; i + 8 <= i1; i += 8)
          // (The cast keeps the discarded C = double instantiation well-formed for clang.)
          _mm256_storeu_ps(
              reinterpret_cast<float*>(d) + i,
              _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
      }
#endif
      for (; i < i1; ++i) d[i] = static_cast<C>(kernels::load(s[i]));
    });
  });
  return out;
}

template <class R, class C>
inline R round_to(C v) {
  if constexpr (std::is_same_v<C, double> && std::is_same_v<R, float16_t>)
    return float16_t{double_to_half_bits(v)};
  else if constexpr (std::is_same_v<C, double> && std::is_same_v<R, bfloat16_t>)
    return bfloat16_t{double_to_bfloat16_bits(v)};
  else
    return kernels::store<R>(static_cast<compute_t<R>>(v));
}

template <class C>
void float_dot(const Array& lhs, const Array& rhs, const DimNums& dn, const Sizes& sz, Array& out) {
  const Array l = lhs.dtype() == dtype_v<C> ? lhs : convert_to<C>(lhs);
  const Array r = rhs.dtype() == dtype_v<C> ? rhs : convert_to<C>(rhs);
  if (out.dtype() == dtype_v<C>) {
    blas_dot<C>(l, r, dn, sz, static_cast<C*>(out.buffer()->data()));
    return;
  }
  Array tmp = empty_array(Aval{out.shape(), dtype_v<C>, false}, "dot_general", out.device());
  const C* t = static_cast<const C*>(tmp.buffer()->data());
  blas_dot<C>(l, r, dn, sz, static_cast<C*>(tmp.buffer()->data()));
  kernels::dispatch_dtype(out.dtype(), [&]<class R>() {
    if constexpr (kernels::is_half_v<R> || std::is_floating_point_v<R>) {
      R* o = static_cast<R*>(out.buffer()->data());
      parallel_for(out.size(), kTaskElems, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) o[i] = round_to<R>(t[i]);
      });
    } else {
      throw_internal("prims/dot_general", "float path with a non-float result");
    }
  });
}

// ---------------------------------------------------------------- integer and bool path

template <class R>
inline R mac(R c, R a, R b) {
  if constexpr (std::is_same_v<R, bool>) {
    return c | (a & b);
  } else {
    using W = std::conditional_t<(sizeof(R) < 4), uint32_t, std::make_unsigned_t<R>>;
    return static_cast<R>(
        static_cast<W>(static_cast<W>(c) + static_cast<W>(a) * static_cast<W>(b)));
  }
}

// C[b] = A[b]·B[b] with A dense [B, M, K], B dense [B, K, N], accumulating in R.
template <class R, class In>
void int_dot(const In* a, const In* bm, R* c, const Sizes& sz) {
  constexpr int64_t kRows = 4, kCols = 1024;
  const int64_t rblocks = (sz.M + kRows - 1) / kRows;
  const int64_t work = std::max<int64_t>(1, kRows * sz.K * sz.N);
  parallel_for(sz.B * rblocks, std::max<int64_t>(1, kTaskElems / work),
               [&](int64_t t0, int64_t t1) {
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t b = t / rblocks, i0 = (t % rblocks) * kRows;
                   const int64_t i1 = std::min(sz.M, i0 + kRows);
                   for (int64_t i = i0; i < i1; ++i) {
                     R* crow = c + (b * sz.M + i) * sz.N;
                     std::fill(crow, crow + sz.N, R(0));
                     const In* arow = a + (b * sz.M + i) * sz.K;
                     for (int64_t j0 = 0; j0 < sz.N; j0 += kCols) {
                       const int64_t j1 = std::min(sz.N, j0 + kCols);
                       for (int64_t k = 0; k < sz.K; ++k) {
                         const R av = static_cast<R>(arow[k]);
                         const In* brow = bm + (b * sz.K + k) * sz.N;
                         for (int64_t j = j0; j < j1; ++j)
                           crow[j] = mac<R>(crow[j], av, static_cast<R>(brow[j]));
                       }
                     }
                   }
                 }
               });
}

void integer_dot(const Array& lhs, const Array& rhs, const DimNums& dn, const Sizes& sz,
                 Array& out) {
  const std::vector<int64_t> lf = free_dims(lhs.ndim(), dn.lb, dn.lc);
  const std::vector<int64_t> rf = free_dims(rhs.ndim(), dn.rb, dn.rc);
  // Canonical layouts (the transpose returns its input when nothing moves).
  const Array l = transpose_copy(lhs, concat({&dn.lb, &lf, &dn.lc}));
  const Array r = transpose_copy(rhs, concat({&dn.rb, &dn.rc, &rf}));
  kernels::dispatch_dtype(out.dtype(), [&]<class R>() {
    if constexpr (std::is_integral_v<R>) {
      kernels::dispatch_dtype(lhs.dtype(), [&]<class In>() {
        if constexpr (std::is_integral_v<In>)
          int_dot<R, In>(static_cast<const In*>(l.raw_data()), static_cast<const In*>(r.raw_data()),
                         static_cast<R*>(out.buffer()->data()), sz);
        else
          throw_internal("prims/dot_general", "integer result from float operands");
      });
    } else {
      throw_internal("prims/dot_general", "integer path with a float result");
    }
  });
}

std::vector<Array> dot_general_impl(const ExecContext& ctx, std::span<const Array> args,
                                    const Params& p, std::span<const Aval> outs) {
  const Array& lhs = args[0];
  const Array& rhs = args[1];
  const Aval& oa = outs[0];
  const DimNums dn = dim_nums(p);
  Array out = empty_array(oa, "dot_general", ctx.device);
  if (oa.size() == 0) return {out};
  Sizes sz;
  sz.B = shape_size(pick(lhs.shape(), dn.lb));
  sz.M = shape_size(pick(lhs.shape(), free_dims(lhs.ndim(), dn.lb, dn.lc)));
  sz.N = shape_size(pick(rhs.shape(), free_dims(rhs.ndim(), dn.rb, dn.rc)));
  sz.K = shape_size(pick(lhs.shape(), dn.lc));
  const DType rd = oa.dtype;
  if (sz.K == 0) {                                      // an empty sum
    std::memset(out.buffer()->data(), 0, oa.nbytes());  // zero bits are 0 / 0.0 / false
    return {out};
  }
  if (is_floating(rd)) {
    if (rd == DType::kFloat64 || lhs.dtype() == DType::kFloat64)
      float_dot<double>(lhs, rhs, dn, sz, out);
    else
      float_dot<float>(lhs, rhs, dn, sz, out);
  } else {
    integer_dot(lhs, rhs, dn, sz, out);
  }
  return {out};
}

// ---------------------------------------------------------------- autodiff rules (JAX's lax)
// Rules compute only with tessera::lax so that they work under any trace.

lax::DotDimensionNumbers lax_dims(const DimNums& dn) {
  return lax::DotDimensionNumbers{dn.lc, dn.rc, dn.lb, dn.rb};
}

// Bilinear: d(lhs . rhs) = t_lhs . rhs + lhs . t_rhs, with symbolic zeros skipped.
std::pair<std::vector<Array>, std::vector<Array>> dot_general_jvp(std::span<const Array> primals,
                                                                  std::span<const Array> tangents,
                                                                  const Params& p) {
  const lax::DotDimensionNumbers dims = lax_dims(dim_nums(p));
  const std::optional<DType> pref = p.get_optional_dtype("preferred_element_type");
  const Array& lhs = primals[0];
  const Array& rhs = primals[1];
  std::vector<Array> outs;
  outs.push_back(lax::dot_general(lhs, rhs, dims, pref));
  Array t;
  if (is_inexact(outs[0].dtype())) {
    if (tangents[0].defined() && is_inexact(lhs.dtype()))
      t = lax::dot_general(tangents[0], rhs, dims, pref);
    if (tangents[1].defined() && is_inexact(rhs.dtype())) {
      Array t2 = lax::dot_general(lhs, tangents[1], dims, pref);
      t = t.defined() ? lax::add(t, t2) : t2;
    }
  }
  std::vector<Array> touts;
  touts.push_back(std::move(t));
  return {std::move(outs), std::move(touts)};
}

// The cotangent of one operand ("this", with contracting/batch dims this_c/this_b) given the
// output cotangent ct and the other operand (other_c/other_b). ct's dims are: batch, lhs free,
// rhs free; other_free_offset is where the other operand's free dims start in ct. ct . other
// over the other's free dims, batched over the batch dims, gives [batch, this free, this
// contracting (in the order of the other's contracting dims, sorted)]; a transpose restores
// this operand's dim order (JAX's _dot_general_transpose_lhs/_rhs).
Array dot_transpose_operand(const Array& ct, const Array& other, const Aval& this_aval,
                            const std::vector<int64_t>& this_c, const std::vector<int64_t>& this_b,
                            const std::vector<int64_t>& other_c,
                            const std::vector<int64_t>& other_b, int64_t other_free_offset) {
  const int64_t nb = static_cast<int64_t>(this_b.size());
  const std::vector<int64_t> this_free = free_dims(this_aval.ndim(), this_b, this_c);
  const std::vector<int64_t> other_free = free_dims(other.ndim(), other_b, other_c);
  // A preferred_element_type may make ct's dtype differ from the operands': compute in ct's.
  Array o = other;
  if (o.dtype() != ct.dtype()) o = lax::convert_element_type(o, ct.dtype());
  // Which operand dim each result dim is, for ct . other ([batch, this free, this contracting
  // in the order of the other's sorted contracting dims]) and for other . ct ([batch, this
  // contracting, this free]). The product is the same; choose the order whose result is
  // already in this operand's layout, so that no transpose copies it (e.g. the weight
  // gradient of x @ w is x^T . ct, never (ct^T . x)^T).
  std::vector<size_t> cidx(other_c.size());
  std::iota(cidx.begin(), cidx.end(), size_t{0});
  std::sort(cidx.begin(), cidx.end(), [&](size_t a, size_t b) { return other_c[a] < other_c[b]; });
  std::vector<int64_t> this_c_sorted;
  for (size_t j : cidx) this_c_sorted.push_back(this_c[j]);
  auto perm_for = [&](const std::vector<int64_t>& mid, const std::vector<int64_t>& tail) {
    std::vector<int64_t> src = this_b;
    src.insert(src.end(), mid.begin(), mid.end());
    src.insert(src.end(), tail.begin(), tail.end());
    std::vector<int64_t> perm(src.size());
    for (size_t q = 0; q < src.size(); ++q) perm[src[q]] = static_cast<int64_t>(q);
    return perm;
  };
  auto is_identity = [](const std::vector<int64_t>& perm) {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int64_t>(i)) return false;
    return true;
  };
  std::vector<int64_t> perm_ct_first = perm_for(this_free, this_c_sorted);
  std::vector<int64_t> perm_other_first = perm_for(this_c_sorted, this_free);
  std::vector<int64_t> ct_c, ct_b;
  for (size_t k = 0; k < other_free.size(); ++k)
    ct_c.push_back(other_free_offset + static_cast<int64_t>(k));
  for (int64_t k = 0; k < nb; ++k) ct_b.push_back(k);
  Array r;
  std::vector<int64_t> perm;
  if (!is_identity(perm_ct_first) && is_identity(perm_other_first)) {
    r = lax::dot_general(o, ct, lax::DotDimensionNumbers{other_free, ct_c, other_b, ct_b});
    perm = perm_other_first;
  } else {
    r = lax::dot_general(ct, o, lax::DotDimensionNumbers{ct_c, other_free, ct_b, other_b});
    perm = perm_ct_first;
  }
  if (!is_identity(perm)) r = lax::transpose(r, perm);
  if (r.dtype() != this_aval.dtype) r = lax::convert_element_type(r, this_aval.dtype);
  return r;
}

std::vector<Array> dot_general_transpose(std::span<const Array> cts, std::span<const Array> args,
                                         std::span<const Aval> arg_avals, const Params& p) {
  const DimNums dn = dim_nums(p);
  const Array& ct = cts[0];
  std::vector<Array> res(2);
  if (args[0].defined() == args[1].defined())
    throw InternalError(
        "[dot_general] transpose needs exactly one linear (undefined) operand; got " +
        std::string(args[0].defined() ? "none" : "both"));
  const int64_t nb = static_cast<int64_t>(dn.lb.size());
  if (!args[0].defined()) {  // cotangent of lhs
    const int64_t nlf = static_cast<int64_t>(free_dims(arg_avals[0].ndim(), dn.lb, dn.lc).size());
    res[0] = dot_transpose_operand(ct, args[1], arg_avals[0], dn.lc, dn.lb, dn.rc, dn.rb, nb + nlf);
  } else {  // cotangent of rhs
    res[1] = dot_transpose_operand(ct, args[0], arg_avals[1], dn.rc, dn.rb, dn.lc, dn.lb, nb);
  }
  return res;
}

// ---------------------------------------------------------------- batching rule
// No operand moves. Both batched: the two batch axes become a new leading dot batch dimension
// pair, so the output's batch axis is 0. One side batched: its batch axis becomes one of its
// free dims, and the output's batch axis is where dot_general puts that free dim (batch dims,
// then lhs free dims, then rhs free dims, each in increasing order).
batching::BatchOut dot_general_batch(const BatchAxis&, std::span<const Array> args,
                                     std::span<const int64_t> dims, const Params& p) {
  using batching::kNotMapped;
  using batching::shift_dims;
  DimNums dn = dim_nums(p);
  const int64_t bl = dims[0], br = dims[1];
  const Array& lhs = args[0];
  const Array& rhs = args[1];
  auto count_below = [](const std::vector<int64_t>& v, int64_t b) {
    return static_cast<int64_t>(
        std::count_if(v.begin(), v.end(), [b](int64_t d) { return d < b; }));
  };
  int64_t out_dim = 0;
  if (bl != kNotMapped && br != kNotMapped) {
    dn.lc = shift_dims(dn.lc, bl);
    dn.lb = shift_dims(dn.lb, bl);
    dn.rc = shift_dims(dn.rc, br);
    dn.rb = shift_dims(dn.rb, br);
    dn.lb.insert(dn.lb.begin(), bl);
    dn.rb.insert(dn.rb.begin(), br);
  } else if (bl != kNotMapped) {
    dn.lc = shift_dims(dn.lc, bl);
    dn.lb = shift_dims(dn.lb, bl);
    out_dim =
        static_cast<int64_t>(dn.lb.size()) + count_below(free_dims(lhs.ndim(), dn.lb, dn.lc), bl);
  } else {
    dn.rc = shift_dims(dn.rc, br);
    dn.rb = shift_dims(dn.rb, br);
    const int64_t lhs_free = static_cast<int64_t>(free_dims(lhs.ndim(), dn.lb, dn.lc).size());
    out_dim = static_cast<int64_t>(dn.lb.size()) + lhs_free +
              count_below(free_dims(rhs.ndim(), dn.rb, dn.rc), br);
  }
  Params np = p;
  np.set("dimension_numbers", DotDimensionNumbers{dn.lc, dn.rc, dn.lb, dn.rb}.to_param());
  return {tessera::bind(dot_general, args, np), {out_dim}};
}

// ---------------------------------------------------------------- simplification

// dot_general of a transpose reads the transpose's operand with renumbered dimension numbers —
// the BLAS call views it transposed (no copy) — when the free dims keep their relative order
// (they give the output's order). Batch and contracting dims may be permuted freely: the lists
// pair them up.
std::optional<compiler::Rewrite> fold_transposes(const compiler::SimplifyView& v) {
  DimNums dn = dim_nums(v.eqn.params);
  std::vector<Atom> ins = v.eqn.invars;
  bool changed = false;
  auto fold = [&](size_t side, std::vector<int64_t>& batch, std::vector<int64_t>& contracting) {
    const JaxprEqn* t = v.producer(ins[side]);
    if (t == nullptr || t->primitive != &transpose) return;
    const std::vector<int64_t>& perm = t->params.get_ints("permutation");
    const int64_t nd = static_cast<int64_t>(perm.size());
    int64_t last = -1;
    for (int64_t d : free_dims(nd, batch, contracting)) {
      if (perm[static_cast<size_t>(d)] < last) return;
      last = perm[static_cast<size_t>(d)];
    }
    for (int64_t& d : batch) d = perm[static_cast<size_t>(d)];
    for (int64_t& d : contracting) d = perm[static_cast<size_t>(d)];
    ins[side] = t->invars[0];
    changed = true;
  };
  fold(0, dn.lb, dn.lc);
  fold(1, dn.rb, dn.rc);
  if (!changed) return std::nullopt;
  Params np = v.eqn.params;
  np.set("dimension_numbers", DotDimensionNumbers{dn.lc, dn.rc, dn.lb, dn.rb}.to_param());
  return compiler::replace_with(
      compiler::new_eqn(dot_general, std::move(ins), {v.eqn.outvars[0].aval()}, std::move(np)));
}

}  // namespace

void register_dot_general() {
  dot_general.kind = PrimitiveKind::kContraction;
  // preferred_element_type is absent or None for the operands' dtype.
  dot_general.signature = Signature::fixed(
      2, {{"dimension_numbers", ParamKind::kRecord, true, nullptr, &kDotDimensionNumbersDef},
          {"preferred_element_type", ParamKind::kOptionalDType, false}});
  runtime::blas::init();  // one thread pool: OpenBLAS runs single-threaded under ours
  dot_general.abstract_eval = dot_general_abstract;
  dot_general.impl = dot_general_impl;
  dot_general.jvp = dot_general_jvp;
  dot_general.transpose = dot_general_transpose;
  dot_general.batch = dot_general_batch;
  compiler::register_simplification(dot_general, fold_transposes);
  register_primitive(dot_general);
}

}  // namespace tessera::prims
