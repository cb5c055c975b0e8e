// Edge cases of src/prims/bitwise.cpp beyond the sweep (tests/cpp/util/sweep_rows_bitwise.cpp):
// XLA's shift semantics at and beyond the bit width on every integer dtype (against references
// written with multiplication and floor division, not shifts), counts of 0/-1/MIN, bool logic,
// the dtype/shape errors, bit-exact bitcasts of special floats, reduce_precision against
// convert_element_type rounding (bit for bit on normal values) and at its special values, its
// JVP/transpose rules, zero tangents, jaxpr text and threaded kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/thread_pool.h"
#include "tessera/tessera.h"
#include "tessera/transforms_flat.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::rng;
using testing::Threads;
using testing::X64Scope;

// ---------------------------------------------------------------- helpers

template <class T>
Array host(const std::vector<T>& v, const Shape& s, DType d, bool weak = false) {
  return array_from_host(Aval{s, d, weak}, v.data());
}
template <class T>
std::vector<T> values(const Array& a) {
  std::vector<T> out(static_cast<size_t>(a.size()));
  if (!out.empty()) std::memcpy(out.data(), a.raw_data(), out.size() * sizeof(T));
  return out;
}
template <class T>
T bits_as(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
}

template <class T>
std::vector<T> random_bits(size_t n) {
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(rng()());
  return v;
}

// Edge values of T followed by random bit patterns.
template <class T>
std::vector<T> interesting(size_t n_random) {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0),
                      T(1),
                      T(2),
                      T(3),
                      static_cast<T>(-1),
                      static_cast<T>(-2),
                      L::min(),
                      L::max(),
                      static_cast<T>(L::min() + 1),
                      static_cast<T>(L::max() - 1)};
  for (T x : random_bits<T>(n_random)) v.push_back(x);
  return v;
}

// ---- independent references: bit patterns as unsigned __int128 arithmetic, no shifts of T.

using u128 = unsigned __int128;
using i128 = __int128;

template <class T>
constexpr int kW = static_cast<int>(sizeof(T) * 8);

template <class T>
u128 pattern(T x) {  // the bits of x as a number in [0, 2^w)
  using U = std::make_unsigned_t<T>;
  return static_cast<u128>(static_cast<U>(x));
}
template <class T>
T from_pattern(u128 p) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(p));  // modulo 2^w (C++20: defined for signed T)
}
u128 pow2(int k) {
  u128 p = 1;
  for (int i = 0; i < k; ++i) p *= 2;
  return p;
}
// XLA reads the amount as unsigned: in range iff its pattern is < w.
template <class T>
bool in_range(T s) {
  return pattern(s) < static_cast<u128>(kW<T>);
}
template <class T>
T ref_shl(T x, T s) {
  if (!in_range(s)) return T(0);
  return from_pattern<T>(pattern(x) * pow2(static_cast<int>(pattern(s))) % pow2(kW<T>));
}
template <class T>
T ref_shr_logical(T x, T s) {
  if (!in_range(s)) return T(0);
  return from_pattern<T>(pattern(x) / pow2(static_cast<int>(pattern(s))));
}
// Floor division of the two's-complement value of the bits (the top bit is the sign, whatever
// T's signedness); an out-of-range amount divides by 2^(w-1).
template <class T>
T ref_shr_arithmetic(T x, T s) {
  const int k = in_range(s) ? static_cast<int>(pattern(s)) : kW<T> - 1;
  const u128 p = pattern(x);
  const i128 v = p >= pow2(kW<T> - 1) ? static_cast<i128>(p) - static_cast<i128>(pow2(kW<T>))
                                      : static_cast<i128>(p);
  const i128 d = static_cast<i128>(pow2(k));
  const i128 q = v >= 0 ? v / d : -((-v + d - 1) / d);
  return from_pattern<T>(static_cast<u128>(q));
}
template <class T>
int ref_popcount(T x) {
  int c = 0;
  for (u128 p = pattern(x); p != 0; p /= 2) c += static_cast<int>(p % 2);
  return c;
}
template <class T>
int ref_clz(T x) {
  int c = 0;
  for (int b = kW<T> - 1; b >= 0 && (pattern(x) / pow2(b)) % 2 == 0; --b) ++c;
  return c;
}

// ---------------------------------------------------------------- shifts

// Every value (an (n, 1) column) against every amount (a (1, m) row): lax broadcasting.
template <class T>
void check_shifts() {
  X64Scope x64(sizeof(T) == 8);
  const DType d = dtype_of<T>();
  const std::vector<T> xs = interesting<T>(20);
  constexpr int w = kW<T>;
  std::vector<T> ss = {T(0),
                       T(1),
                       T(w - 1),
                       T(w),
                       T(w + 1),
                       T(2 * w),
                       static_cast<T>(-1),
                       static_cast<T>(-3),
                       T(w / 2),
                       T(w - 2),
                       std::numeric_limits<T>::min(),
                       std::numeric_limits<T>::max()};
  for (T s : random_bits<T>(6)) ss.push_back(s);
  const int64_t n = static_cast<int64_t>(xs.size()), m = static_cast<int64_t>(ss.size());
  const Array x = host(xs, {n, 1}, d), s = host(ss, {1, m}, d);
  struct Case {
    const char* name;
    Array (*op)(const Array&, const Array&);
    T (*ref)(T, T);
  };
  for (const Case& c :
       {Case{"shift_left", lax::shift_left, ref_shl<T>},
        Case{"shift_right_logical", lax::shift_right_logical, ref_shr_logical<T>},
        Case{"shift_right_arithmetic", lax::shift_right_arithmetic, ref_shr_arithmetic<T>}}) {
    const Array out = c.op(x, s);
    ASSERT_EQ(out.aval(), (Aval{{n, m}, d, false})) << c.name;
    const std::vector<T> got = values<T>(out);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        const T want = c.ref(xs[i], ss[j]);
        ASSERT_EQ(got[i * m + j], want)
            << c.name << " " << dtype_name(d) << ": x=" << +xs[i] << " s=" << +ss[j];
      }
  }
}

TEST(Shifts, FollowXlaOnEveryIntegerDtype) {
  check_shifts<int8_t>();
  check_shifts<int16_t>();
  check_shifts<int32_t>();
  check_shifts<int64_t>();
  check_shifts<uint8_t>();
  check_shifts<uint16_t>();
  check_shifts<uint32_t>();
  check_shifts<uint64_t>();
}

// XLA's documented answers at the edges, spelled out for int32 and uint32.
TEST(Shifts, EdgeAmountsOnInt32) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  auto one = [](Array (*op)(const Array&, const Array&), int32_t x, int32_t s) {
    return values<int32_t>(
        op(host<int32_t>({x}, {}, DType::kInt32), host<int32_t>({s}, {}, DType::kInt32)))[0];
  };
  auto shl = [&](int32_t x, int32_t s) { return one(lax::shift_left, x, s); };
  auto sra = [&](int32_t x, int32_t s) { return one(lax::shift_right_arithmetic, x, s); };
  auto srl = [&](int32_t x, int32_t s) { return one(lax::shift_right_logical, x, s); };
  EXPECT_EQ(shl(12345, 0), 12345);
  EXPECT_EQ(shl(1, 31), kMin);
  EXPECT_EQ(shl(3, 31), kMin);
  EXPECT_EQ(shl(1, 32), 0);
  EXPECT_EQ(shl(1, 40), 0);
  EXPECT_EQ(shl(1, -1), 0);
  EXPECT_EQ(sra(kMin, 1), kMin / 2);
  EXPECT_EQ(sra(kMin, 31), -1);
  EXPECT_EQ(sra(kMin, 32), -1);  // beyond the width: the sign fill
  EXPECT_EQ(sra(kMin, 40), -1);
  EXPECT_EQ(sra(kMin, -3), -1);
  EXPECT_EQ(sra(-7, 1), -4);  // floor, not truncation
  EXPECT_EQ(sra(kMax, 32), 0);
  EXPECT_EQ(sra(5, -1), 0);
  EXPECT_EQ(srl(kMin, 31), 1);  // signed values shift as unsigned bits
  EXPECT_EQ(srl(-1, 1), kMax);
  EXPECT_EQ(srl(-1, 31), 1);
  EXPECT_EQ(srl(-1, 32), 0);
  EXPECT_EQ(srl(-1, -3), 0);
  // shift_right_arithmetic on unsigned bits replicates the top bit (XLA's AShr).
  const Array u = host<uint32_t>({0x80000000u, 0x40000000u}, {2}, DType::kUInt32);
  const Array one_u = host<uint32_t>({1u}, {}, DType::kUInt32);
  EXPECT_EQ(values<uint32_t>(lax::shift_right_arithmetic(u, one_u)),
            (std::vector<uint32_t>{0xC0000000u, 0x20000000u}));
  EXPECT_EQ(
      values<uint32_t>(lax::shift_right_arithmetic(u, host<uint32_t>({32u}, {}, DType::kUInt32))),
      (std::vector<uint32_t>{0xFFFFFFFFu, 0u}));
}

// ---------------------------------------------------------------- counts and logic

template <class T>
void check_counts_and_logic() {
  X64Scope x64(sizeof(T) == 8);
  const DType d = dtype_of<T>();
  const std::vector<T> xs = interesting<T>(40), ys = interesting<T>(40);
  const int64_t n = static_cast<int64_t>(xs.size());
  const Array x = host(xs, {n}, d), y = host(ys, {n}, d);
  const std::vector<T> pc = values<T>(lax::population_count(x)), lz = values<T>(lax::clz(x));
  const std::vector<T> nt = values<T>(lax::bitwise_not(x));
  const std::vector<T> a = values<T>(lax::bitwise_and(x, y)), o = values<T>(lax::bitwise_or(x, y)),
                       xo = values<T>(lax::bitwise_xor(x, y));
  for (int64_t i = 0; i < n; ++i) {
    const u128 px = pattern(xs[i]), py = pattern(ys[i]);
    ASSERT_EQ(pc[i], T(ref_popcount(xs[i]))) << dtype_name(d) << " x=" << +xs[i];
    ASSERT_EQ(lz[i], T(ref_clz(xs[i]))) << dtype_name(d) << " x=" << +xs[i];
    ASSERT_EQ(nt[i], from_pattern<T>(pow2(kW<T>) - 1 - px)) << dtype_name(d);
    // and/or/xor bit by bit from the base-2 digits.
    u128 pa = 0, po = 0, pxo = 0;
    for (int b = kW<T> - 1; b >= 0; --b) {
      const int bx = static_cast<int>(px / pow2(b) % 2), by = static_cast<int>(py / pow2(b) % 2);
      pa = pa * 2 + static_cast<u128>(bx && by);
      po = po * 2 + static_cast<u128>(bx || by);
      pxo = pxo * 2 + static_cast<u128>(bx != by);
    }
    ASSERT_EQ(a[i], from_pattern<T>(pa)) << dtype_name(d);
    ASSERT_EQ(o[i], from_pattern<T>(po)) << dtype_name(d);
    ASSERT_EQ(xo[i], from_pattern<T>(pxo)) << dtype_name(d);
  }
  // The XLA-defined edges: clz(0) == width, popcount(-1) == width, popcount(MIN) == 1 (signed).
  EXPECT_EQ(lz[0], T(kW<T>));
  EXPECT_EQ(pc[4], T(kW<T>));
  EXPECT_EQ(lz[4], T(0));
  if constexpr (std::is_signed_v<T>) {
    EXPECT_EQ(pc[6], T(1));
  }
}

TEST(Counts, AndLogicOnEveryIntegerDtype) {
  check_counts_and_logic<int8_t>();
  check_counts_and_logic<int16_t>();
  check_counts_and_logic<int32_t>();
  check_counts_and_logic<int64_t>();
  check_counts_and_logic<uint8_t>();
  check_counts_and_logic<uint16_t>();
  check_counts_and_logic<uint32_t>();
  check_counts_and_logic<uint64_t>();
}

TEST(Logic, BoolTruthTablesAndWeakTypes) {
  const std::vector<uint8_t> a = {0, 0, 1, 1}, b = {0, 1, 0, 1};
  const Array x = host(a, {4}, DType::kBool), y = host(b, {4}, DType::kBool);
  EXPECT_EQ(values<uint8_t>(lax::bitwise_and(x, y)), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(values<uint8_t>(lax::bitwise_or(x, y)), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(values<uint8_t>(lax::bitwise_xor(x, y)), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(values<uint8_t>(lax::bitwise_not(x)), (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(lax::bitwise_and(x, y).dtype(), DType::kBool);
  // lax's weak-type rule: weak only when every operand is weak; unary ops keep it.
  const Array w = host<int32_t>({6}, {}, DType::kInt32, /*weak=*/true);
  const Array s = host<int32_t>({3}, {}, DType::kInt32);
  EXPECT_TRUE(lax::bitwise_and(w, w).weak_type());
  EXPECT_FALSE(lax::bitwise_and(w, s).weak_type());
  EXPECT_FALSE(lax::shift_left(s, w).weak_type());
  EXPECT_TRUE(lax::bitwise_not(w).weak_type());
  EXPECT_TRUE(lax::clz(w).weak_type());
  EXPECT_EQ(values<int32_t>(lax::bitwise_and(w, s))[0], 2);
}

TEST(Bitwise, DtypeAndShapeErrors) {
  const Array f = host<float>({1.0f, 2.0f, 3.0f}, {3}, DType::kFloat32);
  const Array i = host<int32_t>({1, 2, 3}, {3}, DType::kInt32);
  const Array u = host<uint32_t>({1, 2, 3}, {3}, DType::kUInt32);
  const Array i4 = host<int32_t>({1, 2, 3, 4}, {4}, DType::kInt32);
  const Array b = host<uint8_t>({1, 0, 1}, {3}, DType::kBool);
  EXPECT_ERROR(TypeError, lax::bitwise_and(f, f), "[and] does not accept dtype float32");
  EXPECT_ERROR(TypeError, lax::bitwise_and(f, f), "bitcast_convert_type");  // the hint
  EXPECT_ERROR(TypeError, lax::bitwise_not(f), "[not] does not accept dtype float32");
  EXPECT_ERROR(TypeError, lax::bitwise_or(i, u), "same dtype, got i32[3] and u32[3]");
  EXPECT_ERROR(TypeError, lax::bitwise_xor(i, i4), "(3,), (4,)");
  EXPECT_ERROR(TypeError, lax::shift_left(b, b), "[shift_left] does not accept dtype bool");
  EXPECT_ERROR(TypeError, lax::shift_right_logical(f, f), "accepted dtypes are integers");
  EXPECT_ERROR(TypeError, lax::population_count(b),
               "[population_count] does not accept dtype bool");
  EXPECT_ERROR(TypeError, lax::clz(f), "[clz] does not accept dtype float32");
}

// ---------------------------------------------------------------- bitcast_convert_type

TEST(Bitcast, KeepsEveryBitOfSpecialFloats) {
  const std::vector<uint32_t> pats = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu,
                                      0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u,
                                      0xFFC12345u, 0x3F800000u, 0x7F7FFFFFu};
  const Array u = host(pats, {static_cast<int64_t>(pats.size())}, DType::kUInt32);
  const Array f = lax::bitcast_convert_type(u, DType::kFloat32);
  EXPECT_EQ(f.aval(), (Aval{{11}, DType::kFloat32, false}));
  EXPECT_EQ(values<uint32_t>(f), pats);  // NaN payloads, signed zeros, denormals untouched
  EXPECT_EQ(values<uint32_t>(lax::bitcast_convert_type(f, DType::kUInt32)), pats);
  EXPECT_EQ(values<uint32_t>(lax::bitcast_convert_type(f, DType::kInt32)), pats);
  // float16 <-> int16 and bfloat16 <-> uint16 on NaN and denormal patterns.
  const std::vector<uint16_t> h = {0x0001, 0x8000, 0x7C00, 0x7E01, 0xFC00, 0x3C00, 0xFFFF};
  const Array hi = host(h, {7}, DType::kInt16);
  for (DType half : {DType::kFloat16, DType::kBFloat16}) {
    const Array hf = lax::bitcast_convert_type(hi, half);
    EXPECT_EQ(hf.dtype(), half);
    EXPECT_EQ(values<uint16_t>(hf), h);
    EXPECT_EQ(values<uint16_t>(lax::bitcast_convert_type(hf, DType::kUInt16)), h);
  }
  // bool -> bool is the identity (JAX allows only that for bool).
  const Array b = host<uint8_t>({1, 0}, {2}, DType::kBool);
  EXPECT_EQ(values<uint8_t>(lax::bitcast_convert_type(b, DType::kBool)),
            (std::vector<uint8_t>{1, 0}));
}

TEST(Bitcast, NarrowingAndWideningAreByteViews) {
  std::vector<float> xs = {1.0f, -2.5f, 3.0e-41f, std::numeric_limits<float>::infinity(),
                           0.1f, -0.0f};
  const Array x = host(xs, {2, 3}, DType::kFloat32, /*weak=*/true);
  const Array bytes = lax::bitcast_convert_type(x, DType::kUInt8);
  EXPECT_EQ(bytes.aval(), (Aval{{2, 3, 4}, DType::kUInt8, false}));  // weak type stripped
  std::vector<uint8_t> want(24);
  std::memcpy(want.data(), xs.data(), 24);  // the host's little-endian bytes
  EXPECT_EQ(values<uint8_t>(bytes), want);
  const Array back = lax::bitcast_convert_type(bytes, DType::kFloat32);
  EXPECT_EQ(back.aval(), (Aval{{2, 3}, DType::kFloat32, false}));
  EXPECT_EQ(std::memcmp(back.raw_data(), xs.data(), 24), 0);
  // Rank 0 narrows to (k,); the eager result shares the operand's bytes (no copy).
  {
    X64Scope x64;
    const Array s2 = host<double>({-1.5}, {}, DType::kFloat64);
    const Array halves = lax::bitcast_convert_type(s2, DType::kUInt16);
    EXPECT_EQ(halves.shape(), (Shape{4}));
    EXPECT_EQ(halves.raw_data(), s2.raw_data());
    const Array d = lax::bitcast_convert_type(halves, DType::kFloat64);
    EXPECT_EQ(values<double>(d), std::vector<double>{-1.5});
  }
  // Zero-size arrays keep their zero dims.
  const Array z = lax::bitcast_convert_type(host<float>({}, {0, 3}, DType::kFloat32), DType::kInt8);
  EXPECT_EQ(z.shape(), (Shape{0, 3, 4}));
  EXPECT_EQ(lax::bitcast_convert_type(z, DType::kFloat32).shape(), (Shape{0, 3}));
}

TEST(Bitcast, Errors) {
  const Array b = host<uint8_t>({1, 0, 1, 1}, {4}, DType::kBool);
  const Array u8 = host<uint8_t>({1, 2, 3, 4, 5, 6}, {3, 2}, DType::kUInt8);
  const Array f = host<float>({1.0f, 2.0f, 3.0f}, {3}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::bitcast_convert_type(b, DType::kUInt8),
               "[bitcast_convert_type] cannot bitcast bool[4] to uint8");
  EXPECT_ERROR(TypeError, lax::bitcast_convert_type(u8, DType::kBool), "to bool");
  EXPECT_ERROR(TypeError, lax::bitcast_convert_type(u8, DType::kBool), "convert_element_type");
  EXPECT_ERROR(ValueError, lax::bitcast_convert_type(u8, DType::kFloat32),
               "cannot bitcast u8[3,2] to float32: widening 8-bit to 32-bit elements needs an "
               "operand whose last dimension is 4 (got shape (3, 2))");
  EXPECT_ERROR(ValueError,
               lax::bitcast_convert_type(host<uint8_t>({7}, {}, DType::kUInt8), DType::kInt16),
               "last dimension is 2 (got shape ())");
  {
    X64Scope x64;
    EXPECT_ERROR(ValueError, lax::bitcast_convert_type(f, DType::kFloat64),
                 "last dimension is 2 (got shape (3,))");
  }
}

// ---------------------------------------------------------------- reduce_precision

// float32 -> (5, 10) equals rounding to float16 and back on float16's normal range (and both
// overflow alike); float32 -> (8, 7) equals bfloat16 rounding everywhere but NaN (bfloat16 has
// float32's exponent range, so even denormals agree).
TEST(ReducePrecision, MatchesConvertElementTypeBitForBit) {
  std::vector<float> xs;
  std::uniform_real_distribution<double> mag(-40.0, 20.0);  // log2 |x|: denormal f16 to overflow
  for (int i = 0; i < 20000; ++i) {
    const double v = std::exp2(mag(rng()));
    xs.push_back(static_cast<float>(i % 2 ? -v : v));
  }
  // Exact ties of float16 rounding: 1 + 2^-11 (to even: down), 1 + 3 * 2^-11 (up), 65520 (inf).
  for (float t : {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65520.0f, 65519.0f, -65520.0f, 0x1p-14f})
    xs.push_back(t);
  const int64_t n = static_cast<int64_t>(xs.size());
  const Array x = host(xs, {n}, DType::kFloat32);
  const std::vector<uint32_t> rp16 = values<uint32_t>(lax::reduce_precision(x, 5, 10));
  const std::vector<uint32_t> cv16 = values<uint32_t>(
      lax::convert_element_type(lax::convert_element_type(x, DType::kFloat16), DType::kFloat32));
  const std::vector<uint32_t> rp8 = values<uint32_t>(lax::reduce_precision(x, 8, 7));
  const std::vector<uint32_t> cv8 = values<uint32_t>(
      lax::convert_element_type(lax::convert_element_type(x, DType::kBFloat16), DType::kFloat32));
  // Below float16's smallest normal, float16 has denormals while reduce_precision keeps
  // only a signed zero or, rounding up, the smallest normal (where float16 rounds up too).
  auto below_normal = [](double x, double got, double converted, double tiny) {
    if (got == 0.0) return std::signbit(got) == std::signbit(x);
    return std::fabs(got) == tiny && got == converted;
  };
  int normal = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(rp8[i], cv8[i]) << "bf16 x=" << xs[i];
    if (std::fabs(xs[i]) < 0x1p-14f) {
      ASSERT_TRUE(below_normal(xs[i], bits_as<float>(&rp16[i]), bits_as<float>(&cv16[i]), 0x1p-14))
          << "x=" << xs[i] << " got " << bits_as<float>(&rp16[i]);
      continue;
    }
    ++normal;
    ASSERT_EQ(rp16[i], cv16[i]) << "f16 x=" << xs[i];
  }
  EXPECT_GT(normal, 10000);
  EXPECT_EQ(bits_as<float>(&rp16[n - 6]), 1.0f);
  EXPECT_EQ(bits_as<float>(&rp16[n - 5]), 1.0f + 0x1p-9f);
  EXPECT_TRUE(std::isinf(bits_as<float>(&rp16[n - 4])));
  EXPECT_EQ(bits_as<float>(&rp16[n - 3]), 65504.0f);
  EXPECT_EQ(bits_as<float>(&rp16[n - 1]), 0x1p-14f);  // the smallest normal stays

  // float64 sources: normal values agree with one rounding to float16/bfloat16.
  X64Scope x64;
  std::vector<double> ds;
  for (int i = 0; i < 5000; ++i) ds.push_back((i % 2 ? -1 : 1) * std::exp2(mag(rng()) * 3.0));
  const Array xd = host(ds, {static_cast<int64_t>(ds.size())}, DType::kFloat64);
  for (auto [e, m, half] : {std::tuple{5, 10, DType::kFloat16}, {8, 7, DType::kBFloat16}}) {
    const std::vector<double> rp = values<double>(lax::reduce_precision(xd, e, m));
    const std::vector<double> cv = values<double>(
        lax::convert_element_type(lax::convert_element_type(xd, half), DType::kFloat64));
    const double tiny = e == 5 ? 0x1p-14 : 0x1p-126;
    for (size_t i = 0; i < ds.size(); ++i) {
      if (std::fabs(ds[i]) < tiny)
        ASSERT_TRUE(below_normal(ds[i], rp[i], cv[i], tiny)) << ds[i] << " got " << rp[i];
      else
        ASSERT_EQ(rp[i], cv[i]) << dtype_name(half) << " x=" << ds[i];
    }
  }
  // Formats at least as wide as the source are the identity, NaN payloads included.
  const std::vector<uint64_t> pats = {0x7FF0000000000001ull, 0xFFF8000000000123ull,
                                      0x0000000000000001ull, 0x8000000000000000ull};
  const Array special = host(pats, {4}, DType::kUInt64);
  const Array sf = lax::bitcast_convert_type(special, DType::kFloat64);
  EXPECT_EQ(values<uint64_t>(lax::reduce_precision(sf, 11, 52)), pats);
  EXPECT_EQ(values<uint64_t>(lax::reduce_precision(sf, 15, 60)), pats);
  EXPECT_EQ(values<double>(lax::reduce_precision(xd, 11, 52)), ds);
}

TEST(ReducePrecision, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<uint32_t> nans = {0x7FC00000u, 0x7F800001u, 0xFFC12345u, 0x7FFFFFFFu};
  const Array nan = lax::bitcast_convert_type(host(nans, {4}, DType::kUInt32), DType::kFloat32);
  // NaN stays the same NaN, even where rounding its mantissa would carry into the exponent.
  EXPECT_EQ(values<uint32_t>(lax::reduce_precision(nan, 5, 10)), nans);
  EXPECT_EQ(values<uint32_t>(lax::reduce_precision(nan, 8, 7)), nans);
  // Without mantissa bits there is no NaN: XLA gives +inf.
  for (float v : values<float>(lax::reduce_precision(nan, 5, 0))) EXPECT_EQ(v, inf);
  const std::vector<float> xs = {inf, -inf, 1e-30f, -1e-30f, 7e4f, -7e4f, 0.0f, -0.0f};
  const std::vector<float> got =
      values<float>(lax::reduce_precision(host(xs, {8}, DType::kFloat32), 5, 10));
  EXPECT_EQ(got[0], inf);
  EXPECT_EQ(got[1], -inf);
  EXPECT_EQ(got[2], 0.0f);  // flushed to a signed zero
  EXPECT_TRUE(std::signbit(got[3]) && got[3] == 0.0f);
  EXPECT_EQ(got[4], inf);  // overflow to a signed inf
  EXPECT_EQ(got[5], -inf);
  EXPECT_FALSE(std::signbit(got[6]));
  EXPECT_TRUE(std::signbit(got[7]));
  // No mantissa bits: ties go to the even last kept bit, which is then the exponent's lowest
  // bit (1.5 has biased exponent 127, odd: up to 2; 3 = 1.5 * 2 has 128, even: down to 2).
  const std::vector<float> m0 = values<float>(
      lax::reduce_precision(host<float>({1.5f, 3.0f, 1.25f, 1.75f}, {4}, DType::kFloat32), 8, 0));
  EXPECT_EQ(m0, (std::vector<float>{2.0f, 2.0f, 1.0f, 2.0f}));
  // bfloat16 and float16 operands: their own formats are the identity.
  const Array hb = lax::bitcast_convert_type(
      host<uint16_t>({0x0001, 0x7E01, 0x3C01, 0xFBFF}, {4}, DType::kUInt16), DType::kFloat16);
  EXPECT_EQ(values<uint16_t>(lax::reduce_precision(hb, 5, 10)),
            (std::vector<uint16_t>{0x0001, 0x7E01, 0x3C01, 0xFBFF}));
  // float16 to (5, 9): 0x3C01 (1 + 2^-10) is a tie that goes to even 1.0; 0xFBFF (-65504)
  // rounds up out of range to -inf; the denormal 0x0001 flushes (exponents are not reduced,
  // but its mantissa rounds to 0).
  EXPECT_EQ(values<uint16_t>(lax::reduce_precision(hb, 5, 9)),
            (std::vector<uint16_t>{0x0000, 0x7E01, 0x3C00, 0xFC00}));
}

TEST(ReducePrecision, Errors) {
  const Array i = host<int32_t>({1}, {1}, DType::kInt32);
  const Array f = host<float>({1.0f}, {1}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::reduce_precision(i, 5, 10),
               "[reduce_precision] requires a floating dtype, got i32[1]");
  EXPECT_ERROR(ValueError, lax::reduce_precision(f, 0, 10),
               "[reduce_precision] exponent_bits must be positive; got 0");
  EXPECT_ERROR(ValueError, lax::reduce_precision(f, 5, -1),
               "mantissa_bits must be non-negative; got -1");
}

// JAX's deflinear: the tangent is reduce_precision of the tangent and the cotangent
// reduce_precision of the cotangent, bit for bit; the weak type is kept.
TEST(ReducePrecision, LinearRules) {
  const int64_t n = 64;
  const Array x = testing::random_array({n}, DType::kFloat32, -3.0, 3.0);
  const Array v = testing::random_array({n}, DType::kFloat32, -3.0, 3.0);
  const Array u = testing::random_array({n}, DType::kFloat32, -3.0, 3.0);
  const flat::Fun f = [](std::span<const Array> a) {
    return std::vector<Array>{lax::reduce_precision(a[0], 5, 10)};
  };
  auto [po, to] = flat::jvp(f, std::vector<Array>{x}, std::vector<Array>{v});
  EXPECT_EQ(values<uint32_t>(to[0]), values<uint32_t>(lax::reduce_precision(v, 5, 10)));
  EXPECT_EQ(values<uint32_t>(po[0]), values<uint32_t>(lax::reduce_precision(x, 5, 10)));
  const flat::Linearized lin = flat::linearize(f, std::vector<Array>{x});
  EXPECT_EQ(values<uint32_t>(lin.vjp(std::vector<Array>{u})[0]),
            values<uint32_t>(lax::reduce_precision(u, 5, 10)));
  // vmap of the jvp (the tangent batched at axis 1 of a (n/8, 8) view) against the loop.
  const Array vb = lax::reshape(v, {8, 8});
  const Array xb = lax::reshape(x, {8, 8});
  const flat::Fun jv = [&](std::span<const Array> a) {
    return flat::jvp(f, std::vector<Array>{a[0]}, std::vector<Array>{a[1]}).second;
  };
  const std::vector<std::optional<int64_t>> in_axes = {1, 1};
  const Array bt = flat::vmap(jv, std::vector<Array>{xb, vb}, in_axes, [](size_t k) {
    return std::vector<std::optional<int64_t>>(k, 1);
  })[0];
  EXPECT_EQ(values<uint32_t>(bt), values<uint32_t>(lax::reduce_precision(vb, 5, 10)));
  EXPECT_TRUE(
      lax::reduce_precision(host<float>({1.0f}, {}, DType::kFloat32, true), 5, 10).weak_type());
}

// ---------------------------------------------------------------- AD, jaxprs, threads

TEST(Bitwise, ZeroTangentsAsJax) {
  const Array x = testing::random_array({5}, DType::kFloat32);
  const Array v = testing::random_array({5}, DType::kFloat32);
  // float -> int bitcast: a float0 tangent; int -> float: a zero float tangent.
  const flat::Fun to_int = [](std::span<const Array> a) {
    return std::vector<Array>{lax::bitcast_convert_type(a[0], DType::kInt32)};
  };
  auto [p1, t1] = flat::jvp(to_int, std::vector<Array>{x}, std::vector<Array>{v});
  EXPECT_EQ(t1[0].aval(), (Aval{{5}, DType::kFloat0, false}));
  const flat::Fun round_trip = [](std::span<const Array> a) {
    return std::vector<Array>{
        lax::bitcast_convert_type(lax::bitcast_convert_type(a[0], DType::kInt32), DType::kFloat32)};
  };
  auto [p2, t2] = flat::jvp(round_trip, std::vector<Array>{x}, std::vector<Array>{v});
  EXPECT_EQ(values<uint32_t>(p2[0]), values<uint32_t>(x));
  EXPECT_EQ(values<float>(t2[0]), std::vector<float>(5, 0.0f));
  // A float -> float bitcast (through int) is not differentiable in JAX: zero cotangent.
  const flat::Linearized lin = flat::linearize(round_trip, std::vector<Array>{x});
  EXPECT_EQ(values<float>(lin.vjp(std::vector<Array>{v})[0]), std::vector<float>(5, 0.0f));
}

TEST(Bitwise, JaxprText) {
  const ShapeDtypeStruct i3{{3}, DType::kInt32};
  EXPECT_EQ(to_string(make_jaxpr(
                [](const Array& a, const Array& b) { return lax::bitwise_and(a, b); })(i3, i3)),
            "{ lambda ; a:i32[3] b:i32[3]. let c:i32[3] = and a b in (c,) }");
  EXPECT_EQ(to_string(make_jaxpr([](const Array& a) {
              return lax::bitcast_convert_type(a, DType::kUInt8);
            })(ShapeDtypeStruct{{2}, DType::kFloat32})),
            "{ lambda ; a:f32[2]. let\n"
            "    b:u8[2,4] = bitcast_convert_type[new_dtype=uint8] a\n"
            "  in (b,) }");
  EXPECT_EQ(to_string(make_jaxpr([](const Array& a) { return lax::reduce_precision(a, 5, 10); })(
                ShapeDtypeStruct{{2}, DType::kFloat32})),
            "{ lambda ; a:f32[2]. let\n"
            "    b:f32[2] = reduce_precision[exponent_bits=5 mantissa_bits=10] a\n"
            "  in (b,) }");
}

// Arrays larger than one parallel chunk, broadcasting, one and two threads: the same bytes,
// equal to the element references.
TEST(Bitwise, LargeArraysAnyThreadCount) {
  const int64_t rows = 3, cols = runtime::kElementwiseGrain + 7;
  const std::vector<int32_t> xs = random_bits<int32_t>(static_cast<size_t>(rows * cols));
  std::vector<int32_t> ss(static_cast<size_t>(cols));
  for (size_t j = 0; j < ss.size(); ++j) ss[j] = static_cast<int32_t>(j % 40) - 4;
  const Array x = host(xs, {rows, cols}, DType::kInt32), s = host(ss, {1, cols}, DType::kInt32);
  std::vector<float> fs(xs.size());
  for (size_t i = 0; i < fs.size(); ++i) fs[i] = static_cast<float>(xs[i]) * 1e-6f;
  const Array f = host(fs, {rows, cols}, DType::kFloat32);
  auto run = [&] {
    return std::vector<Array>{lax::shift_right_arithmetic(x, s), lax::bitwise_xor(x, s),
                              lax::population_count(x), lax::reduce_precision(f, 5, 10)};
  };
  std::vector<Array> one, two;
  {
    Threads t(1);
    one = run();
  }
  {
    Threads t(2);
    two = run();
  }
  for (size_t k = 0; k < one.size(); ++k)
    EXPECT_EQ(values<uint32_t>(one[k]), values<uint32_t>(two[k])) << "output " << k;
  const std::vector<int32_t> sra = values<int32_t>(one[0]), xo = values<int32_t>(one[1]),
                             pc = values<int32_t>(one[2]);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const size_t k = static_cast<size_t>(i * cols + j);
      ASSERT_EQ(sra[k], ref_shr_arithmetic(xs[k], ss[j]));
      ASSERT_EQ(xo[k], xs[k] ^ ss[j]);
      ASSERT_EQ(pc[k], ref_popcount(xs[k]));
    }
  const std::vector<uint32_t> rp = values<uint32_t>(one[3]);
  const std::vector<uint32_t> cv = values<uint32_t>(
      lax::convert_element_type(lax::convert_element_type(f, DType::kFloat16), DType::kFloat32));
  for (size_t k = 0; k < rp.size(); ++k)
    if (std::fabs(fs[k]) >= 0x1p-14f) {
      ASSERT_EQ(rp[k], cv[k]) << fs[k];
    }
}

}  // namespace
}  // namespace tessera
