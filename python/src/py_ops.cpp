// tessera.numpy and tessera.lax functions over the C++ layers. Arguments are converted with
// to_array (Python scalars weakly typed); the GIL is released around the C++ work.
#include <string>

#include "py_common.h"

namespace tessera::python {

namespace {

void bind_numpy(py::module_& np) {
  def_fn(np, "add", numpy::add);
  def_fn(np, "subtract", numpy::subtract);
  def_fn(np, "multiply", numpy::multiply);
  def_fn(np, "divide", numpy::divide);
  def_fn(np, "true_divide", numpy::true_divide);
  def_fn(np, "power", numpy::power);
  def_fn(np, "maximum", numpy::maximum);
  def_fn(np, "minimum", numpy::minimum);
  def_fn(np, "equal", numpy::equal);
  def_fn(np, "not_equal", numpy::not_equal);
  def_fn(np, "less", numpy::less);
  def_fn(np, "less_equal", numpy::less_equal);
  def_fn(np, "greater", numpy::greater);
  def_fn(np, "greater_equal", numpy::greater_equal);
  def_fn(np, "negative", numpy::negative);
  def_fn(np, "positive", numpy::positive);
  def_fn(np, "exp", numpy::exp);
  def_fn(np, "log", numpy::log);
  def_fn(np, "sin", numpy::sin);
  def_fn(np, "cos", numpy::cos);
  def_fn(np, "tanh", numpy::tanh);
  def_fn(np, "sqrt", numpy::sqrt);
  def_fn(np, "square", numpy::square);
  np.def("where", [](py::handle c, py::handle x, py::handle y) {
    Array a = to_array(c), b = to_array(x), d = to_array(y);
    py::gil_scoped_release nogil;
    return numpy::where(a, b, d);
  });
  np.def("reshape", [](py::handle x, py::object shape) {
    return numpy::reshape(to_array(x), to_shape(shape, "reshape"));
  });
  np.def(
      "transpose",
      [](py::handle x, py::object axes) {
        return numpy::transpose(to_array(x), to_axes(axes, "transpose"));
      },
      py::arg("a"), py::arg("axes") = py::none());
  np.def("matmul", [](py::handle x, py::handle y) {
    Array a = to_array(x), b = to_array(y);
    py::gil_scoped_release nogil;
    return numpy::matmul(a, b);
  });
  np.def("dot", [](py::handle x, py::handle y) {
    Array a = to_array(x), b = to_array(y);
    py::gil_scoped_release nogil;
    return numpy::dot(a, b);
  });
  np.def("broadcast_to", [](py::handle x, py::object shape) {
    return numpy::broadcast_to(to_array(x), to_shape(shape, "broadcast_to"));
  });
  np.def("astype", [](py::handle x, py::object dtype) {
    return numpy::astype(to_array(x), dtype_from_py(dtype));
  });
  np.def(
      "zeros",
      [](py::object shape, py::object dtype) {
        Shape s = to_shape(shape, "zeros");
        DType d = dtype.is_none() ? default_float_dtype() : dtype_from_py(dtype);
        check_shape("zeros", s, itemsize(canonicalize_dtype(d)));  // name the op the user called
        return numpy::zeros(s, d);
      },
      py::arg("shape"), py::arg("dtype") = py::none());
  np.def(
      "ones",
      [](py::object shape, py::object dtype) {
        Shape s = to_shape(shape, "ones");
        DType d = dtype.is_none() ? default_float_dtype() : dtype_from_py(dtype);
        check_shape("ones", s, itemsize(canonicalize_dtype(d)));
        return numpy::ones(s, d);
      },
      py::arg("shape"), py::arg("dtype") = py::none());
  np.def(
      "full",
      [](py::object shape, py::handle fill, py::object dtype) {
        Array f = to_array(fill, opt_dtype(dtype));
        Shape s = to_shape(shape, "full");
        check_shape("full", s, itemsize(f.dtype()));
        return numpy::broadcast_to(f, s);
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none());
  np.def(
      "arange",
      [](py::object start, py::object stop, py::object step, py::object dtype) -> Array {
        auto dt = opt_dtype(dtype);
        auto num = [](py::handle h, const char* what) {
          if (h.is_none() || !PyNumber_Check(h.ptr()) || py::isinstance<py::str>(h))
            throw TypeError(std::string("[arange] ") + what + " must be a number; got " +
                            std::string(py::repr(h)));
          return py::reinterpret_borrow<py::object>(h).cast<double>();
        };
        bool ints = py::isinstance<py::int_>(start) &&
                    (stop.is_none() || py::isinstance<py::int_>(stop)) &&
                    (step.is_none() || py::isinstance<py::int_>(step));
        if (stop.is_none()) {
          if (ints) return numpy::arange(as_int(start, "arange", "start"), dt);
          return numpy::arange(num(start, "start"), dt);
        }
        if (ints)
          return numpy::arange(as_int(start, "arange", "start"), as_int(stop, "arange", "stop"),
                               step.is_none() ? 1 : as_int(step, "arange", "step"), dt);
        return numpy::arange(num(start, "start"), num(stop, "stop"),
                             step.is_none() ? 1.0 : num(step, "step"), dt);
      },
      py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = py::none(),
      py::arg("dtype") = py::none());
  np.def(
      "linspace",
      [](double start, double stop, py::handle num_, bool endpoint, py::object dtype) {
        int64_t num = as_int(num_, "linspace", "num");

        return numpy::linspace(start, stop, num, endpoint, opt_dtype(dtype));
      },
      py::arg("start"), py::arg("stop"), py::arg("num") = 50, py::arg("endpoint") = true,
      py::arg("dtype") = py::none());
  np.def(
      "eye",
      [](py::handle n_, py::handle m_, py::handle k_, py::object dtype) {
        int64_t n = as_int(n_, "eye", "n");
        std::optional<int64_t> m = opt_int(m_, "eye", "m");
        int64_t k = as_int(k_, "eye", "k");
        DType d = dtype.is_none() ? default_float_dtype() : dtype_from_py(dtype);
        // numpy::eye fills a host vector of n * m doubles: bound the shape before it does.
        check_shape("eye", Shape{n, m.value_or(n)}, sizeof(double));
        return numpy::eye(n, m, k, d);
      },
      py::arg("N"), py::arg("M") = py::none(), py::arg("k") = 0, py::arg("dtype") = py::none());
}

void bind_lax(py::module_& lax) {
  def_fn(lax, "add", lax::add);
  def_fn(lax, "sub", lax::sub);
  def_fn(lax, "mul", lax::mul);
  def_fn(lax, "div", lax::div);
  def_fn(lax, "max", lax::max);
  def_fn(lax, "min", lax::min);
  def_fn(lax, "pow", lax::pow);
  def_fn(lax, "eq", lax::eq);
  def_fn(lax, "ne", lax::ne);
  def_fn(lax, "lt", lax::lt);
  def_fn(lax, "le", lax::le);
  def_fn(lax, "gt", lax::gt);
  def_fn(lax, "ge", lax::ge);
  def_fn(lax, "neg", lax::neg);
  def_fn(lax, "exp", lax::exp);
  def_fn(lax, "log", lax::log);
  def_fn(lax, "sin", lax::sin);
  def_fn(lax, "cos", lax::cos);
  def_fn(lax, "tanh", lax::tanh);
  def_fn(lax, "logistic", lax::logistic);
  def_fn(lax, "sqrt", lax::sqrt);
  def_fn(lax, "stop_gradient", lax::stop_gradient);
  lax.def("integer_pow", [](py::handle x, py::handle y_) {
    int64_t y = as_int(y_, "integer_pow", "y");
    return lax::integer_pow(to_array(x), y);
  });
  lax.def("select_n", [](py::handle which, py::args cases) {
    std::vector<Array> cs;
    for (py::handle c : cases) cs.push_back(to_array(c));
    return lax::select_n(to_array(which), cs);
  });
  lax.def("convert_element_type", [](py::handle x, py::object d) {
    return lax::convert_element_type(to_array(x), dtype_from_py(d));
  });
  lax.def("broadcast_in_dim", [](py::handle x, py::object shape, py::object dims) {
    return lax::broadcast_in_dim(
        to_array(x), to_shape(shape, "broadcast_in_dim"),
        to_axes(dims, "broadcast_in_dim", "broadcast_dimensions").value_or(std::vector<int64_t>{}));
  });
  lax.def("broadcast", [](py::handle x, py::object sizes) {
    return lax::broadcast(to_array(x), to_shape(sizes, "broadcast"));
  });
  lax.def("reshape", [](py::handle x, py::object sizes) {
    return lax::reshape(to_array(x), to_shape(sizes, "reshape"));
  });
  lax.def("transpose", [](py::handle x, py::object perm) {
    return lax::transpose(
        to_array(x), to_axes(perm, "transpose", "permutation").value_or(std::vector<int64_t>{}));
  });
  lax.def("iota", [](py::object d, py::handle size_) {
    int64_t size = as_int(size_, "iota", "size");
    return lax::iota(dtype_from_py(d), size);
  });
  lax.def("broadcasted_iota", [](py::object d, py::object shape, py::handle dim_) {
    int64_t dim = as_int(dim_, "broadcasted_iota", "dim");

    return lax::broadcasted_iota(dtype_from_py(d), to_shape(shape, "broadcasted_iota"), dim);
  });
  lax.def("reduce_sum", [](py::handle x, py::object axes) {
    return lax::reduce_sum(to_array(x),
                           to_axes(axes, "reduce_sum", "axes").value_or(std::vector<int64_t>{}));
  });
  lax.def("reduce_max", [](py::handle x, py::object axes) {
    return lax::reduce_max(to_array(x),
                           to_axes(axes, "reduce_max", "axes").value_or(std::vector<int64_t>{}));
  });
  lax.def(
      "dot_general",
      [](py::handle x, py::handle y, py::object dn, py::object pref) {
        // dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))
        py::tuple t = dn;
        py::tuple c = t[0], b = t[1];
        lax::DotDimensionNumbers d{
            to_axes(c[0], "dot_general", "dimension_numbers").value_or(std::vector<int64_t>{}),
            to_axes(c[1], "dot_general", "dimension_numbers").value_or(std::vector<int64_t>{}),
            to_axes(b[0], "dot_general", "dimension_numbers").value_or(std::vector<int64_t>{}),
            to_axes(b[1], "dot_general", "dimension_numbers").value_or(std::vector<int64_t>{})};
        Array l = to_array(x), r = to_array(y);
        auto p = opt_dtype(pref);
        py::gil_scoped_release nogil;
        return lax::dot_general(l, r, d, p);
      },
      py::arg("lhs"), py::arg("rhs"), py::arg("dimension_numbers"),
      py::arg("preferred_element_type") = py::none());
}

}  // namespace

void bind_ops(py::module_& m) {
  py::module_ np = m.def_submodule("numpy", "tessera.numpy's C++ functions");
  bind_numpy(np);
  py::module_ lax = m.def_submodule("lax", "tessera.lax's C++ functions");
  bind_lax(lax);
}

}  // namespace tessera::python
