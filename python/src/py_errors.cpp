// C++ exceptions as Python exceptions with the same messages: TypeError, ValueError,
// IndexError, and JAX's ConcretizationTypeError (a TypeError) and UnexpectedTracerError.
#include <cstring>
#include <string>
#include <string_view>

#include "py_common.h"

namespace tessera::python {

namespace {

// The core's messages name C++ spellings where they suggest a fix (numpy::where, nullopt);
// Python users see the Python names instead. Ordered: longer spellings first.
constexpr std::pair<std::string_view, std::string_view> kPythonNames[] = {
    {"tessera::numpy::", "jnp."},
    {"tessera::numpy", "jax.numpy"},
    {"tessera::lax::", "lax."},
    {"numpy::", "jnp."},
    {"lax::", "lax."},
    {"None (nullopt)", "None"},
    {"std::nullopt", "None"},
    {"nullopt", "None"},
    {"Python/C++ control flow", "Python control flow"},
};

std::string python_names(std::string s) {
  for (const auto& [from, to] : kPythonNames) {
    for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
      s.replace(pos, from.size(), to);
  }
  return s;
}

// Sets a Python exception from a C++ message that may hold bytes that are not UTF-8 (a user's
// subscript or name echoed back): they are backslash-escaped instead of losing the message.
void set_error(PyObject* type, const char* raw) {
  const std::string text = python_names(raw);
  const char* what = text.c_str();
  PyObject* msg =
      PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (msg == nullptr) {
    PyErr_Clear();
    PyErr_SetString(type, "(message not decodable)");
    return;
  }
  PyErr_SetObject(type, msg);
  Py_DECREF(msg);
}

}  // namespace

void bind_errors(py::module_& m) {
  static py::exception<ConcretizationError> concretization(m, "ConcretizationTypeError",
                                                           PyExc_TypeError);
  static py::exception<TracerBoolConversionError> bool_conversion(m, "TracerBoolConversionError",
                                                                  concretization.ptr());
  static py::exception<TracerIntegerConversionError> int_conversion(
      m, "TracerIntegerConversionError", PyExc_TypeError);
  static py::exception<TracerArrayConversionError> array_conversion(m, "TracerArrayConversionError",
                                                                    PyExc_TypeError);
  static py::exception<UnexpectedTracerError> unexpected(m, "UnexpectedTracerError",
                                                         PyExc_Exception);
  static py::exception<InternalError> internal(m, "TesseraInternalError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const TracerBoolConversionError& e) {
      set_error(bool_conversion.ptr(), e.what());
    } catch (const ConcretizationError& e) {
      set_error(concretization.ptr(), e.what());
    } catch (const TracerIntegerConversionError& e) {
      set_error(int_conversion.ptr(), e.what());
    } catch (const TracerArrayConversionError& e) {
      set_error(array_conversion.ptr(), e.what());
    } catch (const UnexpectedTracerError& e) {
      set_error(unexpected.ptr(), e.what());
    } catch (const IndexError& e) {
      set_error(PyExc_IndexError, e.what());
    } catch (const OverflowError& e) {
      set_error(PyExc_OverflowError, e.what());
    } catch (const OutOfMemoryError& e) {
      set_error(PyExc_MemoryError, e.what());
    } catch (const ValueError& e) {
      // A deleted or donated array: JAX raises RuntimeError ("Array has been deleted ...").
      const bool deleted = std::strstr(e.what(), "Array has been deleted with shape=") != nullptr;
      set_error(deleted ? PyExc_RuntimeError : PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      set_error(PyExc_TypeError, e.what());
    } catch (const NameError& e) {
      set_error(PyExc_NameError, e.what());
    } catch (const NotImplementedError& e) {
      set_error(PyExc_NotImplementedError, e.what());
    } catch (const InternalError& e) {
      set_error(internal.ptr(), e.what());
    }
  });
}

}  // namespace tessera::python
