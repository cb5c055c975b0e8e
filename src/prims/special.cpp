// Special functions: erf, erfc, erf_inv, lgamma, digamma, bessel_i0e, bessel_i1e (unary);
// polygamma(m, x), zeta(x, q) (Hurwitz), igamma(a, x) (regularized lower P), igammac (upper Q),
// igamma_grad_a (dP/da), random_gamma_grad(a, x) (d sample / d alpha) (binary);
// regularized_incomplete_beta(a, b, x) (ternary). lax broadcasting, one floating dtype.
//
// Every dtype is computed in double by the scalar kernels of special_kernels.h and rounded once
// (16-bit floats through float32). Domains and special values follow XLA (digamma NaN at its
// poles, lgamma +inf there, erf_inv(+-1) = +-inf, igamma NaN for a <= 0, igammac 1 there).
//
// Derivatives are JAX's rules. Where JAX has none, a tangent raises: zeta in x, betainc in a and
// b, igamma_grad_a and random_gamma_grad (TypeError, as a primitive without a rule). polygamma's m
// is an integer order: JAX raises for a tangent in m; here m's tangent is dropped (a zero
// contribution), so grad over both operands works and returns 0 for m.
#include <cmath>
#include <string>
#include <type_traits>

#include "compiler/math_expand.h"
#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/special_kernels.h"
#include "prims/vec_math_special.h"
#include "tessera/lax.h"

namespace tessera::prims {

Primitive erf("erf");
Primitive erfc("erfc");
Primitive erf_inv("erf_inv");
Primitive lgamma("lgamma");
Primitive digamma("digamma");
Primitive polygamma("polygamma");
Primitive zeta("zeta");
Primitive igamma("igamma");
Primitive igammac("igammac");
Primitive igamma_grad_a("igamma_grad_a");
Primitive bessel_i0e("bessel_i0e");
Primitive bessel_i1e("bessel_i1e");
Primitive random_gamma_grad("random_gamma_grad");
Primitive regularized_incomplete_beta("regularized_incomplete_beta");

namespace {

namespace sk = kernels::special;
using elementwise::Accept;
using elementwise::c;
using elementwise::unary_jvp;

constexpr const char* kLayer = "prims/special";

double erf_d(double x) { return std::erf(x); }
double erfc_d(double x) { return std::erfc(x); }

// erf and erf_inv at float32 (and the 16-bit floats, computed in float32): vec_math_special.h's
// vectorized approximations, which the fused kernels reproduce bit for bit (math_expand.h);
// float64 stays on libm's erf and the Halley-refined erf_inv.
TESSERA_AVX512_CLONES void erf_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = kernels::vmath::erf(x[i]);
}
TESSERA_AVX512_CLONES void erf_inv_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = kernels::vmath::erf_inv(x[i]);
}

// ---- kernels: every element in double, rounded once to the compute type C.

template <double (*F)(double)>
struct UnaryK : elementwise::FloatKernel {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(F(static_cast<double>(x[i])));
  }
};

template <double (*F)(double, double)>
struct BinaryOp : elementwise::FloatKernel {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(F(static_cast<double>(a), static_cast<double>(b)));
  }
};

// ---- abstract eval and impl (floating dtypes only)

template <class K>
void define_unary_kernel(Primitive& p) {
  elementwise::define_unary<K>(p, kLayer, Accept::kFloating);
  p.batch = batching::vectorized_rule(p);
  register_primitive(p);
}

template <double (*F)(double)>
void define_unary(Primitive& p) {
  define_unary_kernel<UnaryK<F>>(p);
}

template <double (*F)(double, double)>
void define_binary(Primitive& p) {
  elementwise::define_binary<elementwise::Runs<BinaryOp<F>>>(p, kLayer, Accept::kFloating,
                                                             "; convert with convert_element_type",
                                                             "convert with convert_element_type");
  p.batch = batching::broadcasting_rule(p);
  register_primitive(p);
}

// Three operands of one floating dtype under lax broadcasting (betainc).
std::vector<Aval> ternary_abstract(const char* op, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 3);
  for (const Aval& a : in) kernels::check_not_extended(op, a);
  kernels::check_same_dtype(op, in, "convert with convert_element_type");
  if (!is_floating(in[0].dtype)) {
    throw TypeError(op_message(op, "requires floating operands, got " + kernels::avals_list(in) +
                                       "; convert with convert_element_type"));
  }
  return {Aval{kernels::broadcast_shapes(op, in), in[0].dtype,
               in[0].weak_type && in[1].weak_type && in[2].weak_type}};
}

template <double (*F)(double, double, double)>
std::vector<Array> ternary_impl(const ExecContext& ctx, const char* op, std::span<const Array> args,
                                std::span<const Aval> out_avals) {
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op, ctx.device);
  const auto plan =
      kernels::make_plan<3>(oa.shape, {&args[0].shape(), &args[1].shape(), &args[2].shape()});
  if (plan.size == 0) return {out};
  kernels::dispatch_dtype(oa.dtype, [&]<class T>() {
    if constexpr (elementwise::kIsFloat<T>) {
      const T* a = static_cast<const T*>(args[0].raw_data(op));
      const T* b = static_cast<const T*>(args[1].raw_data(op));
      const T* x = static_cast<const T*>(args[2].raw_data(op));
      T* o = static_cast<T*>(out.buffer()->data());
      kernels::parallel_runs<3>(
          plan, [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t len) {
            const int64_t sa = plan.inner[0], sb = plan.inner[1], sx = plan.inner[2];
            for (int64_t i = 0; i < len; ++i) {
              // In double, rounded once to the compute type (float32 for 16-bit floats).
              using C = kernels::compute_t<T>;
              const double r = F(static_cast<double>(kernels::load(a[off[0] + i * sa])),
                                 static_cast<double>(kernels::load(b[off[1] + i * sb])),
                                 static_cast<double>(kernels::load(x[off[2] + i * sx])));
              o[oo + i] = kernels::store<T>(static_cast<C>(r));
            }
          });
    } else {
      elementwise::rejected_dtype(kLayer, op, oa.dtype);
    }
  });
  return {out};
}

// ---- JVP rules (JAX's; lax ops only, so they work under any trace)

using ad::JvpOut;

// exp(-x^2), the shape of erf's derivative.
Array gauss(const Array& x) { return lax::exp(lax::neg(lax::mul(x, x))); }

// The tangent of a binary op: the terms of the defined tangents, summed and broadcast to the
// output's shape (undefined when neither operand has a tangent).
JvpOut binary_out(const Array& out, const Array& ta, const Array& tb) {
  Array t = ad::add_tangents(ta, tb);
  return {{out}, {ad::broadcast_to_shape(t, out.shape())}};
}

// exp(-x + (a - 1) log x - lgamma(a)): dP(a, x)/dx.
Array igamma_dx(const Array& a, const Array& x) {
  return lax::exp(lax::sub(lax::add(lax::neg(x), lax::mul(lax::sub(a, c(1.0, a)), lax::log(x))),
                           lax::lgamma(a)));
}

template <bool kUpper>
JvpOut igamma_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &a = p[0], &x = p[1];
  Array out = kUpper ? lax::igammac(a, x) : lax::igamma(a, x);
  auto sign = [](Array v) { return kUpper ? lax::neg(v) : v; };
  Array ta = t[0].defined() ? sign(lax::mul(t[0], lax::igamma_grad_a(a, x))) : Array();
  Array tx = t[1].defined() ? sign(lax::mul(t[1], igamma_dx(a, x))) : Array();
  return binary_out(out, ta, tx);
}

// d/dx polygamma(m, x) = polygamma(m + 1, x); m (an integer order) contributes nothing.
JvpOut polygamma_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &m = p[0], &x = p[1];
  Array out = lax::polygamma(m, x);
  Array tx = t[1].defined() ? lax::mul(t[1], lax::polygamma(lax::add(m, c(1.0, m)), x)) : Array();
  return binary_out(out, Array(), tx);
}

// d/dq zeta(x, q) = -x zeta(x + 1, q); JAX defines no derivative in x.
JvpOut zeta_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &x = p[0], &q = p[1];
  if (t[0].defined()) {
    throw TypeError(
        op_message("zeta",
                   "differentiation with respect to x (the first operand) is not implemented, as "
                   "in JAX; only q is differentiable (wrap x in stop_gradient, or differentiate "
                   "with respect to q only)"));
  }
  Array out = lax::zeta(x, q);
  Array tq = t[1].defined()
                 ? lax::mul(t[1], lax::neg(lax::mul(x, lax::zeta(lax::add(x, c(1.0, x)), q))))
                 : Array();
  return binary_out(out, Array(), tq);
}

// d/dx i0e(x) = i1e(x) - sign(x) i0e(x).
JvpOut bessel_i0e_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array& x = p[0];
  Array out = lax::bessel_i0e(x);
  if (!t[0].defined()) return {{out}, {Array()}};
  return {{out}, {lax::mul(t[0], lax::sub(lax::bessel_i1e(x), lax::mul(lax::sign(x), out)))}};
}

// d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x), 1/2 at x = 0 (JAX's rule: |x| <= eps is 0).
JvpOut bessel_i1e_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array& x = p[0];
  Array out = lax::bessel_i1e(x);
  if (!t[0].defined()) return {{out}, {Array()}};
  const Array eps = c(finfo(x.dtype()).eps, x);
  const Array not_tiny = lax::gt(lax::abs(x), eps);
  const Array safe_x = lax::select_n(not_tiny, {ad::broadcast_to_shape(eps, x.shape()), x});
  const Array safe_y = lax::bessel_i1e(safe_x);
  const Array d = lax::sub(lax::bessel_i0e(safe_x),
                           lax::mul(safe_y, lax::add(lax::sign(safe_x), lax::reciprocal(safe_x))));
  const Array dy = lax::select_n(not_tiny, {ad::broadcast_to_shape(c(0.5, x), x.shape()), d});
  return {{out}, {lax::mul(t[0], dy)}};
}

// d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b); JAX defines no derivative in a or b.
JvpOut betainc_jvp(std::span<const Array> p, std::span<const Array> t, const Params&) {
  const Array &a = p[0], &b = p[1], &x = p[2];
  if (t[0].defined() || t[1].defined()) {
    throw TypeError(op_message(
        "regularized_incomplete_beta",
        "differentiation with respect to a or b is not implemented, as in JAX; only x (the "
        "third operand) is differentiable (wrap a and b in stop_gradient)"));
  }
  Array out = lax::betainc(a, b, x);
  if (!t[2].defined()) return {{out}, {Array()}};
  const Array one = c(1.0, x);
  const Array log_beta =
      lax::sub(lax::add(lax::lgamma(a), lax::lgamma(b)), lax::lgamma(lax::add(a, b)));
  const Array d = lax::exp(lax::sub(lax::add(lax::mul(lax::sub(a, one), lax::log(x)),
                                             lax::mul(lax::sub(b, one), lax::log1p(lax::neg(x)))),
                                    log_beta));
  return {{out}, {ad::broadcast_to_shape(lax::mul(t[2], d), out.shape())}};
}

void set_jvp_rules() {
  constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
  constexpr double kHalfSqrtPi = 0.88622692545275801365;
  erf.jvp = unary_jvp(erf, [](const Array& t, const Array& x, const Array&) {
    return lax::mul(c(kTwoOverSqrtPi, x), lax::mul(t, gauss(x)));
  });
  erfc.jvp = unary_jvp(erfc, [](const Array& t, const Array& x, const Array&) {
    return lax::mul(c(-kTwoOverSqrtPi, x), lax::mul(t, gauss(x)));
  });
  // sqrt(pi)/2 exp(out^2) t
  erf_inv.jvp = unary_jvp(erf_inv, [](const Array& t, const Array& x, const Array& o) {
    return lax::mul(c(kHalfSqrtPi, x), lax::mul(t, lax::exp(lax::mul(o, o))));
  });
  lgamma.jvp = unary_jvp(lgamma, [](const Array& t, const Array& x, const Array&) {
    return lax::mul(t, lax::digamma(x));
  });
  digamma.jvp = unary_jvp(digamma, [](const Array& t, const Array& x, const Array&) {
    return lax::mul(t, lax::polygamma(c(1.0, x), x));
  });
  polygamma.jvp = polygamma_jvp;
  zeta.jvp = zeta_jvp;
  igamma.jvp = igamma_jvp<false>;
  igammac.jvp = igamma_jvp<true>;
  bessel_i0e.jvp = bessel_i0e_jvp;
  bessel_i1e.jvp = bessel_i1e_jvp;
  regularized_incomplete_beta.jvp = betainc_jvp;
  // igamma_grad_a and random_gamma_grad have no rule (JAX has none): a tangent raises the trace's
  // "differentiation rule ... is not implemented" TypeError.
}

// ---- Scalar definitions (scalar_ir.h): the float64 library functions, rounded once to the
// operand's type (what the kernels do); erf_inv is the kernel's own expansion, in float64.

namespace sd = elementwise::sdef;

// sk::erf_inv as a program: Winitzki's guess, three Halley steps on erf (erfc where |x| > 1/2),
// the special cases selected last.
sd::Values erf_inv_def(sd::Builder& b, std::span<const sd::Value> in, const Params&) {
  const sd::Value x = b.convert(in[0], DType::kFloat64);
  auto k = [&](double v) { return b.constant(v, DType::kFloat64); };
  constexpr double kHalfSqrtPi = 0.88622692545275801365;
  constexpr double kA = 0.147;
  const sd::Value ax = b.abs(x);
  const sd::Value l = b.add(b.log1p(b.neg(ax)), b.log1p(ax));
  const sd::Value bb = b.add(k(2.0 / (sk::kPi * kA)), b.mul(k(0.5), l));
  const sd::Value r = b.sqrt(b.sub(b.mul(bb, bb), b.div(l, k(kA))));
  const sd::Value pos = b.div(b.div(b.neg(l), k(kA)), b.add(r, bb));
  sd::Value y = b.sqrt(b.select(b.gt(bb, k(0.0)), pos, b.sub(r, bb)));
  const sd::Value q = b.sub(k(1.0), ax);
  const sd::Value low = b.le(ax, k(0.5));
  for (int i = 0; i < 3; ++i) {
    const sd::Value f = b.select(low, b.sub(b.call(scalar::Fn::kErf, {&y, 1}), ax),
                                 b.sub(q, b.call(scalar::Fn::kErfc, {&y, 1})));
    const sd::Value u = b.div(f, b.div(b.exp(b.mul(b.neg(y), y)), k(kHalfSqrtPi)));
    y = b.sub(y, b.div(u, b.add(k(1.0), b.mul(y, u))));
  }
  sd::Value res = b.binary(scalar::Op::kCopySign, y, x);
  res = b.select(b.lt(ax, k(1e-9)), b.mul(x, k(kHalfSqrtPi)), res);
  res = b.select(b.eq(ax, k(1.0)), b.binary(scalar::Op::kCopySign, k(sk::kInf), x), res);
  res = b.select(b.gt(ax, k(1.0)), k(sk::kNaN), res);
  res = b.select(b.is_nan(x), x, res);
  return {b.convert(res, in[0].type)};
}

// float32: the eager kernel's expansion (compiler/math_expand.h); otherwise `other`.
ScalarDef f32_expansion(sd::Value (*expand)(sd::Builder&, sd::Value), ScalarDef other) {
  ScalarDef d;
  d.rule = [expand, rule = std::move(other.rule)](sd::Builder& b, std::span<const sd::Value> in,
                                                  const Params& p) -> sd::Values {
    if (in[0].type == DType::kFloat32) return {expand(b, in[0])};
    return rule(b, in, p);
  };
  return d;
}

void set_scalar_defs() {
  using scalar::Fn;
  erf.scalar = f32_expansion(compiler::expand_erf_f32, sd::extern_f64(Fn::kErf));
  erfc.scalar = sd::extern_f64(Fn::kErfc);
  lgamma.scalar = sd::extern_f64(Fn::kLgamma);
  digamma.scalar = sd::extern_f64(Fn::kDigamma);
  polygamma.scalar = sd::extern_f64(Fn::kPolygamma);
  zeta.scalar = sd::extern_f64(Fn::kZeta);
  igamma.scalar = sd::extern_f64(Fn::kIgamma);
  igammac.scalar = sd::extern_f64(Fn::kIgammac);
  igamma_grad_a.scalar = sd::extern_f64(Fn::kIgammaGradA);
  ScalarDef halley;
  halley.rule = erf_inv_def;
  erf_inv.scalar = f32_expansion(compiler::expand_erf_inv_f32, std::move(halley));
  bessel_i0e.scalar = sd::extern_f64(Fn::kBesselI0e);
  bessel_i1e.scalar = sd::extern_f64(Fn::kBesselI1e);
  random_gamma_grad.scalar = sd::extern_f64(Fn::kRandomGammaGrad);
  regularized_incomplete_beta.scalar = sd::extern_f64(Fn::kBetainc);
}

}  // namespace

void register_special() {
  for (Primitive* p : {&erf, &erfc, &erf_inv, &lgamma, &digamma, &polygamma, &zeta, &igamma,
                       &igammac, &igamma_grad_a})
    p->kind = PrimitiveKind::kElementwise;
  set_scalar_defs();
  for (Primitive* p : {&bessel_i0e, &bessel_i1e, &random_gamma_grad, &regularized_incomplete_beta})
    p->kind = PrimitiveKind::kElementwise;
  for (Primitive* p : {&erf, &erfc, &erf_inv, &lgamma, &digamma, &bessel_i0e, &bessel_i1e})
    p->signature = Signature::fixed(1);
  for (Primitive* p : {&polygamma, &zeta, &igamma, &igammac, &igamma_grad_a, &random_gamma_grad})
    p->signature = Signature::fixed(2);
  regularized_incomplete_beta.signature = Signature::fixed(3);
  define_unary_kernel<elementwise::FloatFnKernel<erf_f32, erf_d>>(erf);
  define_unary<erfc_d>(erfc);
  define_unary_kernel<elementwise::FloatFnKernel<erf_inv_f32, sk::erf_inv>>(erf_inv);
  define_unary<sk::log_gamma>(lgamma);
  define_unary<sk::digamma>(digamma);
  define_binary<sk::polygamma>(polygamma);
  define_binary<sk::hurwitz_zeta>(zeta);
  define_binary<sk::igamma>(igamma);
  define_binary<sk::igammac>(igammac);
  define_binary<sk::igamma_grad_a>(igamma_grad_a);
  define_unary<sk::bessel_i0e>(bessel_i0e);
  define_unary<sk::bessel_i1e>(bessel_i1e);
  define_binary<sk::random_gamma_grad>(random_gamma_grad);
  regularized_incomplete_beta.abstract_eval = [](std::span<const Aval> in, const Params&) {
    return ternary_abstract("regularized_incomplete_beta", in);
  };
  regularized_incomplete_beta.impl = [](const ExecContext& ctx, std::span<const Array> args,
                                        const Params&, std::span<const Aval> out_avals) {
    return ternary_impl<sk::betainc>(ctx, "regularized_incomplete_beta", args, out_avals);
  };
  regularized_incomplete_beta.batch = batching::broadcasting_rule(regularized_incomplete_beta);
  register_primitive(regularized_incomplete_beta);
  set_jvp_rules();
}

}  // namespace tessera::prims
