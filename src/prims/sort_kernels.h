// The eager CPU kernels of the sort primitive (src/prims/sort.cpp).
//
// Every key element becomes an order-preserving unsigned integer of its own width (bool: 0/1;
// signed integers: the sign bit flipped; floats: all bits flipped when negative, else the sign
// bit set, with -0.0 made +0.0 and every NaN one key above +inf — JAX's total order, where ±0
// tie and NaNs tie after +inf). Rows are sorted stably by those keys (ties keep their order),
// so the result is unique and the same for any thread count.
//
// One key: rows of at least kRadixMin elements are sorted by a least-significant-digit radix
// sort (8-bit digits, passes whose digit is the same everywhere skipped) of (key, index) pairs;
// rows of at least kParallelRadixMin elements split each pass into blocks with per-block
// histograms (parallel); when their most significant digit is spread (no bucket over n / 16)
// such rows first split by it in one parallel pass and sort each of the 256 buckets by the
// remaining digits in cache, the buckets in parallel (skewed digits — floats' exponents, small
// integers — keep the plain passes). Shorter rows sort (key, index) pairs with std::sort (the
// index breaks ties: stable). Several keys: a comparison sort of indices over the keys in order,
// then the index. The key operand's output is rebuilt from the sorted keys where the key is
// invertible (everything but zeros and NaNs, whose bits are read back from the input); other
// operands are gathered through the permutation — except one value operand as wide as the index
// under a non-float key, whose bits ride through the radix passes in the index's place. A lone
// operand on the radix path moves its keys only (no index): the runs of zeros and of NaNs are
// refilled from the input in input order, which is their stable order. Independent rows run in
// parallel on the runtime's pool; long rows' scratch comes from the device's caching allocator
// (no fresh pages in steady state).
#pragma once

#include <cstdint>
#include <span>

#include "tessera/dtype.h"

namespace tessera {
class Device;
}

namespace tessera::sort_kernels {

inline constexpr int64_t kRadixMin = 512;                       // one-key rows this long: radix
inline constexpr int64_t kParallelRadixMin = int64_t{1} << 17;  // radix passes in parallel

// One operand: its input and output buffers (same dtype and shape).
struct Operand {
  const void* in = nullptr;
  void* out = nullptr;
  DType dtype = DType::kFloat32;
};

// Sorts every operand, viewed as [outer, n, inner], along n: lexicographically (stably) by the
// first num_keys operands, the others permuted alike. Scratch for long rows comes from device's
// allocator (null: the default device).
void sort(std::span<const Operand> ops, int64_t outer, int64_t n, int64_t inner, int64_t num_keys,
          Device* device = nullptr);

enum class Method { kAuto, kRadix, kComparison };
// The stable sorting permutation of one contiguous row of n keys (perm[i]: the index of the
// element that lands at position i) by the chosen method (kAuto: what sort() would use). For
// tests that check the radix and comparison paths against each other.
void argsort_row(const void* keys, DType dtype, int64_t n, int64_t* perm, Method method);

}  // namespace tessera::sort_kernels
