// DType names, predicates, 32/64-bit mode, JAX's promotion table (as documented), finfo/iinfo
// (NumPy's values), and the 16-bit float conversions against F16C hardware and exact references.
#include <gtest/gtest.h>
#include <immintrin.h>
#include <unistd.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::rng;

// Sets the 64-bit mode for a scope and restores the previous mode.
class X64Scope {
 public:
  explicit X64Scope(bool on) : saved_(x64_enabled()) { set_x64_enabled(on); }
  ~X64Scope() { set_x64_enabled(saved_); }

 private:
  bool saved_;
};

template <class E, class F>
void expect_throw_with(F&& f, const std::string& substring) {
  try {
    f();
    ADD_FAILURE() << "expected an exception containing: " << substring;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

constexpr DType kAll[] = {DType::kBool,    DType::kInt8,    DType::kInt16,      DType::kInt32,
                          DType::kInt64,   DType::kUInt8,   DType::kUInt16,     DType::kUInt32,
                          DType::kUInt64,  DType::kFloat16, DType::kBFloat16,   DType::kFloat32,
                          DType::kFloat64, DType::kFloat0,  DType::kKeyThreefry};

// ---------------------------------------------------------------- names, sizes, predicates

TEST(DTypeNames, TableAndRoundTrip) {
  struct Row {
    DType d;
    const char* name;
    const char* short_name;
    size_t size;
  };
  const Row rows[] = {
      {DType::kBool, "bool", "bool", 1},
      {DType::kInt8, "int8", "i8", 1},
      {DType::kInt16, "int16", "i16", 2},
      {DType::kInt32, "int32", "i32", 4},
      {DType::kInt64, "int64", "i64", 8},
      {DType::kUInt8, "uint8", "u8", 1},
      {DType::kUInt16, "uint16", "u16", 2},
      {DType::kUInt32, "uint32", "u32", 4},
      {DType::kUInt64, "uint64", "u64", 8},
      {DType::kFloat16, "float16", "f16", 2},
      {DType::kBFloat16, "bfloat16", "bf16", 2},
      {DType::kFloat32, "float32", "f32", 4},
      {DType::kFloat64, "float64", "f64", 8},
      {DType::kFloat0, "float0", "float0", 0},
      {DType::kKeyThreefry, "key<fry>", "key<fry>", 8},
  };
  ASSERT_EQ(std::size(rows), size_t(kNumDTypes));
  for (const Row& r : rows) {
    EXPECT_EQ(dtype_name(r.d), r.name);
    EXPECT_EQ(dtype_short_name(r.d), r.short_name);
    EXPECT_EQ(itemsize(r.d), r.size) << r.name;
    EXPECT_EQ(dtype_from_name(r.name), r.d);
    EXPECT_EQ(dtype_from_name(r.short_name), r.d);
    std::ostringstream os;
    os << r.d;
    EXPECT_EQ(os.str(), r.name);
  }
}

TEST(DTypeNames, UnknownNameThrows) {
  expect_throw_with<ValueError>([] { dtype_from_name("float33"); },
                                "[dtype] unknown dtype 'float33'; expected one of bool, int8");
  expect_throw_with<ValueError>([] { dtype_from_name(""); }, "unknown dtype ''");
  expect_throw_with<ValueError>([] { dtype_from_name("F32"); }, "key<fry>");  // case matters
}

TEST(DTypeNames, Predicates) {
  for (DType d : kAll) {
    const std::string n(dtype_name(d));
    const bool sint = n == "int8" || n == "int16" || n == "int32" || n == "int64";
    const bool uint = n == "uint8" || n == "uint16" || n == "uint32" || n == "uint64";
    const bool flt = n == "float16" || n == "bfloat16" || n == "float32" || n == "float64";
    EXPECT_EQ(is_bool(d), n == "bool") << n;
    EXPECT_EQ(is_signed_integer(d), sint) << n;
    EXPECT_EQ(is_unsigned_integer(d), uint) << n;
    EXPECT_EQ(is_integer(d), sint || uint) << n;
    EXPECT_EQ(is_floating(d), flt) << n;
    EXPECT_EQ(is_inexact(d), flt) << n;
    EXPECT_EQ(is_extended(d), n == "float0" || n == "key<fry>") << n;
  }
  EXPECT_EQ(dtype_v<float16_t>, DType::kFloat16);
  EXPECT_EQ(dtype_v<bfloat16_t>, DType::kBFloat16);
  EXPECT_EQ(dtype_v<uint64_t>, DType::kUInt64);
}

// ---------------------------------------------------------------- 64-bit mode

TEST(DTypeX64, DefaultOffAndCanonicalize) {
  if (std::getenv("TESSERA_ENABLE_X64") == nullptr && std::getenv("JAX_ENABLE_X64") == nullptr) {
    EXPECT_FALSE(x64_enabled());  // every test restores the mode it changes
  }
  {
    X64Scope off(false);
    EXPECT_FALSE(x64_enabled());
    EXPECT_EQ(canonicalize_dtype(DType::kInt64), DType::kInt32);
    EXPECT_EQ(canonicalize_dtype(DType::kUInt64), DType::kUInt32);
    EXPECT_EQ(canonicalize_dtype(DType::kFloat64), DType::kFloat32);
    for (DType d : {DType::kBool, DType::kInt8, DType::kUInt16, DType::kFloat16, DType::kBFloat16,
                    DType::kFloat32, DType::kFloat0, DType::kKeyThreefry}) {
      EXPECT_EQ(canonicalize_dtype(d), d) << d;
    }
    EXPECT_EQ(default_int_dtype(), DType::kInt32);
    EXPECT_EQ(default_uint_dtype(), DType::kUInt32);
    EXPECT_EQ(default_float_dtype(), DType::kFloat32);
  }
  {
    X64Scope on(true);
    EXPECT_TRUE(x64_enabled());
    for (DType d : kAll) EXPECT_EQ(canonicalize_dtype(d), d) << d;
    EXPECT_EQ(default_int_dtype(), DType::kInt64);
    EXPECT_EQ(default_uint_dtype(), DType::kUInt64);
    EXPECT_EQ(default_float_dtype(), DType::kFloat64);
  }
}

// Runs this test binary again with an environment and checks what x64_enabled() reads at first
// use (the child is the DTypeX64Child test below).
TEST(DTypeX64, ReadFromEnvironmentAtFirstUse) {
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) GTEST_SKIP() << "cannot find this executable to re-run it";
  exe[len] = '\0';
  struct Case {
    const char* env;
    bool expect_on;
  };
  const Case cases[] = {
      {"", false},
      {"TESSERA_ENABLE_X64=1", true},
      {"JAX_ENABLE_X64=1", true},
      {"JAX_ENABLE_X64=true", true},
      {"JAX_ENABLE_X64=0", false},
      {"TESSERA_ENABLE_X64=0 JAX_ENABLE_X64=1", false},  // Tessera's variable wins
  };
  for (const Case& c : cases) {
    const std::string cmd = std::string("env -u TESSERA_ENABLE_X64 -u JAX_ENABLE_X64 ") + c.env +
                            " TESSERA_DTYPE_X64_CHILD=" + (c.expect_on ? "on" : "off") + " '" +
                            exe + "' --gtest_filter=DTypeX64Child.* >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
}

TEST(DTypeX64Child, ReportsEnvironment) {
  const char* want = std::getenv("TESSERA_DTYPE_X64_CHILD");
  if (want == nullptr) GTEST_SKIP() << "only run by DTypeX64.ReadFromEnvironmentAtFirstUse";
  EXPECT_EQ(x64_enabled(), std::string(want) == "on");
}

// ---------------------------------------------------------------- promotion

// JAX's documented binary promotion table (docs/type_promotion.rst: the result of
// dtypes._lattice_result_type(t1, t2)), without the complex rows and columns. "i*" and "f*"
// are the weak Python int and float.
constexpr const char* kCols[15] = {"b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4",
                                   "i8", "bf", "f2", "f4", "f8", "i*", "f*"};
constexpr const char* kDocTable[15][15] = {
    // b1   u1    u2    u4    u8    i1    i2    i4    i8    bf    f2    f4    f8    i*    f*
    {"b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i*", "f*"},
    {"u1", "u1", "u2", "u4", "u8", "i2", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "u1", "f*"},
    {"u2", "u2", "u2", "u4", "u8", "i4", "i4", "i4", "i8", "bf", "f2", "f4", "f8", "u2", "f*"},
    {"u4", "u4", "u4", "u4", "u8", "i8", "i8", "i8", "i8", "bf", "f2", "f4", "f8", "u4", "f*"},
    {"u8", "u8", "u8", "u8", "u8", "f*", "f*", "f*", "f*", "bf", "f2", "f4", "f8", "u8", "f*"},
    {"i1", "i2", "i4", "i8", "f*", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i1", "f*"},
    {"i2", "i2", "i4", "i8", "f*", "i2", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i2", "f*"},
    {"i4", "i4", "i4", "i8", "f*", "i4", "i4", "i4", "i8", "bf", "f2", "f4", "f8", "i4", "f*"},
    {"i8", "i8", "i8", "i8", "f*", "i8", "i8", "i8", "i8", "bf", "f2", "f4", "f8", "i8", "f*"},
    {"bf", "bf", "bf", "bf", "bf", "bf", "bf", "bf", "bf", "bf", "f4", "f4", "f8", "bf", "bf"},
    {"f2", "f2", "f2", "f2", "f2", "f2", "f2", "f2", "f2", "f4", "f2", "f4", "f8", "f2", "f2"},
    {"f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f8", "f4", "f4"},
    {"f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8"},
    {"i*", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i*", "f*"},
    {"f*", "f*", "f*", "f*", "f*", "f*", "f*", "f*", "f*", "bf", "f2", "f4", "f8", "f*", "f*"},
};
constexpr DType kColDTypes[13] = {
    DType::kBool,    DType::kUInt8,   DType::kUInt16, DType::kUInt32, DType::kUInt64,
    DType::kInt8,    DType::kInt16,   DType::kInt32,  DType::kInt64,  DType::kBFloat16,
    DType::kFloat16, DType::kFloat32, DType::kFloat64};

int col_of(const std::string& tok) {
  for (int i = 0; i < 15; ++i) {
    if (tok == kCols[i]) return i;
  }
  ADD_FAILURE() << "bad token " << tok;
  return 0;
}

// The input a column stands for: a strong dtype, or a C++ scalar (weak, default dtype).
TypedDType input_of(int col) {
  if (col == 13) return {default_int_dtype(), true};
  if (col == 14) return {default_float_dtype(), true};
  return {kColDTypes[col], false};
}
// What result_type returns for a table entry: weak entries take the default dtype of their
// kind; everything is canonicalized to the current mode.
TypedDType expected_result(const std::string& tok) {
  if (tok == "i*") return {default_int_dtype(), true};
  if (tok == "f*") return {default_float_dtype(), true};
  return {canonicalize_dtype(kColDTypes[col_of(tok)]), false};
}

TEST(DTypePromotion, PromoteTypesMatchesJaxTable) {
  for (bool x64 : {false, true}) {
    X64Scope mode(x64);
    for (int r = 0; r < 13; ++r) {
      for (int c = 0; c < 13; ++c) {
        const std::string tok = kDocTable[r][c];
        // jnp.promote_types returns np.dtype(float) == float64 for f*, never canonicalized.
        const DType want = tok == "f*" ? DType::kFloat64 : kColDTypes[col_of(tok)];
        EXPECT_EQ(promote_types(kColDTypes[r], kColDTypes[c]), want)
            << kCols[r] << " " << kCols[c] << " x64=" << x64;
      }
    }
  }
}

TEST(DTypePromotion, ResultTypeMatchesJaxTableWithWeakTypes) {
  for (bool x64 : {false, true}) {
    X64Scope mode(x64);
    for (int r = 0; r < 15; ++r) {
      for (int c = 0; c < 15; ++c) {
        const TypedDType want = expected_result(kDocTable[r][c]);
        const TypedDType got = result_type({input_of(r), input_of(c)});
        EXPECT_EQ(got.dtype, want.dtype) << kCols[r] << " " << kCols[c] << " x64=" << x64;
        EXPECT_EQ(got.weak, want.weak) << kCols[r] << " " << kCols[c] << " x64=" << x64;
      }
    }
  }
}

// n-ary result_type is the join of all inputs: fold the documented binary table.
TEST(DTypePromotion, ResultTypeOfThreeIsTheFoldedTable) {
  for (bool x64 : {false, true}) {
    X64Scope mode(x64);
    for (int a = 0; a < 15; ++a) {
      for (int b = 0; b < 15; ++b) {
        for (int c = 0; c < 15; ++c) {
          const TypedDType in[3] = {input_of(a), input_of(b), input_of(c)};
          if (in[0].weak && in[1].weak && in[2].weak) continue;  // JAX's all-weak special case
          const std::string ab = kDocTable[a][b];
          const std::string tok = kDocTable[col_of(ab)][c];
          const TypedDType want = expected_result(tok);
          const TypedDType got = result_type(in, 3);
          EXPECT_EQ(got.dtype, want.dtype)
              << kCols[a] << " " << kCols[b] << " " << kCols[c] << " x64=" << x64;
          EXPECT_EQ(got.weak, want.weak)
              << kCols[a] << " " << kCols[b] << " " << kCols[c] << " x64=" << x64;
        }
      }
    }
  }
}

TEST(DTypePromotion, WeakTypeCases) {
  using T = TypedDType;
  for (bool x64 : {false, true}) {
    X64Scope mode(x64);
    const DType fdef = x64 ? DType::kFloat64 : DType::kFloat32;
    const DType idef = x64 ? DType::kInt64 : DType::kInt32;
    auto check = [&](std::initializer_list<T> in, DType dtype, bool weak, int line) {
      const T got = result_type(in);
      EXPECT_EQ(got.dtype, dtype) << "line " << line << " x64=" << x64;
      EXPECT_EQ(got.weak, weak) << "line " << line << " x64=" << x64;
    };
    // A weak scalar keeps the array's precision within its category.
    check({{DType::kFloat16, false}, {fdef, true}}, DType::kFloat16, false, __LINE__);
    check({{DType::kInt8, false}, {idef, true}}, DType::kInt8, false, __LINE__);
    check({{DType::kUInt8, false}, {idef, true}}, DType::kUInt8, false, __LINE__);
    check({{DType::kBFloat16, false}, {fdef, true}}, DType::kBFloat16, false, __LINE__);
    // int32 array + Python float: lub(i32, f*) = f*, so the result is a weak default float.
    check({{DType::kInt32, false}, {fdef, true}}, fdef, true, __LINE__);
    check({{DType::kBool, false}, {idef, true}}, idef, true, __LINE__);
    check({{DType::kBFloat16, false}, {DType::kFloat16, false}}, DType::kFloat32, false, __LINE__);
    // A weak non-default dtype enters the lattice as i*/f*.
    check({{DType::kInt32, false}, {DType::kFloat16, true}}, fdef, true, __LINE__);
    check({{DType::kUInt16, false}, {DType::kInt8, true}}, DType::kUInt16, false, __LINE__);
    // All weak: the bound of the strong counterparts, kept weak.
    check({{DType::kInt8, true}, {DType::kInt16, true}}, DType::kInt16, true, __LINE__);
    check({{DType::kFloat16, true}, {DType::kFloat16, true}}, DType::kFloat16, true, __LINE__);
    check({{DType::kInt64, true}, {DType::kFloat64, true}}, fdef, true, __LINE__);
    // Bool results are never weak.
    check({{DType::kBool, true}}, DType::kBool, false, __LINE__);
    check({{DType::kBool, true}, {DType::kBool, true}}, DType::kBool, false, __LINE__);
    check({{DType::kBool, true}, {DType::kBool, false}}, DType::kBool, false, __LINE__);
    // Same dtype, not all weak: that dtype, strong.
    check({{DType::kFloat32, true}, {DType::kFloat32, false}}, DType::kFloat32, false, __LINE__);
    // One input: itself, canonicalized.
    check({{DType::kFloat64, false}}, fdef, false, __LINE__);
    check({{DType::kInt32, true}}, DType::kInt32, true, __LINE__);
    // uint64 with int64 has no integer bound: the weak float f*.
    check({{DType::kUInt64, false}, {DType::kInt64, false}}, fdef, true, __LINE__);
    check({{DType::kInt8, false}, {DType::kUInt8, false}, {fdef, true}}, fdef, true, __LINE__);
  }
}

TEST(DTypePromotion, ExtendedDTypes) {
  EXPECT_EQ(promote_types(DType::kFloat0, DType::kFloat0), DType::kFloat0);
  EXPECT_EQ(promote_types(DType::kKeyThreefry, DType::kKeyThreefry), DType::kKeyThreefry);
  expect_throw_with<TypeError>([] { promote_types(DType::kFloat0, DType::kFloat32); },
                               "[promote_types] cannot promote float0 with float32");
  expect_throw_with<TypeError>([] { promote_types(DType::kInt32, DType::kKeyThreefry); },
                               "[promote_types] cannot promote int32 with key<fry>");
  const TypedDType k = result_type({{DType::kKeyThreefry, false}, {DType::kKeyThreefry, false}});
  EXPECT_EQ(k.dtype, DType::kKeyThreefry);
  EXPECT_FALSE(k.weak);
  EXPECT_EQ(result_type({{DType::kFloat0, false}}).dtype, DType::kFloat0);
  expect_throw_with<TypeError>(
      [] {
        result_type({{DType::kFloat0, false}, {DType::kInt32, false}});
      },
      "[result_type] cannot promote float0, int32");
  expect_throw_with<ValueError>([] { result_type(nullptr, 0); },
                                "[result_type] at least one dtype is required");
}

// ---------------------------------------------------------------- finfo / iinfo

TEST(DTypeInfo, FInfoMatchesNumpy) {
  // Values printed by NumPy 1.24 (np.finfo) and, for bfloat16, ml_dtypes.finfo.
  struct Row {
    DType d;
    int bits;
    double eps, max, tiny, smallest_subnormal, resolution;
    int precision, nmant, nexp, maxexp, minexp;
  };
  const Row rows[] = {
      {DType::kFloat16, 16, 0.0009765625, 65504.0, 6.103515625e-05, 5.960464477539063e-08,
       0.0010004043579101562, 3, 10, 5, 16, -14},
      {DType::kBFloat16, 16, 0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38,
       9.183549615799121e-41, 0.010009765625, 2, 7, 8, 128, -126},
      {DType::kFloat32, 32, 1.1920928955078125e-07, 3.4028234663852886e+38, 1.1754943508222875e-38,
       1.401298464324817e-45, 9.999999974752427e-07, 6, 23, 8, 128, -126},
      {DType::kFloat64, 64, 2.220446049250313e-16, 1.7976931348623157e+308, 2.2250738585072014e-308,
       5e-324, 1e-15, 15, 52, 11, 1024, -1022},
  };
  for (const Row& r : rows) {
    const FInfo f = finfo(r.d);
    SCOPED_TRACE(std::string(dtype_name(r.d)));
    EXPECT_EQ(f.dtype, r.d);
    EXPECT_EQ(f.bits, r.bits);
    EXPECT_EQ(f.eps, r.eps);
    EXPECT_EQ(f.max, r.max);
    EXPECT_EQ(f.min, -r.max);
    EXPECT_EQ(f.tiny, r.tiny);
    EXPECT_EQ(f.smallest_subnormal, r.smallest_subnormal);
    EXPECT_EQ(f.resolution, r.resolution);
    EXPECT_EQ(f.precision, r.precision);
    EXPECT_EQ(f.nmant, r.nmant);
    EXPECT_EQ(f.nexp, r.nexp);
    EXPECT_EQ(f.maxexp, r.maxexp);
    EXPECT_EQ(f.minexp, r.minexp);
  }
  // The 16-bit limits agree with the bit patterns the conversions decode.
  EXPECT_EQ(finfo(DType::kFloat16).max, half_bits_to_float(0x7bff));
  EXPECT_EQ(finfo(DType::kFloat16).smallest_subnormal, half_bits_to_float(0x0001));
  EXPECT_EQ(finfo(DType::kBFloat16).max, bfloat16_bits_to_float(0x7f7f));
  EXPECT_EQ(finfo(DType::kBFloat16).eps, bfloat16_bits_to_float(0x3f81) - 1.0);
}

TEST(DTypeInfo, IInfoMatchesNumpy) {
  struct Row {
    DType d;
    int bits;
    int64_t min;
    uint64_t max;
  };
  const Row rows[] = {
      {DType::kInt8, 8, -128, 127},
      {DType::kInt16, 16, -32768, 32767},
      {DType::kInt32, 32, -2147483648LL, 2147483647},
      {DType::kInt64, 64, -9223372036854775807LL - 1, 9223372036854775807ULL},
      {DType::kUInt8, 8, 0, 255},
      {DType::kUInt16, 16, 0, 65535},
      {DType::kUInt32, 32, 0, 4294967295ULL},
      {DType::kUInt64, 64, 0, 18446744073709551615ULL},
  };
  for (const Row& r : rows) {
    const IInfo i = iinfo(r.d);
    EXPECT_EQ(i.dtype, r.d);
    EXPECT_EQ(i.bits, r.bits) << r.d;
    EXPECT_EQ(i.min, r.min) << r.d;
    EXPECT_EQ(i.max, r.max) << r.d;
  }
}

TEST(DTypeInfo, WrongKindThrows) {
  expect_throw_with<ValueError>([] { finfo(DType::kInt32); },
                                "[finfo] data type int32 is not a floating dtype; use iinfo");
  expect_throw_with<ValueError>([] { finfo(DType::kBool); }, "bool is not a floating dtype");
  expect_throw_with<ValueError>([] { iinfo(DType::kFloat32); },
                                "[iinfo] data type float32 is not an integer dtype; use finfo");
  expect_throw_with<ValueError>([] { iinfo(DType::kBool); }, "bool is not an integer dtype");
  expect_throw_with<ValueError>([] { iinfo(DType::kKeyThreefry); }, "key<fry>");
}

// ---------------------------------------------------------------- 16-bit conversions

__attribute__((target("f16c"))) float hw_half_to_float(uint16_t h) { return _cvtsh_ss(h); }
__attribute__((target("f16c"))) uint16_t hw_float_to_half(float f) {
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}
bool have_f16c() { return __builtin_cpu_supports("f16c"); }

uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_fbits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint64_t dbits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
double from_dbits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

// Independent decoders (ldexp of the integer significand) for finite magnitudes.
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  return std::ldexp(m + (e ? 1024 : 0), (e ? e : 1) - 25);
}
double bf16_value(uint16_t b) {
  const int e = (b >> 7) & 0xff, m = b & 0x7f;
  return std::ldexp(m + (e ? 128 : 0), (e ? e : 1) - 134);
}

// A 16-bit format for the references: decode, largest finite pattern, and the value the
// pattern after it (inf) would have with an unbounded exponent.
struct Format {
  double (*value)(uint16_t);
  uint16_t max_finite;
  double beyond_max;
  uint16_t sign_bit = 0x8000;
};
const Format kHalf{half_value, 0x7bff, 65536.0};
const Format kBf16{bf16_value, 0x7f7f, 0x1p128};

// Round-to-nearest-even of a finite or infinite non-NaN double, by comparison with the exact
// midpoint of the two neighbouring values (the midpoint has one more bit than the format, so
// it and the comparisons are exact in double).
uint16_t reference_round(double x, const Format& f) {
  const uint16_t sign = std::signbit(x) ? f.sign_bit : 0;
  const double ax = std::fabs(x);
  const uint16_t inf = f.max_finite + 1;
  if (std::isinf(ax)) return sign | inf;
  // Largest pattern with value <= ax (patterns are monotone in value).
  uint16_t lo = 0, hi = inf;  // invariant: value(lo) <= ax, and ax < value(hi) unless hi == inf
  while (hi - lo > 1) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
    (f.value(mid) <= ax ? lo : hi) = mid;
  }
  const double vlo = f.value(lo);
  if (vlo == ax) return sign | lo;
  const uint16_t up = lo + 1;
  const double vup = up == inf ? f.beyond_max : f.value(up);
  if (ax >= vup) return sign | inf;  // beyond even the virtual next value
  const double midpoint = (vlo + vup) / 2;
  if (ax < midpoint) return sign | lo;
  if (ax > midpoint) return sign | up;
  return sign | ((lo & 1) ? up : lo);
}

TEST(DTypeHalf, HalfToFloatMatchesF16CForAllPatterns) {
  if (!have_f16c()) GTEST_SKIP() << "this CPU has no F16C";
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t want = fbits(hw_half_to_float(static_cast<uint16_t>(h)));
    const uint32_t got = fbits(half_bits_to_float(static_cast<uint16_t>(h)));
    if (got != want && ++bad <= 10) {
      ADD_FAILURE() << std::hex << "half 0x" << h << ": got 0x" << got << " want 0x" << want;
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(DTypeHalf, HalfToFloatMatchesDecoder) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t b = static_cast<uint16_t>(h);
    const float got = half_bits_to_float(b);
    if (((b >> 10) & 0x1f) == 0x1f) {
      EXPECT_TRUE((b & 0x3ff) ? std::isnan(got) : std::isinf(got)) << h;
      EXPECT_EQ(std::signbit(got), (b & 0x8000) != 0) << h;
    } else {
      const double want = (b & 0x8000) ? -half_value(b & 0x7fff) : half_value(b);
      EXPECT_EQ(static_cast<double>(got), want) << h;
      EXPECT_EQ(std::signbit(got), (b & 0x8000) != 0) << h;
    }
  }
}

// Floats adjacent to every halfway point between consecutive finite halves (both signs).
std::vector<float> half_edge_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          65504.0f,
                          65519.99f,
                          65520.0f,
                          65536.0f,
                          FLT_MAX,
                          FLT_MIN,
                          0x1p-14f,
                          0x1p-24f,
                          0x1p-25f,
                          0x1.8p-25f,
                          0x1p-26f,
                          1e-30f,
                          from_fbits(1),
                          INFINITY,
                          -INFINITY,
                          NAN,
                          -NAN,
                          from_fbits(0x7f800001u),
                          from_fbits(0x7fa00000u),
                          from_fbits(0xffbfffffu),
                          from_fbits(0x7f802000u),
                          from_fbits(0x7fffffffu)};
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = half_value(static_cast<uint16_t>(h));
    const double hi = h + 1 == 0x7c00 ? 65536.0 : half_value(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact: 12 significant bits
    for (float x :
         {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), static_cast<float>(lo)}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  return v;
}

TEST(DTypeHalf, FloatToHalfMatchesF16C) {
  if (!have_f16c()) GTEST_SKIP() << "this CPU has no F16C";
  std::vector<float> xs = half_edge_floats();
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 2000000; ++i) xs.push_back(from_fbits(any_bits(rng())));
  // Random floats whose exponent lies in or near the half range (2^-26 .. 2^17).
  std::uniform_int_distribution<uint32_t> exp(127 - 26, 127 + 17);
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t u = (any_bits(rng()) & 0x807fffffu) | (exp(rng()) << 23);
    xs.push_back(from_fbits(u));
  }
  int bad = 0;
  for (float x : xs) {
    const uint16_t want = hw_float_to_half(x);
    const uint16_t got = float_to_half_bits(x);
    if (got != want && ++bad <= 10) {
      ADD_FAILURE() << std::hex << "float 0x" << fbits(x) << " (" << x << "): got 0x" << got
                    << " want 0x" << want;
    }
  }
  EXPECT_EQ(bad, 0) << "of " << xs.size();
}

TEST(DTypeHalf, FloatToHalfMatchesReference) {
  // The same against the exact reference (no hardware needed); NaNs: quiet, sign and payload top.
  std::vector<float> xs = half_edge_floats();
  std::uniform_int_distribution<uint32_t> any_bits;
  std::uniform_int_distribution<uint32_t> exp(127 - 26, 127 + 17);
  for (int i = 0; i < 300000; ++i) {
    xs.push_back(from_fbits((any_bits(rng()) & 0x807fffffu) | (exp(rng()) << 23)));
  }
  int bad = 0;
  for (float x : xs) {
    const uint16_t got = float_to_half_bits(x);
    uint16_t want;
    if (std::isnan(x)) {
      want =
          static_cast<uint16_t>(((fbits(x) >> 16) & 0x8000) | 0x7e00 | ((fbits(x) >> 13) & 0x3ff));
    } else {
      want = reference_round(x, kHalf);
    }
    if (got != want && ++bad <= 10) {
      ADD_FAILURE() << std::hex << "float 0x" << fbits(x) << ": got 0x" << got << " want 0x"
                    << want;
    }
  }
  EXPECT_EQ(bad, 0) << "of " << xs.size();
}

TEST(DTypeBFloat16, ExhaustiveRoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float f = bfloat16_bits_to_float(bits);
    const bool nan = ((b >> 7) & 0xff) == 0xff && (b & 0x7f);
    // NaNs come back quiet (bit 6 of the mantissa), sign and payload kept.
    const uint16_t want = nan ? (bits | 0x40) : bits;
    EXPECT_EQ(float_to_bfloat16_bits(f), want) << std::hex << b;
    EXPECT_EQ(double_to_bfloat16_bits(static_cast<double>(f)), want) << std::hex << b;
    if (!nan && ((b >> 7) & 0xff) != 0xff) {
      const double v = (b & 0x8000) ? -bf16_value(bits & 0x7fff) : bf16_value(bits);
      EXPECT_EQ(static_cast<double>(f), v) << std::hex << b;
    }
  }
}

TEST(DTypeBFloat16, FloatToBFloat16MatchesReference) {
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           FLT_MAX,
                           -FLT_MAX,
                           FLT_MIN,
                           from_fbits(1),
                           from_fbits(0x7f7f8000u),
                           from_fbits(0x7f7f7fffu),  // overflow edge
                           from_fbits(0x00008000u),
                           from_fbits(0x00018000u),  // subnormal ties
                           INFINITY,
                           -INFINITY};
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 2000000; ++i) xs.push_back(from_fbits(any_bits(rng())));
  for (int i = 0; i < 100000; ++i) {  // exact ties and their neighbours
    const uint32_t tie = (any_bits(rng()) & 0xffff0000u) | 0x8000u;
    for (uint32_t u : {tie, tie - 1, tie + 1}) xs.push_back(from_fbits(u));
  }
  int bad = 0;
  for (float x : xs) {
    const uint16_t got = float_to_bfloat16_bits(x);
    const uint16_t want =
        std::isnan(x) ? static_cast<uint16_t>((fbits(x) >> 16) | 0x40) : reference_round(x, kBf16);
    if (got != want && ++bad <= 10) {
      ADD_FAILURE() << std::hex << "float 0x" << fbits(x) << ": got 0x" << got << " want 0x"
                    << want;
    }
  }
  EXPECT_EQ(bad, 0) << "of " << xs.size();
}

// Doubles at, just above and just below every halfway point of a 16-bit format, plus random
// doubles with exponents near its range. Many of them round wrongly through float.
std::vector<double> near_halfway_doubles(const Format& f, int min_exp, int max_exp, int n_random) {
  std::vector<double> v = {0.0, -0.0, INFINITY, -INFINITY, DBL_MAX, DBL_MIN, from_dbits(1)};
  std::uniform_int_distribution<uint64_t> any_bits;
  for (uint32_t p = 0; p <= f.max_finite; ++p) {
    const double lo = f.value(static_cast<uint16_t>(p));
    const double hi = p == f.max_finite ? f.beyond_max : f.value(static_cast<uint16_t>(p + 1));
    const double mid = (lo + hi) / 2;
    // Offsets below float's resolution at mid: they round to mid in float (a tie there).
    const double tiny = std::ldexp(std::fabs(mid) > 0 ? mid : 1.0, -40);
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY), mid + tiny,
                     mid - tiny, lo}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  std::uniform_int_distribution<int> exp(min_exp, max_exp);
  for (int i = 0; i < n_random; ++i) {
    const uint64_t u = (any_bits(rng()) & 0x800fffffffffffffull) |
                       (static_cast<uint64_t>(1023 + exp(rng())) << 52);
    v.push_back(from_dbits(u));
  }
  for (int i = 0; i < n_random / 4; ++i) v.push_back(from_dbits(any_bits(rng())));
  return v;
}

void check_double_conversion(const Format& f, uint16_t (*convert)(double),
                             uint16_t (*via_float)(float), uint16_t quiet_and_inf,
                             int payload_shift, const std::vector<double>& xs) {
  int bad = 0, double_rounding_cases = 0;
  for (double x : xs) {
    const uint16_t got = convert(x);
    uint16_t want;
    if (std::isnan(x)) {
      want = static_cast<uint16_t>((std::signbit(x) ? f.sign_bit : 0) | quiet_and_inf |
                                   ((dbits(x) & 0xfffffffffffffull) >> payload_shift));
    } else {
      want = reference_round(x, f);
      if (std::fabs(x) <= FLT_MAX && via_float(static_cast<float>(x)) != want) {
        ++double_rounding_cases;
      }
    }
    if (got != want && ++bad <= 10) {
      ADD_FAILURE() << std::hex << "double 0x" << dbits(x) << " (" << std::hexfloat << x
                    << "): got 0x" << got << " want 0x" << want;
    }
  }
  EXPECT_EQ(bad, 0) << "of " << xs.size();
  // The inputs include cases where rounding through float gives a different (wrong) answer.
  EXPECT_GT(double_rounding_cases, 1000);
}

TEST(DTypeHalf, DoubleToHalfRoundsOnce) {
  std::vector<double> xs = near_halfway_doubles(kHalf, -27, 17, 1000000);
  for (double x : {std::nan(""), -std::nan(""), from_dbits(0x7ff0000000000001ull),
                   from_dbits(0xfff4000000000000ull), from_dbits(0x7ff7ffffffffffffull)}) {
    xs.push_back(x);
  }
  check_double_conversion(kHalf, double_to_half_bits, float_to_half_bits, 0x7e00, 42, xs);
  EXPECT_EQ(double_to_half_bits(65519.999999999), 0x7bff);
  EXPECT_EQ(double_to_half_bits(65520.0), 0x7c00);
  EXPECT_EQ(double_to_half_bits(-0x1p-25), 0x8000);  // tie to even zero, sign kept
  EXPECT_EQ(double_to_half_bits(0x1.0000000000001p-25), 0x0001);
}

TEST(DTypeBFloat16, DoubleToBFloat16RoundsOnce) {
  std::vector<double> xs = near_halfway_doubles(kBf16, -136, 128, 1000000);
  for (double x : {std::nan(""), -std::nan(""), from_dbits(0x7ff0000000000001ull),
                   from_dbits(0xfff4000000000000ull)}) {
    xs.push_back(x);
  }
  check_double_conversion(kBf16, double_to_bfloat16_bits, float_to_bfloat16_bits, 0x7fc0, 45, xs);
}

}  // namespace
}  // namespace tessera
