// Shared pieces of the solve-family linear-algebra primitives (linalg_util.h).
#include "prims/linalg_util.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/thread_pool.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/tangents.h"

namespace tessera::prims::linalg {

int64_t batch_count(const Shape& s) {
  int64_t n = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i) n *= s[i];
  return n;
}

void check_float_matrix(const char* op, const Aval& a, const char* what) {
  if (a.ndim() < 2)
    throw TypeError(op_message(op, std::string(op) + " requires " + what +
                                       ".ndim to be at least 2, got " + std::to_string(a.ndim()) +
                                       " (shape " + shape_str(a.shape) + ")."));
  if (a.dtype != DType::kFloat32 && a.dtype != DType::kFloat64)
    throw TypeError(op_message(
        op, std::string(op) + " requires a float32 or float64 " + what + ", got " +
                std::string(dtype_name(a.dtype)) +
                " (complex64/complex128 are not Tessera dtypes; convert integers and half "
                "floats with convert_element_type, or use the jnp.linalg wrappers, which "
                "promote)."));
}

void for_each_matrix(int64_t batch, double flops, const std::function<void(int64_t)>& fn) {
  if (batch <= 0) return;
  // About 2^17 flops per chunk pays for waking a worker.
  const int64_t grain =
      std::clamp<int64_t>(static_cast<int64_t>((1 << 17) / std::max(1.0, flops)), 1, batch);
  runtime::parallel_for(batch, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) fn(i);
  });
}

void for_each_group(int64_t batch, int64_t group, double flops,
                    const std::function<void(int64_t, int64_t)>& fn) {
  if (batch <= 0) return;
  const int64_t groups = (batch + group - 1) / group;
  const int64_t grain = std::clamp<int64_t>(
      static_cast<int64_t>((1 << 17) / std::max(1.0, flops * static_cast<double>(group))), 1,
      groups);
  runtime::parallel_for(groups, grain, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) fn(g * group, std::min(group, batch - g * group));
  });
}

void check_lapack_info(const char* op, const char* routine, int64_t info) {
  if (info < 0)
    throw InternalError(op_message(op, std::string(routine) + " rejected argument " +
                                           std::to_string(-info) + " (a bug in Tessera)"));
}

Array swap_last2(const Array& x) {
  const int64_t r = x.ndim();
  std::vector<int64_t> perm(static_cast<size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[r - 1], perm[r - 2]);
  return lax::transpose(x, perm);
}

Array matmul(const Array& a, const Array& b) {
  const int64_t r = a.ndim();
  std::vector<int64_t> batch(static_cast<size_t>(r - 2));
  std::iota(batch.begin(), batch.end(), 0);
  return lax::dot_general(a, b, lax::DotDimensionNumbers{{r - 1}, {r - 2}, batch, batch});
}

Array tri(const Array& x, bool lower, int64_t k) {
  const int64_t r = x.ndim();
  const Shape s = x.shape();
  Array i = lax::broadcasted_iota(DType::kInt32, s, r - 2);
  Array j = lax::broadcasted_iota(DType::kInt32, s, r - 1);
  Array ik = lax::add(i, trace::scalar_const(static_cast<double>(k), DType::kInt32));
  Array keep = lower ? lax::le(j, ik) : lax::ge(j, ik);
  return lax::select_n(keep, {trace::full_like_aval(Aval{s, x.dtype(), false}, 0.0), x});
}

Array identity(int64_t n, DType dt) {
  Array i = lax::broadcasted_iota(DType::kInt32, Shape{n, n}, 0);
  Array j = lax::broadcasted_iota(DType::kInt32, Shape{n, n}, 1);
  return lax::convert_element_type(lax::eq(i, j), dt);
}

Array trsolve(const Array& a, const Array& b, bool left_side, bool lower, bool transpose_a,
              bool unit_diagonal) {
  return tessera::bind(triangular_solve_p, {a, b},
                       Params{{"left_side", left_side},
                              {"lower", lower},
                              {"transpose_a", transpose_a},
                              {"conjugate_a", false},
                              {"unit_diagonal", unit_diagonal}})[0];
}

}  // namespace tessera::prims::linalg
