// The Householder QR family, jax.lax.linalg's raw factorization primitives (the kernels are
// linalg_householder.h's, shared with qr in linalg_qr.cpp), float32/float64 over the leading
// (batch) dims, k = min(m, n):
//   geqrf(a (..., m, n)) -> (a_factored (..., m, n), taus (..., k)): LAPACK ?geqrf. R is the
//     upper triangle of a_factored; the Householder vectors v_i (v_i[i] = 1 implicit) are below
//     the diagonal, and Q = H_1 ... H_k with H_i = I - taus_i v_i v_iᵀ.
//   geqp3(a (..., m, n), jpvt int32 (..., n)) -> (a_factored, jpvt, taus): LAPACK ?geqp3, the
//     same with column pivoting. jpvt is LAPACK's: on entry nonzero marks a column moved to the
//     front and kept there (0: free to pivot); on exit the 1-based original column index of each
//     factored column, so a[..., :, jpvt - 1] = Q R with |diag R| non-increasing over the free
//     columns.
//   householder_product(a (..., m, n), taus (..., k)) -> q (..., m, n), m >= n >= k: LAPACK
//     ?orgqr, the first n columns of H_1 ... H_k from the reflectors below a's diagonal.
// Shape rules and error texts are JAX's; JAX gives none of them a JVP, so differentiating them
// raises its NotImplementedError. Batching moves the batch axis in front (an unbatched operand
// is broadcast). Eager kernels: one matrix per pool task on a column-major scratch copy.
#include <string>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/kernel_util.h"
#include "prims/linalg_householder.h"
#include "prims/prims.h"

namespace tessera::prims {

Primitive geqrf_p("geqrf", /*multiple_results=*/true);
Primitive geqp3_p("geqp3", /*multiple_results=*/true);
Primitive householder_product_p("householder_product");

namespace {

using ad::JvpOut;
using batching::BatchOut;
using batching::kNotMapped;
namespace lu = linalg_util;
namespace hh = householder;

Shape batch_dims(const Shape& s, size_t trailing) {
  return Shape(s.begin(), s.end() - static_cast<std::ptrdiff_t>(trailing));
}

int64_t matrices(const Shape& s) {
  int64_t b = 1;
  for (size_t d = 0; d + 2 < s.size(); ++d) b *= s[d];
  return b;
}

// JAX gives the raw factorizations no derivative.
JvpRule no_jvp(const char* name) {
  return [name](std::span<const Array>, std::span<const Array>, const Params&) -> JvpOut {
    throw NotImplementedError(op_message(
        name, std::string("Differentiation rule for '") + name +
                  "' not implemented (JAX defines none for the raw Householder factorizations); "
                  "differentiate lax.linalg.qr (pivoting or not) instead."));
  };
}

template <class F>
void by_dtype(DType d, F&& f) {
  if (d == DType::kFloat32)
    f.template operator()<float>();
  else
    f.template operator()<double>();
}

// ---------------------------------------------------------------- geqrf

std::vector<Aval> geqrf_abstract(std::span<const Aval> in, const Params&) {
  kernels::check_num_operands("geqrf", in, 1);
  const Aval& a = in[0];
  lu::check_matrix_operand("geqrf", "Argument to QR decomposition", a);
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1];
  Shape taus = batch_dims(a.shape, 2);
  taus.push_back(std::min(m, n));
  return {Aval{a.shape, a.dtype, false}, Aval{taus, a.dtype, false}};
}

std::vector<Array> geqrf_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                              std::span<const Aval> outs) {
  const Array& x = args[0];
  Array h = empty_array(outs[0], "geqrf", ctx.device);
  Array taus = empty_array(outs[1], "geqrf", ctx.device);
  const int64_t rk = x.ndim(), m = x.shape()[rk - 2], n = x.shape()[rk - 1], k = std::min(m, n);
  const int64_t batch = matrices(x.shape());
  if (m * n == 0) return {h, taus};  // nothing to factor; taus is empty
  by_dtype(x.dtype(), [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    T* ho = static_cast<T*>(h.buffer()->data());
    T* to = static_cast<T*>(taus.buffer()->data());
    lu::for_each_matrix(batch, m * n * k, [&](int64_t b) {
      std::vector<T> buf(static_cast<size_t>(hh::ld_of(m) * n));
      hh::to_col_major(in + b * m * n, buf.data(), m, n);
      hh::factor<T>("geqrf", buf.data(), m, n, to + b * k, nullptr);
      hh::to_row_major(buf.data(), ho + b * m * n, m, n);
    });
  });
  return {h, taus};
}

BatchOut geqrf_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                     const Params& p) {
  return {tessera::bind(geqrf_p, {batching::move_axis(args[0], bdims[0], 0)}, p), {0, 0}};
}

// ---------------------------------------------------------------- geqp3

std::vector<Aval> geqp3_abstract(std::span<const Aval> in, const Params&) {
  kernels::check_num_operands("geqp3", in, 2);
  const Aval &a = in[0], &jpvt = in[1];
  lu::check_matrix_operand("geqp3", "Argument to column-pivoted QR decomposition", a);
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1];
  if (jpvt.ndim() < 1 || batch_dims(a.shape, 2) != batch_dims(jpvt.shape, 1) ||
      jpvt.shape.back() != n)
    throw ValueError(op_message(
        "geqp3", "Type mismatch for pivoted QR decomposition: a=" + a.str() +
                     " jpvt=" + jpvt.str() +
                     "; jpvt must have shape a.shape[:-2] + (a.shape[-1],) = " + shape_str([&] {
                       Shape s = batch_dims(a.shape, 2);
                       s.push_back(n);
                       return s;
                     }()) +
                     "."));
  if (jpvt.dtype != DType::kInt32)
    throw TypeError(
        op_message("geqp3", "jpvt must be int32 (LAPACK's pivot indices), got " +
                                std::string(dtype_name(jpvt.dtype)) +
                                "; pass jnp.zeros(n, jnp.int32) for fully free pivoting."));
  Shape taus = batch_dims(a.shape, 2);
  taus.push_back(std::min(m, n));
  return {Aval{a.shape, a.dtype, false}, Aval{jpvt.shape, DType::kInt32, false},
          Aval{taus, a.dtype, false}};
}

std::vector<Array> geqp3_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                              std::span<const Aval> outs) {
  const Array& x = args[0];
  const Array& jp = args[1];
  Array h = empty_array(outs[0], "geqp3", ctx.device);
  Array jpvt = empty_array(outs[1], "geqp3", ctx.device);
  Array taus = empty_array(outs[2], "geqp3", ctx.device);
  const int64_t rk = x.ndim(), m = x.shape()[rk - 2], n = x.shape()[rk - 1], k = std::min(m, n);
  const int64_t batch = matrices(x.shape());
  if (n == 0) return {h, jpvt, taus};
  by_dtype(x.dtype(), [&]<class T>() {
    const T* in = m == 0 ? nullptr : static_cast<const T*>(x.raw_data());
    const int32_t* jin = static_cast<const int32_t*>(jp.raw_data());
    T* ho = static_cast<T*>(h.buffer()->data());
    int32_t* jo = static_cast<int32_t*>(jpvt.buffer()->data());
    T* to = static_cast<T*>(taus.buffer()->data());
    lu::for_each_matrix(batch, m * n * std::max<int64_t>(k, 1), [&](int64_t b) {
      std::vector<T> buf(static_cast<size_t>(hh::ld_of(m) * n));
      std::vector<lapack_int> piv(jin + b * n, jin + (b + 1) * n);
      if (m > 0) hh::to_col_major(in + b * m * n, buf.data(), m, n);
      hh::factor<T>("geqp3", buf.data(), m, n, to + b * k, piv.data());
      if (m > 0) hh::to_row_major(buf.data(), ho + b * m * n, m, n);
      for (int64_t j = 0; j < n; ++j) jo[b * n + j] = static_cast<int32_t>(piv[j]);
    });
  });
  return {h, jpvt, taus};
}

BatchOut geqp3_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> bdims,
                     const Params& p) {
  const int64_t size = batching::batch_size(args, bdims);
  Array a = batching::batch_at(args[0], bdims[0], size, 0);
  Array j = batching::batch_at(args[1], bdims[1], size, 0);
  return {tessera::bind(geqp3_p, {a, j}, p), {0, 0, 0}};
}

// ---------------------------------------------------------------- householder_product

std::vector<Aval> householder_product_abstract(std::span<const Aval> in, const Params&) {
  kernels::check_num_operands("householder_product", in, 2);
  const Aval &a = in[0], &taus = in[1];
  lu::check_matrix_operand("householder_product", "Argument to Householder product", a);
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1];
  if (taus.ndim() < 1 || a.dtype != taus.dtype ||
      batch_dims(a.shape, 2) != batch_dims(taus.shape, 1) || taus.shape.back() > std::min(m, n))
    throw ValueError(op_message(
        "householder_product",
        "Type mismatch for Householder product: a=" + a.str() + " taus=" + taus.str() +
            "; taus must have a's dtype and shape a.shape[:-2] + (k,) with k <= min(m, n)."));
  if (m < n)
    throw ValueError(op_message("householder_product",
                                "Householder product inputs must have at least as many rows as "
                                "columns, got shape " +
                                    shape_str(a.shape) + "."));
  return {Aval{a.shape, a.dtype, false}};
}

std::vector<Array> householder_product_impl(const ExecContext& ctx, std::span<const Array> args,
                                            const Params&, std::span<const Aval> outs) {
  const Array& x = args[0];
  const Array& t = args[1];
  Array q = empty_array(outs[0], "householder_product", ctx.device);
  const int64_t rk = x.ndim(), m = x.shape()[rk - 2], n = x.shape()[rk - 1], k = t.shape().back();
  const int64_t batch = matrices(x.shape());
  if (m * n == 0) return {q};
  by_dtype(x.dtype(), [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    const T* tin = k == 0 ? nullptr : static_cast<const T*>(t.raw_data());
    T* qo = static_cast<T*>(q.buffer()->data());
    lu::for_each_matrix(batch, m * n * std::max<int64_t>(k, 1), [&](int64_t b) {
      std::vector<T> buf(static_cast<size_t>(hh::ld_of(m) * n));
      hh::to_col_major(in + b * m * n, buf.data(), m, n);
      const T zero = 0;
      hh::form_q<T>("householder_product", buf.data(), m, n, k, k == 0 ? &zero : tin + b * k);
      hh::to_row_major(buf.data(), qo + b * m * n, m, n);
    });
  });
  return {q};
}

BatchOut householder_product_batch(const BatchAxis&, std::span<const Array> args,
                                   std::span<const int64_t> bdims, const Params& p) {
  const int64_t size = batching::batch_size(args, bdims);
  Array a = batching::batch_at(args[0], bdims[0], size, 0);
  Array t = batching::batch_at(args[1], bdims[1], size, 0);
  return {tessera::bind(householder_product_p, {a, t}, p), {0}};
}

}  // namespace

void register_householder() {
  geqrf_p.kind = PrimitiveKind::kLibraryCall;
  geqrf_p.signature = Signature::fixed(1);
  geqrf_p.abstract_eval = geqrf_abstract;
  geqrf_p.impl = geqrf_impl;
  geqrf_p.jvp = no_jvp("geqrf");
  geqrf_p.batch = geqrf_batch;
  register_primitive(geqrf_p);

  geqp3_p.kind = PrimitiveKind::kLibraryCall;
  geqp3_p.signature = Signature::fixed(2);
  geqp3_p.abstract_eval = geqp3_abstract;
  geqp3_p.impl = geqp3_impl;
  geqp3_p.jvp = no_jvp("geqp3");
  geqp3_p.batch = geqp3_batch;
  register_primitive(geqp3_p);

  householder_product_p.kind = PrimitiveKind::kLibraryCall;
  householder_product_p.signature = Signature::fixed(2);
  householder_product_p.abstract_eval = householder_product_abstract;
  householder_product_p.impl = householder_product_impl;
  householder_product_p.jvp = no_jvp("householder_product");
  householder_product_p.batch = householder_product_batch;
  register_primitive(householder_product_p);
}

}  // namespace tessera::prims
