// jax.nn.initializers (tessera/nn_initializers.h) in the `nn.initializers` submodule: the
// factories return the C++ Initializer as a callable `Initializer(key, shape, dtype=None)`
// (None: the factory's dtype), and tessera/nn/initializers.py gives them JAX's signatures. The
// C++ work runs with the GIL released.
#include <optional>
#include <string>
#include <utility>

#include "py_common.h"
#include "tessera/nn_initializers.h"

namespace tessera::python {

namespace {

namespace init = tessera::nn::initializers;

init::Axes axes(const py::object& a, const char* op, const char* what) {
  return init::Axes(to_ints(a, op, what));
}

using Named = init::Initializer (*)(const init::Axes&, const init::Axes&, const init::Axes&,
                                    std::optional<DType>);

void def_named(py::module_& m, const char* name, Named f) {
  m.def(
      name,
      [f, name](py::object in_axis, py::object out_axis, py::object batch_axis, py::object dtype) {
        return f(axes(in_axis, name, "in_axis"), axes(out_axis, name, "out_axis"),
                 axes(batch_axis, name, "batch_axis"), opt_dtype(dtype));
      },
      py::arg("in_axis") = -2, py::arg("out_axis") = -1, py::arg("batch_axis") = py::tuple(),
      py::arg("dtype") = py::none());
}

// An initializer without a key: zeros / ones.
using Fixed = Array (*)(const Array&, const Shape&, std::optional<DType>);

void def_fixed(py::module_& m, const char* name, Fixed f) {
  m.def(
      name,
      [f, name](py::handle key, py::object shape, py::object dtype) {
        Array k = key.is_none() ? Array() : to_array(key);
        Shape s = to_shape(shape, name);
        std::optional<DType> d = opt_dtype(dtype);
        py::gil_scoped_release nogil;
        return f(k, s, d);
      },
      py::arg("key"), py::arg("shape"), py::arg("dtype") = py::none());
}

}  // namespace

void bind_nn_initializers(py::module_& m) {
  py::module_ nnm = m.attr("nn").cast<py::module_>();
  py::module_ im = nnm.def_submodule("initializers", "jax.nn.initializers (nn_initializers.h)");
  py::class_<init::Initializer>(im, "Initializer")
      .def(
          "__call__",
          [](const init::Initializer& self, py::handle key, py::object shape, py::object dtype) {
            Array k = to_array(key);
            Shape s = to_shape(shape, "initializer");
            std::optional<DType> d = opt_dtype(dtype);
            py::gil_scoped_release nogil;
            return self(k, s, d);
          },
          py::arg("key"), py::arg("shape"), py::arg("dtype") = py::none());
  def_fixed(im, "zeros", init::zeros);
  def_fixed(im, "ones", init::ones);
  im.def(
      "constant",
      [](py::handle value, py::object dtype) {
        return init::constant(to_array(value), opt_dtype(dtype));
      },
      py::arg("value"), py::arg("dtype") = py::none());
  im.def(
      "uniform",
      [](py::handle scale, py::object dtype) {
        return init::uniform(to_array(scale), opt_dtype(dtype));
      },
      py::arg("scale") = 1e-2, py::arg("dtype") = py::none());
  im.def(
      "orthogonal",
      [](py::handle scale, int64_t column_axis, py::object dtype) {
        return init::orthogonal(to_array(scale), column_axis, opt_dtype(dtype));
      },
      py::arg("scale") = 1.0, py::arg("column_axis") = -1, py::arg("dtype") = py::none());
  im.def(
      "normal",
      [](py::handle stddev, py::object dtype) {
        return init::normal(to_array(stddev), opt_dtype(dtype));
      },
      py::arg("stddev") = 1e-2, py::arg("dtype") = py::none());
  im.def(
      "truncated_normal",
      [](py::handle stddev, py::object dtype, py::handle lower, py::handle upper) {
        return init::truncated_normal(to_array(stddev), opt_dtype(dtype), to_array(lower),
                                      to_array(upper));
      },
      py::arg("stddev") = 1e-2, py::arg("dtype") = py::none(), py::arg("lower") = -2.0,
      py::arg("upper") = 2.0);
  im.def(
      "compute_fans",
      [](py::object shape, py::object in_axis, py::object out_axis, py::object batch_axis) {
        const char* op = "_compute_fans";
        return init::compute_fans(to_shape(shape, op), axes(in_axis, op, "in_axis"),
                                  axes(out_axis, op, "out_axis"),
                                  axes(batch_axis, op, "batch_axis"));
      },
      py::arg("shape"), py::arg("in_axis") = -2, py::arg("out_axis") = -1,
      py::arg("batch_axis") = py::tuple());
  im.def(
      "variance_scaling",
      [](double scale, std::string mode, std::string distribution, py::object in_axis,
         py::object out_axis, py::object batch_axis, py::object dtype) {
        const char* op = "variance_scaling";
        return init::variance_scaling(scale, mode, distribution, axes(in_axis, op, "in_axis"),
                                      axes(out_axis, op, "out_axis"),
                                      axes(batch_axis, op, "batch_axis"), opt_dtype(dtype));
      },
      py::arg("scale"), py::arg("mode"), py::arg("distribution"), py::arg("in_axis") = -2,
      py::arg("out_axis") = -1, py::arg("batch_axis") = py::tuple(), py::arg("dtype") = py::none());
  def_named(im, "glorot_uniform", init::glorot_uniform);
  def_named(im, "glorot_normal", init::glorot_normal);
  def_named(im, "lecun_uniform", init::lecun_uniform);
  def_named(im, "lecun_normal", init::lecun_normal);
  def_named(im, "he_uniform", init::he_uniform);
  def_named(im, "he_normal", init::he_normal);
}

}  // namespace tessera::python
