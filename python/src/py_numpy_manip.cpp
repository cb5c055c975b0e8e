// tessera.numpy's array manipulation, padding, diagonals, products and indexing helpers
// (numpy_manip.h), bound into the `numpy` submodule by bind_numpy (py_numpy.cpp).
#include <string>
#include <utility>

#include "py_common.h"

namespace tessera::python {

void bind_numpy_manip(py::module_& np) {
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
         [](py::sequence xs) { return to_list(numpy::broadcast_arrays(arrays_of(xs))); });
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
      return to_list(numpy::split(a, to_ints(ios, "split", "indices_or_sections"), axis));
    return to_list(numpy::split(a, as_int(ios, "split", "indices_or_sections"), axis));
  });
  np.def("array_split", [](py::handle x, py::handle sections_, py::handle axis_) {
    int64_t sections = as_int(sections_, "array_split", "sections");
    int64_t axis = as_int(axis_, "array_split", "axis");

    return to_list(numpy::array_split(to_array(x), sections, axis));
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
  // pad_width, constant_values, end_values, stat_length: lists of one (before, after) pair per
  // axis (python/tessera/numpy broadcasts NumPy's forms); stat_length may be None.
  np.def("pad", [](py::handle x, py::sequence widths, std::string mode, py::sequence cvs,
                   py::sequence evs, py::object stat_length, std::string reflect_type) {
    Array a = to_array(x);
    auto int_pairs = [](const py::sequence& seq, const char* what) {
      numpy::PadWidth out;
      for (py::handle p : seq) {
        py::sequence s = py::reinterpret_borrow<py::sequence>(p);
        out.emplace_back(as_int(s[0], "pad", what), as_int(s[1], "pad", what));
      }
      return out;
    };
    auto value_pairs = [](const py::sequence& seq) {
      numpy::PadValues out;
      for (py::handle p : seq) {
        py::sequence s = py::reinterpret_borrow<py::sequence>(p);
        out.emplace_back(s[0].cast<double>(), s[1].cast<double>());
      }
      return out;
    };
    numpy::PadOptions o;
    o.mode = std::move(mode);
    o.reflect_type = std::move(reflect_type);
    o.constant_values = value_pairs(cvs);
    o.end_values = value_pairs(evs);
    if (!stat_length.is_none())
      o.stat_length = int_pairs(py::reinterpret_borrow<py::sequence>(stat_length), "stat_length");
    numpy::PadWidth pw = int_pairs(widths, "pad_width");
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
    return to_list(numpy::meshgrid(arrays_of(xs), indexing, sparse));
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

}  // namespace tessera::python
