// Devices, buffers and per-device memory accounting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

enum class DeviceKind : uint8_t { kCpu, kCuda };

struct MemoryStats {
  int64_t bytes_in_use = 0;  // held by live buffers
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_cached = 0;    // freed blocks the allocator keeps for reuse
  int64_t bytes_limit = 0;     // 0 = no limit
  int64_t num_allocs = 0;      // allocations served
  int64_t num_cache_hits = 0;  // of which from the cache
  int64_t largest_alloc_size = 0;
};

class Allocator;

// A device: cpu:0..n-1 now; the abstraction admits CUDA devices (no host-only assumptions
// in the interface: memory is reached only through Buffers and kernels).
class Device {
 public:
  Device(DeviceKind kind, int id, std::unique_ptr<Allocator> alloc);
  ~Device();
  DeviceKind kind() const { return kind_; }
  int id() const { return id_; }
  std::string str() const;       // "cpu:0"
  std::string repr() const;      // "CpuDevice(id=0)" as JAX prints it
  std::string platform() const;  // "cpu"
  Allocator& allocator() { return *alloc_; }
  MemoryStats memory_stats() const;
  // 0 removes the limit. Allocations beyond it raise OutOfMemoryError.
  void set_memory_limit(int64_t bytes);

 private:
  DeviceKind kind_;
  int id_;
  std::unique_ptr<Allocator> alloc_;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

// All devices of the process (cpu devices first). TESSERA_NUM_CPU_DEVICES sets the number of
// virtual CPU devices (default 1) before first use.
const std::vector<Device*>& devices();
const std::vector<Device*>& local_devices();
Device* default_device();
Device* cpu_device(int id = 0);

// Contiguous device memory. Either owned (returned to its device's allocator when the last
// reference goes) or external (NumPy/DLPack memory kept alive by `owner`; never donated,
// never assumed more than 16-byte aligned).
class Buffer {
 public:
  // Allocates nbytes on device; `op` names the operation for out-of-memory errors.
  static std::shared_ptr<Buffer> allocate(Device* device, size_t nbytes, const char* op);
  static std::shared_ptr<Buffer> external(Device* device, void* data, size_t nbytes,
                                          std::shared_ptr<void> owner);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device* device() const { return device_; }
  bool is_external() const { return external_; }

  // Prefer allocate()/external(); public for std::make_shared.
  Buffer(Device* device, void* data, size_t nbytes, std::shared_ptr<void> owner, bool external)
      : device_(device),
        data_(data),
        nbytes_(nbytes),
        owner_(std::move(owner)),
        external_(external) {}

 private:
  Device* device_;
  void* data_;
  size_t nbytes_;
  std::shared_ptr<void> owner_;
  bool external_;
};

// Returns the memory stats of a device (default: cpu:0).
MemoryStats memory_stats(Device* device = nullptr);
// Drops the allocator cache of every device (returns memory to the OS).
void clear_caches();

}  // namespace tessera
