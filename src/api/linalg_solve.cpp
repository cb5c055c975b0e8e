// The solve family's lax.linalg functions (binds of the primitives of src/prims/linalg_*.cpp,
// found by name) and the jnp.linalg / jax.scipy.linalg composites built on them. Every
// composite is Tessera ops only, so jit, vmap and grad compose through it; solve-like functions
// reuse the primal's factorization in their derivatives (solve through custom_linear_solve, as
// JAX's _solve), so reverse mode costs one more solve with the transposed factors.
#include "tessera/linalg_solve.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/custom_derivatives.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_assoc_scan.h"
#include "tessera/lax_gather.h"
#include "tessera/lax_linear_solve.h"
#include "tessera/lax_sort.h"
#include "tessera/numpy.h"
#include "tessera/numpy_indexing.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/primitive.h"

namespace tessera {

namespace tnp = tessera::numpy;

namespace {

const Primitive& prim(const char* name) { return *find_primitive(name); }

void check_defined(const char* op, std::initializer_list<const Array*> xs) {
  for (const Array* x : xs)
    if (!x->defined()) throw ValueError(op_message(op, "an operand is an empty Array handle"));
}

// x with its last two axes swapped.
Array mT(const Array& x) { return tnp::swapaxes(x, -1, -2); }

Shape batch_of(const Shape& s, int64_t core) { return Shape(s.begin(), s.end() - core); }

Shape concat_shape(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

// NumPy broadcast of two batch shapes.
Shape broadcast_batch(const char* op, const Shape& a, const Shape& b) {
  return numpy::detail::broadcast_shape(op, a, b);
}

Array bcast(const Array& x, const Shape& s) { return x.shape() == s ? x : tnp::broadcast_to(x, s); }

// b [..., m, k] with its rows permuted: out[..., i, :] = b[..., perm[..., i], :] (one gather,
// batched over the leading dims through operand_batching_dims: no index arithmetic).
Array take_rows(const Array& b, const Array& perm) {
  const int64_t r = b.ndim();
  if (b.shape()[r - 2] == 0) return b;  // no rows to permute (a zero slice size is invalid)
  GatherDimensionNumbers dn;
  dn.offset_dims = {r - 1};
  dn.collapsed_slice_dims = {r - 2};
  dn.start_index_map = {r - 2};
  for (int64_t d = 0; d < r - 2; ++d) {
    dn.operand_batching_dims.push_back(d);
    dn.start_indices_batching_dims.push_back(d);
  }
  std::vector<int64_t> slice(static_cast<size_t>(r), 1);
  slice[r - 1] = b.shape()[r - 1];
  Shape is = perm.shape();
  is.push_back(1);
  lax::GatherOptions opt;
  opt.mode = GatherScatterMode::kPromiseInBounds;
  opt.unique_indices = true;
  return lax::gather(b, lax::reshape(perm, is), dn, slice, opt);
}

// The inverse of permutations [..., m] (argsort).
Array inverse_permutation(const Array& perm) {
  Array iota = lax::broadcasted_iota(DType::kInt32, perm.shape(), perm.ndim() - 1);
  return lax::sort_key_val(perm, iota, -1).second;
}

// lu_solve on equal batch dims, b [..., m, k].
Array lu_solve_core(const Array& lu, const Array& perm, const Array& b, int trans) {
  namespace tl = lax::linalg;
  if (trans == 0) {
    Array x = take_rows(b, perm);
    x = tl::triangular_solve(lu, x, true, true, false, false, true);
    return tl::triangular_solve(lu, x, true, false, false, false, false);
  }
  Array x = tl::triangular_solve(lu, b, true, false, true, false, false);
  x = tl::triangular_solve(lu, x, true, true, true, false, true);
  return take_rows(x, inverse_permutation(perm));
}

// Cholesky solve (c lower when lower, else upper) on b [..., m, k] with c's batch dims.
Array cho_solve_core(const Array& c, const Array& b, bool lower) {
  namespace tl = lax::linalg;
  Array x = tl::triangular_solve(c, b, true, lower, !lower);
  return tl::triangular_solve(c, x, true, lower, lower);
}

void check_square(const char* op, const Array& a, const std::string& msg) {
  if (a.ndim() < 2 || a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    throw ValueError(op_message(op, msg));
}

// JAX's _check_solve_shapes.
void check_solve_shapes(const char* op, const Array& a, const Array& b) {
  const int64_t r = a.ndim();
  if (!(r >= 2 && (b.ndim() == r || b.ndim() == r - 1) && a.shape()[r - 1] == a.shape()[r - 2] &&
        b.ndim() > r - 2 && b.shape()[r - 2] == a.shape()[r - 1]))
    throw ValueError(op_message(op,
                                "The arguments to solve must have shapes a=[..., m, m] and "
                                "b=[..., m, k] or b=[..., m]; got a=" +
                                    shape_str(a.shape()) + " and b=" + shape_str(b.shape())));
}

// JAX's _solve: a custom_linear_solve whose matvec is a·x, solved through the LU factors of
// stop_gradient(a) and, for reverse mode, the transposed factors (b [..., m, k], a's batch
// dims). The tangent ẋ = solve(ḃ − ȧ·x) reuses the factorization; jvp, vjp, linearize and their
// compositions go through the primitive's rules.
Array solve_lu_custom(const Array& a, const Array& b) {
  const auto f = lax::linalg::lu(lax::stop_gradient(a));
  const Array& lu = std::get<0>(f);
  const Array& perm = std::get<2>(f);
  return lax::custom_linear_solve(
      [&a](const Array& x) { return tnp::matmul(a, x); }, b,
      [&](const auto&, const Array& r) { return lu_solve_core(lu, perm, r, 0); },
      [&](const auto&, const Array& r) { return lu_solve_core(lu, perm, r, 1); });
}

Array solve_cho_custom(const Array& a, const Array& b, bool lower) {
  auto factor = [lower](const Array& aa) {
    return lower ? lax::linalg::cholesky(aa, false) : mT(lax::linalg::cholesky(mT(aa), false));
  };
  const auto f = custom_jvp([=](const Array& aa, const Array& bb) {
                   return cho_solve_core(factor(aa), bb, lower);
                 }).defjvp([=](const auto& primals, const auto& tangents) {
    const Array& aa = std::get<0>(primals);
    const Array& bb = std::get<1>(primals);
    Array c = factor(lax::stop_gradient(aa));
    Array x = cho_solve_core(c, bb, lower);
    Array rhs = lax::sub(std::get<1>(tangents), tnp::matmul(std::get<0>(tangents), x));
    return std::make_pair(x, cho_solve_core(c, rhs, lower));
  });
  return f(a, b);
}

// lax.linalg._solve's shape handling around a core solve on [..., m, k] with a's batch dims.
template <class Core>
Array lax_solve(const char* op, const Array& a, const Array& b, Core core) {
  check_solve_shapes(op, a, b);
  const bool vec = b.ndim() == a.ndim() - 1;
  Array bb = vec ? lax::expand_dims(b, {b.ndim()}) : b;
  // Leading size-1 dims of b broadcast to a's.
  Shape out = bb.shape();
  for (int64_t d = 0; d + 2 < a.ndim(); ++d)
    if (out[d] == 1) out[d] = a.shape()[d];
  bb = bcast(bb, out);
  Array x = core(a, bb);
  return vec ? lax::squeeze(x, {x.ndim() - 1}) : x;
}

std::vector<Array> promote2(const char* op, const Array& a, const Array& b) {
  return numpy::detail::promote_inexact(op, {a, b});
}
Array promote1(const char* op, const Array& a) {
  return numpy::detail::promote_inexact(op, {a})[0];
}

}  // namespace

// ============================================================== lax.linalg
namespace lax::linalg {

Array triangular_solve(const Array& a, const Array& b, bool left_side, bool lower, bool transpose_a,
                       bool conjugate_a, bool unit_diagonal) {
  check_defined("triangular_solve", {&a, &b});
  (void)conjugate_a;  // no effect on real dtypes (Tessera has no complex ones)
  static const Primitive& p = prim("triangular_solve");
  const bool singleton = b.ndim() == a.ndim() - 1;
  Array bb = singleton ? lax::expand_dims(b, {left_side ? b.ndim() : b.ndim() - 1}) : b;
  Array x = tessera::bind(p, {a, bb},
                          Params{{"left_side", left_side},
                                 {"lower", lower},
                                 {"transpose_a", transpose_a},
                                 {"conjugate_a", false},  // JAX: only complex a conjugates
                                 {"unit_diagonal", unit_diagonal}})[0];
  if (singleton) x = lax::squeeze(x, {left_side ? x.ndim() - 1 : x.ndim() - 2});
  return x;
}

Array cholesky(const Array& x, bool symmetrize_input) {
  check_defined("cholesky", {&x});
  static const Primitive& p = prim("cholesky");
  Array a = x;
  if (symmetrize_input && is_floating(x.dtype()) && x.ndim() >= 2 &&
      x.shape()[x.ndim() - 1] == x.shape()[x.ndim() - 2])
    a = lax::mul(lax::add(x, mT(x)), tnp::full(x.shape(), 0.5, x.dtype()));
  return tessera::bind(p, {a}, Params{})[0];
}

std::tuple<Array, Array, Array> lu(const Array& x) {
  check_defined("lu", {&x});
  static const Primitive& p = prim("lu");
  std::vector<Array> r = tessera::bind(p, {x}, Params{});
  return {r[0], r[1], r[2]};
}

Array lu_pivots_to_permutation(const Array& pivots, int64_t permutation_size) {
  check_defined("lu_pivots_to_permutation", {&pivots});
  static const Primitive& p = prim("lu_pivots_to_permutation");
  return tessera::bind(p, {pivots}, Params{{"permutation_size", permutation_size}})[0];
}

Array lu_solve(const Array& lu, const Array& permutation, const Array& b, int trans) {
  constexpr const char* kOp = "lu_solve";
  check_defined(kOp, {&lu, &permutation, &b});
  if (lu.ndim() < 2 || lu.shape()[lu.ndim() - 1] != lu.shape()[lu.ndim() - 2])
    throw ValueError(op_message(kOp,
                                "last two dimensions of LU decomposition must be equal, got "
                                "shape " +
                                    shape_str(lu.shape())));
  if (trans < 0 || trans > 2)
    throw ValueError(
        op_message(kOp, "'unrecognized trans' value " + std::to_string(trans) + "; use 0, 1 or 2"));
  const int64_t m = lu.shape().back();
  const bool vec = lu.ndim() == b.ndim() + 1;
  Array bb = b;
  if (vec) {
    if (b.ndim() < 1 || b.shape().back() != m)
      throw ValueError(op_message(
          kOp,
          "When LU decomposition matrix and b have the same number of dimensions, last axis "
          "of LU decomposition matrix (shape " +
              shape_str(lu.shape()) + ") and b array (shape " + shape_str(b.shape()) +
              ") must match"));
    bb = lax::expand_dims(b, {b.ndim()});
  } else if (b.ndim() < 2 || b.shape()[b.ndim() - 2] != m) {
    throw ValueError(op_message(
        kOp,
        "When LU decomposition matrix and b different numbers of dimensions, last axis of "
        "LU decomposition matrix (shape " +
            shape_str(lu.shape()) + ") and second to last axis of b array (shape " +
            shape_str(b.shape()) + ") must match"));
  }
  Shape batch = broadcast_batch(kOp, batch_of(lu.shape(), 2), batch_of(permutation.shape(), 1));
  batch = broadcast_batch(kOp, batch, batch_of(bb.shape(), 2));
  Array x = lu_solve_core(
      bcast(lu, concat_shape(batch, {m, m})), bcast(permutation, concat_shape(batch, {m})),
      bcast(bb,
            concat_shape(batch, batch_of(bb.shape(), 0).size() >= 2
                                    ? Shape{bb.shape()[bb.ndim() - 2], bb.shape()[bb.ndim() - 1]}
                                    : Shape{})),
      trans);
  return vec ? lax::squeeze(x, {x.ndim() - 1}) : x;
}

Array solve(const Array& a, const Array& b) {
  check_defined("solve", {&a, &b});
  return lax_solve("solve", a, b, solve_lu_custom);
}

}  // namespace lax::linalg

// ============================================================== jnp.linalg
namespace linalg {

Array solve(const Array& a0, const Array& b0) {
  constexpr const char* kOp = "jnp.linalg.solve";
  check_defined(kOp, {&a0, &b0});
  auto ab = promote2(kOp, a0, b0);
  const Array& a = ab[0];
  const Array& b = ab[1];
  if (a.ndim() < 2)
    throw ValueError(op_message(kOp,
                                "left hand array must be at least two dimensional; got "
                                "a.shape=" +
                                    shape_str(a.shape())));
  const int64_t r = a.ndim();
  if (b.ndim() > 1 && r == b.ndim() + 1 && a.shape()[r - 1] == b.shape().back() &&
      a.shape()[r - 1] != b.shape()[b.ndim() - 2])
    throw ValueError(op_message(
        kOp, "Invalid shapes for solve: " + shape_str(a.shape()) + ", " + shape_str(b.shape()) +
                 ". Prior to JAX v0.5.0, this would have been treated as a batched 1-dimensional "
                 "solve. To recover this behavior, use solve(a, b[..., None]).squeeze(-1)."));
  const int64_t m = a.shape()[r - 1];
  if (a.shape()[r - 2] != m || b.ndim() < 1 ||
      (b.ndim() == 1 ? b.shape()[0] != m : b.shape()[b.ndim() - 2] != m))
    throw ValueError(op_message(kOp,
                                "The arguments to solve must have shapes a=[..., m, m] and "
                                "b=[..., m, k] or b=[..., m]; got a=" +
                                    shape_str(a.shape()) + " and b=" + shape_str(b.shape())));
  if (b.ndim() == 1) {
    Array bb = bcast(lax::reshape(b, {m, 1}), concat_shape(batch_of(a.shape(), 2), {m, 1}));
    Array x = solve_lu_custom(a, bb);
    return lax::squeeze(x, {x.ndim() - 1});
  }
  const Shape batch = broadcast_batch(kOp, batch_of(a.shape(), 2), batch_of(b.shape(), 2));
  return solve_lu_custom(bcast(a, concat_shape(batch, {m, m})),
                         bcast(b, concat_shape(batch, {m, b.shape().back()})));
}

Array inv(const Array& a0) {
  constexpr const char* kOp = "jnp.linalg.inv";
  check_defined(kOp, {&a0});
  Array a = promote1(kOp, a0);
  check_square(kOp, a,
               "Argument to inv must have shape [..., n, n], got " + shape_str(a.shape()) + ".");
  const int64_t n = a.shape().back();
  return solve_lu_custom(a, bcast(tnp::eye(n, std::nullopt, 0, a.dtype()), a.shape()));
}

namespace {

// (sign, log|det|) from an LU factorization (no custom rule).
std::pair<Array, Array> slogdet_from_lu(const Array& lu, const Array& piv) {
  const DType dt = lu.dtype();
  const int64_t n = lu.shape().back();
  Array diag = tnp::diagonal(lu, 0, -2, -1);
  Array zero = tnp::zeros({}, dt);
  Array is_zero = tnp::any(lax::eq(diag, bcast(zero, diag.shape())), -1);
  Array iota = bcast(lax::iota(DType::kInt32, n), piv.shape());
  Array swaps = lax::reduce_sum(lax::convert_element_type(lax::ne(piv, iota), DType::kInt32),
                                {piv.ndim() - 1});
  Array negs = lax::reduce_sum(
      lax::convert_element_type(lax::lt(diag, bcast(zero, diag.shape())), DType::kInt32),
      {diag.ndim() - 1});
  Array parity =
      lax::rem(lax::add(swaps, negs), bcast(tnp::full({}, 2, DType::kInt32), swaps.shape()));
  // 1 - 2·parity
  Array sign = lax::convert_element_type(
      lax::sub(bcast(tnp::full({}, 1, DType::kInt32), parity.shape()), lax::add(parity, parity)),
      dt);
  sign = tnp::where(is_zero, tnp::zeros({}, dt), sign);
  Array logdet = tnp::sum(lax::log(lax::abs(diag)), -1);
  logdet = tnp::where(is_zero, tnp::full({}, -INFINITY, dt), logdet);
  return {sign, logdet};
}

std::pair<Array, Array> slogdet_lu(const Array& a) {
  auto [lu, piv, perm] = lax::linalg::lu(a);
  return slogdet_from_lu(lu, piv);
}

// JAX's cofactor solve: (det(a), det(a)·a⁻¹·b), finite also for singular a of rank n-1.
std::pair<Array, Array> cofactor_solve(const Array& a, const Array& b) {
  const int64_t n = a.shape().back();
  const DType dt = a.dtype();
  auto [lu, piv, perm] = lax::linalg::lu(a);
  Array diag = tnp::diagonal(lu, 0, -2, -1);
  Array iota = bcast(lax::iota(DType::kInt32, n), piv.shape());
  Array parity = lax::reduce_sum(lax::convert_element_type(lax::ne(piv, iota), DType::kInt32),
                                 {piv.ndim() - 1});
  Array one_i = bcast(tnp::full({}, 1, DType::kInt32), parity.shape());
  Array sign =
      lax::convert_element_type(lax::sub(one_i, lax::add(lax::rem(parity, lax::add(one_i, one_i)),
                                                         lax::rem(parity, lax::add(one_i, one_i)))),
                                dt);
  // partial_det[..., j] = sign · prod(diag[..., :j+1]).
  Array partial =
      lax::mul(lax::cumprod(diag, diag.ndim() - 1), lax::broadcast_in_dim(sign, diag.shape(), [&] {
                 std::vector<int64_t> d(static_cast<size_t>(sign.ndim()));
                 std::iota(d.begin(), d.end(), 0);
                 return d;
               }()));
  Array full_det = lax::index_in_dim(partial, n - 1, partial.ndim() - 1, false);
  if (n == 1) {
    // det(a)·a⁻¹ = 1 for a 1x1 matrix.
    return {full_det, b};
  }
  Array pre_det = lax::index_in_dim(partial, n - 2, partial.ndim() - 1, false);
  // lu[..., -1, -1] = 1 / pre_det.
  Array corner = lax::div(bcast(tnp::ones({}, dt), pre_det.shape()), pre_det);
  Shape cs = corner.shape();
  cs.push_back(1);
  cs.push_back(1);
  std::vector<Array> starts;
  for (int64_t d = 0; d < lu.ndim(); ++d)
    starts.push_back(tnp::full({}, d >= lu.ndim() - 2 ? n - 1 : 0, DType::kInt32));
  Array lu2 = lax::dynamic_update_slice(lu, lax::reshape(corner, cs), starts);
  // Matrices that are not of full rank after the corner change: zero results.
  Array dcol =
      lax::linalg::triangular_solve(lu2, tnp::ones(batch_of(b.shape(), 1), dt), true, false);
  Array bad = tnp::any(tnp::logical_not(tnp::isfinite(dcol)), -1);
  Shape bs = bad.shape();
  bs.push_back(1);
  bs.push_back(1);
  Array badm = bcast(lax::reshape(bad, bs), b.shape());
  Array zeros = tnp::zeros_like(b);
  Array x = tnp::where(badm, zeros, b);
  x = take_rows(x, perm);
  x = lax::linalg::triangular_solve(lu2, x, true, true, false, false, true);
  // Scale all rows but the last by det(a).
  Shape fs = full_det.shape();
  fs.push_back(1);
  fs.push_back(1);
  Array scale_rows = tnp::concatenate(
      {bcast(lax::reshape(full_det, fs), concat_shape(batch_of(full_det.shape(), 0), {n - 1, 1})),
       tnp::ones(concat_shape(full_det.shape(), {1, 1}), dt)},
      -2);
  x = lax::mul(x, bcast(scale_rows, x.shape()));
  x = lax::linalg::triangular_solve(lu2, x, true, false);
  x = tnp::where(badm, zeros, x);
  return {full_det, x};
}

Array det_primal(const Array& a) {
  auto [sign, logdet] = slogdet_lu(a);
  return lax::mul(sign, lax::exp(logdet));
}

Array det_custom(const Array& a) {
  static const auto f = custom_jvp([](const Array& x) {
                          return det_primal(x);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& x = std::get<0>(primals);
    const Array& g = std::get<0>(tangents);
    auto [y, z] = cofactor_solve(x, g);
    return std::make_pair(y, tnp::trace(z, 0, -2, -1));
  });
  return f(a);
}

std::pair<Array, Array> slogdet_custom(const Array& a) {
  static const auto f = custom_jvp([](const Array& x) {
                          return slogdet_lu(x);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& x = std::get<0>(primals);
    const Array& g = std::get<0>(tangents);
    auto [lu, piv, perm] = lax::linalg::lu(x);
    auto [sign, logdet] = slogdet_from_lu(lu, piv);
    Array t = tnp::trace(lu_solve_core(lu, perm, g, 0), 0, -2, -1);
    return std::make_pair(std::make_pair(sign, logdet), std::make_pair(tnp::zeros_like(sign), t));
  });
  return f(a);
}

}  // namespace

Array det(const Array& a0) {
  constexpr const char* kOp = "jnp.linalg.det";
  check_defined(kOp, {&a0});
  Array a = promote1(kOp, a0);
  check_square(kOp, a, "Argument to _det must be a square matrix, got " + shape_str(a.shape()));
  if (a.shape().back() == 0) return tnp::ones(batch_of(a.shape(), 2), a.dtype());
  return det_custom(a);
}

std::pair<Array, Array> slogdet(const Array& a0) {
  constexpr const char* kOp = "jnp.linalg.slogdet";
  check_defined(kOp, {&a0});
  Array a = promote1(kOp, a0);
  check_square(kOp, a,
               "Argument to slogdet() must have shape [..., n, n], got " + shape_str(a.shape()));
  if (a.shape().back() == 0)
    return {tnp::ones(batch_of(a.shape(), 2), a.dtype()),
            tnp::zeros(batch_of(a.shape(), 2), a.dtype())};
  return slogdet_custom(a);
}

Array matrix_power(const Array& a0, int64_t n) {
  constexpr const char* kOp = "jnp.linalg.matrix_power";
  check_defined(kOp, {&a0});
  Array a = a0;
  if (a.ndim() < 2)
    throw TypeError(op_message(kOp, std::to_string(a.ndim()) +
                                        "-dimensional array given. Array must be at least "
                                        "two-dimensional"));
  if (a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    throw ValueError(op_message(kOp, "Last 2 dimensions of the array must be square"));
  if (n == 0) return bcast(tnp::eye(a.shape().back(), std::nullopt, 0, a.dtype()), a.shape());
  if (n < 0) {
    a = inv(a);
    n = -n;
  }
  Array result;
  Array z = a;
  bool have = false;
  while (n > 0) {
    if (n & 1) {
      result = have ? tnp::matmul(result, z) : z;
      have = true;
    }
    n >>= 1;
    if (n > 0) z = tnp::matmul(z, z);
  }
  return result;
}

Array multi_dot(const std::vector<Array>& arrays) {
  constexpr const char* kOp = "jnp.linalg.multi_dot";
  if (arrays.size() < 2) throw ValueError(op_message(kOp, "Expecting at least two arrays."));
  for (const Array& x : arrays) check_defined(kOp, {&x});
  for (size_t i = 0; i < arrays.size(); ++i) {
    const int64_t r = arrays[i].ndim();
    const bool end = i == 0 || i + 1 == arrays.size();
    if (!(r == 2 || (end && r == 1)))
      throw ValueError(op_message(kOp, "array " + std::to_string(i) + " has shape " +
                                           shape_str(arrays[i].shape()) +
                                           "; multi_dot takes 2-D arrays (the first and last may "
                                           "be 1-D)"));
  }
  // 1-D ends become a row / a column; the product order minimizing scalar multiplications
  // (the matrix-chain dynamic program, as NumPy's and JAX's multi_dot).
  std::vector<Array> xs = arrays;
  const bool row = xs.front().ndim() == 1, col = xs.back().ndim() == 1;
  if (row) xs.front() = lax::reshape(xs.front(), {1, xs.front().shape()[0]});
  if (col) xs.back() = lax::reshape(xs.back(), {xs.back().shape()[0], 1});
  const size_t n = xs.size();
  for (size_t i = 0; i + 1 < n; ++i)
    if (xs[i].shape()[1] != xs[i + 1].shape()[0])
      throw ValueError(op_message(kOp, "shapes " + shape_str(arrays[i].shape()) + " and " +
                                           shape_str(arrays[i + 1].shape()) + " not aligned"));
  std::vector<double> p(n + 1);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<double>(xs[i].shape()[0]);
  p[n] = static_cast<double>(xs[n - 1].shape()[1]);
  std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0.0));
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  for (size_t len = 1; len < n; ++len)
    for (size_t i = 0; i + len < n; ++i) {
      const size_t j = i + len;
      cost[i][j] = INFINITY;
      for (size_t k = i; k < j; ++k) {
        const double c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = k;
        }
      }
    }
  std::function<Array(size_t, size_t)> prod = [&](size_t i, size_t j) -> Array {
    if (i == j) return xs[i];
    return tnp::matmul(prod(i, split[i][j]), prod(split[i][j] + 1, j));
  };
  Array r = prod(0, n - 1);
  if (row && col) return lax::reshape(r, {});
  if (row) return lax::reshape(r, {r.shape()[1]});
  if (col) return lax::reshape(r, {r.shape()[0]});
  return r;
}

Array tensorsolve(const Array& a0, const Array& b0,
                  const std::optional<std::vector<int64_t>>& axes) {
  constexpr const char* kOp = "jnp.linalg.tensorsolve";
  check_defined(kOp, {&a0, &b0});
  auto ab = promote2(kOp, a0, b0);
  Array a = ab[0];
  const Array& b = ab[1];
  const int64_t an = a.ndim();
  if (axes) {
    std::vector<int64_t> all(static_cast<size_t>(an));
    std::iota(all.begin(), all.end(), 0);
    std::vector<int64_t> moved;
    for (int64_t k : *axes) {
      const int64_t kk = k < 0 ? k + an : k;
      auto it = std::find(all.begin(), all.end(), kk);
      if (it == all.end())
        throw ValueError(op_message(kOp, "axis " + std::to_string(k) + " is not in range"));
      all.erase(it);
      moved.push_back(kk);
    }
    all.insert(all.end(), moved.begin(), moved.end());
    a = lax::transpose(a, all);
  }
  if (b.ndim() > an) throw ValueError(op_message(kOp, "b has more dimensions than a"));
  Shape out(a.shape().begin() + b.ndim(), a.shape().end());
  int64_t prod = 1;
  for (int64_t d : out) prod *= d;
  if (prod != b.size() || !std::equal(b.shape().begin(), b.shape().end(), a.shape().begin()))
    throw ValueError(
        op_message(kOp,
                   "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
                   "prod(a.shape[:b.ndim]); got a.shape=" +
                       shape_str(a.shape()) + " and b.shape=" + shape_str(b.shape())));
  Array x = solve(lax::reshape(a, {prod, prod}), lax::reshape(b, {prod}));
  return lax::reshape(x, out);
}

Array tensorinv(const Array& a0, int64_t ind) {
  constexpr const char* kOp = "jnp.linalg.tensorinv";
  check_defined(kOp, {&a0});
  Array a = promote1(kOp, a0);
  if (ind <= 0) throw ValueError(op_message(kOp, "ind must be a positive integer"));
  if (ind > a.ndim())
    throw ValueError(op_message(
        kOp, "ind=" + std::to_string(ind) + " exceeds a.ndim=" + std::to_string(a.ndim())));
  Shape contracting(a.shape().begin(), a.shape().begin() + ind);
  Shape rest(a.shape().begin() + ind, a.shape().end());
  int64_t p0 = 1, p1 = 1;
  for (int64_t d : contracting) p0 *= d;
  for (int64_t d : rest) p1 *= d;
  if (p0 != p1)
    throw ValueError(op_message(
        kOp,
        "tensorinv is only possible when the product of the first `ind` dimensions equals "
        "that of the remaining dimensions. got arr.shape=" +
            shape_str(a.shape()) + " with ind=" + std::to_string(ind) + "."));
  return lax::reshape(inv(lax::reshape(a, {p0, p1})), concat_shape(rest, contracting));
}

Array cholesky(const Array& a0, bool upper, bool symmetrize_input) {
  constexpr const char* kOp = "jnp.linalg.cholesky";
  check_defined(kOp, {&a0});
  Array l = lax::linalg::cholesky(promote1(kOp, a0), symmetrize_input);
  return upper ? mT(l) : l;
}

// ============================================================== jax.scipy.linalg
namespace scipy {

Array cholesky(const Array& a0, bool lower) {
  constexpr const char* kOp = "jax.scipy.linalg.cholesky";
  check_defined(kOp, {&a0});
  Array a = promote1(kOp, a0);
  if (a.ndim() < 2)
    throw ValueError(op_message(
        kOp, "cholesky requires a matrix of rank >= 2, got shape " + shape_str(a.shape())));
  Array l = lax::linalg::cholesky(lower ? a : mT(a), false);
  return lower ? l : mT(l);
}

std::pair<Array, bool> cho_factor(const Array& a, bool lower) {
  return {cholesky(a, lower), lower};
}

Array cho_solve(const std::pair<Array, bool>& c_and_lower, const Array& b0) {
  constexpr const char* kOp = "jax.scipy.linalg.cho_solve";
  check_defined(kOp, {&c_and_lower.first, &b0});
  auto cb = promote2(kOp, c_and_lower.first, b0);
  check_solve_shapes(kOp, cb[0], cb[1]);
  const bool lower = c_and_lower.second;
  return cho_solve_core(cb[0], cb[1], lower);
}

std::pair<Array, Array> lu_factor(const Array& a0) {
  constexpr const char* kOp = "jax.scipy.linalg.lu_factor";
  check_defined(kOp, {&a0});
  auto [lu, piv, perm] = lax::linalg::lu(promote1(kOp, a0));
  return {lu, piv};
}

Array lu_solve(const std::pair<Array, Array>& lu_and_piv, const Array& b0, int trans) {
  constexpr const char* kOp = "jax.scipy.linalg.lu_solve";
  check_defined(kOp, {&lu_and_piv.first, &lu_and_piv.second, &b0});
  auto lb = promote2(kOp, lu_and_piv.first, b0);
  const int64_t m = lb[0].shape()[lb[0].ndim() - 2];
  Array perm = lax::linalg::lu_pivots_to_permutation(lu_and_piv.second, m);
  return lax::linalg::lu_solve(lb[0], perm, lb[1], trans);
}

std::vector<Array> lu(const Array& a0, bool permute_l) {
  constexpr const char* kOp = "jax.scipy.linalg.lu";
  check_defined(kOp, {&a0});
  Array a = promote1(kOp, a0);
  auto [lu_, piv, perm] = lax::linalg::lu(a);
  const DType dt = a.dtype();
  const int64_t r = a.ndim();
  const int64_t m = a.shape()[r - 2], n = a.shape()[r - 1], k = std::min(m, n);
  Shape ps = perm.shape();
  ps.push_back(m);
  std::vector<int64_t> dims(static_cast<size_t>(perm.ndim()));
  std::iota(dims.begin(), dims.end(), 0);
  // q[..., i, j] = (perm[i] == j): q·a = l·u, so p = qᵀ.
  Array q =
      lax::convert_element_type(lax::eq(lax::broadcast_in_dim(perm, ps, dims),
                                        lax::broadcasted_iota(DType::kInt32, ps, perm.ndim())),
                                dt);
  Array p = mT(q);
  std::vector<int64_t> st(static_cast<size_t>(r), 0);
  Shape lim_l = a.shape(), lim_u = a.shape();
  lim_l[r - 1] = k;
  lim_u[r - 2] = k;
  Array l = tnp::tril(lax::slice(lu_, st, lim_l), -1);
  l = lax::add(l, bcast(tnp::eye(m, k, 0, dt), l.shape()));
  Array u = tnp::triu(lax::slice(lu_, st, lim_u));
  if (permute_l) return {tnp::matmul(p, l), u};
  return {p, l, u};
}

Array solve_triangular(const Array& a0, const Array& b0, int trans, bool lower,
                       bool unit_diagonal) {
  constexpr const char* kOp = "jax.scipy.linalg.solve_triangular";
  check_defined(kOp, {&a0, &b0});
  if (trans < 0 || trans > 2)
    throw ValueError(op_message(kOp, "Invalid 'trans' value " + std::to_string(trans)));
  auto ab = promote2(kOp, a0, b0);
  const bool vec = ab[0].ndim() == ab[1].ndim() + 1;
  Array b = vec ? lax::expand_dims(ab[1], {ab[1].ndim()}) : ab[1];
  Array x =
      lax::linalg::triangular_solve(ab[0], b, true, lower, trans != 0, trans == 2, unit_diagonal);
  return vec ? lax::squeeze(x, {x.ndim() - 1}) : x;
}

Array solve(const Array& a0, const Array& b0, bool lower, const std::string& assume_a) {
  constexpr const char* kOp = "jax.scipy.linalg.solve";
  check_defined(kOp, {&a0, &b0});
  if (assume_a != "gen" && assume_a != "sym" && assume_a != "her" && assume_a != "pos")
    throw ValueError(op_message(kOp,
                                "Expected assume_a to be one of ['gen', 'sym', 'her', "
                                "'pos']; got '" +
                                    assume_a + "'"));
  auto ab = promote2(kOp, a0, b0);
  if (assume_a != "pos") return lax_solve(kOp, ab[0], ab[1], solve_lu_custom);
  return lax_solve(kOp, ab[0], ab[1], [lower](const Array& a, const Array& b) {
    return solve_cho_custom(a, b, lower);
  });
}

Array inv(const Array& a) { return linalg::inv(a); }
Array det(const Array& a) { return linalg::det(a); }

}  // namespace scipy
}  // namespace linalg
}  // namespace tessera
