// Device memory accounting for Python: jax.Device.memory_stats()'s dict and the CPU limit.
#include "py_common.h"

namespace tessera::python {

void bind_devices(py::module_& m) {
  m.def("num_devices", [] { return devices().size(); });
  m.def(
      "memory_stats",
      [](int id) {
        MemoryStats s = memory_stats(cpu_device(id));
        py::dict d;
        d["bytes_in_use"] = s.bytes_in_use;
        d["peak_bytes_in_use"] = s.peak_bytes_in_use;
        d["bytes_cached"] = s.bytes_cached;
        d["bytes_limit"] = s.bytes_limit;
        d["num_allocs"] = s.num_allocs;
        d["num_cache_hits"] = s.num_cache_hits;
        d["largest_alloc_size"] = s.largest_alloc_size;
        return d;
      },
      py::arg("device_id") = 0);
  m.def(
      "set_memory_limit",
      [](py::handle bytes, int id) {
        cpu_device(id)->set_memory_limit(as_int(bytes, "set_memory_limit", "bytes"));
      },
      py::arg("bytes"), py::arg("device_id") = 0);
  // device_put(x, device) (device_id -1: none, the result is uncommitted on the default device).
  m.def(
      "device_put",
      [](const Array& x, int id) { return device_put(x, id < 0 ? nullptr : cpu_device(id)); },
      py::arg("x"), py::arg("device_id") = -1);
}

}  // namespace tessera::python
