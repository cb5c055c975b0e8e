// tessera::ops' segment reductions against naive float64 loops written here, on fresh random data
// with repeated, missing and out-of-range ids (dropped, negative ones not wrapped); every dtype
// family's identity (empty segments read 0, 1, the lowest, the highest value); num_segments from
// concrete ids; gradients against float64 central differences; vmap against a loop; jit against
// eager; the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/ops.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;

enum class R { kSum, kProd, kMax, kMin };

std::vector<double> naive(R r, const std::vector<double>& d, const std::vector<int64_t>& ids,
                          int64_t n, int64_t row) {
  const double init = r == R::kSum    ? 0.0
                      : r == R::kProd ? 1.0
                      : r == R::kMax  ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity();
  std::vector<double> out(static_cast<size_t>(n * row), init);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= n) continue;
    for (int64_t j = 0; j < row; ++j) {
      double& o = out[static_cast<size_t>(ids[i] * row + j)];
      const double v = d[i * static_cast<size_t>(row) + static_cast<size_t>(j)];
      o = r == R::kSum    ? o + v
          : r == R::kProd ? o * v
          : r == R::kMax  ? std::max(o, v)
                          : std::min(o, v);
    }
  }
  return out;
}

Array apply(R r, const Array& d, const Array& ids, std::optional<int64_t> n) {
  switch (r) {
    case R::kSum:
      return ops::segment_sum(d, ids, n);
    case R::kProd:
      return ops::segment_prod(d, ids, n);
    case R::kMax:
      return ops::segment_max(d, ids, n);
    case R::kMin:
      return ops::segment_min(d, ids, n);
  }
  return {};
}

Array random_ids(int64_t count, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = static_cast<double>(u(testing::rng()));
  return lax::convert_element_type(numpy::array(v, {count}), DType::kInt32);
}

TEST(Segment, MatchesNaiveLoops) {
  for (R r : {R::kSum, R::kProd, R::kMax, R::kMin}) {
    for (Shape row : {Shape{}, Shape{3}, Shape{2, 2}}) {
      int64_t row_size = 1;
      for (int64_t s : row) row_size *= s;
      Shape ds{17};
      ds.insert(ds.end(), row.begin(), row.end());
      Array d = random_array(ds, DType::kFloat32, -1.5, 1.5);
      Array ids = random_ids(17, -2, 7);  // -2, -1 and 6, 7 fall outside num_segments = 6
      Array got = apply(r, d, ids, 6);
      Shape want_shape{6};
      want_shape.insert(want_shape.end(), row.begin(), row.end());
      ASSERT_EQ(got.shape(), want_shape);
      ASSERT_EQ(got.dtype(), DType::kFloat32);
      std::vector<int64_t> iv;
      for (double x : to_doubles(ids)) iv.push_back(static_cast<int64_t>(x));
      EXPECT_EQ(
          testing::compare(to_doubles(got), naive(r, to_doubles(d), iv, 6, row_size), 1e-5, 1e-6),
          "")
          << "reducer " << static_cast<int>(r);
    }
  }
}

TEST(Segment, NumSegmentsFromIdsAndIntegerIdentities) {
  testing::X64Scope x64(true);  // int64/uint64 data
  Array d = numpy::array(std::vector<double>{1, 2, 3, 4}, {4});
  Array ids =
      lax::convert_element_type(numpy::array(std::vector<double>{0, 3, 3, 1}, {4}), DType::kInt32);
  EXPECT_EQ(to_doubles(ops::segment_sum(d, ids)), (std::vector<double>{1, 4, 0, 5}));
  // Empty segments of integer reductions read the dtype's lowest/highest value exactly.
  Array di = lax::convert_element_type(d, DType::kUInt32);
  Array mx = ops::segment_max(di, ids);
  EXPECT_EQ(mx.dtype(), DType::kUInt32);
  EXPECT_EQ(mx.to_vector<uint32_t>(), (std::vector<uint32_t>{1, 4, 0, 3}));
  Array mn = ops::segment_min(lax::convert_element_type(d, DType::kInt64), ids);
  EXPECT_EQ(mn.to_vector<int64_t>()[2], std::numeric_limits<int64_t>::max());
  Array mn_u64 = ops::segment_min(lax::convert_element_type(d, DType::kUInt64), ids, 5);
  EXPECT_EQ(mn_u64.to_vector<uint64_t>()[4], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(to_doubles(ops::segment_prod(d, ids, 2)), (std::vector<double>{1, 4}));
  // No ids: zero segments.
  Array none = ops::segment_sum(numpy::zeros({0, 2}), random_ids(0, 0, 0));
  EXPECT_EQ(none.shape(), (Shape{0, 2}));
}

TEST(Segment, GradientsVmapJit) {
  testing::X64Scope x64(true);
  Array d = random_array({9, 2}, DType::kFloat64, 0.5, 1.5);
  // Every segment non-empty (an empty max/min segment is -inf/+inf, and sin of it NaN).
  Array ids = numpy::concatenate(
      {lax::convert_element_type(numpy::array(std::vector<double>{3, 0, 2, 1}, {4}),
                                 DType::kInt32),
       random_ids(5, 0, 3)},
      0);
  // (segment_prod has no gradient with repeated ids: JAX's scatter_mul restriction.)
  for (R r : {R::kSum, R::kMax, R::kMin}) {
    auto f = [&](const Array& x) { return numpy::sum(lax::sin(apply(r, x, ids, 4))); };
    Array g = grad(f)(d);
    const auto xs = to_doubles(d), gs = to_doubles(g);
    for (size_t i = 0; i < xs.size(); ++i) {
      std::vector<double> p = xs, m = xs;
      p[i] += 1e-6;
      m[i] -= 1e-6;
      const double fd = (to_doubles(f(numpy::array(p, d.shape())))[0] -
                         to_doubles(f(numpy::array(m, d.shape())))[0]) /
                        2e-6;
      EXPECT_NEAR(gs[i], fd, 1e-6 * (1 + std::abs(fd))) << "element " << i;
    }
  }
  // vmap over a batch of data (ids shared) and over a batch of ids.
  Array db = random_array({4, 9, 2}, DType::kFloat64);
  Array ib = numpy::stack(
      {random_ids(9, 0, 3), random_ids(9, 0, 3), random_ids(9, 0, 3), random_ids(9, 0, 3)});
  std::vector<Array> loop_d, loop_i;
  for (int64_t b = 0; b < 4; ++b) {
    loop_d.push_back(ops::segment_sum(lax::index_in_dim(db, b, 0, false), ids, 4));
    loop_i.push_back(ops::segment_max(d, lax::index_in_dim(ib, b, 0, false), 4));
  }
  auto fd = [&](const Array& x) { return ops::segment_sum(x, ids, 4); };
  auto fi = [&](const Array& i) { return ops::segment_max(d, i, 4); };
  EXPECT_EQ(to_doubles(vmap(fd, {0})(db)), to_doubles(numpy::stack(loop_d)));
  EXPECT_EQ(to_doubles(vmap(fi, {0})(ib)), to_doubles(numpy::stack(loop_i)));
  auto fj = [&](const Array& x, const Array& i) { return ops::segment_min(x, i, 4); };
  EXPECT_EQ(to_doubles(jit(fj)(d, ids)), to_doubles(fj(d, ids)));
}

TEST(Segment, Errors) {
  Array d = random_array({4, 2}, DType::kFloat32);
  EXPECT_ERROR(TypeError, ops::segment_sum(d, random_array({4}, DType::kFloat32)), "integers");
  EXPECT_ERROR(ValueError, ops::segment_sum(d, random_ids(3, 0, 2)), "one id per row");
  EXPECT_ERROR(ValueError, ops::segment_sum(d, random_ids(4, 0, 2), -1), "non-negative");
  auto traced = [&](const Array& i) { return ops::segment_sum(d, i); };
  EXPECT_ERROR(ConcretizationError, jit(traced)(random_ids(4, 0, 2)), "num_segments must be given");
}

}  // namespace
}  // namespace tessera
