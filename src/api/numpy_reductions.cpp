// tessera::numpy reductions: jnp's generic reduction (axis/dtype/keepdims/initial/where) and the
// functions built on it — sum, prod, max, min, all, any, count_nonzero, ptp, mean — plus argmax
// and argmin. Dtype rules as jnp: sum/prod promote bool and narrow integers to the default
// int/uint, 16-bit floats accumulate in float32, results are strongly typed.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "api/numpy_reduce_util.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/numpy_reductions.h"

namespace tessera::numpy {

namespace detail {

void check_options(const char* op, const ReduceOptions& o, unsigned allowed) {
  auto reject = [&](const char* name) {
    throw TypeError(op_message(op, std::string("got an unexpected option '.") + name + "' (jnp." +
                                       op + " has no such keyword); leave it unset"));
  };
  if (o.dtype && !(allowed & kOptDType)) reject("dtype");
  if (o.initial && !(allowed & kOptInitial)) reject("initial");
  if (o.where && !(allowed & kOptWhere)) reject("where");
  if (o.ddof != 0 && !(allowed & kOptDdof)) reject("ddof");
}

void check_reducible(const char* op, const Array& x) {
  check_defined(op, x);
  if (is_extended(x.dtype()))
    throw TypeError(op_message(op, "cannot reduce an array of dtype " + dtype_str(x.dtype()) +
                                       "; convert it to a numeric dtype first"));
}

void check_dtype_option(const char* op, const std::optional<DType>& dtype) {
  if (dtype && is_extended(*dtype))
    throw TypeError(op_message(op, "dtype=" + dtype_str(*dtype) +
                                       " is not a numeric dtype; pass a bool, integer or "
                                       "floating dtype"));
}

Array where_mask(const char* op, const Array& where, const Shape& shape) {
  check_defined(op, where);
  if (is_extended(where.dtype()))
    throw TypeError(op_message(
        op, "where mask of dtype " + dtype_str(where.dtype()) + " cannot be converted to bool"));
  // NumPy's rule for `where`: the mask broadcasts to the input's shape (trailing alignment).
  const Shape& ws = where.shape();
  bool fits = ws.size() <= shape.size();
  for (size_t i = 0; fits && i < ws.size(); ++i) {
    const int64_t w = ws[ws.size() - 1 - i], s = shape[shape.size() - 1 - i];
    fits = w == s || w == 1;
  }
  if (!fits)
    throw ValueError(op_message(op, "where mask of shape " + shape_str(where.shape()) +
                                        " does not broadcast to the input's shape " +
                                        shape_str(shape) + "; pass a mask of that shape"));
  Array m =
      where.dtype() == DType::kBool ? where : lax::ne(where, constant(0, where.aval().typed()));
  return broadcast_to_shape(m, shape);
}

DType upcast_f16(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ? DType::kFloat32 : d;
}

DType promote_integer_dtype(DType d) {
  if (d == DType::kBool) return default_int_dtype();
  if (is_unsigned_integer(d) && itemsize(d) < itemsize(default_uint_dtype()))
    return default_uint_dtype();
  if (is_signed_integer(d) && itemsize(d) < itemsize(default_int_dtype()))
    return default_int_dtype();
  return d;
}

Array isnan_lax(const Array& x) { return lax::ne(x, x); }

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= shape[a];
  return n;
}

namespace {

const char* monoid_name(Monoid m) {
  switch (m) {
    case Monoid::kSum:
      return "sum";
    case Monoid::kProd:
      return "prod";
    case Monoid::kMax:
      return "max";
    case Monoid::kMin:
      return "min";
    case Monoid::kAnd:
      return "all";
    case Monoid::kOr:
      return "any";
  }
  return "?";
}

// jnp's _reduction_init_val: the monoid's identity in dtype d (bool: init > 0; +-inf saturates
// to the integer range, as JAX clamps on overflow).
Array identity(Monoid m, DType d) {
  double v = 0;
  switch (m) {
    case Monoid::kSum:
      v = 0;
      break;
    case Monoid::kProd:
      v = 1;
      break;
    case Monoid::kMax:
      v = -std::numeric_limits<double>::infinity();
      break;
    case Monoid::kMin:
      v = std::numeric_limits<double>::infinity();
      break;
    case Monoid::kAnd:
      v = 1;
      break;
    case Monoid::kOr:
      v = 0;
      break;
  }
  if (d == DType::kBool) v = v > 0 ? 1 : 0;
  return constant(v, TypedDType{d, false});
}

Array reduce_axes(Monoid m, const Array& a, const std::vector<int64_t>& axes) {
  switch (m) {
    case Monoid::kSum:
      return lax::reduce_sum(a, axes);
    case Monoid::kProd:
      return lax::reduce_prod(a, axes);
    case Monoid::kMax:
      return lax::reduce_max(a, axes);
    case Monoid::kMin:
      return lax::reduce_min(a, axes);
    case Monoid::kAnd:
      return lax::reduce_and(a, axes);
    case Monoid::kOr:
      return lax::reduce_or(a, axes);
  }
  return a;
}

Array combine(Monoid m, const Array& a, const Array& b) {
  switch (m) {
    case Monoid::kSum:
      return lax::add(a, b);
    case Monoid::kProd:
      return lax::mul(a, b);
    case Monoid::kMax:
      return lax::max(a, b);
    case Monoid::kMin:
      return lax::min(a, b);
    case Monoid::kAnd:
      return lax::bitwise_and(a, b);
    case Monoid::kOr:
      return lax::bitwise_or(a, b);
  }
  return a;
}

// The reduced array with size-1 dims put back at `axes` (sorted) when keepdims.
Array keep_dims(const Array& r, const Shape& in_shape, const std::vector<int64_t>& axes,
                bool keepdims) {
  if (!keepdims || axes.empty()) return r;
  Shape s = in_shape;
  for (int64_t a : axes) s[a] = 1;
  return lax::reshape(r, s);
}

}  // namespace

Array reduction(const char* op, const Array& x0, const ReduceOptions& o, const ReductionSpec& s) {
  check_reducible(op, x0);
  check_dtype_option(op, o.dtype);
  Array x = x0;
  if (s.pre == ReductionSpec::kNumeric && x.dtype() == DType::kBool)
    x = convert(op, x, default_int_dtype());
  if (s.pre == ReductionSpec::kBool) x = convert(op, x, DType::kBool);
  const std::vector<int64_t> axes = normalize_axes(op, o.axis.axes(), x.ndim());
  const char* name = monoid_name(s.monoid);
  if (!o.initial && !s.has_identity && o.where)
    throw ValueError(op_message(op, std::string("reduction operation ") + name +
                                        " does not have an identity, so to use a where mask "
                                        "one has to specify 'initial'"));
  if (!o.initial && !s.has_identity) {
    for (int64_t a : axes)
      if (x.shape()[a] == 0)
        throw ValueError(op_message(op, std::string("zero-size array to reduction operation ") +
                                            name + " which has no identity (axis " +
                                            std::to_string(a) + " of shape " +
                                            shape_str(x.shape()) +
                                            " is empty); pass .initial or reduce a non-empty "
                                            "array"));
  }
  DType result = o.dtype ? *o.dtype : x.dtype();
  if (!o.dtype && s.promote_integers) result = promote_integer_dtype(result);
  result = canonicalize_dtype(result);
  const DType comp = s.upcast_f16 && is_inexact(result) ? upcast_f16(result) : result;
  Monoid m = s.monoid;
  if (comp == DType::kBool && m == Monoid::kSum) m = Monoid::kOr;  // jnp's bool_op
  if (comp == DType::kBool && m == Monoid::kProd) m = Monoid::kAnd;
  Array a = convert(op, x, comp);
  if (o.where) {
    Array mask = where_mask(op, *o.where, a.shape());
    a = lax::select_n(mask, {broadcast_to_shape(identity(m, comp), a.shape()), a});
  }
  Array r = axes.empty() ? a : reduce_axes(m, a, axes);
  if (o.initial) {
    double init = *o.initial;
    if (comp == DType::kBool) init = init != 0 ? 1 : 0;
    r = combine(m, constant(init, TypedDType{comp, false}), r);
  }
  r = keep_dims(r, x.shape(), axes, o.keepdims);
  return convert(op, r, result);
}

}  // namespace detail

using namespace detail;

namespace {

ReduceOptions axis_options(int64_t axis, bool keepdims) {
  ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  return o;
}

ReductionSpec sum_spec() { return {Monoid::kSum, true, true, true, ReductionSpec::kNumeric}; }
ReductionSpec prod_spec() { return {Monoid::kProd, true, true, true, ReductionSpec::kNumeric}; }
ReductionSpec max_spec() { return {Monoid::kMax, false, false, false, ReductionSpec::kNone}; }
ReductionSpec min_spec() { return {Monoid::kMin, false, false, false, ReductionSpec::kNone}; }

Array arg_extremum(const char* op, const Array& x, std::optional<int64_t> axis, bool keepdims,
                   bool is_max) {
  check_reducible(op, x);
  Array a = x;
  int64_t ax = 0;
  if (axis) {
    ax = normalize_axes(op, std::vector<int64_t>{*axis}, x.ndim())[0];
  } else {
    a = lax::reshape(x, Shape{x.size()});
  }
  if (a.shape()[ax] == 0)
    throw ValueError(op_message(op, std::string("attempt to get ") + op +
                                        " of an empty sequence (input shape " +
                                        shape_str(x.shape()) + ")"));
  Array r =
      is_max ? lax::argmax(a, ax, default_int_dtype()) : lax::argmin(a, ax, default_int_dtype());
  if (!keepdims) return r;
  Shape s = x.shape();
  if (axis) {
    s[ax] = 1;
  } else {
    for (auto& d : s) d = 1;
  }
  return lax::reshape(r, s);
}

}  // namespace

// ---------------------------------------------------------------- sum, prod, max, min

Array sum(const Array& x, const ReduceOptions& o) {
  check_options("sum", o, kOptDType | kOptInitial | kOptWhere);
  return reduction("sum", x, o, sum_spec());
}
Array sum(const Array& x, Axes axis, bool keepdims, std::optional<DType> dtype) {
  ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  o.dtype = dtype;
  return sum(x, o);
}
Array sum(const Array& x, int64_t axis, bool keepdims) {
  return sum(x, axis_options(axis, keepdims));
}

Array prod(const Array& x, const ReduceOptions& o) {
  check_options("prod", o, kOptDType | kOptInitial | kOptWhere);
  return reduction("prod", x, o, prod_spec());
}
Array prod(const Array& x, int64_t axis, bool keepdims) {
  return prod(x, axis_options(axis, keepdims));
}

Array max(const Array& x, const ReduceOptions& o) {
  check_options("max", o, kOptInitial | kOptWhere);
  return reduction("max", x, o, max_spec());
}
Array max(const Array& x, Axes axis, bool keepdims) {
  ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  return max(x, o);
}
Array max(const Array& x, int64_t axis, bool keepdims) {
  return max(x, axis_options(axis, keepdims));
}

Array min(const Array& x, const ReduceOptions& o) {
  check_options("min", o, kOptInitial | kOptWhere);
  return reduction("min", x, o, min_spec());
}
Array min(const Array& x, int64_t axis, bool keepdims) {
  return min(x, axis_options(axis, keepdims));
}

Array amax(const Array& x, const ReduceOptions& o) { return max(x, o); }
Array amax(const Array& x, int64_t axis, bool keepdims) { return max(x, axis, keepdims); }
Array amin(const Array& x, const ReduceOptions& o) { return min(x, o); }
Array amin(const Array& x, int64_t axis, bool keepdims) { return min(x, axis, keepdims); }

Array ptp(const Array& x, const ReduceOptions& o) {
  const char* op = "ptp";
  check_options(op, o, 0);
  check_reducible(op, x);
  if (x.dtype() == DType::kBool)
    throw TypeError(op_message(op,
                               "ptp subtracts the minimum from the maximum, which is not "
                               "defined for bool; convert to an integer dtype first"));
  return lax::sub(max(x, o), min(x, o));
}
Array ptp(const Array& x, int64_t axis, bool keepdims) {
  return ptp(x, axis_options(axis, keepdims));
}

// ---------------------------------------------------------------- all, any, count_nonzero

Array all(const Array& x, const ReduceOptions& o) {
  check_options("all", o, kOptWhere);
  return reduction("all", x, o, {Monoid::kAnd, true, false, false, ReductionSpec::kBool});
}
Array all(const Array& x, int64_t axis, bool keepdims) {
  return all(x, axis_options(axis, keepdims));
}

Array any(const Array& x, const ReduceOptions& o) {
  check_options("any", o, kOptWhere);
  return reduction("any", x, o, {Monoid::kOr, true, false, false, ReductionSpec::kBool});
}
Array any(const Array& x, int64_t axis, bool keepdims) {
  return any(x, axis_options(axis, keepdims));
}

Array count_nonzero(const Array& x, const ReduceOptions& o) {
  const char* op = "count_nonzero";
  check_options(op, o, 0);
  check_reducible(op, x);
  ReduceOptions s = o;
  s.dtype = default_int_dtype();
  return reduction(op, lax::ne(x, constant(0, x.aval().typed())), s, sum_spec());
}
Array count_nonzero(const Array& x, int64_t axis, bool keepdims) {
  return count_nonzero(x, axis_options(axis, keepdims));
}

// ---------------------------------------------------------------- mean

Array mean(const Array& x, const ReduceOptions& o) {
  const char* op = "mean";
  check_options(op, o, kOptDType | kOptWhere);
  check_reducible(op, x);
  check_dtype_option(op, o.dtype);
  const DType result = canonicalize_dtype(o.dtype ? *o.dtype : to_inexact(x.dtype()));
  const DType comp = is_inexact(result) ? upcast_f16(result) : result;
  const std::vector<int64_t> axes = normalize_axes(op, o.axis.axes(), x.ndim());
  ReduceOptions so = o;
  so.dtype = comp;
  Array normalizer;
  if (o.where) {
    ReduceOptions no;
    no.axis = o.axis;
    no.dtype = comp;
    no.keepdims = o.keepdims;
    normalizer = reduction(op, where_mask(op, *o.where, x.shape()), no, sum_spec());
  } else {
    normalizer =
        constant(static_cast<double>(reduced_count(x.shape(), axes)), TypedDType{comp, false});
  }
  Array s = reduction(op, x, so, sum_spec());
  return convert(op, lax::div(s, normalizer), result);
}
Array mean(const Array& x, Axes axis, bool keepdims, std::optional<DType> dtype) {
  ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  o.dtype = dtype;
  return mean(x, o);
}
Array mean(const Array& x, int64_t axis, bool keepdims) {
  return mean(x, axis_options(axis, keepdims));
}

// ---------------------------------------------------------------- argmax, argmin

Array argmax(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_extremum("argmax", x, axis, keepdims, true);
}
Array argmin(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_extremum("argmin", x, axis, keepdims, false);
}

}  // namespace tessera::numpy
