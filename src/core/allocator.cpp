#include "core/allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/env.h"
#include "tessera/errors.h"
#include "tessera/shape.h"

namespace tessera {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kHugeThreshold = size_t{4} << 20;  // mmap + transparent huge pages above this
constexpr size_t kHugePage = size_t{2} << 20;

std::string human_bytes(int64_t b) {
  char buf[64];
  if (b >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1 << 30));
  } else if (b >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(b));
  }
  return buf;
}

}  // namespace

CachingCpuAllocator::CachingCpuAllocator(std::string device_name)
    : device_name_(std::move(device_name)) {
  cache_cap_ = int64_t{8} << 30;
  stats_.bytes_limit = env_bytes("TESSERA_CPU_MEMORY_LIMIT").value_or(0);
}

CachingCpuAllocator::~CachingCpuAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  clear_cache_locked();
}

size_t CachingCpuAllocator::size_class(size_t n) {
  if (n <= 256) return n <= 64 ? 64 : (n + 63) / 64 * 64;
  // Four classes per power of two: 1, 1.25, 1.5, 1.75 x 2^k, rounded up to 64 bytes.
  size_t p = size_t{1} << (63 - __builtin_clzll(n));
  if (p == n) return n;
  size_t q = p / 4;
  size_t c = (n + q - 1) / q * q;
  return (c + kAlign - 1) / kAlign * kAlign;
}

void* CachingCpuAllocator::system_alloc(size_t bytes) {
  if (bytes >= kHugeThreshold) {
    size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    madvise(p, len, MADV_HUGEPAGE);
    return p;
  }
  return std::aligned_alloc(kAlign, bytes);
}

void CachingCpuAllocator::system_free(void* p, size_t bytes) {
  if (bytes >= kHugeThreshold) {
    munmap(p, (bytes + kHugePage - 1) / kHugePage * kHugePage);
  } else {
    std::free(p);
  }
}

void* CachingCpuAllocator::allocate(size_t nbytes, const char* op) {
  // Larger requests cannot be served (nor rounded to a size class without wrapping around).
  if (nbytes > static_cast<size_t>(kMaxArrayBytes)) {
    throw OutOfMemoryError(op_message(
        op ? op : "allocate", "out of memory on " + device_name_ + ": cannot allocate " +
                                  std::to_string(nbytes) +
                                  " bytes, more than the largest array size of 2^62 bytes"));
  }
  const size_t cls = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  // Compared without adding, so that a huge request cannot wrap around and pass.
  if (stats_.bytes_limit > 0 &&
      static_cast<int64_t>(cls) > stats_.bytes_limit - stats_.bytes_in_use) {
    throw OutOfMemoryError(
        op_message(op ? op : "allocate",
                   "out of memory on " + device_name_ + ": allocating " +
                       human_bytes(static_cast<int64_t>(nbytes)) + " with " +
                       human_bytes(stats_.bytes_in_use) + " in use would exceed the limit of " +
                       human_bytes(stats_.bytes_limit) +
                       "; free arrays you no longer need, use smaller batches, or raise the limit "
                       "(Device::set_memory_limit / TESSERA_CPU_MEMORY_LIMIT)"));
  }
  void* p = nullptr;
  auto it = free_.find(cls);
  if (it != free_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    stats_.bytes_cached -= static_cast<int64_t>(cls);
    ++stats_.num_cache_hits;
  } else {
    p = system_alloc(cls);
    if (!p) {
      clear_cache_locked();
      p = system_alloc(cls);
    }
    if (!p) {
      throw OutOfMemoryError(op_message(
          op ? op : "allocate", "out of memory on " + device_name_ + ": the system refused " +
                                    human_bytes(static_cast<int64_t>(nbytes)) + " with " +
                                    human_bytes(stats_.bytes_in_use) +
                                    " in use; free arrays or use smaller batches"));
    }
  }
  stats_.bytes_in_use += static_cast<int64_t>(cls);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(nbytes));
  ++stats_.num_allocs;
  return p;
}

void CachingCpuAllocator::deallocate(void* p, size_t nbytes) {
  if (!p) return;
  const size_t cls = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_in_use -= static_cast<int64_t>(cls);
  if (stats_.bytes_cached + static_cast<int64_t>(cls) > cache_cap_) {
    system_free(p, cls);
    return;
  }
  free_[cls].push_back(p);
  stats_.bytes_cached += static_cast<int64_t>(cls);
}

MemoryStats CachingCpuAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingCpuAllocator::set_limit(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_limit = bytes < 0 ? 0 : bytes;
  if (stats_.bytes_limit > 0) cache_cap_ = std::min<int64_t>(cache_cap_, stats_.bytes_limit);
}

void CachingCpuAllocator::clear_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  clear_cache_locked();
}

void CachingCpuAllocator::clear_cache_locked() {
  for (auto& [cls, blocks] : free_) {
    for (void* p : blocks) system_free(p, cls);
  }
  free_.clear();
  stats_.bytes_cached = 0;
}

}  // namespace tessera
