// Vectorized math as scalar-IR expansions (math_expand.h): vec_math.h / vec_math_extra.h's
// float32 functions written out as scalar programs, one C++ operation per instruction, in the
// C++ order (each comment names the vmath line it mirrors where that is not obvious).
#include "compiler/math_expand.h"

#include <bit>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "tessera/errors.h"

namespace tessera::compiler {
namespace {

using scalar::Builder;
using scalar::Op;
using scalar::Value;

constexpr const char* kLayer = "compiler/math_expand";
constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64, kI32 = DType::kInt32,
                kU32 = DType::kUInt32;

void want(Value x, DType t, const char* fn) {
  if (x.type != t) {
    throw_internal(kLayer, std::string(fn) + " of a " + std::string(dtype_short_name(x.type)) +
                               " operand (it takes " + std::string(dtype_short_name(t)) + ")");
  }
}

// A float32 literal (exactly the float: Builder::constant stores the double it is given).
Value k(Builder& b, float v) { return b.constant(static_cast<double>(v), kF32); }
Value ki(Builder& b, int32_t v) {
  return b.constant_bits(static_cast<uint64_t>(static_cast<int64_t>(v)), kI32);
}
Value ku(Builder& b, uint32_t v) { return b.constant_bits(v, kU32); }
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// q = c0; q = fma(q, x, c_i) for the rest (vmath's Horner steps).
Value horner(Builder& b, Value x, std::initializer_list<float> c) {
  auto it = c.begin();
  Value q = k(b, *it);
  for (++it; it != c.end(); ++it) q = b.fma(q, x, k(b, *it));
  return q;
}

// bits_to_float(static_cast<uint32_t>(n + 127) << 23) for an int32 n: 2^n, n a normal exponent.
Value pow2(Builder& b, Value n) {
  return b.bitcast(b.binary(Op::kShl, b.add(n, ki(b, 127)), ki(b, 23)), kF32);
}

// p * 2^n in two steps (n1 = n >> 1, n2 = n - n1), as exp and exp2 scale.
Value scale(Builder& b, Value p, Value n) {
  const Value n1 = b.binary(Op::kShrArith, n, ki(b, 1));
  const Value n2 = b.sub(n, n1);
  return b.mul(b.mul(p, pow2(b, n1)), pow2(b, n2));
}

// select(x != x, x, y): NaN operands returned as they are.
Value keep_nan(Builder& b, Value x, Value y) { return b.select(b.is_nan(x), x, y); }

Value copysign(Builder& b, Value mag, Value sign) { return b.binary(Op::kCopySign, mag, sign); }

// ---- sin/cos argument reduction (vmath::sincos_reduced), shared by sin, cos and tan.

struct TrigReduced {
  Value in_range;  // fabs(x) <= kTrigMax
  Value q;         // n mod 2^32 (uint32)
  Value sn, cs;    // sin r, cos r
};

TrigReduced trig_reduce(Builder& b, Value x) {
  constexpr float k2OverPi = 0.636619772367581343f;
  constexpr float kShift = 12582912.0f;
  constexpr float kPio2a = 1.570796371e+00f;
  constexpr float kPio2b = -4.371138829e-08f;
  constexpr float kPio2c = -1.715124510e-15f;
  TrigReduced t;
  t.in_range = b.le(b.abs(x), k(b, kTrigMax));
  const Value xc = b.select(t.in_range, x, k(b, 0.0f));
  const Value s = b.fma(xc, k(b, k2OverPi), k(b, kShift));
  t.q = b.sub(b.bitcast(s, kU32), ku(b, bits(kShift)));
  const Value nf = b.sub(s, k(b, kShift));
  const Value mnf = b.neg(nf);
  Value r = b.fma(mnf, k(b, kPio2a), xc);
  r = b.fma(mnf, k(b, kPio2b), r);
  r = b.fma(mnf, k(b, kPio2c), r);
  const Value z = b.mul(r, r);
  const Value ps =
      horner(b, z, {2.716809831e-06f, -1.983917609e-04f, 8.333329111e-03f, -1.666666716e-01f});
  t.sn = b.fma(b.mul(ps, z), r, r);
  const Value pc =
      horner(b, z, {-2.719629890e-07f, 2.479935029e-05f, -1.388888340e-03f, 4.166666791e-02f});
  t.cs = b.fma(b.mul(pc, z), z, b.fma(k(b, -0.5f), z, k(b, 1.0f)));
  return t;
}

// sincos_reduced<kCos>'s result from the reduction: the quadrant picks sin r or cos r and the
// sign; sin keeps the sign of a zero.
Value trig_quadrant(Builder& b, const TrigReduced& t, Value x, bool cos) {
  const Value kq = cos ? b.add(t.q, ku(b, 1)) : t.q;
  const Value odd = b.ne(b.bit_and(kq, ku(b, 1)), ku(b, 0));
  const Value v = b.select(odd, t.cs, t.sn);
  const Value sign = b.binary(Op::kShl, b.bit_and(kq, ku(b, 2)), ku(b, 30));
  const Value y = b.bitcast(b.binary(Op::kXor, b.bitcast(v, kU32), sign), kF32);
  return cos ? y : b.select(b.eq(x, k(b, 0.0f)), x, y);
}

Value sin_or_cos(Builder& b, Value x, bool cos) {
  want(x, kF32, cos ? "expand_cos_f32" : "expand_sin_f32");
  const TrigReduced t = trig_reduce(b, x);
  const Value fallback = b.unary(cos ? Op::kCos : Op::kSin, x);  // sinf/cosf, as sincos_n
  return b.select(t.in_range, trig_quadrant(b, t, x, cos), fallback);
}

Value expand_one(Builder& b, const scalar::Instr& in, const Value* a) {
  switch (in.op) {
    case Op::kExp:
      return expand_exp_f32(b, a[0]);
    case Op::kExp2:
      return expand_exp2_f32(b, a[0]);
    case Op::kExpm1:
      return expand_expm1_f32(b, a[0]);
    case Op::kLog:
      return expand_log_f32(b, a[0]);
    case Op::kLog1p:
      return expand_log1p_f32(b, a[0]);
    case Op::kTanh:
      return expand_tanh_f32(b, a[0]);
    case Op::kSin:
      return expand_sin_f32(b, a[0]);
    case Op::kCos:
      return expand_cos_f32(b, a[0]);
    case Op::kTan:
      return expand_tan_f32(b, a[0]);
    case Op::kRsqrt:
      return in.type == kF32 ? expand_rsqrt_f32(b, a[0]) : expand_rsqrt_f64(b, a[0]);
    case Op::kNextAfter:
      return expand_nextafter(b, a[0], a[1]);
    case Op::kPow:
      return expand_pow_f32(b, a[0], a[1]);
    default:
      throw_internal(kLayer, std::string("no expansion of ") + scalar::op_name(in.op));
  }
}

const scalar::Instr* instr(const scalar::Program& p, int32_t i) {
  return i >= 0 && static_cast<size_t>(i) < p.instrs.size() ? &p.instrs[static_cast<size_t>(i)]
                                                            : nullptr;
}

}  // namespace

// ---------------------------------------------------------------- the pass

bool expands(Op op, DType t) {
  if (t == kF64) return op == Op::kRsqrt || op == Op::kNextAfter;
  if (t != kF32) return false;
  switch (op) {
    case Op::kExp:
    case Op::kExp2:
    case Op::kExpm1:
    case Op::kLog:
    case Op::kLog1p:
    case Op::kTanh:
    case Op::kSin:
    case Op::kCos:
    case Op::kTan:
    case Op::kRsqrt:
    case Op::kNextAfter:
    case Op::kPow:
      return true;
    default:
      return false;
  }
}

bool is_range_fallback(const scalar::Program& p, int32_t i) {
  const scalar::Instr* s = instr(p, i);
  if (s == nullptr || s->op != Op::kSelect) return false;
  const scalar::Instr* cond = instr(p, s->args[0]);
  const scalar::Instr* slow = instr(p, s->args[2]);
  if (cond == nullptr || slow == nullptr || cond->op != Op::kLe) return false;
  const scalar::Instr* abs = instr(p, cond->args[0]);
  const scalar::Instr* bound = instr(p, cond->args[1]);
  if (abs == nullptr || bound == nullptr || abs->op != Op::kAbs || abs->type != kF32 ||
      bound->op != Op::kConst || bound->literal != std::bit_cast<uint64_t>(double{kTrigMax}))
    return false;
  const int32_t x = abs->args[0];
  if ((slow->op == Op::kSin || slow->op == Op::kCos) && slow->type == kF32)
    return slow->args[0] == x;
  // tan: convert(tan(convert(x, f64)), f32).
  const scalar::Instr* t = slow->op == Op::kConvert ? instr(p, slow->args[0]) : nullptr;
  const scalar::Instr* c = t != nullptr && t->op == Op::kTan ? instr(p, t->args[0]) : nullptr;
  return c != nullptr && c->op == Op::kConvert && c->args[0] == x;
}

scalar::Program expand_math(const scalar::Program& p) {
  // The sin/cos fallbacks of an earlier expansion stay calls (so the pass is idempotent).
  std::vector<bool> fallback(p.instrs.size(), false);
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    if (is_range_fallback(p, static_cast<int32_t>(i)))
      fallback[static_cast<size_t>(p.instrs[i].args[2])] = true;
  }
  Builder b(p.inputs);
  std::vector<Value> map(p.instrs.size());
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const scalar::Instr& in = p.instrs[i];
    Value a[3];
    int n = 0;
    for (int j = 0; j < 3 && in.args[j] >= 0; ++j, ++n) {
      if (static_cast<size_t>(in.args[j]) >= i) throw_internal(kLayer, "operand not defined");
      a[j] = map[static_cast<size_t>(in.args[j])];
    }
    switch (in.op) {
      case Op::kInput:
        map[i] = b.input(in.index);
        break;
      case Op::kConst:
        map[i] = b.constant_bits(in.literal, in.type);
        break;
      case Op::kExtern:
        map[i] = b.call(static_cast<scalar::Fn>(in.index), {a, static_cast<size_t>(n)});
        break;
      default:
        map[i] = expands(in.op, in.type) && !fallback[i]
                     ? expand_one(b, in, a)
                     : b.op(in.op, {a, static_cast<size_t>(n)}, in.type);
    }
  }
  std::vector<Value> outs;
  outs.reserve(p.outputs.size());
  for (int32_t o : p.outputs) outs.push_back(map.at(static_cast<size_t>(o)));
  return std::move(b).finish(outs);
}

// ---------------------------------------------------------------- vec_math.h

// vmath::exp: x = n*ln2 + r, e^r = 1 + r + r^2*Q(r), scaled by 2^n in two steps.
Value expand_exp_f32(Builder& b, Value x) {
  want(x, kF32, "expand_exp_f32");
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  constexpr float kShift = 12582912.0f;
  const Value hi = k(b, 88.8f), lo = k(b, -104.0f);
  Value xc = b.select(b.gt(x, hi), hi, x);
  xc = b.select(b.lt(xc, lo), lo, xc);
  const Value t = b.fma(xc, k(b, kLog2e), k(b, kShift));
  // static_cast<int32_t>(float_to_bits(t) - float_to_bits(kShift)): wraps either way.
  const Value n = b.bitcast(b.sub(b.bitcast(t, kU32), ku(b, bits(kShift))), kI32);
  const Value nf = b.sub(t, k(b, kShift));
  const Value mnf = b.neg(nf);
  Value r = b.fma(mnf, k(b, kLn2Hi), xc);
  r = b.fma(mnf, k(b, kLn2Lo), r);
  const Value q =
      horner(b, r, {0.0013813135f, 0.00836942f, 0.041668456f, 0.16666515f, 0.49999994f});
  const Value p = b.add(b.fma(q, b.mul(r, r), r), k(b, 1.0f));
  return keep_nan(b, x, scale(b, p, n));
}

// vmath::log: x = 2^e * m, m in [sqrt(1/2), sqrt(2)), the atanh series in s = f/(2+f).
Value expand_log_f32(Builder& b, Value x) {
  want(x, kF32, "expand_log_f32");
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  const Value zero = k(b, 0.0f), inf = k(b, INFINITY);
  const Value sub = b.lt(x, k(b, 1.17549435e-38f));
  const Value xs = b.select(sub, b.mul(x, k(b, 8388608.0f)), x);
  const Value v = b.add(b.bitcast(xs, kU32), ku(b, 0x3f800000u - 0x3f3504f3u));
  // static_cast<int32_t>(v >> 23) - 127 - (sub ? 23 : 0); v >> 23 < 2^9.
  Value e = b.sub(b.bitcast(b.binary(Op::kShrLogical, v, ku(b, 23)), kI32), ki(b, 127));
  e = b.sub(e, b.select(sub, ki(b, 23), ki(b, 0)));
  const Value m = b.bitcast(b.add(b.bit_and(v, ku(b, 0x007fffffu)), ku(b, 0x3f3504f3u)), kF32);
  const Value f = b.sub(m, k(b, 1.0f));
  const Value s = b.div(f, b.add(k(b, 2.0f), f));
  const Value z = b.mul(s, s);
  const Value rz = horner(b, z, {0.23596343f, 0.28536603f, 0.40000346f, 0.6666666f});
  const Value lm = b.fma(b.neg(s), b.fma(b.neg(rz), z, f), f);
  const Value ef = b.convert(e, kF32);  // |e| < 2^8: exact
  const Value y = b.fma(ef, k(b, kLn2Hi), b.fma(ef, k(b, kLn2Lo), lm));
  Value out = b.select(b.eq(x, zero), k(b, -INFINITY), y);
  out = b.select(b.lt(x, zero), k(b, NAN), out);
  out = b.select(b.eq(x, inf), inf, out);
  return keep_nan(b, x, out);
}

// vmath::tanh: an odd polynomial below 0.625, (1 - t)/(1 + t) with t = e^(-2|x|) above.
Value expand_tanh_f32(Builder& b, Value x) {
  want(x, kF32, "expand_tanh_f32");
  const Value a = b.abs(x);
  const Value z = b.mul(a, a);
  const Value p =
      horner(b, z, {-0.005693484f, 0.020630376f, -0.053737603f, 0.13331425f, -0.3333328f});
  const Value small = b.fma(b.mul(p, z), a, a);
  const Value t = expand_exp_f32(b, b.mul(k(b, -2.0f), a));
  const Value one = k(b, 1.0f);
  const Value large = b.div(b.sub(one, t), b.add(one, t));
  const Value y = b.select(b.lt(a, k(b, 0.625f)), small, large);
  return keep_nan(b, x, copysign(b, y, x));
}

Value expand_sin_f32(Builder& b, Value x) { return sin_or_cos(b, x, false); }
Value expand_cos_f32(Builder& b, Value x) { return sin_or_cos(b, x, true); }

// vmath::tan_n: sincos_reduced<false> / sincos_reduced<true>, tan in double beyond kTrigMax.
Value expand_tan_f32(Builder& b, Value x) {
  want(x, kF32, "expand_tan_f32");
  const TrigReduced t = trig_reduce(b, x);
  const Value q = b.div(trig_quadrant(b, t, x, false), trig_quadrant(b, t, x, true));
  const Value fallback = b.convert(b.unary(Op::kTan, b.convert(x, kF64)), kF32);
  return b.select(t.in_range, q, fallback);
}

// vmath::logistic: t = e^-|x|, (x >= 0 ? 1 : t) / (1 + t).
Value expand_logistic_f32(Builder& b, Value x) {
  want(x, kF32, "expand_logistic_f32");
  const Value t = expand_exp_f32(b, b.neg(b.abs(x)));
  const Value one = k(b, 1.0f);
  const Value y = b.div(b.select(b.ge(x, k(b, 0.0f)), one, t), b.add(one, t));
  return keep_nan(b, x, y);
}

// ---------------------------------------------------------------- vec_math_extra.h

// vmath::exp2: x = n + r, |r| <= 1/2, 2^r by its Taylor series, scaled as exp.
Value expand_exp2_f32(Builder& b, Value x) {
  want(x, kF32, "expand_exp2_f32");
  constexpr float kShift = 12582912.0f;
  const Value hi = k(b, 128.5f), lo = k(b, -152.0f);
  Value xc = b.select(b.gt(x, hi), hi, x);
  xc = b.select(b.lt(xc, lo), lo, xc);
  const Value t = b.add(xc, k(b, kShift));
  const Value n = b.bitcast(b.sub(b.bitcast(t, kU32), ku(b, bits(kShift))), kI32);
  const Value r = b.sub(xc, b.sub(t, k(b, kShift)));
  const Value p = horner(b, r,
                         {1.5252733804059838e-05f, 1.5403530393381606e-04f, 1.3333558146428441e-03f,
                          9.618129107628477e-03f, 5.5504108664821576e-02f, 2.402265069591007e-01f,
                          6.931471805599453e-01f, 1.0f});
  return keep_nan(b, x, scale(b, p, n));
}

// vmath::expm1: the Taylor series below 0.35, exp(x) - 1 above; expm1(-0) == -0.
Value expand_expm1_f32(Builder& b, Value x) {
  want(x, kF32, "expand_expm1_f32");
  const Value q = horner(b, x,
                         {2.755731922398589e-07f, 2.7557319223985893e-06f, 2.48015873015873e-05f,
                          1.984126984126984e-04f, 1.388888888888889e-03f, 8.333333333333333e-03f,
                          4.1666666666666664e-02f, 1.6666666666666666e-01f, 0.5f});
  const Value small = b.fma(b.mul(x, x), q, x);
  const Value large = b.sub(expand_exp_f32(b, x), k(b, 1.0f));
  const Value y = b.select(b.lt(b.abs(x), k(b, 0.35f)), small, large);
  return b.select(b.eq(x, k(b, 0.0f)), x, y);
}

// vmath::log1p: Goldberg's log(u) * x / (u - 1) with u = 1 + x.
Value expand_log1p_f32(Builder& b, Value x) {
  want(x, kF32, "expand_log1p_f32");
  const Value one = k(b, 1.0f);
  const Value u = b.add(one, x);
  const Value d = b.sub(u, one);
  const Value y = b.select(b.eq(d, k(b, 0.0f)), x, b.mul(expand_log_f32(b, u), b.div(x, d)));
  return b.select(b.eq(x, k(b, INFINITY)), x, y);
}

// vmath::rsqrt: 1 / sqrt(x) in double, rounded once.
Value expand_rsqrt_f32(Builder& b, Value x) {
  want(x, kF32, "expand_rsqrt_f32");
  return b.convert(expand_rsqrt_f64(b, b.convert(x, kF64)), kF32);
}

// The float64 kernel: 1.0 / std::sqrt(x), both correctly rounded.
Value expand_rsqrt_f64(Builder& b, Value x) {
  want(x, kF64, "expand_rsqrt_f64");
  return b.div(b.constant(1.0, kF64), b.sqrt(x));
}

// vmath::nextafter_bits on the operands' bits (binary_math.cpp's kernel for both widths).
Value expand_nextafter(Builder& b, Value x, Value y) {
  if (x.type != kF32 && x.type != kF64) want(x, kF32, "expand_nextafter");
  want(y, x.type, "expand_nextafter");
  const DType u = x.type == kF32 ? kU32 : DType::kUInt64;
  const uint64_t sign_bit = x.type == kF32 ? uint64_t{1} << 31 : uint64_t{1} << 63;
  const Value ux = b.bitcast(x, u), uy = b.bitcast(y, u);
  const Value one = b.constant_bits(1, u);
  const Value zero = b.constant(0.0, x.type);
  const Value nan = b.bit_or(b.is_nan(x), b.is_nan(y));
  const Value up = b.eq(b.lt(x, y), b.gt(x, zero));  // away from zero
  const Value step = b.select(up, b.add(ux, one), b.sub(ux, one));
  const Value from_zero = b.bit_or(b.bit_and(uy, b.constant_bits(sign_bit, u)), one);
  Value r = b.select(b.eq(x, zero), from_zero, step);
  r = b.select(b.eq(x, y), uy, r);
  r = b.select(nan, b.bit_or(ux, uy), r);
  return b.bitcast(r, x.type);
}

// vmath::sinh: (E + E/(E+1))/2 with E = expm1(|x|) below 88, (h/2)*h with h = e^(|x|/2) above.
Value expand_sinh_f32(Builder& b, Value x) {
  want(x, kF32, "expand_sinh_f32");
  const Value half = k(b, 0.5f);
  const Value a = b.abs(x);
  const Value e = expand_expm1_f32(b, a);
  const Value mid = b.mul(half, b.add(e, b.div(e, b.add(e, k(b, 1.0f)))));
  const Value h = expand_exp_f32(b, b.mul(half, a));
  const Value big = b.mul(b.mul(half, h), h);
  return copysign(b, b.select(b.lt(a, k(b, 88.0f)), mid, big), x);
}

// vmath::cosh: e/2 + 0.5/e below 88, (h/2)*h above.
Value expand_cosh_f32(Builder& b, Value x) {
  want(x, kF32, "expand_cosh_f32");
  const Value half = k(b, 0.5f);
  const Value a = b.abs(x);
  const Value e = expand_exp_f32(b, a);
  const Value mid = b.add(b.mul(half, e), b.div(half, e));
  const Value h = expand_exp_f32(b, b.mul(half, a));
  const Value big = b.mul(b.mul(half, h), h);
  return b.select(b.lt(a, k(b, 88.0f)), mid, big);
}

constexpr float kLn2f = 0.693147180559945309f;

// vmath::asinh: log1p(a + a^2 / (1 + sqrt(1 + a^2))) below 2^12, log(a) + ln2 above; odd.
Value expand_asinh_f32(Builder& b, Value x) {
  want(x, kF32, "expand_asinh_f32");
  const Value one = k(b, 1.0f);
  const Value a = b.abs(x);
  const Value a2 = b.mul(a, a);
  const Value mid = expand_log1p_f32(b, b.add(a, b.div(a2, b.add(one, b.sqrt(b.add(one, a2))))));
  const Value big = b.add(expand_log_f32(b, a), k(b, kLn2f));
  return copysign(b, b.select(b.lt(a, k(b, 4096.0f)), mid, big), x);
}

// vmath::acosh: log1p(t + sqrt(2t + t^2)) with t = x - 1 below 2^12, log(x) + ln2 above.
Value expand_acosh_f32(Builder& b, Value x) {
  want(x, kF32, "expand_acosh_f32");
  const Value one = k(b, 1.0f);
  const Value t = b.sub(x, one);
  const Value mid = expand_log1p_f32(b, b.add(t, b.sqrt(b.fma(t, t, b.mul(k(b, 2.0f), t)))));
  const Value big = b.add(expand_log_f32(b, x), k(b, kLn2f));
  const Value y = b.select(b.lt(x, k(b, 4096.0f)), mid, big);
  return b.select(b.lt(x, one), k(b, NAN), y);
}

// vmath::atanh: log1p(2a / (1 - a)) / 2 with a = |x|; odd.
Value expand_atanh_f32(Builder& b, Value x) {
  want(x, kF32, "expand_atanh_f32");
  const Value a = b.abs(x);
  const Value q = b.div(b.mul(k(b, 2.0f), a), b.sub(k(b, 1.0f), a));
  return copysign(b, b.mul(k(b, 0.5f), expand_log1p_f32(b, q)), x);
}

// ---------------------------------------------------------------- vec_math_special.h

// vmath::erf: x + x*R(x^2) below 1, 1 - e^(-x^2) Q(1/x) up to the clamp at 4; odd.
Value expand_erf_f32(Builder& b, Value x) {
  want(x, kF32, "expand_erf_f32");
  const Value ax = b.abs(x);
  const Value four = k(b, 4.0f);
  const Value a = b.select(b.lt(ax, four), ax, four);
  const Value t = b.mul(a, a);
  const Value r = horner(b, t,
                         {7.84726144e-05f, -0.000800819194f, 0.00518809957f, -0.0268536918f,
                          0.112835824f, -0.37612626f, 0.128379166f});
  const Value small = b.fma(a, r, a);
  const Value s = b.div(k(b, 1.0f), a);
  const Value q =
      horner(b, s,
             {0.0320644677f, -0.187188193f, 0.456198782f, -0.561485052f, 0.259312123f, 0.21877262f,
              -0.371695876f, 0.0196043495f, 0.561885655f, 0.000114671398f});
  const Value large = b.sub(k(b, 1.0f), b.mul(expand_exp_f32(b, b.neg(t)), q));
  const Value y = b.select(b.lt(a, k(b, 1.0f)), small, large);
  return keep_nan(b, x, copysign(b, y, x));
}

// vmath::erf_inv: Giles' single-precision polynomials in XLA's form (c + p*w, unfused).
Value expand_erf_inv_f32(Builder& b, Value x) {
  want(x, kF32, "expand_erf_inv_f32");
  const Value w0 = b.neg(expand_log1p_f32(b, b.neg(b.mul(x, x))));
  const Value lt = b.lt(w0, k(b, 5.0f));
  const Value w = b.select(lt, b.sub(w0, k(b, 2.5f)), b.sub(b.sqrt(w0), k(b, 3.0f)));
  static constexpr float kLt[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                  -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                  -0.00417768164f,  0.246640727f,    1.50140941f};
  static constexpr float kGe[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                  -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                  0.00943887047f,   1.00167406f,     2.83297682f};
  Value p = b.select(lt, k(b, kLt[0]), k(b, kGe[0]));
  for (int i = 1; i < 9; ++i) p = b.add(b.select(lt, k(b, kLt[i]), k(b, kGe[i])), b.mul(p, w));
  const Value y = b.mul(p, x);
  return b.select(b.eq(b.abs(x), k(b, 1.0f)), b.mul(x, k(b, INFINITY)), y);
}

// ---------------------------------------------------------------- vec_math_pow.h

namespace {

constexpr DType kU64 = DType::kUInt64;

Value kd(Builder& b, double v) { return b.constant(v, kF64); }
Value ku64(Builder& b, uint64_t v) { return b.constant_bits(v, kU64); }

// vmath::log2_pos: m in [sqrt(1/2), sqrt(2)) and the atanh series, in double.
Value log2_pos(Builder& b, Value a) {
  const Value bits = b.bitcast(a, kU64);
  const Value m1 = b.bitcast(
      b.bit_or(b.bit_and(bits, ku64(b, 0x000fffffffffffffull)), ku64(b, 0x3ff0000000000000ull)),
      kF64);
  const Value big = b.gt(m1, kd(b, 1.4142135623730951));
  const Value m = b.select(big, b.mul(m1, kd(b, 0.5)), m1);
  const Value kb = b.bitcast(
      b.bit_or(b.binary(Op::kShrLogical, bits, ku64(b, 52)), ku64(b, 0x4330000000000000ull)), kF64);
  const Value e =
      b.add(b.sub(kb, kd(b, 4503599627371519.0)), b.select(big, kd(b, 1.0), kd(b, 0.0)));
  const Value sv = b.div(b.sub(m, kd(b, 1.0)), b.add(m, kd(b, 1.0)));
  const Value z = b.mul(sv, sv);
  Value p = kd(b, 1.0 / 21);
  for (double c :
       {1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0})
    p = b.fma(p, z, kd(b, c));
  return b.fma(b.mul(sv, p), kd(b, 2.8853900817779268), e);
}

// vmath::exp2_mid: 2^n e^(f ln2) for t in [-160, 130], in double.
Value exp2_mid(Builder& b, Value t) {
  constexpr double kShift = 6755399441055744.0;
  const Value r = b.add(t, kd(b, kShift));
  const Value n = b.sub(r, kd(b, kShift));
  const Value z = b.mul(b.sub(t, n), kd(b, 0.69314718055994531));
  Value p = kd(b, 1.0 / 6227020800.0);
  for (double c :
       {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
        1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0})
    p = b.fma(p, z, kd(b, c));
  const Value nb = b.sub(b.bitcast(r, kU64), ku64(b, std::bit_cast<uint64_t>(kShift)));
  const Value scale = b.bitcast(b.binary(Op::kShl, b.add(nb, ku64(b, 1023)), ku64(b, 52)), kF64);
  return b.mul(p, scale);
}

}  // namespace

// vmath::pow: 2^(y log2|x|) in double, C99's special cases selected last.
Value expand_pow_f32(Builder& b, Value x, Value y) {
  want(x, kF32, "expand_pow_f32");
  want(y, kF32, "expand_pow_f32");
  const Value inf = k(b, INFINITY), zero = k(b, 0.0f), one = k(b, 1.0f);
  const Value ax = b.abs(x), ay = b.abs(y);
  const Value y_int = b.eq(b.unary(Op::kFloor, y), y);
  const Value half = b.mul(y, k(b, 0.5f));
  const Value y_odd = b.bit_and(y_int, b.ne(b.unary(Op::kFloor, half), half));
  const Value x_finite_nz = b.bit_and(b.gt(ax, zero), b.lt(ax, inf));
  const Value y_finite = b.lt(ay, inf);
  const Value a = b.convert(b.select(x_finite_nz, ax, one), kF64);
  const Value yd = b.convert(b.select(y_finite, y, zero), kF64);
  Value t = b.mul(yd, log2_pos(b, a));
  t = b.select(b.gt(t, kd(b, 130.0)), kd(b, 130.0), t);
  t = b.select(b.lt(t, kd(b, -160.0)), kd(b, -160.0), t);
  Value mag = b.convert(exp2_mid(b, t), kF32);
  const Value big_base = b.eq(ax, inf);
  mag = b.select(b.bit_or(b.eq(ax, zero), big_base),
                 b.select(b.eq(b.gt(y, zero), big_base), inf, zero), mag);
  const Value sign = b.lt(b.bitcast(x, kI32), ki(b, 0));
  const Value neg = b.bit_and(sign, y_odd);
  Value r = b.select(neg, b.neg(mag), mag);
  r = b.select(
      b.eq(ay, inf),
      b.select(b.eq(ax, one), one, b.select(b.eq(b.lt(ax, one), b.lt(y, zero)), inf, zero)), r);
  r = b.select(b.bit_and(b.bit_and(x_finite_nz, b.lt(x, zero)), b.bit_not(y_int)), k(b, NAN), r);
  r = b.select(b.bit_or(b.is_nan(x), b.is_nan(y)), k(b, NAN), r);
  return b.select(b.bit_or(b.eq(y, zero), b.eq(x, one)), one, r);
}

}  // namespace tessera::compiler
