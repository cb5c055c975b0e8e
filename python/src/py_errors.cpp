// C++ exceptions as Python exceptions with the same messages: TypeError, ValueError,
// IndexError, and JAX's ConcretizationTypeError (a TypeError) and UnexpectedTracerError.
#include "py_common.h"

namespace tessera::python {

void bind_errors(py::module_& m) {
  static py::exception<ConcretizationError> concretization(m, "ConcretizationTypeError",
                                                           PyExc_TypeError);
  static py::exception<UnexpectedTracerError> unexpected(m, "UnexpectedTracerError",
                                                         PyExc_Exception);
  static py::exception<InternalError> internal(m, "TesseraInternalError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConcretizationError& e) {
      concretization(e.what());
    } catch (const UnexpectedTracerError& e) {
      unexpected(e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const InternalError& e) {
      internal(e.what());
    }
  });
}

}  // namespace tessera::python
