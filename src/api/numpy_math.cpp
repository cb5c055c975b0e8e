// tessera::numpy ufuncs, operators and where: jax.numpy's promotion (weak C++ scalars), then
// NumPy broadcasting through lax's rank rule, then the lax op.
#include <limits>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "prims/prims.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"

namespace tessera::numpy {

// ---------------------------------------------------------------- shared helpers

namespace detail {

void check_defined(const char* op, const Array& x) {
  if (!x.defined())
    throw ValueError(op_message(op,
                                "got an undefined Array (a default-constructed handle); "
                                "pass an array created by tessera::numpy or lax"));
}

std::string dtype_str(DType d) { return std::string(dtype_name(d)); }

// A concrete weak integer scalar (what C++ ints become) converted to an integer dtype must fit,
// as JAX raises OverflowError for Python ints out of the target's range.
void check_weak_int_fits(const char* op, const Array& x, DType to) {
  if (!x.weak_type() || !is_integer(x.dtype()) || !is_integer(to) || x.ndim() != 0 ||
      !x.is_concrete() || x.is_deleted())
    return;
  const void* p = x.raw_data(op);
  // Weak ints are int32 (int64 with x64): read them exactly.
  int64_t v = x.dtype() == DType::kInt64   ? *static_cast<const int64_t*>(p)
              : x.dtype() == DType::kInt32 ? *static_cast<const int32_t*>(p)
                                           : static_cast<int64_t>(load_as_double(x.dtype(), p));
  IInfo info = iinfo(to);
  bool fits = v >= info.min && (v < 0 || static_cast<uint64_t>(v) <= info.max);
  if (!fits)
    throw OverflowError(op_message(
        op, "Python int " + std::to_string(v) + " too large to convert to " + dtype_str(to) +
                "; use a value in [" + std::to_string(info.min) + ", " + std::to_string(info.max) +
                "] or convert the array to a wider dtype first"));
}

Array constant(double v, TypedDType t) {
  alignas(16) unsigned char buf[16] = {};
  store_from_double(t.dtype, buf, v);
  return array_from_host(Aval{{}, t.dtype, t.weak}, buf);
}

Array convert(const char* op, const Array& x, TypedDType to) {
  check_defined(op, x);
  if (x.dtype() == to.dtype && x.weak_type() == to.weak) return x;
  check_weak_int_fits(op, x, to.dtype);
  // lax.convert_element_type takes no weak flag; the primitive does (JAX's weak_type param).
  return bind1(prims::convert_element_type, {x},
               Params{{"new_dtype", to.dtype}, {"weak_type", to.weak}});
}

TypedDType typed_result(const std::vector<Array>& xs) {
  std::vector<TypedDType> t;
  t.reserve(xs.size());
  for (const Array& x : xs) t.push_back(x.aval().typed());
  return result_type(t.data(), t.size());
}

DType to_inexact(DType d) {
  if (is_floating(d) || is_extended(d)) return d;
  if (d == DType::kInt64 || d == DType::kUInt64) return canonicalize_dtype(DType::kFloat64);
  return DType::kFloat32;
}

DType to_numeric(DType d) { return d == DType::kBool ? default_int_dtype() : d; }

std::vector<Array> promote(const char* op, const std::vector<Array>& xs) {
  for (const Array& x : xs) check_defined(op, x);
  TypedDType to = typed_result(xs);
  std::vector<Array> out;
  out.reserve(xs.size());
  for (const Array& x : xs) out.push_back(convert(op, x, to));
  return out;
}

std::vector<Array> promote_inexact(const char* op, const std::vector<Array>& xs) {
  for (const Array& x : xs) check_defined(op, x);
  TypedDType to = typed_result(xs);
  to.dtype = to_inexact(to.dtype);
  std::vector<Array> out;
  out.reserve(xs.size());
  for (const Array& x : xs) out.push_back(convert(op, x, to));
  return out;
}

}  // namespace detail

using namespace detail;

namespace detail {

// Promote, align ranks, apply.
Array binary(const char* op, const Array& x, const Array& y, LaxBinary f) {
  check_defined(op, x);
  check_defined(op, y);
  // Fast path (the common eager case): one dtype and weak flag, one shape -> nothing to do.
  if (x.dtype() == y.dtype() && x.weak_type() == y.weak_type() && x.shape() == y.shape() &&
      canonicalize_dtype(x.dtype()) == x.dtype())
    return f(x, y);
  broadcast_shape(op, x.shape(), y.shape());  // shape errors before any conversion runs
  std::vector<Array> p = promote(op, {x, y});
  auto [a, b] = align_ranks(op, p[0], p[1]);
  return f(a, b);
}

Array binary_inexact(const char* op, const Array& x, const Array& y, LaxBinary f) {
  check_defined(op, x);
  check_defined(op, y);
  broadcast_shape(op, x.shape(), y.shape());
  std::vector<Array> p = promote_inexact(op, {x, y});
  auto [a, b] = align_ranks(op, p[0], p[1]);
  return f(a, b);
}

Array unary_inexact(const char* op, const Array& x, LaxUnary f) {
  return f(promote_inexact(op, {x})[0]);
}

}  // namespace detail

namespace {

// jnp's logical_or / logical_and on bools are lax.max / lax.min (max(a, b) == a | b on {0, 1}).
Array bool_or(const Array& a, const Array& b) { return lax::max(a, b); }
Array bool_and(const Array& a, const Array& b) { return lax::min(a, b); }

// Elementwise x ** n for integer x and n of one dtype, broadcast to `out`, by binary
// exponentiation over every bit of the dtype, so wrap-around matches repeated multiplication
// (jnp uses only the low 6 bits). Negative exponents give the real result truncated toward zero:
// 1 for x == 1, (-1)^n for x == -1, 0 otherwise (NumPy raises; a traced exponent cannot).
Array integer_power(Array x, Array n, const Shape& out) {
  const TypedDType t = x.aval().typed();
  x = broadcast_to_shape(x, out);
  n = broadcast_to_shape(n, out);
  Array zero = constant(0, t), one = constant(1, t), two = constant(2, t);
  const bool is_signed = is_signed_integer(t.dtype);
  Array e = is_signed ? lax::max(n, lax::neg(n)) : n;  // |n|
  Array acc = lax::add(lax::mul(x, zero), one);
  Array base = x;
  const int bits = static_cast<int>(itemsize(t.dtype) * 8) - (is_signed ? 1 : 0);
  for (int i = 0; i < bits; ++i) {
    Array half = lax::div(e, two);
    Array bit = lax::ne(lax::sub(e, lax::mul(half, two)), zero);
    acc = lax::select_n(bit, {acc, lax::mul(acc, base)});
    if (i + 1 < bits) base = lax::mul(base, base);
    e = half;
  }
  if (!is_signed) return acc;
  Array unit = lax::eq(lax::max(x, lax::neg(x)), one);  // |x| == 1
  Array truncated = lax::select_n(unit, {lax::mul(acc, zero), acc});
  return lax::select_n(lax::lt(n, zero), {acc, truncated});
}

}  // namespace

// ---------------------------------------------------------------- arithmetic

Array add(const ArrayLike& x, const ArrayLike& y) {
  const char* op = "add";
  check_defined(op, x.array());
  check_defined(op, y.array());
  // Only bool with bool promotes to bool (there are no weak bools).
  if (x.array().dtype() == DType::kBool && y.array().dtype() == DType::kBool)
    return binary(op, x, y, bool_or);
  return binary(op, x, y, lax::add);
}

Array subtract(const ArrayLike& x, const ArrayLike& y) {
  const char* op = "subtract";
  check_defined(op, x.array());
  check_defined(op, y.array());
  if (typed_result({x.array(), y.array()}).dtype == DType::kBool)
    throw TypeError(op_message(op,
                               "numpy boolean subtract, the `-` operator, is not supported; "
                               "use logical_xor, or convert the operands to an integer "
                               "dtype first"));
  return binary(op, x, y, lax::sub);
}

Array multiply(const ArrayLike& x, const ArrayLike& y) {
  const char* op = "multiply";
  check_defined(op, x.array());
  check_defined(op, y.array());
  if (x.array().dtype() == DType::kBool && y.array().dtype() == DType::kBool)
    return binary(op, x, y, bool_and);
  return binary(op, x, y, lax::mul);
}

Array divide(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("divide", x, y, lax::div);
}

Array true_divide(const ArrayLike& x, const ArrayLike& y) {
  return binary_inexact("true_divide", x, y, lax::div);
}

Array power(const ArrayLike& x, const ArrayLike& y) {
  const char* op = "power";
  const Array& xa = x.array();
  const Array& ya = y.array();
  check_defined(op, xa);
  check_defined(op, ya);
  broadcast_shape(op, xa.shape(), ya.shape());
  TypedDType to = typed_result({xa, ya});
  if (to.dtype == DType::kBool)
    throw TypeError(op_message(op,
                               "power is not defined for bool operands; convert them to an "
                               "integer or floating dtype first"));
  // A concrete C++ integer exponent: lax.integer_pow, as jnp.power does for Python ints.
  if (ya.ndim() == 0 && ya.weak_type() && is_integer(ya.dtype()) && ya.is_concrete() &&
      !ya.is_deleted()) {
    int64_t n = ya.item<int64_t>();
    if (n < 0 && !is_floating(to.dtype))
      throw TypeError(op_message(op,
                                 "integers cannot be raised to negative powers, got "
                                 "exponent " +
                                     std::to_string(n) + " for a " + dtype_str(to.dtype) +
                                     " base; convert the base to a floating dtype"));
    check_weak_int_fits(op, ya, to.dtype);
    return lax::integer_pow(convert(op, xa, to), n);
  }
  std::vector<Array> p = promote(op, {xa, ya});
  auto [a, b] = align_ranks(op, p[0], p[1]);
  if (is_floating(to.dtype)) return lax::pow(a, b);
  if (is_extended(to.dtype))
    throw TypeError(op_message(op, "power is not defined for " + dtype_str(to.dtype)));
  return integer_power(a, b, broadcast_shape(op, a.shape(), b.shape()));
}

Array maximum(const ArrayLike& x, const ArrayLike& y) { return binary("maximum", x, y, lax::max); }

Array minimum(const ArrayLike& x, const ArrayLike& y) { return binary("minimum", x, y, lax::min); }

Array negative(const ArrayLike& x) {
  const char* op = "negative";
  check_defined(op, x.array());
  if (x.array().dtype() == DType::kBool)
    throw TypeError(op_message(op,
                               "the numpy boolean negative, the `-` operator, is not "
                               "supported; use logical_not, or convert to an integer dtype "
                               "first"));
  return lax::neg(x.array());
}

Array positive(const ArrayLike& x) {
  check_defined("positive", x.array());
  return x.array();
}

Array exp(const ArrayLike& x) { return unary_inexact("exp", x, lax::exp); }
Array log(const ArrayLike& x) { return unary_inexact("log", x, lax::log); }
Array sin(const ArrayLike& x) { return unary_inexact("sin", x, lax::sin); }
Array cos(const ArrayLike& x) { return unary_inexact("cos", x, lax::cos); }
Array tanh(const ArrayLike& x) { return unary_inexact("tanh", x, lax::tanh); }
Array sqrt(const ArrayLike& x) { return unary_inexact("sqrt", x, lax::sqrt); }

Array square(const ArrayLike& x) {
  const char* op = "square";
  check_defined(op, x.array());
  TypedDType to = x.array().aval().typed();
  to.dtype = to_numeric(to.dtype);
  return lax::integer_pow(convert(op, x.array(), to), 2);
}

// ---------------------------------------------------------------- comparisons

Array equal(const ArrayLike& x, const ArrayLike& y) { return binary("equal", x, y, lax::eq); }
Array not_equal(const ArrayLike& x, const ArrayLike& y) {
  return binary("not_equal", x, y, lax::ne);
}
Array less(const ArrayLike& x, const ArrayLike& y) { return binary("less", x, y, lax::lt); }
Array less_equal(const ArrayLike& x, const ArrayLike& y) {
  return binary("less_equal", x, y, lax::le);
}
Array greater(const ArrayLike& x, const ArrayLike& y) { return binary("greater", x, y, lax::gt); }
Array greater_equal(const ArrayLike& x, const ArrayLike& y) {
  return binary("greater_equal", x, y, lax::ge);
}

// ---------------------------------------------------------------- where

Array where(const ArrayLike& condition, const ArrayLike& x, const ArrayLike& y) {
  const char* op = "where";
  Array c = condition.array();
  check_defined(op, c);
  check_defined(op, x.array());
  check_defined(op, y.array());
  Shape out =
      broadcast_shape(op, broadcast_shape(op, c.shape(), x.array().shape()), y.array().shape());
  if (c.dtype() != DType::kBool) {
    // jnp: condition != 0 (NaN counts as true).
    if (is_extended(c.dtype()))
      throw TypeError(op_message(
          op, "condition of dtype " + dtype_str(c.dtype()) + " cannot be converted to bool"));
    c = lax::ne(c, constant(0, c.aval().typed()));
  }
  std::vector<Array> p = promote(op, {x.array(), y.array()});
  // select_n needs cases of the output shape; the predicate may stay rank 0.
  Array a = broadcast_to_shape(p[0], out);
  Array b = broadcast_to_shape(p[1], out);
  if (c.ndim() != 0) c = broadcast_to_shape(c, out);
  return lax::select_n(c, {b, a});
}

// ---------------------------------------------------------------- operators

Array operator+(const ArrayLike& x, const ArrayLike& y) { return add(x, y); }
Array operator-(const ArrayLike& x, const ArrayLike& y) { return subtract(x, y); }
Array operator*(const ArrayLike& x, const ArrayLike& y) { return multiply(x, y); }
Array operator/(const ArrayLike& x, const ArrayLike& y) { return true_divide(x, y); }
Array operator-(const Array& x) { return negative(x); }
Array operator==(const ArrayLike& x, const ArrayLike& y) { return equal(x, y); }
Array operator!=(const ArrayLike& x, const ArrayLike& y) { return not_equal(x, y); }
Array operator<(const ArrayLike& x, const ArrayLike& y) { return less(x, y); }
Array operator<=(const ArrayLike& x, const ArrayLike& y) { return less_equal(x, y); }
Array operator>(const ArrayLike& x, const ArrayLike& y) { return greater(x, y); }
Array operator>=(const ArrayLike& x, const ArrayLike& y) { return greater_equal(x, y); }

}  // namespace tessera::numpy
