// Integers from Python (py_common.h's as_int/to_shape/to_axes): every binding that takes a
// shape, index, axis or size goes through here, so a huge or non-integer value raises a typed
// error naming the op and the value instead of pybind11's "Unable to cast".
#include <string>

#include "py_common.h"

namespace tessera::python {

namespace {

std::string repr_of(py::handle h) {
  std::string r = py::repr(h);
  if (r.size() > 80) r = r.substr(0, 77) + "...";
  return r;
}

[[noreturn]] void raise_py(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw py::error_already_set();
}

}  // namespace

int64_t as_int(py::handle h, const char* op, const char* what) {
  if (py::isinstance<Array>(h) && h.cast<const Array&>().is_tracer()) {
    const Tracer& t = *h.cast<const Array&>().tracer();
    std::string msg = std::string("[") + op + "] " + what +
                      " must be a concrete integer; got a traced value (" + t.str() + ")";
    const std::string origin = t.origin();
    if (!origin.empty()) msg += "\n" + origin;
    throw TracerIntegerConversionError(msg);
  }
  if (PyFloat_Check(h.ptr()) || !PyIndex_Check(h.ptr()))
    raise_py(PyExc_TypeError, std::string("[") + op + "] " + what +
                                  " must be an integer (an int or an object with __index__); got " +
                                  repr_of(h) + " of type " + repr_of(py::type::of(h)));
  PyObject* i = PyNumber_Index(h.ptr());
  if (i == nullptr) throw py::error_already_set();
  py::object v = py::reinterpret_steal<py::object>(i);
  int overflow = 0;
  long long r = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0)
    raise_py(PyExc_OverflowError, std::string("[") + op + "] " + what + " " + repr_of(v) +
                                      " does not fit in a 64-bit signed integer; Tessera "
                                      "shapes, indices and axes must lie in [-2**63, 2**63 - 1]");
  if (r == -1 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<int64_t>(r);
}

Shape to_shape(const py::object& s, const char* op, const char* what) {
  if (py::isinstance<py::str>(s) || py::isinstance<py::bytes>(s) || s.is_none())
    raise_py(PyExc_TypeError, std::string("[") + op + "] " + what +
                                  " must be an int or a sequence of ints; got " + repr_of(s));
  // A 0-d Array is one integer (a traced one raises TracerIntegerConversionError naming the op);
  // an n-d traced Array cannot be iterated into concrete sizes.
  if (py::isinstance<Array>(s) && s.cast<const Array&>().ndim() == 0)
    return Shape{as_int(s, op, what)};
  if (py::isinstance<Array>(s) && s.cast<const Array&>().is_tracer())
    return Shape{as_int(s, op, what)};
  if (!py::isinstance<py::sequence>(s)) return Shape{as_int(s, op, what)};
  Shape out;
  std::string entry = std::string(what) + " entry";
  for (py::handle h : s) out.push_back(as_int(h, op, entry.c_str()));
  return out;
}

std::optional<std::vector<int64_t>> to_axes(const py::object& a, const char* op, const char* what) {
  if (a.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(a) || py::isinstance<py::bytes>(a))
    raise_py(PyExc_TypeError, std::string("[") + op + "] " + what +
                                  " must be an int or a sequence of ints; got " + repr_of(a));
  if (py::isinstance<Array>(a) &&
      (a.cast<const Array&>().ndim() == 0 || a.cast<const Array&>().is_tracer()))
    return std::vector<int64_t>{as_int(a, op, what)};
  if (!py::isinstance<py::sequence>(a)) return std::vector<int64_t>{as_int(a, op, what)};
  std::vector<int64_t> out;
  for (py::handle h : a) out.push_back(as_int(h, op, what));
  return out;
}

}  // namespace tessera::python
