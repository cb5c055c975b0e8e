// Value ranges (value_range.h): one forward pass over the SSA instructions.
#include "compiler/value_range.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "compiler/math_expand.h"

namespace tessera::compiler {

namespace {

using scalar::Instr;
using scalar::Op;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr DType kF64 = DType::kFloat64;

bool is_f32_or_f64(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }
bool is_float(DType t) { return is_f32_or_f64(t) || t == DType::kFloat16 || t == DType::kBFloat16; }
int width(DType t) { return static_cast<int>(itemsize(t)) * 8; }
bool is_signed_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
// Integers whose every value a double holds exactly, and products of two of them below 2^64.
bool is_small_int(DType t) { return t != DType::kBool && !is_float(t) && width(t) <= 32; }

double type_min(DType t) {
  if (t == DType::kBool) return 0;
  if (is_float(t) || !is_small_int(t)) return -kInf;
  return is_signed_int(t) ? -std::ldexp(1.0, width(t) - 1) : 0.0;
}
double type_max(DType t) {
  if (t == DType::kBool) return 1;
  if (is_float(t) || !is_small_int(t)) return kInf;
  return is_signed_int(t) ? std::ldexp(1.0, width(t) - 1) - 1 : std::ldexp(1.0, width(t)) - 1;
}

ValueRange full(DType t) { return {type_min(t), type_max(t), is_float(t)}; }

// Bounds of a value of type t computed in double: one unit in the last place of t outward
// (covers the type's own rounding after a double rounding), overflow to +-inf kept.
// v rounded to float32 as IEEE does (beyond the largest float: inf from FLT_MAX + half a unit
// on), without a C++ conversion of an out-of-range value.
float to_f32(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  constexpr double kOverflow = 0x1.ffffffp127;  // FLT_MAX + half a unit: rounds to inf
  if (v >= kOverflow) return INFINITY;
  if (v <= -kOverflow) return -INFINITY;
  return static_cast<float>(std::clamp(v, -kMax, kMax));
}

double down(double v, DType t) {
  if (std::isinf(v)) return v;
  if (t == DType::kFloat32) return std::nextafterf(to_f32(v), -INFINITY);
  return std::nextafter(v, -kInf);
}
double up(double v, DType t) {
  if (std::isinf(v)) return v;
  if (t == DType::kFloat32) return std::nextafterf(to_f32(v), INFINITY);
  return std::nextafter(v, kInf);
}

// The float32 values nearest a bound from outside (bounds of float32 values are float32
// values, but this does not rely on it).
float float_below(double v) {
  float f = to_f32(v);
  return static_cast<double>(f) > v ? std::nextafterf(f, -INFINITY) : f;
}
float float_above(double v) {
  float f = to_f32(v);
  return static_cast<double>(f) < v ? std::nextafterf(f, INFINITY) : f;
}

// A float result from candidate bounds computed in double: NaN candidates (inf - inf, 0 * inf
// between corners) give the whole type. A bound the double computed exactly is rounded once
// to the type, as the op rounds (rounding is monotone, so it still bounds); any other is
// widened by one unit.
double rounded(double v, DType t) {
  return t == DType::kFloat32 ? static_cast<double>(to_f32(v)) : v;
}
ValueRange float_result(DType t, double lo, double hi, bool nan, bool lo_exact = false,
                        bool hi_exact = false) {
  if (std::isnan(lo) || std::isnan(hi)) return full(t);
  return {lo_exact ? rounded(lo, t) : down(lo, t), hi_exact ? rounded(hi, t) : up(hi, t), nan};
}

// Whether the double sum / product of two doubles is exact (error-free transformations).
bool sum_exact(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return false;
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb) == 0;
}
bool product_exact(double a, double b) {
  const double p = a * b;
  return std::isfinite(p) && std::fma(a, b, -p) == 0;
}

// An integer result: the exact bounds, or the whole type when they leave it (it wraps).
ValueRange int_result(DType t, double lo, double hi) {
  if (!is_small_int(t) || lo < type_min(t) || hi > type_max(t) || std::isnan(lo) || std::isnan(hi))
    return full(t);
  return {lo, hi, false};
}

bool has_inf(const ValueRange& r) { return std::isinf(r.lo) || std::isinf(r.hi); }
bool has_zero(const ValueRange& r) { return r.lo <= 0 && r.hi >= 0; }
bool constant(const ValueRange& r) { return r.lo == r.hi && !r.nan; }

ValueRange boolean(bool can_true, bool can_false) {
  return {can_false ? 0.0 : 1.0, can_true ? 1.0 : 0.0, false};
}

ValueRange corners(DType t, double a, double b, double c, double d, bool nan, bool exact = false) {
  return float_result(t, std::min({a, b, c, d}), std::max({a, b, c, d}), nan, exact, exact);
}

ValueRange mul_range(DType t, const ValueRange& a, const ValueRange& b, bool square = false) {
  const bool nan = a.nan || b.nan || (has_zero(a) && has_inf(b)) || (has_zero(b) && has_inf(a));
  if (nan && (has_inf(a) || has_inf(b))) return full(t);
  if (square) {  // x * x: never negative
    const double m = std::max(a.lo * a.lo, a.hi * a.hi);
    const bool m_exact = product_exact(a.lo, a.lo) && product_exact(a.hi, a.hi);
    if (has_zero(a)) return float_result(t, 0, m, nan, true, m_exact);
    const double n = std::min(a.lo * a.lo, a.hi * a.hi);
    return float_result(t, n, m, nan, m_exact, m_exact);
  }
  const bool exact = product_exact(a.lo, b.lo) && product_exact(a.lo, b.hi) &&
                     product_exact(a.hi, b.lo) && product_exact(a.hi, b.hi);
  return corners(t, a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi, nan, exact);
}

ValueRange add_range(DType t, const ValueRange& a, const ValueRange& b) {
  const bool nan =
      a.nan || b.nan || (a.hi == kInf && b.lo == -kInf) || (a.lo == -kInf && b.hi == kInf);
  return float_result(t, a.lo + b.lo, a.hi + b.hi, nan, sum_exact(a.lo, b.lo),
                      sum_exact(a.hi, b.hi));
}

ValueRange compare(Op op, const ValueRange& a, const ValueRange& b, bool same) {
  const bool nan = a.nan || b.nan;
  if (same) {  // x against itself: only NaN is unequal to itself
    switch (op) {
      case Op::kEq:
      case Op::kLe:
      case Op::kGe:
        return boolean(true, nan);
      case Op::kNe:
        return boolean(nan, true);
      default:
        return boolean(false, true);  // lt, gt
    }
  }
  switch (op) {
    case Op::kLt:
      return boolean(a.lo < b.hi, nan || a.hi >= b.lo);
    case Op::kLe:
      return boolean(a.lo <= b.hi, nan || a.hi > b.lo);
    case Op::kGt:
      return boolean(a.hi > b.lo, nan || a.lo <= b.hi);
    case Op::kGe:
      return boolean(a.hi >= b.lo, nan || a.lo < b.hi);
    case Op::kEq:
    case Op::kNe: {
      const bool overlap = a.lo <= b.hi && b.lo <= a.hi;
      const bool same = constant(a) && constant(b) && a.lo == b.lo;
      const bool can_eq = overlap, can_ne = nan || !same;
      return op == Op::kEq ? boolean(can_eq, can_ne) : boolean(can_ne, can_eq);
    }
    default:
      return {0, 1, false};
  }
}

ValueRange convert(DType to, DType from, const ValueRange& a) {
  if (to == DType::kBool) {
    const bool can_true = a.nan || a.lo != 0 || a.hi != 0;
    return boolean(can_true, has_zero(a));
  }
  if (to == DType::kFloat16 || to == DType::kBFloat16 || from == DType::kFloat16 ||
      from == DType::kBFloat16)
    return full(to);
  if (is_float(to)) {
    if (is_float(from) && width(to) >= width(from)) return a;  // widening is exact
    return float_result(to, a.lo, a.hi, a.nan);
  }
  if (is_float(from)) {  // truncation toward zero, saturating, NaN -> 0
    if (!is_small_int(to)) return full(to);
    double lo = std::clamp(std::trunc(a.lo), type_min(to), type_max(to));
    double hi = std::clamp(std::trunc(a.hi), type_min(to), type_max(to));
    if (a.nan) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    return {lo, hi, false};
  }
  return int_result(to, a.lo, a.hi);  // integer or bool -> integer: the same values or a wrap
}

ValueRange bitcast(DType to, DType from, const ValueRange& a) {
  // Non-negative 32-bit patterns below the infinity's are positive floats, in the same order.
  if (to == DType::kFloat32 && is_small_int(from) && width(from) == 32 && a.lo >= 0 &&
      a.hi <= 0x7f800000)
    return {std::bit_cast<float>(static_cast<uint32_t>(a.lo)),
            std::bit_cast<float>(static_cast<uint32_t>(a.hi)), false};
  // And back: positive floats (not -0, not NaN) to their patterns.
  if (from == DType::kFloat32 && is_small_int(to) && width(to) == 32 && a.lo > 0 && !a.nan) {
    const float lo = float_below(a.lo) > 0 ? float_below(a.lo) : 0.0f;  // +0: pattern 0
    return {static_cast<double>(std::bit_cast<uint32_t>(lo)),
            static_cast<double>(std::bit_cast<uint32_t>(float_above(a.hi))), false};
  }
  return full(to);
}

ValueRange int_binary(Op op, DType t, const ValueRange& a, const ValueRange& b) {
  if (!is_small_int(t)) return full(t);
  switch (op) {
    case Op::kAdd:
      return int_result(t, a.lo + b.lo, a.hi + b.hi);
    case Op::kSub:
      return int_result(t, a.lo - b.hi, a.hi - b.lo);
    case Op::kMul: {
      const double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
      return int_result(t, *std::min_element(c, c + 4), *std::max_element(c, c + 4));
    }
    case Op::kMax:
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), false};
    case Op::kMin:
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), false};
    case Op::kAnd:
      if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi), false};
      return full(t);
    case Op::kOr:
      if (a.lo >= 0 && b.lo >= 0)
        return {std::max(a.lo, b.lo), std::min(a.hi + b.hi, type_max(t)), false};
      return full(t);
    case Op::kShrLogical:
    case Op::kShrArith: {
      if (!constant(b) || b.lo < 0 || (op == Op::kShrArith && !is_signed_int(t))) return full(t);
      const int w = width(t);
      if (b.lo >= w) return op == Op::kShrLogical || a.lo >= 0 ? ValueRange{0, 0, false} : full(t);
      const double scale = std::ldexp(1.0, static_cast<int>(b.lo));
      if (a.lo >= 0 || op == Op::kShrArith)
        return {std::floor(a.lo / scale), std::floor(a.hi / scale), false};
      if (op == Op::kShrLogical && b.lo >= 1)  // the sign bit shifted out: non-negative
        return {0, std::floor((std::ldexp(1.0, w) - 1) / scale), false};
      return full(t);
    }
    default:
      return full(t);
  }
}

}  // namespace

std::vector<ValueRange> value_ranges(const scalar::Program& p) {
  std::vector<ValueRange> r;
  r.reserve(p.instrs.size());
  for (const Instr& in : p.instrs) {
    const DType t = in.type;
    auto arg = [&](int k) -> const ValueRange& { return r[static_cast<size_t>(in.args[k])]; };
    auto arg_type = [&](int k) { return p.instrs[static_cast<size_t>(in.args[k])].type; };
    ValueRange v = full(t);
    switch (in.op) {
      case Op::kConst:
        if (is_float(t)) {
          const double d = std::bit_cast<double>(in.literal);
          v = std::isnan(d) ? ValueRange{0, 0, true} : ValueRange{d, d, false};
        } else if (t == DType::kBool || is_small_int(t)) {
          const double d = is_signed_int(t) ? static_cast<double>(static_cast<int64_t>(in.literal))
                                            : static_cast<double>(in.literal);
          v = {d, d, false};
        }
        break;
      case Op::kConvert:
        v = convert(t, arg_type(0), arg(0));
        break;
      case Op::kBitcast:
        v = bitcast(t, arg_type(0), arg(0));
        break;
      case Op::kSelect: {
        const ValueRange& c = arg(0);
        if (c.lo == 1) {
          v = arg(1);
        } else if (c.hi == 0) {
          v = arg(2);
        } else {
          const ValueRange &a = arg(1), &b = arg(2);
          v = {std::min(a.lo, b.lo), std::max(a.hi, b.hi), a.nan || b.nan};
        }
        break;
      }
      case Op::kEq:
      case Op::kNe:
      case Op::kLt:
      case Op::kLe:
      case Op::kGt:
      case Op::kGe:
        v = compare(in.op, arg(0), arg(1), in.args[0] == in.args[1]);
        break;
      case Op::kNot:
        if (t == DType::kBool) v = boolean(arg(0).lo == 0, arg(0).hi == 1);
        break;
      case Op::kAnd:
      case Op::kOr:
      case Op::kXor:
        if (t == DType::kBool) {
          const ValueRange &a = arg(0), &b = arg(1);
          const bool at = a.hi == 1, af = a.lo == 0, bt = b.hi == 1, bf = b.lo == 0;
          if (in.op == Op::kAnd) v = boolean(at && bt, af || bf);
          if (in.op == Op::kOr) v = boolean(at || bt, af && bf);
          if (in.op == Op::kXor) v = boolean((at && bf) || (af && bt), (at && bt) || (af && bf));
        } else {
          v = int_binary(in.op, t, arg(0), arg(1));
        }
        break;
      default:
        break;
    }
    if (is_f32_or_f64(t)) {
      switch (in.op) {
        case Op::kNeg:
          v = {-arg(0).hi, -arg(0).lo, arg(0).nan};
          break;
        case Op::kAbs: {
          const ValueRange& a = arg(0);
          if (a.lo >= 0)
            v = a;
          else if (a.hi <= 0)
            v = {-a.hi, -a.lo, a.nan};
          else
            v = {0, std::max(-a.lo, a.hi), a.nan};
          break;
        }
        case Op::kAdd:
          v = add_range(t, arg(0), arg(1));
          break;
        case Op::kSub:
          v = add_range(t, arg(0), {-arg(1).hi, -arg(1).lo, arg(1).nan});
          break;
        case Op::kMul:
          v = mul_range(t, arg(0), arg(1), in.args[0] == in.args[1]);
          break;
        case Op::kDiv: {
          const ValueRange &a = arg(0), &b = arg(1);
          if (has_zero(b) || b.nan || a.nan || (has_inf(a) && has_inf(b))) break;  // whole type
          v = corners(t, a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi, false);
          break;
        }
        case Op::kFma: {
          // The product is not rounded to the type: bound it in double (exact for float32
          // operands, widened by a double unit otherwise), then round the sum once.
          const ValueRange prod = mul_range(kF64, arg(0), arg(1));
          v = add_range(t, prod, arg(2));
          break;
        }
        case Op::kMax:
        case Op::kMin: {
          const ValueRange &a = arg(0), &b = arg(1);
          v = in.op == Op::kMax ? ValueRange{std::max(a.lo, b.lo), std::max(a.hi, b.hi), false}
                                : ValueRange{std::min(a.lo, b.lo), std::min(a.hi, b.hi), false};
          v.nan = a.nan || b.nan;
          break;
        }
        case Op::kSqrt: {
          const ValueRange& a = arg(0);
          if (a.hi < 0) {
            v = {0, 0, true};
          } else {
            v = {down(std::sqrt(std::max(a.lo, 0.0)), t), up(std::sqrt(a.hi), t),
                 a.nan || a.lo < 0};
            v.lo = std::max(v.lo, 0.0);
          }
          break;
        }
        case Op::kFloor:
        case Op::kCeil:
        case Op::kRoundEven:
        case Op::kRoundAway: {
          // Monotone, exact, and between floor and ceil.
          const ValueRange& a = arg(0);
          v = {std::floor(a.lo), std::ceil(a.hi), a.nan};
          break;
        }
        case Op::kCopySign: {
          const double m = std::max(std::abs(arg(0).lo), std::abs(arg(0).hi));
          v = {-m, m, arg(0).nan};
          break;
        }
        default:
          break;
      }
    } else if (is_small_int(t)) {
      switch (in.op) {
        case Op::kAdd:
        case Op::kSub:
        case Op::kMul:
        case Op::kMax:
        case Op::kMin:
        case Op::kShrLogical:
        case Op::kShrArith:
          v = int_binary(in.op, t, arg(0), arg(1));
          break;
        case Op::kNeg:
          v = int_result(t, -arg(0).hi, -arg(0).lo);
          break;
        case Op::kPopcnt:
        case Op::kClz:
          v = {0, static_cast<double>(width(t)), false};
          break;
        default:
          break;
      }
    }
    r.push_back(v);
  }
  return r;
}

scalar::Program fold_decided_selects(const scalar::Program& p, int* decided) {
  const std::vector<ValueRange> r = value_ranges(p);
  scalar::Program out = p;
  int n = 0;
  for (size_t i = 0; i < out.instrs.size(); ++i) {
    Instr& in = out.instrs[i];
    if (in.op != Op::kSelect || in.args[1] == in.args[2]) continue;
    const ValueRange& c = r[static_cast<size_t>(in.args[0])];
    if (c.lo != c.hi || is_range_fallback(p, static_cast<int32_t>(i))) continue;
    const int32_t chosen = c.lo == 1 ? in.args[1] : in.args[2];
    in.args[1] = in.args[2] = chosen;
    ++n;
  }
  if (decided != nullptr) *decided = n;
  return out;
}

}  // namespace tessera::compiler
