// tessera.numpy's C++ functions (the `numpy` submodule): the arithmetic and comparison core of
// numpy.h and the ufuncs of numpy_ufuncs.h; manipulation and reductions are bound in
// py_numpy_manip.cpp and py_numpy_reductions.cpp. python/tessera/numpy gives them jax.numpy's
// signatures (keyword names, `out=` errors, pytree-free argument checks). Arguments are
// converted with to_array (Python scalars weakly typed); the GIL is released around the C++ work.
#include <string>

#include "py_common.h"

namespace tessera::python {

namespace {

void bind_numpy_core(py::module_& np) {
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

}  // namespace

void bind_numpy(py::module_& m) {
  py::module_ np = m.def_submodule("numpy", "tessera.numpy's C++ functions");
  bind_numpy_core(np);
  bind_ufuncs(np);
  bind_numpy_manip(np);
  bind_numpy_reductions(np);
}

}  // namespace tessera::python
