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
#include "prims/broadcast_iter.h"
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

template <class T>
inline constexpr bool kIsFloat = kernels::is_half_v<T> || std::is_floating_point_v<T>;

double erf_d(double x) { return std::erf(x); }
double erfc_d(double x) { return std::erfc(x); }

// ---- kernels: every element in double, rounded once to the compute type C.

template <double (*F)(double)>
struct UnaryK {
  template <class C>
  void operator()(const C* x, C* y, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(F(static_cast<double>(x[i])));
  }
};

template <double (*F)(double, double)>
struct BinaryOp {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(F(static_cast<double>(a), static_cast<double>(b)));
  }
};

// ---- abstract eval and impl

std::vector<Aval> unary_abstract(const char* op, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 1);
  kernels::check_not_extended(op, in[0]);
  if (!is_floating(in[0].dtype)) {
    throw TypeError(op_message(op, "requires a floating dtype, got " + in[0].str() +
                                       "; convert with convert_element_type (tessera::numpy "
                                       "promotes integers for you)"));
  }
  return {in[0]};
}

std::vector<Aval> binary_abstract(const char* op, std::span<const Aval> in) {
  kernels::check_num_operands(op, in, 2);
  for (const Aval& a : in) kernels::check_not_extended(op, a);
  kernels::check_same_dtype(op, in, "convert with convert_element_type");
  if (!is_floating(in[0].dtype)) {
    throw TypeError(op_message(op, "requires floating operands, got " + kernels::avals_list(in) +
                                       "; convert with convert_element_type"));
  }
  Shape shape = kernels::broadcast_shapes(op, in);
  return {Aval{std::move(shape), in[0].dtype, in[0].weak_type && in[1].weak_type}};
}

[[noreturn]] void non_float_kernel(const char* op, DType d) {
  throw_internal("prims/special", std::string(op) + " reached a kernel for dtype " +
                                      std::string(dtype_name(d)) + " that abstract_eval rejects");
}

template <double (*F)(double)>
std::vector<Array> unary_impl(const char* op, std::span<const Array> args,
                              std::span<const Aval> out_avals) {
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op);
  const int64_t n = oa.size();
  if (n == 0) return {out};
  kernels::dispatch_dtype(oa.dtype, [&]<class T>() {
    if constexpr (kIsFloat<T>) {
      const T* x = static_cast<const T*>(args[0].raw_data(op));
      T* y = static_cast<T*>(out.buffer()->data());
      kernels::parallel_map(x, y, n, UnaryK<F>{});
    } else {
      non_float_kernel(op, oa.dtype);
    }
  });
  return {out};
}

template <double (*F)(double, double)>
std::vector<Array> binary_impl(const char* op, std::span<const Array> args,
                               std::span<const Aval> out_avals) {
  const Aval& oa = out_avals[0];
  Array out = empty_array(oa, op);
  const auto plan = kernels::make_plan<2>(oa.shape, {&args[0].shape(), &args[1].shape()});
  if (plan.size == 0) return {out};
  kernels::dispatch_dtype(oa.dtype, [&]<class T>() {
    if constexpr (kIsFloat<T>) {
      const T* a = static_cast<const T*>(args[0].raw_data(op));
      const T* b = static_cast<const T*>(args[1].raw_data(op));
      T* o = static_cast<T*>(out.buffer()->data());
      kernels::parallel_runs<2>(plan,
                                [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t len) {
                                  kernels::run2(a + off[0], plan.inner[0], b + off[1],
                                                plan.inner[1], o + oo, len, BinaryOp<F>{});
                                });
    } else {
      non_float_kernel(op, oa.dtype);
    }
  });
  return {out};
}

template <double (*F)(double)>
void define_unary(Primitive& p) {
  const char* name = p.name().c_str();
  p.abstract_eval = [name](std::span<const Aval> in, const Params&) {
    return unary_abstract(name, in);
  };
  p.impl = [name](std::span<const Array> args, const Params&, std::span<const Aval> out_avals) {
    return unary_impl<F>(name, args, out_avals);
  };
  p.batch = batching::vectorized_rule(p);
  register_primitive(p);
}

template <double (*F)(double, double)>
void define_binary(Primitive& p) {
  const char* name = p.name().c_str();
  p.abstract_eval = [name](std::span<const Aval> in, const Params&) {
    return binary_abstract(name, in);
  };
  p.impl = [name](std::span<const Array> args, const Params&, std::span<const Aval> out_avals) {
    return binary_impl<F>(name, args, out_avals);
  };
  p.batch = batching::broadcasting_rule(p);
  register_primitive(p);
}

// ---- JVP rules (JAX's; lax ops only, so they work under any trace)

using JvpOut = std::pair<std::vector<Array>, std::vector<Array>>;

Array c(double v, const Array& like) { return ad::scalar_const(v, like.dtype()); }

// A unary rule from the primal op and the tangent map (t, x, out) -> tangent.
template <class F, class D>
JvpRule unary_jvp(F f, D d) {
  return [f, d](std::span<const Array> p, std::span<const Array> t, const Params&) -> JvpOut {
    Array out = f(p[0]);
    if (!t[0].defined()) return {{out}, {Array()}};
    return {{out}, {d(t[0], p[0], out)}};
  };
}

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
  erf.jvp = unary_jvp([](const Array& x) { return lax::erf(x); },
                      [](const Array& t, const Array& x, const Array&) {
                        return lax::mul(c(kTwoOverSqrtPi, x), lax::mul(t, gauss(x)));
                      });
  erfc.jvp = unary_jvp([](const Array& x) { return lax::erfc(x); },
                       [](const Array& t, const Array& x, const Array&) {
                         return lax::mul(c(-kTwoOverSqrtPi, x), lax::mul(t, gauss(x)));
                       });
  // sqrt(pi)/2 exp(out^2) t
  erf_inv.jvp =
      unary_jvp([](const Array& x) { return lax::erf_inv(x); },
                [](const Array& t, const Array& x, const Array& o) {
                  return lax::mul(c(kHalfSqrtPi, x), lax::mul(t, lax::exp(lax::mul(o, o))));
                });
  lgamma.jvp = unary_jvp(
      [](const Array& x) { return lax::lgamma(x); },
      [](const Array& t, const Array& x, const Array&) { return lax::mul(t, lax::digamma(x)); });
  digamma.jvp = unary_jvp([](const Array& x) { return lax::digamma(x); },
                          [](const Array& t, const Array& x, const Array&) {
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
