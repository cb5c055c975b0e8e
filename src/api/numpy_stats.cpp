// tessera::numpy statistics and comparisons: var/std, the nan* reductions, nanargmax/nanargmin,
// isclose/allclose/array_equal/array_equiv, nan_to_num, clip and linalg::norm. Each restates
// jax.numpy's composition (jax/_src/numpy/reductions.py, lax_numpy.py, linalg.py) over lax, so
// dtypes, NaN handling and gradients follow JAX's.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/numpy_internal.h"
#include "api/numpy_reduce_util.h"
#include "tessera/lax.h"
#include "tessera/linalg_spectral.h"
#include "tessera/numpy.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"

namespace tessera::numpy {

using namespace detail;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

ReduceOptions axis_options(int64_t axis, bool keepdims) {
  ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  return o;
}

Array full_like_shape(double v, TypedDType t, const Shape& shape) {
  return broadcast_to_shape(constant(v, t), shape);
}

// lax.select_n(c, [y, x]) with x and y of one (dtype, weak) and c of their shape (rank 0 c ok).
Array select(const Array& c, const Array& x, const Array& y) { return lax::select_n(c, {y, x}); }

// jnp's _var_promote_types: (computation dtype, result dtype).
std::pair<DType, DType> var_promote_types(const char* op, DType a, std::optional<DType> dtype) {
  check_dtype_option(op, dtype);
  DType comp, result;
  if (dtype) {
    comp = result = canonicalize_dtype(*dtype);
  } else if (!is_inexact(a)) {
    comp = result = canonicalize_dtype(to_inexact(a));
  } else {
    comp = result = a;
  }
  return {upcast_f16(comp), result};
}

// A ReduceOptions with the same axis/keepdims and the given dtype/where.
ReduceOptions sub_options(const ReduceOptions& o, std::optional<DType> dtype, bool keepdims) {
  ReduceOptions s;
  s.axis = o.axis;
  s.dtype = dtype;
  s.keepdims = keepdims;
  s.where = o.where;
  return s;
}

Array isinf_lax(const Array& x) { return lax::eq(lax::abs(x), constant(kInf, x.aval().typed())); }

Array bool_and(const Array& a, const Array& b) { return lax::bitwise_and(a, b); }
Array bool_or(const Array& a, const Array& b) { return lax::bitwise_or(a, b); }
Array bool_not(const Array& a) { return lax::bitwise_not(a); }

}  // namespace

// ---------------------------------------------------------------- var, std

Array var(const Array& x, const ReduceOptions& o) {
  const char* op = "var";
  check_options(op, o, kOptDType | kOptWhere | kOptDdof);
  check_reducible(op, x);
  auto [comp, dtype] = var_promote_types(op, x.dtype(), o.dtype);
  Array a = convert(op, x, comp);
  const std::vector<int64_t> axes = normalize_axes(op, o.axis.axes(), x.ndim());
  Array a_mean = mean(a, sub_options(o, comp, true));
  Array centered = lax::square(lax::sub(a, a_mean));
  Array normalizer;
  if (o.where) {
    ReduceOptions no;
    no.axis = o.axis;
    no.dtype = comp;
    no.keepdims = o.keepdims;
    normalizer = sum(where_mask(op, *o.where, a.shape()), no);
  } else {
    normalizer =
        constant(static_cast<double>(reduced_count(x.shape(), axes)), TypedDType{comp, false});
  }
  normalizer = lax::sub(normalizer, constant(o.ddof, TypedDType{comp, false}));
  Array result = sum(centered, sub_options(o, comp, o.keepdims));
  result = convert(op, lax::div(result, normalizer), dtype);
  Array positive = lax::gt(normalizer, constant(0, TypedDType{comp, false}));
  return where(positive, result, kNaN);
}
Array var(const Array& x, int64_t axis, bool keepdims) {
  return var(x, axis_options(axis, keepdims));
}

Array std(const Array& x, const ReduceOptions& o) {
  const char* op = "std";
  check_options(op, o, kOptDType | kOptWhere | kOptDdof);
  if (o.dtype && !is_inexact(*o.dtype))
    throw ValueError(
        op_message(op, "dtype argument to jnp.std must be inexact; got " + dtype_str(*o.dtype)));
  return lax::sqrt(var(x, o));
}
Array std(const Array& x, int64_t axis, bool keepdims) {
  return std(x, axis_options(axis, keepdims));
}

// ---------------------------------------------------------------- nan reductions

namespace {

// jnp's _nan_reduction: NaNs replaced by init_val, then the reduction; NaN where every element
// was NaN when nan_if_all_nan.
Array nan_reduction(const char* op, const Array& x, const ReduceOptions& o,
                    Array (*reduce)(const Array&, const ReduceOptions&), double init_val,
                    bool nan_if_all_nan) {
  check_reducible(op, x);
  if (!is_inexact(x.dtype())) return reduce(x, o);
  Array nan = isnan_lax(x);
  Array filled = select(nan, full_like_shape(init_val, x.aval().typed(), x.shape()), x);
  Array out = reduce(filled, o);
  if (!nan_if_all_nan) return out;
  ReduceOptions ao;
  ao.axis = o.axis;
  ao.keepdims = o.keepdims;
  return where(all(nan, ao), constant(kNaN, x.aval().typed()), out);
}

}  // namespace

Array nansum(const Array& x, const ReduceOptions& o) {
  check_options("nansum", o, kOptDType | kOptInitial | kOptWhere);
  return nan_reduction("nansum", x, o, sum, 0, false);
}
Array nansum(const Array& x, int64_t axis, bool keepdims) {
  return nansum(x, axis_options(axis, keepdims));
}

Array nanprod(const Array& x, const ReduceOptions& o) {
  check_options("nanprod", o, kOptDType | kOptInitial | kOptWhere);
  return nan_reduction("nanprod", x, o, prod, 1, false);
}
Array nanprod(const Array& x, int64_t axis, bool keepdims) {
  return nanprod(x, axis_options(axis, keepdims));
}

Array nanmax(const Array& x, const ReduceOptions& o) {
  check_options("nanmax", o, kOptInitial | kOptWhere);
  return nan_reduction("nanmax", x, o, max, -kInf, !o.initial);
}
Array nanmax(const Array& x, int64_t axis, bool keepdims) {
  return nanmax(x, axis_options(axis, keepdims));
}

Array nanmin(const Array& x, const ReduceOptions& o) {
  check_options("nanmin", o, kOptInitial | kOptWhere);
  return nan_reduction("nanmin", x, o, min, kInf, !o.initial);
}
Array nanmin(const Array& x, int64_t axis, bool keepdims) {
  return nanmin(x, axis_options(axis, keepdims));
}

Array nanmean(const Array& x, const ReduceOptions& o) {
  const char* op = "nanmean";
  check_options(op, o, kOptDType | kOptWhere);
  check_reducible(op, x);
  if (!is_inexact(x.dtype())) return mean(x, o);
  check_dtype_option(op, o.dtype);
  const DType dtype = canonicalize_dtype(o.dtype ? *o.dtype : x.dtype());
  Array not_nan = lax::eq(x, x);  // ~isnan(x)
  ReduceOptions so = sub_options(o, dtype, o.keepdims);
  Array normalizer = sum(not_nan, so);
  return lax::div(nansum(x, so), normalizer);
}
Array nanmean(const Array& x, int64_t axis, bool keepdims) {
  return nanmean(x, axis_options(axis, keepdims));
}

Array nanvar(const Array& x, const ReduceOptions& o) {
  const char* op = "nanvar";
  check_options(op, o, kOptDType | kOptWhere | kOptDdof);
  check_reducible(op, x);
  auto [comp, dtype] = var_promote_types(op, x.dtype(), o.dtype);
  Array a = convert(op, x, comp);
  const TypedDType ct{comp, false};
  Array a_mean = nanmean(a, sub_options(o, comp, true));
  Array nan = isnan_lax(a);
  // The double-where: NaN entries contribute 0 and no NaN gradient.
  Array centered = select(nan, full_like_shape(0, ct, a.shape()), lax::sub(a, a_mean));
  centered = lax::square(centered);
  Array normalizer = sum(bool_not(nan), sub_options(o, std::nullopt, o.keepdims));
  // normalizer - ddof with JAX's promotion: an integral ddof keeps the int count.
  if (o.ddof == std::floor(o.ddof)) {
    normalizer = subtract(normalizer, static_cast<int64_t>(o.ddof));
  } else {
    normalizer = subtract(normalizer, o.ddof);
  }
  Array empty = lax::le(normalizer, constant(0, normalizer.aval().typed()));
  Array result = sum(centered, sub_options(o, std::nullopt, o.keepdims));
  result = where(empty, kNaN, result);
  Array divisor = where(empty, 1, normalizer);
  result = lax::div(result, convert(op, divisor, result.aval().typed()));
  return convert(op, result, dtype);
}
Array nanvar(const Array& x, int64_t axis, bool keepdims) {
  return nanvar(x, axis_options(axis, keepdims));
}

Array nanstd(const Array& x, const ReduceOptions& o) {
  check_options("nanstd", o, kOptDType | kOptWhere | kOptDdof);
  return lax::sqrt(nanvar(x, o));
}
Array nanstd(const Array& x, int64_t axis, bool keepdims) {
  return nanstd(x, axis_options(axis, keepdims));
}

namespace {

Array nan_arg_extremum(const char* op, const Array& x, std::optional<int64_t> axis, bool keepdims,
                       bool is_max) {
  check_reducible(op, x);
  if (!is_inexact(x.dtype())) return is_max ? argmax(x, axis, keepdims) : argmin(x, axis, keepdims);
  Array nan = isnan_lax(x);
  Array a = select(nan, full_like_shape(is_max ? -kInf : kInf, x.aval().typed(), x.shape()), x);
  Array res = is_max ? argmax(a, axis, keepdims) : argmin(a, axis, keepdims);
  ReduceOptions ao;
  if (axis) ao.axis = *axis;
  ao.keepdims = keepdims;
  return where(all(nan, ao), -1, res);
}

}  // namespace

Array nanargmax(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return nan_arg_extremum("nanargmax", x, axis, keepdims, true);
}
Array nanargmin(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return nan_arg_extremum("nanargmin", x, axis, keepdims, false);
}

// ---------------------------------------------------------------- comparisons

Array isclose(const ArrayLike& a0, const ArrayLike& b0, double rtol, double atol, bool equal_nan) {
  const char* op = "isclose";
  check_defined(op, a0.array());
  check_defined(op, b0.array());
  broadcast_shape(op, a0.array().shape(), b0.array().shape());
  std::vector<Array> p = promote(op, {a0.array(), b0.array()});
  if (is_extended(p[0].dtype())) {
    auto [x, y] = align_ranks(op, p[0], p[1]);
    return lax::eq(x, y);
  }
  p = promote_inexact(op, {a0.array(), b0.array()});
  const TypedDType t = p[0].aval().typed();
  auto [a, b] = align_ranks(op, p[0], p[1]);  // lax's rule broadcasts the rest
  Array out = lax::le(lax::abs(lax::sub(a, b)),
                      lax::add(constant(atol, t), lax::mul(constant(rtol, t), lax::abs(b))));
  Array a_inf = isinf_lax(a), b_inf = isinf_lax(b);
  out = bool_and(out, bool_not(bool_or(a_inf, b_inf)));
  out = bool_or(out, bool_and(bool_and(a_inf, b_inf), lax::eq(a, b)));
  Array a_nan = isnan_lax(a), b_nan = isnan_lax(b);
  out = bool_and(out, bool_not(bool_or(a_nan, b_nan)));
  if (equal_nan) out = bool_or(out, bool_and(a_nan, b_nan));
  return out;
}

Array allclose(const ArrayLike& a, const ArrayLike& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan));
}

Array array_equal(const ArrayLike& a, const ArrayLike& b, bool equal_nan) {
  const char* op = "array_equal";
  check_defined(op, a.array());
  check_defined(op, b.array());
  if (a.array().shape() != b.array().shape()) return scalar(0, DType::kBool);
  Array eq = equal(a, b);
  if (equal_nan) {
    std::vector<Array> p = promote(op, {a.array(), b.array()});
    eq = bool_or(eq, bool_and(isnan_lax(p[0]), isnan_lax(p[1])));
  }
  return all(eq);
}

Array array_equiv(const ArrayLike& a, const ArrayLike& b) {
  const char* op = "array_equiv";
  check_defined(op, a.array());
  check_defined(op, b.array());
  try {
    broadcast_shape(op, a.array().shape(), b.array().shape());
  } catch (const ValueError&) {
    return scalar(0, DType::kBool);
  }
  return all(equal(a, b));
}

// ---------------------------------------------------------------- nan_to_num, clip

Array nan_to_num(const ArrayLike& x0, double nan, std::optional<double> posinf,
                 std::optional<double> neginf) {
  const char* op = "nan_to_num";
  const Array& x = x0.array();
  check_defined(op, x);
  if (!is_inexact(x.dtype())) return x;
  const DType d = x.dtype();
  const FInfo info = finfo(canonicalize_dtype(d));
  Array out = where(isnan_lax(x), scalar(nan, d), x);
  out = where(lax::eq(out, constant(kInf, out.aval().typed())),
              scalar(posinf.value_or(info.max), d), out);
  out = where(lax::eq(out, constant(-kInf, out.aval().typed())),
              scalar(neginf.value_or(info.min), d), out);
  return out;
}

Array clip(const ArrayLike& x, const std::optional<ArrayLike>& min,
           const std::optional<ArrayLike>& max) {
  check_defined("clip", x.array());
  Array r = x.array();
  if (min) r = maximum(*min, r);
  if (max) r = minimum(*max, r);
  return r;
}

// ---------------------------------------------------------------- linalg.norm

namespace linalg {

namespace {

std::string ord_str(const NormOrd& ord) {
  if (ord.is_none()) return "None";
  if (!ord.name().empty()) return "'" + ord.name() + "'";
  double p = *ord.number();
  if (std::isinf(p)) return p > 0 ? "inf" : "-inf";
  std::string s = std::to_string(p);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

bool ord_is(const NormOrd& ord, double v) { return ord.number() && *ord.number() == v; }

// sqrt(sum(x * x)) over axis (JAX's real(x * conj(x)) for real x).
Array two_norm(const Array& x, const AxisArg& axis, bool keepdims) {
  ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  return lax::sqrt(sum(lax::mul(x, x), o));
}

}  // namespace

Array vector_norm(const Array& x0, const NormOrd& ord, const AxisArg& axis, bool keepdims) {
  const char* op = "vector_norm";
  check_reducible(op, x0);
  Array x = promote_inexact(op, {x0})[0];
  ReduceOptions o;
  o.axis = axis;
  o.keepdims = keepdims;
  if (!ord.name().empty())
    throw ValueError(op_message(op, "Invalid order " + ord_str(ord) +
                                        " for vector norm; use a number (inf and -inf "
                                        "included) or none"));
  if (ord.is_none() || ord_is(ord, 2)) return two_norm(x, axis, keepdims);
  const double p = *ord.number();
  if (p == kInf) return amax(lax::abs(x), o);
  if (p == -kInf) return amin(lax::abs(x), o);
  const TypedDType t = x.aval().typed();
  if (p == 0) {
    ReduceOptions so = o;
    so.dtype = x.dtype();
    return sum(lax::ne(x, constant(0, t)), so);
  }
  if (p == 1) return sum(lax::abs(x), o);
  Array abs_x = lax::abs(x);
  const TypedDType st{t.dtype, false};
  Array out = sum(lax::pow(abs_x, constant(p, st)), o);
  return lax::pow(out, constant(1.0 / p, TypedDType{out.dtype(), false}));
}

Array norm(const Array& x0, const NormOrd& ord, const AxisArg& axis, bool keepdims) {
  const char* op = "norm";
  check_reducible(op, x0);
  Array x = promote_inexact(op, {x0})[0];
  const int64_t ndim = x.ndim();
  std::vector<int64_t> axes;
  if (!axis.axes()) {
    if (ord.is_none()) return two_norm(x, std::nullopt, keepdims);
    for (int64_t i = 0; i < ndim; ++i) axes.push_back(i);
  } else {
    for (int64_t a : *axis.axes())
      axes.push_back(normalize_axes(op, std::vector<int64_t>{a}, ndim)[0]);
    if (axes.size() == 2 && axes[0] == axes[1])
      throw ValueError(op_message(op, "duplicate axes " + tuple_str(*axis.axes()) +
                                          " for a matrix norm; pass two different axes"));
  }
  if (axes.size() == 1) return vector_norm(x, ord.is_none() ? NormOrd(2) : ord, axes, keepdims);
  if (axes.size() != 2)
    throw ValueError(op_message(op, "Improper number of axes for norm: axis=" +
                                        (axis.axes() ? tuple_str(*axis.axes()) : "None") +
                                        " on a rank-" + std::to_string(ndim) +
                                        " array. Pass one axis to compute a vector-norm, or "
                                        "two axes to compute a matrix-norm."));
  int64_t row = axes[0], col = axes[1];
  auto reduce_abs = [&](int64_t sum_axis, int64_t ext_axis, bool is_max) {
    ReduceOptions so;
    so.axis = sum_axis;
    so.keepdims = keepdims;
    if (!keepdims && ext_axis > sum_axis) --ext_axis;
    ReduceOptions eo;
    eo.axis = ext_axis;
    eo.keepdims = keepdims;
    Array s = sum(lax::abs(x), so);
    return is_max ? amax(s, eo) : amin(s, eo);
  };
  if (ord.is_none() || ord.name() == "fro" || ord.name() == "f")
    return two_norm(x, std::vector<int64_t>{row, col}, keepdims);
  if (ord_is(ord, 1)) return reduce_abs(row, col, true);
  if (ord_is(ord, -1)) return reduce_abs(row, col, false);
  if (ord_is(ord, kInf)) return reduce_abs(col, row, true);
  if (ord_is(ord, -kInf)) return reduce_abs(col, row, false);
  if (ord_is(ord, 2) || ord_is(ord, -2) || ord.name() == "nuc") {
    // The singular values of the matrices on (row, col): their max, min or sum (float16 and
    // bfloat16 computed in float32, LAPACK having no half precision).
    const bool half = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16;
    Array m = moveaxis(x, std::vector<int64_t>{row, col}, {-2, -1});
    Array s = tessera::linalg::svdvals(half ? lax::convert_element_type(m, DType::kFloat32) : m);
    ReduceOptions ro;
    ro.axis = -1;
    Array out = ord.name() == "nuc" ? sum(s, ro) : (ord_is(ord, 2) ? amax(s, ro) : amin(s, ro));
    if (half) out = lax::convert_element_type(out, x.dtype());
    if (keepdims)
      out = expand_dims(out, std::vector<int64_t>{std::min(row, col), std::max(row, col)});
    return out;
  }
  throw ValueError(
      op_message(op, "Invalid order " + ord_str(ord) +
                         " for matrix norm; use None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf"));
}

}  // namespace linalg

}  // namespace tessera::numpy
