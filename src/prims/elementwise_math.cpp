// Unary elementwise math: abs sign floor ceil round {rounding_method} exp2 expm1 log1p rsqrt cbrt
// tan asin acos atan sinh cosh asinh acosh atanh is_finite square. The binary ones (atan2,
// nextafter, rem) and clamp are in elementwise_math_binary.cpp.
//
// Dtypes as jax.lax: abs, sign and square take integers and floats (abs of an unsigned integer
// is the identity, which JAX's lax.abs now rejects and jnp.abs does itself; abs of INT_MIN wraps
// to INT_MIN as XLA's; sign of an unsigned integer is 0 or 1); the others take floating dtypes
// only, and is_finite returns bool. float32 kernels are the vectorizable functions of
// vec_math.h / vec_math_extra.h, except asin, acos, atan and cbrt, which call float64 libm and
// round once; float64 uses libm; 16-bit floats are computed in float32 and rounded once.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/vec_math.h"
#include "prims/vec_math_extra.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive abs("abs");
Primitive sign("sign");
Primitive floor("floor");
Primitive ceil("ceil");
Primitive round("round");
Primitive exp2("exp2");
Primitive expm1("expm1");
Primitive log1p("log1p");
Primitive rsqrt("rsqrt");
Primitive cbrt("cbrt");
Primitive tan("tan");
Primitive asin("asin");
Primitive acos("acos");
Primitive atan("atan");
Primitive sinh("sinh");
Primitive cosh("cosh");
Primitive asinh("asinh");
Primitive acosh("acosh");
Primitive atanh("atanh");
Primitive is_finite("is_finite");
Primitive square("square");

void register_elementwise_math_binary();  // elementwise_math_binary.cpp

namespace {

namespace vmath = kernels::vmath;
using elementwise::Accept;
using elementwise::c;
using elementwise::FloatKernel;
using elementwise::NumberKernel;
using elementwise::unary_jvp;
using elementwise::wrap_t;

constexpr const char* kLayer = "prims/elementwise_math";

// ---------------------------------------------------------------- kernels

// Kernels: operator()(const C* x, R* y, n) over compute types (C = float for 16-bit floats);
// R is C, or bool for is_finite (elementwise_util.h: accepts, result).

#define TESSERA_F32_LOOP(name, expr)                                     \
  TESSERA_AVX512_CLONES void name(const float* x, float* y, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) y[i] = expr;                         \
  }
TESSERA_F32_LOOP(floor_f32, vmath::floor(x[i]))
TESSERA_F32_LOOP(ceil_f32, vmath::ceil(x[i]))
TESSERA_F32_LOOP(round_away_f32, vmath::round_away(x[i]))
TESSERA_F32_LOOP(round_even_f32, vmath::round_even(x[i]))
TESSERA_F32_LOOP(exp2_f32, vmath::exp2(x[i]))
TESSERA_F32_LOOP(expm1_f32, vmath::expm1(x[i]))
TESSERA_F32_LOOP(log1p_f32, vmath::log1p(x[i]))
TESSERA_F32_LOOP(rsqrt_f32, vmath::rsqrt(x[i]))
TESSERA_F32_LOOP(sinh_f32, vmath::sinh(x[i]))
TESSERA_F32_LOOP(cosh_f32, vmath::cosh(x[i]))
TESSERA_F32_LOOP(asinh_f32, vmath::asinh(x[i]))
TESSERA_F32_LOOP(acosh_f32, vmath::acosh(x[i]))
TESSERA_F32_LOOP(atanh_f32, vmath::atanh(x[i]))
#undef TESSERA_F32_LOOP
TESSERA_AVX512_CLONES void tan_f32(const float* x, float* y, int64_t n) { vmath::tan_n(x, y, n); }

double floor_f64(double x) { return std::floor(x); }
double ceil_f64(double x) { return std::ceil(x); }
double round_away_f64(double x) { return std::round(x); }      // halves away from zero
double round_even_f64(double x) { return std::nearbyint(x); }  // default mode: halves to even
double exp2_f64(double x) { return std::exp2(x); }
double expm1_f64(double x) { return std::expm1(x); }
double log1p_f64(double x) { return std::log1p(x); }
double rsqrt_f64(double x) { return 1.0 / std::sqrt(x); }
double cbrt_f64(double x) { return std::cbrt(x); }
double tan_f64(double x) { return std::tan(x); }
double asin_f64(double x) { return std::asin(x); }
double acos_f64(double x) { return std::acos(x); }
double atan_f64(double x) { return std::atan(x); }
double sinh_f64(double x) { return std::sinh(x); }
double cosh_f64(double x) { return std::cosh(x); }
double asinh_f64(double x) { return std::asinh(x); }
double acosh_f64(double x) { return std::acosh(x); }
double atanh_f64(double x) { return std::atanh(x); }

// float32 through float64 libm, rounded once (no cheap vectorizable form).
template <double (*F)(double)>
void via_f64(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(F(static_cast<double>(x[i])));
}

// A floating kernel from a float32 array function and a float64 element function.
template <void (*F32)(const float*, float*, int64_t), double (*F64)(double)>
struct FloatK : FloatKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_same_v<C, float>) {
      F32(x, y, n);
    } else if constexpr (std::is_same_v<C, double>) {
      for (int64_t i = 0; i < n; ++i) y[i] = F64(x[i]);
    }
  }
};

struct RoundK {
  template <class T>
  static constexpr bool accepts = elementwise::kIsFloat<T>;
  bool even = false;
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_same_v<C, float>) {
      even ? round_even_f32(x, y, n) : round_away_f32(x, y, n);
    } else if constexpr (std::is_same_v<C, double>) {
      for (int64_t i = 0; i < n; ++i) y[i] = even ? round_even_f64(x[i]) : round_away_f64(x[i]);
    }
  }
};

struct AbsK : NumberKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_floating_point_v<C>) {
      for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]);
    } else if constexpr (std::is_signed_v<C>) {  // INT_MIN wraps to itself
      for (int64_t i = 0; i < n; ++i)
        y[i] = x[i] < 0 ? static_cast<C>(wrap_t<C>(0) - wrap_t<C>(x[i])) : x[i];
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = x[i];
    }
  }
};

// -1, 0 or 1; floats keep the sign of a zero and NaN stays NaN (XLA's sign).
struct SignK : NumberKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_same_v<C, float>) {
      for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = vmath::select(v != v || v == 0.0f, v, std::copysign(1.0f, v));
      }
    } else if constexpr (std::is_floating_point_v<C>) {
      for (int64_t i = 0; i < n; ++i) {
        const C v = x[i];
        y[i] = (v != v || v == C(0)) ? v : std::copysign(C(1), v);
      }
    } else if constexpr (std::is_signed_v<C>) {
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>((x[i] > 0) - (x[i] < 0));
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(x[i] != 0);
    }
  }
};

struct SquareK : NumberKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_integral_v<C>) {
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(wrap_t<C>(x[i]) * wrap_t<C>(x[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
    }
  }
};

struct IsFiniteK : FloatKernel {
  template <class S>
  using result = bool;
  template <class C>
  void operator()(const C* x, bool* y, int64_t n) const {
    if constexpr (std::is_floating_point_v<C>) {
      for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]) < C(INFINITY);  // false for NaN
    }
  }
};

using FloorK = FloatK<floor_f32, floor_f64>;
using CeilK = FloatK<ceil_f32, ceil_f64>;
using Exp2K = FloatK<exp2_f32, exp2_f64>;
using Expm1K = FloatK<expm1_f32, expm1_f64>;
using Log1pK = FloatK<log1p_f32, log1p_f64>;
using RsqrtK = FloatK<rsqrt_f32, rsqrt_f64>;
using CbrtK = FloatK<via_f64<cbrt_f64>, cbrt_f64>;
using TanK = FloatK<tan_f32, tan_f64>;
using AsinK = FloatK<via_f64<asin_f64>, asin_f64>;
using AcosK = FloatK<via_f64<acos_f64>, acos_f64>;
using AtanK = FloatK<via_f64<atan_f64>, atan_f64>;
using SinhK = FloatK<sinh_f32, sinh_f64>;
using CoshK = FloatK<cosh_f32, cosh_f64>;
using AsinhK = FloatK<asinh_f32, asinh_f64>;
using AcoshK = FloatK<acosh_f32, acosh_f64>;
using AtanhK = FloatK<atanh_f32, atanh_f64>;

// ---------------------------------------------------------------- abstract eval and impl

template <class K>
void define(Primitive& p, Accept accept) {
  elementwise::define_unary<K>(p, kLayer, accept);
}

void define_round() {
  round.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    const int64_t m = params.get_int("rounding_method");
    if (m != 0 && m != 1) {
      throw ValueError(op_message("round",
                                  "rounding_method must be 0 (AWAY_FROM_ZERO) or 1 "
                                  "(TO_NEAREST_EVEN), got " +
                                      std::to_string(m)));
    }
    return elementwise::unary_abstract("round", Accept::kFloating, in);
  };
  round.impl = [](const ExecContext& ctx, std::span<const Array> args, const Params& params,
                  std::span<const Aval> out_avals) {
    return elementwise::unary_impl(ctx, kLayer, "round", args, out_avals,
                                   RoundK{params.get_int("rounding_method") == 1});
  };
}

void define_is_finite() {
  is_finite.abstract_eval = [](std::span<const Aval> in, const Params&) {
    const Aval x = elementwise::unary_abstract("is_finite", Accept::kFloating, in)[0];
    return std::vector<Aval>{Aval{x.shape, DType::kBool, false}};
  };
  is_finite.impl = [](const ExecContext& ctx, std::span<const Array> args, const Params&,
                      std::span<const Aval> out_avals) {
    return elementwise::unary_impl(ctx, kLayer, "is_finite", args, out_avals, IsFiniteK{});
  };
}

// ---------------------------------------------------------------- JVP rules (JAX's lax rules)

using lax::mul;

void set_jvp_rules() {
  // JAX's rule: select(x >= 0, t, -t), so the derivative at x == 0 (and -0) is 1.
  abs.jvp = unary_jvp(abs, [](const Array& t, const Array& x, const Array&) {
    return lax::select_n(lax::ge(x, c(0.0, x)), {lax::neg(t), t});
  });
  // Piecewise-constant ops: a zero tangent.
  for (Primitive* p : {&sign, &floor, &ceil, &round, &is_finite}) p->jvp = ad::zero_jvp(*p);
  // t * ln2 * out
  exp2.jvp = unary_jvp(exp2, [](const Array& t, const Array& x, const Array& o) {
    return mul(c(0.693147180559945309417232121458, x), mul(t, o));
  });
  // t * (out + 1)
  expm1.jvp = unary_jvp(expm1, [](const Array& t, const Array&, const Array& o) {
    return mul(t, lax::add(o, c(1.0, o)));
  });
  // t / (x + 1)
  log1p.jvp = unary_jvp(log1p, [](const Array& t, const Array& x, const Array&) {
    return lax::div(t, lax::add(x, c(1.0, x)));
  });
  // t * (-0.5 * out / x)
  rsqrt.jvp = unary_jvp(rsqrt, [](const Array& t, const Array& x, const Array& o) {
    return mul(t, mul(c(-0.5, x), lax::div(o, x)));
  });
  // t * (1/3 * out^-2)
  cbrt.jvp = unary_jvp(cbrt, [](const Array& t, const Array& x, const Array& o) {
    return mul(t, mul(c(1.0 / 3.0, x), lax::integer_pow(o, -2)));
  });
  // t * (1 + out^2)
  tan.jvp = unary_jvp(tan, [](const Array& t, const Array& x, const Array& o) {
    return mul(t, lax::add(c(1.0, x), lax::square(o)));
  });
  // t * rsqrt(1 - x^2), and its negation for acos
  asin.jvp = unary_jvp(asin, [](const Array& t, const Array& x, const Array&) {
    return mul(t, lax::rsqrt(lax::sub(c(1.0, x), lax::square(x))));
  });
  acos.jvp = unary_jvp(acos, [](const Array& t, const Array& x, const Array&) {
    return mul(t, lax::neg(lax::rsqrt(lax::sub(c(1.0, x), lax::square(x)))));
  });
  // t / (1 + x^2)
  atan.jvp = unary_jvp(atan, [](const Array& t, const Array& x, const Array&) {
    return lax::div(t, lax::add(c(1.0, x), lax::square(x)));
  });
  sinh.jvp = unary_jvp(
      sinh, [](const Array& t, const Array& x, const Array&) { return mul(t, lax::cosh(x)); });
  cosh.jvp = unary_jvp(
      cosh, [](const Array& t, const Array& x, const Array&) { return mul(t, lax::sinh(x)); });
  // t * rsqrt(x^2 + 1)
  asinh.jvp = unary_jvp(asinh, [](const Array& t, const Array& x, const Array&) {
    return mul(t, lax::rsqrt(lax::add(lax::square(x), c(1.0, x))));
  });
  // t * rsqrt(x^2 - 1)
  acosh.jvp = unary_jvp(acosh, [](const Array& t, const Array& x, const Array&) {
    return mul(t, lax::rsqrt(lax::sub(lax::square(x), c(1.0, x))));
  });
  // (1 / (1 + x)) * (t / (1 - x))
  atanh.jvp = unary_jvp(atanh, [](const Array& t, const Array& x, const Array&) {
    return mul(lax::reciprocal(lax::add(c(1.0, x), x)), lax::div(t, lax::sub(c(1.0, x), x)));
  });
  // t * (2 * x)
  square.jvp = unary_jvp(square, [](const Array& t, const Array& x, const Array&) {
    return mul(t, mul(c(2.0, x), x));
  });
}

// ---- Scalar definitions (scalar_ir.h). The expansions are XLA-style formulas in the operand's
// type (not the eager kernels' float64 detours), so they carry their own few-ulp error; the
// reference-evaluator test states each bound.

namespace sd = elementwise::sdef;
using sd::Builder;
using sd::Value;
using sd::Values;

// -1, 0 or 1; a float keeps the sign of a zero and NaN stays NaN.
Values sign_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  if (is_floating(x.type)) {
    const Value keep = b.bit_or(b.is_nan(x), b.eq(x, b.like(0.0, x)));
    return {b.select(keep, x, b.binary(scalar::Op::kCopySign, b.like(1.0, x), x))};
  }
  const Value zero = b.like(0.0, x);
  const Value pos = b.convert(b.gt(x, zero), x.type);
  if (is_unsigned_integer(x.type)) return {pos};
  return {b.sub(pos, b.convert(b.lt(x, zero), x.type))};
}

Values round_def(Builder& b, std::span<const Value> in, const Params& params) {
  const bool even = params.get_int("rounding_method") == 1;
  return {b.unary(even ? scalar::Op::kRoundEven : scalar::Op::kRoundAway, in[0])};
}

// (1 - x)(1 + x): 1 - x^2 without the cancellation near |x| = 1.
Value one_minus_sq(Builder& b, Value x) {
  const Value one = b.like(1.0, x);
  return b.mul(b.sub(one, x), b.add(one, x));
}

// asin x = 2 atan2(x, 1 + sqrt(1 - x^2)).
Values asin_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value d = b.add(b.like(1.0, x), b.sqrt(one_minus_sq(b, x)));
  return {b.mul(b.like(2.0, x), b.binary(scalar::Op::kAtan2, x, d))};
}

// acos x = 2 atan2(sqrt(1 - x^2), 1 + x), pi at x == -1.
Values acos_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value r = b.mul(b.like(2.0, x), b.binary(scalar::Op::kAtan2, b.sqrt(one_minus_sq(b, x)),
                                                 b.add(b.like(1.0, x), x)));
  return {b.select(b.eq(x, b.like(-1.0, x)), b.like(3.14159265358979323846, x), r)};
}

Values atan_def(Builder& b, std::span<const Value> in, const Params&) {
  return {b.binary(scalar::Op::kAtan2, in[0], b.like(1.0, in[0]))};
}

// Where exp(|x|) overflows but the result does not: exp(|x| / 2)^2 / 2.
Value big_half_exp(Builder& b, Value ax) {
  const Value h = b.exp(b.mul(ax, b.like(0.5, ax)));
  return b.mul(b.mul(h, b.like(0.5, ax)), h);
}
double exp_overflow_threshold(DType t) { return t == DType::kFloat32 ? 88.0 : 709.0; }

// sinh: |x| < 1: s = expm1(|x|), (s + s / (s + 1)) / 2 (no cancellation); otherwise
// (e - 1/e) / 2 with e = exp(|x|); the sign restored last.
Values sinh_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value ax = b.abs(x);
  const Value half = b.like(0.5, x), one = b.like(1.0, x);
  const Value s = b.expm1(ax);
  const Value small = b.mul(half, b.add(s, b.div(s, b.add(s, one))));
  const Value e = b.exp(ax);
  const Value mid = b.sub(b.mul(half, e), b.div(half, e));
  const Value big = big_half_exp(b, ax);
  const Value r = b.select(b.lt(ax, one), small,
                           b.select(b.lt(ax, b.like(exp_overflow_threshold(x.type), x)), mid, big));
  return {b.binary(scalar::Op::kCopySign, r, x)};
}

// cosh = (e + 1/e) / 2 with e = exp(|x|).
Values cosh_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value ax = b.abs(x);
  const Value half = b.like(0.5, x);
  const Value e = b.exp(ax);
  const Value mid = b.add(b.mul(half, e), b.div(half, e));
  return {b.select(b.lt(ax, b.like(exp_overflow_threshold(x.type), x)), mid, big_half_exp(b, ax))};
}

double big_threshold(DType t) { return t == DType::kFloat32 ? 0x1p28 : 0x1p52; }

// asinh |x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), log(|x|) + log 2 where x^2 would lose
// the 1 (or overflow); the sign restored last.
Values asinh_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value ax = b.abs(x);
  const Value one = b.like(1.0, x);
  const Value x2 = b.mul(ax, ax);
  const Value small = b.log1p(b.add(ax, b.div(x2, b.add(one, b.sqrt(b.add(one, x2))))));
  const Value big = b.add(b.log(ax), b.like(0.693147180559945309417, x));
  const Value r = b.select(b.gt(ax, b.like(big_threshold(x.type), x)), big, small);
  return {b.binary(scalar::Op::kCopySign, r, x)};
}

// acosh x = log1p(t + sqrt(t (x + 1))) with t = x - 1, log(x) + log 2 for large x; NaN below 1.
Values acosh_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value one = b.like(1.0, x);
  const Value t = b.sub(x, one);
  const Value small = b.log1p(b.add(t, b.sqrt(b.mul(t, b.add(x, one)))));
  const Value big = b.add(b.log(x), b.like(0.693147180559945309417, x));
  const Value r = b.select(b.gt(x, b.like(big_threshold(x.type), x)), big, small);
  return {b.select(b.lt(x, one), b.like(NAN, x), r)};
}

// atanh |x| = log1p(2|x| / (1 - |x|)) / 2 with the sign restored (the argument of log1p stays
// >= 0, away from its pole at -1); NaN outside [-1, 1], +-inf at +-1.
Values atanh_def(Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value one = b.like(1.0, x);
  const Value ax = b.abs(x);
  const Value q = b.div(b.add(ax, ax), b.sub(one, ax));
  const Value r = b.binary(scalar::Op::kCopySign, b.mul(b.like(0.5, x), b.log1p(q)), x);
  return {b.select(b.gt(ax, one), b.like(NAN, x), r)};
}

Values is_finite_def(Builder& b, std::span<const Value> in, const Params&) {
  return {b.lt(b.abs(in[0]), b.like(INFINITY, in[0]))};
}

Values square_def(Builder& b, std::span<const Value> in, const Params&) {
  return {b.mul(in[0], in[0])};
}

void set_scalar_defs() {
  using scalar::Op;
  abs.scalar = sd::op(Op::kAbs);
  floor.scalar = sd::op(Op::kFloor);
  ceil.scalar = sd::op(Op::kCeil);
  exp2.scalar = sd::op(Op::kExp2);
  expm1.scalar = sd::op(Op::kExpm1);
  log1p.scalar = sd::op(Op::kLog1p);
  rsqrt.scalar = sd::op(Op::kRsqrt);
  cbrt.scalar = sd::op(Op::kCbrt);
  tan.scalar = sd::op(Op::kTan);
  sign.scalar.rule = sign_def;
  round.scalar.rule = round_def;
  asin.scalar.rule = asin_def;
  acos.scalar.rule = acos_def;
  atan.scalar.rule = atan_def;
  sinh.scalar.rule = sinh_def;
  cosh.scalar.rule = cosh_def;
  asinh.scalar.rule = asinh_def;
  acosh.scalar.rule = acosh_def;
  atanh.scalar.rule = atanh_def;
  is_finite.scalar.rule = is_finite_def;
  square.scalar.rule = square_def;
}

}  // namespace

void register_elementwise_math() {
  for (Primitive* p :
       {&abs,  &sign, &floor, &ceil, &round, &exp2,  &expm1, &log1p, &rsqrt,     &cbrt,  &tan,
        &asin, &acos, &atan,  &sinh, &cosh,  &asinh, &acosh, &atanh, &is_finite, &square})
    p->kind = PrimitiveKind::kElementwise;
  set_scalar_defs();
  for (Primitive* p :
       {&abs,  &sign, &floor, &ceil, &exp2, &expm1, &log1p, &rsqrt, &cbrt,      &tan,
        &asin, &acos, &atan,  &sinh, &cosh, &asinh, &acosh, &atanh, &is_finite, &square})
    p->signature = Signature::fixed(1);
  round.signature = Signature::fixed(1, {{"rounding_method", ParamKind::kInt}});
  define<AbsK>(abs, Accept::kNumber);
  define<SignK>(sign, Accept::kNumber);
  define<SquareK>(square, Accept::kNumber);
  define<FloorK>(floor, Accept::kFloating);
  define<CeilK>(ceil, Accept::kFloating);
  define_round();
  define_is_finite();
  define<Exp2K>(exp2, Accept::kFloating);
  define<Expm1K>(expm1, Accept::kFloating);
  define<Log1pK>(log1p, Accept::kFloating);
  define<RsqrtK>(rsqrt, Accept::kFloating);
  define<CbrtK>(cbrt, Accept::kFloating);
  define<TanK>(tan, Accept::kFloating);
  define<AsinK>(asin, Accept::kFloating);
  define<AcosK>(acos, Accept::kFloating);
  define<AtanK>(atan, Accept::kFloating);
  define<SinhK>(sinh, Accept::kFloating);
  define<CoshK>(cosh, Accept::kFloating);
  define<AsinhK>(asinh, Accept::kFloating);
  define<AcoshK>(acosh, Accept::kFloating);
  define<AtanhK>(atanh, Accept::kFloating);
  set_jvp_rules();
  // Elementwise: the batch axis stays where it is.
  for (Primitive* p :
       {&abs,  &sign, &floor, &ceil, &round, &exp2,  &expm1, &log1p, &rsqrt,     &cbrt,  &tan,
        &asin, &acos, &atan,  &sinh, &cosh,  &asinh, &acosh, &atanh, &is_finite, &square}) {
    p->batch = batching::vectorized_rule(*p);
    register_primitive(*p);
  }
  register_elementwise_math_binary();
}

}  // namespace tessera::prims
