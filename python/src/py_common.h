// Shared pieces of the Python extension: conversions between Python objects and Arrays/DTypes.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <span>

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
// The arrays of any iterable of array-likes (to_array of each).
inline std::vector<Array> arrays_of(py::handle xs) {
  std::vector<Array> out;
  for (py::handle h : xs) out.push_back(to_array(h));
  return out;
}

// A zero-copy view of a buffer handed to NumPy or to a DLPack consumer, counted per buffer while
// it lives (thread-safe: a consumer may release a DLPack tensor on any thread). jit refuses to
// donate a buffer with a live view (JAX's warning), so the view never sees freed memory.
class ExternalView {
 public:
  explicit ExternalView(std::shared_ptr<Buffer> buffer);
  ~ExternalView();
  ExternalView(const ExternalView&) = delete;
  ExternalView& operator=(const ExternalView&) = delete;
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

 private:
  std::shared_ptr<Buffer> buffer_;
};
// The live external views of a buffer.
int external_views(const Buffer* buffer);

// A read-only NumPy view of a concrete array (bfloat16: a float32 copy; float0: bool zeros).
py::array to_numpy(const Array& a);

// A Python callable shared by the std::functions the core copies and stores (a staged rule or
// a traced body may outlive the call): copies need no GIL; the last owner takes it to release,
// and leaks instead when the interpreter is gone.
using PyFn = std::shared_ptr<py::function>;
inline PyFn share(py::function f) {
  return PyFn(new py::function(std::move(f)), [](py::function* p) {
    if (!Py_IsInitialized()) return;
    if (PyGILState_Check()) {  // the common case: released by Python code, GIL held
      delete p;
      return;
    }
    py::gil_scoped_acquire gil;
    delete p;
  });
}

// The arrays of what a flattened function or rule returned: a sequence of array-likes, else
// TypeError "[op] the flattened <what> must return a list of arrays". None is an undefined
// Array (a symbolic zero) where none_ok, else TypeError.
std::vector<Array> result_arrays(py::handle r, const char* op, const char* what = "function",
                                 bool none_ok = false);
// The one conversion of a Python function over a flat list of arrays into a flat::Fun: the GIL
// is taken per call and the function is shared (copies of the flat::Fun need no GIL).
flat::Fun flat_fun(py::function f, const char* op);

// A Python list of arrays; undefined Arrays (symbolic zeros) become None.
inline py::list to_list(std::span<const Array> xs) {
  py::list l(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) l[i] = xs[i].defined() ? py::cast(xs[i]) : py::none();
  return l;
}

// The one converter of integers from Python (shapes, indices, axes, sizes, slice bounds): any
// object with __index__. Others raise TypeError, ints outside int64 OverflowError, both naming
// op, what the integer is for, and the value.
int64_t as_int(py::handle h, const char* op, const char* what = "argument");
// A shape from an int or a sequence of ints.
Shape to_shape(const py::object& s, const char* op, const char* what = "shape");
// None, an int or a sequence of ints (axes, dims, indices).
std::optional<std::vector<int64_t>> to_axes(const py::object& a, const char* op,
                                            const char* what = "axis");
inline std::vector<int64_t> to_ints(const py::object& a, const char* op,
                                    const char* what = "argument") {
  return to_axes(a, op, what).value_or(std::vector<int64_t>{});
}
// An optional int: None gives nullopt.
inline std::optional<int64_t> opt_int(py::handle h, const char* op, const char* what = "argument") {
  if (h.is_none()) return std::nullopt;
  return as_int(h, op, what);
}

// Argument helpers for the numpy/lax bindings.
inline std::optional<DType> opt_dtype(const py::object& d) {
  if (d.is_none()) return std::nullopt;
  return dtype_from_py(d);
}

// Binds f(x), f(x, y) or f(x, y, z) with the arguments converted by to_array and the GIL
// released around the C++ work.
template <class R, class... A>
void def_fn(py::module_& m, const char* name, R (*f)(A...)) {
  if constexpr (sizeof...(A) == 1) {
    m.def(name, [f](py::handle x) {
      Array a = to_array(x);
      py::gil_scoped_release nogil;
      return f(a);
    });
  } else if constexpr (sizeof...(A) == 2) {
    m.def(name, [f](py::handle x, py::handle y) {
      Array a = to_array(x), b = to_array(y);
      py::gil_scoped_release nogil;
      return f(a, b);
    });
  } else {
    static_assert(sizeof...(A) == 3);
    m.def(name, [f](py::handle x, py::handle y, py::handle z) {
      Array a = to_array(x), b = to_array(y), c = to_array(z);
      py::gil_scoped_release nogil;
      return f(a, b, c);
    });
  }
}

void bind_errors(py::module_& m);
void bind_array(py::module_& m);
void bind_indexing(py::module_& m);  // .at, take, lax.gather/scatter (py_indexing.cpp)
// A Python index key (an item or a tuple of them) as Index values (py_array.cpp).
std::vector<Index> index_items(py::handle key);
void bind_dlpack(py::module_& m, py::class_<Array>& cls);
void bind_numpy(py::module_& m);              // the numpy submodule (py_numpy*.cpp)
void bind_lax(py::module_& m);                // the lax submodule (py_lax.cpp)
void bind_numpy_manip(py::module_& np);       // py_numpy_manip.cpp, called by bind_numpy
void bind_numpy_reductions(py::module_& np);  // py_numpy_reductions.cpp, called by bind_numpy
void bind_transforms(py::module_& m);
// ClosedJaxpr's JAX-style views: .jaxpr, .eqns, vars, literals, params (py_jaxpr.cpp).
void bind_jaxpr_views(py::module_& m, py::class_<ClosedJaxpr>& cls);
// A param value as a Python value: sub-jaxprs as ClosedJaxprs, records and tuples as tuples,
// dtypes as their names, opaque params as their text (py_jaxpr.cpp).
py::object param_to_py(const ParamValue& v);
// custom_jvp_call / custom_vjp_call over Python rules (py_custom.cpp).
void bind_custom(py::module_& m);
void bind_callbacks(py::module_& m);     // debug/pure/io callbacks (py_callbacks.cpp)
void bind_checkpoint(py::module_& m);    // jax.checkpoint and its policies (py_checkpoint.cpp)
void bind_control_flow(py::module_& m);  // lax control flow (py_control_flow.cpp)
void bind_cumulative(py::module_& m);    // lax.associative_scan, cumulative ops (py_cumulative.cpp)
void bind_sort(py::module_& m);          // lax.sort, jnp sorting and quantiles (py_sort.cpp)
void bind_linalg_solve(py::module_& m);  // linalg solve family (py_linalg_solve.cpp)
void bind_random(py::module_& m);        // jax.random (py_random.cpp)
void bind_nn(py::module_& m);            // jax.nn's functions (py_nn.cpp)
void bind_nn_initializers(py::module_& m);  // jax.nn.initializers (py_nn_initializers.cpp)
void bind_devices(py::module_& m);          // memory_stats, set_memory_limit (py_devices.cpp)
void bind_tree(py::module_& m);             // pytrees on the C++ TreeDef (py_tree.cpp)
void bind_config(py::module_& m);
void bind_jit(py::module_& m);  // jax.jit's trace cache (py_jit.cpp)        // jax.config over the
                                // flag registry (py_config.cpp)

}  // namespace tessera::python
