// lu(a) -> (lu, pivots, permutation) (jax.lax.linalg's lu_p): LU decomposition with partial
// pivoting of a [..., m, n] (rectangular too): P·a = L·U with L unit-lower m×k and U upper k×n
// (k = min(m, n)) packed into lu [..., m, n]; pivots [..., k] int32 are the 0-based row swaps
// (row i swapped with row pivots[i], in order); permutation [..., m] int32 is P as row indices
// (a[permutation] = L·U). A singular a is fine (U has a zero pivot). float32/float64 only.
// lu_pivots_to_permutation(pivots) {permutation_size}: the permutation the swaps produce.
//
// Eager kernel: matrices with both dimensions <= 32 are factored by linalg_small.h's unblocked
// loop, 8 interleaved matrices per vector instruction (no library call); a larger one: the
// row-major operand transposed into a column-major scratch, one LAPACKE_?getrf_work, and the
// factors transposed back (getrf pivots rows, so the column-major view of the row-major buffer,
// which would pivot columns, cannot be used in place). A batch runs on the pool, one LAPACK call
// per matrix (linalg_util.h: OpenBLAS single-threaded under our pool; a single matrix is one call
// on the calling thread). JVP (JAX's rule, De Hoog, Anderssen and Lukas): with ȧ's rows permuted, X
// = L⁻¹·P·ȧ·U⁻¹ (two triangular solves with L and U padded to square), then L̇ = L·tril(X, -1) and U̇
// = triu(X)·U; pivots and permutation have zero tangents. Batching: the batch axis moves to the
// front (all outputs batched at 0).
#include <algorithm>
#include <numeric>
#include <vector>

#include <lapacke.h>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/linalg_small.h"
#include "prims/linalg_util.h"
#include "prims/prims.h"
#include "runtime/blas.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive lu_p("lu", /*multiple_results=*/true);
Primitive lu_pivots_to_permutation_p("lu_pivots_to_permutation");

namespace {

using ad::JvpOut;
using batching::BatchOut;

constexpr const char* kOp = "lu";

std::vector<Aval> lu_abstract(std::span<const Aval> in, const Params&) {
  const Aval& a = in[0];
  if (a.ndim() < 2)
    throw ValueError(op_message(
        kOp, "Argument to LU decomposition must have ndims >= 2, got " + shape_str(a.shape) + "."));
  linalg::check_float_matrix(kOp, a, "x");
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1];
  Shape piv(a.shape.begin(), a.shape.end() - 2), perm = piv;
  piv.push_back(std::min(m, n));
  perm.push_back(m);
  return {Aval{a.shape, a.dtype, a.weak_type}, Aval{piv, DType::kInt32, false},
          Aval{perm, DType::kInt32, false}};
}

// Applies the swaps in order to the identity permutation of size perm.size().
void pivots_to_perm(const int32_t* piv, int64_t k, int32_t* perm, int64_t size) {
  std::iota(perm, perm + size, 0);
  for (int64_t i = 0; i < k; ++i) {
    const int32_t j = piv[i];
    if (j >= 0 && j < size) std::swap(perm[i], perm[j]);
  }
}

std::vector<Array> lu_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                           std::span<const Aval> outs) {
  runtime::blas::init();
  const Array& a = args[0];
  Array lu = empty_array(outs[0], kOp, ctx.device);
  Array piv = empty_array(outs[1], kOp, ctx.device);
  Array perm = empty_array(outs[2], kOp, ctx.device);
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1];
  const int64_t k = std::min(m, n);
  const int64_t batch = linalg::batch_count(a.shape());
  if (batch == 0) return {lu, piv, perm};
  int32_t* pivp = static_cast<int32_t*>(piv.buffer()->data());
  int32_t* permp = static_cast<int32_t*>(perm.buffer()->data());
  if (m == 0 || n == 0) {  // nothing to factor; the permutation is the identity
    for (int64_t b = 0; b < batch; ++b) pivots_to_perm(nullptr, 0, permp + b * m, m);
    return {lu, piv, perm};
  }
  auto run = [&]<class T>() {
    const T* ap = static_cast<const T*>(a.raw_data());
    T* op = static_cast<T*>(lu.buffer()->data());
    const double flops = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    if (m <= linalg::kSmallMatrix && n <= linalg::kSmallMatrix) {
      linalg::for_each_group(batch, linalg::kLanes<T>, flops, [&](int64_t b0, int64_t count) {
        alignas(64) T s[linalg::kSmallMatrix * linalg::kSmallMatrix * linalg::kLanes<T>];
        int32_t pl[linalg::kSmallMatrix * linalg::kLanes<T>];
        linalg::pack_lanes(ap + b0 * m * n, count, m, n, s);
        linalg::lu_lanes(s, m, n, pl);
        linalg::unpack_lanes(s, count, m, n, op + b0 * m * n);
        for (int64_t l = 0; l < count; ++l) {
          int32_t* pv = pivp + (b0 + l) * k;
          for (int64_t j = 0; j < k; ++j) pv[j] = pl[j * linalg::kLanes<T> + l];
          pivots_to_perm(pv, k, permp + (b0 + l) * m, m);
        }
      });
      return;
    }
    linalg::for_each_matrix(batch, flops, [&](int64_t b) {
      const T* x = ap + b * m * n;
      T* y = op + b * m * n;
      int32_t* pv = pivp + b * k;
      std::vector<T> cm(static_cast<size_t>(m * n));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) cm[j * m + i] = x[i * n + j];
      std::vector<lapack_int> ipiv(static_cast<size_t>(k));
      lapack_int info;
      if constexpr (std::is_same_v<T, float>)
        info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, static_cast<lapack_int>(m),
                                   static_cast<lapack_int>(n), cm.data(),
                                   static_cast<lapack_int>(m), ipiv.data());
      else
        info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, static_cast<lapack_int>(m),
                                   static_cast<lapack_int>(n), cm.data(),
                                   static_cast<lapack_int>(m), ipiv.data());
      linalg::check_lapack_info(kOp, "?getrf", info);  // info > 0: singular, U has a zero pivot
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) y[i * n + j] = cm[j * m + i];
      for (int64_t i = 0; i < k; ++i) pv[i] = static_cast<int32_t>(ipiv[i] - 1);
      pivots_to_perm(pv, k, permp + b * m, m);
    });
  };
  if (a.dtype() == DType::kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  return {lu, piv, perm};
}

// x zero-padded (high side) to `rows` x `cols` in its last two axes.
Array pad_to(const Array& x, int64_t rows, int64_t cols) {
  std::vector<lax::PadConfig> cfg(static_cast<size_t>(x.ndim()));
  cfg[x.ndim() - 2].high = rows - x.shape()[x.ndim() - 2];
  cfg[x.ndim() - 1].high = cols - x.shape()[x.ndim() - 1];
  return lax::pad(x, ad::scalar_const(0.0, x.dtype()), cfg);
}

// The rows of x (…, m, c) permuted: out[..., i, :] = x[..., perm[..., i], :], as a product with
// the one-hot permutation matrix (linear in x, so JVP and transpose follow).
Array permute_rows(const Array& x, const Array& perm) {
  const int64_t m = perm.shape().back();
  const int64_t r = perm.ndim();
  Shape s = perm.shape();
  s.push_back(m);
  std::vector<int64_t> dims(static_cast<size_t>(r));
  std::iota(dims.begin(), dims.end(), 0);
  Array p = lax::broadcast_in_dim(perm, s, dims);
  Array onehot =
      lax::convert_element_type(lax::eq(p, lax::broadcasted_iota(DType::kInt32, s, r)), x.dtype());
  return linalg::matmul(onehot, x);
}

JvpOut lu_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  std::vector<Array> out = tessera::bind(lu_p, primals, p);
  if (ad::zero_tangent(primals[0], tangents[0])) return {out, {Array(), Array(), Array()}};
  const Array& lu = out[0];
  const int64_t r = lu.ndim();
  const int64_t m = lu.shape()[r - 2], n = lu.shape()[r - 1], k = std::min(m, n);
  Array x = permute_rows(tangents[0], out[2]);
  Shape batch(lu.shape().begin(), lu.shape().end() - 2);
  std::vector<int64_t> start(static_cast<size_t>(r), 0);
  std::vector<int64_t> lim_l = lu.shape(), lim_u = lu.shape();
  lim_l[r - 1] = k;
  lim_u[r - 2] = k;
  auto eye_batched = [&](int64_t size, int64_t from) {
    // An identity of `size` with ones only from index `from` on, broadcast over the batch.
    Shape s = batch;
    s.push_back(size);
    s.push_back(size);
    Array i = lax::broadcasted_iota(DType::kInt32, s, r - 2);
    Array j = lax::broadcasted_iota(DType::kInt32, s, r - 1);
    Array on = lax::bitwise_and(
        lax::eq(i, j), lax::ge(i, ad::scalar_const(static_cast<double>(from), DType::kInt32)));
    return lax::convert_element_type(on, lu.dtype());
  };
  Array l = lax::add(pad_to(linalg::tri(lax::slice(lu, start, lim_l), true, -1), m, m),
                     eye_batched(m, 0));
  Array u = lax::add(pad_to(linalg::tri(lax::slice(lu, start, lim_u), false, 0), n, n),
                     eye_batched(n, k));
  Array la = linalg::trsolve(l, x, /*left_side=*/true, /*lower=*/true, false,
                             /*unit_diagonal=*/true);
  Array lau = linalg::trsolve(u, la, /*left_side=*/false, /*lower=*/false, false, false);
  Array lu_dot = lax::add(linalg::matmul(l, linalg::tri(lau, true, -1)),
                          linalg::matmul(linalg::tri(lau, false, 0), u));
  return {out, {lu_dot, Array(), Array()}};
}

BatchOut lu_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                  const Params& p) {
  return {tessera::bind(lu_p, {batching::move_axis(args[0], dims[0], 0)}, p), {0, 0, 0}};
}

// ---------------------------------------------------------------- lu_pivots_to_permutation

constexpr const char* kOpP = "lu_pivots_to_permutation";

std::vector<Aval> ptp_abstract(std::span<const Aval> in, const Params& p) {
  const Aval& a = in[0];
  const int64_t size = p.get_int("permutation_size");
  if (a.dtype != DType::kInt32)
    throw TypeError(
        op_message(kOpP, "pivots must be int32, got " + std::string(dtype_name(a.dtype)) + "."));
  if (a.ndim() < 1)
    throw ValueError(op_message(kOpP,
                                "Argument to lu_pivots_to_permutation must have rank >= 1, "
                                "got shape " +
                                    shape_str(a.shape) + "."));
  if (size < a.shape.back())
    throw ValueError(op_message(
        kOpP, "Output permutation size " + std::to_string(size) +
                  " has to exceed the trailing dimension of the pivots. Got pivots shape " +
                  shape_str(a.shape) + "."));
  Shape s = a.shape;
  s.back() = size;
  return {Aval{s, DType::kInt32, false}};
}

std::vector<Array> ptp_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                            std::span<const Aval> outs) {
  const Array& piv = args[0];
  Array out = empty_array(outs[0], kOpP, ctx.device);
  const int64_t size = p.get_int("permutation_size");
  const int64_t k = piv.shape().back();
  int64_t batch = 1;
  for (int64_t d = 0; d + 1 < piv.ndim(); ++d) batch *= piv.shape()[d];
  const int32_t* pp = static_cast<const int32_t*>(piv.raw_data());
  int32_t* op = static_cast<int32_t*>(out.buffer()->data());
  for (int64_t b = 0; b < batch; ++b) pivots_to_perm(pp + b * k, k, op + b * size, size);
  return {out};
}

BatchOut ptp_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                   const Params& p) {
  return {tessera::bind(lu_pivots_to_permutation_p, {batching::move_axis(args[0], dims[0], 0)}, p),
          {0}};
}

}  // namespace

void register_linalg_lu() {
  lu_p.kind = PrimitiveKind::kLibraryCall;
  lu_p.signature = Signature::fixed(1);
  runtime::blas::init();
  lu_p.abstract_eval = lu_abstract;
  lu_p.impl = lu_impl;
  lu_p.jvp = lu_jvp;
  lu_p.batch = lu_batch;
  register_primitive(lu_p);

  lu_pivots_to_permutation_p.kind = PrimitiveKind::kLibraryCall;
  lu_pivots_to_permutation_p.signature =
      Signature::fixed(1, {{"permutation_size", ParamKind::kInt}});
  lu_pivots_to_permutation_p.abstract_eval = ptp_abstract;
  lu_pivots_to_permutation_p.impl = ptp_impl;
  lu_pivots_to_permutation_p.jvp = ad::zero_jvp(lu_pivots_to_permutation_p);
  lu_pivots_to_permutation_p.batch = ptp_batch;
  register_primitive(lu_pivots_to_permutation_p);
}

}  // namespace tessera::prims
