// lax::top_k against a stable descending sort (NaN the largest, -0 == +0, ties: lower index
// first) on fresh random rows with ties, NaNs and signed zeros, several dtypes and row lengths
// (threads on); its gradient (a scatter of the cotangent to the chosen indices) against float64
// central differences; vmap and jit; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tessera/lax_sort.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;

std::vector<int64_t> reference(const std::vector<double>& row, int64_t k) {
  std::vector<int64_t> idx(row.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  auto greater = [&](int64_t a, int64_t b) {
    const double x = row[a], y = row[b];
    if (std::isnan(x)) return !std::isnan(y);
    if (std::isnan(y)) return false;
    return x > y;
  };
  std::stable_sort(idx.begin(), idx.end(), greater);
  idx.resize(static_cast<size_t>(k));
  return idx;
}

TEST(TopK, MatchesAStableDescendingSort) {
  testing::Threads threads(2);
  for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kInt32, DType::kUInt8, DType::kBool}) {
    for (int64_t n : {1, 7, 300, 5000}) {
      const int64_t rows = 3;
      // Few distinct values: many ties; floats also get NaNs and both zeros.
      std::vector<double> v(static_cast<size_t>(rows * n));
      for (auto& x : v)
        x = static_cast<double>(std::uniform_int_distribution<int>(-3, 3)(testing::rng()));
      if (is_floating(dt))
        for (size_t i = 0; i < v.size(); i += 5)
          v[i] = (i % 3 == 0) ? NAN : (i % 3 == 1 ? -0.0 : 0.0);
      Array x = lax::convert_element_type(numpy::array(v, {rows, n}), dt);
      const auto xs = to_doubles(x);
      for (int64_t k : {int64_t{0}, int64_t{1}, std::min<int64_t>(n, 5), n}) {
        auto [vals, idx] = lax::top_k(x, k);
        ASSERT_EQ(vals.shape(), (Shape{rows, k}));
        ASSERT_EQ(idx.dtype(), DType::kInt32);
        const auto got_i = to_doubles(idx), got_v = to_doubles(vals);
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<double> row(xs.begin() + r * n, xs.begin() + (r + 1) * n);
          const auto want = reference(row, k);
          for (int64_t j = 0; j < k; ++j) {
            ASSERT_EQ(got_i[r * k + j], static_cast<double>(want[j]))
                << dtype_name(dt) << " n " << n << " k " << k << " row " << r << " j " << j;
            const double w = row[want[j]], g = got_v[r * k + j];
            ASSERT_TRUE((std::isnan(w) && std::isnan(g)) || w == g);
          }
        }
      }
    }
  }
}

TEST(TopK, GradientMatchesFiniteDifferences) {
  testing::X64Scope x64;
  Array x = random_array({4, 9}, DType::kFloat64);
  Array w = random_array({4, 3}, DType::kFloat64);
  auto f = [&](const Array& a) { return numpy::sum(lax::mul(lax::top_k(a, 3).first, w)); };
  const auto g = to_doubles(grad(f)(x));
  const auto xs = to_doubles(x);
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> p = xs, m = xs;
    p[i] += h;
    m[i] -= h;
    const double fd =
        (to_doubles(f(numpy::array(p, {4, 9})))[0] - to_doubles(f(numpy::array(m, {4, 9})))[0]) /
        (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-7) << i;
  }
}

TEST(TopK, VmapJitAndErrors) {
  Array x = random_array({3, 4, 6}, DType::kFloat32);
  auto f = [](const Array& a) { return lax::top_k(a, 2).first; };
  std::vector<Array> loop;
  for (int64_t b = 0; b < 6; ++b) loop.push_back(f(lax::index_in_dim(x, b, 2, false)));
  EXPECT_EQ(to_doubles(vmap(f, {2})(x)), to_doubles(numpy::stack(loop)));
  EXPECT_EQ(to_doubles(jit(f)(x)), to_doubles(f(x)));
  EXPECT_ERROR(ValueError, lax::top_k(x, 7), "no larger than minor dimension");
  EXPECT_ERROR(ValueError, lax::top_k(x, -1), "nonnegative");
  EXPECT_ERROR(TypeError, lax::top_k(numpy::scalar(1.0, DType::kFloat32), 1), ">= 1 dimension");
}

}  // namespace
}  // namespace tessera
