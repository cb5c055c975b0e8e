// Shardings: how an array's data is laid out over devices (JAX's jax.sharding). Today every
// concrete array has a SingleDeviceSharding; the SPMD issues add NamedSharding and friends as
// further subclasses. Shardings are interned (one object per distinct sharding, alive for the
// process), so they are compared and hashed by identity and Avals can point at them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/device.h"

namespace tessera {

class Sharding {
 public:
  virtual ~Sharding() = default;
  // The devices holding (a part of) the data, by id.
  virtual const std::vector<Device*>& device_set() const = 0;
  virtual bool is_fully_replicated() const = 0;
  // JAX's repr: "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)".
  virtual std::string repr() const = 0;
  int64_t num_devices() const { return static_cast<int64_t>(device_set().size()); }
};

class SingleDeviceSharding final : public Sharding {
 public:
  explicit SingleDeviceSharding(Device* d) : devices_{d} {}
  Device* device() const { return devices_.front(); }
  const std::vector<Device*>& device_set() const override { return devices_; }
  bool is_fully_replicated() const override { return true; }
  std::string repr() const override;

 private:
  std::vector<Device*> devices_;
};

// The interned SingleDeviceSharding of a device (null: the default device).
const SingleDeviceSharding& single_device_sharding(Device* d);

// A set of mesh/vmap axis names (JAX's `vma` on avals: the shard_map axes a value varies over),
// sorted and deduplicated; interned like shardings. Reserved: no rule sets it yet.
struct AxisNameSet {
  std::vector<std::string> names;
};
const AxisNameSet* intern_axis_names(std::vector<std::string> names);

}  // namespace tessera
