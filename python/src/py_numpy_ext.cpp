// tessera.numpy beyond the arithmetic core: ufuncs (numpy_ufuncs.h), array manipulation and
// products (numpy_manip.h), reductions and statistics with where/initial/ddof
// (numpy_reductions.h) and linalg.norm. python/tessera/numpy/__init__.py gives them
// jax.numpy's signatures (keyword names, `out=` errors, pytree-free argument checks).
#include <string>
#include <utility>

#include "py_common.h"
#include "tessera/numpy_reductions.h"

namespace tessera::python {

namespace {

std::vector<Array> arrays_of(const py::object& xs) {
  std::vector<Array> out;
  for (py::handle h : xs) out.push_back(to_array(h));
  return out;
}

py::list list_of(const std::vector<Array>& xs) {
  py::list l(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) l[i] = py::cast(xs[i]);
  return l;
}

void bind_ufuncs(py::module_& np) {
  def_fn(np, "abs", numpy::abs);
  def_fn(np, "absolute", numpy::absolute);
  def_fn(np, "fabs", numpy::fabs);
  def_fn(np, "sign", numpy::sign);
  def_fn(np, "floor", numpy::floor);
  def_fn(np, "ceil", numpy::ceil);
  def_fn(np, "trunc", numpy::trunc);
  def_fn(np, "fix", numpy::fix);
  def_fn(np, "rint", numpy::rint);
  np.def("round", [](py::handle x, py::handle decimals_) {
    int64_t decimals = as_int(decimals_, "round", "decimals");

    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return numpy::round(a, decimals);
  });
  def_fn(np, "exp2", numpy::exp2);
  def_fn(np, "expm1", numpy::expm1);
  def_fn(np, "log1p", numpy::log1p);
  def_fn(np, "log2", numpy::log2);
  def_fn(np, "log10", numpy::log10);
  def_fn(np, "logaddexp", numpy::logaddexp);
  def_fn(np, "logaddexp2", numpy::logaddexp2);
  def_fn(np, "cbrt", numpy::cbrt);
  def_fn(np, "reciprocal", numpy::reciprocal);
  def_fn(np, "float_power", numpy::float_power);
  def_fn(np, "tan", numpy::tan);
  def_fn(np, "arcsin", numpy::arcsin);
  def_fn(np, "arccos", numpy::arccos);
  def_fn(np, "arctan", numpy::arctan);
  def_fn(np, "arctan2", numpy::arctan2);
  def_fn(np, "sinh", numpy::sinh);
  def_fn(np, "cosh", numpy::cosh);
  def_fn(np, "arcsinh", numpy::arcsinh);
  def_fn(np, "arccosh", numpy::arccosh);
  def_fn(np, "arctanh", numpy::arctanh);
  def_fn(np, "hypot", numpy::hypot);
  def_fn(np, "deg2rad", numpy::deg2rad);
  def_fn(np, "rad2deg", numpy::rad2deg);
  def_fn(np, "degrees", numpy::degrees);
  def_fn(np, "radians", numpy::radians);
  def_fn(np, "sinc", numpy::sinc);
  def_fn(np, "floor_divide", numpy::floor_divide);
  def_fn(np, "remainder", numpy::remainder);
  def_fn(np, "mod", numpy::mod);
  def_fn(np, "fmod", numpy::fmod);
  np.def("divmod", [](py::handle x, py::handle y) {
    Array a = to_array(x), b = to_array(y);
    std::pair<Array, Array> r;
    {
      py::gil_scoped_release nogil;
      r = numpy::divmod(a, b);
    }
    return py::make_tuple(r.first, r.second);
  });
  def_fn(np, "heaviside", numpy::heaviside);
  def_fn(np, "isfinite", numpy::isfinite);
  def_fn(np, "isinf", numpy::isinf);
  def_fn(np, "isnan", numpy::isnan);
  def_fn(np, "isposinf", numpy::isposinf);
  def_fn(np, "isneginf", numpy::isneginf);
  def_fn(np, "signbit", numpy::signbit);
  def_fn(np, "copysign", numpy::copysign);
  def_fn(np, "nextafter", numpy::nextafter);
  def_fn(np, "bitwise_and", numpy::bitwise_and);
  def_fn(np, "bitwise_or", numpy::bitwise_or);
  def_fn(np, "bitwise_xor", numpy::bitwise_xor);
  def_fn(np, "bitwise_not", numpy::bitwise_not);
  def_fn(np, "invert", numpy::invert);
  def_fn(np, "left_shift", numpy::left_shift);
  def_fn(np, "right_shift", numpy::right_shift);
  def_fn(np, "logical_and", numpy::logical_and);
  def_fn(np, "logical_or", numpy::logical_or);
  def_fn(np, "logical_xor", numpy::logical_xor);
  def_fn(np, "logical_not", numpy::logical_not);
}

void bind_manip(py::module_& np) {
  np.def("swapaxes", [](py::handle x, py::handle a1_, py::handle a2_) {
    int64_t a1 = as_int(a1_, "swapaxes", "a1");
    int64_t a2 = as_int(a2_, "swapaxes", "a2");
    return numpy::swapaxes(to_array(x), a1, a2);
  });
  np.def("moveaxis", [](py::handle x, py::object src, py::object dst) {
    return numpy::moveaxis(to_array(x), to_ints(src, "moveaxis", "source"),
                           to_ints(dst, "moveaxis", "destination"));
  });
  np.def("squeeze", [](py::handle x, py::object axis) {
    return numpy::squeeze(to_array(x), to_axes(axis, "squeeze"));
  });
  np.def("expand_dims", [](py::handle x, py::object axis) {
    return numpy::expand_dims(to_array(x), to_ints(axis, "expand_dims", "axis"));
  });
  def_fn(np, "ravel", numpy::ravel);
  def_fn(np, "atleast_1d", numpy::atleast_1d);
  def_fn(np, "atleast_2d", numpy::atleast_2d);
  def_fn(np, "atleast_3d", numpy::atleast_3d);
  np.def("broadcast_arrays",
         [](py::sequence xs) { return list_of(numpy::broadcast_arrays(arrays_of(xs))); });
  np.def("concatenate", [](py::sequence xs, py::object axis) {
    std::vector<Array> v = arrays_of(xs);
    std::optional<int64_t> ax = opt_int(axis, "concatenate", "axis");
    py::gil_scoped_release nogil;
    return ax ? numpy::concatenate(v, *ax) : numpy::concatenate_flat(v);
  });
  np.def("stack", [](py::sequence xs, py::handle axis_) {
    int64_t axis = as_int(axis_, "stack", "axis");

    std::vector<Array> v = arrays_of(xs);
    py::gil_scoped_release nogil;
    return numpy::stack(v, axis);
  });
  np.def("hstack", [](py::sequence xs) { return numpy::hstack(arrays_of(xs)); });
  np.def("vstack", [](py::sequence xs) { return numpy::vstack(arrays_of(xs)); });
  np.def("dstack", [](py::sequence xs) { return numpy::dstack(arrays_of(xs)); });
  np.def("column_stack", [](py::sequence xs) { return numpy::column_stack(arrays_of(xs)); });
  // indices_or_sections: an int (equal sections) or a sequence of split points.
  np.def("split", [](py::handle x, py::object ios, py::handle axis_) {
    int64_t axis = as_int(axis_, "split", "axis");

    Array a = to_array(x);
    if (py::isinstance<py::sequence>(ios))
      return list_of(numpy::split(a, to_ints(ios, "split", "indices_or_sections"), axis));
    return list_of(numpy::split(a, as_int(ios, "split", "indices_or_sections"), axis));
  });
  np.def("array_split", [](py::handle x, py::handle sections_, py::handle axis_) {
    int64_t sections = as_int(sections_, "array_split", "sections");
    int64_t axis = as_int(axis_, "array_split", "axis");

    return list_of(numpy::array_split(to_array(x), sections, axis));
  });
  np.def("tile", [](py::handle x, py::object reps) {
    return numpy::tile(to_array(x), to_ints(reps, "tile", "reps"));
  });
  np.def("repeat", [](py::handle x, py::object repeats, py::object axis) {
    Array a = to_array(x);
    if (py::isinstance<py::sequence>(repeats))
      return numpy::repeat(a, to_ints(repeats, "repeat", "repeats"),
                           opt_int(axis, "repeat", "axis"));
    return numpy::repeat(a, as_int(repeats, "repeat", "repeats"), opt_int(axis, "repeat", "axis"));
  });
  np.def("flip", [](py::handle x, py::object axis) {
    return numpy::flip(to_array(x), to_axes(axis, "flip"));
  });
  def_fn(np, "fliplr", numpy::fliplr);
  def_fn(np, "flipud", numpy::flipud);
  np.def("roll", [](py::handle x, py::object shift, py::object axis) {
    Array a = to_array(x);
    if (axis.is_none()) return numpy::roll(a, as_int(shift, "roll", "shift"), std::nullopt);
    return numpy::roll(a, to_ints(shift, "roll", "shift"), to_ints(axis, "roll", "axis"));
  });
  np.def("rot90", [](py::handle x, py::handle k_, py::handle a0_, py::handle a1_) {
    int64_t k = as_int(k_, "rot90", "k");
    int64_t a0 = as_int(a0_, "rot90", "a0");
    int64_t a1 = as_int(a1_, "rot90", "a1");

    return numpy::rot90(to_array(x), k, {a0, a1});
  });
  // pad_width: a list of (before, after) pairs (python/tessera/numpy normalizes NumPy's forms).
  np.def("pad", [](py::handle x, py::sequence widths, std::string mode, double constant_value,
                   double end_value, std::string reflect_type) {
    Array a = to_array(x);
    numpy::PadWidth pw;
    for (py::handle p : widths) {
      py::sequence s = py::reinterpret_borrow<py::sequence>(p);
      pw.emplace_back(as_int(s[0], "pad", "pad_width"), as_int(s[1], "pad", "pad_width"));
    }
    numpy::PadOptions o{std::move(mode), constant_value, end_value, std::move(reflect_type)};
    py::gil_scoped_release nogil;
    return numpy::pad(a, pw, o);
  });
  np.def("diagonal", [](py::handle x, py::handle offset_, py::handle a1_, py::handle a2_) {
    int64_t offset = as_int(offset_, "diagonal", "offset");
    int64_t a1 = as_int(a1_, "diagonal", "a1");
    int64_t a2 = as_int(a2_, "diagonal", "a2");

    return numpy::diagonal(to_array(x), offset, a1, a2);
  });
  np.def("diag", [](py::handle x, py::handle k_) {
    int64_t k = as_int(k_, "diag", "k");
    return numpy::diag(to_array(x), k);
  });
  np.def("trace",
         [](py::handle x, py::handle offset_, py::handle a1_, py::handle a2_, py::object dtype) {
           int64_t offset = as_int(offset_, "trace", "offset");
           int64_t a1 = as_int(a1_, "trace", "a1");
           int64_t a2 = as_int(a2_, "trace", "a2");

           return numpy::trace(to_array(x), offset, a1, a2, opt_dtype(dtype));
         });
  np.def("tril", [](py::handle x, py::handle k_) {
    int64_t k = as_int(k_, "tril", "k");
    return numpy::tril(to_array(x), k);
  });
  np.def("triu", [](py::handle x, py::handle k_) {
    int64_t k = as_int(k_, "triu", "k");
    return numpy::triu(to_array(x), k);
  });
  np.def("tri", [](py::handle n_, py::object m, py::handle k_, py::object dtype) {
    int64_t n = as_int(n_, "tri", "n");
    int64_t k = as_int(k_, "tri", "k");
    std::optional<int64_t> cols = opt_int(m, "tri", "M");
    check_shape("tri", Shape{n, cols.value_or(n)}, sizeof(double));  // as for eye
    return numpy::tri(n, cols, k, dtype.is_none() ? default_float_dtype() : dtype_from_py(dtype));
  });
  np.def("meshgrid", [](py::sequence xs, std::string indexing, bool sparse) {
    return list_of(numpy::meshgrid(arrays_of(xs), indexing, sparse));
  });
  np.def("tensordot", [](py::handle x, py::handle y, py::object axes) {
    Array a = to_array(x), b = to_array(y);
    if (py::isinstance<py::sequence>(axes)) {
      py::sequence s = axes;
      if (s.size() != 2)
        throw TypeError("[tensordot] axes must be an int or a pair of axis sequences");
      std::vector<int64_t> aa = to_ints(s[0], "tensordot", "axes"),
                           ba = to_ints(s[1], "tensordot", "axes");
      py::gil_scoped_release nogil;
      return numpy::tensordot(a, b, aa, ba);
    }
    int64_t n = as_int(axes, "tensordot", "axes");
    py::gil_scoped_release nogil;
    return numpy::tensordot(a, b, n);
  });
  def_fn(np, "outer", numpy::outer);
  def_fn(np, "inner", numpy::inner);
  def_fn(np, "vdot", numpy::vdot);
  def_fn(np, "kron", numpy::kron);
  np.def("einsum", [](py::handle spec, py::sequence operands, py::object pref) {
    if (!py::isinstance<py::str>(spec))
      throw TypeError("[einsum] subscripts must be a str such as 'ij,jk->ik'; got " +
                      std::string(py::repr(spec)));
    std::string subscripts = spec.cast<std::string>();
    for (unsigned char c : subscripts)
      if (c >= 0x80)
        throw ValueError("[einsum] subscripts " + std::string(py::repr(spec)) +
                         " contain a non-ASCII character; subscripts are letters a-z, A-Z, ',', "
                         "'->' and '...'");
    std::vector<Array> xs = arrays_of(operands);
    std::optional<DType> p = opt_dtype(pref);
    py::gil_scoped_release nogil;
    return numpy::einsum(subscripts, xs, p);
  });
}

using ReduceFn = Array (*)(const Array&, const numpy::ReduceOptions&);

// Binds f(a, axis, dtype, keepdims, initial, where, ddof) for a ReduceOptions reduction; the
// Python wrapper passes only the options its jnp namesake has.
void def_reduction(py::module_& np, const char* name, ReduceFn f) {
  np.def(name, [f, name](py::handle x, py::object axis, py::object dtype, bool keepdims,
                         py::object initial, py::object where, double ddof) {
    Array a = to_array(x);
    numpy::ReduceOptions o;
    if (auto ax = to_axes(axis, name)) o.axis = numpy::AxisArg(*ax);
    o.dtype = opt_dtype(dtype);
    o.keepdims = keepdims;
    if (!initial.is_none()) o.initial = initial.cast<double>();
    if (!where.is_none()) o.where = to_array(where);
    o.ddof = ddof;
    py::gil_scoped_release nogil;
    return f(a, o);
  });
}

void def_arg(py::module_& np, const char* name,
             Array (*f)(const Array&, std::optional<int64_t>, bool)) {
  np.def(name, [f, name](py::handle x, py::object axis, bool keepdims) {
    Array a = to_array(x);
    std::optional<int64_t> ax = opt_int(axis, name, "axis");
    py::gil_scoped_release nogil;
    return f(a, ax, keepdims);
  });
}

numpy::linalg::NormOrd norm_ord(const py::object& ord) {
  if (ord.is_none()) return {};
  if (py::isinstance<py::str>(ord)) return numpy::linalg::NormOrd(ord.cast<std::string>());
  return numpy::linalg::NormOrd(ord.cast<double>());
}

void bind_reductions(py::module_& np) {
  def_reduction(np, "sum", numpy::sum);
  def_reduction(np, "prod", numpy::prod);
  def_reduction(np, "max", numpy::max);
  def_reduction(np, "min", numpy::min);
  def_reduction(np, "ptp", numpy::ptp);
  def_reduction(np, "all", numpy::all);
  def_reduction(np, "any", numpy::any);
  def_reduction(np, "count_nonzero", numpy::count_nonzero);
  def_reduction(np, "mean", numpy::mean);
  def_reduction(np, "var", numpy::var);
  def_reduction(np, "std", numpy::std);
  def_reduction(np, "nansum", numpy::nansum);
  def_reduction(np, "nanprod", numpy::nanprod);
  def_reduction(np, "nanmax", numpy::nanmax);
  def_reduction(np, "nanmin", numpy::nanmin);
  def_reduction(np, "nanmean", numpy::nanmean);
  def_reduction(np, "nanvar", numpy::nanvar);
  def_reduction(np, "nanstd", numpy::nanstd);
  def_arg(np, "argmax", numpy::argmax);
  def_arg(np, "argmin", numpy::argmin);
  def_arg(np, "nanargmax", numpy::nanargmax);
  def_arg(np, "nanargmin", numpy::nanargmin);
  np.def("isclose", [](py::handle x, py::handle y, double rtol, double atol, bool equal_nan) {
    Array a = to_array(x), b = to_array(y);
    py::gil_scoped_release nogil;
    return numpy::isclose(a, b, rtol, atol, equal_nan);
  });
  np.def("allclose", [](py::handle x, py::handle y, double rtol, double atol, bool equal_nan) {
    Array a = to_array(x), b = to_array(y);
    py::gil_scoped_release nogil;
    return numpy::allclose(a, b, rtol, atol, equal_nan);
  });
  np.def("array_equal", [](py::handle x, py::handle y, bool equal_nan) {
    Array a = to_array(x), b = to_array(y);
    py::gil_scoped_release nogil;
    return numpy::array_equal(a, b, equal_nan);
  });
  def_fn(np, "array_equiv", numpy::array_equiv);
  np.def("nan_to_num",
         [](py::handle x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
           Array a = to_array(x);
           py::gil_scoped_release nogil;
           return numpy::nan_to_num(a, nan, posinf, neginf);
         });
  np.def("clip", [](py::handle x, py::object lo, py::object hi) {
    Array a = to_array(x);
    std::optional<numpy::ArrayLike> l, h;
    if (!lo.is_none()) l.emplace(to_array(lo));
    if (!hi.is_none()) h.emplace(to_array(hi));
    py::gil_scoped_release nogil;
    return numpy::clip(a, l, h);
  });
  np.def("norm", [](py::handle x, py::object ord, py::object axis, bool keepdims) {
    Array a = to_array(x);
    numpy::linalg::NormOrd o = norm_ord(ord);
    numpy::AxisArg ax;
    if (auto v = to_axes(axis, "norm")) ax = numpy::AxisArg(*v);
    py::gil_scoped_release nogil;
    return numpy::linalg::norm(a, o, ax, keepdims);
  });
  np.def("vector_norm", [](py::handle x, py::object ord, py::object axis, bool keepdims) {
    Array a = to_array(x);
    numpy::linalg::NormOrd o = ord.is_none() ? numpy::linalg::NormOrd(2) : norm_ord(ord);
    numpy::AxisArg ax;
    if (auto v = to_axes(axis, "vector_norm")) ax = numpy::AxisArg(*v);
    py::gil_scoped_release nogil;
    return numpy::linalg::vector_norm(a, o, ax, keepdims);
  });
}

}  // namespace

void bind_numpy_ext(py::module_& m) {
  py::module_ np = m.attr("numpy");
  bind_ufuncs(np);
  bind_manip(np);
  bind_reductions(np);
}

}  // namespace tessera::python
