// cholesky(a) (jax.lax.linalg's cholesky_p): the lower-triangular L with L·Lᵀ = a for symmetric
// positive-definite a [..., n, n], reading only a's lower triangle (lax.linalg.cholesky
// symmetrizes first, as JAX's symmetrize_input=True); the strict upper triangle of L is zero.
// A matrix that is not positive definite gives an all-NaN L (that matrix only), never an error.
// float32/float64 only.
//
// Eager kernel: n <= 32 matrices by linalg_small.h's unblocked loop, 8 interleaved matrices per
// vector instruction (no library call); a larger
// one: the operand copied to the output and one LAPACKE_?potrf_work on it
// in place. The row-major lower triangle is LAPACK's column-major upper one, so the call uses
// uplo 'U' on the row-major buffer with no transposing copy. A batch runs on the pool, one
// LAPACK call per matrix (linalg_util.h: OpenBLAS single-threaded under our pool; a single matrix
// is one call on the calling thread).
// JVP (JAX's rule, Murray 2016): L̇ = L·Φ(L⁻¹·ȧ·L⁻ᵀ), Φ keeping the lower triangle with the
// diagonal halved; two triangular solves and one product.
// Batching: the batch axis moves to the front.
#include <algorithm>
#include <cmath>
#include <limits>
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

Primitive cholesky_p("cholesky");

namespace {

using ad::JvpOut;
using batching::BatchOut;

constexpr const char* kOp = "cholesky";

std::vector<Aval> cholesky_abstract(std::span<const Aval> in, const Params&) {
  const Aval& a = in[0];
  linalg::check_float_matrix(kOp, a, "x");
  if (a.shape[a.ndim() - 1] != a.shape[a.ndim() - 2])
    throw ValueError(
        op_message(kOp, "The input to cholesky must have shape [..., n, n], got shape " +
                            shape_str(a.shape) + "."));
  return {Aval{a.shape, a.dtype, a.weak_type}};
}

std::vector<Array> cholesky_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                                 std::span<const Aval> outs) {
  runtime::blas::init();
  const Array& a = args[0];
  Array out = empty_array(outs[0], kOp, ctx.device);
  const int64_t n = a.shape().back();
  const int64_t batch = linalg::batch_count(a.shape());
  if (batch == 0 || n == 0) return {out};
  auto run = [&]<class T>() {
    const T* ap = static_cast<const T*>(a.raw_data());
    T* op = static_cast<T*>(out.buffer()->data());
    const double flops = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    if (n <= linalg::kSmallMatrix) {
      linalg::for_each_group(batch, linalg::kLanes<T>, flops / 3, [&](int64_t b0, int64_t count) {
        alignas(64) T s[linalg::kSmallMatrix * linalg::kSmallMatrix * linalg::kLanes<T>];
        bool ok[linalg::kLanes<T>];
        linalg::pack_lanes(ap + b0 * n * n, count, n, n, s);
        linalg::cholesky_lanes(s, n, ok);
        for (int64_t l = 0; l < count; ++l) {
          T* y = op + (b0 + l) * n * n;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
              y[i * n + j] = !ok[l]   ? std::numeric_limits<T>::quiet_NaN()
                             : j <= i ? s[(i * n + j) * linalg::kLanes<T> + l]
                                      : T(0);
        }
      });
      return;
    }
    linalg::for_each_matrix(batch, flops / 3, [&](int64_t b) {
      T* l = op + b * n * n;
      std::copy(ap + b * n * n, ap + (b + 1) * n * n, l);
      lapack_int info;
      if constexpr (std::is_same_v<T, float>)
        info = LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), l,
                                   static_cast<lapack_int>(n));
      else
        info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), l,
                                   static_cast<lapack_int>(n));
      linalg::check_lapack_info(kOp, "?potrf", info);
      if (info > 0) {
        std::fill(l, l + n * n, std::numeric_limits<T>::quiet_NaN());
        return;
      }
      for (int64_t i = 0; i < n; ++i) std::fill(l + i * n + i + 1, l + (i + 1) * n, T(0));
    });
  };
  if (a.dtype() == DType::kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  return {out};
}

JvpOut cholesky_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                    const Params& p) {
  Array l = tessera::bind(cholesky_p, primals, p)[0];
  if (ad::zero_tangent(primals[0], tangents[0])) return {{l}, {Array()}};
  // tmp = ȧ·L⁻ᵀ; then L⁻¹·tmp.
  Array tmp = linalg::trsolve(l, tangents[0], /*left_side=*/false, /*lower=*/true,
                              /*transpose_a=*/true, false);
  Array s = linalg::trsolve(l, tmp, /*left_side=*/true, /*lower=*/true, false, false);
  // Φ: the lower triangle with the diagonal halved.
  const Shape& sh = s.shape();
  const int64_t r = s.ndim();
  Array diag = lax::eq(lax::broadcasted_iota(DType::kInt32, sh, r - 2),
                       lax::broadcasted_iota(DType::kInt32, sh, r - 1));
  Array w = lax::select_n(diag, {ad::full_like_aval(Aval{sh, s.dtype(), false}, 1.0),
                                 ad::full_like_aval(Aval{sh, s.dtype(), false}, 0.5)});
  Array phi = lax::mul(linalg::tri(s, /*lower=*/true), w);
  return {{l}, {linalg::matmul(l, phi)}};
}

BatchOut cholesky_batch(const BatchAxis&, std::span<const Array> args,
                        std::span<const int64_t> dims, const Params& p) {
  return {tessera::bind(cholesky_p, {batching::move_axis(args[0], dims[0], 0)}, p), {0}};
}

}  // namespace

void register_linalg_cholesky() {
  cholesky_p.kind = PrimitiveKind::kLibraryCall;
  cholesky_p.signature = Signature::fixed(1);
  runtime::blas::init();
  cholesky_p.abstract_eval = cholesky_abstract;
  cholesky_p.impl = cholesky_impl;
  cholesky_p.jvp = cholesky_jvp;
  cholesky_p.batch = cholesky_batch;
  register_primitive(cholesky_p);
}

}  // namespace tessera::prims
