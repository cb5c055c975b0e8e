// Element types: names, sizes, 32/64-bit mode, JAX's promotion lattice with weak types,
// finfo/iinfo, and exact round-to-nearest-even conversions to float16/bfloat16.
#include "tessera/dtype.h"

#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>

#include "core/env.h"
#include "tessera/errors.h"

namespace tessera {

namespace {

constexpr size_t idx(DType d) { return static_cast<size_t>(d); }

struct DTypeInfo {
  std::string_view name;
  std::string_view short_name;
  size_t itemsize;
};

// Indexed by DType; the order of the enum.
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", "bool", 1},
    {"int8", "i8", 1},
    {"int16", "i16", 2},
    {"int32", "i32", 4},
    {"int64", "i64", 8},
    {"uint8", "u8", 1},
    {"uint16", "u16", 2},
    {"uint32", "u32", 4},
    {"uint64", "u64", 8},
    {"float16", "f16", 2},
    {"bfloat16", "bf16", 2},
    {"float32", "f32", 4},
    {"float64", "f64", 8},
    {"float0", "float0", 0},
    {"key<fry>", "key<fry>", 8},
}};

DTypeInfo info_of(DType d) {
  const size_t i = idx(d);
  if (i >= kInfo.size()) throw_internal("dtype", "invalid DType value " + std::to_string(i));
  return kInfo[i];
}

std::string all_names() {
  std::string s;
  for (const auto& inf : kInfo) {
    if (!s.empty()) s += ", ";
    s += inf.name;
  }
  return s;
}

}  // namespace

std::string_view dtype_name(DType d) { return info_of(d).name; }
std::string_view dtype_short_name(DType d) { return info_of(d).short_name; }

DType dtype_from_name(std::string_view name) {
  for (size_t i = 0; i < kInfo.size(); ++i) {
    if (kInfo[i].name == name || kInfo[i].short_name == name) return static_cast<DType>(i);
  }
  throw ValueError(op_message("dtype", "unknown dtype '" + std::string(name) +
                                           "'; expected one of " + all_names() +
                                           " (or a short name such as f32, i32, u8, bf16)"));
}

std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }

size_t itemsize(DType d) { return info_of(d).itemsize; }
bool is_bool(DType d) { return d == DType::kBool; }
bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}
bool is_signed_integer(DType d) {
  return d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}
bool is_unsigned_integer(DType d) {
  return d == DType::kUInt8 || d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64;
}
bool is_integer(DType d) { return is_signed_integer(d) || is_unsigned_integer(d); }
bool is_extended(DType d) { return d == DType::kFloat0 || d == DType::kKeyThreefry; }
bool is_inexact(DType d) { return is_floating(d); }

// ---- 64-bit mode ----

namespace {

// -1: not yet read from the environment; 0: off; 1: on.
std::atomic<int> g_x64{-1};

// 1/0 for a set variable, -1 when unset; a value that is not a boolean throws ValueError.
int env_flag(const char* var) {
  std::optional<bool> b = env_bool(var);
  return b ? (*b ? 1 : 0) : -1;
}

}  // namespace

void set_x64_enabled(bool on) { g_x64.store(on ? 1 : 0, std::memory_order_relaxed); }

bool x64_enabled() {
  int v = g_x64.load(std::memory_order_relaxed);
  if (v < 0) {
    int from_env = env_flag("TESSERA_ENABLE_X64");
    if (from_env < 0) from_env = env_flag("JAX_ENABLE_X64");
    int expected = -1;
    // Loses to a concurrent set_x64_enabled, which is what the caller asked for.
    g_x64.compare_exchange_strong(expected, from_env > 0 ? 1 : 0, std::memory_order_relaxed);
    v = g_x64.load(std::memory_order_relaxed);
  }
  return v == 1;
}

DType canonicalize_dtype(DType d) {
  if (x64_enabled()) return d;
  switch (d) {
    case DType::kInt64:
      return DType::kInt32;
    case DType::kUInt64:
      return DType::kUInt32;
    case DType::kFloat64:
      return DType::kFloat32;
    default:
      return d;
  }
}
DType default_int_dtype() { return x64_enabled() ? DType::kInt64 : DType::kInt32; }
DType default_uint_dtype() { return x64_enabled() ? DType::kUInt64 : DType::kUInt32; }
DType default_float_dtype() { return x64_enabled() ? DType::kFloat64 : DType::kFloat32; }

// ---- JAX's type-promotion lattice ('standard' mode, no complex types) ----

namespace {

// Lattice nodes: the 13 numeric DTypes (same indices) plus the weak int i* and weak float f*.
constexpr int kNumStrong = 13;
constexpr int kWeakInt = kNumStrong;
constexpr int kWeakFloat = kNumStrong + 1;
constexpr int kNumNodes = 15;

constexpr int node(DType d) { return static_cast<int>(d); }

// Upper-bound sets (reflexive-transitive closure of the edges), as bitmasks over nodes.
struct Lattice {
  std::array<uint32_t, kNumNodes> ub{};

  constexpr Lattice() {
    std::array<uint32_t, kNumNodes> succ{};
    auto edge = [&](int a, int b) { succ[a] |= 1u << b; };
    const int b1 = node(DType::kBool), u8 = node(DType::kUInt8), u16 = node(DType::kUInt16),
              u32 = node(DType::kUInt32), u64 = node(DType::kUInt64), i8 = node(DType::kInt8),
              i16 = node(DType::kInt16), i32 = node(DType::kInt32), i64 = node(DType::kInt64),
              bf16 = node(DType::kBFloat16), f16 = node(DType::kFloat16),
              f32 = node(DType::kFloat32), f64 = node(DType::kFloat64);
    edge(b1, kWeakInt);
    edge(kWeakInt, u8), edge(kWeakInt, i8);
    edge(u8, i16), edge(u8, u16);
    edge(u16, i32), edge(u16, u32);
    edge(u32, i64), edge(u32, u64);
    edge(u64, kWeakFloat);
    edge(i8, i16), edge(i16, i32), edge(i32, i64), edge(i64, kWeakFloat);
    edge(kWeakFloat, bf16), edge(kWeakFloat, f16);
    edge(bf16, f32), edge(f16, f32), edge(f32, f64);
    for (int n = 0; n < kNumNodes; ++n) ub[n] = (1u << n) | succ[n];
    // Closure: iterate to a fixed point (the graph is tiny).
    for (bool changed = true; changed;) {
      changed = false;
      for (int n = 0; n < kNumNodes; ++n) {
        uint32_t m = ub[n];
        for (int k = 0; k < kNumNodes; ++k) {
          if ((ub[n] >> k) & 1u) m |= ub[k];
        }
        if (m != ub[n]) ub[n] = m, changed = true;
      }
    }
  }
};

constexpr Lattice kLattice{};

// The least upper bound of a set of nodes (bitmask): the common upper bound below all others.
int least_upper_bound(uint32_t nodes) {
  uint32_t common = (1u << kNumNodes) - 1;
  for (int n = 0; n < kNumNodes; ++n) {
    if ((nodes >> n) & 1u) common &= kLattice.ub[n];
  }
  for (int c = 0; c < kNumNodes; ++c) {
    if (((common >> c) & 1u) && (kLattice.ub[c] & common) == common) return c;
  }
  throw_internal("dtype", "type-promotion lattice has no unique least upper bound");
}

// JAX's dtype of a weak node: Python int -> int64, Python float -> float64.
DType node_dtype(int n) {
  if (n == kWeakInt) return DType::kInt64;
  if (n == kWeakFloat) return DType::kFloat64;
  return static_cast<DType>(n);
}

// A weakly-typed value enters the lattice as i* or f*; weak bool stays bool.
int weak_node(DType d) {
  if (is_integer(d)) return kWeakInt;
  if (is_floating(d)) return kWeakFloat;
  return node(d);
}

std::string list_dtypes(const TypedDType* in, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += dtype_name(in[i].dtype);
    if (in[i].weak) s += " (weak)";
  }
  return s;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_extended(a) || is_extended(b)) {
    throw TypeError(op_message(
        "promote_types",
        "cannot promote " + std::string(dtype_name(a)) + " with " + std::string(dtype_name(b)) +
            ": extended dtypes (float0, key<fry>) only combine with themselves; convert "
            "explicitly"));
  }
  return node_dtype(least_upper_bound((1u << node(a)) | (1u << node(b))));
}

TypedDType result_type(std::initializer_list<TypedDType> in) {
  return result_type(in.begin(), in.size());
}

TypedDType result_type(const TypedDType* in, size_t n) {
  if (n == 0) throw ValueError(op_message("result_type", "at least one dtype is required"));
  DType out;
  bool weak;
  bool all_same = true, all_weak = true, any_extended = false;
  for (size_t i = 0; i < n; ++i) {
    all_same = all_same && in[i].dtype == in[0].dtype;
    all_weak = all_weak && in[i].weak;
    any_extended = any_extended || is_extended(in[i].dtype);
  }
  if (n == 1) {
    out = in[0].dtype;
    weak = in[0].weak;
  } else if (all_same && !all_weak) {
    out = in[0].dtype;
    weak = false;
  } else if (any_extended) {
    if (!all_same) {
      throw TypeError(op_message(
          "result_type", "cannot promote " + list_dtypes(in, n) +
                             ": extended dtypes (float0, key<fry>) only combine with themselves; "
                             "convert explicitly"));
    }
    out = in[0].dtype;  // all the same extended dtype, all weak
    weak = true;
  } else if (all_weak) {
    // The bound of the strong counterparts, made weak (avoids e.g. weak int16 + i* -> i*).
    uint32_t nodes = 0;
    for (size_t i = 0; i < n; ++i) nodes |= 1u << node(in[i].dtype);
    out = node_dtype(least_upper_bound(nodes));
    weak = true;
  } else {
    uint32_t nodes = 0;
    for (size_t i = 0; i < n; ++i) {
      nodes |= 1u << (in[i].weak ? weak_node(in[i].dtype) : node(in[i].dtype));
    }
    const int lub = least_upper_bound(nodes);
    out = node_dtype(lub);
    weak = lub == kWeakInt || lub == kWeakFloat;
  }
  if (out == DType::kBool) weak = false;
  return TypedDType{canonicalize_dtype(out), weak};
}

// ---- finfo / iinfo ----

namespace {

// An IEEE-style binary format from its field widths, as NumPy's finfo reports it.
FInfo binary_format_info(DType d, int bits, int nmant, int nexp, int precision, double resolution) {
  const int maxexp = 1 << (nexp - 1);
  const int minexp = 2 - maxexp;
  FInfo f{};
  f.dtype = d;
  f.bits = bits;
  f.eps = std::ldexp(1.0, -nmant);
  f.max = std::ldexp(2.0 - f.eps, maxexp - 1);
  f.min = -f.max;
  f.tiny = std::ldexp(1.0, minexp);
  f.smallest_subnormal = std::ldexp(1.0, minexp - nmant);
  f.resolution = resolution;
  f.precision = precision;
  f.nmant = nmant;
  f.nexp = nexp;
  f.maxexp = maxexp;
  f.minexp = minexp;
  return f;
}

}  // namespace

FInfo finfo(DType d) {
  // precision = floor(-log10(eps)); resolution = 10^-precision rounded to the dtype, as NumPy
  // (ml_dtypes for bfloat16) returns it.
  switch (d) {
    case DType::kFloat16:
      return binary_format_info(d, 16, 10, 5, 3, 0x1.064p-10);
    case DType::kBFloat16:
      return binary_format_info(d, 16, 7, 8, 2, 0x1.48p-7);
    case DType::kFloat32:
      return binary_format_info(d, 32, 23, 8, 6, double{1e-6f});
    case DType::kFloat64:
      return binary_format_info(d, 64, 52, 11, 15, 1e-15);
    default:
      break;
  }
  const std::string name(dtype_name(d));
  throw ValueError(op_message("finfo", "data type " + name + " is not a floating dtype; " +
                                           (is_integer(d) ? "use iinfo for integer dtypes"
                                                          : "finfo takes f16, bf16, f32 or f64")));
}

IInfo iinfo(DType d) {
  switch (d) {
    case DType::kInt8:
      return IInfo{d, 8, INT8_MIN, INT8_MAX};
    case DType::kInt16:
      return IInfo{d, 16, INT16_MIN, INT16_MAX};
    case DType::kInt32:
      return IInfo{d, 32, INT32_MIN, INT32_MAX};
    case DType::kInt64:
      return IInfo{d, 64, INT64_MIN, INT64_MAX};
    case DType::kUInt8:
      return IInfo{d, 8, 0, UINT8_MAX};
    case DType::kUInt16:
      return IInfo{d, 16, 0, UINT16_MAX};
    case DType::kUInt32:
      return IInfo{d, 32, 0, UINT32_MAX};
    case DType::kUInt64:
      return IInfo{d, 64, 0, UINT64_MAX};
    default:
      break;
  }
  const std::string name(dtype_name(d));
  throw ValueError(
      op_message("iinfo", "data type " + name + " is not an integer dtype; " +
                              (is_floating(d) ? "use finfo for floating dtypes"
                                              : "iinfo takes int8..int64 or uint8..uint64")));
}

// ---- 16-bit float conversions ----

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint64_t bits_of(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

// m / 2^s rounded to nearest, ties to even. s >= 1.
uint64_t shift_round_even(uint64_t m, int s) {
  if (s >= 64) return 0;  // callers pass m < 2^53, far below half of 2^64
  const uint64_t q = m >> s;
  const uint64_t rem = m & ((uint64_t{1} << s) - 1);
  const uint64_t half = uint64_t{1} << (s - 1);
  return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
}

// Rounds a double once to a binary format with 1 sign, `ebits` exponent and `mbits` explicit
// mantissa bits (IEEE-like: subnormals, inf, NaN). NaNs become quiet NaNs keeping the sign and
// the top payload bits.
uint16_t double_to_small_float(double d, int ebits, int mbits) {
  const uint64_t u = bits_of(d);
  const uint16_t sign = static_cast<uint16_t>((u >> 63) << (ebits + mbits));
  const uint64_t a = u & ~(uint64_t{1} << 63);
  const uint32_t emax = (1u << ebits) - 1;
  const int bias = (1 << (ebits - 1)) - 1;
  const uint64_t mant = a & ((uint64_t{1} << 52) - 1);
  const uint32_t inf = emax << mbits;
  if (a >= 0x7ff0000000000000ull) {
    if (a == 0x7ff0000000000000ull) return sign | inf;
    return static_cast<uint16_t>(sign | inf | (1u << (mbits - 1)) | (mant >> (52 - mbits)));
  }
  const int e = static_cast<int>(a >> 52);
  if (e == 0) return sign;  // double subnormals are far below the smallest 16-bit subnormal
  const uint64_t m = mant | (uint64_t{1} << 52);
  const int es = e - 1023 + bias;  // the biased exponent in the small format
  if (es >= static_cast<int>(emax)) return sign | inf;
  uint64_t r;
  if (es >= 1) {
    // q includes the implicit bit; a carry out of the mantissa bumps the exponent.
    r = (static_cast<uint64_t>(es - 1) << mbits) + shift_round_even(m, 52 - mbits);
    if (r >= inf) r = inf;
  } else {
    // Subnormal: units of 2^(1 - bias - mbits); rounding up may reach the smallest normal.
    r = shift_round_even(m, 52 - mbits + 1 - es);
  }
  return static_cast<uint16_t>(sign | r);
}

}  // namespace

uint16_t float_to_half_bits(float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) {
    // inf stays inf; NaN -> quiet NaN with the top payload bits (as F16C's vcvtps2ph).
    return a == 0x7f800000u ? (sign | 0x7c00u)
                            : static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  }
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 (halfway above 65504) -> inf
  if (a >= 0x38800000u) {
    // Normal half: rebias the exponent (127 -> 15) and round the low 13 bits to even.
    const uint32_t r = a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u);
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  if (a < 0x33000000u) return sign;  // <= 2^-25 (half the smallest subnormal): rounds to 0
  // Subnormal half: value = m * 2^(e - 150); in units of 2^-24 that is m >> (126 - e).
  const uint32_t e = a >> 23;
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | shift_round_even(m, static_cast<int>(126 - e)));
}

float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  const uint32_t normal = (em << 13) + 0x38000000u;  // rebias 15 -> 127
  // inf stays inf; NaN payloads are kept and made quiet (as F16C's vcvtph2ps).
  const uint32_t infnan = (em << 13) | 0x7f800000u | (em > 0x7c00u ? 0x00400000u : 0u);
  const uint32_t sub = bits_of(static_cast<float>(em) * 0x1p-24f);  // exact, normal in float
  const uint32_t r = em >= 0x7c00u ? infnan : (em >= 0x0400u ? normal : sub);
  return float_of(r | sign);
}

uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Round the low 16 bits to nearest even; a carry rolls into the exponent (max -> inf).
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

uint16_t double_to_half_bits(double d) { return double_to_small_float(d, 5, 10); }
uint16_t double_to_bfloat16_bits(double d) { return double_to_small_float(d, 8, 7); }

}  // namespace tessera
