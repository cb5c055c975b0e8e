// Shared pieces of the Python extension: conversions between Python objects and Arrays/DTypes.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "tessera/tessera.h"

namespace tessera::python {

namespace py = pybind11;

// DType from a Python dtype spec: a name ("float32"), a NumPy dtype or scalar type, Python's
// float/int/bool (the default float/int dtypes), or an object with a `name` attribute
// (tessera.numpy.bfloat16).
DType dtype_from_py(py::handle h);
// The NumPy dtype of d (bfloat16 and float0 have none: TypeError).
py::dtype numpy_dtype(DType d);

// An Array from any array-like: Arrays as they are; Python scalars weakly typed (bool strong);
// NumPy scalars strongly typed; NumPy arrays (and what np.asarray accepts) with JAX's dtype
// canonicalization, aliased when read-only, contiguous, 16-byte aligned and of a canonical
// dtype, copied otherwise (aliasing writeable memory would let NumPy mutate an immutable Array).
Array to_array(py::handle h, std::optional<DType> dtype = std::nullopt);
std::vector<Array> to_arrays(const py::sequence& s);

// A read-only NumPy view of a concrete array (bfloat16: a float32 copy; float0: bool zeros).
py::array to_numpy(const Array& a);

// An integer from any object with __index__ (int, NumPy integers, rank-0 integer arrays).
inline int64_t as_int(py::handle h) {
  PyObject* i = PyNumber_Index(h.ptr());
  if (i == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(i).cast<int64_t>();
}

void bind_errors(py::module_& m);
void bind_array(py::module_& m);
void bind_dlpack(py::module_& m, py::class_<Array>& cls);
void bind_ops(py::module_& m);
void bind_transforms(py::module_& m);

}  // namespace tessera::python
