// triangular_solve(a, b) {left_side, lower, transpose_a, conjugate_a, unit_diagonal}
// (jax.lax.linalg's triangular_solve_p): solves op(a)·x = b (left_side) or x·op(a) = b for x,
// where a is [..., m, m] triangular (only its `lower` or upper triangle is read; with
// unit_diagonal its diagonal is taken as ones) and op(a) is a or aᵀ (transpose_a; conjugate_a
// changes nothing for real dtypes). b is [..., m, n] (left) or [..., n, m] (right) with the same
// batch dims as a; the result has b's shape. float32/float64 only.
//
// Eager kernel: when m <= 32 (and b's matrices have <= 32*32 elements), linalg_small.h's
// substitution on groups of 8 interleaved systems; else b copied to the output and one in-place
// cblas_?trsm (OpenBLAS, row-major, no other copies); a batch runs on
// the pool, one matrix per call (linalg_util.h: OpenBLAS single-threaded under our pool; a single
// matrix is one call on the calling thread). A singular a (a zero on the diagonal) gives infs/NaNs,
// never an error, as JAX. JVP (JAX's rule): in b linear; in a, -op(a)⁻¹·op(ȧ)·x (left) or
// -x·op(ȧ)·op(a)⁻¹ (right) with ȧ masked to a's triangle, the product ordered to keep the solve on
// the smaller operand. Transpose (linear in b only): the same solve with transpose_a flipped.
// Batching: both batched, the batch axes move to the front; only b batched, the batch axis is
// folded into b's free dim (one solve with a, no copies of a); only a batched, b is broadcast.
#include <algorithm>
#include <string>
#include <vector>

#include <cblas.h>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/linalg_small.h"
#include "prims/linalg_util.h"
#include "prims/prims.h"
#include "runtime/blas.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive triangular_solve_p("triangular_solve");

namespace {

using ad::JvpOut;
using batching::BatchOut;
using batching::kNotMapped;

constexpr const char* kOp = "triangular_solve";

struct TsParams {
  bool left_side, lower, transpose_a, unit_diagonal;
};

TsParams ts_params(const Params& p) {
  return {p.get_bool("left_side"), p.get_bool("lower"), p.get_bool("transpose_a"),
          p.get_bool("unit_diagonal")};
}

std::vector<Aval> ts_abstract(std::span<const Aval> in, const Params& p) {
  const Aval& a = in[0];
  const Aval& b = in[1];
  linalg::check_float_matrix(kOp, a, "a");
  linalg::check_float_matrix(kOp, b, "b");
  const Shape& as = a.shape;
  const Shape& bs = b.shape;
  const int64_t r = a.ndim();
  if (as[r - 1] != as[r - 2])
    throw TypeError(op_message(kOp,
                               "triangular_solve requires the last two dimensions of a to be "
                               "equal in size, got a.shape of " +
                                   shape_str(as) + "."));
  if (b.ndim() != r || !std::equal(as.begin(), as.end() - 2, bs.begin()))
    throw TypeError(op_message(kOp,
                               "triangular_solve requires both arguments to have the same number "
                               "of dimensions and equal batch dimensions, got " +
                                   shape_str(as) + " and " + shape_str(bs) + "."));
  const int64_t common = p.get_bool("left_side") ? bs[r - 2] : bs[r - 1];
  if (as[r - 1] != common)
    throw TypeError(op_message(kOp, "Incompatible shapes for arguments to triangular_solve: " +
                                        shape_str(as) + " and " + shape_str(bs) + "."));
  if (a.dtype != b.dtype)
    throw TypeError(op_message(kOp, "triangular_solve requires a and b of one dtype, got " +
                                        std::string(dtype_name(a.dtype)) + " and " +
                                        std::string(dtype_name(b.dtype)) + "."));
  return {Aval{bs, b.dtype, a.weak_type && b.weak_type}};
}

template <class T>
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int rows,
          int cols, const T* a, int lda, T* b, int ldb) {
  if constexpr (std::is_same_v<T, float>)
    cblas_strsm(CblasRowMajor, side, uplo, trans, diag, rows, cols, 1.0f, a, lda, b, ldb);
  else
    cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, rows, cols, 1.0, a, lda, b, ldb);
}

std::vector<Array> ts_impl(const ExecContext& ctx, std::span<const Array> args, const Params& p,
                           std::span<const Aval> outs) {
  runtime::blas::init();
  const TsParams tp = ts_params(p);
  const Array& a = args[0];
  const Array& b = args[1];
  Array out = empty_array(outs[0], kOp, ctx.device);
  const int64_t r = b.ndim();
  const int64_t rows = b.shape()[r - 2], cols = b.shape()[r - 1];
  const int64_t m = a.shape()[r - 1];
  const int64_t batch = linalg::batch_count(b.shape());
  if (batch == 0 || rows == 0 || cols == 0) return {out};
  if (m > INT32_MAX / 2 || rows > INT32_MAX / 2 || cols > INT32_MAX / 2)
    throw ValueError(
        op_message(kOp, "matrices of " + shape_str(b.shape()) + " exceed the BLAS integer range"));
  auto run = [&]<class T>() {
    const T* ap = static_cast<const T*>(a.raw_data());
    const T* bp = static_cast<const T*>(b.raw_data());
    T* op = static_cast<T*>(out.buffer()->data());
    const int64_t bsz = rows * cols;
    if (m == 0) {
      std::copy(bp, bp + batch * bsz, op);
      return;
    }
    const double flops = static_cast<double>(m) * static_cast<double>(m) *
                         static_cast<double>(tp.left_side ? cols : rows);
    if (m <= linalg::kSmallMatrix && bsz <= linalg::kSmallMatrix * linalg::kSmallMatrix) {
      linalg::for_each_group(batch, linalg::kLanes<T>, flops, [&](int64_t b0, int64_t count) {
        alignas(64) T sa[linalg::kSmallMatrix * linalg::kSmallMatrix * linalg::kLanes<T>];
        alignas(64) T sb[linalg::kSmallMatrix * linalg::kSmallMatrix * linalg::kLanes<T>];
        linalg::pack_lanes(ap + b0 * m * m, count, m, m, sa);
        linalg::pack_lanes(bp + b0 * bsz, count, rows, cols, sb);
        linalg::trsm_lanes(tp.left_side, tp.lower, tp.transpose_a, tp.unit_diagonal, rows, cols, sa,
                           m, sb);
        linalg::unpack_lanes(sb, count, rows, cols, op + b0 * bsz);
      });
      return;
    }
    std::copy(bp, bp + batch * bsz, op);
    linalg::for_each_matrix(batch, flops, [&](int64_t i) {
      trsm<T>(tp.left_side ? CblasLeft : CblasRight, tp.lower ? CblasLower : CblasUpper,
              tp.transpose_a ? CblasTrans : CblasNoTrans,
              tp.unit_diagonal ? CblasUnit : CblasNonUnit, static_cast<int>(rows),
              static_cast<int>(cols), ap + i * m * m, static_cast<int>(m), op + i * bsz,
              static_cast<int>(cols));
    });
  };
  if (b.dtype() == DType::kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  return {out};
}

Array bind_ts(const Array& a, const Array& b, const Params& p) {
  return tessera::bind(triangular_solve_p, {a, b}, p)[0];
}

JvpOut ts_jvp(std::span<const Array> primals, std::span<const Array> tangents, const Params& p) {
  const TsParams tp = ts_params(p);
  const Array& a = primals[0];
  const Array& b = primals[1];
  Array x = bind_ts(a, b, p);
  Array t;
  if (!ad::zero_tangent(b, tangents[1])) t = bind_ts(a, tangents[1], p);
  if (!ad::zero_tangent(a, tangents[0])) {
    // -op(ȧ) restricted to a's triangle (off the diagonal when unit_diagonal).
    const int64_t k = tp.unit_diagonal ? 1 : 0;
    Array ga = lax::neg(linalg::tri(tangents[0], tp.lower, tp.lower ? -k : k));
    if (tp.transpose_a) ga = linalg::swap_last2(ga);
    const int64_t r = b.ndim();
    const int64_t m = b.shape()[r - 2], n = b.shape()[r - 1];
    Array ta;
    if (tp.left_side)
      ta = m > n ? bind_ts(a, linalg::matmul(ga, x), p) : linalg::matmul(bind_ts(a, ga, p), x);
    else
      ta = m < n ? bind_ts(a, linalg::matmul(x, ga), p) : linalg::matmul(x, bind_ts(a, ga, p));
    t = ad::add_tangents(t, ta);
  }
  return {{x}, {t}};
}

std::vector<Array> ts_transpose(std::span<const Array> cts, std::span<const Array> args,
                                std::span<const Aval>, const Params& p) {
  if (!args[0].defined() || args[1].defined())
    ad::bad_linearity(kOp, "triangular_solve is linear in b only (a must be known)");
  Params q = p;
  q.set("transpose_a", !p.get_bool("transpose_a"));
  return {Array(), bind_ts(args[0], cts[0], q)};
}

BatchOut ts_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                  const Params& p) {
  Array a = args[0], b = args[1];
  const int64_t da = dims[0], db = dims[1];
  if (da != kNotMapped && db != kNotMapped) {
    return {{bind_ts(batching::move_axis(a, da, 0), batching::move_axis(b, db, 0), p)}, {0}};
  }
  if (da != kNotMapped) {
    const int64_t size = a.shape()[da];
    a = batching::move_axis(a, da, 0);
    b = batching::batch_at(b, kNotMapped, size, 0);
    return {{bind_ts(a, b, p)}, {0}};
  }
  // Only b batched: fold its batch axis into the free dim (columns when left_side, rows when
  // right) and solve once against the unbatched a.
  const bool left = p.get_bool("left_side");
  const int64_t r = b.ndim();                     // includes the batch axis
  const int64_t free_pos = left ? r - 2 : r - 3;  // position of the free dim once moved
  // Left: [..., m, B, n] -> [..., m, B*n]; right: [..., B, rows, m] -> [..., B*rows, m].
  const int64_t target = left ? r - 2 : r - 3;
  b = batching::move_axis(b, db, target);
  const Shape moved = b.shape();
  Shape merged(moved.begin(), moved.end());
  merged[free_pos] = moved[free_pos] * moved[free_pos + 1];
  merged.erase(merged.begin() + free_pos + 1);
  Array x = bind_ts(a, lax::reshape(b, merged), p);
  return {{lax::reshape(x, moved)}, {target}};
}

}  // namespace

void register_linalg_triangular_solve() {
  triangular_solve_p.kind = PrimitiveKind::kLibraryCall;
  triangular_solve_p.signature = Signature::fixed(2, {{"left_side", ParamKind::kBool},
                                                      {"lower", ParamKind::kBool},
                                                      {"transpose_a", ParamKind::kBool},
                                                      {"conjugate_a", ParamKind::kBool},
                                                      {"unit_diagonal", ParamKind::kBool}});
  runtime::blas::init();
  triangular_solve_p.abstract_eval = ts_abstract;
  triangular_solve_p.impl = ts_impl;
  triangular_solve_p.jvp = ts_jvp;
  triangular_solve_p.transpose = ts_transpose;
  triangular_solve_p.batch = ts_batch;
  register_primitive(triangular_solve_p);
}

}  // namespace tessera::prims
