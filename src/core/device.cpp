#include "tessera/device.h"

#include <cstdlib>
#include <mutex>
#include <ostream>

#include "core/allocator.h"
#include "core/env.h"
#include "tessera/errors.h"

namespace tessera {

Device::Device(DeviceKind kind, int id, std::unique_ptr<Allocator> alloc)
    : kind_(kind), id_(id), alloc_(std::move(alloc)) {}
Device::~Device() = default;

std::string Device::platform() const { return kind_ == DeviceKind::kCpu ? "cpu" : "cuda"; }
std::string Device::str() const { return platform() + ":" + std::to_string(id_); }
std::string Device::repr() const {
  return (kind_ == DeviceKind::kCpu ? "CpuDevice(id=" : "CudaDevice(id=") + std::to_string(id_) +
         ")";
}
MemoryStats Device::memory_stats() const { return alloc_->stats(); }
void Device::set_memory_limit(int64_t bytes) { alloc_->set_limit(bytes); }

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.repr(); }

namespace {

struct DeviceTable {
  std::vector<std::unique_ptr<Device>> owned;
  std::vector<Device*> all;
};

DeviceTable& table() {
  // Leaked on purpose: arrays held in static storage may release buffers after main returns.
  static DeviceTable* t = [] {
    // A bad TESSERA_* value throws here (ValueError); the next call tries again.
    int n = static_cast<int>(env_int("TESSERA_NUM_CPU_DEVICES", 1, 1024).value_or(1));
    auto tab = std::make_unique<DeviceTable>();
    for (int i = 0; i < n; ++i) {
      tab->owned.push_back(std::make_unique<Device>(
          DeviceKind::kCpu, i, std::make_unique<CachingCpuAllocator>("cpu:" + std::to_string(i))));
      tab->all.push_back(tab->owned.back().get());
    }
    return tab.release();
  }();
  return *t;
}

}  // namespace

const std::vector<Device*>& devices() { return table().all; }
const std::vector<Device*>& local_devices() { return table().all; }
Device* default_device() { return table().all.front(); }
Device* cpu_device(int id) {
  const auto& all = table().all;
  if (id < 0 || id >= static_cast<int>(all.size())) {
    throw ValueError(op_message("cpu_device", "there is no cpu:" + std::to_string(id) + "; " +
                                                  std::to_string(all.size()) +
                                                  " CPU device(s) exist (set "
                                                  "TESSERA_NUM_CPU_DEVICES before first use)"));
  }
  return all[id];
}

std::shared_ptr<Buffer> Buffer::allocate(Device* device, size_t nbytes, const char* op) {
  if (!device) device = default_device();
  void* p = device->allocator().allocate(nbytes, op);
  return std::make_shared<Buffer>(device, p, nbytes, nullptr, false);
}

std::shared_ptr<Buffer> Buffer::external(Device* device, void* data, size_t nbytes,
                                         std::shared_ptr<void> owner) {
  if (!device) device = default_device();
  return std::make_shared<Buffer>(device, data, nbytes, std::move(owner), true);
}

Buffer::~Buffer() {
  if (!external_) device_->allocator().deallocate(data_, nbytes_);
}

MemoryStats memory_stats(Device* device) {
  return (device ? device : default_device())->memory_stats();
}

void clear_caches() {
  for (Device* d : devices()) d->allocator().clear_cache();
}

}  // namespace tessera
