// jax.nn's normalizing functions (tessera/nn.h): softmax (JAX's custom JVP), log_softmax (a
// stopped max), logsumexp (jax.scipy.special.logsumexp's custom JVP, stable for large and -inf
// inputs), standardize and one_hot — the compositions of jax/_src/nn/functions.py and
// jax/_src/ops/special.py, so that NaN/inf results and derivatives are JAX's.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/numpy_internal.h"
#include "tessera/custom_derivatives.h"
#include "tessera/lax.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"

namespace tessera::nn {

namespace tnp = tessera::numpy;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::optional<Array> opt_array(const char* op, const std::optional<ArrayLike>& a) {
  if (!a) return std::nullopt;
  tnp::detail::check_defined(op, a->array());
  return a->array();
}

// Reduction options over axes with keepdims and an optional mask.
tnp::ReduceOptions reduce_opts(const AxisArg& axis, bool keepdims, const Array* where,
                               std::optional<double> initial = std::nullopt) {
  tnp::ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  o.initial = initial;
  if (where) o.where = *where;
  return o;
}

// ---- softmax: custom_jvp over (x[, where]) with the axes static, as JAX's nondiff_argnums ----

Array softmax_primal(const Array& x, const AxisArg& axis, const Array* where) {
  const Array x_max = tnp::max(x, reduce_opts(axis, true, where, -kInf));
  const Array x_safe = where ? tnp::where(*where, x, -kInf) : x;
  const Array unnormalized = tnp::exp(x_safe - x_max);
  Array result = unnormalized / tnp::sum(unnormalized, reduce_opts(axis, true, where));
  if (where) result = tnp::where(*where, result, 0.0);
  return result;
}

Array softmax_custom(const std::vector<Array>& args, const AxisArg& axis);

// JAX's _softmax_jvp: y * (t - sum(y * t)) over the softmax axes (and the mask). The primal
// is the custom function itself, so higher derivatives use this rule too.
const Array* where_of(const std::vector<Array>& args) {
  return args.size() > 1 ? &args[1] : nullptr;
}

Array softmax_custom(const std::vector<Array>& args, const AxisArg& axis) {
  auto f = custom_jvp([axis](const std::vector<Array>& a) {
             return softmax_primal(a[0], axis, where_of(a));
           }).defjvp([axis](const auto& primals, const auto& tangents) {
    const std::vector<Array>& a = std::get<0>(primals);
    const Array& t = std::get<0>(tangents)[0];
    const Array y = softmax_custom(a, axis);
    const Array s = tnp::sum(y * t, reduce_opts(axis, true, where_of(a)));
    return std::make_pair(y, y * (t - s));
  });
  return f(args);
}

// ---- logsumexp: custom_jvp over (a[, b][, where]) with axes/keepdims/return_sign static ----

struct LseStatic {
  std::vector<int64_t> axes;  // normalized, sorted
  bool keepdims;
  bool return_sign;
  bool has_b;
  bool has_where;
};

struct LseArgs {
  Array a;
  std::optional<Array> b;
  const Array* where = nullptr;
  std::vector<int64_t> axes;
};

LseArgs unpack(const std::vector<Array>& v, const LseStatic& s) {
  LseArgs r{v[0], std::nullopt, nullptr, s.axes};
  size_t i = 1;
  if (s.has_b) r.b = v[i++];
  if (s.has_where) r.where = &v[i];
  return r;
}

// The pieces of jax/_src/ops/special.py's logsumexp, with the reduced axes kept: the finite
// max (0 where infinite or empty), stopped, is subtracted before exp.
struct LseParts {
  Array amax;     // stopped
  Array log_sum;  // log|sum(b exp(a - amax))|
  Array sign;     // sign of that sum
};

LseParts lse_parts(const LseArgs& in) {
  const AxisArg axis = in.axes;
  const Array a = in.b ? tnp::where(*in.b != 0, in.a, -kInf) : in.a;
  Array amax = tnp::max(a, reduce_opts(axis, true, in.where, -kInf));
  amax = lax::stop_gradient(tnp::where(tnp::isfinite(amax), amax, 0.0));
  Array exp_a = tnp::exp(a - amax);
  if (in.b) exp_a = exp_a * *in.b;
  const Array sumexp = tnp::sum(exp_a, reduce_opts(axis, true, in.where));
  return {amax, tnp::log(tnp::abs(sumexp)), tnp::sign(sumexp)};
}

// (out, sign) of logsumexp.
std::pair<Array, Array> lse_primal(const std::vector<Array>& v, const LseStatic& s) {
  const LseArgs in = unpack(v, s);
  const LseParts p = lse_parts(in);
  Array out = p.log_sum + p.amax;
  Array sign = p.sign;
  if (!s.keepdims) {
    out = lax::squeeze(out, s.axes);
    sign = lax::squeeze(sign, s.axes);
  }
  // A negative sum has no real log: NaN unless the sign is returned (as JAX).
  if (in.b && !s.return_sign) out = tnp::where(sign < 0, std::nan(""), out);
  return {out, sign};
}

std::pair<Array, Array> lse_custom(const std::vector<Array>& args, const LseStatic& st) {
  auto f = custom_jvp([st](const std::vector<Array>& v) {
             return lse_primal(v, st);
           }).defjvp([st](const auto& primals, const auto& tangents) {
    const std::vector<Array>& v = std::get<0>(primals);
    const std::vector<Array>& dv = std::get<0>(tangents);
    const LseArgs in = unpack(v, st);
    // The primal is the custom function itself (higher derivatives use this rule again).
    const auto [out, sign] = lse_custom(v, st);
    // JAX's rule: d out = sum((b a_dot + b_dot) exp(a - out)). exp(a - out) is computed as
    // exp((a - amax) - log|sum|): equal in exact arithmetic, but it does not lose the bits of
    // a rounded `out` at large magnitudes (1e4 in float32). Times the sign of the sum: out is
    // log|sum|, so a negative sum flips the derivative (JAX omits this factor; it is 1
    // wherever JAX's rule is right).
    const LseParts p = lse_parts(in);
    const Array e = tnp::exp((in.a - p.amax) - p.log_sum);
    const Array term = in.b ? (*in.b * dv[0] + dv[1]) * e : dv[0] * e;
    Array out_dot = tnp::sum(term, reduce_opts(AxisArg(st.axes), st.keepdims, in.where));
    if (in.b) out_dot = tnp::where(sign < 0, -out_dot, out_dot);
    return std::make_pair(std::make_pair(out, sign),
                          std::make_pair(out_dot, tnp::zeros_like(sign)));
  });
  return f(args);
}

std::pair<Array, Array> logsumexp_impl(const ArrayLike& a_in, const LogsumexpOptions& o,
                                       bool return_sign) {
  const char* op = "logsumexp";
  tnp::detail::check_defined(op, a_in.array());
  std::vector<Array> args;
  const std::optional<Array> b = opt_array(op, o.b);
  if (b) {
    args = tnp::detail::promote_inexact(op, {a_in.array(), *b});
  } else {
    args = tnp::detail::promote_inexact(op, {a_in.array()});
  }
  // The reduction runs over the broadcast shape of a and b (where(b != 0, a, -inf) in JAX).
  const Shape shape =
      b ? tnp::detail::broadcast_shape(op, args[0].shape(), args[1].shape()) : args[0].shape();
  const std::optional<Array> where = opt_array(op, o.where);
  if (where) args.push_back(*where);
  LseStatic st{tnp::detail::normalize_axes(op, o.axis.axes(), static_cast<int64_t>(shape.size())),
               o.keepdims, return_sign, b.has_value(), where.has_value()};
  return lse_custom(args, st);
}

}  // namespace

Array softmax(const ArrayLike& x, const AxisArg& axis, const std::optional<ArrayLike>& where) {
  const char* op = "softmax";
  const Array a = tnp::detail::promote_inexact(op, {x.array()})[0];
  std::vector<Array> args{a};
  if (const std::optional<Array> w = opt_array(op, where)) args.push_back(*w);
  return softmax_custom(args, axis);
}

Array log_softmax(const ArrayLike& x, const AxisArg& axis, const std::optional<ArrayLike>& where) {
  const char* op = "log_softmax";
  const Array a = tnp::detail::promote_inexact(op, {x.array()})[0];
  const std::optional<Array> w = opt_array(op, where);
  const Array* wp = w ? &*w : nullptr;
  const Array x_max = tnp::max(a, reduce_opts(axis, true, wp, -kInf));
  const Array x_safe = w ? tnp::where(*w, a, -kInf) : a;
  const Array shifted = x_safe - lax::stop_gradient(x_max);
  const Array shifted_lse = tnp::log(tnp::sum(tnp::exp(shifted), reduce_opts(axis, true, wp)));
  const Array result = shifted - shifted_lse;
  return w ? tnp::where(*w, result, -kInf) : result;
}

Array logsumexp(const ArrayLike& a, const LogsumexpOptions& o) {
  return logsumexp_impl(a, o, false).first;
}

std::pair<Array, Array> logsumexp_with_sign(const ArrayLike& a, const LogsumexpOptions& o) {
  return logsumexp_impl(a, o, true);
}

Array standardize(const ArrayLike& x, const AxisArg& axis, const std::optional<ArrayLike>& mean,
                  const std::optional<ArrayLike>& variance, const ArrayLike& epsilon,
                  const std::optional<ArrayLike>& where) {
  const char* op = "standardize";
  tnp::detail::check_defined(op, x.array());
  tnp::detail::check_defined(op, epsilon.array());
  const Array a = x.array();
  const std::optional<Array> w = opt_array(op, where);
  const Array* wp = w ? &*w : nullptr;
  const Array m = mean ? *opt_array(op, mean) : tnp::mean(a, reduce_opts(axis, true, wp));
  // JAX's mean(x^2) - mean^2 (not jnp.var's two passes): what normalization layers compute.
  const Array v = variance
                      ? *opt_array(op, variance)
                      : tnp::mean(tnp::square(a), reduce_opts(axis, true, wp)) - tnp::square(m);
  const Array denom = v + epsilon;
  if (!is_inexact(denom.dtype()))
    throw TypeError(op_message(op, "variance + epsilon must be floating, got dtype " +
                                       tnp::detail::dtype_str(denom.dtype()) +
                                       "; pass a floating variance or epsilon"));
  return tnp::subtract(a, m) * lax::rsqrt(denom);
}

Array one_hot(const ArrayLike& x, int64_t num_classes, std::optional<DType> dtype, int64_t axis) {
  const char* op = "one_hot";
  tnp::detail::check_defined(op, x.array());
  const Array a = x.array();
  if (is_bool(a.dtype()) || is_extended(a.dtype()))
    throw TypeError(op_message(op, "x must be an array of integer class labels, got dtype " +
                                       tnp::detail::dtype_str(a.dtype()) +
                                       "; convert it with astype(int32)"));
  if (num_classes < 0)
    throw ValueError(
        op_message(op, "num_classes must be non-negative, got " + std::to_string(num_classes)));
  const DType out = canonicalize_dtype(dtype.value_or(DType::kFloat64));
  // The new axis is counted in the result's rank (x.ndim + 1), as JAX's canonicalize_axis.
  const int64_t pos = tnp::detail::normalize_axes(op, std::vector<int64_t>{axis}, a.ndim() + 1)[0];
  const Array lhs = lax::expand_dims(a, {pos});
  Shape rhs_shape(static_cast<size_t>(a.ndim()), 1);
  rhs_shape.insert(rhs_shape.begin() + pos, num_classes);
  const Array rhs = lax::broadcasted_iota(a.dtype(), rhs_shape, pos);
  return tnp::astype(tnp::equal(lhs, rhs), out);
}

}  // namespace tessera::nn
