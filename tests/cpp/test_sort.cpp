// The sort primitive, lax.sort / sort_key_val and the jnp sorting and order-statistics functions.
// References: std::stable_sort of the rows with JAX's order (NaNs after +inf and tied, -0.0 and
// +0.0 tied, bool false < true), every output compared bit for bit with the input element the
// reference permutation puts there (so stability, zero signs and NaN payloads are checked);
// the order statistics against NumPy's definitions written here in double; derivatives against
// central finite differences in float64; vmap against a loop; jit against eager. Inputs are
// fresh random arrays (the seed is printed by test_util).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "prims/sort_kernels.h"
#include "tessera/jit.h"
#include "tessera/lax_sort.h"
#include "tessera/numpy_sort.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::rng;
using testing::Threads;
using testing::to_doubles;
using testing::X64Scope;
namespace tnp = numpy;

constexpr DType kF16 = DType::kFloat16, kBF16 = DType::kBFloat16, kF32 = DType::kFloat32,
                kF64 = DType::kFloat64, kI8 = DType::kInt8, kI32 = DType::kInt32,
                kI64 = DType::kInt64, kU8 = DType::kUInt8, kU16 = DType::kUInt16,
                kU64 = DType::kUInt64, kBool = DType::kBool;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Array make(const Shape& s, DType dt, const std::vector<double>& v) {
  Array a = empty_array(Aval{s, dt, false}, "test");
  for (size_t i = 0; i < v.size(); ++i)
    store_from_double(dt, static_cast<char*>(a.buffer()->data()) + i * itemsize(dt), v[i]);
  return a;
}

// JAX's order: NaNs last and tied, -0.0 == +0.0.
bool ord_less(double a, double b) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return !na && nb;
  return a < b;
}

int64_t norm_dim(int64_t dim, int64_t nd) { return dim < 0 ? dim + nd : dim; }

// For each output position (flat index), the flat input index that the stable lexicographic
// sort by keys along dim puts there.
std::vector<int64_t> ref_perm(const std::vector<std::vector<double>>& keys, const Shape& s,
                              int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= s[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(s.size()); ++d) inner *= s[d];
  const int64_t n = s[dim];
  std::vector<int64_t> perm(static_cast<size_t>(outer * n * inner));
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + i); };
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        for (const auto& key : keys) {
          if (ord_less(key[at(a)], key[at(b)])) return true;
          if (ord_less(key[at(b)], key[at(a)])) return false;
        }
        return false;
      });
      for (int64_t k = 0; k < n; ++k) perm[at(k)] = static_cast<int64_t>(at(idx[k]));
    }
  return perm;
}

// "" when every outs[j] is ins[j] permuted by the reference sort (bit for bit).
std::string check_sorted(const std::vector<Array>& ins, const std::vector<Array>& outs, int64_t dim,
                         int64_t num_keys) {
  if (ins.size() != outs.size()) return "wrong number of results";
  std::vector<std::vector<double>> keys;
  for (int64_t k = 0; k < num_keys; ++k) keys.push_back(to_doubles(ins[k]));
  const Shape& s = ins[0].shape();
  const std::vector<int64_t> perm = ref_perm(keys, s, norm_dim(dim, ins[0].ndim()));
  for (size_t j = 0; j < ins.size(); ++j) {
    if (!(outs[j].aval() == ins[j].aval()))
      return "result " + std::to_string(j) + " is " + outs[j].aval().str() + ", expected " +
             ins[j].aval().str();
    const size_t w = itemsize(ins[j].dtype());
    const auto* in = static_cast<const char*>(ins[j].raw_data());
    const auto* out = static_cast<const char*>(outs[j].raw_data());
    for (size_t p = 0; p < perm.size(); ++p)
      if (std::memcmp(out + p * w, in + static_cast<size_t>(perm[p]) * w, w) != 0)
        return "result " + std::to_string(j) + " differs at flat index " + std::to_string(p) +
               " (" + std::to_string(to_doubles(outs[j])[p]) + ", expected " +
               std::to_string(to_doubles(ins[j])[perm[p]]) + ")";
  }
  return "";
}

// Random values of dtype with many ties (small ranges) and, for floats, NaNs, infinities and
// zeros of both signs mixed in.
Array draw(const Shape& s, DType dt, double special = 0.15) {
  Array a = random_array(s, dt, -3.0, 3.0);
  if (!is_floating(dt)) return a;
  std::vector<double> v = to_doubles(a);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double specials[] = {kNan, -kNan, kInf, -kInf, 0.0, -0.0, 1.0};
  for (double& x : v)
    if (u(rng()) < special) x = specials[static_cast<size_t>(u(rng()) * 7) % 7];
  return make(s, dt, v);
}

// ---------------------------------------------------------------- order and stability

TEST(Sort, FloatOrderPutsNansLastAndTiesZeros) {
  for (DType dt : {kF16, kBF16, kF32, kF64}) {
    SCOPED_TRACE(dtype_name(dt));
    const std::vector<double> v = {3, -0.0, kNan, 1, 0.0, -kInf, kInf, -kNan, 2, -0.0, 0.0, kNan};
    Array x = make({static_cast<int64_t>(v.size())}, dt, v);
    Array y = lax::sort(x);
    EXPECT_EQ(check_sorted({x}, {y}, 0, 1), "");
    const std::vector<double> got = to_doubles(y);
    const std::vector<double> want = {-kInf, -0.0, 0.0, -0.0, 0.0, 1, 2, 3, kInf, kNan, kNan, kNan};
    EXPECT_EQ(compare(got, want, 0, 0), "");
    // The zeros keep their signs in input order (stable), the NaNs come last.
    EXPECT_TRUE(std::signbit(got[1]) && !std::signbit(got[2]) && std::signbit(got[3]) &&
                !std::signbit(got[4]));
    // argsort: the stable order of the indices.
    Array iota = lax::iota(kI32, static_cast<int64_t>(v.size()));
    Array perm = lax::sort_key_val(x, iota).second;
    EXPECT_EQ(compare(to_doubles(perm), {5, 1, 4, 9, 10, 3, 8, 0, 6, 2, 7, 11}, 0, 0), "");
  }
}

TEST(Sort, EveryDtypeAlongEveryDimension) {
  for (DType dt : testing::kAllDTypes)
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " dim " + std::to_string(dim));
      Array x = draw({6, 7, 9}, dt);
      Array iota = lax::broadcasted_iota(kI32, {6, 7, 9}, norm_dim(dim, 3));
      EXPECT_EQ(check_sorted({x}, {lax::sort(x, dim)}, dim, 1), "");
      const auto [k, v] = lax::sort_key_val(x, iota, dim);
      EXPECT_EQ(check_sorted({x, iota}, {k, v}, dim, 1), "");
      // is_stable=false is stable too (deterministic).
      EXPECT_EQ(check_sorted({x, iota}, lax::sort({x, iota}, dim, false), dim, 1), "");
    }
}

TEST(Sort, SeveralOperandsAndKeys) {
  const Shape s{5, 40};
  for (int64_t nk : {1, 2, 3})
    for (int64_t dim : {0, 1}) {
      SCOPED_TRACE("num_keys " + std::to_string(nk) + " dim " + std::to_string(dim));
      // Keys with many ties so that later keys decide: int8 in [-3, 3], bool, then floats.
      Array k0 = make(s, kI8, to_doubles(random_array(s, kI32, -3, 3)));
      std::vector<double> r = to_doubles(random_array(s, kI32, -3, 3));
      for (double& x : r) x = x > 0 ? 1 : 0;
      Array k1 = make(s, kBool, r);
      Array k2 = draw(s, kBF16);
      Array v0 = random_array(s, kF32), v1 = random_array(s, kU64, 0, 50);
      const std::vector<Array> ins{k0, k1, k2, v0, v1};
      EXPECT_EQ(check_sorted(ins, lax::sort(ins, dim, true, nk), dim, nk), "");
    }
}

TEST(Sort, EmptyAndSizeOneAxes) {
  for (const auto& [shape, dim] : std::vector<std::pair<Shape, int64_t>>{
           {{0}, 0}, {{3, 0}, 1}, {{0, 3}, 1}, {{3, 0}, 0}, {{1}, 0}, {{4, 1}, 1}, {{1, 4}, 0}}) {
    SCOPED_TRACE(shape_str(shape) + " dim " + std::to_string(dim));
    Array x = draw(shape, kF32), y = random_array(shape, kI32);
    EXPECT_EQ(check_sorted({x, y}, lax::sort({x, y}, dim), dim, 1), "");
  }
}

TEST(Sort, ErrorsNameTheOpAndTheFix) {
  Array x = random_array({3}, kF32), y = random_array({4}, kF32);
  Array s = random_array({}, kF32);
  EXPECT_ERROR(ValueError, lax::sort(s), "axis -1 is out of bounds for array of dimension 0");
  EXPECT_ERROR(ValueError, lax::sort(x, 1), "axis 1 is out of bounds");
  EXPECT_ERROR(TypeError, lax::sort(std::vector<Array>{}), "Sort requires at least one operand");
  EXPECT_ERROR(TypeError, lax::sort({x, y}), "Arguments to sort must have equal shapes");
  EXPECT_ERROR(ValueError, lax::sort({x, x}, -1, true, 3), "num_keys=3 must be between 1");
  EXPECT_ERROR(ValueError, lax::sort({x, x}, -1, true, 0), "num_keys=0 must be between 1");
  EXPECT_ERROR(ValueError, lax::sort(x, -1, true, 2), "must equal 1 for a single operand");
  // The primitive itself (bound directly, as a jaxpr would).
  const Primitive& p = *find_primitive("sort");
  auto params = [](int64_t dim, int64_t nk) {
    return Params{{"dimension", dim}, {"is_stable", true}, {"num_keys", nk}};
  };
  EXPECT_ERROR(TypeError, tessera::bind(p, std::vector<Array>{}, params(0, 1)), "[sort]");
  EXPECT_ERROR(TypeError, tessera::bind(p, {s}, params(0, 1)), "rank >= 1");
  EXPECT_ERROR(TypeError, tessera::bind(p, {x}, params(-1, 1)), "lax.sort normalizes negative");
  EXPECT_ERROR(TypeError, tessera::bind(p, {x}, params(1, 1)), "dimension 1 is out of range");
  EXPECT_ERROR(TypeError, tessera::bind(p, {x, x}, params(0, 3)), "num_keys=3");
  EXPECT_ERROR(TypeError, tessera::bind(p, {x, y}, params(0, 1)), "(3,) (4,)");
}

// ---------------------------------------------------------------- the kernel's two paths

TEST(Sort, RadixAndComparisonPathsAgreeOnLargeRows) {
  const int64_t n = 3 * sort_kernels::kParallelRadixMin + 17;
  for (DType dt : {kF32, kF64, kF16, kBF16, kI32, kI64, kU8, kU16, kBool, kI8}) {
    SCOPED_TRACE(dtype_name(dt));
    Array x = draw({n}, dt, 0.05);
    std::vector<int64_t> radix(static_cast<size_t>(n)), cmp(static_cast<size_t>(n));
    sort_kernels::argsort_row(x.raw_data(), dt, n, radix.data(), sort_kernels::Method::kRadix);
    sort_kernels::argsort_row(x.raw_data(), dt, n, cmp.data(), sort_kernels::Method::kComparison);
    EXPECT_TRUE(radix == cmp);
    EXPECT_TRUE(ref_perm({to_doubles(x)}, {n}, 0) == cmp);
    // The primitive (parallel radix passes), on one and two threads, bit for bit.
    Array iota = lax::iota(kI32, n);
    std::vector<Array> one, two;
    {
      Threads t(1);
      one = lax::sort({x, iota});
    }
    {
      Threads t(2);
      two = lax::sort({x, iota});
    }
    EXPECT_EQ(check_sorted({x, iota}, one, 0, 1), "");
    // A lone operand moves its keys only (zeros and NaNs refilled in input order).
    EXPECT_EQ(check_sorted({x}, {lax::sort(x)}, 0, 1), "");
    EXPECT_EQ(std::memcmp(one[0].raw_data(), two[0].raw_data(), n * itemsize(dt)), 0);
    EXPECT_EQ(std::memcmp(one[1].raw_data(), two[1].raw_data(), n * 4), 0);
  }
}

TEST(Sort, ManyMediumRowsAndStridedRows) {
  // Rows just above and below the radix threshold, along the last and a leading axis.
  for (int64_t len : {sort_kernels::kRadixMin - 1, sort_kernels::kRadixMin + 3})
    for (int64_t dim : {0, 1}) {
      SCOPED_TRACE("len " + std::to_string(len) + " dim " + std::to_string(dim));
      Shape s = dim == 1 ? Shape{9, len} : Shape{len, 9};
      Array x = draw(s, kF32), v = random_array(s, kF16);
      EXPECT_EQ(check_sorted({x, v}, lax::sort({x, v}, dim), dim, 1), "");
      EXPECT_EQ(check_sorted({x}, {lax::sort(x, dim)}, dim, 1), "");
    }
}

// ---------------------------------------------------------------- transformations

// The gradient and a directional derivative of f (R^n -> R) vs central differences, float64.
void check_grad(const std::function<Array(const Array&)>& f, const Array& x, double tol) {
  flat::Fun ff = [&](std::span<const Array> a) { return std::vector<Array>{f(a[0])}; };
  std::vector<Array> args{x};
  const std::vector<double> g = to_doubles(flat::value_and_grad(ff, args, false).grads[0]);
  const std::vector<double> xv = to_doubles(x);
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    std::vector<double> p = xv, m = xv;
    p[i] += h, m[i] -= h;
    const double fd =
        (f(make(x.shape(), kF64, p)).item<double>() - f(make(x.shape(), kF64, m)).item<double>()) /
        (2 * h);
    EXPECT_NEAR(g[i], fd, tol * (1 + std::fabs(fd))) << "element " << i;
  }
  Array t = random_array(x.shape(), kF64);
  std::vector<Array> ts{t};
  auto [outs, touts] = flat::jvp(ff, args, ts);
  double dir = 0;
  const std::vector<double> tv = to_doubles(t);
  for (size_t i = 0; i < xv.size(); ++i) dir += g[i] * tv[i];
  EXPECT_NEAR(touts[0].item<double>(), dir, tol * (1 + std::fabs(dir)));
}

// Distinct values (no ties: the permutation is locally constant).
Array distinct(const Shape& s) {
  std::vector<double> v(static_cast<size_t>(shape_size(s)));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), rng());
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  for (double& x : v) x = 0.7 * x + u(rng());
  return make(s, kF64, v);
}

Array all_sum(const Array& a) {
  std::vector<int64_t> axes(static_cast<size_t>(a.ndim()));
  std::iota(axes.begin(), axes.end(), 0);
  return lax::reduce_sum(a, axes);
}

TEST(Sort, GradientsMatchFiniteDifferences) {
  X64Scope x64;
  const Shape s{4, 6};
  for (int64_t dim : {0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    Array x = distinct(s), w = random_array(s, kF64), vals = random_array(s, kF64);
    // The sorted keys, the values permuted by them, and a square (second derivative) of both.
    check_grad([&](const Array& a) { return all_sum(lax::mul(lax::sort(a, dim), w)); }, x, 1e-6);
    check_grad(
        [&](const Array& a) { return all_sum(lax::mul(lax::sort_key_val(x, a, dim).second, w)); },
        vals, 1e-6);
    check_grad(
        [&](const Array& a) {
          const auto [k, v] = lax::sort_key_val(a, lax::mul(a, a), dim);
          return all_sum(lax::mul(lax::add(lax::mul(k, k), v), w));
        },
        x, 1e-6);
    // Second order: the gradient of the gradient's dot with w (reverse over reverse).
    check_grad(
        [&](const Array& a) {
          flat::Fun inner = [&](std::span<const Array> b) {
            Array y = lax::sort(b[0], dim);
            return std::vector<Array>{all_sum(lax::mul(lax::mul(y, y), w))};
          };
          std::vector<Array> args{a};
          return all_sum(lax::mul(flat::value_and_grad(inner, args, false).grads[0], w));
        },
        x, 1e-6);
  }
}

TEST(Sort, TransposingAKeyBreaksLinearity) {
  Array x = random_array({5}, kF32);
  std::vector<Array> prim{x};
  flat::Fun f = [](std::span<const Array> a) { return lax::sort(std::vector<Array>{a[0]}); };
  auto ft = flat::linear_transpose(f, prim);
  std::vector<Array> ct{x};
  EXPECT_ERROR(InternalError, ft(ct), "sort key operand 0 is linear");
}

TEST(Sort, VmapMatchesLoopAndJitMatchesEager) {
  for (int64_t bdim : {0, 1, 2})
    for (int64_t dim : {0, 1})
      for (bool values_batched : {true, false}) {
        SCOPED_TRACE("bdim " + std::to_string(bdim) + " dim " + std::to_string(dim));
        Shape s{3, 4};
        s.insert(s.begin() + bdim, 5);
        Array kb = draw(s, kF32);
        Array vb = values_batched ? random_array(s, kI32) : random_array({3, 4}, kI32);
        auto f = [dim](std::span<const Array> a) {
          const auto [k, v] = lax::sort_key_val(a[0], a[1], dim);
          return std::vector<Array>{k, v};
        };
        std::vector<Array> args{kb, vb};
        std::vector<std::optional<int64_t>> in_axes{
            bdim, values_batched ? std::optional<int64_t>(bdim) : std::nullopt};
        std::vector<Array> got = flat::vmap(
            f, args, in_axes, [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); });
        for (int64_t b = 0; b < 5; ++b) {
          Array ki = lax::squeeze(lax::slice_in_dim(kb, b, b + 1, 1, bdim), {bdim});
          Array vi =
              values_batched ? lax::squeeze(lax::slice_in_dim(vb, b, b + 1, 1, bdim), {bdim}) : vb;
          std::vector<Array> one{ki, vi};
          std::vector<Array> want = f(one);
          for (size_t j = 0; j < 2; ++j) {
            Array gj = lax::squeeze(lax::slice_in_dim(got[j], b, b + 1, 1, 0), {0});
            EXPECT_EQ(compare(to_doubles(gj), to_doubles(want[j]), 0, 0), "");
          }
        }
        auto jf = tessera::jit([dim](const Array& k, const Array& v) {
          return lax::sort({k, v}, dim, true, 1);
        });
        Array vfull = values_batched ? vb : random_array(s, kI32);
        EXPECT_EQ(check_sorted({kb, vfull}, jf(kb, vfull), dim, 1), "");
      }
}

// ---------------------------------------------------------------- jax.numpy

TEST(NumpySort, SortArgsortDescendingAndFlatten) {
  Array x = make({2, 6}, kF32, {3, 1, kNan, 1, 2, 3, 0.0, -1, 5, -1, 0, 5});
  EXPECT_EQ(compare(to_doubles(tnp::sort(x, std::nullopt)),
                    {-1, -1, 0, 0, 1, 1, 2, 3, 3, 5, 5, kNan}, 0, 0),
            "");
  // Descending: the ascending result reversed (NaNs first, as JAX).
  EXPECT_EQ(compare(to_doubles(tnp::sort(x, 1, true, true)),
                    {kNan, 3, 3, 2, 1, 1, 5, 5, 0, 0, -1, -1}, 0, 0),
            "");
  Array a = tnp::argsort(x);
  EXPECT_EQ(a.dtype(), kI32);
  EXPECT_EQ(compare(to_doubles(a), {1, 3, 4, 0, 5, 2, 1, 3, 0, 4, 2, 5}, 0, 0), "");
  // Stable descending keeps ties in their original order.
  EXPECT_EQ(compare(to_doubles(tnp::argsort(x, 1, true, true)),
                    {2, 0, 5, 4, 1, 3, 2, 5, 0, 4, 1, 3}, 0, 0),
            "");
  EXPECT_EQ(compare(to_doubles(tnp::argsort(x, 0)), {1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1}, 0, 0),
            "");
  EXPECT_EQ(compare(to_doubles(tnp::argsort(x, std::nullopt)),
                    {7, 9, 6, 10, 1, 3, 4, 0, 5, 8, 11, 2}, 0, 0),
            "");
  EXPECT_ERROR(ValueError, tnp::sort(random_array({}, kF32)), "out of bounds");
  EXPECT_EQ(tnp::sort(random_array({}, kF32), std::nullopt).shape(), (Shape{1}));
}

TEST(NumpySort, LexsortUsesTheLastKeyFirst) {
  const Shape s{3, 30};
  Array a = random_array(s, kI32, 0, 3), b = random_array(s, kI32, 0, 3);
  Array c = random_array(s, kF32);
  for (int64_t axis : {0, 1, -1}) {
    Array got = tnp::lexsort({a, b, c}, axis);
    Array iota = lax::broadcasted_iota(kI32, s, norm_dim(axis, 2));
    std::vector<Array> ins{c, b, a, iota};
    EXPECT_EQ(compare(to_doubles(got), to_doubles(lax::sort(ins, axis, true, 3)[3]), 0, 0), "");
    const std::vector<int64_t> perm =
        ref_perm({to_doubles(c), to_doubles(b), to_doubles(a)}, s, norm_dim(axis, 2));
    const std::vector<double> iv = to_doubles(iota), gv = to_doubles(got);
    for (size_t p = 0; p < perm.size(); ++p) ASSERT_EQ(gv[p], iv[perm[p]]);
  }
  EXPECT_EQ(tnp::lexsort({random_array({}, kF32)}).item<int32_t>(), 0);
  EXPECT_ERROR(TypeError, tnp::lexsort({}), "need sequence of keys");
  EXPECT_ERROR(ValueError, tnp::lexsort({a, random_array({3}, kF32)}), "same shape");
  EXPECT_ERROR(NotImplementedError, tnp::sort_complex(a), "complex");
}

// NumPy 1.24's quantile of one slice (method as JAX's set; nearest breaks ties downward, as
// JAX). v: the slice; NaN result when it holds a NaN (unless skip_nan drops them).
double ref_quantile(std::vector<double> v, double q, const std::string& m, bool skip_nan) {
  if (skip_nan)
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty() || std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }))
    return kNan;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const double lo = std::floor(pos), hi = std::ceil(pos), w = pos - lo;
  const double a = v[static_cast<size_t>(lo)], b = v[static_cast<size_t>(hi)];
  if (m == "lower") return a;
  if (m == "higher") return b;
  if (m == "midpoint") return (a + b) / 2;
  if (m == "nearest") return w <= 0.5 ? a : b;
  return a * (1 - w) + b * w;
}

TEST(NumpySort, QuantileMethodsAxesAndNanForms) {
  X64Scope x64;
  const Shape s{4, 5, 6};
  Array x = random_array(s, kF64);
  std::vector<double> xv = to_doubles(x);
  xv[7] = kNan;                                   // one slice along every axis holds a NaN
  for (size_t i = 60; i < 66; ++i) xv[i] = kNan;  // an all-NaN slice along the last axis
  x = make(s, kF64, xv);
  const std::vector<double> qs = {0.0, 0.13, 0.5, 0.77, 1.0};
  Array q = make({5}, kF64, qs);
  for (const std::string m : {"linear", "lower", "higher", "midpoint", "nearest"})
    for (int64_t axis : {0, 1, 2})
      for (bool nan : {false, true})
        for (bool keepdims : {false, true}) {
          SCOPED_TRACE(m + " axis " + std::to_string(axis) + (nan ? " nan" : ""));
          Array got = nan ? tnp::nanquantile(x, q, axis, m, keepdims)
                          : tnp::quantile(x, q, axis, m, keepdims);
          Shape want_shape{5};
          for (int64_t d = 0; d < 3; ++d)
            if (d != axis || keepdims) want_shape.push_back(d == axis ? 1 : s[d]);
          ASSERT_EQ(got.shape(), want_shape);
          // The reference, slice by slice.
          int64_t outer = 1, inner = 1;
          for (int64_t d = 0; d < axis; ++d) outer *= s[d];
          for (int64_t d = axis + 1; d < 3; ++d) inner *= s[d];
          std::vector<double> want;
          for (double qq : qs)
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t i = 0; i < inner; ++i) {
                std::vector<double> slice;
                for (int64_t k = 0; k < s[axis]; ++k)
                  slice.push_back(xv[(o * s[axis] + k) * inner + i]);
                want.push_back(ref_quantile(slice, qq, m, nan));
              }
          EXPECT_EQ(compare(to_doubles(got), want, 1e-12, 1e-12), "");
        }
  // Axis none and a tuple of axes; percentile and median.
  std::vector<double> finite = to_doubles(random_array(s, kF64));
  Array y = make(s, kF64, finite);
  EXPECT_NEAR(tnp::median(y).item<double>(), ref_quantile(finite, 0.5, "midpoint", false), 1e-12);
  EXPECT_NEAR(tnp::percentile(y, 30.0).item<double>(), ref_quantile(finite, 0.3, "linear", false),
              1e-12);
  Array t = tnp::quantile(y, 0.25, tnp::AxisArg({0, 2}), "linear", true);
  ASSERT_EQ(t.shape(), (Shape{1, 5, 1}));
  for (int64_t j = 0; j < 5; ++j) {
    std::vector<double> slice;
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t c = 0; c < 6; ++c) slice.push_back(finite[(a * 5 + j) * 6 + c]);
    EXPECT_NEAR(to_doubles(t)[j], ref_quantile(slice, 0.25, "linear", false), 1e-12);
  }
  EXPECT_EQ(tnp::median(y, {}, true).shape(), (Shape{1, 1, 1}));
  EXPECT_TRUE(std::isnan(tnp::nanmedian(make({3}, kF64, {kNan, kNan, kNan})).item<double>()));
  EXPECT_NEAR(tnp::nanmedian(make({4}, kF64, {kNan, 3, 1, 2})).item<double>(), 2.0, 0);
  // Integer inputs are promoted; the result is float.
  Array ints = make({5}, kI32, {4, 1, 3, 2, 5});
  EXPECT_TRUE(is_floating(tnp::median(ints).dtype()));
  EXPECT_EQ(tnp::median(ints).item<double>(), 3.0);
  EXPECT_ERROR(ValueError, tnp::quantile(y, 0.5, {}, "cubic"), "method can only be");
  EXPECT_ERROR(ValueError, tnp::quantile(y, random_array({2, 2}, kF64)), "rank <= 1");
}

TEST(NumpySort, MedianAndQuantileGradientsMatchFiniteDifferences) {
  X64Scope x64;
  Array x = distinct({3, 5});
  Array w = random_array({3}, kF64);
  check_grad([&](const Array& a) { return all_sum(lax::mul(tnp::median(a, 1), w)); }, x, 1e-6);
  check_grad([&](const Array& a) { return tnp::median(a); }, x, 1e-6);
  check_grad(
      [&](const Array& a) {
        return all_sum(tnp::quantile(a, make({2}, kF64, {0.3, 0.8}), {}, "linear"));
      },
      x, 1e-6);
  check_grad([&](const Array& a) { return all_sum(tnp::nanquantile(a, 0.4, 0)); }, x, 1e-6);
}

TEST(NumpySort, VmapAndJitOfStatistics) {
  Array x = random_array({4, 7}, kF32);
  std::vector<Array> args{x};
  flat::Fun f = [](std::span<const Array> a) { return std::vector<Array>{tnp::median(a[0])}; };
  std::vector<std::optional<int64_t>> in_axes{0};
  std::vector<Array> got = flat::vmap(
      f, args, in_axes, [](size_t n) { return std::vector<std::optional<int64_t>>(n, 0); });
  EXPECT_EQ(compare(to_doubles(got[0]), to_doubles(tnp::median(x, 1)), 0, 0), "");
  auto jq = tessera::jit([](const Array& a, const Array& q) { return tnp::quantile(a, q, 1); });
  Array q = make({3}, kF32, {0.1, 0.5, 0.9});
  EXPECT_EQ(compare(to_doubles(jq(x, q)), to_doubles(tnp::quantile(x, q, 1)), 0, 0), "");
  auto js = tessera::jit([](const Array& a) { return tnp::argsort(a, 0, true, true); });
  EXPECT_EQ(compare(to_doubles(js(x)), to_doubles(tnp::argsort(x, 0, true, true)), 0, 0), "");
}

}  // namespace
}  // namespace tessera
