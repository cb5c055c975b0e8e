// Structural primitives and reductions: broadcast_in_dim, reshape, transpose, iota, reduce_sum,
// reduce_max. Fresh random inputs against plain double-precision reference loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "prims/prims.h"
#include "runtime/thread_pool.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;

using testing::kAllDTypes;
const DType kNumericDTypes[] = {DType::kInt8,     DType::kInt16,   DType::kInt32,
                                DType::kInt64,    DType::kUInt8,   DType::kUInt16,
                                DType::kUInt32,   DType::kUInt64,  DType::kFloat16,
                                DType::kBFloat16, DType::kFloat32, DType::kFloat64};

using testing::Threads;

// Calls f(index) for every multi-index of shape, in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const int64_t n = shape_size(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(idx);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

int64_t flat(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

// Raw bytes equal (bitwise comparison, NaN-safe).
bool same_bytes(const Array& a, const Array& b) {
  return a.aval() == b.aval() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

Shape random_shape(int rank, int64_t max_dim) {
  std::uniform_int_distribution<int64_t> d(1, max_dim);
  Shape s(rank);
  for (auto& v : s) v = d(rng());
  return s;
}

// ---------------------------------------------------------------- broadcast_in_dim

std::vector<double> ref_broadcast(const Array& x, const Shape& shape,
                                  const std::vector<int64_t>& bd) {
  const std::vector<double> xv = to_doubles(x);
  std::vector<double> out;
  for_each_index(shape, [&](const std::vector<int64_t>& oi) {
    std::vector<int64_t> ii(x.ndim());
    for (int64_t i = 0; i < x.ndim(); ++i) ii[i] = x.shape()[i] == 1 ? 0 : oi[bd[i]];
    out.push_back(xv[flat(x.shape(), ii)]);
  });
  return out;
}

struct BroadcastCase {
  Shape in, out;
  std::vector<int64_t> bd;
};

TEST(BroadcastInDim, MatchesReferenceAcrossDTypes) {
  const BroadcastCase cases[] = {
      {{}, {3, 4}, {}},
      {{}, {}, {}},
      {{3}, {2, 3}, {1}},
      {{4}, {4, 3}, {0}},
      {{3, 1}, {3, 5}, {0, 1}},
      {{1, 5}, {3, 5}, {0, 1}},
      {{2, 1, 3}, {2, 4, 5, 3}, {0, 2, 3}},
      {{2, 3}, {7, 2, 3}, {1, 2}},
      {{1}, {6, 7}, {1}},
      {{5, 1, 1}, {5, 2, 3, 9}, {0, 2, 3}},
      {{0, 3}, {2, 0, 3}, {1, 2}},
      {{3}, {3, 0}, {0}},
  };
  for (DType dt : kAllDTypes) {
    for (const auto& c : cases) {
      Array x = random_array(c.in, dt);
      Array y = lax::broadcast_in_dim(x, c.out, c.bd);
      EXPECT_EQ(y.shape(), c.out);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(compare(to_doubles(y), ref_broadcast(x, c.out, c.bd), 0, 0), "")
          << dtype_name(dt) << " " << shape_str(c.in) << " -> " << shape_str(c.out);
    }
  }
}

TEST(BroadcastInDim, AddingUnitDimsSharesTheBuffer) {
  Array x = random_array({3, 4}, DType::kFloat32);
  Array y = lax::broadcast_in_dim(x, {3, 1, 4}, {0, 2});
  EXPECT_EQ(y.raw_data(), x.raw_data());
  EXPECT_EQ(compare(to_doubles(y), to_doubles(x), 0, 0), "");
  // lax.broadcast prepends dims.
  Array z = lax::broadcast(x, {2});
  EXPECT_EQ(z.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(compare(to_doubles(z), ref_broadcast(x, {2, 3, 4}, {1, 2}), 0, 0), "");
  // The identity on a concrete array returns the operand itself.
  EXPECT_TRUE(lax::broadcast_in_dim(x, {3, 4}, {0, 1}).is(x));
}

TEST(BroadcastInDim, LargeIsThreadCountIndependent) {
  for (auto [in, out, bd] :
       {BroadcastCase{{1000}, {3000, 1000}, {1}}, BroadcastCase{{3000, 1}, {3000, 1000}, {0, 1}},
        BroadcastCase{{7, 1, 300}, {7, 400, 300}, {0, 1, 2}}}) {
    Array x = random_array(in, DType::kFloat32);
    Array y1, y2;
    {
      Threads t(1);
      y1 = lax::broadcast_in_dim(x, out, bd);
    }
    {
      Threads t(2);
      y2 = lax::broadcast_in_dim(x, out, bd);
    }
    EXPECT_TRUE(same_bytes(y1, y2));
    EXPECT_EQ(compare(to_doubles(y2), ref_broadcast(x, out, bd), 0, 0), "");
  }
}

TEST(BroadcastInDim, ErrorsAsJax) {
  Array x = random_array({2, 3}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::broadcast_in_dim(x, {2, 3, 4}, {0}),
               "[broadcast_in_dim] broadcast_in_dim broadcast_dimensions must have length equal "
               "to operand ndim; got broadcast_dimensions (0,) for operand ndim 2.");
  EXPECT_ERROR(TypeError, lax::broadcast_in_dim(x, {3}, {0, 1}),
               "target broadcast shape must have equal or higher rank to the operand shape; got "
               "operand ndim 2 and target broadcast ndim 1.");
  EXPECT_ERROR(TypeError, lax::broadcast_in_dim(x, {2, 3}, {0, 2}),
               "broadcast_dimensions must be a subset of output dimensions, got (0, 2) for "
               "operand ndim 2 and shape (2, 3).");
  EXPECT_ERROR(TypeError, lax::broadcast_in_dim(x, {2, 4}, {0, 1}),
               "operand dimension sizes must either be 1, or be equal to their corresponding "
               "dimensions in the target broadcast shape; got operand of shape (2, 3), target "
               "broadcast shape (2, 4), broadcast_dimensions (0, 1)");
  EXPECT_ERROR(TypeError, lax::broadcast_in_dim(x, {3, 2}, {1, 0}), "strictly increasing");
  Array y = random_array({2, 2}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::broadcast_in_dim(y, {2, 2}, {1, 0}),
               "broadcast_dimensions must be strictly increasing; got broadcast_dimensions (1, 0)");
  EXPECT_ERROR(TypeError, lax::broadcast_in_dim(x, {2, -3}, {0, 1}),
               "[broadcast_in_dim] broadcast_in_dim shape must have every element be "
               "nonnegative, got (2, -3).");
}

// ---------------------------------------------------------------- reshape

TEST(Reshape, ZeroCopyAndValues) {
  for (DType dt : kAllDTypes) {
    Array x = random_array({3, 4, 5}, dt);
    Array y = lax::reshape(x, {5, 12});
    EXPECT_EQ(y.shape(), (Shape{5, 12}));
    EXPECT_EQ(y.raw_data(), x.raw_data());
    EXPECT_EQ(compare(to_doubles(y), to_doubles(x), 0, 0), "");
  }
  Array s = random_array({}, DType::kInt32);
  Array s3 = lax::reshape(s, {1, 1, 1});
  EXPECT_EQ(s3.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(lax::reshape(s3, {}).item<int32_t>(), s.item<int32_t>());
  Array z = random_array({0, 4}, DType::kFloat32);
  EXPECT_EQ(lax::reshape(z, {2, 0, 7}).shape(), (Shape{2, 0, 7}));
}

TEST(Reshape, Errors) {
  Array x = random_array({3, 4}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::reshape(x, {5}),
               "[reshape] cannot reshape f32[3,4] (12 elements) into (5,)");
  EXPECT_ERROR(TypeError, lax::reshape(x, {-1, 12}), "[reshape] new_sizes must all be");
}

// ---------------------------------------------------------------- transpose

std::vector<double> ref_transpose(const Array& x, const std::vector<int64_t>& perm) {
  const std::vector<double> xv = to_doubles(x);
  Shape os(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) os[i] = x.shape()[perm[i]];
  std::vector<double> out;
  for_each_index(os, [&](const std::vector<int64_t>& oi) {
    std::vector<int64_t> ii(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) ii[perm[j]] = oi[j];
    out.push_back(xv[flat(x.shape(), ii)]);
  });
  return out;
}

TEST(Transpose, RandomPermutationsAcrossDTypes) {
  for (DType dt : kAllDTypes) {
    for (int rank = 0; rank <= 5; ++rank) {
      for (int rep = 0; rep < 3; ++rep) {
        Shape s = random_shape(rank, rank <= 2 ? 70 : 9);
        std::vector<int64_t> perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng());
        Array x = random_array(s, dt);
        Array y = lax::transpose(x, perm);
        ASSERT_EQ(compare(to_doubles(y), ref_transpose(x, perm), 0, 0), "")
            << dtype_name(dt) << " " << shape_str(s) << " perm " << shape_str(perm);
        for (size_t j = 0; j < perm.size(); ++j) EXPECT_EQ(y.shape()[j], s[perm[j]]);
      }
    }
  }
}

TEST(Transpose, TiledPathsWithRaggedEdges) {
  struct Case {
    Shape s;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {
      {{1000, 1300}, {1, 0}},           // one big matrix, edges not on tiles
      {{6, 129, 67}, {0, 2, 1}},        // batched last-two-dims
      {{67, 5, 129}, {2, 1, 0}},        // the innermost dims exchanged around a middle one
      {{33, 40, 17, 3}, {3, 1, 0, 2}},  // general
      {{50, 60, 70}, {1, 0, 2}},        // runs of the innermost dim
      {{1, 300, 1, 200}, {3, 2, 0, 1}},
  };
  for (DType dt : {DType::kInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    for (const auto& c : cases) {
      Array x = random_array(c.s, dt);
      Array y1, y2;
      {
        Threads t(1);
        y1 = lax::transpose(x, c.perm);
      }
      {
        Threads t(2);
        y2 = lax::transpose(x, c.perm);
      }
      EXPECT_TRUE(same_bytes(y1, y2));
      EXPECT_EQ(compare(to_doubles(y2), ref_transpose(x, c.perm), 0, 0), "")
          << dtype_name(dt) << " " << shape_str(c.s);
    }
  }
}

TEST(Transpose, IdentityAndUnitDimMovesShareTheBuffer) {
  Array x = random_array({4, 1, 5}, DType::kFloat32);
  EXPECT_TRUE(lax::transpose(x, {0, 1, 2}).is(x));
  // The primitive itself (as under jit) also avoids the copy.
  Array y = bind1(prims::transpose, {x}, Params{{"permutation", std::vector<int64_t>{0, 1, 2}}});
  EXPECT_EQ(y.raw_data(), x.raw_data());
  Array z = lax::transpose(x, {1, 0, 2});
  EXPECT_EQ(z.shape(), (Shape{1, 4, 5}));
  EXPECT_EQ(z.raw_data(), x.raw_data());
  Array e = lax::transpose(random_array({0, 3}, DType::kFloat32), {1, 0});
  EXPECT_EQ(e.shape(), (Shape{3, 0}));
}

TEST(Transpose, Errors) {
  Array x = random_array({2, 3}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::transpose(x, {0}),
               "[transpose] transpose permutation must have the same length as the operand rank, "
               "got permutation (0,) for operand shape (2, 3).");
  EXPECT_ERROR(TypeError, lax::transpose(x, {0, 0}),
               "transpose permutation isn't a permutation of operand dimensions, got permutation "
               "(0, 0) for operand shape (2, 3).");
  EXPECT_ERROR(TypeError, lax::transpose(x, {0, 2}), "isn't a permutation");
}

// ---------------------------------------------------------------- iota

TEST(Iota, BroadcastedAlongEachDimension) {
  for (DType dt : kNumericDTypes) {
    const Shape s{3, 40, 5};
    for (int64_t dim = 0; dim < 3; ++dim) {
      Array y = lax::broadcasted_iota(dt, s, dim);
      EXPECT_EQ(y.dtype(), canonicalize_dtype(dt));
      std::vector<double> want;
      for_each_index(s, [&](const std::vector<int64_t>& i) { want.push_back(double(i[dim])); });
      EXPECT_EQ(compare(to_doubles(y), want, 0, 0), "") << dtype_name(dt) << " dim " << dim;
    }
  }
  Array v = lax::iota(DType::kInt32, 100000);  // large enough to be split into chunks
  std::vector<double> want(100000);
  std::iota(want.begin(), want.end(), 0.0);
  EXPECT_EQ(compare(to_doubles(v), want, 0, 0), "");
  EXPECT_EQ(lax::iota(DType::kFloat32, 0).shape(), (Shape{0}));
  if (!x64_enabled()) {
    EXPECT_EQ(lax::iota(DType::kInt64, 3).dtype(), DType::kInt32);
  }
}

TEST(Iota, Errors) {
  EXPECT_ERROR(TypeError, lax::iota(DType::kBool, 3),
               "[iota] iota does not accept dtype bool. Accepted dtypes are subtypes of number.");
  EXPECT_ERROR(ValueError, lax::broadcasted_iota(DType::kFloat32, {2, 3}, 2),
               "[iota] iota dimension must be between 0 and len(shape), got dimension=2 for "
               "shape=(2, 3)");
  EXPECT_ERROR(ValueError, lax::broadcasted_iota(DType::kFloat32, {2, 3}, -1), "dimension=-1");
}

// ---------------------------------------------------------------- reductions

// Wraps an exact integer into dtype's range (two's complement), as the kernels do.
double wrap_int(DType dt, __int128 v) {
  const int bits = static_cast<int>(itemsize(dt)) * 8;
  const unsigned __int128 mod = static_cast<unsigned __int128>(1) << bits;
  unsigned __int128 u = static_cast<unsigned __int128>(v) % mod;
  if (is_signed_integer(dt) && u >= mod / 2)
    return double(static_cast<__int128>(u) - (__int128)mod);
  return double(u);
}

struct RefReduction {
  std::vector<double> value;  // sum (or max)
  std::vector<double> abs_sum;
};

RefReduction ref_reduce(const Array& x, const std::vector<int64_t>& axes, bool is_max) {
  const std::vector<double> xv = to_doubles(x);
  Shape os;
  std::vector<bool> red(x.ndim(), false);
  for (int64_t a : axes) red[a] = true;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!red[d]) os.push_back(x.shape()[d]);
  const int64_t on = shape_size(os);
  const DType dt = x.dtype();
  double init = 0;
  if (is_max) {
    if (is_floating(dt))
      init = -INFINITY;
    else if (is_bool(dt))
      init = 0;
    else
      init = double(iinfo(dt).min);
  }
  std::vector<double> val(on, init), abs_sum(on, 0);
  std::vector<__int128> isum(on, 0);
  // Output stride of each input dim (0 for reduced dims).
  std::vector<int64_t> ostride(x.ndim(), 0);
  for (int64_t d = x.ndim() - 1, st = 1; d >= 0; --d) {
    if (red[d]) continue;
    ostride[d] = st;
    st *= x.shape()[d];
  }
  int64_t i = 0;
  for_each_index(x.shape(), [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (int64_t d = 0; d < x.ndim(); ++d) o += idx[d] * ostride[d];
    const double v = xv[i++];
    if (is_max) {
      if (std::isnan(v) || std::isnan(val[o]))
        val[o] = NAN;
      else
        val[o] = std::max(val[o], v);
    } else {
      val[o] += v;
      abs_sum[o] += std::fabs(v);
      isum[o] += static_cast<__int128>(v);
    }
  });
  if (!is_max && is_integer(dt))
    for (int64_t o = 0; o < on; ++o) val[o] = wrap_int(dt, isum[o]);
  return {val, abs_sum};
}

// Checks a float sum against the double reference: the accumulation error is bounded by a
// small multiple of float32 eps times the sum of magnitudes, plus one rounding to the dtype.
std::string check_sum(const Array& got, const RefReduction& ref) {
  const std::vector<double> g = to_doubles(got);
  const double out_eps = finfo(got.dtype()).eps;
  for (size_t i = 0; i < g.size(); ++i) {
    const double tol = 64 * 1.2e-7 * ref.abs_sum[i] + out_eps * std::fabs(ref.value[i]);
    if (!(std::fabs(g[i] - ref.value[i]) <= tol))
      return "element " + std::to_string(i) + ": got " + std::to_string(g[i]) + " want " +
             std::to_string(ref.value[i]);
  }
  return "";
}

std::vector<std::vector<int64_t>> all_axis_subsets(int64_t ndim) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t m = 0; m < (int64_t{1} << ndim); ++m) {
    std::vector<int64_t> a;
    for (int64_t d = 0; d < ndim; ++d)
      if (m >> d & 1) a.push_back(d);
    out.push_back(a);
  }
  return out;
}

TEST(ReduceSum, AllAxisSubsetsAcrossDTypes) {
  const Shape shapes[] = {{}, {37}, {5, 1, 7}, {3, 4, 1, 6}, {2, 3, 4, 5}, {1, 1}};
  for (DType dt : kNumericDTypes) {
    for (const Shape& s : shapes) {
      Array x = random_array(s, dt);
      for (auto axes : all_axis_subsets(static_cast<int64_t>(s.size()))) {
        std::shuffle(axes.begin(), axes.end(), rng());  // any order is accepted
        Array y = lax::reduce_sum(x, axes);
        const RefReduction ref = ref_reduce(x, axes, false);
        EXPECT_EQ(y.dtype(), dt);
        std::string err =
            is_floating(dt) ? check_sum(y, ref) : compare(to_doubles(y), ref.value, 0, 0);
        EXPECT_EQ(err, "") << dtype_name(dt) << " " << shape_str(s) << " axes " << shape_str(axes);
      }
    }
  }
}

TEST(ReduceSum, IntegersWrapAroundInTheirDType) {
  for (DType dt : {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32}) {
    Array x = random_array({300, 200}, dt);
    for (std::vector<int64_t> axes : {std::vector<int64_t>{0}, {1}, {0, 1}}) {
      Array y = lax::reduce_sum(x, axes);
      EXPECT_EQ(compare(to_doubles(y), ref_reduce(x, axes, false).value, 0, 0), "")
          << dtype_name(dt);
    }
  }
  // int32 overflow wraps (no UB): 2 * 2^30 + 2 * 2^30 = 2^32 == 0.
  std::vector<int32_t> v{1 << 30, 1 << 30, 1 << 30, 1 << 30, 5};
  Array x = array_from_host(Aval{{5}, DType::kInt32, false}, v.data());
  EXPECT_EQ(lax::reduce_sum(x, {0}).item<int32_t>(), 5);
}

TEST(ReduceSum, LargeShapesMatchAndAreThreadCountIndependent) {
  struct Case {
    Shape s;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {
      {{1024, 2048}, {0}},     {{1024, 2048}, {1}}, {{1024, 2048}, {0, 1}}, {{40, 900, 70}, {1}},
      {{40, 900, 70}, {0, 2}}, {{3, 200000}, {1}},  {{200000, 3}, {0}},     {{100003}, {0}},
      {{70, 3, 5000}, {0, 1}}, {{9, 3001, 5}, {1}}, {{9, 3001, 5}, {0, 1}}, {{5000, 9, 7}, {0, 2}},
  };
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
    for (const auto& c : cases) {
      Array x = random_array(c.s, dt);
      Array y1, y2;
      {
        Threads t(1);
        y1 = lax::reduce_sum(x, c.axes);
      }
      {
        Threads t(2);
        y2 = lax::reduce_sum(x, c.axes);
      }
      EXPECT_TRUE(same_bytes(y1, y2)) << dtype_name(dt) << " " << shape_str(c.s);
      const RefReduction ref = ref_reduce(x, c.axes, false);
      std::string err =
          is_floating(dt) ? check_sum(y2, ref) : compare(to_doubles(y2), ref.value, 0, 0);
      EXPECT_EQ(err, "") << dtype_name(dt) << " " << shape_str(c.s) << " axes "
                         << shape_str(c.axes);
    }
  }
}

TEST(ReduceSum, TenMillionFloatsAreAccurate) {
  const int64_t n = 10'000'000;
  Array x = random_array({n}, DType::kFloat32, 0.0, 1.0);
  const float* p = x.data<float>();
  double want = 0;
  for (int64_t i = 0; i < n; ++i) want += p[i];
  const double got = lax::reduce_sum(x, {0}).item<double>();
  // Sequential float32 accumulation is off by ~1e-3 relative here; pairwise summation's bound
  // is ~log2(n) eps = 3e-6 and its typical error ~1e-7. 2e-6 separates them without flaking.
  EXPECT_LT(std::fabs(got - want) / want, 2e-6) << got << " vs " << want;
  // Column sums of a tall matrix are accurate too.
  Array m = lax::reshape(x, {n / 4, 4});
  std::vector<double> wcol(4, 0.0);
  for (int64_t i = 0; i < n; ++i) wcol[i % 4] += p[i];
  EXPECT_EQ(compare(to_doubles(lax::reduce_sum(m, {0})), wcol, 2e-6, 0), "");
}

TEST(ReduceSum, EmptyAxesGiveTheIdentity) {
  for (DType dt : kNumericDTypes) {
    Array x = random_array({3, 0, 4}, dt);
    Array y = lax::reduce_sum(x, {1});
    EXPECT_EQ(y.shape(), (Shape{3, 4}));
    EXPECT_EQ(compare(to_doubles(y), std::vector<double>(12, 0.0), 0, 0), "");
    EXPECT_EQ(lax::reduce_sum(x, {0}).shape(), (Shape{0, 4}));
  }
  // Rank 0 with no axes is the value itself.
  Array s = random_array({}, DType::kFloat32);
  EXPECT_EQ(lax::reduce_sum(s, {}).item<float>(), s.item<float>());
}

TEST(ReduceSum, Errors) {
  Array b = random_array({3}, DType::kBool);
  EXPECT_ERROR(TypeError, lax::reduce_sum(b, {0}),
               "[reduce_sum] reduce_sum does not accept dtype bool. Accepted dtypes are subtypes "
               "of number");
  Array x = random_array({3, 4}, DType::kFloat32);
  EXPECT_ERROR(ValueError, lax::reduce_sum(x, {1, 1}),
               "[reduce_sum] duplicate value in 'axes' of reduction: (1, 1).");
  EXPECT_ERROR(IndexError, lax::reduce_sum(x, {2}),
               "[reduce_sum] reduction axes (2,) contains out-of-bounds indices for f32[3,4]");
  EXPECT_ERROR(IndexError, lax::reduce_sum(x, {-1}), "out-of-bounds");
}

TEST(ReduceMax, AllAxisSubsetsAcrossDTypes) {
  const Shape shapes[] = {{}, {37}, {5, 1, 7}, {2, 3, 4, 5}, {600, 3}};
  for (DType dt : kAllDTypes) {
    for (const Shape& s : shapes) {
      Array x = random_array(s, dt);
      for (const auto& axes : all_axis_subsets(static_cast<int64_t>(s.size()))) {
        Array y = lax::reduce_max(x, axes);
        EXPECT_EQ(compare(to_doubles(y), ref_reduce(x, axes, true).value, 0, 0), "")
            << dtype_name(dt) << " " << shape_str(s) << " axes " << shape_str(axes);
      }
    }
  }
}

TEST(ReduceMax, PropagatesNaNAndHasIdentityOnEmptyAxes) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    const Shape s{64, 100};
    std::vector<double> v = to_doubles(random_array(s, dt));
    std::uniform_int_distribution<int64_t> pos(0, 6399);
    for (int k = 0; k < 5; ++k) v[pos(rng())] = NAN;
    Array x = empty_array(Aval{s, dt, false}, "test");
    for (size_t i = 0; i < v.size(); ++i)
      store_from_double(dt, static_cast<char*>(x.buffer()->data()) + i * itemsize(dt), v[i]);
    for (std::vector<int64_t> axes : {std::vector<int64_t>{0}, {1}, {0, 1}}) {
      Array y = lax::reduce_max(x, axes);
      EXPECT_EQ(compare(to_doubles(y), ref_reduce(x, axes, true).value, 0, 0), "")
          << dtype_name(dt);
    }
    Array e = lax::reduce_max(random_array({2, 0}, dt), {1});
    EXPECT_EQ(compare(to_doubles(e), {-INFINITY, -INFINITY}, 0, 0), "");
  }
  EXPECT_EQ(lax::reduce_max(random_array({0}, DType::kInt8), {0}).item<int64_t>(), -128);
  EXPECT_EQ(lax::reduce_max(random_array({0}, DType::kUInt16), {0}).item<int64_t>(), 0);
  EXPECT_EQ(lax::reduce_max(random_array({0}, DType::kBool), {0}).item<bool>(), false);
}

TEST(ReduceMax, LargeIsThreadCountIndependent) {
  Array x = random_array({1500, 1700}, DType::kFloat32);
  for (std::vector<int64_t> axes : {std::vector<int64_t>{0}, {1}, {0, 1}}) {
    Array y1, y2;
    {
      Threads t(1);
      y1 = lax::reduce_max(x, axes);
    }
    {
      Threads t(2);
      y2 = lax::reduce_max(x, axes);
    }
    EXPECT_TRUE(same_bytes(y1, y2));
    EXPECT_EQ(compare(to_doubles(y2), ref_reduce(x, axes, true).value, 0, 0), "");
  }
}

TEST(ReduceMax, Errors) {
  Array x = random_array({3, 4}, DType::kInt32);
  EXPECT_ERROR(ValueError, lax::reduce_max(x, {0, 0}), "[reduce_max] duplicate value");
  EXPECT_ERROR(IndexError, lax::reduce_max(x, {5}), "[reduce_max] reduction axes (5,)");
}

}  // namespace
}  // namespace tessera
