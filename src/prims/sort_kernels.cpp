// The sort primitive's eager kernels (see sort_kernels.h for the key order and the paths).
#include "prims/sort_kernels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "prims/kernel_util.h"
#include "runtime/thread_pool.h"
#include "tessera/array.h"

namespace tessera::sort_kernels {

namespace {

constexpr int64_t kTaskElems = int64_t{1} << 15;    // elements per parallel task, at least
constexpr int64_t kRadixBlock = int64_t{1} << 16;   // elements per block of a parallel pass
constexpr int64_t kMaxBlocks = 64;                  // blocks of a parallel pass, at most
constexpr int64_t kGatherGrain = int64_t{1} << 16;  // elements per task of a parallel gather

template <size_t N>
struct UintOf;
template <>
struct UintOf<1> {
  using type = uint8_t;
};
template <>
struct UintOf<2> {
  using type = uint16_t;
};
template <>
struct UintOf<4> {
  using type = uint32_t;
};
template <>
struct UintOf<8> {
  using type = uint64_t;
};

// The order-preserving key of a T, and back.
template <class T>
struct KeyTraits {
  using K = typename UintOf<sizeof(T)>::type;
  static constexpr bool kFloat = std::is_floating_point_v<T> || kernels::is_half_v<T>;
  static constexpr K kSign = K(K{1} << (8 * sizeof(T) - 1));
  static constexpr K kInf = std::is_same_v<T, float16_t>    ? K(0x7C00)
                            : std::is_same_v<T, bfloat16_t> ? K(0x7F80)
                            : std::is_same_v<T, float>      ? K(0x7F800000u)
                                                            : K(uint64_t{0x7FF0000000000000});
  static constexpr K kZeroKey = kSign;  // +0.0 (and -0.0)
  static constexpr K kNanKey = static_cast<K>(~K{0});

  static K bits(T v) {
    if constexpr (kernels::is_half_v<T>)
      return v.bits;
    else
      return std::bit_cast<K>(v);
  }
  static T from_bits(K b) {
    if constexpr (kernels::is_half_v<T>)
      return T{b};
    else
      return std::bit_cast<T>(b);
  }
  static K key(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      return v ? 1 : 0;
    } else if constexpr (kFloat) {
      const K b = bits(v);
      const K mag = static_cast<K>(b & ~kSign);
      if (mag > kInf) return kNanKey;
      if (mag == 0) return kZeroKey;
      return (b & kSign) ? static_cast<K>(~b) : static_cast<K>(b | kSign);
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<K>(static_cast<K>(v) ^ kSign);
    } else {
      return v;
    }
  }
  // Whether value(k) is the element's own bits (not for zeros and NaNs, which share keys).
  static bool invertible(K k) {
    if constexpr (kFloat)
      return k != kZeroKey && k != kNanKey;
    else
      return true;
  }
  static T value(K k) {
    if constexpr (std::is_same_v<T, bool>) {
      return k != 0;
    } else if constexpr (kFloat) {
      return from_bits((k & kSign) ? static_cast<K>(k & ~kSign) : static_cast<K>(~k));
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(static_cast<K>(k ^ kSign));
    } else {
      return k;
    }
  }
};

// Half-open range of block b of nb over n elements.
inline int64_t block_begin(int64_t b, int64_t nb, int64_t n) {
  return b * (n / nb) + std::min(b, n % nb);
}

// One counting pass of a radix sort, split into nb blocks (in parallel when nb > 1): hist[b][d]
// counts block b's entries whose digit (k >> shift) & 0xFF is d; offsets() turns the counts
// into each (block, digit)'s first output position; scatter() moves the entries there, in
// order (stable).
template <class F>
void over_blocks(int64_t nb, F&& f) {
  if (nb > 1)
    runtime::parallel_for(nb, 1, f);
  else
    f(int64_t{0}, int64_t{1});
}

template <class K>
void count_digits(const K* k0, int64_t n, int64_t nb, int shift, std::vector<int64_t>& hist) {
  over_blocks(nb, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t* h = hist.data() + b * 256;
      std::fill(h, h + 256, 0);
      const int64_t e = block_begin(b + 1, nb, n);
      for (int64_t j = block_begin(b, nb, n); j < e; ++j) ++h[(k0[j] >> shift) & 0xFF];
    }
  });
}

inline void digit_offsets(int64_t nb, std::vector<int64_t>& hist) {
  int64_t run = 0;
  for (int d = 0; d < 256; ++d)
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t c = hist[b * 256 + d];
      hist[b * 256 + d] = run;
      run += c;
    }
}

template <class K, class Idx, bool kPayload>
void scatter_digits(const K* k0, const Idx* i0, K* k1, Idx* i1, int64_t n, int64_t nb, int shift,
                    std::vector<int64_t>& hist) {
  over_blocks(nb, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t* h = hist.data() + b * 256;
      const int64_t e = block_begin(b + 1, nb, n);
      for (int64_t j = block_begin(b, nb, n); j < e; ++j) {
        const int64_t pos = h[(k0[j] >> shift) & 0xFF]++;
        k1[pos] = k0[j];
        if constexpr (kPayload) i1[pos] = i0[j];
      }
    }
  });
}

// LSD radix sort of (k0, i0) (n entries) by the digits [pass0, pass1) (8 bits each, least
// significant first) using (k1, i1) as the other buffer; returns the buffers that hold the
// result. Without kPayload only the keys move (i0, i1 unused).
template <class K, class Idx, bool kPayload = true>
std::pair<K*, Idx*> lsd_radix(K* k0, Idx* i0, K* k1, Idx* i1, int64_t n, size_t pass0,
                              size_t pass1) {
  const int64_t nb =
      n >= kParallelRadixMin ? std::clamp<int64_t>(n / kRadixBlock, 1, kMaxBlocks) : 1;
  std::vector<int64_t> hist(static_cast<size_t>(nb) * 256);
  for (size_t pass = pass0; pass < pass1; ++pass) {
    const int shift = static_cast<int>(8 * pass);
    count_digits(k0, n, nb, shift, hist);
    // Skip a pass whose digit is the same everywhere (the order would not change).
    bool skip = false;
    for (int d = 0; d < 256 && !skip; ++d) {
      int64_t total = 0;
      for (int64_t b = 0; b < nb; ++b) total += hist[b * 256 + d];
      if (total == n) skip = true;
      if (total != 0) break;
    }
    if (skip) continue;
    digit_offsets(nb, hist);
    scatter_digits<K, Idx, kPayload>(k0, i0, k1, i1, n, nb, shift, hist);
    std::swap(k0, k1);
    std::swap(i0, i1);
  }
  return {k0, i0};
}

// Radix sort of (k0, i0), stable, as lsd_radix over every digit. Long rows first split by their
// most significant digit (one parallel pass through memory), then sort each of the 256 buckets
// by the remaining digits while it sits in cache (~n / 256 entries: 32 KB of keys and indices
// for n = 1M), the buckets in parallel: one pass over memory instead of sizeof(K). A counting
// pass is stable, so the result is lsd_radix's. Skewed top digits (a bucket over n / 16, or
// over 1/8 of a strided sample: small integers, floats' sign and exponent bits) take
// lsd_radix's parallel passes instead.
template <class K, class Idx, bool kPayload = true>
std::pair<K*, Idx*> radix_sort(K* k0, Idx* i0, K* k1, Idx* i1, int64_t n) {
  constexpr size_t kDigits = sizeof(K);
  if (kDigits == 1 || n < kParallelRadixMin)
    return lsd_radix<K, Idx, kPayload>(k0, i0, k1, i1, n, 0, kDigits);
  const int shift = static_cast<int>(8 * (kDigits - 1));
  {  // a strided sample of the top digits first: skewed ones (floats' signs and exponents)
     // skip the full count
    std::array<int64_t, 256> sample{};
    const int64_t step = 97, count = (n + step - 1) / step;
    for (int64_t j = 0; j < n; j += step) ++sample[(k0[j] >> shift) & 0xFF];
    if (*std::max_element(sample.begin(), sample.end()) > count / 8)
      return lsd_radix<K, Idx, kPayload>(k0, i0, k1, i1, n, 0, kDigits);
  }
  const int64_t nb = std::clamp<int64_t>(n / kRadixBlock, 1, kMaxBlocks);
  std::vector<int64_t> hist(static_cast<size_t>(nb) * 256);
  count_digits(k0, n, nb, shift, hist);
  std::array<int64_t, 257> start{};
  int64_t largest = 0;
  for (int d = 0; d < 256; ++d) {
    int64_t total = 0;
    for (int64_t b = 0; b < nb; ++b) total += hist[b * 256 + d];
    start[d + 1] = start[d] + total;
    largest = std::max(largest, total);
  }
  if (largest > n / 16) return lsd_radix<K, Idx, kPayload>(k0, i0, k1, i1, n, 0, kDigits);
  digit_offsets(nb, hist);
  scatter_digits<K, Idx, kPayload>(k0, i0, k1, i1, n, nb, shift, hist);
  // Each bucket by the remaining digits, in place in (k1, i1) with (k0, i0) as its scratch.
  runtime::parallel_for(256, 1, [&](int64_t d0, int64_t d1) {
    for (int64_t d = d0; d < d1; ++d) {
      const int64_t s0 = start[d], len = start[d + 1] - s0;
      if (len <= 1) continue;
      auto [kr, ir] =
          lsd_radix<K, Idx, kPayload>(k1 + s0, kPayload ? i1 + s0 : nullptr, k0 + s0,
                                      kPayload ? i0 + s0 : nullptr, len, 0, kDigits - 1);
      if (kr != k1 + s0) {
        std::memcpy(k1 + s0, kr, static_cast<size_t>(len) * sizeof(K));
        if constexpr (kPayload) std::memcpy(i1 + s0, ir, static_cast<size_t>(len) * sizeof(Idx));
      }
    }
  });
  return {k1, i1};
}

// parallel_for when n is large enough to pay, inline otherwise.
template <class F>
void maybe_parallel(int64_t n, F&& f) {
  if (n >= 2 * kGatherGrain)
    runtime::parallel_for(n, kGatherGrain, f);
  else
    f(int64_t{0}, n);
}

// Uninitialized scratch memory that grows: large buffers come from the device's caching
// allocator (reused across calls, huge pages: no fresh page faults in steady state), small ones
// from a vector.
class ScratchBuf {
 public:
  template <class T>
  T* get(int64_t count, Device* device) {
    const size_t bytes = static_cast<size_t>(count) * sizeof(T);
    if (bytes > cap_) {
      if (bytes >= kBigScratch) {
        big_ = empty_array(Aval{Shape{static_cast<int64_t>(bytes)}, DType::kUInt8, false}, "sort",
                           device);
        small_ = {};
        ptr_ = big_.buffer()->data();
      } else {
        small_.resize(bytes);
        big_ = Array();
        ptr_ = small_.data();
      }
      cap_ = bytes;
    }
    return static_cast<T*>(ptr_);
  }

 private:
  static constexpr size_t kBigScratch = size_t{1} << 20;
  Array big_;
  std::vector<unsigned char> small_;
  void* ptr_ = nullptr;
  size_t cap_ = 0;
};

// Scratch of one task, reused across its rows.
template <class Idx>
struct Scratch {
  Device* device = nullptr;
  ScratchBuf k0, k1, i0, i1;
  std::vector<std::vector<uint64_t>> multi;  // multi-key rows: one key vector per key operand
  std::vector<std::pair<uint64_t, Idx>> pairs;
};

// Radix-sorts one row's keys (x with element stride `stride`) with payload(j) beside entry j, in
// the task's scratch; returns where the sorted keys and payloads are.
template <class T, class Idx, class P>
std::pair<typename KeyTraits<T>::K*, Idx*> radix_sort_row(const T* x, int64_t stride, int64_t n,
                                                          Scratch<Idx>& s, P&& payload) {
  using K = typename KeyTraits<T>::K;
  K* k0 = s.k0.template get<K>(n, s.device);
  K* k1 = s.k1.template get<K>(n, s.device);
  Idx* i0 = s.i0.template get<Idx>(n, s.device);
  Idx* i1 = s.i1.template get<Idx>(n, s.device);
  maybe_parallel(n, [&](int64_t a, int64_t b) {
    for (int64_t j = a; j < b; ++j) {
      k0[j] = KeyTraits<T>::key(x[j * stride]);
      i0[j] = payload(j);
    }
  });
  return radix_sort<K, Idx>(k0, i0, k1, i1, n);
}

// The permutation of one row of one key (x with element stride `stride`); *keys receives the
// sorted keys when the radix path ran (nullptr otherwise: read the values back through perm).
template <class T, class Idx>
const Idx* argsort_one_key(const T* x, int64_t stride, int64_t n, Method m, Scratch<Idx>& s,
                           const typename KeyTraits<T>::K** keys) {
  using Tr = KeyTraits<T>;
  const bool radix = m == Method::kRadix || (m == Method::kAuto && n >= kRadixMin);
  *keys = nullptr;
  Idx* i0 = s.i0.template get<Idx>(n, s.device);
  if (!radix) {
    s.pairs.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) s.pairs[j] = {Tr::key(x[j * stride]), static_cast<Idx>(j)};
    std::sort(s.pairs.begin(), s.pairs.end());  // (key, index): ties in index order
    for (int64_t j = 0; j < n; ++j) i0[j] = s.pairs[j].second;
    return i0;
  }
  auto [kr, ir] =
      radix_sort_row<T, Idx>(x, stride, n, s, [](int64_t j) { return static_cast<Idx>(j); });
  *keys = kr;
  return ir;
}

// One operand sorted by itself with the radix path: only the keys move. The values come back
// from the keys; the runs of zeros and NaNs (shared keys) are refilled from the input in input
// order, which is their stable order.
template <class T, class Idx>
void sort_keys_only(const Operand& op, int64_t base, int64_t stride, int64_t n, Scratch<Idx>& s) {
  using Tr = KeyTraits<T>;
  using K = typename Tr::K;
  const T* x = static_cast<const T*>(op.in) + base;
  T* out = static_cast<T*>(op.out) + base;
  K* k0 = s.k0.template get<K>(n, s.device);
  K* k1 = s.k1.template get<K>(n, s.device);
  maybe_parallel(n, [&](int64_t a, int64_t b) {
    for (int64_t j = a; j < b; ++j) k0[j] = Tr::key(x[j * stride]);
  });
  const K* keys = radix_sort<K, Idx, false>(k0, nullptr, k1, nullptr, n).first;
  maybe_parallel(n, [&](int64_t a, int64_t b) {
    for (int64_t k = a; k < b; ++k) out[k * stride] = Tr::value(keys[k]);
  });
  if constexpr (Tr::kFloat) {
    for (const K shared : {Tr::kZeroKey, Tr::kNanKey}) {
      int64_t at = std::lower_bound(keys, keys + n, shared) - keys;
      const int64_t end = std::upper_bound(keys + at, keys + n, shared) - keys;
      for (int64_t j = 0; j < n && at < end; ++j)
        if (Tr::key(x[j * stride]) == shared) out[(at++) * stride] = x[j * stride];
    }
  }
}

// Keys of several operands compared in order, then the index.
template <class Idx>
const Idx* argsort_multi_key(std::span<const Operand> ops, int64_t num_keys, int64_t base,
                             int64_t stride, int64_t n, Scratch<Idx>& s) {
  s.multi.resize(static_cast<size_t>(num_keys));
  for (int64_t k = 0; k < num_keys; ++k) {
    std::vector<uint64_t>& v = s.multi[k];
    v.resize(static_cast<size_t>(n));
    kernels::dispatch_dtype(ops[k].dtype, [&]<class T>() {
      const T* x = static_cast<const T*>(ops[k].in) + base;
      for (int64_t j = 0; j < n; ++j) v[j] = KeyTraits<T>::key(x[j * stride]);
    });
  }
  Idx* perm = s.i0.template get<Idx>(n, s.device);
  for (int64_t j = 0; j < n; ++j) perm[j] = static_cast<Idx>(j);
  const auto& keys = s.multi;
  std::sort(perm, perm + n, [&](Idx a, Idx b) {
    for (const std::vector<uint64_t>& v : keys)
      if (v[a] != v[b]) return v[a] < v[b];
    return a < b;
  });
  return perm;
}

// out[k * stride] = in[perm[k] * stride] for one operand's row.
template <class Idx>
void gather_row(const Operand& op, int64_t base, int64_t stride, int64_t n, const Idx* perm) {
  kernels::dispatch_bits(itemsize(op.dtype), [&]<class U>() {
    const U* in = static_cast<const U*>(op.in) + base;
    U* out = static_cast<U*>(op.out) + base;
    maybe_parallel(n, [&](int64_t a, int64_t b) {
      for (int64_t k = a; k < b; ++k) out[k * stride] = in[static_cast<int64_t>(perm[k]) * stride];
    });
  });
}

// A key with a value operand as wide as the index (sort_key_val of 32-bit keys and values:
// random.permutation's rounds, argsort-by-key pipelines) on the radix path: the values' bits
// ride through the passes in the index's place, so no permutation is built and no gather
// follows. Only for keys whose every value is its key's inverse (not floats: zeros and NaNs
// share keys and are read back through the index). Stable like the index path, so the same
// result.
template <class T, class Idx>
void sort_key_payload(std::span<const Operand> ops, int64_t base, int64_t stride, int64_t n,
                      Scratch<Idx>& s) {
  using Tr = KeyTraits<T>;
  const T* x = static_cast<const T*>(ops[0].in) + base;
  const Idx* v = static_cast<const Idx*>(ops[1].in) + base;
  auto [kr, ir] = radix_sort_row<T, Idx>(x, stride, n, s, [&](int64_t j) { return v[j * stride]; });
  T* out = static_cast<T*>(ops[0].out) + base;
  Idx* vout = static_cast<Idx*>(ops[1].out) + base;
  maybe_parallel(n, [&](int64_t a, int64_t b) {
    for (int64_t k = a; k < b; ++k) {
      out[k * stride] = Tr::value(kr[k]);
      vout[k * stride] = ir[k];
    }
  });
}

template <class Idx>
void sort_row(std::span<const Operand> ops, int64_t num_keys, int64_t base, int64_t stride,
              int64_t n, Scratch<Idx>& s) {
  if (num_keys > 1) {
    const Idx* perm = argsort_multi_key(ops, num_keys, base, stride, n, s);
    for (const Operand& op : ops) gather_row(op, base, stride, n, perm);
    return;
  }
  kernels::dispatch_dtype(ops[0].dtype, [&]<class T>() {
    using Tr = KeyTraits<T>;
    using K = typename Tr::K;
    if (ops.size() == 1 && n >= kRadixMin)
      return sort_keys_only<T, Idx>(ops[0], base, stride, n, s);
    if constexpr (!Tr::kFloat) {
      if (ops.size() == 2 && n >= kRadixMin && itemsize(ops[1].dtype) == sizeof(Idx))
        return sort_key_payload<T, Idx>(ops, base, stride, n, s);
    }
    const T* x = static_cast<const T*>(ops[0].in) + base;
    const K* keys = nullptr;
    const Idx* perm = argsort_one_key<T, Idx>(x, stride, n, Method::kAuto, s, &keys);
    if (keys == nullptr) {
      gather_row(ops[0], base, stride, n, perm);
    } else {
      // The values back from their keys; zeros and NaNs (shared keys) from the input.
      T* out = static_cast<T*>(ops[0].out) + base;
      maybe_parallel(n, [&](int64_t a, int64_t b) {
        for (int64_t k = a; k < b; ++k)
          out[k * stride] = Tr::invertible(keys[k]) ? Tr::value(keys[k])
                                                    : x[static_cast<int64_t>(perm[k]) * stride];
      });
    }
    for (size_t j = 1; j < ops.size(); ++j) gather_row(ops[j], base, stride, n, perm);
  });
}

template <class Idx>
void sort_rows(std::span<const Operand> ops, int64_t outer, int64_t n, int64_t inner,
               int64_t num_keys, Device* device) {
  const int64_t rows = outer * inner;
  auto run = [&](int64_t r0, int64_t r1) {
    Scratch<Idx> s;
    s.device = device;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r / inner, i = r % inner;
      sort_row<Idx>(ops, num_keys, o * n * inner + i, inner, n, s);
    }
  };
  if (n >= kParallelRadixMin || rows == 1)
    run(0, rows);  // long rows: the parallelism is inside each row
  else
    runtime::parallel_for(rows, std::max<int64_t>(1, kTaskElems / n), run);
}

}  // namespace

void sort(std::span<const Operand> ops, int64_t outer, int64_t n, int64_t inner, int64_t num_keys,
          Device* device) {
  if (outer * n * inner == 0) return;
  if (n == 1) {
    for (const Operand& op : ops)
      std::memcpy(op.out, op.in, static_cast<size_t>(outer * inner) * itemsize(op.dtype));
    return;
  }
  if (n <= int64_t{std::numeric_limits<uint32_t>::max()})
    sort_rows<uint32_t>(ops, outer, n, inner, num_keys, device);
  else
    sort_rows<uint64_t>(ops, outer, n, inner, num_keys, device);
}

void argsort_row(const void* keys, DType dtype, int64_t n, int64_t* perm, Method method) {
  if (n == 0) return;
  Scratch<uint64_t> s;
  kernels::dispatch_dtype(dtype, [&]<class T>() {
    const typename KeyTraits<T>::K* sorted = nullptr;
    const uint64_t* p =
        argsort_one_key<T, uint64_t>(static_cast<const T*>(keys), 1, n, method, s, &sorted);
    for (int64_t j = 0; j < n; ++j) perm[j] = static_cast<int64_t>(p[j]);
  });
}

}  // namespace tessera::sort_kernels
