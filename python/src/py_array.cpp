// The Array class in Python and the NumPy interop (zero-copy both ways where it is safe).
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/array_errors.h"
#include "py_common.h"

namespace tessera::python {

namespace {

struct DTypeEntry {
  DType dtype;
  const char* numpy_name;  // nullptr: no NumPy dtype
};
constexpr DTypeEntry kDTypes[] = {
    {DType::kBool, "bool"},       {DType::kInt8, "int8"},       {DType::kInt16, "int16"},
    {DType::kInt32, "int32"},     {DType::kInt64, "int64"},     {DType::kUInt8, "uint8"},
    {DType::kUInt16, "uint16"},   {DType::kUInt32, "uint32"},   {DType::kUInt64, "uint64"},
    {DType::kFloat16, "float16"}, {DType::kFloat32, "float32"}, {DType::kFloat64, "float64"},
    {DType::kBFloat16, nullptr},  {DType::kFloat0, nullptr},
};

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeEntry& e : kDTypes)
    if (dtype_name(e.dtype) == name) return e.dtype;
  return std::nullopt;
}

// The buffer of a NumPy array's memory, kept alive by a reference to the array.
std::shared_ptr<Buffer> external_buffer(const py::array& a) {
  auto* owner = new py::object(a);
  std::shared_ptr<void> keep(owner, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
  return Buffer::external(nullptr, const_cast<void*>(a.data()), static_cast<size_t>(a.nbytes()),
                          std::move(keep));
}

std::mutex g_views_mu;
std::unordered_map<const Buffer*, int>& view_counts() {
  static auto* m = new std::unordered_map<const Buffer*, int>;
  return *m;
}

// The capsule that np.asarray(tessera_array) views keep as their base: it owns a reference to
// the Array's buffer and, by its name, marks memory that is never written.
constexpr const char* kBufferCapsule = "tessera.buffer";

void delete_buffer_capsule(PyObject* cap) {
  delete static_cast<ExternalView*>(PyCapsule_GetPointer(cap, kBufferCapsule));
}

py::object buffer_capsule(const std::shared_ptr<Buffer>& buf) {
  auto* keep = new ExternalView(buf);
  PyObject* cap = PyCapsule_New(keep, kBufferCapsule, delete_buffer_capsule);
  if (cap == nullptr) {
    delete keep;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

// Whether nobody can ever write `arr`'s memory, so that an Array may alias it. NumPy lets
// setflags(write=True) succeed on an array that owns its data or whose base chain reaches a
// writeable array or buffer (its _IsWriteable); so alias only read-only views, all the way
// down, of memory that is immutable: bytes, or a Tessera Array's buffer. *tessera_buffer is
// set when the chain ends in an Array's buffer.
bool immutable_memory(const py::array& arr, std::shared_ptr<Buffer>* tessera_buffer) {
  PyObject* obj = arr.ptr();
  while (true) {
    if (py::isinstance<py::array>(obj)) {
      auto* proxy = py::detail::array_proxy(obj);
      if ((proxy->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) != 0) return false;
      if ((proxy->flags & py::detail::npy_api::NPY_ARRAY_OWNDATA_) != 0) return false;
      if (proxy->base == nullptr) return false;
      obj = proxy->base;
    } else if (PyMemoryView_Check(obj)) {
      Py_buffer* view = PyMemoryView_GET_BUFFER(obj);
      if (!view->readonly || view->obj == nullptr) return false;
      obj = view->obj;
    } else if (PyCapsule_IsValid(obj, kBufferCapsule)) {
      *tessera_buffer =
          static_cast<ExternalView*>(PyCapsule_GetPointer(obj, kBufferCapsule))->buffer();
      return true;
    } else if (py::isinstance<Array>(obj)) {
      const Array& a = py::handle(obj).cast<const Array&>();
      if (a.is_tracer() || a.is_deleted()) return false;
      *tessera_buffer = a.buffer("asarray");
      return true;
    } else {
      return PyBytes_CheckExact(obj);
    }
  }
}

Shape shape_of(const py::array& a) {
  Shape s;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s.push_back(static_cast<int64_t>(a.shape(i)));
  return s;
}

}  // namespace

DType dtype_from_py(py::handle h) {
  if (py::isinstance<py::str>(h)) {
    std::string name = h.cast<std::string>();
    if (auto d = dtype_from_name(name)) return *d;
    return dtype_from_py(py::module_::import("numpy").attr("dtype")(h));
  }
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type))
    return x64_enabled() ? DType::kFloat64 : DType::kFloat32;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type))
    return x64_enabled() ? DType::kInt64 : DType::kInt32;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::kBool;
  if (py::isinstance<py::dtype>(h)) {
    std::string name = py::str(h.attr("name"));
    if (auto d = dtype_from_name(name)) return *d;
    throw TypeError("[dtype] NumPy dtype " + name + " is not supported by Tessera");
  }
  if (py::hasattr(h, "dtype") && py::isinstance<py::dtype>(h.attr("dtype")))
    return dtype_from_py(h.attr("dtype"));  // numpy scalar types (np.float32) and arrays
  if (py::hasattr(h, "name")) return dtype_from_py(py::str(h.attr("name")));
  if (py::isinstance<py::type>(h))
    return dtype_from_py(py::module_::import("numpy").attr("dtype")(h));
  throw TypeError("[dtype] cannot interpret " + std::string(py::repr(h)) + " as a dtype");
}

py::dtype numpy_dtype(DType d) {
  for (const DTypeEntry& e : kDTypes)
    if (e.dtype == d && e.numpy_name) return py::dtype(e.numpy_name);
  throw TypeError("[dtype] " + std::string(dtype_name(d)) + " has no NumPy dtype");
}

Array to_array(py::handle h, std::optional<DType> dtype) {
  if (py::isinstance<Array>(h)) {
    const Array& a = h.cast<const Array&>();
    if (dtype && a.dtype() != canonicalize_dtype(*dtype)) return numpy::asarray(a, *dtype);
    return a;
  }
  if (PyBool_Check(h.ptr())) {
    Array b = numpy::scalar(h.ptr() == Py_True ? 1.0 : 0.0, DType::kBool);
    return dtype ? numpy::asarray(b, *dtype) : b;
  }
  if (PyLong_CheckExact(h.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    // The range of the dtype it becomes (int32 without x64; the requested integer dtype).
    DType target =
        dtype ? canonicalize_dtype(*dtype) : (x64_enabled() ? DType::kInt64 : DType::kInt32);
    if (overflow == 0 && is_integer(target) && itemsize(target) < 8) {
      IInfo ii = iinfo(target);
      if (v < ii.min || v > static_cast<long long>(ii.max)) overflow = 1;
    }
    if (overflow != 0 && is_integer(target)) {
      PyErr_SetString(PyExc_OverflowError,
                      ("Python int " + std::string(py::str(h)) + " too large to convert to " +
                       std::string(dtype_name(target)))
                          .c_str());
      throw py::error_already_set();
    }
    if (overflow != 0) {
      PyErr_SetString(PyExc_OverflowError, ("Python int " + std::string(py::str(h)) +
                                            " is too large to convert to a "
                                            "Tessera integer")
                                               .c_str());
      throw py::error_already_set();
    }
    Array a = numpy::weak_scalar_int(v);
    return dtype ? numpy::asarray(a, *dtype) : a;
  }
  if (PyFloat_CheckExact(h.ptr())) {
    Array a = numpy::weak_scalar(PyFloat_AsDouble(h.ptr()));
    return dtype ? numpy::asarray(a, *dtype) : a;
  }
  // NumPy arrays, NumPy scalars, nested lists/tuples, objects with __array__.
  py::module_ np = py::module_::import("numpy");
  py::array arr = py::reinterpret_borrow<py::object>(h);
  if (!py::isinstance<py::array>(h)) arr = np.attr("asarray")(h);
  if (!arr.dtype().attr("names").is_none() && py::tuple(arr.dtype().attr("names")).size() == 1 &&
      std::string(py::str(py::tuple(arr.dtype().attr("names"))[0])) == "float0") {
    // NumPy's stand-in for JAX's float0 (np.zeros(shape, jax.dtypes.float0)).
    return empty_array(Aval{shape_of(arr), DType::kFloat0, false}, "asarray");
  }
  std::string np_name = py::str(arr.dtype().attr("name"));
  if (np_name == "object")
    throw TypeError("[asarray] cannot convert " + std::string(py::repr(py::type::of(h))) +
                    " to a Tessera array (it became a NumPy object array)");
  DType src = dtype_from_py(arr.dtype());
  DType want = canonicalize_dtype(dtype ? *dtype : src);
  const bool aligned = (reinterpret_cast<uintptr_t>(arr.data()) % 16) == 0;
  const bool contiguous = (arr.flags() & py::array::c_style) != 0;
  const bool writeable = arr.writeable();
  Aval aval{shape_of(arr), want, false};
  std::shared_ptr<Buffer> tessera_buffer;
  if (want == src && contiguous && aligned && !writeable &&
      immutable_memory(arr, &tessera_buffer)) {
    // Memory nobody can write cannot change under us: alias it (zero copy). A whole view of an
    // Array's buffer (np.asarray round trip) shares the buffer itself, with no Python owner.
    if (tessera_buffer && tessera_buffer->data() == arr.data() &&
        tessera_buffer->nbytes() == static_cast<size_t>(arr.nbytes()))
      return Array(aval, std::move(tessera_buffer));
    return Array(aval, external_buffer(arr));
  }
  if (want != src || !contiguous) {
    if (want == DType::kBFloat16) {
      Array f = to_array(np.attr("array")(arr, "float32", py::arg("order") = "C"));
      return numpy::asarray(f, DType::kBFloat16);
    }
    arr = np.attr("ascontiguousarray")(arr, numpy_dtype(want));
  }
  return array_from_host(aval, arr.data());
}

std::vector<Array> to_arrays(const py::sequence& s) {
  std::vector<Array> out;
  out.reserve(s.size());
  for (py::handle h : s) out.push_back(to_array(h));
  return out;
}

namespace {
// NumPy conversion of a tracer would silently drop it from the computation (JAX raises
// TracerArrayConversionError): refuse, even when a concrete primal is known.
void check_not_tracer(const Array& a) {
  if (a.is_tracer()) throw TracerArrayConversionError(array_conversion_message(*a.tracer()));
}

// A Python conversion (float(x), int(x), x.__index__()) of a traced value without a known
// concrete value: JAX's ConcretizationTypeError naming the function, or for __index__ its
// TracerIntegerConversionError.
void check_concrete(const Array& a, const char* fn) {
  if (!a.is_tracer() || a.tracer()->concrete_value() != nullptr) return;
  if (std::string_view(fn) == "__index__")
    throw TracerIntegerConversionError(integer_conversion_message(*a.tracer(), fn));
  throw ConcretizationError(concretization_message(*a.tracer(), fn));
}
}  // namespace

py::array to_numpy(const Array& a) {
  check_not_tracer(a);
  py::module_ np = py::module_::import("numpy");
  py::tuple shape(a.ndim());
  for (int64_t i = 0; i < a.ndim(); ++i) shape[i] = a.shape()[i];
  if (a.dtype() == DType::kFloat0) return np.attr("zeros")(shape, "bool");
  if (a.dtype() == DType::kBFloat16) {
    // NumPy 1.24 has no bfloat16 (and Debian 12 no ml_dtypes): a float32 copy, exact.
    return to_numpy(numpy::asarray(a, DType::kFloat32));
  }
  const std::shared_ptr<Buffer>& buf = a.buffer("__array__");
  py::object base = buffer_capsule(buf);
  std::vector<py::ssize_t> dims(a.shape().begin(), a.shape().end());
  py::array out(numpy_dtype(a.dtype()), dims, buf->data(), base);
  // Arrays are immutable: the view is read-only.
  py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

namespace {

// The buffer protocol, written against CPython directly: pybind11 2.10's getbuffer cannot
// report errors (an exception terminates the process), and bfloat16/float0 arrays and tracers
// must raise BufferError. Views are read-only; `internal` keeps the buffer alive.
struct BufferView {
  std::shared_ptr<Buffer> buffer;
  std::unique_ptr<ExternalView> counted;  // counts the view while it lives
  std::vector<Py_ssize_t> shape, strides;
  std::string format;
};

int array_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    const Array& a = py::handle(obj).cast<const Array&>();
    if (a.is_tracer()) {
      PyErr_SetString(PyExc_BufferError, "a traced array has no memory to export");
      return -1;
    }
    if (a.dtype() == DType::kBFloat16 || a.dtype() == DType::kFloat0) {
      PyErr_SetString(PyExc_BufferError,
                      ("Tessera " + std::string(dtype_name(a.dtype())) +
                       " arrays do not export the buffer protocol; use np.asarray (bfloat16 "
                       "becomes a float32 copy)")
                          .c_str());
      return -1;
    }
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
      PyErr_SetString(PyExc_BufferError, "Tessera arrays are immutable: the buffer is read-only");
      return -1;
    }
    auto* bv = new BufferView;
    bv->buffer = a.buffer("buffer protocol");
    bv->counted = std::make_unique<ExternalView>(bv->buffer);
    bv->shape.assign(a.shape().begin(), a.shape().end());
    bv->strides.resize(bv->shape.size());
    Py_ssize_t st = static_cast<Py_ssize_t>(itemsize(a.dtype()));
    for (size_t i = bv->shape.size(); i-- > 0;) {
      bv->strides[i] = st;
      st *= bv->shape[i];
    }
    bv->format =
        a.dtype() == DType::kBool ? "?" : std::string(py::str(numpy_dtype(a.dtype()).attr("char")));
    view->buf = bv->buffer->data();
    view->obj = obj;
    Py_INCREF(obj);
    view->len = static_cast<Py_ssize_t>(a.nbytes());
    view->itemsize = static_cast<Py_ssize_t>(itemsize(a.dtype()));
    view->readonly = 1;
    view->ndim = static_cast<int>(a.ndim());
    view->format = (flags & PyBUF_FORMAT) ? bv->format.data() : nullptr;
    view->shape = (flags & PyBUF_ND) ? bv->shape.data() : nullptr;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? bv->strides.data() : nullptr;
    view->suboffsets = nullptr;
    view->internal = bv;
    return 0;
  } catch (const std::exception& e) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
}

void array_releasebuffer(PyObject*, Py_buffer* view) {
  delete static_cast<BufferView*>(view->internal);
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = s[i];
  return t;
}

// One item of a Python index expression (NumPy's basic indexing; tessera/index.h). Integer-array
// and boolean indices become Arrays, for which numpy::getitem raises its IndexError.
Index index_item(py::handle h, size_t position) {
  if (h.is_none()) return newaxis;
  if (h.ptr() == Py_Ellipsis) return ellipsis;
  if (PySlice_Check(h.ptr())) {
    auto part = [](py::handle v) -> std::optional<int64_t> {
      if (v.is_none()) return std::nullopt;
      if (py::isinstance<Array>(v) && v.cast<const Array&>().is_tracer())
        throw ConcretizationError(
            "[getitem] slice bounds must be static (Python ints); got a traced value. Use "
            "lax.dynamic_slice for a slice at a traced position");
      if (!PyIndex_Check(v.ptr()))
        throw TypeError(
            "[getitem] slice indices must be integers or None or have an "
            "__index__ method; got " +
            std::string(py::repr(py::type::of(v))));
      return as_int(v, "getitem", "slice bound");
    };
    py::object s = py::reinterpret_borrow<py::object>(h);
    return Slice(part(s.attr("start")), part(s.attr("stop")), part(s.attr("step")));
  }
  auto reject_float = [position](DType d) {
    if (!is_integer(d) && !is_bool(d))
      throw TypeError(
          "[getitem] indexers must have an integer or boolean type; got an indexer "
          "of dtype " +
          std::string(dtype_name(d)) + " at position " + std::to_string(position));
  };
  if (py::isinstance<Array>(h)) {
    const Array& a = h.cast<const Array&>();
    reject_float(a.dtype());
    return Index(a);
  }
  if (PyBool_Check(h.ptr())) return Index(to_array(h));  // a boolean mask: IndexError
  if (PyLong_Check(h.ptr())) return Index(as_int(h, "getitem", "index"));
  if (py::isinstance<py::array>(h)) {  // NumPy arrays (rank 0 included) index as arrays
    Array a = to_array(h);
    reject_float(a.dtype());
    return Index(a);
  }
  if (PyFloat_Check(h.ptr()) || py::isinstance(h, py::module_::import("numpy").attr("floating")))
    reject_float(DType::kFloat32);
  if (PyIndex_Check(h.ptr()))
    return Index(as_int(h, "getitem", "index"));  // NumPy integers, __index__ objects
  if (py::isinstance<py::sequence>(h) && !py::isinstance<py::str>(h)) {
    Array a = to_array(h);  // a list: integer-array (advanced) indexing
    reject_float(a.dtype());
    return Index(a);
  }
  throw IndexError(
      "[getitem] only integers, slices (`:`), ellipsis (`...`), None (newaxis) and "
      "integer or boolean arrays are valid indices; got " +
      std::string(py::repr(py::type::of(h))) + " at position " + std::to_string(position));
}

}  // namespace

std::vector<Index> index_items(py::handle key) {
  std::vector<Index> idx;
  if (PyTuple_Check(key.ptr())) {
    size_t i = 0;
    for (py::handle h : key) idx.push_back(index_item(h, i++));
  } else {
    idx.push_back(index_item(key, 0));
  }
  return idx;
}

void bind_array(py::module_& m) {
  py::class_<Array> cls(m, "Array", py::buffer_protocol(), py::dynamic_attr());
  cls.def_property_readonly("shape", [](const Array& a) { return shape_tuple(a.shape()); })
      .def_property_readonly("ndim", &Array::ndim)
      .def_property_readonly("size", &Array::size)
      .def_property_readonly("nbytes", [](const Array& a) { return a.nbytes(); })
      .def_property_readonly("_dtype_name",
                             [](const Array& a) { return std::string(dtype_name(a.dtype())); })
      .def_property_readonly("weak_type", &Array::weak_type)
      .def_property_readonly("_is_tracer", &Array::is_tracer)
      // The id of the device holding the buffer (Array.device / .devices() / .sharding in
      // array.py); a tracer has none and raises.
      .def_property_readonly("_device_id", [](const Array& a) { return a.device()->id(); })
      .def_property_readonly("_committed", &Array::committed)
      .def("is_deleted", &Array::is_deleted)
      .def("delete", &Array::delete_buffer)
      .def("block_until_ready", [](const Array& a) { return a; })
      .def("__repr__", &Array::repr)
      .def("__str__", &Array::str)
      .def("__len__",
           [](const Array& a) {
             if (a.ndim() == 0) throw TypeError("len() of unsized object (a rank-0 array)");
             return a.shape()[0];
           })
      .def("__getitem__",
           [](const Array& a, py::handle key) {
             std::vector<Index> idx = index_items(key);
             py::gil_scoped_release nogil;
             return numpy::getitem(a, idx);
           })
      .def("__bool__", [](const Array& a) { return static_cast<bool>(a); })
      .def("__float__",
           [](const Array& a) {
             check_concrete(a, "float");
             return a.item<double>();
           })
      .def("__int__",
           [](const Array& a) {
             check_concrete(a, "int");
             return a.item<int64_t>();
           })
      .def("__index__",
           [](const Array& a) {
             check_concrete(a, "__index__");
             if (!is_integer(a.dtype()) && !is_bool(a.dtype()))
               throw TypeError("[__index__] only integer arrays can be used as an index; got " +
                               a.aval().str());
             return a.item<int64_t>();
           })
      .def(
          "__array__",
          [](const Array& a, py::object dtype, py::object copy) {
            py::array v = to_numpy(a);
            if (!dtype.is_none()) v = v.attr("astype")(dtype);
            if (!copy.is_none() && copy.cast<bool>()) v = v.attr("copy")();
            return v;
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("_unsafe_buffer_pointer",
           [](const Array& a) { return reinterpret_cast<uintptr_t>(a.raw_data()); });
  // Operators in C++ (a Python-level wrapper costs ~1 µs per op). Operands other than arrays,
  // Python/NumPy scalars and NumPy arrays are declined with Python's NotImplemented sentinel
  // (the binary-operator protocol): the other operand's reflected method runs, and when it
  // declines too Python raises TypeError naming both types (tests/python/test_errors.py).
  using Bin = Array (*)(const numpy::ArrayLike&, const numpy::ArrayLike&);
  auto def_op = [&cls](const char* name, const char* rname, Bin f) {
    auto operand = [](py::handle h) {
      return py::isinstance<Array>(h) || PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) ||
             py::isinstance<py::array>(h) ||
             py::isinstance(h, py::module_::import("numpy").attr("generic"));
    };
    cls.def(name, [f, operand](const Array& a, py::handle b) -> py::object {
      if (!operand(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      Array y = to_array(b);
      py::gil_scoped_release nogil;
      Array r = f(a, y);
      py::gil_scoped_acquire gil;
      return py::cast(std::move(r));
    });
    if (rname) {
      cls.def(rname, [f, operand](const Array& a, py::handle b) -> py::object {
        if (!operand(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        Array x = to_array(b);
        py::gil_scoped_release nogil;
        Array r = f(x, a);
        py::gil_scoped_acquire gil;
        return py::cast(std::move(r));
      });
    }
  };
  def_op("__add__", "__radd__", numpy::add);
  def_op("__sub__", "__rsub__", numpy::subtract);
  def_op("__mul__", "__rmul__", numpy::multiply);
  def_op("__truediv__", "__rtruediv__", numpy::divide);
  def_op("__pow__", "__rpow__", numpy::power);
  def_op("__eq__", nullptr, numpy::equal);
  def_op("__ne__", nullptr, numpy::not_equal);
  def_op("__lt__", nullptr, numpy::less);
  def_op("__le__", nullptr, numpy::less_equal);
  def_op("__gt__", nullptr, numpy::greater);
  def_op("__ge__", nullptr, numpy::greater_equal);
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_as_buffer->bf_getbuffer = array_getbuffer;
  type->tp_as_buffer->bf_releasebuffer = array_releasebuffer;
  bind_dlpack(m, cls);

  m.def(
      "asarray",
      [](py::handle x, py::object dtype) {
        return to_array(
            x, dtype.is_none() ? std::nullopt : std::optional<DType>(dtype_from_py(dtype)));
      },
      py::arg("x"), py::arg("dtype") = py::none());
  m.def("to_numpy", &to_numpy);
  m.def("canonical_dtype_name",
        [](py::handle d) { return std::string(dtype_name(canonicalize_dtype(dtype_from_py(d)))); });
  m.def("set_x64", [](bool on) { set_x64_enabled(on); });
  m.def("x64_enabled", [] { return x64_enabled(); });
  m.def("result_type_name", [](py::args args) {
    std::vector<TypedDType> ts;
    for (py::handle h : args) {
      if (py::isinstance<Array>(h) || PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) ||
          PyBool_Check(h.ptr()) || py::isinstance<py::array>(h)) {
        Array a = to_array(h);
        ts.push_back({a.dtype(), a.weak_type()});
      } else {
        ts.push_back({dtype_from_py(h), false});
      }
    }
    return std::string(dtype_name(result_type(ts.data(), ts.size()).dtype));
  });
}

ExternalView::ExternalView(std::shared_ptr<Buffer> buffer) : buffer_(std::move(buffer)) {
  std::lock_guard<std::mutex> lock(g_views_mu);
  ++view_counts()[buffer_.get()];
}

ExternalView::~ExternalView() {
  std::lock_guard<std::mutex> lock(g_views_mu);
  auto it = view_counts().find(buffer_.get());
  if (it != view_counts().end() && --it->second == 0) view_counts().erase(it);
}

int external_views(const Buffer* buffer) {
  std::lock_guard<std::mutex> lock(g_views_mu);
  auto it = view_counts().find(buffer);
  return it == view_counts().end() ? 0 : it->second;
}

}  // namespace tessera::python
