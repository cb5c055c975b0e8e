// jax.nn.initializers (tessera/nn_initializers.h): the compositions of jax/_src/nn/initializers.py
// over tessera::random and jnp arithmetic in the requested dtype, so the values, dtypes and
// errors are JAX's and every transformation sees ordinary primitives. The fans are computed in
// double in JAX's (Python's) order of operations, since they decide the rounding of `variance`.
#include "tessera/nn_initializers.h"

#include <cmath>
#include <string>
#include <utility>

#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/linalg_spectral.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"
#include "tessera/random.h"

namespace tessera::nn::initializers {

namespace {

namespace np = tessera::numpy;

// JAX's dtype argument: jnp.float_ (float64) by default, canonicalized at call time.
DType resolve(std::optional<DType> dtype) {
  return canonicalize_dtype(dtype.value_or(DType::kFloat64));
}

// The standard deviations of a standard normal truncated to (-2, 2) (JAX's constant).
constexpr double kTruncatedStddev = .87962566103423978;

// shape[axis] with Python's indexing (negative from the end); IndexError outside the shape.
int64_t dim_at(const char* what, const Shape& shape, int64_t axis) {
  const auto rank = static_cast<int64_t>(shape.size());
  if (axis < -rank || axis >= rank)
    throw IndexError(std::string("tuple index out of range: ") + what + " " + std::to_string(axis) +
                     " is not an axis of the weights shape " + shape_str(shape) + " (rank " +
                     std::to_string(rank) + "); pass axes in [-rank, rank)");
  return shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
}

// math.prod of the sizes of `axes` (1 for none).
int64_t size_of(const char* what, const Shape& shape, const Axes& axes) {
  int64_t n = 1;
  for (int64_t a : axes.axes) n *= dim_at(what, shape, a);
  return n;
}

// Python's x / y for the fan arithmetic: JAX raises ZeroDivisionError at a zero divisor.
double py_div(double x, double y, const Shape& shape) {
  if (y == 0.0)
    throw ValueError("division by zero in the fans of the weights shape " + shape_str(shape) +
                     ": variance-scaling initializers need nonzero in, out and batch sizes and a "
                     "nonzero fan (JAX raises ZeroDivisionError here)");
  return x / y;
}

// The arithmetic of variance_scaling's init, after JAX's: returns the scaled samples.
Array scaled_samples(const Array& key, const Shape& shape, DType d, double scale,
                     const std::string& mode, const std::string& distribution, const Axes& in_axis,
                     const Axes& out_axis, const Axes& batch_axis) {
  const auto [fan_in, fan_out] = compute_fans(shape, in_axis, out_axis, batch_axis);
  double denominator;
  if (mode == "fan_in") {
    denominator = fan_in;
  } else if (mode == "fan_out") {
    denominator = fan_out;
  } else if (mode == "fan_avg") {
    denominator = (fan_in + fan_out) / 2;
  } else if (mode == "fan_geo_avg") {
    denominator = std::pow(fan_in * fan_out, 0.5);  // Python's ** 0.5
  } else {
    throw ValueError("invalid mode for variance scaling initializer: " + mode +
                     " (expected \"fan_in\", \"fan_out\", \"fan_avg\" or \"fan_geo_avg\")");
  }
  // jnp.array(scale / denominator, dtype): rounded once to the dtype.
  const Array variance = np::scalar(py_div(scale, denominator, shape), d);
  if (distribution == "truncated_normal") {
    if (!is_floating(d))  // JAX's complex branch draws with random.uniform, which rejects d
      throw ValueError("dtype argument to `uniform` must be a float dtype, got " +
                       std::string(dtype_name(d)));
    const Array stddev = np::divide(np::sqrt(variance), np::scalar(kTruncatedStddev, d));
    return np::multiply(random::truncated_normal(key, -2, 2, shape, d), stddev);
  }
  if (distribution == "normal")
    return np::multiply(random::normal(key, shape, d), np::sqrt(variance));
  if (distribution == "uniform") {
    if (!is_floating(d))
      throw ValueError("dtype argument to `uniform` must be a float dtype, got " +
                       std::string(dtype_name(d)));
    return np::multiply(random::uniform(key, shape, d, -1), np::sqrt(np::multiply(3, variance)));
  }
  throw ValueError("invalid distribution for variance scaling initializer: " + distribution +
                   " (expected \"truncated_normal\", \"normal\" or \"uniform\")");
}

}  // namespace

Array Initializer::operator()(const Array& key, const Shape& shape,
                              std::optional<DType> dtype) const {
  if (!fn_)
    throw ValueError(
        "an empty nn::initializers::Initializer was called; build one with a factory such as "
        "glorot_uniform() or from a callable");
  return fn_(key, shape, resolve(dtype ? dtype : dtype_));
}

Array zeros(const Array&, const Shape& shape, std::optional<DType> dtype) {
  return np::zeros(shape, resolve(dtype));
}

Array ones(const Array&, const Shape& shape, std::optional<DType> dtype) {
  return np::ones(shape, resolve(dtype));
}

Initializer constant(const ArrayLike& value, std::optional<DType> dtype) {
  return Initializer(
      [value = value.array()](const Array&, const Shape& shape, DType d) {
        return np::broadcast_to(np::asarray(value, d), shape);
      },
      dtype);
}

Initializer uniform(const ArrayLike& scale, std::optional<DType> dtype) {
  return Initializer(
      [scale = scale.array()](const Array& key, const Shape& shape, DType d) {
        return np::multiply(random::uniform(key, shape, d), np::asarray(scale, d));
      },
      dtype);
}

Initializer normal(const ArrayLike& stddev, std::optional<DType> dtype) {
  return Initializer(
      [stddev = stddev.array()](const Array& key, const Shape& shape, DType d) {
        return np::multiply(random::normal(key, shape, d), np::asarray(stddev, d));
      },
      dtype);
}

Initializer truncated_normal(const ArrayLike& stddev, std::optional<DType> dtype,
                             const ArrayLike& lower, const ArrayLike& upper) {
  return Initializer(
      [stddev = stddev.array(), lower = lower.array(), upper = upper.array()](
          const Array& key, const Shape& shape, DType d) {
        return np::multiply(random::truncated_normal(key, lower, upper, shape, d),
                            np::asarray(stddev, d));
      },
      dtype);
}

std::pair<double, double> compute_fans(const Shape& shape, const Axes& in_axis,
                                       const Axes& out_axis, const Axes& batch_axis) {
  if (shape.size() <= 1)
    throw ValueError("Can't compute input and output sizes of a " + std::to_string(shape.size()) +
                     "-dimensional weights tensor. Must be at least 2D.");
  const auto in_size = static_cast<double>(size_of("in_axis", shape, in_axis));
  const auto out_size = static_cast<double>(size_of("out_axis", shape, out_axis));
  const auto batch_size = static_cast<double>(size_of("batch_axis", shape, batch_axis));
  const auto total = static_cast<double>(shape_size(shape));
  const double receptive =
      py_div(py_div(py_div(total, in_size, shape), out_size, shape), batch_size, shape);
  return {in_size * receptive, out_size * receptive};
}

Initializer variance_scaling(double scale, const std::string& mode, const std::string& distribution,
                             const Axes& in_axis, const Axes& out_axis, const Axes& batch_axis,
                             std::optional<DType> dtype) {
  return Initializer(
      [=](const Array& key, const Shape& shape, DType d) {
        return scaled_samples(key, shape, d, scale, mode, distribution, in_axis, out_axis,
                              batch_axis);
      },
      dtype);
}

#define TESSERA_VARIANCE_SCALING(NAME, SCALE, MODE, DISTRIBUTION)                             \
  Initializer NAME(const Axes& in_axis, const Axes& out_axis, const Axes& batch_axis,         \
                   std::optional<DType> dtype) {                                              \
    return variance_scaling(SCALE, MODE, DISTRIBUTION, in_axis, out_axis, batch_axis, dtype); \
  }
TESSERA_VARIANCE_SCALING(glorot_uniform, 1.0, "fan_avg", "uniform")
TESSERA_VARIANCE_SCALING(glorot_normal, 1.0, "fan_avg", "truncated_normal")
TESSERA_VARIANCE_SCALING(lecun_uniform, 1.0, "fan_in", "uniform")
TESSERA_VARIANCE_SCALING(lecun_normal, 1.0, "fan_in", "truncated_normal")
TESSERA_VARIANCE_SCALING(he_uniform, 2.0, "fan_in", "uniform")
TESSERA_VARIANCE_SCALING(he_normal, 2.0, "fan_in", "truncated_normal")
TESSERA_VARIANCE_SCALING(xavier_uniform, 1.0, "fan_avg", "uniform")
TESSERA_VARIANCE_SCALING(xavier_normal, 1.0, "fan_avg", "truncated_normal")
TESSERA_VARIANCE_SCALING(kaiming_uniform, 2.0, "fan_in", "uniform")
TESSERA_VARIANCE_SCALING(kaiming_normal, 2.0, "fan_in", "truncated_normal")
#undef TESSERA_VARIANCE_SCALING

Initializer orthogonal(const ArrayLike& scale, int64_t column_axis, std::optional<DType> dtype) {
  return Initializer(
      [scale = scale.array(), column_axis](const Array& key, const Shape& shape, DType d) {
        const int64_t rank = static_cast<int64_t>(shape.size());
        if (rank < 2)
          throw ValueError("orthogonal initializer requires at least a 2D shape, got " +
                           shape_str(shape) + ".");
        if (column_axis < -rank || column_axis >= rank)
          throw ValueError("orthogonal initializer: column_axis " + std::to_string(column_axis) +
                           " is out of bounds for a shape of rank " + std::to_string(rank) + ".");
        const int64_t ax = column_axis < 0 ? column_axis + rank : column_axis;
        const int64_t n_cols = shape[ax];
        const int64_t n_rows = n_cols == 0 ? 0 : shape_size(shape) / n_cols;
        const bool wide = n_rows < n_cols;
        Array a = random::normal(key, wide ? Shape{n_cols, n_rows} : Shape{n_rows, n_cols}, d);
        std::vector<Array> qr = tessera::linalg::qr(a, "reduced");
        Array q = lax::mul(
            qr[0], lax::reshape(lax::sign(np::diagonal(qr[1])), {1, std::min(n_rows, n_cols)}));
        if (wide) q = np::swapaxes(q, 0, 1);
        Shape s;
        for (int64_t i = 0; i < rank; ++i)
          if (i != ax) s.push_back(shape[i]);
        s.push_back(n_cols);
        q = np::moveaxis(np::reshape(q, s), -1, ax);
        return np::multiply(q, np::asarray(scale, d));
      },
      dtype);
}

}  // namespace tessera::nn::initializers
