// The reference evaluator of the scalar IR (scalar_ir.h): one instruction at a time on typed
// scalars, with the semantics the header states. Float32 arithmetic is done in float32 (IEEE,
// no contraction), transcendental ops are float64 libm rounded once to the type, externs are
// Tessera's float64 special-function kernels (what a CPU backend links).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "prims/special_kernels.h"
#include "prims/vec_math_pow.h"
#include "tessera/errors.h"
#include "tessera/scalar_ir.h"

namespace tessera::scalar {
namespace {

namespace sk = kernels::special;

constexpr const char* kLayer = "prims/scalar_eval";

int bits_of(DType t) { return t == DType::kBool ? 1 : static_cast<int>(itemsize(t) * 8); }

// The value of integer type t held in 64 bits: sign-extended (signed) or masked (unsigned, bool).
uint64_t normalize(uint64_t v, DType t) {
  const int w = bits_of(t);
  if (t == DType::kBool) return v & 1;
  if (w == 64) return v;
  const uint64_t mask = (uint64_t{1} << w) - 1;
  v &= mask;
  if (is_signed_integer(t) && (v >> (w - 1)) & 1) v |= ~mask;
  return v;
}

double round_to(double v, DType t) {
  switch (t) {
    case DType::kFloat64:
      return v;
    case DType::kFloat32:
      return static_cast<double>(static_cast<float>(v));
    case DType::kFloat16:
      return static_cast<double>(half_bits_to_float(double_to_half_bits(v)));
    case DType::kBFloat16:
      return static_cast<double>(bfloat16_bits_to_float(double_to_bfloat16_bits(v)));
    default:
      throw_internal(kLayer, "round_to a non-float type");
  }
}

int mantissa_bits(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 11;
    case DType::kBFloat16:
      return 8;
    case DType::kFloat32:
      return 24;
    default:
      return 53;
  }
}

// An integer rounded once to float type t: the magnitude rounded to t's significand width, to
// nearest even, in integer arithmetic (exact in a double), then t's range (overflow -> inf).
double int_to_float(uint64_t bits, bool is_signed, DType t) {
  const bool negative = is_signed && static_cast<int64_t>(bits) < 0;
  uint64_t mag = negative ? 0 - bits : bits;
  const int p = mantissa_bits(t);
  int shift = 0;
  const int len = 64 - std::countl_zero(mag);
  if (len > p) {
    shift = len - p;
    const uint64_t low = mag & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    mag >>= shift;
    if (low > half || (low == half && (mag & 1))) ++mag;
  }
  const double v = std::ldexp(static_cast<double>(mag), shift);
  return round_to(negative ? -v : v, t);  // exact except for overflow to inf
}

// Float -> integer: truncate, NaN -> 0, saturate.
uint64_t float_to_int(double v, DType t) {
  if (std::isnan(v)) return 0;
  const int w = bits_of(t);
  if (is_signed_integer(t)) {
    const double hi = std::ldexp(1.0, w - 1);
    if (v >= hi) return normalize((uint64_t{1} << (w - 1)) - 1, t);
    if (v < -hi) return normalize(uint64_t{1} << (w - 1), t);
    return normalize(static_cast<uint64_t>(static_cast<int64_t>(std::trunc(v))), t);
  }
  const double hi = std::ldexp(1.0, w);
  if (v >= hi) return normalize(~uint64_t{0}, t);
  if (v < 0) return 0;  // negatives saturate to 0 (-0.5 truncates to 0 too)
  return static_cast<uint64_t>(std::trunc(v));
}

ScalarValue fv(double v, DType t) {
  ScalarValue r;
  r.type = t;
  r.bits = std::bit_cast<uint64_t>(v);
  return r;
}
ScalarValue iv(uint64_t v, DType t) {
  ScalarValue r;
  r.type = t;
  r.bits = normalize(v, t);
  return r;
}
double F(const ScalarValue& v) { return std::bit_cast<double>(v.bits); }
bool is_f32(DType t) { return t == DType::kFloat32; }

ScalarValue convert(const ScalarValue& x, DType to) {
  const DType from = x.type;
  if (from == to) return x;
  if (to == DType::kBool) {
    return iv(is_floating(from) ? F(x) != 0.0 : x.bits != 0, to);
  }
  if (is_floating(to)) {
    if (is_floating(from)) return fv(round_to(F(x), to), to);
    return fv(int_to_float(x.bits, is_signed_integer(from), to), to);
  }
  if (is_floating(from)) return iv(float_to_int(F(x), to), to);
  return iv(x.bits, to);  // integer/bool -> integer wraps
}

ScalarValue bitcast(const ScalarValue& x, DType to) {
  uint64_t raw;  // the bit pattern in x's width
  switch (x.type) {
    case DType::kFloat64:
      raw = x.bits;
      break;
    case DType::kFloat32:
      raw = std::bit_cast<uint32_t>(static_cast<float>(F(x)));
      break;
    case DType::kFloat16:
      raw = double_to_half_bits(F(x));
      break;
    case DType::kBFloat16:
      raw = double_to_bfloat16_bits(F(x));
      break;
    default:
      raw = x.bits & (bits_of(x.type) == 64 ? ~uint64_t{0} : (uint64_t{1} << bits_of(x.type)) - 1);
  }
  switch (to) {
    case DType::kFloat64:
      return fv(std::bit_cast<double>(raw), to);
    case DType::kFloat32:
      return fv(static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(raw))), to);
    case DType::kFloat16:
      return fv(static_cast<double>(half_bits_to_float(static_cast<uint16_t>(raw))), to);
    case DType::kBFloat16:
      return fv(static_cast<double>(bfloat16_bits_to_float(static_cast<uint16_t>(raw))), to);
    default:
      return iv(raw, to);
  }
}

using D1 = double (*)(double);
using D2 = double (*)(double, double);

// Transcendental op f on a float: float64 libm, rounded once to the type.
ScalarValue trans1(D1 f, const ScalarValue& a) { return fv(round_to(f(F(a)), a.type), a.type); }
ScalarValue trans2(D2 f, const ScalarValue& a, const ScalarValue& b) {
  return fv(round_to(f(F(a), F(b)), a.type), a.type);
}

double rsqrt_d(double x) { return 1.0 / std::sqrt(x); }

double call_extern(Fn f, const double* a) {
  switch (f) {
    case Fn::kErf:
      return std::erf(a[0]);
    case Fn::kErfc:
      return std::erfc(a[0]);
    case Fn::kLgamma:
      return sk::log_gamma(a[0]);
    case Fn::kDigamma:
      return sk::digamma(a[0]);
    case Fn::kPolygamma:
      return sk::polygamma(a[0], a[1]);
    case Fn::kZeta:
      return sk::hurwitz_zeta(a[0], a[1]);
    case Fn::kIgamma:
      return sk::igamma(a[0], a[1]);
    case Fn::kIgammac:
      return sk::igammac(a[0], a[1]);
    case Fn::kIgammaGradA:
      return sk::igamma_grad_a(a[0], a[1]);
    case Fn::kBesselI0e:
      return sk::bessel_i0e(a[0]);
    case Fn::kBesselI1e:
      return sk::bessel_i1e(a[0]);
    case Fn::kBetainc:
      return sk::betainc(a[0], a[1], a[2]);
    case Fn::kRandomGammaGrad:
      return sk::random_gamma_grad(a[0], a[1]);
  }
  throw_internal(kLayer, "unknown extern function");
}

int64_t S(const ScalarValue& v) { return static_cast<int64_t>(v.bits); }

// The order of two values of one type (integers signed or unsigned, bool as 0/1).
template <class Cmp>
bool order(const ScalarValue& a, const ScalarValue& b, Cmp cmp) {
  if (is_floating(a.type)) return cmp(F(a), F(b));
  if (is_signed_integer(a.type)) return cmp(S(a), S(b));
  return cmp(a.bits, b.bits);
}

ScalarValue arith(Op op, const ScalarValue& a, const ScalarValue& b) {
  const DType t = a.type;
  if (is_floating(t)) {
    if (is_f32(t)) {
      const float x = static_cast<float>(F(a)), y = static_cast<float>(F(b));
      float r = 0;
      switch (op) {
        case Op::kAdd:
          r = x + y;
          break;
        case Op::kSub:
          r = x - y;
          break;
        case Op::kMul:
          r = x * y;
          break;
        case Op::kDiv:
          r = x / y;
          break;
        case Op::kRem:
          r = std::fmod(x, y);
          break;
        default:
          throw_internal(kLayer, "arith");
      }
      return fv(r, t);
    }
    const double x = F(a), y = F(b);
    switch (op) {
      case Op::kAdd:
        return fv(x + y, t);
      case Op::kSub:
        return fv(x - y, t);
      case Op::kMul:
        return fv(x * y, t);
      case Op::kDiv:
        return fv(x / y, t);
      case Op::kRem:
        return fv(std::fmod(x, y), t);
      default:
        throw_internal(kLayer, "arith");
    }
  }
  const uint64_t x = a.bits, y = b.bits;
  const bool sgn = is_signed_integer(t);
  const uint64_t min_signed = normalize(uint64_t{1} << (bits_of(t) - 1), t);
  switch (op) {
    case Op::kAdd:
      return iv(x + y, t);
    case Op::kSub:
      return iv(x - y, t);
    case Op::kMul:
      return iv(x * y, t);
    case Op::kDiv:
      if (y == 0) return iv(~uint64_t{0}, t);
      if (sgn) {
        if (x == min_signed && S(b) == -1) return iv(x, t);
        return iv(static_cast<uint64_t>(S(a) / S(b)), t);
      }
      return iv(x / y, t);
    case Op::kRem:
      if (y == 0) return iv(x, t);
      if (sgn) {
        if (x == min_signed && S(b) == -1) return iv(0, t);
        return iv(static_cast<uint64_t>(S(a) % S(b)), t);
      }
      return iv(x % y, t);
    default:
      throw_internal(kLayer, "arith");
  }
}

ScalarValue eval1(const Instr& in, const ScalarValue* a) {
  const DType t = in.type;
  const ScalarValue& x = a[0];
  switch (in.op) {
    case Op::kConvert:
      return convert(x, t);
    case Op::kBitcast:
      return bitcast(x, t);
    case Op::kNeg:
      return is_floating(t) ? fv(-F(x), t) : iv(0 - x.bits, t);
    case Op::kAbs:
      if (is_floating(t)) return fv(std::fabs(F(x)), t);
      return is_signed_integer(t) && S(x) < 0 ? iv(0 - x.bits, t) : x;
    case Op::kFloor:
      return fv(std::floor(F(x)), t);
    case Op::kCeil:
      return fv(std::ceil(F(x)), t);
    case Op::kRoundEven:
      return fv(std::nearbyint(F(x)), t);
    case Op::kRoundAway:
      return fv(std::round(F(x)), t);
    case Op::kSqrt:
      return is_f32(t) ? fv(std::sqrt(static_cast<float>(F(x))), t) : fv(std::sqrt(F(x)), t);
    case Op::kRsqrt:
      return trans1(rsqrt_d, x);
    case Op::kCbrt:
      return trans1(static_cast<D1>(std::cbrt), x);
    case Op::kExp:
      return trans1(static_cast<D1>(std::exp), x);
    case Op::kExp2:
      return trans1(static_cast<D1>(std::exp2), x);
    case Op::kExpm1:
      return trans1(static_cast<D1>(std::expm1), x);
    case Op::kLog:
      return trans1(static_cast<D1>(std::log), x);
    case Op::kLog1p:
      return trans1(static_cast<D1>(std::log1p), x);
    case Op::kSin:
      return trans1(static_cast<D1>(std::sin), x);
    case Op::kCos:
      return trans1(static_cast<D1>(std::cos), x);
    case Op::kTan:
      return trans1(static_cast<D1>(std::tan), x);
    case Op::kTanh:
      return trans1(static_cast<D1>(std::tanh), x);
    case Op::kNot:
      return t == DType::kBool ? iv(x.bits ^ 1, t) : iv(~x.bits, t);
    case Op::kPopcnt: {
      const int w = bits_of(t);
      const uint64_t m = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
      return iv(static_cast<uint64_t>(std::popcount(x.bits & m)), t);
    }
    case Op::kClz: {
      const int w = bits_of(t);
      const uint64_t m = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
      return iv(static_cast<uint64_t>(w - (64 - std::countl_zero(x.bits & m))), t);
    }
    default:
      throw_internal(kLayer, std::string("unary op ") + op_name(in.op));
  }
}

ScalarValue eval2(const Instr& in, const ScalarValue& x, const ScalarValue& y) {
  const DType t = x.type;
  switch (in.op) {
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
    case Op::kRem:
      return arith(in.op, x, y);
    case Op::kMax:
    case Op::kMin: {
      if (is_floating(t) && (std::isnan(F(x)) || std::isnan(F(y))))
        return fv(std::numeric_limits<double>::quiet_NaN(), t);
      const bool first = in.op == Op::kMax ? order(x, y, [](auto p, auto q) { return p > q; })
                                           : order(x, y, [](auto p, auto q) { return p < q; });
      return first ? x : y;
    }
    case Op::kCopySign:
      return fv(std::copysign(F(x), F(y)), t);
    case Op::kAtan2:
      return trans2(static_cast<D2>(std::atan2), x, y);
    case Op::kPow:
      if (is_f32(t))
        return fv(kernels::vmath::pow(static_cast<float>(F(x)), static_cast<float>(F(y))), t);
      return fv(std::pow(F(x), F(y)), t);
    case Op::kNextAfter:
      if (is_f32(t))
        return fv(std::nextafter(static_cast<float>(F(x)), static_cast<float>(F(y))), t);
      return fv(std::nextafter(F(x), F(y)), t);
    case Op::kEq:
      return iv(is_floating(t) ? F(x) == F(y) : x.bits == y.bits, DType::kBool);
    case Op::kNe:
      return iv(is_floating(t) ? F(x) != F(y) : x.bits != y.bits, DType::kBool);
    case Op::kLt:
      return iv(order(x, y, [](auto p, auto q) { return p < q; }), DType::kBool);
    case Op::kLe:
      return iv(order(x, y, [](auto p, auto q) { return p <= q; }), DType::kBool);
    case Op::kGt:
      return iv(order(x, y, [](auto p, auto q) { return p > q; }), DType::kBool);
    case Op::kGe:
      return iv(order(x, y, [](auto p, auto q) { return p >= q; }), DType::kBool);
    case Op::kAnd:
      return iv(x.bits & y.bits, t);
    case Op::kOr:
      return iv(x.bits | y.bits, t);
    case Op::kXor:
      return iv(x.bits ^ y.bits, t);
    case Op::kShl:
    case Op::kShrLogical:
    case Op::kShrArith: {
      const int w = bits_of(t);
      const uint64_t m = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
      const uint64_t amount = y.bits & m;  // read as unsigned
      const uint64_t v = x.bits & m;
      const bool top = (v >> (w - 1)) & 1;
      if (amount >= static_cast<uint64_t>(w)) {
        return iv(in.op == Op::kShrArith && top ? ~uint64_t{0} : 0, t);
      }
      if (in.op == Op::kShl) return iv(v << amount, t);
      if (in.op == Op::kShrLogical) return iv(v >> amount, t);
      uint64_t r = v >> amount;
      if (top && amount > 0) r |= m & ~(m >> amount);
      return iv(r, t);
    }
    default:
      throw_internal(kLayer, std::string("binary op ") + op_name(in.op));
  }
}

}  // namespace

ScalarValue ScalarValue::of_double(double v, DType t) {
  if (is_floating(t)) return fv(round_to(v, t), t);
  if (t == DType::kBool) return iv(v != 0.0, t);
  return iv(float_to_int(v, t), t);
}

ScalarValue ScalarValue::of_int(int64_t v, DType t) {
  if (is_floating(t)) return fv(int_to_float(static_cast<uint64_t>(v), true, t), t);
  return iv(static_cast<uint64_t>(v), t);
}

double ScalarValue::as_double() const {
  if (is_floating(type)) return F(*this);
  if (is_signed_integer(type)) return static_cast<double>(S(*this));
  return static_cast<double>(bits);
}

int64_t ScalarValue::as_int() const { return static_cast<int64_t>(bits); }

std::vector<ScalarValue> evaluate(const Program& p, std::span<const ScalarValue> inputs) {
  if (inputs.size() != p.inputs.size()) throw_internal(kLayer, "evaluate: wrong number of inputs");
  std::vector<ScalarValue> v(p.instrs.size());
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const Instr& in = p.instrs[i];
    ScalarValue a[3];
    for (int k = 0; k < 3; ++k)
      if (in.args[k] >= 0) a[k] = v[static_cast<size_t>(in.args[k])];
    switch (in.op) {
      case Op::kInput: {
        const ScalarValue& x = inputs[static_cast<size_t>(in.index)];
        if (x.type != in.type) throw_internal(kLayer, "evaluate: input of the wrong type");
        v[i] = x;
        break;
      }
      case Op::kConst:
        v[i] = is_floating(in.type) ? fv(std::bit_cast<double>(in.literal), in.type)
                                    : iv(in.literal, in.type);
        break;
      case Op::kSelect:
        v[i] = a[0].bits ? a[1] : a[2];
        break;
      case Op::kFma:
        if (is_f32(in.type)) {
          v[i] = fv(std::fma(static_cast<float>(F(a[0])), static_cast<float>(F(a[1])),
                             static_cast<float>(F(a[2]))),
                    in.type);
        } else {
          v[i] = fv(std::fma(F(a[0]), F(a[1]), F(a[2])), in.type);
        }
        break;
      case Op::kExtern: {
        const double d[3] = {F(a[0]), F(a[1]), F(a[2])};
        v[i] = fv(call_extern(static_cast<Fn>(in.index), d), DType::kFloat64);
        break;
      }
      default:
        v[i] = op_arity(in.op) == 1 ? eval1(in, a) : eval2(in, a[0], a[1]);
    }
  }
  std::vector<ScalarValue> out;
  out.reserve(p.outputs.size());
  for (int32_t o : p.outputs) out.push_back(v[static_cast<size_t>(o)]);
  return out;
}

}  // namespace tessera::scalar
