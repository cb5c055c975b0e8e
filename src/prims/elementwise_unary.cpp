// Unary elementwise primitives: neg, exp, log, sin, cos, tanh, logistic, sqrt, integer_pow.
//
// The transcendental ones take floating dtypes only (tessera::numpy promotes integers first).
// float32 (and 16-bit floats, computed in float32 blocks) use the vectorizable functions of
// vec_math.h; float64 uses libm.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/vec_math.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive neg("neg");
Primitive exp("exp");
Primitive log("log");
Primitive sin("sin");
Primitive cos("cos");
Primitive tanh("tanh");
Primitive logistic("logistic");
Primitive sqrt("sqrt");
Primitive integer_pow("integer_pow");

namespace {

namespace vmath = kernels::vmath;
using elementwise::Accept;
using elementwise::c;
using elementwise::FloatKernel;
using elementwise::NumberKernel;
using elementwise::unary_jvp;
using elementwise::wrap_t;

constexpr const char* kLayer = "prims/elementwise_unary";

// Kernels: operator()(const C* x, C* y, n) over compute types (C = float for 16-bit floats).
struct NegK : NumberKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_integral_v<C>) {
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(wrap_t<C>(0) - wrap_t<C>(x[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = -x[i];
    }
  }
};

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

// A floating kernel from a float32 array function and a float64 element function (libm).
#define TESSERA_FLOAT_KERNEL(Name, f32_n, f64)            \
  struct Name : FloatKernel {                             \
    template <class C>                                    \
    void operator()(const C* x, C* y, int64_t n) const {  \
      if constexpr (std::is_same_v<C, float>) {           \
        f32_n(x, y, n);                                   \
      } else if constexpr (std::is_same_v<C, double>) {   \
        for (int64_t i = 0; i < n; ++i) y[i] = f64(x[i]); \
      }                                                   \
    }                                                     \
  };
TESSERA_FLOAT_KERNEL(ExpK, exp_f32, exp_f64)
TESSERA_FLOAT_KERNEL(LogK, log_f32, log_f64)
TESSERA_FLOAT_KERNEL(TanhK, tanh_f32, tanh_f64)
TESSERA_FLOAT_KERNEL(LogisticK, logistic_f32, logistic_f64)
TESSERA_FLOAT_KERNEL(SinK, sin_f32, sin_f64)
TESSERA_FLOAT_KERNEL(CosK, cos_f32, cos_f64)
#undef TESSERA_FLOAT_KERNEL

struct SqrtK : FloatKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    if constexpr (std::is_floating_point_v<C>) vmath::sqrt_n(x, y, n);
  }
};

// x^y by repeated squaring (in the dtype, wrapping for integers); 1/x^|y| for negative y.
// Blocks keep each squaring step a plain vectorizable loop.
struct IntegerPowK {
  template <class T>
  static constexpr bool accepts = elementwise::kIsNumber<T>;
  int64_t y;
  template <class C>
  static C mul(C a, C b) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(wrap_t<C>(a) * wrap_t<C>(b));
    else
      return a * b;
  }
  template <class C>
  void operator()(const C* x, C* out, int64_t n) const {
    constexpr int64_t kBlock = 256;
    const uint64_t e0 = y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y);
    C base[kBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t m = std::min(kBlock, n - i0);
      C* acc = out + i0;
      for (int64_t i = 0; i < m; ++i) acc[i] = C(1);
      for (int64_t i = 0; i < m; ++i) base[i] = x[i0 + i];
      for (uint64_t e = e0; e != 0;) {
        if (e & 1) {
          for (int64_t i = 0; i < m; ++i) acc[i] = mul(acc[i], base[i]);
        }
        e >>= 1;
        if (e) {
          for (int64_t i = 0; i < m; ++i) base[i] = mul(base[i], base[i]);
        }
      }
      if constexpr (std::is_floating_point_v<C>) {
        if (y < 0) {
          for (int64_t i = 0; i < m; ++i) acc[i] = C(1) / acc[i];
        }
      }
    }
  }
};

template <class K>
void define(Primitive& p, Accept accept) {
  elementwise::define_unary<K>(p, kLayer, accept);
  register_primitive(p);
}

void define_integer_pow() {
  integer_pow.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    std::vector<Aval> out = elementwise::unary_abstract("integer_pow", Accept::kNumber, in);
    const int64_t y = params.get_int("y");
    if (y < 0 && !is_floating(in[0].dtype)) {
      throw TypeError(
          op_message("integer_pow", "integers cannot be raised to negative powers, got " +
                                        in[0].str() + " with y=" + std::to_string(y) +
                                        "; convert to a floating dtype first"));
    }
    return out;
  };
  integer_pow.impl = [](const ExecContext& ctx, std::span<const Array> args, const Params& params,
                        std::span<const Aval> out_avals) {
    return elementwise::unary_impl(ctx, kLayer, "integer_pow", args, out_avals,
                                   IntegerPowK{params.get_int("y")});
  };
  register_primitive(integer_pow);
}

// ---- JVP and transpose rules (JAX's lax rules; lax ops only, so they work under any trace).

using elementwise::JvpOut;

JvpOut integer_pow_jvp(std::span<const Array> p, std::span<const Array> t, const Params& params) {
  const int64_t y = params.get_int("y");
  const Array& x = p[0];
  Array out = lax::integer_pow(x, y);
  if (!t[0].defined() || !ad::has_tangent(out.dtype()) || y == 0) return {{out}, {Array()}};
  Array dx =
      y == 1 ? c(1.0, x) : lax::mul(c(static_cast<double>(y), x), lax::integer_pow(x, y - 1));
  return {{out}, {lax::mul(t[0], dx)}};
}

std::vector<Array> neg_transpose(std::span<const Array> ct, std::span<const Array> args,
                                 std::span<const Aval>, const Params&) {
  if (args[0].defined()) ad::bad_linearity("neg", "transpose needs a linear operand");
  return {lax::neg(ct[0])};
}

void set_ad_rules() {
  neg.jvp = unary_jvp(neg, [](const Array& t, const Array&, const Array&) { return lax::neg(t); });
  neg.transpose = neg_transpose;
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
  integer_pow.jvp = integer_pow_jvp;
}

// ---- Scalar definitions (scalar_ir.h).

namespace sd = elementwise::sdef;

// 1 / (1 + exp(-x)) as the float64 kernel writes it: t = exp(-|x|), (x >= 0 ? 1 : t) / (1 + t).
sd::Values logistic_def(sd::Builder& b, std::span<const sd::Value> in, const Params&) {
  const sd::Value x = in[0];
  const sd::Value one = b.like(1.0, x);
  const sd::Value t = b.exp(b.neg(b.abs(x)));
  return {b.div(b.select(b.ge(x, b.like(0.0, x)), one, t), b.add(one, t))};
}

// x^y by repeated squaring in the kernel's order; 1 / x^|y| for negative y (floats).
sd::Values integer_pow_def(sd::Builder& b, std::span<const sd::Value> in, const Params& params) {
  const int64_t y = params.get_int("y");
  sd::Value acc = b.like(1.0, in[0]);
  sd::Value base = in[0];
  for (uint64_t e = y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y); e != 0;) {
    if (e & 1) acc = b.mul(acc, base);
    e >>= 1;
    if (e) base = b.mul(base, base);
  }
  if (y < 0 && is_floating(acc.type)) acc = b.div(b.like(1.0, acc), acc);
  return {acc};
}

void set_scalar_defs() {
  using scalar::Op;
  neg.scalar = sd::op(Op::kNeg);
  exp.scalar = sd::op(Op::kExp);
  log.scalar = sd::op(Op::kLog);
  sin.scalar = sd::op(Op::kSin);
  cos.scalar = sd::op(Op::kCos);
  tanh.scalar = sd::op(Op::kTanh);
  sqrt.scalar = sd::op(Op::kSqrt);
  logistic.scalar.rule = logistic_def;
  integer_pow.scalar.rule = integer_pow_def;
}

}  // namespace

void register_elementwise_unary() {
  for (Primitive* p : {&neg, &exp, &log, &sin, &cos, &tanh, &logistic, &sqrt, &integer_pow})
    p->kind = PrimitiveKind::kElementwise;
  for (Primitive* p : {&neg, &exp, &log, &sin, &cos, &tanh, &logistic, &sqrt})
    p->signature = Signature::fixed(1);
  integer_pow.signature = Signature::fixed(1, {{"y", ParamKind::kInt}});
  define<NegK>(neg, Accept::kNumber);
  define<ExpK>(exp, Accept::kFloating);
  define<LogK>(log, Accept::kFloating);
  define<SinK>(sin, Accept::kFloating);
  define<CosK>(cos, Accept::kFloating);
  define<TanhK>(tanh, Accept::kFloating);
  define<LogisticK>(logistic, Accept::kFloating);
  define<SqrtK>(sqrt, Accept::kFloating);
  define_integer_pow();
  set_ad_rules();
  set_scalar_defs();
  // Batching: elementwise, so the batch axis passes through where it is.
  for (Primitive* p : {&neg, &exp, &log, &sin, &cos, &tanh, &logistic, &sqrt, &integer_pow})
    p->batch = batching::vectorized_rule(*p);
}

}  // namespace tessera::prims
