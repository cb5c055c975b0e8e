// tessera.lax's C++ functions (the `lax` submodule): the arithmetic and structural core,
// elementwise math, special functions and bitwise ops, reductions (lax.reduce with a Python
// computation), slicing, concatenation and padding. python/tessera/lax.py gives them jax.lax's
// signatures. Arguments are converted with to_array; the GIL is released around the C++ work.
#include <string>

#include "py_common.h"
#include "tessera/lax_parallel.h"

namespace tessera::python {

namespace {

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

void bind_lax_core(py::module_& lax) {
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
              py::object r = computation(to_list(accs), to_list(values));
              if (!py::isinstance<py::sequence>(r))
                throw TypeError("[reduce] the computation must return a list of arrays");
              return to_arrays(r);
            };
            return to_list(lax::reduce(arrays_of(operands), arrays_of(inits), body,
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

// Collectives over named axes (tessera/lax_parallel.h); python/tessera/lax/_parallel.py maps them
// over pytrees.
void bind_parallel(py::module_& lax) {
  using Names = std::vector<std::string>;
  lax.def("psum", [](const Array& x, const Names& n) { return lax::psum(x, n); });
  lax.def("pmax", [](const Array& x, const Names& n) { return lax::pmax(x, n); });
  lax.def("pmin", [](const Array& x, const Names& n) { return lax::pmin(x, n); });
  lax.def("pmean", [](const Array& x, const Names& n) { return lax::pmean(x, n); });
  lax.def("all_gather", [](const Array& x, const std::string& name, int64_t axis, bool tiled) {
    return lax::all_gather(x, name, axis, tiled);
  });
  lax.def("axis_index", [](const std::string& name) { return lax::axis_index(name); });
  lax.def("axis_size", [](const std::string& name) { return lax::axis_size(name); });
  lax.def("psum_scatter", [](const Array& x, const std::string& name, int64_t dim, bool tiled) {
    return lax::psum_scatter(x, name, dim, tiled);
  });
  lax.def("ppermute", [](const Array& x, const std::string& name,
                         const std::vector<std::pair<int64_t, int64_t>>& perm) {
    return lax::ppermute(x, name, perm);
  });
}

void bind_lax(py::module_& m) {
  py::module_ lax = m.def_submodule("lax", "tessera.lax's C++ functions");
  bind_lax_core(lax);
  bind_parallel(lax);
  bind_math(lax);
  bind_reductions(lax);
  bind_slicing(lax);
}

}  // namespace tessera::python
