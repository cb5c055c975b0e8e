// Interned shardings and axis-name sets.
#include "tessera/sharding.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "tessera/errors.h"

namespace tessera {

std::string SingleDeviceSharding::repr() const {
  return "SingleDeviceSharding(device=" + device()->repr() + ", memory_kind=device)";
}

const SingleDeviceSharding& single_device_sharding(Device* d) {
  if (!d) d = default_device();
  // One per device, built with the device table (devices are never destroyed).
  static const std::vector<std::unique_ptr<SingleDeviceSharding>>* table = [] {
    auto* t = new std::vector<std::unique_ptr<SingleDeviceSharding>>;
    for (Device* dev : devices()) t->push_back(std::make_unique<SingleDeviceSharding>(dev));
    return t;
  }();
  for (const auto& s : *table)
    if (s->device() == d) return *s;
  throw_internal("sharding", "device " + d->str() + " is not in the device table");
}

const AxisNameSet* intern_axis_names(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  static std::mutex mu;
  static auto* table = new std::map<std::vector<std::string>, std::unique_ptr<AxisNameSet>>;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*table)[names];
  if (!slot) slot = std::make_unique<AxisNameSet>(AxisNameSet{std::move(names)});
  return slot.get();
}

}  // namespace tessera
