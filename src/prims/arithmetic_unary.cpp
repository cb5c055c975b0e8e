// Unary arithmetic, sign and rounding primitives: neg abs sign square integer_pow floor ceil
// round {rounding_method} is_finite (the binary arithmetic is in arithmetic.cpp).
//
// Dtypes as jax.lax: neg, abs, sign, square and integer_pow take integers and floats (integers
// wrap; abs of an unsigned integer is the identity, which JAX's lax.abs now rejects and jnp.abs
// does itself; abs of INT_MIN wraps to INT_MIN as XLA's; sign of an unsigned integer is 0 or 1;
// integers cannot be raised to negative powers); floor, ceil, round and is_finite take floating
// dtypes only, and is_finite returns bool. 16-bit floats are computed in float32 and rounded.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "compiler/passes/simplify.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/vec_math.h"
#include "prims/vec_math_extra.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive neg("neg");
Primitive abs("abs");
Primitive sign("sign");
Primitive square("square");
Primitive integer_pow("integer_pow");
Primitive floor("floor");
Primitive ceil("ceil");
Primitive round("round");
Primitive is_finite("is_finite");

namespace {

namespace vmath = kernels::vmath;
using elementwise::Accept;
using elementwise::c;
using elementwise::FloatFnKernel;
using elementwise::FloatKernel;
using elementwise::NumberKernel;
using elementwise::unary_jvp;
using elementwise::wrap_t;

constexpr const char* kLayer = "prims/arithmetic_unary";

// ---------------------------------------------------------------- kernels

// Kernels: operator()(const C* x, R* y, n) over compute types (C = float for 16-bit floats);
// R is C, or bool for is_finite (elementwise_util.h: accepts, result).
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

#define TESSERA_F32_LOOP(name, expr)                                     \
  TESSERA_AVX512_CLONES void name(const float* x, float* y, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) y[i] = expr;                         \
  }
TESSERA_F32_LOOP(floor_f32, vmath::floor(x[i]))
TESSERA_F32_LOOP(ceil_f32, vmath::ceil(x[i]))
TESSERA_F32_LOOP(round_away_f32, vmath::round_away(x[i]))
TESSERA_F32_LOOP(round_even_f32, vmath::round_even(x[i]))
#undef TESSERA_F32_LOOP

double floor_f64(double x) { return std::floor(x); }
double ceil_f64(double x) { return std::ceil(x); }
double round_away_f64(double x) { return std::round(x); }      // halves away from zero
double round_even_f64(double x) { return std::nearbyint(x); }  // default mode: halves to even

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

using FloorK = FloatFnKernel<floor_f32, floor_f64>;
using CeilK = FloatFnKernel<ceil_f32, ceil_f64>;

// ---------------------------------------------------------------- abstract eval and impl

template <class K>
void define(Primitive& p, Accept accept) {
  elementwise::define_unary<K>(p, kLayer, accept);
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

// ---------------------------------------------------------------- JVP and transpose rules
// (JAX's lax rules; lax ops only, so they work under any trace).

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
  integer_pow.jvp = integer_pow_jvp;
  // JAX's rule: select(x >= 0, t, -t), so the derivative at x == 0 (and -0) is 1.
  abs.jvp = unary_jvp(abs, [](const Array& t, const Array& x, const Array&) {
    return lax::select_n(lax::ge(x, c(0.0, x)), {lax::neg(t), t});
  });
  // Piecewise-constant ops: a zero tangent.
  for (Primitive* p : {&sign, &floor, &ceil, &round, &is_finite}) p->jvp = ad::zero_jvp(*p);
  // t * (2 * x)
  square.jvp = unary_jvp(square, [](const Array& t, const Array& x, const Array&) {
    return lax::mul(t, lax::mul(c(2.0, x), x));
  });
}

// ---- Scalar definitions (scalar_ir.h).

namespace sd = elementwise::sdef;
using sd::Builder;
using sd::Value;
using sd::Values;

// x^y by repeated squaring in the kernel's order; 1 / x^|y| for negative y (floats).
Values integer_pow_def(sd::Builder& b, std::span<const Value> in, const Params& params) {
  const int64_t y = params.get_int("y");
  Value acc = b.like(1.0, in[0]);
  Value base = in[0];
  for (uint64_t e = y < 0 ? 0 - static_cast<uint64_t>(y) : static_cast<uint64_t>(y); e != 0;) {
    if (e & 1) acc = b.mul(acc, base);
    e >>= 1;
    if (e) base = b.mul(base, base);
  }
  if (y < 0 && is_floating(acc.type)) acc = b.div(b.like(1.0, acc), acc);
  return {acc};
}

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

Values is_finite_def(Builder& b, std::span<const Value> in, const Params&) {
  return {b.lt(b.abs(in[0]), b.like(INFINITY, in[0]))};
}

Values square_def(Builder& b, std::span<const Value> in, const Params&) {
  return {b.mul(in[0], in[0])};
}

void set_scalar_defs() {
  using scalar::Op;
  neg.scalar = sd::op(Op::kNeg);
  abs.scalar = sd::op(Op::kAbs);
  floor.scalar = sd::op(Op::kFloor);
  ceil.scalar = sd::op(Op::kCeil);
  integer_pow.scalar.rule = integer_pow_def;
  sign.scalar.rule = sign_def;
  round.scalar.rule = round_def;
  is_finite.scalar.rule = is_finite_def;
  square.scalar.rule = square_def;
}

}  // namespace

void register_arithmetic_unary() {
  for (Primitive* p :
       {&neg, &abs, &sign, &square, &integer_pow, &floor, &ceil, &round, &is_finite}) {
    p->kind = PrimitiveKind::kElementwise;
    p->signature = Signature::fixed(1);
  }
  integer_pow.signature = Signature::fixed(1, {{"y", ParamKind::kInt}});
  round.signature = Signature::fixed(1, {{"rounding_method", ParamKind::kInt}});
  define<NegK>(neg, Accept::kNumber);
  define<AbsK>(abs, Accept::kNumber);
  define<SignK>(sign, Accept::kNumber);
  define<SquareK>(square, Accept::kNumber);
  define<FloorK>(floor, Accept::kFloating);
  define<CeilK>(ceil, Accept::kFloating);
  define_integer_pow();
  define_round();
  define_is_finite();
  set_ad_rules();
  set_scalar_defs();
  // Elementwise: the batch axis stays where it is.
  for (Primitive* p :
       {&neg, &abs, &sign, &square, &integer_pow, &floor, &ceil, &round, &is_finite}) {
    p->batch = batching::vectorized_rule(*p);
    register_primitive(*p);
  }
  // Simplification (compiler/passes/simplify.h): neg(neg(x)) -> x, exact for every dtype
  // (integers wrap both ways).
  compiler::register_simplification(
      neg, [](const compiler::SimplifyView& v) -> std::optional<compiler::Rewrite> {
        const JaxprEqn* inner = v.producer(v.eqn.invars[0]);
        if (inner != nullptr && inner->primitive == &neg)
          return compiler::forward(inner->invars[0]);
        return std::nullopt;
      });
}

}  // namespace tessera::prims
