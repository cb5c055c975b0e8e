// Transcendental elementwise primitives: exp log sin cos tanh logistic sqrt rsqrt cbrt exp2
// expm1 log1p tan asin acos atan sinh cosh asinh acosh atanh (atan2 is in binary_math.cpp).
//
// Floating dtypes only (tessera::numpy promotes integers first). float32 (and 16-bit floats,
// computed in float32 blocks and rounded once) use the vectorizable functions of vec_math.h /
// vec_math_extra.h, except asin, acos, atan and cbrt, which call float64 libm and round once;
// float64 uses libm.
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

Primitive exp("exp");
Primitive log("log");
Primitive sin("sin");
Primitive cos("cos");
Primitive tanh("tanh");
Primitive logistic("logistic");
Primitive sqrt("sqrt");
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

namespace {

namespace vmath = kernels::vmath;
using elementwise::Accept;
using elementwise::c;
using elementwise::FloatFnKernel;
using elementwise::FloatKernel;
using elementwise::NumberKernel;
using elementwise::unary_jvp;

constexpr const char* kLayer = "prims/transcendental";

// ---------------------------------------------------------------- kernels

// Kernels: operator()(const C* x, C* y, n) over compute types (C = float for 16-bit floats).
// The float32 array loops (TESSERA_AVX512_CLONES: vec_math.h).
TESSERA_AVX512_CLONES void exp_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vmath::exp(x[i]);
}
TESSERA_AVX512_CLONES void log_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vmath::log(x[i]);
}
TESSERA_AVX512_CLONES void tanh_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vmath::tanh(x[i]);
}
TESSERA_AVX512_CLONES void logistic_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vmath::logistic(x[i]);
}
TESSERA_AVX512_CLONES void sin_f32(const float* x, float* y, int64_t n) {
  vmath::sincos_n<false>(x, y, n);
}
TESSERA_AVX512_CLONES void cos_f32(const float* x, float* y, int64_t n) {
  vmath::sincos_n<true>(x, y, n);
}

double logistic_f64(double x) {
  const double t = std::exp(-std::fabs(x));
  return (x >= 0.0 ? 1.0 : t) / (1.0 + t);
}
double sin_f64(double x) { return std::sin(x); }
double cos_f64(double x) { return std::cos(x); }
double exp_f64(double x) { return std::exp(x); }
double log_f64(double x) { return std::log(x); }
double tanh_f64(double x) { return std::tanh(x); }

#define TESSERA_F32_LOOP(name, expr)                                     \
  TESSERA_AVX512_CLONES void name(const float* x, float* y, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) y[i] = expr;                         \
  }
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

using ExpK = FloatFnKernel<exp_f32, exp_f64>;
using LogK = FloatFnKernel<log_f32, log_f64>;
using TanhK = FloatFnKernel<tanh_f32, tanh_f64>;
using LogisticK = FloatFnKernel<logistic_f32, logistic_f64>;
using SinK = FloatFnKernel<sin_f32, sin_f64>;
using CosK = FloatFnKernel<cos_f32, cos_f64>;
using Exp2K = FloatFnKernel<exp2_f32, exp2_f64>;
using Expm1K = FloatFnKernel<expm1_f32, expm1_f64>;
using Log1pK = FloatFnKernel<log1p_f32, log1p_f64>;
using RsqrtK = FloatFnKernel<rsqrt_f32, rsqrt_f64>;
using CbrtK = FloatFnKernel<via_f64<cbrt_f64>, cbrt_f64>;
using TanK = FloatFnKernel<tan_f32, tan_f64>;
using AsinK = FloatFnKernel<via_f64<asin_f64>, asin_f64>;
using AcosK = FloatFnKernel<via_f64<acos_f64>, acos_f64>;
using AtanK = FloatFnKernel<via_f64<atan_f64>, atan_f64>;
using SinhK = FloatFnKernel<sinh_f32, sinh_f64>;
using CoshK = FloatFnKernel<cosh_f32, cosh_f64>;
using AsinhK = FloatFnKernel<asinh_f32, asinh_f64>;
using AcoshK = FloatFnKernel<acosh_f32, acosh_f64>;
using AtanhK = FloatFnKernel<atanh_f32, atanh_f64>;

struct SqrtK : FloatKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_floating_point_v<C>) vmath::sqrt_n(x, y, n);
  }
};

template <class K>
void define(Primitive& p) {
  elementwise::define_unary<K>(p, kLayer, Accept::kFloating);
}

// ---------------------------------------------------------------- JVP rules (JAX's lax rules)

using lax::mul;

void set_jvp_rules() {
  exp.jvp =
      unary_jvp(exp, [](const Array& t, const Array&, const Array& o) { return lax::mul(t, o); });
  log.jvp =
      unary_jvp(log, [](const Array& t, const Array& x, const Array&) { return lax::div(t, x); });
  sin.jvp = unary_jvp(
      sin, [](const Array& t, const Array& x, const Array&) { return lax::mul(t, lax::cos(x)); });
  cos.jvp = unary_jvp(cos, [](const Array& t, const Array& x, const Array&) {
    return lax::neg(lax::mul(t, lax::sin(x)));
  });
  // t * (1 - out^2)
  tanh.jvp = unary_jvp(tanh, [](const Array& t, const Array&, const Array& o) {
    return lax::mul(t, lax::sub(c(1.0, o), lax::mul(o, o)));
  });
  // t * out * (1 - out)
  logistic.jvp = unary_jvp(logistic, [](const Array& t, const Array&, const Array& o) {
    return lax::mul(t, lax::mul(o, lax::sub(c(1.0, o), o)));
  });
  // t / (2 * out)
  sqrt.jvp = unary_jvp(sqrt, [](const Array& t, const Array&, const Array& o) {
    return lax::div(t, lax::mul(c(2.0, o), o));
  });
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
}

// ---- Scalar definitions (scalar_ir.h). The expansions are XLA-style formulas in the operand's
// type (not the eager kernels' float64 detours), so they carry their own few-ulp error; the
// reference-evaluator test states each bound.

namespace sd = elementwise::sdef;
using sd::Builder;
using sd::Value;
using sd::Values;

// 1 / (1 + exp(-x)) as the float64 kernel writes it: t = exp(-|x|), (x >= 0 ? 1 : t) / (1 + t).
Values logistic_def(sd::Builder& b, std::span<const Value> in, const Params&) {
  const Value x = in[0];
  const Value one = b.like(1.0, x);
  const Value t = b.exp(b.neg(b.abs(x)));
  return {b.div(b.select(b.ge(x, b.like(0.0, x)), one, t), b.add(one, t))};
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

void set_scalar_defs() {
  using scalar::Op;
  exp.scalar = sd::op(Op::kExp);
  log.scalar = sd::op(Op::kLog);
  sin.scalar = sd::op(Op::kSin);
  cos.scalar = sd::op(Op::kCos);
  tanh.scalar = sd::op(Op::kTanh);
  sqrt.scalar = sd::op(Op::kSqrt);
  exp2.scalar = sd::op(Op::kExp2);
  expm1.scalar = sd::op(Op::kExpm1);
  log1p.scalar = sd::op(Op::kLog1p);
  rsqrt.scalar = sd::op(Op::kRsqrt);
  cbrt.scalar = sd::op(Op::kCbrt);
  tan.scalar = sd::op(Op::kTan);
  logistic.scalar.rule = logistic_def;
  asin.scalar.rule = asin_def;
  acos.scalar.rule = acos_def;
  atan.scalar.rule = atan_def;
  sinh.scalar.rule = sinh_def;
  cosh.scalar.rule = cosh_def;
  asinh.scalar.rule = asinh_def;
  acosh.scalar.rule = acosh_def;
  atanh.scalar.rule = atanh_def;
}

}  // namespace

void register_transcendental() {
  for (Primitive* p :
       {&exp,  &log, &sin,  &cos,  &tanh, &logistic, &sqrt, &exp2,  &expm1, &log1p, &rsqrt,
        &cbrt, &tan, &asin, &acos, &atan, &sinh,     &cosh, &asinh, &acosh, &atanh}) {
    p->kind = PrimitiveKind::kElementwise;
    p->signature = Signature::fixed(1);
  }
  define<ExpK>(exp);
  define<LogK>(log);
  define<SinK>(sin);
  define<CosK>(cos);
  define<TanhK>(tanh);
  define<LogisticK>(logistic);
  define<SqrtK>(sqrt);
  define<Exp2K>(exp2);
  define<Expm1K>(expm1);
  define<Log1pK>(log1p);
  define<RsqrtK>(rsqrt);
  define<CbrtK>(cbrt);
  define<TanK>(tan);
  define<AsinK>(asin);
  define<AcosK>(acos);
  define<AtanK>(atan);
  define<SinhK>(sinh);
  define<CoshK>(cosh);
  define<AsinhK>(asinh);
  define<AcoshK>(acosh);
  define<AtanhK>(atanh);
  set_jvp_rules();
  set_scalar_defs();
  // Elementwise: the batch axis stays where it is.
  for (Primitive* p :
       {&exp,  &log, &sin,  &cos,  &tanh, &logistic, &sqrt, &exp2,  &expm1, &log1p, &rsqrt,
        &cbrt, &tan, &asin, &acos, &atan, &sinh,     &cosh, &asinh, &acosh, &atanh}) {
    p->batch = batching::vectorized_rule(*p);
    register_primitive(*p);
  }
}

}  // namespace tessera::prims
