// tessera.numpy's reductions and statistics with where/initial/ddof and linalg.norm
// (numpy_reductions.h), bound into the `numpy` submodule by bind_numpy (py_numpy.cpp).
#include <string>
#include <utility>

#include "py_common.h"
#include "tessera/numpy_reductions.h"

namespace tessera::python {

namespace {

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

}  // namespace

void bind_numpy_reductions(py::module_& np) {
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

}  // namespace tessera::python
