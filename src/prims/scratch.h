// Scratch memory for kernels. Large blocks come from the default device's caching allocator,
// so a kernel called again and again (a reduction's partials, a scatter's point lists) faults
// in no fresh pages and zeroes nothing; small ones from the heap. Uninitialized.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tessera/device.h"

namespace tessera::prims {

template <class T>
class ScratchBuf {
 public:
  explicit ScratchBuf(int64_t n = 0, const char* op = "scratch") {
    const size_t bytes = static_cast<size_t>(std::max<int64_t>(n, 0)) * sizeof(T);
    if (bytes >= (size_t{1} << 16)) {
      big_ = Buffer::allocate(default_device(), bytes, op);
      p_ = static_cast<T*>(big_->data());
    } else if (n > 0) {
      small_.reset(new T[static_cast<size_t>(n)]);
      p_ = small_.get();
    }
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](int64_t i) { return p_[i]; }
  const T& operator[](int64_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::unique_ptr<T[]> small_;
  std::shared_ptr<Buffer> big_;
};

}  // namespace tessera::prims
