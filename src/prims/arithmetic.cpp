// Binary arithmetic primitives: add, sub, mul, div, max, min, pow (the unary ones are in
// arithmetic_unary.cpp).
//
// Operands share one dtype (no promotion: that is tessera::numpy's job) and follow lax's
// broadcasting rule. Kernels never materialize broadcasts: they walk runs of the output with
// per-operand strides (broadcast_iter.h). Integer arithmetic wraps (computed in unsigned types,
// so there is no signed-overflow UB); integer division follows XLA: x / 0 == -1 (all ones for
// unsigned) and INT_MIN / -1 == INT_MIN. 16-bit floats are computed in float32 and rounded.
#include <cmath>
#include <limits>
#include <type_traits>

#include "compiler/passes/simplify.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/vec_math_pow.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive add("add");
Primitive sub("sub");
Primitive mul("mul");
Primitive div("div");
Primitive max("max");
Primitive min("min");
Primitive pow("pow");

namespace {

using elementwise::Accept;
using elementwise::wrap_t;

constexpr const char* kLayer = "prims/arithmetic";

struct AddOp : elementwise::NumberKernel {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(wrap_t<C>(a) + wrap_t<C>(b));
    else
      return a + b;
  }
};
struct SubOp : elementwise::NumberKernel {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(wrap_t<C>(a) - wrap_t<C>(b));
    else
      return a - b;
  }
};
struct MulOp : elementwise::NumberKernel {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(wrap_t<C>(a) * wrap_t<C>(b));
    else
      return a * b;
  }
};
struct DivOp : elementwise::NumberKernel {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return static_cast<C>(-1);  // all ones: -1 signed, the maximum unsigned
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return static_cast<C>(wrap_t<C>(0) - wrap_t<C>(a));  // MIN / -1 == MIN
      }
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
// NaN-propagating: if either operand is NaN the result is NaN. On bool: logical or / and.
struct MaxOp : elementwise::AnyKernel {
  template <class C>
  C operator()(C a, C b) const {
    const C m = a > b ? a : b;
    if constexpr (std::is_floating_point_v<C>)
      return a != a ? a : m;
    else
      return m;
  }
};
struct MinOp : elementwise::AnyKernel {
  template <class C>
  C operator()(C a, C b) const {
    const C m = a < b ? a : b;
    if constexpr (std::is_floating_point_v<C>)
      return a != a ? a : m;
    else
      return m;
  }
};
// float32 (and the 16-bit floats, computed in float32): vec_math_pow.h's pow (through double,
// within 1 ulp, C99's special cases; the fused kernels expand the same operations); float64: pow.
struct PowOp : elementwise::FloatKernel {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, float>)
      return kernels::vmath::pow(a, b);
    else if constexpr (std::is_floating_point_v<C>)
      return std::pow(a, b);
    else
      return a;  // never instantiated for integers (accepts)
  }
};

// pow's float32 runs as array loops (vectorized; also compiled for AVX-512): a base or an
// exponent of stride 0 is a broadcast scalar.
TESSERA_AVX512_CLONES void pow_f32_runs(const float* a, int64_t sa, const float* b, int64_t sb,
                                        float* o, int64_t n) {
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i) o[i] = kernels::vmath::pow(a[i], b[i]);
  } else if (sb) {
    const float x = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = kernels::vmath::pow(x, b[i]);
  } else if (sa) {
    const float y = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = kernels::vmath::pow(a[i], y);
  } else {
    std::fill(o, o + n, kernels::vmath::pow(*a, *b));
  }
}

struct PowRuns : PowOp {
  template <class S, class R>
  void operator()(const S* a, int64_t sa, const S* b, int64_t sb, R* o, int64_t n) const {
    if constexpr (std::is_same_v<S, float> && std::is_same_v<R, float>)
      pow_f32_runs(a, sa, b, sb, o, n);
    else
      kernels::run2(a, sa, b, sb, o, n, static_cast<const PowOp&>(*this));
  }
};

template <class Op>
void define(Primitive& p, Accept accept) {
  const char* fix = accept == Accept::kFloating
                        ? "; use integer_pow for an integer exponent, or convert with "
                          "convert_element_type"
                        : "; convert with convert_element_type";
  if constexpr (std::is_same_v<Op, PowOp>)
    elementwise::define_binary<PowRuns>(p, kLayer, accept, fix);
  else
    elementwise::define_binary<elementwise::Runs<Op>>(p, kLayer, accept, fix);
  register_primitive(p);
}

// ---- JVP and transpose rules (JAX's lax rules; lax ops only, so they work under any trace).

using ad::JvpOut;

// Packs a tangent: broadcast to the output's shape; integer/bool outputs have none.
JvpOut binary_jvp_out(const Array& out, const Array& t) {
  if (!ad::has_tangent(out.dtype()) || !t.defined()) return {{out}, {Array()}};
  return {{out}, {ad::broadcast_to_shape(t, out.shape())}};
}

// tx * a + ty * b with undefined tangents skipped (a, b are nullary-callable factors).
template <class Fx, class Fy>
Array linear_combo(const Array& tx, const Array& ty, Fx fx, Fy fy) {
  Array a = tx.defined() ? fx(tx) : Array();
  Array b = ty.defined() ? fy(ty) : Array();
  return ad::add_tangents(a, b);
}

JvpOut add_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  Array out = lax::add(p[0], p[1]);
  if (!ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  return binary_jvp_out(out, ad::add_tangents(ad::broadcast_to_shape(t[0], out.shape()),
                                              ad::broadcast_to_shape(t[1], out.shape())));
}

JvpOut sub_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  Array out = lax::sub(p[0], p[1]);
  if (!ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  Array tx = ad::broadcast_to_shape(t[0], out.shape());
  Array ty = ad::broadcast_to_shape(t[1], out.shape());
  if (!ty.defined()) return binary_jvp_out(out, tx);
  return binary_jvp_out(out, tx.defined() ? lax::sub(tx, ty) : lax::neg(ty));
}

JvpOut mul_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &x = p[0], &y = p[1];
  Array out = lax::mul(x, y);
  if (!ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  return binary_jvp_out(out, linear_combo(
                                 t[0], t[1], [&](const Array& tx) { return lax::mul(tx, y); },
                                 [&](const Array& ty) { return lax::mul(x, ty); }));
}

// d(x/y) = tx / y - ty * (x / y) / y.
JvpOut div_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &x = p[0], &y = p[1];
  Array out = lax::div(x, y);
  if (!ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  return binary_jvp_out(
      out, linear_combo(
               t[0], t[1], [&](const Array& tx) { return lax::div(tx, y); },
               [&](const Array& ty) { return lax::neg(lax::mul(ty, lax::div(out, y))); }));
}

// JAX splits ties evenly: the coefficient of operand a is 1 where a alone attains the
// result, 0.5 where both do, 0 elsewhere: [a==out] * (1 - 0.5 * [b==out]).
Array balanced_coeff(const Array& a, const Array& b, const Array& out) {
  const DType d = out.dtype();
  Array ea = lax::convert_element_type(lax::eq(a, out), d);
  Array eb = lax::convert_element_type(lax::eq(b, out), d);
  return lax::mul(ea, lax::sub(ad::scalar_const(1.0, d), lax::mul(ad::scalar_const(0.5, d), eb)));
}

template <bool kMax>
JvpOut minmax_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &x = p[0], &y = p[1];
  Array out = kMax ? lax::max(x, y) : lax::min(x, y);
  if (!ad::has_tangent(out.dtype())) return {{out}, {Array()}};
  return binary_jvp_out(
      out, linear_combo(
               t[0], t[1], [&](const Array& tx) { return lax::mul(tx, balanced_coeff(x, y, out)); },
               [&](const Array& ty) { return lax::mul(ty, balanced_coeff(y, x, out)); }));
}

// d(x^y) = tx * (y == 0 ? 0 : y * x^(y-1)) + ty * log(x == 0 ? 1 : x) * x^y, as JAX.
JvpOut pow_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &x = p[0], &y = p[1];
  Array out = lax::pow(x, y);
  const DType d = out.dtype();
  auto dx = [&](const Array& tx) {
    Array jac = lax::mul(y, lax::pow(x, lax::sub(y, ad::scalar_const(1.0, d))));
    Array y_zero = ad::broadcast_to_shape(lax::eq(y, ad::scalar_const(0.0, d)), jac.shape());
    jac = lax::select_n(y_zero, {jac, ad::zeros_like_aval(jac.aval())});
    return lax::mul(tx, jac);
  };
  auto dy = [&](const Array& ty) {
    Array x_zero = lax::eq(x, ad::scalar_const(0.0, d));
    Array safe_x = lax::select_n(x_zero, {x, ad::full_like_aval(x.aval(), 1.0)});
    return lax::mul(ty, lax::mul(lax::log(safe_x), out));
  };
  return binary_jvp_out(out, linear_combo(t[0], t[1], dx, dy));
}

// Transposes. args[i] undefined <=> input i is linear (aval in avals[i]).
std::vector<Array> add_transpose(std::span<const Array> ct, std::span<const Array> args,
                                 std::span<const Aval> avals, const Params&) {
  std::vector<Array> res(2);
  for (int i = 0; i < 2; ++i) {
    if (!args[i].defined()) res[i] = ad::unbroadcast(ct[0], avals[i]);
  }
  return res;
}

std::vector<Array> sub_transpose(std::span<const Array> ct, std::span<const Array> args,
                                 std::span<const Aval> avals, const Params&) {
  std::vector<Array> res(2);
  if (!args[0].defined()) res[0] = ad::unbroadcast(ct[0], avals[0]);
  if (!args[1].defined()) res[1] = ad::unbroadcast(lax::neg(ct[0]), avals[1]);
  return res;
}

std::vector<Array> mul_transpose(std::span<const Array> ct, std::span<const Array> args,
                                 std::span<const Aval> avals, const Params&) {
  if (args[0].defined() == args[1].defined()) {
    ad::bad_linearity("mul", "transpose needs exactly one linear operand");
  }
  std::vector<Array> res(2);
  const int lin = args[0].defined() ? 1 : 0;
  res[lin] = ad::unbroadcast(lax::mul(ct[0], args[1 - lin]), avals[lin]);
  return res;
}

std::vector<Array> div_transpose(std::span<const Array> ct, std::span<const Array> args,
                                 std::span<const Aval> avals, const Params&) {
  if (args[0].defined() || !args[1].defined()) {
    ad::bad_linearity("div", "transpose is linear in the numerator only");
  }
  return {ad::unbroadcast(lax::div(ct[0], args[1]), avals[0]), Array()};
}

// ---- Scalar definitions (scalar_ir.h): one op each.

void set_scalar_defs() {
  using elementwise::sdef::op;
  using scalar::Op;
  add.scalar = op(Op::kAdd);
  sub.scalar = op(Op::kSub);
  mul.scalar = op(Op::kMul);
  div.scalar = op(Op::kDiv);
  max.scalar = op(Op::kMax);
  min.scalar = op(Op::kMin);
  pow.scalar = op(Op::kPow);
}

// Simplifications (compiler/passes/simplify.h), each bitwise exact: x * 1 and 1 * x -> x;
// x - 0 -> x; x + 0 and 0 + x -> x for integers and bools, and for floats only with -0.0
// (x + 0.0 turns -0.0 into +0.0).
void set_simplifications() {
  using compiler::forward;
  using compiler::scalar_literal;
  using compiler::SimplifyView;
  compiler::register_simplification(mul,
                                    [](const SimplifyView& v) -> std::optional<compiler::Rewrite> {
                                      for (int k : {0, 1}) {
                                        std::optional<double> c = scalar_literal(v.eqn.invars[k]);
                                        if (c && *c == 1.0) return forward(v.eqn.invars[1 - k]);
                                      }
                                      return std::nullopt;
                                    });
  auto is_additive_zero = [](const Atom& a) {
    std::optional<double> c = scalar_literal(a);
    if (!c || *c != 0.0) return false;
    return !is_floating(atom_aval(a).dtype) || std::signbit(*c);
  };
  compiler::register_simplification(
      add, [is_additive_zero](const SimplifyView& v) -> std::optional<compiler::Rewrite> {
        for (int k : {0, 1})
          if (is_additive_zero(v.eqn.invars[k])) return forward(v.eqn.invars[1 - k]);
        return std::nullopt;
      });
  compiler::register_simplification(sub,
                                    [](const SimplifyView& v) -> std::optional<compiler::Rewrite> {
                                      std::optional<double> c = scalar_literal(v.eqn.invars[1]);
                                      // x - (+0.0) is x for every x (-0.0 - 0.0 is -0.0); x -
                                      // (-0.0) is not.
                                      if (c && *c == 0.0 && !std::signbit(*c))
                                        return forward(v.eqn.invars[0]);
                                      return std::nullopt;
                                    });
}

}  // namespace

void register_arithmetic() {
  for (Primitive* p : {&add, &sub, &mul, &div, &max, &min, &pow})
    p->kind = PrimitiveKind::kElementwise;
  set_scalar_defs();
  // Signatures: two operands, no params (the check runs in bind before any rule).
  for (Primitive* p : {&add, &sub, &mul, &div, &max, &min, &pow})
    p->signature = Signature::fixed(2);
  define<AddOp>(add, Accept::kNumber);
  define<SubOp>(sub, Accept::kNumber);
  define<MulOp>(mul, Accept::kNumber);
  define<DivOp>(div, Accept::kNumber);
  define<MaxOp>(max, Accept::kAny);
  define<MinOp>(min, Accept::kAny);
  define<PowOp>(pow, Accept::kFloating);
  add.jvp = add_jvp;
  add.transpose = add_transpose;
  sub.jvp = sub_jvp;
  sub.transpose = sub_transpose;
  mul.jvp = mul_jvp;
  mul.transpose = mul_transpose;
  div.jvp = div_jvp;
  div.transpose = div_transpose;
  max.jvp = minmax_jvp<true>;
  min.jvp = minmax_jvp<false>;
  pow.jvp = pow_jvp;
  // Batching: lax broadcasting stretches size-1 axes, so only batched operands that disagree
  // on the batch axis move (batch_util.h).
  for (Primitive* p : {&add, &sub, &mul, &div, &max, &min, &pow})
    p->batch = batching::broadcasting_rule(*p);
  set_simplifications();
}

}  // namespace tessera::prims
