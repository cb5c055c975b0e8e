// Special functions: erf, erfc, erf_inv, lgamma, digamma (unary); polygamma(m, x), zeta(x, q)
// (Hurwitz), igamma(a, x) (regularized lower P), igammac (upper Q), igamma_grad_a (dP/da)
// (binary, lax broadcasting, one floating dtype).
//
// Every dtype is computed in double by the scalar kernels of special_kernels.h and rounded once
// (16-bit floats through float32). Domains and special values follow XLA (digamma NaN at its
// poles, lgamma +inf there, erf_inv(+-1) = +-inf, igamma NaN for a <= 0, igammac 1 there).
//
// Derivatives are JAX's rules. Where JAX has none, a tangent raises: zeta in x and igamma_grad_a
// (TypeError, as a primitive without a rule). polygamma's m is an integer order: JAX raises for
// a tangent in m; here m's tangent is dropped (a zero contribution), so grad over both operands
// works and returns 0 for m.
#include <cmath>
#include <string>
#include <type_traits>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "prims/special_kernels.h"
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

namespace {

namespace sk = kernels::special;
using elementwise::Accept;
using elementwise::c;
using elementwise::unary_jvp;

constexpr const char* kLayer = "prims/special";

double erf_d(double x) { return std::erf(x); }
double erfc_d(double x) { return std::erfc(x); }

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

template <double (*F)(double)>
void define_unary(Primitive& p) {
  elementwise::define_unary<UnaryK<F>>(p, kLayer, Accept::kFloating);
  p.batch = batching::vectorized_rule(p);
  register_primitive(p);
}

template <double (*F)(double, double)>
void define_binary(Primitive& p) {
  elementwise::define_binary<elementwise::Runs<BinaryOp<F>>>(p, kLayer, Accept::kFloating,
                                                             "; convert with convert_element_type",
                                                             "convert with convert_element_type");
  p.batch = batching::broadcasting_rule(p);
  register_primitive(p);
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
  // igamma_grad_a has no rule (JAX has none): a tangent raises the trace's "differentiation
  // rule ... is not implemented" TypeError.
}

}  // namespace

void register_special() {
  for (Primitive* p : {&erf, &erfc, &erf_inv, &lgamma, &digamma})
    p->signature = Signature::fixed(1);
  for (Primitive* p : {&polygamma, &zeta, &igamma, &igammac, &igamma_grad_a})
    p->signature = Signature::fixed(2);
  define_unary<erf_d>(erf);
  define_unary<erfc_d>(erfc);
  define_unary<sk::erf_inv>(erf_inv);
  define_unary<sk::log_gamma>(lgamma);
  define_unary<sk::digamma>(digamma);
  define_binary<sk::polygamma>(polygamma);
  define_binary<sk::hurwitz_zeta>(zeta);
  define_binary<sk::igamma>(igamma);
  define_binary<sk::igammac>(igammac);
  define_binary<sk::igamma_grad_a>(igamma_grad_a);
  set_jvp_rules();
}

}  // namespace tessera::prims
