// jax.nn's elementwise activations (tessera/nn.h), each the composition jax/_src/nn/functions.py
// uses, so dtypes, NaN/inf results and derivatives follow JAX's. relu and relu6 carry JAX's
// custom JVPs (the gradient is 0 at the kinks); the others are plain autodiff of their ops.
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "api/numpy_internal.h"
#include "tessera/custom_derivatives.h"
#include "tessera/lax.h"
#include "tessera/nn.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"

namespace tessera::nn {

namespace tnp = tessera::numpy;

namespace {

// jnp's promote_args_inexact for one argument: integers and bool become the default float.
Array inexact(const char* op, const ArrayLike& x) {
  return tnp::detail::promote_inexact(op, {x.array()})[0];
}

Array defined(const char* op, const ArrayLike& x) {
  tnp::detail::check_defined(op, x.array());
  return x.array();
}

Array relu_primal(const Array& x) { return tnp::maximum(x, 0); }
Array relu6_primal(const Array& x) { return tnp::minimum(tnp::maximum(x, 0), 6.0); }

// The custom functions. As JAX's defjvps, each rule's primal output is the custom function
// itself, so higher derivatives use the rule again (relu'' is 0 at the kink too).
Array relu_custom(const Array& x);
Array relu6_custom(const Array& x);

// JAX: relu.defjvps(lambda g, ans, x: select(x > 0, g, 0)) — 0 at the kink (and at NaN).
Array relu_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& v) {
                          return relu_primal(v);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& v = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    return std::make_pair(relu_custom(v), tnp::where(v > 0, t, 0.0));
  });
  return f(x);
}

// JAX: relu6.defjvps(lambda g, ans, x: select((x > 0) & (x < 6), g, 0)).
Array relu6_custom(const Array& x) {
  static const auto f = custom_jvp([](const Array& v) {
                          return relu6_primal(v);
                        }).defjvp([](const auto& primals, const auto& tangents) {
    const Array& v = std::get<0>(primals);
    const Array& t = std::get<0>(tangents);
    return std::make_pair(relu6_custom(v), tnp::where((v > 0) & (v < 6), t, 0.0));
  });
  return f(x);
}

}  // namespace

Array relu(const ArrayLike& x) {
  const Array a = defined("relu", x);
  // Integers are not differentiable: no rule to attach (their tangents are float0).
  return is_floating(a.dtype()) ? relu_custom(a) : relu_primal(a);
}

Array relu6(const ArrayLike& x) {
  const Array a = defined("relu6", x);
  return is_floating(a.dtype()) ? relu6_custom(a) : relu6_primal(a);
}

Array gelu(const ArrayLike& x, bool approximate) {
  const Array a = inexact("gelu", x);
  if (approximate) {
    const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
    const Array cdf =
        0.5 * (1.0 + tnp::tanh(sqrt_2_over_pi * (a + 0.044715 * lax::integer_pow(a, 3))));
    return a * cdf;
  }
  const double sqrt_half = std::sqrt(0.5);
  return 0.5 * a * lax::erfc(-a * sqrt_half);
}

Array sigmoid(const ArrayLike& x) { return lax::logistic(inexact("sigmoid", x)); }

Array silu(const ArrayLike& x) {
  const Array a = inexact("silu", x);
  return a * lax::logistic(a);
}
Array swish(const ArrayLike& x) { return silu(x); }

Array softplus(const ArrayLike& x) { return tnp::logaddexp(defined("softplus", x), 0); }

Array log_sigmoid(const ArrayLike& x) { return -softplus(-inexact("log_sigmoid", x)); }

Array soft_sign(const ArrayLike& x) {
  const Array a = defined("soft_sign", x);
  return a / (tnp::abs(a) + 1);
}

Array elu(const ArrayLike& x, const ArrayLike& alpha) {
  const Array a = defined("elu", x);
  const Array pos = a > 0;
  // The inner where keeps expm1 finite on the branch that is not taken (and its gradient 0).
  return tnp::where(pos, a, alpha * tnp::expm1(tnp::where(pos, 0.0, a)));
}

Array celu(const ArrayLike& x, const ArrayLike& alpha) {
  const Array a = defined("celu", x);
  return tnp::maximum(a, 0.0) + alpha * tnp::expm1(tnp::minimum(a, 0.0) / alpha);
}

Array selu(const ArrayLike& x) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return kScale * elu(defined("selu", x), kAlpha);
}

Array leaky_relu(const ArrayLike& x, const ArrayLike& negative_slope) {
  const Array a = defined("leaky_relu", x);
  return tnp::where(a >= 0, a, negative_slope * a);
}

Array hard_tanh(const ArrayLike& x) {
  const Array a = defined("hard_tanh", x);
  return tnp::where(a > 1, 1, tnp::where(a < -1, -1, a));
}

Array hard_sigmoid(const ArrayLike& x) { return relu6(defined("hard_sigmoid", x) + 3.0) / 6.0; }

Array hard_silu(const ArrayLike& x) {
  const Array a = defined("hard_silu", x);
  return a * hard_sigmoid(a);
}
Array hard_swish(const ArrayLike& x) { return hard_silu(x); }

Array squareplus(const ArrayLike& x, const ArrayLike& b) {
  const Array a = defined("squareplus", x);
  tnp::detail::check_defined("squareplus", b.array());
  return (a + tnp::sqrt(tnp::square(a) + b)) / 2;
}

Array mish(const ArrayLike& x) {
  const Array a = defined("mish", x);
  return a * tnp::tanh(softplus(a));
}

Array sparse_plus(const ArrayLike& x) {
  const Array a = defined("sparse_plus", x);
  return tnp::where(a <= -1.0, 0.0, tnp::where(a >= 1.0, a, tnp::square(a + 1.0) / 4));
}

Array sparse_sigmoid(const ArrayLike& x) {
  return 0.5 * tnp::clip(defined("sparse_sigmoid", x) + 1.0, 0.0, 2.0);
}

Array tanh(const ArrayLike& x) { return tnp::tanh(defined("tanh", x)); }

Array identity(const ArrayLike& x) { return defined("identity", x); }

Array glu(const ArrayLike& x, int64_t axis) {
  const Array a = defined("glu", x);
  if (a.ndim() == 0)
    throw ValueError(op_message("glu", "x must have at least one dimension, got a rank-0 array"));
  const int64_t ax = tnp::detail::normalize_axes("glu", std::vector<int64_t>{axis}, a.ndim())[0];
  const int64_t size = a.dim(ax);
  if (size % 2 != 0)
    throw ValueError(op_message(
        "glu", "axis size must be divisible by 2, but axis " + std::to_string(axis) + " of shape " +
                   shape_str(a.shape()) + " has size " + std::to_string(size) +
                   "; pad or slice x to an even length along that axis"));
  const std::vector<Array> halves = tnp::split(a, 2, ax);
  return halves[0] * sigmoid(halves[1]);
}

}  // namespace tessera::nn
