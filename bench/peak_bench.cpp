// Suite `peak`: the machine's own limits, measured in the same run as the figures that use them
// (floor_ms, % of peak, MFU). One JSON line per case (see harness.h).
//
//   fma_avx512_1t / fma_avx512_2t  float32 FMA throughput: 12 independent chains of 16-lane
//                                  fused multiply-adds per thread (enough to cover the FMA
//                                  latency), one and two threads; `gflops` (2 flops per lane).
//                                  Skipped (no record) where the CPU lacks AVX-512F.
//   fma_avx2_1t / fma_avx2_2t      the same with 8-lane AVX2 FMAs.
//   copy_256M_1t / copy_256M_2t    streaming copy of 256 MB (64M float32) into a second buffer;
//                                  `gbps` counts the bytes read and written; peer: std::memcpy
//                                  of the same buffers (one thread).
//   add_256M_1t / add_256M_2t      z = x + y over 64M float32 each (bytes read and written);
//                                  peer: the one-thread loop.
// Threads split the work in two contiguous halves; buffers are touched before timing.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

using namespace tessera::bench;

namespace {

constexpr int64_t kFmaIters = 50'000'000;

// 12 chains of acc = acc * m + a; returns a value so the work is not removed.
__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t iters) {
  __m512 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm512_set1_ps(0.5f + 0.01f * static_cast<float>(k));
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < 12; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, a);
  __m512 s = acc[0];
  for (int k = 1; k < 12; ++k) s = _mm512_add_ps(s, acc[k]);
  // (Stored and summed: GCC 12's _mm512_reduce_add_ps warns inside its own header.)
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  float r = 0;
  for (float v : out) r += v;
  return r;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iters) {
  __m256 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm256_set1_ps(0.5f + 0.01f * static_cast<float>(k));
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < 12; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, a);
  __m256 s = acc[0];
  for (int k = 1; k < 12; ++k) s = _mm256_add_ps(s, acc[k]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  float r = 0;
  for (float v : out) r += v;
  return r;
}

// Runs body(t) on `threads` threads (t = 0..threads-1) and waits.
template <class F>
void on_threads(int threads, F&& body) {
  if (threads == 1) {
    body(0);
    return;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&body, t] { body(t); });
  for (std::thread& th : pool) th.join();
}

volatile float g_sink = 0;

void fma_case(const Options& o, const std::string& name, int lanes, int threads,
              float (*kernel)(int64_t)) {
  Timing t = time_median(
      [&] {
        std::vector<float> r(static_cast<size_t>(threads));
        on_threads(threads, [&](int k) { r[static_cast<size_t>(k)] = kernel(kFmaIters); });
        for (float v : r) g_sink = g_sink + v;
      },
      1, o.reps);
  const double flops = 2.0 * lanes * 12.0 * static_cast<double>(kFmaIters) * threads;
  Json rec;
  rec["bench"] = "peak";
  rec["case"] = name;
  rec["tessera_ms"] = t.median_ms;
  rec["peer"] = "none";
  rec["gflops"] = flops / (t.median_ms * 1e6);
  rec["threads"] = threads;
  emit(rec);
}

constexpr size_t kStreamFloats = size_t{64} << 20;  // 64M float32 = 256 MB

void stream_case(const Options& o, const std::string& name, int threads, bool add) {
  std::vector<float> x(kStreamFloats, 1.0f), y(kStreamFloats, 2.0f), z(kStreamFloats, 0.0f);
  auto run = [&](int nthreads) {
    const size_t part = kStreamFloats / static_cast<size_t>(nthreads);
    on_threads(nthreads, [&](int k) {
      const size_t lo = part * static_cast<size_t>(k), hi = lo + part;
      float* __restrict zp = z.data();
      const float* __restrict xp = x.data();
      const float* __restrict yp = y.data();
      if (add) {
        for (size_t i = lo; i < hi; ++i) zp[i] = xp[i] + yp[i];
      } else {
        std::copy(xp + lo, xp + hi, zp + lo);
      }
    });
  };
  Timing t = time_median([&] { run(threads); }, o.warmup, o.reps);
  Timing p = add ? time_median([&] { run(1); }, o.warmup, o.reps)
                 : time_median([&] { std::memcpy(z.data(), x.data(), kStreamFloats * 4); },
                               o.warmup, o.reps);
  if (z[kStreamFloats - 1] != (add ? 3.0f : 1.0f))
    throw std::runtime_error(name + ": wrong result");
  const double bytes = static_cast<double>(kStreamFloats) * 4.0 * (add ? 3.0 : 2.0);
  Json rec;
  rec["bench"] = "peak";
  rec["case"] = name;
  rec["tessera_ms"] = t.median_ms;
  rec["peer"] = add ? "the same loop, one thread" : "std::memcpy, one thread";
  rec["peer_ms"] = p.median_ms;
  rec["gbps"] = bytes / (t.median_ms * 1e6);
  rec["threads"] = threads;
  emit(rec);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> cases = {"fma_avx512_1t", "fma_avx512_2t", "fma_avx2_1t",
                                          "fma_avx2_2t",   "copy_256M_1t",  "copy_256M_2t",
                                          "add_256M_1t",   "add_256M_2t"};
  Options o = parse_options(argc, argv, cases);
  try {
    const bool avx512 = __builtin_cpu_supports("avx512f");
    if (!avx512) std::cerr << "bench_peak: no AVX-512F on this CPU; its cases are skipped\n";
    if (avx512 && o.wants("fma_avx512_1t")) fma_case(o, "fma_avx512_1t", 16, 1, fma_chains_avx512);
    if (avx512 && o.wants("fma_avx512_2t")) fma_case(o, "fma_avx512_2t", 16, 2, fma_chains_avx512);
    if (o.wants("fma_avx2_1t")) fma_case(o, "fma_avx2_1t", 8, 1, fma_chains_avx2);
    if (o.wants("fma_avx2_2t")) fma_case(o, "fma_avx2_2t", 8, 2, fma_chains_avx2);
    if (o.wants("copy_256M_1t")) stream_case(o, "copy_256M_1t", 1, false);
    if (o.wants("copy_256M_2t")) stream_case(o, "copy_256M_2t", 2, false);
    if (o.wants("add_256M_1t")) stream_case(o, "add_256M_1t", 1, true);
    if (o.wants("add_256M_2t")) stream_case(o, "add_256M_2t", 2, true);
  } catch (const std::exception& e) {
    std::cerr << "bench_peak: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
