// DLPack both ways (__dlpack__/__dlpack_device__ and from_dlpack), zero copy, CPU only.
#include <dlpack/dlpack.h>

#include <cstring>
#include <string>

#include "py_common.h"

namespace tessera::python {

namespace {

struct DLCode {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};
constexpr DLCode kCodes[] = {
    {DType::kBool, kDLUInt, 8},        {DType::kInt8, kDLInt, 8},
    {DType::kInt16, kDLInt, 16},       {DType::kInt32, kDLInt, 32},
    {DType::kInt64, kDLInt, 64},       {DType::kUInt8, kDLUInt, 8},
    {DType::kUInt16, kDLUInt, 16},     {DType::kUInt32, kDLUInt, 32},
    {DType::kUInt64, kDLUInt, 64},     {DType::kFloat16, kDLFloat, 16},
    {DType::kFloat32, kDLFloat, 32},   {DType::kFloat64, kDLFloat, 64},
    {DType::kBFloat16, kDLBfloat, 16},
};

// The exported tensor's owner: keeps the Array (its buffer) and the shape/strides alive.
struct Exported {
  Array array;
  std::unique_ptr<ExternalView> counted;  // counts the export while the consumer holds it
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

void delete_exported(DLManagedTensor* t) { delete static_cast<Exported*>(t->manager_ctx); }

DType dtype_of(const DLDataType& t, bool from_bool_hint) {
  if (t.lanes != 1)
    throw TypeError("[from_dlpack] vector (lanes > 1) DLPack dtypes are unsupported");
  if (t.code == 6 /* kDLBool, DLPack >= 0.8 */ && t.bits == 8) return DType::kBool;
  for (const DLCode& c : kCodes) {
    if (c.code == t.code && c.bits == t.bits) {
      if (c.dtype == DType::kBool && !from_bool_hint) continue;
      return c.dtype;
    }
  }
  throw TypeError("[from_dlpack] unsupported DLPack dtype (code " + std::to_string(t.code) +
                  ", bits " + std::to_string(t.bits) + ")");
}

}  // namespace

void bind_dlpack(py::module_& m, py::class_<Array>& cls) {
  cls.def(
      "__dlpack__",
      [](const Array& a, py::object stream) {
        (void)stream;  // CPU arrays are ready: no stream to synchronize with
        if (a.is_tracer())
          throw ConcretizationError("[__dlpack__] a traced array (" + a.tracer()->str() +
                                    ") cannot be exported; DLPack needs a concrete array");
        auto* ex = new Exported;
        ex->array = a;
        const std::shared_ptr<Buffer>& buf = a.buffer("__dlpack__");
        ex->counted = std::make_unique<ExternalView>(buf);
        ex->shape.assign(a.shape().begin(), a.shape().end());
        ex->strides.resize(ex->shape.size());
        int64_t st = 1;
        for (size_t i = ex->shape.size(); i-- > 0;) {
          ex->strides[i] = st;
          st *= ex->shape[i];
        }
        DLTensor& t = ex->managed.dl_tensor;
        t.data = buf->data();
        t.device = DLDevice{kDLCPU, 0};
        t.ndim = static_cast<int32_t>(ex->shape.size());
        bool found = false;
        for (const DLCode& c : kCodes) {
          if (c.dtype == a.dtype()) {
            t.dtype = DLDataType{c.code, c.bits, 1};
            found = true;
          }
        }
        if (!found) {
          delete ex;
          throw TypeError("[__dlpack__] " + std::string(dtype_name(a.dtype())) +
                          " arrays cannot be exported with DLPack");
        }
        t.shape = ex->shape.data();
        t.strides = ex->strides.data();
        t.byte_offset = 0;
        ex->managed.manager_ctx = ex;
        ex->managed.deleter = delete_exported;
        return py::capsule(&ex->managed, "dltensor", [](PyObject* cap) {
          // Called when the capsule dies; a consumer renames it "used_dltensor" and owns it.
          if (PyCapsule_IsValid(cap, "dltensor")) {
            auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
            if (t && t->deleter) t->deleter(t);
          }
        });
      },
      py::kw_only(), py::arg("stream") = py::none());
  cls.def("__dlpack_device__", [](const Array&) { return py::make_tuple(int(kDLCPU), 0); });

  m.def("from_dlpack", [](py::object x) -> Array {
    if (py::isinstance<Array>(x)) return x.cast<Array>();
    py::object cap = x;
    bool is_bool = false;
    if (py::hasattr(x, "__dlpack__")) {
      if (py::hasattr(x, "__dlpack_device__")) {
        py::tuple dev = x.attr("__dlpack_device__")();
        if (dev[0].cast<int>() != kDLCPU)
          throw ValueError("[from_dlpack] only CPU tensors can be imported, got device type " +
                           std::to_string(dev[0].cast<int>()));
      }
      if (py::hasattr(x, "dtype"))
        is_bool = std::string(py::str(x.attr("dtype"))).find("bool") != std::string::npos;
      cap = x.attr("__dlpack__")();
    }
    if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
      throw TypeError(
          "[from_dlpack] expected an object with __dlpack__ or an unused DLPack "
          "capsule");
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
    const DLTensor& dl = t->dl_tensor;
    if (dl.device.device_type != kDLCPU)
      throw ValueError("[from_dlpack] only CPU tensors can be imported");
    DType d = dtype_of(dl.dtype, is_bool);
    if (dl.ndim < 0 || dl.ndim > kMaxRank || (dl.ndim > 0 && dl.shape == nullptr))
      throw ValueError("[from_dlpack] the tensor declares " + std::to_string(dl.ndim) +
                       " dimensions; at most " + std::to_string(kMaxRank) + " are supported");
    Shape shape(dl.shape, dl.shape + dl.ndim);
    Aval aval{shape, d, false};
    check_aval("from_dlpack", aval);  // sizes from a foreign header never wrap around
    bool contiguous = true;
    if (dl.strides != nullptr) {
      int64_t st = 1;
      for (int i = dl.ndim; i-- > 0;) {
        if (shape[i] != 1 && dl.strides[i] != st) contiguous = false;
        st *= shape[i];
      }
    }
    char* data = static_cast<char*>(dl.data) + dl.byte_offset;
    PyCapsule_SetName(cap.ptr(), "used_dltensor");
    std::shared_ptr<void> owner(t, [](void* p) {
      auto* mt = static_cast<DLManagedTensor*>(p);
      if (mt->deleter) mt->deleter(mt);
    });
    if (contiguous && reinterpret_cast<uintptr_t>(data) % 16 == 0) {
      return Array(aval, Buffer::external(nullptr, data, aval.nbytes(), std::move(owner)));
    }
    // Strided or under-aligned memory: copy it into a dense array.
    Array out = empty_array(aval, "from_dlpack");
    char* dst = static_cast<char*>(out.buffer()->data());
    const size_t item = itemsize(d);
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t flat = 0; flat < aval.size(); ++flat) {
      int64_t off = 0;
      for (size_t k = 0; k < shape.size(); ++k) off += idx[k] * (dl.strides ? dl.strides[k] : 0);
      std::memcpy(dst + flat * item, data + off * static_cast<int64_t>(item), item);
      for (size_t k = shape.size(); k-- > 0;) {
        if (++idx[k] < shape[k]) break;
        idx[k] = 0;
      }
    }
    return out;
  });
}

}  // namespace tessera::python
