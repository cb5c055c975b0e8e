// tessera.lax beyond the arithmetic core: more elementwise math, special functions, bitwise ops,
// reductions (lax.reduce with a Python computation), slicing, concatenation and padding. The
// Python wrappers in python/tessera/lax.py give them jax.lax's signatures.
#include <string>

#include "py_common.h"

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

// Binds f(x, axes) for the monoid reductions.
void def_reduce(py::module_& m, const char* name,
                Array (*f)(const Array&, const std::vector<int64_t>&)) {
  m.def(name, [f, name](py::handle x, py::object axes) {
    Array a = to_array(x);
    std::vector<int64_t> ax = to_ints(axes, name, "axes");
    py::gil_scoped_release nogil;
    return f(a, ax);
  });
}

void bind_math(py::module_& lax) {
  def_fn(lax, "abs", lax::abs);
  def_fn(lax, "sign", lax::sign);
  def_fn(lax, "floor", lax::floor);
  def_fn(lax, "ceil", lax::ceil);
  lax.def("round", [](py::handle x, py::handle method_) {
    int64_t method = as_int(method_, "round", "method");

    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return lax::round(a, static_cast<lax::RoundingMethod>(method));
  });
  def_fn(lax, "exp2", lax::exp2);
  def_fn(lax, "expm1", lax::expm1);
  def_fn(lax, "log1p", lax::log1p);
  def_fn(lax, "rsqrt", lax::rsqrt);
  def_fn(lax, "cbrt", lax::cbrt);
  def_fn(lax, "tan", lax::tan);
  def_fn(lax, "asin", lax::asin);
  def_fn(lax, "acos", lax::acos);
  def_fn(lax, "atan", lax::atan);
  def_fn(lax, "atan2", lax::atan2);
  def_fn(lax, "sinh", lax::sinh);
  def_fn(lax, "cosh", lax::cosh);
  def_fn(lax, "asinh", lax::asinh);
  def_fn(lax, "acosh", lax::acosh);
  def_fn(lax, "atanh", lax::atanh);
  def_fn(lax, "is_finite", lax::is_finite);
  def_fn(lax, "nextafter", lax::nextafter);
  def_fn(lax, "rem", lax::rem);
  def_fn(lax, "square", lax::square);
  def_fn(lax, "reciprocal", lax::reciprocal);
  def_fn(lax, "clamp", lax::clamp);
  def_fn(lax, "erf", lax::erf);
  def_fn(lax, "erfc", lax::erfc);
  def_fn(lax, "erf_inv", lax::erf_inv);
  def_fn(lax, "lgamma", lax::lgamma);
  def_fn(lax, "digamma", lax::digamma);
  def_fn(lax, "polygamma", lax::polygamma);
  def_fn(lax, "zeta", lax::zeta);
  def_fn(lax, "igamma", lax::igamma);
  def_fn(lax, "igammac", lax::igammac);
  def_fn(lax, "igamma_grad_a", lax::igamma_grad_a);
  def_fn(lax, "random_gamma_grad", lax::random_gamma_grad);
  def_fn(lax, "bessel_i0e", lax::bessel_i0e);
  def_fn(lax, "bessel_i1e", lax::bessel_i1e);
  def_fn(lax, "betainc", lax::betainc);
  def_fn(lax, "bitwise_not", lax::bitwise_not);
  def_fn(lax, "bitwise_and", lax::bitwise_and);
  def_fn(lax, "bitwise_or", lax::bitwise_or);
  def_fn(lax, "bitwise_xor", lax::bitwise_xor);
  def_fn(lax, "shift_left", lax::shift_left);
  def_fn(lax, "shift_right_logical", lax::shift_right_logical);
  def_fn(lax, "shift_right_arithmetic", lax::shift_right_arithmetic);
  def_fn(lax, "population_count", lax::population_count);
  def_fn(lax, "clz", lax::clz);
  lax.def("bitcast_convert_type", [](py::handle x, py::object d) {
    Array a = to_array(x);
    DType t = dtype_from_py(d);
    py::gil_scoped_release nogil;
    return lax::bitcast_convert_type(a, t);
  });
  lax.def("reduce_precision", [](py::handle x, py::handle e_, py::handle m_) {
    int64_t e = as_int(e_, "reduce_precision", "e");
    int64_t m = as_int(m_, "reduce_precision", "m");

    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return lax::reduce_precision(a, e, m);
  });
}

void bind_reductions(py::module_& lax) {
  def_reduce(lax, "reduce_prod", lax::reduce_prod);
  def_reduce(lax, "reduce_min", lax::reduce_min);
  def_reduce(lax, "reduce_and", lax::reduce_and);
  def_reduce(lax, "reduce_or", lax::reduce_or);
  def_reduce(lax, "reduce_xor", lax::reduce_xor);
  lax.def("argmax", [](py::handle x, py::handle axis_, py::object d) {
    int64_t axis = as_int(axis_, "argmax", "axis");

    Array a = to_array(x);
    DType t = dtype_from_py(d);
    py::gil_scoped_release nogil;
    return lax::argmax(a, axis, t);
  });
  lax.def("argmin", [](py::handle x, py::handle axis_, py::object d) {
    int64_t axis = as_int(axis_, "argmin", "axis");

    Array a = to_array(x);
    DType t = dtype_from_py(d);
    py::gil_scoped_release nogil;
    return lax::argmin(a, axis, t);
  });
  // reduce(operands, init_values, computation, dimensions): computation(accs, values) takes
  // and returns lists of rank-0 arrays (python/tessera/lax.py adapts pytrees). The computation
  // is traced while the GIL is held, so no release here.
  lax.def("reduce",
          [](py::sequence operands, py::sequence inits, py::function computation, py::object dims) {
            lax::ReduceComputation body = [computation](const std::vector<Array>& accs,
                                                        const std::vector<Array>& values) {
              py::gil_scoped_acquire gil;
              py::object r = computation(list_of(accs), list_of(values));
              if (!py::isinstance<py::sequence>(r))
                throw TypeError("[reduce] the computation must return a list of arrays");
              return to_arrays(r);
            };
            return list_of(lax::reduce(arrays_of(operands), arrays_of(inits), body,
                                       to_ints(dims, "reduce", "dimensions")));
          });
}

void bind_slicing(py::module_& lax) {
  lax.def("squeeze", [](py::handle x, py::object dims) {
    Array a = to_array(x);
    return lax::squeeze(a, to_ints(dims, "squeeze", "dimensions"));
  });
  lax.def("expand_dims", [](py::handle x, py::object dims) {
    Array a = to_array(x);
    return lax::expand_dims(a, to_ints(dims, "expand_dims", "dimensions"));
  });
  lax.def("rev", [](py::handle x, py::object dims) {
    Array a = to_array(x);
    return lax::rev(a, to_ints(dims, "rev", "dimensions"));
  });
  lax.def("slice", [](py::handle x, py::object start, py::object limit, py::object strides) {
    Array a = to_array(x);
    std::vector<int64_t> s = to_ints(start, "slice", "start_indices"),
                         l = to_ints(limit, "slice", "limit_indices"),
                         st = to_ints(strides, "slice", "strides");
    py::gil_scoped_release nogil;
    return lax::slice(a, s, l, st);
  });
  lax.def("slice_in_dim", [](py::handle x, py::handle start_, py::handle limit_, py::handle stride_,
                             py::handle axis_) {
    int64_t start = as_int(start_, "slice_in_dim", "start");
    int64_t limit = as_int(limit_, "slice_in_dim", "limit");
    int64_t stride = as_int(stride_, "slice_in_dim", "stride");
    int64_t axis = as_int(axis_, "slice_in_dim", "axis");

    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return lax::slice_in_dim(a, start, limit, stride, axis);
  });
  lax.def("index_in_dim", [](py::handle x, py::handle index_, py::handle axis_, bool keepdims) {
    int64_t index = as_int(index_, "index_in_dim", "index");
    int64_t axis = as_int(axis_, "index_in_dim", "axis");

    Array a = to_array(x);
    py::gil_scoped_release nogil;
    return lax::index_in_dim(a, index, axis, keepdims);
  });
  lax.def("dynamic_slice", [](py::handle x, py::sequence starts, py::object sizes) {
    Array a = to_array(x);
    std::vector<Array> s = arrays_of(starts);
    std::vector<int64_t> n = to_ints(sizes, "dynamic_slice", "slice_sizes");
    py::gil_scoped_release nogil;
    return lax::dynamic_slice(a, s, n);
  });
  lax.def("dynamic_update_slice", [](py::handle x, py::handle update, py::sequence starts) {
    Array a = to_array(x), u = to_array(update);
    std::vector<Array> s = arrays_of(starts);
    py::gil_scoped_release nogil;
    return lax::dynamic_update_slice(a, u, s);
  });
  lax.def("dynamic_slice_in_dim",
          [](py::handle x, py::handle start, py::handle size_, py::handle axis_) {
            int64_t size = as_int(size_, "dynamic_slice_in_dim", "size");
            int64_t axis = as_int(axis_, "dynamic_slice_in_dim", "axis");

            Array a = to_array(x), s = to_array(start);
            py::gil_scoped_release nogil;
            return lax::dynamic_slice_in_dim(a, s, size, axis);
          });
  lax.def("dynamic_index_in_dim",
          [](py::handle x, py::handle index, py::handle axis_, bool keepdims) {
            int64_t axis = as_int(axis_, "dynamic_index_in_dim", "axis");

            Array a = to_array(x), i = to_array(index);
            py::gil_scoped_release nogil;
            return lax::dynamic_index_in_dim(a, i, axis, keepdims);
          });
  lax.def("dynamic_update_slice_in_dim",
          [](py::handle x, py::handle update, py::handle start, py::handle axis_) {
            int64_t axis = as_int(axis_, "dynamic_update_slice_in_dim", "axis");

            Array a = to_array(x), u = to_array(update), s = to_array(start);
            py::gil_scoped_release nogil;
            return lax::dynamic_update_slice_in_dim(a, u, s, axis);
          });
  lax.def("concatenate", [](py::sequence operands, py::handle dimension_) {
    int64_t dimension = as_int(dimension_, "concatenate", "dimension");

    std::vector<Array> xs = arrays_of(operands);
    py::gil_scoped_release nogil;
    return lax::concatenate(xs, dimension);
  });
  // padding_config: one (low, high, interior) triple per dimension.
  lax.def("pad", [](py::handle x, py::handle value, py::sequence config) {
    Array a = to_array(x), v = to_array(value);
    std::vector<lax::PadConfig> cfg;
    for (py::handle t : config) {
      py::sequence s = py::reinterpret_borrow<py::sequence>(t);
      if (s.size() != 3)
        throw ValueError("[pad] padding_config entries must be (low, high, interior) triples");
      cfg.push_back({as_int(s[0], "pad", "padding_config low"),
                     as_int(s[1], "pad", "padding_config high"),
                     as_int(s[2], "pad", "padding_config interior")});
    }
    py::gil_scoped_release nogil;
    return lax::pad(a, v, cfg);
  });
}

}  // namespace

void bind_lax_ext(py::module_& m) {
  py::module_ lax = m.attr("lax");
  bind_math(lax);
  bind_reductions(lax);
  bind_slicing(lax);
}

}  // namespace tessera::python
