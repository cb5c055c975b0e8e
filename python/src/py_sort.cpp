// lax.sort / sort_key_val and jnp's sorting and order statistics (sort, argsort, lexsort,
// sort_complex, quantile, percentile, median and the nan* forms) on flat arguments;
// tessera/_src/lax_sort.py wraps them with jax's signatures. The C++ work runs with the GIL
// released.
#include <string>
#include <vector>

#include "py_common.h"
#include "tessera/lax_sort.h"
#include "tessera/numpy_sort.h"

namespace tessera::python {

namespace {

numpy::AxisArg axis_arg(const py::object& axis, const char* op) {
  if (auto ax = to_axes(axis, op)) return numpy::AxisArg(*ax);
  return numpy::AxisArg();
}

using Stat = Array (*)(const numpy::ArrayLike&, const numpy::ArrayLike&, const numpy::AxisArg&,
                       const std::string&, bool);
void def_stat(py::module_& np, const char* name, Stat f) {
  np.def(
      name,
      [f, name](py::handle a, py::handle q, py::object axis, std::string method, bool keepdims) {
        Array x = to_array(a), qa = to_array(q);
        numpy::AxisArg ax = axis_arg(axis, name);
        py::gil_scoped_release nogil;
        return f(x, qa, ax, method, keepdims);
      },
      py::arg("a"), py::arg("q"), py::arg("axis") = py::none(), py::arg("method") = "linear",
      py::arg("keepdims") = false);
}

using Median = Array (*)(const numpy::ArrayLike&, const numpy::AxisArg&, bool);
void def_median(py::module_& np, const char* name, Median f) {
  np.def(
      name,
      [f, name](py::handle a, py::object axis, bool keepdims) {
        Array x = to_array(a);
        numpy::AxisArg ax = axis_arg(axis, name);
        py::gil_scoped_release nogil;
        return f(x, ax, keepdims);
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
}

using SortFn = Array (*)(const numpy::ArrayLike&, std::optional<int64_t>, bool, bool);
void def_np_sort(py::module_& np, const char* name, SortFn f) {
  np.def(
      name,
      [f, name](py::handle a, py::object axis, bool stable, bool descending) {
        Array x = to_array(a);
        std::optional<int64_t> ax = opt_int(axis, name, "axis");
        py::gil_scoped_release nogil;
        return f(x, ax, stable, descending);
      },
      py::arg("a"), py::arg("axis") = -1, py::arg("stable") = true, py::arg("descending") = false);
}

}  // namespace

void bind_sort(py::module_& m) {
  py::module_ lax = m.attr("lax");
  py::module_ np = m.attr("numpy");
  lax.def(
      "sort",
      [](const py::sequence& operands, py::handle dimension, bool is_stable, py::handle num_keys) {
        std::vector<Array> ops = to_arrays(operands);
        const int64_t dim = as_int(dimension, "sort", "dimension");
        const int64_t nk = as_int(num_keys, "sort", "num_keys");
        std::vector<Array> out;
        {
          py::gil_scoped_release nogil;
          out = lax::sort(ops, dim, is_stable, nk);
        }
        return to_list(out);
      },
      py::arg("operands"), py::arg("dimension") = -1, py::arg("is_stable") = true,
      py::arg("num_keys") = 1);
  lax.def(
      "top_k",
      [](py::handle operand, py::handle k) {
        Array x = to_array(operand);
        const int64_t kk = as_int(k, "top_k", "k");
        py::gil_scoped_release nogil;
        return lax::top_k(x, kk);
      },
      py::arg("operand"), py::arg("k"));
  def_np_sort(np, "sort", numpy::sort);
  def_np_sort(np, "argsort", numpy::argsort);
  np.def(
      "lexsort",
      [](const py::sequence& keys, py::handle axis) {
        std::vector<Array> ks = to_arrays(keys);
        const int64_t ax = as_int(axis, "lexsort", "axis");
        py::gil_scoped_release nogil;
        return numpy::lexsort(ks, ax);
      },
      py::arg("keys"), py::arg("axis") = -1);
  np.def("sort_complex", [](py::handle a) { return numpy::sort_complex(to_array(a)); });
  def_stat(np, "quantile", numpy::quantile);
  def_stat(np, "percentile", numpy::percentile);
  def_stat(np, "nanquantile", numpy::nanquantile);
  def_stat(np, "nanpercentile", numpy::nanpercentile);
  def_median(np, "median", numpy::median);
  def_median(np, "nanmedian", numpy::nanmedian);
}

}  // namespace tessera::python
