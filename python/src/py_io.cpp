// tessera._tessera.io: .npy/.npz files (tessera/io.h) for tessera.numpy's save/load/savez/
// savez_compressed (python/tessera/numpy/_io.py). Paths and in-memory bytes (for file objects);
// the GIL is released while files are read, parsed and written.
#include <cstring>

#include "py_common.h"
#include "tessera/io.h"

namespace tessera::python {
namespace {

// The array np.save would write for `h`: a Tessera Array as it is; anything else through
// np.asarray with its exact dtype (np.save does not canonicalize: int64 stays int64), in native
// byte order and C order. Object, string, complex and structured arrays raise TypeError (Tessera
// never pickles: allow_pickle=False semantics).
Array savable(py::handle h, const char* op) {
  if (py::isinstance<Array>(h)) return h.cast<Array>();
  py::module_ np = py::module_::import("numpy");
  py::array x = np.attr("asarray")(h);
  py::dtype dt = x.dtype();
  const char kind = dt.kind();
  const std::string shown = py::str(dt).cast<std::string>();
  if (kind == 'O') {
    throw TypeError(op_message(op,
                               "object arrays cannot be saved: Tessera never pickles "
                               "(allow_pickle=False semantics); convert to a numeric dtype"));
  }
  if (!(kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f') ||
      dt.attr("fields").ptr() != Py_None || (kind == 'f' && dt.itemsize() > 8)) {
    throw TypeError(op_message(op, "dtype " + shown +
                                       " cannot be saved by Tessera (it saves bool, int, uint, "
                                       "float16/32/64 and bfloat16 arrays)"));
  }
  const DType d = dtype_from_py(dt);
  // (not ascontiguousarray: it makes 0-d arrays 1-d)
  py::array c = np.attr("asarray")(x, dt.attr("newbyteorder")("="), "C");
  Shape shape;
  for (py::ssize_t i = 0; i < c.ndim(); ++i) shape.push_back(static_cast<int64_t>(c.shape(i)));
  Array out = empty_array(Aval{shape, d, false}, op);
  if (out.nbytes()) std::memcpy(out.buffer(op)->data(), c.data(), out.nbytes());
  return out;
}

io::NamedArrays savable_items(const py::sequence& items, const char* op) {
  io::NamedArrays out;
  for (py::handle item : items) {
    auto pair = item.cast<py::tuple>();
    if (pair.size() != 2) throw_internal("python", "save_npz items must be (key, array) pairs");
    out.emplace_back(pair[0].cast<std::string>(), savable(pair[1], op));
  }
  return out;
}

// jnp.load's dtype rule: np.load's result through jnp.asarray, so 64-bit dtypes become 32-bit
// without x64.
Array canonical(Array a) {
  const DType want = canonicalize_dtype(a.dtype());
  return want == a.dtype() ? a : lax::convert_element_type(a, want);
}

std::span<const uint8_t> bytes_span(const py::bytes& b) {
  char* p = nullptr;
  Py_ssize_t n = 0;
  if (PyBytes_AsStringAndSize(b.ptr(), &p, &n) != 0) throw py::error_already_set();
  return {reinterpret_cast<const uint8_t*>(p), static_cast<size_t>(n)};
}

py::list named_list(io::NamedArrays arrays, bool canonicalize) {
  py::list out;
  for (auto& [key, a] : arrays) {
    // Keys are bytes in the archive: UTF-8 as zipfile decodes them, else latin-1 (cp437 in
    // zipfile; every byte maps either way).
    PyObject* s = PyUnicode_DecodeUTF8(key.data(), static_cast<Py_ssize_t>(key.size()), nullptr);
    if (!s) {
      PyErr_Clear();
      s = PyUnicode_DecodeLatin1(key.data(), static_cast<Py_ssize_t>(key.size()), nullptr);
    }
    out.append(py::make_tuple(py::reinterpret_steal<py::str>(s),
                              canonicalize ? canonical(std::move(a)) : std::move(a)));
  }
  return out;
}

}  // namespace

void bind_io(py::module_& m) {
  py::module_ io = m.def_submodule("io", ".npy/.npz files (tessera/io.h)");
  io.def(
      "save_npy",
      [](const std::string& path, py::handle x) {
        Array a = savable(x, "save");
        py::gil_scoped_release nogil;
        io::save_npy(path, a);
      },
      py::arg("path"), py::arg("arr"));
  io.def(
      "save_npy_bytes",
      [](py::handle x) {
        Array a = savable(x, "save");
        std::string s;
        {
          py::gil_scoped_release nogil;
          s = io::save_npy_bytes(a);
        }
        return py::bytes(s);
      },
      py::arg("arr"));
  io.def(
      "load_npy",
      [](const std::string& path, bool canonicalize) {
        py::gil_scoped_release nogil;
        Array a = io::load_npy(path);
        return canonicalize ? canonical(std::move(a)) : a;
      },
      py::arg("path"), py::arg("canonicalize") = true);
  io.def(
      "load_npy_bytes",
      [](const py::bytes& b, const std::string& name, bool canonicalize) {
        auto span = bytes_span(b);
        py::gil_scoped_release nogil;  // `b` stays referenced by the caller
        Array a = io::load_npy_bytes(span, name);
        return canonicalize ? canonical(std::move(a)) : a;
      },
      py::arg("data"), py::arg("name"), py::arg("canonicalize") = true);
  io.def(
      "save_npz",
      [](const std::string& path, const py::sequence& items, bool compressed) {
        io::NamedArrays arrays = savable_items(items, compressed ? "savez_compressed" : "savez");
        py::gil_scoped_release nogil;
        io::save_npz(path, arrays, compressed);
      },
      py::arg("path"), py::arg("items"), py::arg("compressed"));
  io.def(
      "save_npz_bytes",
      [](const py::sequence& items, bool compressed) {
        io::NamedArrays arrays = savable_items(items, compressed ? "savez_compressed" : "savez");
        std::string s;
        {
          py::gil_scoped_release nogil;
          s = io::save_npz_bytes(arrays, compressed);
        }
        return py::bytes(s);
      },
      py::arg("items"), py::arg("compressed"));
  io.def(
      "load_npz",
      [](const std::string& path, bool canonicalize) {
        io::NamedArrays arrays;
        {
          py::gil_scoped_release nogil;
          arrays = io::load_npz(path);
        }
        return named_list(std::move(arrays), canonicalize);
      },
      py::arg("path"), py::arg("canonicalize") = true);
  io.def(
      "load_npz_bytes",
      [](const py::bytes& b, const std::string& name, bool canonicalize) {
        auto span = bytes_span(b);
        io::NamedArrays arrays;
        {
          py::gil_scoped_release nogil;
          arrays = io::load_npz_bytes(span, name);
        }
        return named_list(std::move(arrays), canonicalize);
      },
      py::arg("data"), py::arg("name"), py::arg("canonicalize") = true);
}

}  // namespace tessera::python
