// Suite `jit`: the cost of a cached jitted call against the eager call of the same function, in
// the same run. One JSON line per case (see harness.h).
//
//   jit_call_overhead  per-call cost of jit(f)(x, y, z) with f = x * y + z on 16-element float32
//                      arrays, the trace cached (tessera_ms); peer: the eager call f(x, y, z)
//                      (peer_ms). The Python side of the same case is `jit_call_python` in the
//                      `python` suite.
//   jit_scan_loop      one call of a 1000-step lax::fori_loop, c = c * a + b on 16-element float32
//                      arrays: under jit the loop body is a nested executable compiled once
//                      (tessera_ms); peer: the same loop called eagerly, whose body runs through
//                      the eval trace each step (peer_ms) — which is what jit ran before control
//                      flow was lowered to nested executables.
#include <iostream>
#include <string>
#include <vector>

#include <tessera/tessera.h>

#include "harness.h"

namespace tnp = tessera::numpy;
using tessera::Array;
using namespace tessera::bench;

namespace {

void jit_call_overhead(const Options& o) {
  const int64_t iters = 20000;
  const int reps = std::max(o.reps, 21);
  auto f = [](const Array& x, const Array& y, const Array& z) { return x * y + z; };
  auto jf = tessera::jit(f);
  std::vector<float> xv(16), yv(16), zv(16);
  for (int i = 0; i < 16; ++i) {
    xv[i] = 0.25f * static_cast<float>(i);
    yv[i] = 1.5f - 0.125f * static_cast<float>(i);
    zv[i] = 0.5f;
  }
  Array x = tnp::array(xv, {16}), y = tnp::array(yv, {16}), z = tnp::array(zv, {16});
  const std::vector<float> want = f(x, y, z).to_vector<float>();
  if (jf(x, y, z).to_vector<float>() != want)
    throw std::runtime_error("jit_call_overhead: jit(f) differs from f");
  Array r;
  Timing tj = time_median(
      [&] {
        for (int64_t i = 0; i < iters; ++i) r = jf(x, y, z);
      },
      o.warmup, reps);
  Timing te = time_median(
      [&] {
        for (int64_t i = 0; i < iters; ++i) r = f(x, y, z);
      },
      o.warmup, reps);
  if (jf.trace_count() != 1) throw std::runtime_error("jit_call_overhead: the call retraced");
  Json rec;
  rec["bench"] = "jit";
  rec["case"] = "jit_call_overhead";
  rec["tessera_ms"] = tj.median_ms / iters;
  rec["peer"] = "Tessera eager f(x, y, z)";
  rec["peer_ms"] = te.median_ms / iters;
  rec["iters"] = iters;
  emit(rec);
}

void jit_scan_loop(const Options& o) {
  const int reps = std::max(o.reps, 11);
  std::vector<float> av(16), bv(16), cv(16);
  for (int i = 0; i < 16; ++i) {
    av[i] = 0.999f - 0.001f * static_cast<float>(i);
    bv[i] = 0.001f * static_cast<float>(i);
    cv[i] = 1.0f;
  }
  Array a = tnp::array(av, {16}), b = tnp::array(bv, {16}), c0 = tnp::array(cv, {16});
  auto loop = [&](const Array& c) {
    return tessera::lax::fori_loop(
        0, 1000, [&](const Array&, const Array& acc) { return acc * a + b; }, c);
  };
  auto jloop = tessera::jit(loop);
  if (jloop(c0).to_vector<float>() != loop(c0).to_vector<float>())
    throw std::runtime_error("jit_scan_loop: jit(loop) differs from the eager loop");
  Array r;
  Timing tj = time_median([&] { r = jloop(c0); }, o.warmup, reps);
  Timing te = time_median([&] { r = loop(c0); }, o.warmup, reps);
  Json rec;
  rec["bench"] = "jit";
  rec["case"] = "jit_scan_loop";
  rec["tessera_ms"] = tj.median_ms;
  rec["peer"] = "Tessera eager fori_loop";
  rec["peer_ms"] = te.median_ms;
  rec["steps"] = 1000;
  emit(rec);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv, {"jit_call_overhead", "jit_scan_loop"});
  try {
    if (o.wants("jit_call_overhead")) jit_call_overhead(o);
    if (o.wants("jit_scan_loop")) jit_scan_loop(o);
  } catch (const std::exception& e) {
    std::cerr << "bench_jit: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
