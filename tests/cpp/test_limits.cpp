// Issue #12, class 1 and 3 (core side): sizes computed from user shapes never wrap around, ranks
// are capped at kMaxRank, and the memory limit cannot be bypassed by a huge request.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/allocator.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tnp = tessera::numpy;
namespace lax = tessera::lax;
using namespace tessera;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedArithmetic, MulAndAddThrowOnOverflowOnly) {
  EXPECT_EQ(checked_mul("t", int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(checked_add("t", kMax - 1, 1), kMax);
  EXPECT_ERROR(ValueError, checked_mul("pad", int64_t{1} << 62, 4, "interior"), "[pad] interior");
  EXPECT_ERROR(ValueError, checked_add("concatenate", kMax, 1), "overflows");
  EXPECT_ERROR(ValueError, checked_mul("t", kMin, -1), "overflows");
  // Generated: random pairs agree with 128-bit arithmetic.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const int64_t a = static_cast<int64_t>(rng()) >> (rng() % 63);
    const int64_t b = static_cast<int64_t>(rng()) >> (rng() % 63);
    const __int128 p = static_cast<__int128>(a) * b, s = static_cast<__int128>(a) + b;
    const bool p_fits = p >= kMin && p <= kMax, s_fits = s >= kMin && s <= kMax;
    if (p_fits)
      EXPECT_EQ(checked_mul("t", a, b), static_cast<int64_t>(p));
    else
      EXPECT_THROW(checked_mul("t", a, b), ValueError);
    if (s_fits)
      EXPECT_EQ(checked_add("t", a, b), static_cast<int64_t>(s));
    else
      EXPECT_THROW(checked_add("t", a, b), ValueError);
  }
}

TEST(CheckShape, ElementCountsNeverWrap) {
  // The issue's examples: (2^40, 2^40) had size 0; (2^62, 4) wrapped to 0 elements.
  EXPECT_ERROR(ValueError, shape_size({int64_t{1} << 40, int64_t{1} << 40}), "overflows int64");
  EXPECT_ERROR(ValueError, shape_size({int64_t{1} << 62, 4}), "overflows int64");
  EXPECT_EQ(shape_size({0, int64_t{1} << 40, int64_t{1} << 40}), 0);
  EXPECT_ERROR(ValueError, check_shape("zeros", {int64_t{1} << 62, 4}, 4), "[zeros] shape");
  EXPECT_ERROR(ValueError, check_shape("zeros", {int64_t{1} << 40, int64_t{1} << 40}, 4),
               "too large");
  // As NumPy: zero dimensions do not excuse the others (strides stay bounded).
  EXPECT_ERROR(ValueError, check_shape("zeros", {0, int64_t{1} << 62, int64_t{1} << 62}, 4),
               "too large");
  EXPECT_ERROR(ValueError, check_shape("zeros", {int64_t{1} << 61}, 4), "2^62 bytes");
  EXPECT_NO_THROW(check_shape("zeros", {int64_t{1} << 60}, 4));
  EXPECT_ERROR(ValueError, check_shape("reshape", {3, -1}, 4), "negative dimensions");
  // Generated: random shapes are accepted exactly when the byte count fits.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5000; ++i) {
    Shape s(rng() % 6);
    for (auto& d : s) d = static_cast<int64_t>(rng() >> (rng() % 64)) & kMax;
    const size_t item = size_t{1} << (rng() % 4);
    __int128 bytes = item;
    bool big = false;
    for (int64_t d : s) {
      if (d == 0) continue;
      bytes *= d;  // < 2^62 * 2^63: fits; stop once past the limit
      if (bytes > (static_cast<__int128>(1) << 62)) {
        big = true;
        break;
      }
    }
    if (big)
      EXPECT_THROW(check_shape("t", s, item), ValueError) << shape_str(s);
    else
      EXPECT_NO_THROW(check_shape("t", s, item)) << shape_str(s);
  }
}

TEST(CheckShape, RankIsCappedAtNumPysLimit) {
  EXPECT_NO_THROW(check_shape("t", Shape(kMaxRank, 1)));
  EXPECT_ERROR(ValueError, check_shape("t", Shape(kMaxRank + 1, 1)), "at most 64 dimensions");
  // A huge rank is named without printing every dimension.
  try {
    check_shape("load_npy", Shape(20000, 1));
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 20000"), std::string::npos);
  }
  // Ops that build shapes refuse them too: a reshape to rank 65 and a broadcast to rank 65.
  Array x = tnp::ones({1});
  EXPECT_ERROR(ValueError, tnp::reshape(x, Shape(kMaxRank + 1, 1)), "at most 64 dimensions");
  EXPECT_ERROR(ValueError, tnp::zeros(Shape(kMaxRank + 1, 1)), "at most 64 dimensions");
  // Rank 64 works end to end, printing included.
  Array y = tnp::reshape(x, Shape(kMaxRank, 1));
  EXPECT_EQ(y.ndim(), kMaxRank);
  EXPECT_FALSE(y.str().empty());
}

TEST(CheckShape, IssueExamplesRaiseTypedErrors) {
  EXPECT_ERROR(ValueError, lax::iota(DType::kInt32, int64_t{1} << 62), "[iota]");
  EXPECT_ERROR(ValueError, tnp::zeros({int64_t{1} << 40, int64_t{1} << 40}), "too large");
  EXPECT_ERROR(ValueError, tnp::zeros({int64_t{1} << 62, 4}), "too large");
  // Under make_jaxpr too: abstract evaluation checks the result avals.
  auto f = [](const Array& a) { return tnp::add(a, lax::iota(DType::kFloat32, int64_t{1} << 62)); };
  EXPECT_THROW(make_jaxpr(f)(tnp::ones({1})), ValueError);
}

TEST(Allocator, HugeRequestsRaiseOutOfMemoryAndCannotBypassTheLimit) {
  CachingCpuAllocator a("cpu:test");
  EXPECT_ERROR(OutOfMemoryError, a.allocate(std::numeric_limits<size_t>::max(), "zeros"),
               "[zeros] out of memory");
  EXPECT_ERROR(OutOfMemoryError, a.allocate((size_t{1} << 62) + 1, "zeros"), "2^62");
  a.set_limit(int64_t{1} << 20);
  void* p = a.allocate(1024, "t");
  // in_use + request used to wrap around for requests near 2^63 and pass the limit.
  for (size_t n :
       {size_t{1} << 62, (size_t{1} << 62) - 1024, (size_t{1} << 61) + 17, size_t{1} << 21}) {
    EXPECT_THROW(a.allocate(n, "t"), OutOfMemoryError) << n;
  }
  a.deallocate(p, 1024);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
}

TEST(Allocator, SizeThatFitsButExceedsTheDeviceLimitIsOutOfMemory) {
  Device* d = default_device();
  const int64_t old = d->memory_stats().bytes_limit;
  d->set_memory_limit(int64_t{64} << 20);
  EXPECT_ERROR(OutOfMemoryError, lax::iota(DType::kInt32, int64_t{1} << 30),
               "[iota] out of memory");
  EXPECT_ERROR(OutOfMemoryError, tnp::zeros({int64_t{1} << 15, int64_t{1} << 15}), "out of memory");
  d->set_memory_limit(old);
  EXPECT_EQ(tnp::sum(lax::iota(DType::kInt32, 10)).item<int32_t>(), 45);
}

}  // namespace
