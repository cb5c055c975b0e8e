// Elementwise primitives: binary arithmetic, unary math, comparisons, select_n and
// convert_element_type. Fresh random inputs against plain double-precision reference loops,
// across every dtype each primitive accepts, with lax broadcasting, empty and rank-0 arrays,
// special values, error messages and threaded-vs-single-thread bitwise equality.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "prims/prims.h"
#include "prims/vec_math.h"
#include "runtime/thread_pool.h"
#include "tessera/lax.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;

const auto& kAll = testing::kAllDTypes;
const auto& kFloats = testing::kFloatDTypes;
const auto& kInts = testing::kIntDTypes;

using testing::Threads;

// ---------------------------------------------------------------- helpers

Array from_doubles(const Shape& shape, DType d, const std::vector<double>& v) {
  Array a = empty_array(Aval{shape, d, false}, "test");
  auto* p = static_cast<char*>(a.buffer()->data());
  for (size_t i = 0; i < v.size(); ++i) store_from_double(d, p + i * itemsize(d), v[i]);
  return a;
}
Array weak(const Array& a) { return Array(Aval{a.shape(), a.dtype(), true}, a.buffer()); }

// v rounded to dtype d (floats: to nearest even; ints: saturating) and back.
double round_to(DType d, double v) {
  alignas(8) unsigned char buf[8];
  store_from_double(d, buf, v);
  return load_as_double(d, buf);
}

// An exact integer result wrapped to the width of integer dtype d.
double wrap_int(DType d, int64_t v) {
  const int shift = 64 - 8 * static_cast<int>(itemsize(d));
  const uint64_t u = static_cast<uint64_t>(v) << shift;
  return is_signed_integer(d) ? static_cast<double>(static_cast<int64_t>(u) >> shift)
                              : static_cast<double>(u >> shift);
}

struct Tol {
  double rtol, atol;
};
// Tolerances for results that are correctly rounded or within a few ulp of it; atol covers
// the subnormals.
Tol tol(DType d) {
  if (d == DType::kFloat16) return {1e-3, 1.2e-7};
  if (d == DType::kBFloat16) return {1e-2, 1e-40};
  if (d == DType::kFloat32) return {1e-6, 3e-45};
  if (d == DType::kFloat64) return {1e-13, 1e-300};
  return {0, 0};
}

// Index into an operand of shape `in` for the row-major output index `flat` of shape `out`
// (lax broadcasting: rank-0 operands or size-1 dims broadcast).
int64_t bcast_index(const Shape& out, const Shape& in, int64_t flat) {
  if (in.empty()) return 0;
  int64_t idx = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
    const int64_t i = flat % out[d];
    flat /= out[d];
    if (in[d] != 1) idx += i * stride;
    stride *= in[d];
  }
  return idx;
}

Shape bcast_shape(const Shape& a, const Shape& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  Shape s(a.size());
  for (size_t d = 0; d < a.size(); ++d) s[d] = (a[d] == 0 || b[d] == 0) ? 0 : std::max(a[d], b[d]);
  return s;
}

bool same_bytes(const Array& a, const Array& b) {
  return a.aval() == b.aval() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// The message of the exception f throws (empty when it does not throw E).
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------- binary arithmetic

enum class Bin { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow };
const char* bin_name(Bin op) {
  const char* n[] = {"add", "sub", "mul", "div", "max", "min", "pow"};
  return n[static_cast<int>(op)];
}
using BinaryFn = Array (*)(const Array&, const Array&);
Array apply(Bin op, const Array& x, const Array& y) {
  const BinaryFn fns[] = {lax::add, lax::sub, lax::mul, lax::div, lax::max, lax::min, lax::pow};
  return fns[static_cast<int>(op)](x, y);
}
bool accepts(Bin op, DType d) {
  if (op == Bin::kPow) return is_floating(d);
  if (op == Bin::kMax || op == Bin::kMin) return true;
  return !is_bool(d);
}

// The reference result of op on a, b in dtype d.
double ref_binary(Bin op, DType d, double a, double b) {
  if (is_floating(d) || is_bool(d)) {
    const bool nan = std::isnan(a) || std::isnan(b);  // max/min propagate NaN
    const double rs[] = {
        a + b,         a - b, a * b, a / b, nan ? NAN : std::max(a, b), nan ? NAN : std::min(a, b),
        std::pow(a, b)};
    const double r = rs[static_cast<int>(op)];
    return is_bool(d) ? r : round_to(d, r);
  }
  const auto x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  switch (op) {
    case Bin::kAdd:
      return wrap_int(d, x + y);
    case Bin::kSub:
      return wrap_int(d, x - y);
    case Bin::kMul:
      return wrap_int(d, x * y);
    case Bin::kDiv:
      return y == 0 ? wrap_int(d, -1) : wrap_int(d, x / y);
    case Bin::kMax:
      return static_cast<double>(std::max(x, y));
    case Bin::kMin:
      return static_cast<double>(std::min(x, y));
    default:
      return NAN;
  }
}

void check_binary(Bin op, const Array& x, const Array& y) {
  SCOPED_TRACE(std::string(bin_name(op)) + " " + x.aval().str() + " " + y.aval().str());
  const DType d = x.dtype();
  Array r = apply(op, x, y);
  const Shape out = bcast_shape(x.shape(), y.shape());
  ASSERT_EQ(r.shape(), out);
  ASSERT_EQ(r.dtype(), d);
  EXPECT_FALSE(r.weak_type());
  const auto xs = to_doubles(x), ys = to_doubles(y);
  std::vector<double> want(static_cast<size_t>(shape_size(out)));
  for (int64_t i = 0; i < shape_size(out); ++i) {
    want[i] =
        ref_binary(op, d, xs[bcast_index(out, x.shape(), i)], ys[bcast_index(out, y.shape(), i)]);
  }
  const Tol t = tol(d);
  EXPECT_EQ(compare(to_doubles(r), want, t.rtol, t.atol), "");
}

const Bin kBins[] = {Bin::kAdd, Bin::kSub, Bin::kMul, Bin::kDiv, Bin::kMax, Bin::kMin, Bin::kPow};

TEST(Binary, EveryOpEveryDtype) {
  for (Bin op : kBins) {
    for (DType d : kAll) {
      if (!accepts(op, d)) continue;
      const bool pos = op == Bin::kPow;  // pow of negative bases is mostly NaN: test it below
      Array x = random_array({5, 7}, d, pos ? 0.05 : -2.0, pos ? 3.0 : 2.0);
      Array y = random_array({5, 7}, d, -2.0, 2.0);
      check_binary(op, x, y);
    }
  }
}

TEST(Binary, Broadcasting) {
  const std::pair<Shape, Shape> cases[] = {
      {{3, 1}, {1, 4}}, {{}, {2, 3}},           {{2, 3}, {}},
      {{}, {}},         {{2, 1, 4}, {2, 3, 1}}, {{1, 3, 1, 5}, {4, 3, 2, 1}},
      {{1, 1}, {3, 4}}, {{0, 3}, {1, 3}},       {{4, 0}, {4, 1}},
      {{0}, {}},        {{2, 3, 4}, {2, 3, 4}}, {{5, 1}, {5, 6}},
      {{1}, {7}},       {{1, 6}, {5, 1}}};
  const DType dts[] = {DType::kFloat32, DType::kInt32,   DType::kFloat16, DType::kBFloat16,
                       DType::kUInt8,   DType::kFloat64, DType::kInt64,   DType::kBool};
  for (const auto& [sa, sb] : cases) {
    for (DType d : dts) {
      for (Bin op : kBins) {
        if (!accepts(op, d)) continue;
        check_binary(op, random_array(sa, d, 0.1, 2.0), random_array(sb, d, 0.1, 2.0));
      }
    }
  }
}

// Chunks that start in the middle of short runs: the run walker must carry correctly.
TEST(Binary, LargeBroadcastAcrossChunks) {
  Array x = random_array({300, 1, 50}, DType::kFloat32);
  Array y = random_array({1, 101, 1}, DType::kFloat32);
  check_binary(Bin::kSub, x, y);
  check_binary(Bin::kMax, random_array({1, 3001}, DType::kInt16),
               random_array({517, 1}, DType::kInt16));
}

TEST(Binary, WeakType) {
  Array x = random_array({3}, DType::kFloat32), y = random_array({3}, DType::kFloat32);
  EXPECT_FALSE(lax::add(x, weak(y)).weak_type());
  EXPECT_FALSE(lax::mul(weak(x), y).weak_type());
  EXPECT_TRUE(lax::add(weak(x), weak(y)).weak_type());
  EXPECT_TRUE(lax::eq(weak(x), weak(y)).aval() == (Aval{{3}, DType::kBool, false}));
}

TEST(Binary, IntegerDivision) {
  // Truncation toward zero, x / 0 == all ones, MIN / -1 == MIN, for every integer dtype.
  for (DType d : kInts) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const bool sgn = is_signed_integer(d);
    const double mn = static_cast<double>(iinfo(d).min);
    std::vector<double> xs = {7, 7, 0, 5, 1, 9};
    std::vector<double> ys = {2, 0, 0, 1, 3, 9};
    if (sgn) {
      xs.insert(xs.end(), {-7, 7, -7, mn, mn, -1, -3});
      ys.insert(ys.end(), {2, -2, -2, -1, 0, 0, 5});
    }
    Array r = lax::div(from_doubles({int64_t(xs.size())}, d, xs),
                       from_doubles({int64_t(ys.size())}, d, ys));
    const auto got = to_doubles(r);
    for (size_t i = 0; i < xs.size(); ++i) {
      double want;
      if (ys[i] == 0) {
        want = sgn ? -1.0 : static_cast<double>(iinfo(d).max);
      } else if (xs[i] == mn && ys[i] == -1 && sgn) {
        want = mn;
      } else {
        want = std::trunc(xs[i] / ys[i]);
      }
      EXPECT_EQ(got[i], want) << xs[i] << " / " << ys[i];
    }
  }
  // MIN / -1 for int64 exactly (not through doubles).
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Array a = array_from_host(Aval{{2}, DType::kInt64, false}, std::vector<int64_t>{mn, mn}.data());
  Array b = array_from_host(Aval{{2}, DType::kInt64, false}, std::vector<int64_t>{-1, 0}.data());
  EXPECT_EQ(lax::div(a, b).to_vector<int64_t>(), (std::vector<int64_t>{mn, -1}));
}

TEST(Binary, IntegerWraparound) {
  Array a = array_from_host(Aval{{3}, DType::kInt32, false},
                            std::vector<int32_t>{INT32_MAX, INT32_MIN, 65536}.data());
  Array b =
      array_from_host(Aval{{3}, DType::kInt32, false}, std::vector<int32_t>{1, 1, 65536}.data());
  EXPECT_EQ(lax::add(a, b).to_vector<int32_t>(),
            (std::vector<int32_t>{INT32_MIN, INT32_MIN + 1, 131072}));
  EXPECT_EQ(lax::sub(b, a).to_vector<int32_t>()[1], INT32_MIN + 1);
  EXPECT_EQ(lax::mul(a, b).to_vector<int32_t>()[2], 0);  // 2^32 wraps to 0
  Array u = array_from_host(Aval{{1}, DType::kUInt16, false}, std::vector<uint16_t>{65535}.data());
  EXPECT_EQ(lax::mul(u, u).to_vector<uint16_t>()[0], 1);  // 65535^2 mod 2^16
}

TEST(Binary, MaxMinNaNAndBool) {
  for (DType d : kFloats) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Array x = from_doubles({5}, d, {NAN, 1, NAN, -INFINITY, 2});
    Array y = from_doubles({5}, d, {1, NAN, NAN, 3, INFINITY});
    const auto mx = to_doubles(lax::max(x, y)), mn = to_doubles(lax::min(x, y));
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(std::isnan(mx[i])) << i;
      EXPECT_TRUE(std::isnan(mn[i])) << i;
    }
    EXPECT_EQ(mx[3], 3);
    EXPECT_EQ(mn[3], -INFINITY);
    EXPECT_EQ(mx[4], INFINITY);
    EXPECT_EQ(mn[4], 2);
    // Rank-0 NaN broadcast against an array.
    const auto b = to_doubles(lax::max(from_doubles({}, d, {NAN}), y));
    for (double v : b) EXPECT_TRUE(std::isnan(v));
  }
  Array p = from_doubles({4}, DType::kBool, {0, 0, 1, 1});
  Array q = from_doubles({4}, DType::kBool, {0, 1, 0, 1});
  EXPECT_EQ(to_doubles(lax::max(p, q)), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(to_doubles(lax::min(p, q)), (std::vector<double>{0, 0, 0, 1}));
}

TEST(Binary, FloatSpecialValues) {
  for (DType d : kFloats) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Array x = from_doubles({6}, d, {1, -1, 0, INFINITY, NAN, 0});
    Array y = from_doubles({6}, d, {0, 0, 0, INFINITY, 1, -0.0});
    const auto q = to_doubles(lax::div(x, y));
    EXPECT_EQ(q[0], INFINITY);
    EXPECT_EQ(q[1], -INFINITY);
    EXPECT_TRUE(std::isnan(q[2]));
    EXPECT_TRUE(std::isnan(q[3]));
    EXPECT_TRUE(std::isnan(q[4]));
    EXPECT_TRUE(std::isnan(to_doubles(lax::sub(x, y))[3]));  // inf - inf
    const auto pw =
        to_doubles(lax::pow(from_doubles({3}, d, {-2, 0, 2}), from_doubles({3}, d, {0.5, -1, 10})));
    EXPECT_TRUE(std::isnan(pw[0]));
    EXPECT_EQ(pw[1], INFINITY);
    EXPECT_EQ(pw[2], round_to(d, 1024));
  }
}

TEST(Binary, Errors) {
  Array f3 = random_array({3}, DType::kFloat32), i3 = random_array({3}, DType::kInt32);
  EXPECT_EQ(error_of<TypeError>([&] { lax::add(f3, i3); }),
            "[add] operands must have the same dtype, got f32[3] and i32[3]; convert with "
            "convert_element_type or use tessera::numpy which promotes");
  EXPECT_EQ(error_of<TypeError>([&] {
              lax::add(f3, random_array({2, 3}, DType::kFloat32));
            }),
            "[add] got arrays of different rank: (3,), (2, 3)");
  EXPECT_EQ(error_of<TypeError>([&] { lax::mul(f3, random_array({4}, DType::kFloat32)); }),
            "[mul] got incompatible shapes for broadcasting: (3,), (4,)");
  EXPECT_NE(error_of<TypeError>([&] {
              lax::max(random_array({0}, DType::kFloat32), f3);
            }).find("incompatible shapes for broadcasting: (0,), (3,)"),
            std::string::npos);
  Array b3 = random_array({3}, DType::kBool);
  EXPECT_NE(error_of<TypeError>([&] { lax::add(b3, b3); }).find("[add] does not accept dtype bool"),
            std::string::npos);
  const std::string pw = error_of<TypeError>([&] { lax::pow(i3, i3); });
  EXPECT_NE(pw.find("[pow] requires floating operands, got i32[3] and i32[3]"), std::string::npos);
  EXPECT_NE(pw.find("integer_pow"), std::string::npos);
  EXPECT_NE(error_of<TypeError>([&] {
              bind1(prims::add, {f3});
            }).find("[add] add takes exactly 2 operands, got 1"),
            std::string::npos);
}

TEST(Binary, EmptyAndRankZero) {
  for (DType d : {DType::kFloat32, DType::kInt8, DType::kBFloat16}) {
    Array e = lax::add(random_array({0, 4}, d), random_array({}, d));
    EXPECT_EQ(e.shape(), (Shape{0, 4}));
    Array s = lax::mul(random_array({}, d), random_array({}, d));
    EXPECT_EQ(s.shape(), Shape{});
    EXPECT_EQ(lax::sub(random_array({3, 0}, d), random_array({1, 0}, d)).shape(), (Shape{3, 0}));
  }
}

// Inputs that are only 16-byte aligned (NumPy/DLPack memory) must work.
TEST(Binary, SixteenByteAlignedInputs) {
  std::vector<float> host(64 + 4 + 64 + 4);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f - 10.0f;
  std::shared_ptr<void> own = std::make_shared<int>(0);
  float* base = host.data();
  while (reinterpret_cast<uintptr_t>(base) % 32 != 16) ++base;  // 16- but not 32-aligned
  Array x(Aval{{61}, DType::kFloat32, false},
          Buffer::external(cpu_device(), base, 61 * sizeof(float), own));
  Array y = random_array({61}, DType::kFloat32);
  check_binary(Bin::kAdd, x, y);
  const auto t = to_doubles(lax::tanh(x));
  for (int i = 0; i < 61; ++i) EXPECT_NEAR(t[i], std::tanh(double(base[i])), 1e-6);
}

// ---------------------------------------------------------------- unary

enum class Un { kNeg, kExp, kLog, kSin, kCos, kTanh, kLogistic, kSqrt };
const char* un_name(Un op) {
  const char* n[] = {"neg", "exp", "log", "sin", "cos", "tanh", "logistic", "sqrt"};
  return n[static_cast<int>(op)];
}
Array apply(Un op, const Array& x) {
  Array (*const fns[])(const Array&) = {lax::neg, lax::exp,  lax::log,      lax::sin,
                                        lax::cos, lax::tanh, lax::logistic, lax::sqrt};
  return fns[static_cast<int>(op)](x);
}
double ref_unary(Un op, double x) {
  const double rs[] = {-x,
                       std::exp(x),
                       std::log(x),
                       std::sin(x),
                       std::cos(x),
                       std::tanh(x),
                       1.0 / (1.0 + std::exp(-x)),
                       std::sqrt(x)};
  return rs[static_cast<int>(op)];
}
const Un kUns[] = {Un::kNeg, Un::kExp,  Un::kLog,      Un::kSin,
                   Un::kCos, Un::kTanh, Un::kLogistic, Un::kSqrt};

TEST(Unary, FloatingOpsEveryFloatDtype) {
  for (Un op : kUns) {
    for (DType d : kFloats) {
      SCOPED_TRACE(std::string(un_name(op)) + " " + std::string(dtype_name(d)));
      const bool positive = op == Un::kLog || op == Un::kSqrt;
      // f16 overflows exp beyond ~11; the others take a wide range.
      const double span = d == DType::kFloat16 ? 10.0 : 80.0;
      for (auto [lo, hi] :
           {std::pair{positive ? 1e-3 : -3.0, 3.0}, std::pair{positive ? 1e-3 : -span, span}}) {
        Array x = random_array({1000}, d, lo, hi);
        Array r = apply(op, x);
        ASSERT_EQ(r.aval(), x.aval());
        const auto xs = to_doubles(x);
        std::vector<double> want(xs.size());
        for (size_t i = 0; i < xs.size(); ++i) want[i] = round_to(d, ref_unary(op, xs[i]));
        Tol t = tol(d);
        // sin/cos of large arguments: libm's float versions are within 1 ulp.
        EXPECT_EQ(compare(to_doubles(r), want, t.rtol, t.atol), "") << "range " << hi;
      }
    }
  }
}

TEST(Unary, SpecialValues) {
  // -1 is special for log and sqrt (NaN); for the others it is an ordinary value.
  const std::vector<double> xs = {0.0, -0.0, INFINITY, -INFINITY, NAN, -1.0};
  for (DType d : kFloats) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Array x = from_doubles({6}, d, xs);
    for (Un op : kUns) {
      SCOPED_TRACE(un_name(op));
      const auto got = to_doubles(apply(op, x));
      for (size_t i = 0; i < xs.size(); ++i) {
        const double want = round_to(d, ref_unary(op, xs[i]));
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got[i])) << xs[i];
        } else if (xs[i] == -1.0) {
          EXPECT_NEAR(got[i], want, tol(d).rtol * std::fabs(want)) << xs[i];
        } else {
          EXPECT_EQ(got[i], want) << xs[i];
          EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << "sign at " << xs[i];
        }
      }
    }
  }
}

TEST(Unary, NegEveryNumericDtype) {
  for (DType d : kAll) {
    if (is_bool(d)) continue;
    SCOPED_TRACE(std::string(dtype_name(d)));
    Array x = random_array({37}, d);
    const auto xs = to_doubles(x), got = to_doubles(lax::neg(x));
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = is_floating(d) ? -xs[i] : wrap_int(d, -static_cast<int64_t>(xs[i]));
      EXPECT_EQ(got[i], want) << xs[i];
    }
  }
  Array m = array_from_host(Aval{{2}, DType::kInt32, false},
                            std::vector<int32_t>{INT32_MIN, INT32_MAX}.data());
  EXPECT_EQ(lax::neg(m).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, -INT32_MAX}));
}

TEST(Unary, IntegerPow) {
  for (DType d : kAll) {
    if (is_bool(d)) continue;
    for (int64_t y : {0, 1, 2, 3, 5, 8, 13, -1, -2, -3}) {
      if (y < 0 && !is_floating(d)) continue;
      SCOPED_TRACE(std::string(dtype_name(d)) + " y=" + std::to_string(y));
      Array x = random_array({29}, d, 0.5, 1.6);
      Array r = lax::integer_pow(x, y);
      ASSERT_EQ(r.aval(), x.aval());
      const auto xs = to_doubles(x), got = to_doubles(r);
      std::vector<double> want(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) {
        if (is_floating(d)) {
          want[i] = round_to(d, std::pow(xs[i], static_cast<double>(y)));
        } else {
          uint64_t acc = 1;  // exact modulo 2^64, then wrapped to the dtype
          for (int64_t k = 0; k < y; ++k) acc *= static_cast<uint64_t>(static_cast<int64_t>(xs[i]));
          want[i] = wrap_int(d, static_cast<int64_t>(acc));
        }
      }
      // Repeated squaring rounds at each step: a few ulp for y up to 13.
      Tol t = tol(d);
      EXPECT_EQ(compare(got, want, t.rtol * 8, t.atol), "");
    }
  }
  // x^0 == 1 everywhere (NaN included), as XLA's repeated squaring gives.
  const auto z = to_doubles(lax::integer_pow(from_doubles({2}, DType::kFloat32, {NAN, 0}), 0));
  EXPECT_EQ(z, (std::vector<double>{1, 1}));
  EXPECT_EQ(to_doubles(lax::integer_pow(from_doubles({1}, DType::kFloat32, {0}), -1))[0], INFINITY);
}

TEST(Unary, Errors) {
  Array i3 = random_array({3}, DType::kInt32);
  EXPECT_NE(error_of<TypeError>([&] {
              lax::exp(i3);
            }).find("[exp] requires a floating dtype, got i32[3]"),
            std::string::npos);
  for (Un op : kUns) {
    if (op == Un::kNeg) continue;
    EXPECT_NE(error_of<TypeError>([&] {
                apply(op, random_array({2}, DType::kUInt8));
              }).find(std::string("[") + un_name(op) + "] requires a floating dtype"),
              std::string::npos);
  }
  EXPECT_NE(error_of<TypeError>([&] {
              lax::neg(random_array({2}, DType::kBool));
            }).find("[neg] does not accept dtype bool"),
            std::string::npos);
  const std::string ip = error_of<TypeError>([&] { lax::integer_pow(i3, -2); });
  EXPECT_NE(ip.find("[integer_pow] integers cannot be raised to negative powers, got i32[3]"),
            std::string::npos);
  EXPECT_NE(error_of<TypeError>([&] {
              lax::integer_pow(random_array({2}, DType::kBool), 2);
            }).find("[integer_pow] does not accept dtype bool"),
            std::string::npos);
}

TEST(Unary, EmptyRankZeroWeak) {
  Array s = weak(random_array({}, DType::kFloat32));
  Array r = lax::tanh(s);
  EXPECT_EQ(r.aval(), s.aval());  // weak flag kept
  EXPECT_NEAR(r.item<double>(), std::tanh(s.item<double>()), 1e-6);
  EXPECT_EQ(lax::exp(random_array({0, 3}, DType::kFloat16)).shape(), (Shape{0, 3}));
  EXPECT_EQ(lax::integer_pow(random_array({0}, DType::kInt8), 3).shape(), Shape{0});
}

// Max error in float32 ulps of f over the float bit patterns between lo and hi (both signs when
// sym), sampled every `step` patterns, against ref in double.
double max_ulp_error(const std::function<Array(const Array&)>& f, double (*ref)(double), float lo,
                     float hi, uint32_t step, float* worst) {
  std::vector<float> xs;
  for (uint64_t b = std::bit_cast<uint32_t>(lo); b <= std::bit_cast<uint32_t>(hi); b += step) {
    xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  }
  xs.push_back(hi);
  Array x = array_from_host(Aval{{int64_t(xs.size())}, DType::kFloat32, false}, xs.data());
  const auto got = f(x).to_vector<float>();
  double err = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = ref(xs[i]);
    double e;
    if (std::isnan(want) || std::isinf(want) || std::isinf(float(want))) {
      e = (std::isnan(want) ? std::isnan(got[i]) : got[i] == float(want)) ? 0 : 1e9;
    } else {
      int ex;
      std::frexp(want, &ex);  // want = m * 2^ex, m in [0.5, 1)
      const double ulp = std::ldexp(1.0, std::max(ex - 24, -149));
      e = std::fabs(double(got[i]) - want) / ulp;
    }
    if (e > err) {
      err = e;
      *worst = xs[i];
    }
  }
  return err;
}

double ref_logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double ref_tanh(double x) { return std::tanh(x); }
double ref_exp(double x) { return std::exp(x); }
double ref_log(double x) { return std::log(x); }

// Dense sweeps of the vectorized float32 functions (every 61st..997th bit pattern).
TEST(Unary, Float32AccuracySweep) {
  float worst = 0;
  // tanh over [-20, 20]; the small patterns are the subnormals and tiny values.
  double e = max_ulp_error(lax::tanh, ref_tanh, 0.0f, 20.0f, 211, &worst);
  EXPECT_LE(e, 4.0) << "tanh at " << worst;
  e = max_ulp_error([&](const Array& x) { return lax::tanh(lax::neg(x)); },
                    [](double x) { return -std::tanh(x); }, 0.0f, 20.0f, 223, &worst);
  EXPECT_LE(e, 4.0) << "tanh at " << -worst;
  e = max_ulp_error(lax::logistic, ref_logistic, 0.0f, 100.0f, 211, &worst);
  EXPECT_LE(e, 4.0) << "logistic at " << worst;
  e = max_ulp_error([&](const Array& x) { return lax::logistic(lax::neg(x)); },
                    [](double x) { return ref_logistic(-x); }, 0.0f, 100.0f, 211, &worst);
  EXPECT_LE(e, 4.0) << "logistic at " << -worst;
  e = max_ulp_error(lax::exp, ref_exp, 0.0f, 89.0f, 211, &worst);
  EXPECT_LE(e, 2.0) << "exp at " << worst;
  e = max_ulp_error([&](const Array& x) { return lax::exp(lax::neg(x)); },
                    [](double x) { return std::exp(-x); }, 0.0f, 105.0f, 211, &worst);
  EXPECT_LE(e, 2.0) << "exp at " << -worst;
  // sin/cos: the reduced range (|x| <= 131072), then libm beyond it.
  for (float s : {1.0f, -1.0f}) {
    auto scaled = [s](const Array& x) { return s > 0 ? x : lax::neg(x); };
    e = max_ulp_error(
        [&](const Array& x) { return lax::sin(scaled(x)); },
        s > 0 ? +[](double x) { return std::sin(x); } : +[](double x) { return std::sin(-x); },
        0.0f, 3e5f, 499, &worst);
    EXPECT_LE(e, 2.0) << "sin at " << s * worst;
    e = max_ulp_error([&](const Array& x) { return lax::cos(scaled(x)); },
                      +[](double x) { return std::cos(x); }, 0.0f, 3e5f, 499, &worst);
    EXPECT_LE(e, 2.0) << "cos at " << s * worst;
  }
  e = max_ulp_error(
      lax::sin, +[](double x) { return std::sin(x); }, 1e5f, 3e38f, 100003, &worst);
  EXPECT_LE(e, 2.0) << "sin at " << worst;
  // log over every positive float: subnormals, normals, inf.
  e = max_ulp_error(lax::log, ref_log, 0.0f, INFINITY, 397, &worst);
  EXPECT_LE(e, 2.0) << "log at " << worst;
}

// The library runs float32 kernels compiled for x86-64-v3 or v4 (AVX-512 clones); this test
// binary compiles the same vec_math.h functions for baseline x86-64. All must agree bitwise.
TEST(Unary, Float32KernelsMatchPortableBuild) {
  std::vector<float> xs;
  std::uniform_real_distribution<float> wide(-120.0f, 120.0f);
  for (int i = 0; i < 200000; ++i) xs.push_back(wide(rng()));
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) xs.push_back(std::bit_cast<float>(bits(rng())));
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, 131072.0f, 131073.0f}) {
    xs.push_back(v);
  }
  Array x = array_from_host(Aval{{int64_t(xs.size())}, DType::kFloat32, false}, xs.data());
  namespace vm = kernels::vmath;
  const std::pair<const char*, std::function<float(float)>> fns[] = {
      {"exp", [](float v) { return vm::exp(v); }},
      {"log", [](float v) { return vm::log(v); }},
      {"tanh", [](float v) { return vm::tanh(v); }},
      {"logistic", [](float v) { return vm::logistic(v); }},
      {"sin",
       [](float v) {
         return std::fabs(v) <= vm::kTrigMax ? vm::sincos_reduced<false>(v) : std::sin(v);
       }},
      {"cos", [](float v) {
         return std::fabs(v) <= vm::kTrigMax ? vm::sincos_reduced<true>(v) : std::cos(v);
       }}};
  const Array got[] = {lax::exp(x),      lax::log(x), lax::tanh(x),
                       lax::logistic(x), lax::sin(x), lax::cos(x)};
  for (int k = 0; k < 6; ++k) {
    const auto g = got[k].to_vector<float>();
    int64_t bad = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float w = fns[k].second(xs[i]);
      if (std::bit_cast<uint32_t>(g[i]) != std::bit_cast<uint32_t>(w) &&
          !(std::isnan(g[i]) && std::isnan(w))) {
        if (bad++ < 3)
          ADD_FAILURE() << fns[k].first << "(" << xs[i] << "): " << g[i] << " vs " << w;
      }
    }
    EXPECT_EQ(bad, 0) << fns[k].first;
  }
}

// ---------------------------------------------------------------- compare

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };
Array apply(Cmp op, const Array& x, const Array& y) {
  const BinaryFn fns[] = {lax::eq, lax::ne, lax::lt, lax::le, lax::gt, lax::ge};
  return fns[static_cast<int>(op)](x, y);
}
bool ref_cmp(Cmp op, double a, double b) {
  const bool rs[] = {a == b, a != b, a<b, a <= b, a> b, a >= b};
  return rs[static_cast<int>(op)];
}

TEST(Compare, EveryOpEveryDtypeWithBroadcasting) {
  const std::pair<Shape, Shape> shapes[] = {
      {{6, 7}, {6, 7}}, {{3, 1}, {1, 4}}, {{}, {2, 3}}, {{2, 0}, {2, 1}}, {{}, {}}};
  for (Cmp op : {Cmp::kEq, Cmp::kNe, Cmp::kLt, Cmp::kLe, Cmp::kGt, Cmp::kGe}) {
    for (DType d : kAll) {
      for (const auto& [sa, sb] : shapes) {
        SCOPED_TRACE(std::to_string(int(op)) + " " + std::string(dtype_name(d)));
        // Few distinct values so that equality happens.
        Array x = random_array(sa, d, -2, 2), y = random_array(sb, d, -2, 2);
        if (is_floating(d)) {
          x = lax::convert_element_type(lax::convert_element_type(x, DType::kInt8), d);
          y = lax::convert_element_type(lax::convert_element_type(y, DType::kInt8), d);
        }
        Array r = apply(op, x, y);
        const Shape out = bcast_shape(sa, sb);
        ASSERT_EQ(r.aval(), (Aval{out, DType::kBool, false}));
        const auto xs = to_doubles(x), ys = to_doubles(y), got = to_doubles(r);
        for (int64_t i = 0; i < shape_size(out); ++i) {
          const bool want = ref_cmp(op, xs[bcast_index(out, sa, i)], ys[bcast_index(out, sb, i)]);
          ASSERT_EQ(got[i], want ? 1.0 : 0.0) << i;
        }
      }
    }
  }
}

TEST(Compare, NaNAndErrors) {
  for (DType d : kFloats) {
    Array x = from_doubles({3}, d, {NAN, 1, NAN});
    Array y = from_doubles({3}, d, {1, NAN, NAN});
    for (Cmp op : {Cmp::kEq, Cmp::kLt, Cmp::kLe, Cmp::kGt, Cmp::kGe}) {
      EXPECT_EQ(to_doubles(apply(op, x, y)), (std::vector<double>{0, 0, 0}));
    }
    EXPECT_EQ(to_doubles(lax::ne(x, y)), (std::vector<double>{1, 1, 1}));
  }
  EXPECT_NE(error_of<TypeError>([] {
              lax::lt(random_array({3}, DType::kFloat32), random_array({3}, DType::kFloat16));
            }).find("[lt] operands must have the same dtype, got f32[3] and f16[3]"),
            std::string::npos);
  EXPECT_NE(error_of<TypeError>([] {
              lax::eq(random_array({2}, DType::kInt8), random_array({3}, DType::kInt8));
            }).find("[eq] got incompatible shapes for broadcasting: (2,), (3,)"),
            std::string::npos);
}

// ---------------------------------------------------------------- select_n

TEST(Select, BoolWhichEveryDtype) {
  for (DType d : kAll) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Array w = random_array({4, 9}, DType::kBool);
    Array a = random_array({4, 9}, d), b = random_array({4, 9}, d);
    Array r = lax::select_n(w, {a, b});
    ASSERT_EQ(r.aval(), a.aval());
    const auto ws = to_doubles(w), as = to_doubles(a), bs = to_doubles(b), got = to_doubles(r);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], ws[i] ? bs[i] : as[i]);
  }
}

TEST(Select, IntWhichClampsAndRankZero) {
  for (DType wd : {DType::kInt32, DType::kUInt8, DType::kInt64}) {
    SCOPED_TRACE(std::string(dtype_name(wd)));
    Array w = random_array({50}, wd);  // values in [-50, 50]: most out of range, clamped
    std::vector<Array> cs;
    for (int k = 0; k < 3; ++k) cs.push_back(random_array({50}, DType::kFloat64));
    Array r = lax::select_n(w, cs);
    const auto ws = to_doubles(w), got = to_doubles(r);
    for (size_t i = 0; i < got.size(); ++i) {
      const int k = static_cast<int>(std::clamp(ws[i], 0.0, 2.0));
      EXPECT_EQ(got[i], to_doubles(cs[k])[i]);
    }
    // Two cases with an integer which: negative selects case 0, >= 1 case 1.
    Array r2 = lax::select_n(w, {cs[0], cs[1]});
    const auto got2 = to_doubles(r2);
    for (size_t i = 0; i < got2.size(); ++i) {
      EXPECT_EQ(got2[i], to_doubles(cs[ws[i] >= 1 ? 1 : 0])[i]);
    }
  }
  // Rank-0 which picks a whole case (sharing its buffer).
  Array a = random_array({2, 3}, DType::kInt16), b = random_array({2, 3}, DType::kInt16);
  Array r = lax::select_n(from_doubles({}, DType::kBool, {1}), {a, b});
  EXPECT_TRUE(same_bytes(r, b));
  EXPECT_EQ(r.raw_data(), b.raw_data());
  Array r7 = lax::select_n(from_doubles({}, DType::kInt32, {7}), {a, b});
  EXPECT_TRUE(same_bytes(r7, b));
  EXPECT_TRUE(same_bytes(lax::select_n(random_array({2, 3}, DType::kInt32), {a}), a));
  // Weak result only when every case is weak.
  EXPECT_TRUE(lax::select_n(from_doubles({}, DType::kBool, {0}), {weak(a), weak(b)}).weak_type());
  EXPECT_FALSE(lax::select_n(random_array({2, 3}, DType::kBool), {weak(a), b}).weak_type());
  EXPECT_EQ(lax::select_n(random_array({0}, DType::kBool),
                          {random_array({0}, DType::kFloat32), random_array({0}, DType::kFloat32)})
                .shape(),
            Shape{0});
}

TEST(Select, Errors) {
  Array f3 = random_array({3}, DType::kFloat32);
  Array w = random_array({3}, DType::kBool);
  EXPECT_NE(error_of<TypeError>([&] {
              lax::select_n(w, {f3, random_array({3}, DType::kInt32)});
            }).find("[select_n] cases must have the same shape and dtype, got f32[3] and i32[3]"),
            std::string::npos);
  EXPECT_NE(error_of<TypeError>([&] {
              lax::select_n(w, {f3, random_array({4}, DType::kFloat32)});
            }).find("got f32[3] and f32[4]"),
            std::string::npos);
  EXPECT_NE(error_of<TypeError>([&] {
              lax::select_n(f3, {f3, f3});
            }).find("[select_n] `which` must be a bool or integer array, got f32[3]"),
            std::string::npos);
  EXPECT_NE(error_of<TypeError>([&] {
              lax::select_n(w, {f3, f3, f3});
            }).find("at most 2 cases"),
            std::string::npos);
  EXPECT_NE(error_of<TypeError>([&] {
              lax::select_n(random_array({2}, DType::kBool), {f3, f3});
            }).find("`which` must be scalar or have the cases' shape"),
            std::string::npos);
  EXPECT_NE(error_of<TypeError>([&] { lax::select_n(w, {}); }).find("at least one case"),
            std::string::npos);
}

// ---------------------------------------------------------------- convert_element_type

Array convert(const Array& x, DType d, bool weak_type = false) {
  return bind1(prims::convert_element_type, {x},
               Params{{"new_dtype", d}, {"weak_type", weak_type}});
}

TEST(Convert, EveryPair) {
  for (DType from : kAll) {
    for (DType to : kAll) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
      Array x = random_array({3, 41}, from, -300, 300);
      Array r = convert(x, to);
      ASSERT_EQ(r.aval(), (Aval{{3, 41}, to, false}));
      const auto xs = to_doubles(x), got = to_doubles(r);
      for (size_t i = 0; i < xs.size(); ++i) {
        double want;
        if (is_bool(to)) {
          want = xs[i] != 0;
        } else if (is_integer(to) && is_integer(from)) {
          want = wrap_int(to, static_cast<int64_t>(xs[i]));
        } else {
          want = round_to(to, is_integer(to) ? std::trunc(xs[i]) : xs[i]);  // saturating
        }
        ASSERT_EQ(got[i], want) << xs[i];
      }
    }
  }
}

TEST(Convert, FloatToIntSaturatesAndNaNIsZero) {
  for (DType from : kFloats) {
    SCOPED_TRACE(std::string(dtype_name(from)));
    const std::vector<double> xs = {NAN,   INFINITY, -INFINITY, 1e30, -1e30,
                                    -1.75, 1.75,     300.5,     -0.5, 65504};
    Array x = from_doubles({int64_t(xs.size())}, from, xs);
    const auto xr = to_doubles(x);  // as stored in the source dtype
    for (DType to : kInts) {
      SCOPED_TRACE(std::string(dtype_name(to)));
      const auto got = to_doubles(convert(x, to));
      const IInfo ii = iinfo(to);
      for (size_t i = 0; i < xr.size(); ++i) {
        double want;
        if (std::isnan(xr[i]))
          want = 0;
        else if (std::trunc(xr[i]) >= static_cast<double>(ii.max))
          want = static_cast<double>(ii.max);
        else if (std::trunc(xr[i]) <= static_cast<double>(ii.min))
          want = static_cast<double>(ii.min);
        else
          want = std::trunc(xr[i]);
        EXPECT_EQ(got[i], want) << xr[i];
      }
    }
  }
  // Exact int64 saturation (no double round-trip in the check).
  Array big = from_doubles({3}, DType::kFloat64, {9.3e18, -9.3e18, 9.2233720368547e18});
  const auto v = convert(big, DType::kInt64).to_vector<int64_t>();
  EXPECT_EQ(v[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(v[1], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(v[2], 9223372036854700032LL);
  EXPECT_EQ(convert(from_doubles({1}, DType::kFloat32, {4294967296.0}), DType::kUInt32)
                .to_vector<uint32_t>()[0],
            UINT32_MAX);
}

TEST(Convert, RoundingToSixteenBitFloats) {
  // float32 -> f16 / bf16 round to nearest even.
  const std::vector<float> fs = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
                                 1.0f + 0x1p-8f,  1.0f + 3 * 0x1p-8f,
                                 65519.0f,        65520.0f,
                                 1e-8f,           -2.5f};
  Array x = array_from_host(Aval{{int64_t(fs.size())}, DType::kFloat32, false}, fs.data());
  const auto h = to_doubles(convert(x, DType::kFloat16));
  const auto b = to_doubles(convert(x, DType::kBFloat16));
  const std::vector<double> want_h = {1.0,     1.0 + 0x1p-9, 1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8,
                                      65504.0, INFINITY,     0.0,          -2.5};
  EXPECT_EQ(h, want_h);
  EXPECT_EQ(b[2], 1.0);           // tie -> even
  EXPECT_EQ(b[3], 1.0 + 0x1p-6);  // tie -> even (up)
  EXPECT_EQ(b[4], 65536.0);
  // Integers -> bf16 round once: 2^24 + 2^16 + 1 is just above a bf16 midpoint.
  const int64_t v = (int64_t{1} << 24) + (int64_t{1} << 16) + 1;
  for (DType from : {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}) {
    Array i = from_doubles({2}, from, {double(v), double(int64_t{1} << 24) + double(1 << 16)});
    const auto r = to_doubles(convert(i, DType::kBFloat16));
    EXPECT_EQ(r[0], double((int64_t{1} << 24) + (int64_t{1} << 17))) << dtype_name(from);
    EXPECT_EQ(r[1], double(int64_t{1} << 24)) << dtype_name(from);  // exact tie -> even
  }
  // f64 -> f16 rounds once (not through float32).
  const double d = 1.0 + 0x1p-11 + 0x1p-40;  // above the midpoint only beyond float precision
  EXPECT_EQ(to_doubles(convert(from_doubles({1}, DType::kFloat64, {d}), DType::kFloat16))[0],
            1.0 + 0x1p-10);
}

TEST(Convert, ZeroCopyAndWeak) {
  Array x = random_array({4}, DType::kFloat32);
  EXPECT_TRUE(convert(x, DType::kFloat32).is(x));
  Array w = convert(x, DType::kFloat32, true);
  EXPECT_TRUE(w.weak_type());
  EXPECT_EQ(w.raw_data(), x.raw_data());
  EXPECT_TRUE(convert(random_array({4}, DType::kInt32), DType::kFloat32, true).weak_type());
  // lax.convert_element_type: strong result, dtype canonicalized to the 32-bit mode.
  EXPECT_FALSE(lax::convert_element_type(weak(x), DType::kFloat32).weak_type());
  if (!x64_enabled()) {
    EXPECT_EQ(lax::convert_element_type(x, DType::kFloat64).dtype(), DType::kFloat32);
  }
  Array b = from_doubles({4}, DType::kFloat32, {0.0, -0.0, NAN, 0.25});
  EXPECT_EQ(to_doubles(convert(b, DType::kBool)), (std::vector<double>{0, 0, 1, 1}));
  EXPECT_NE(error_of<TypeError>([&] {
              convert(x, DType::kFloat0);
            }).find("[convert_element_type] cannot convert f32[4]"),
            std::string::npos);
}

// ---------------------------------------------------------------- threads

// > 1M elements: the pooled path must give the single-thread bytes.
TEST(Threads, LargeArraysBitwiseEqualAcrossThreadCounts) {
  const int64_t n = (1 << 20) + 12345;
  Array xf = random_array({n}, DType::kFloat32, -5, 5);
  Array yf = random_array({n}, DType::kFloat32, -5, 5);
  Array xh = random_array({n}, DType::kBFloat16, -5, 5);
  Array row = random_array({1, 1031}, DType::kFloat32);
  Array col = random_array({1100, 1}, DType::kFloat32);
  Array xi = random_array({n}, DType::kInt32);
  Array wb = random_array({n}, DType::kBool);
  std::vector<std::function<Array()>> fns = {
      [&] { return lax::tanh(xf); },
      [&] { return lax::exp(xh); },
      [&] { return lax::logistic(xf); },
      [&] { return lax::log(lax::max(xf, yf)); },
      [&] { return lax::add(xf, yf); },
      [&] { return lax::mul(row, col); },
      [&] { return lax::div(xi, lax::integer_pow(xi, 1)); },
      [&] { return lax::integer_pow(xf, -3); },
      [&] { return lax::lt(xf, yf); },
      [&] {
        return lax::select_n(wb, {xf, yf});
      },
      [&] { return lax::convert_element_type(xf, DType::kFloat16); },
      [&] { return lax::sqrt(xf); },
  };
  for (size_t k = 0; k < fns.size(); ++k) {
    Array one, two;
    {
      Threads t(1);
      one = fns[k]();
    }
    {
      Threads t(2);
      two = fns[k]();
    }
    EXPECT_TRUE(same_bytes(one, two)) << "function " << k;
  }
  // And the threaded broadcast result is right.
  Threads t(2);
  check_binary(Bin::kMul, row, col);
  const auto th = lax::tanh(xf).to_vector<float>();
  const auto xs = xf.to_vector<float>();
  for (int64_t i = 0; i < n; i += 4099) EXPECT_NEAR(th[i], std::tanh(double(xs[i])), 1e-6);
}

}  // namespace
}  // namespace tessera
