// Suite `eager`: Tessera's eager execution (dispatch through bind, elementwise kernels, matmul)
// against peers measured in the same run. One JSON line per case (see harness.h).
//
//   dispatch_add_1elem  per-op cost of tnp::add on 1-element float32 arrays; peer libtorch
//   add_16M             x + y, float32, 16M elements; peer NumPy (allocating, as users write)
//   tanh_chain_16M      tanh(x * 1.5 + 0.3) * x, float32, 16M elements; peer NumPy
//   matmul_2048         float32 2048x2048 @ 2048x2048; peer cblas_sgemm (OpenBLAS, 2 threads)
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.h>

#include "harness.h"
#ifdef TESSERA_BENCH_HAVE_TORCH
#include "peers/libtorch_peer.h"
#endif

namespace tnp = tessera::numpy;
namespace lax = tessera::lax;
using tessera::Array;
using namespace tessera::bench;

namespace {

constexpr int64_t k16M = int64_t{16} * 1024 * 1024;

// Uniform [-2, 2) float32 values (the NumPy peer draws the same distribution).
Array uniform_array(const tessera::Shape& shape, uint32_t seed) {
  return tnp::array(uniform(tessera::shape_size(shape), seed), shape);
}

void dispatch_add_1elem(const Options& o) {
  const int64_t iters = 20000;
  // Samples are short (~20 ms): take more of them so the median shrugs off scheduler noise.
  const int reps = std::max(o.reps, 21);
  Array x = tnp::array({0.25});
  Array y = tnp::array({0.5});
  Array r;
  Timing t = time_median(
      [&] {
        for (int64_t i = 0; i < iters; ++i) r = tnp::add(x, y);
      },
      o.warmup, reps);
  if (r.item<float>() != 0.75f) throw std::runtime_error("dispatch_add_1elem: wrong sum");
  Timing tl = time_median(
      [&] {
        for (int64_t i = 0; i < iters; ++i) r = lax::add(x, y);
      },
      o.warmup, reps);
  Json rec;
  rec["bench"] = "eager";
  rec["case"] = "dispatch_add_1elem";
  rec["tessera_ms"] = t.median_ms / iters;
#ifdef TESSERA_BENCH_HAVE_TORCH
  rec["peer"] = torch_peer::name() + " torch::add";
  rec["peer_ms"] = torch_peer::add_1elem_ms(iters, o.warmup, reps);
#else
  rec["peer"] = "none";
#endif
  rec["lax_add_ms"] = tl.median_ms / iters;
  rec["iters"] = iters;
  emit(rec);
}

void add_16M(const Options& o, bool show_config) {
  Array x = uniform_array({k16M}, 1);
  Array y = uniform_array({k16M}, 2);
  PeakRss peak;
  Timing t = time_median(
      [&] {
        Array r = x + y;
        r.block_until_ready();
        peak.sample();
      },
      o.warmup, o.reps);
  const double bytes = 3.0 * k16M * sizeof(float);  // read x, y; write the result
  Json rec;
  rec["bench"] = "eager";
  rec["case"] = "add_16M";
  rec["tessera_ms"] = t.median_ms;
  add_numpy_peer(rec, "add_16M", o, show_config);
  rec["gbps"] = bytes / (t.median_ms * 1e6);
  rec["peak_mb"] = peak.extra_mb();
  emit(rec);
}

void tanh_chain_16M(const Options& o, bool show_config) {
  Array x = uniform_array({k16M}, 3);
  PeakRss peak;
  Timing t = time_median(
      [&] {
        Array r = tnp::tanh(x * 1.5 + 0.3) * x;
        r.block_until_ready();
        peak.sample();
      },
      o.warmup, o.reps);
  const double bytes = 2.0 * k16M * sizeof(float);  // read x once, write the result once
  Json rec;
  rec["bench"] = "eager";
  rec["case"] = "tanh_chain_16M";
  rec["tessera_ms"] = t.median_ms;
  add_numpy_peer(rec, "tanh_chain_16M", o, show_config);
  rec["gbps"] = bytes / (t.median_ms * 1e6);
  rec["peak_mb"] = peak.extra_mb();
  emit(rec);
}

void matmul_2048(const Options& o) {
  const int n = 2048;
  std::vector<float> ha = uniform(int64_t{n} * n, 4), hb = uniform(int64_t{n} * n, 5);
  Array a = tnp::array(ha, {n, n});
  Array b = tnp::array(hb, {n, n});
  Array c;
  PeakRss peak;
  Timing t = time_median(
      [&] {
        c = tnp::matmul(a, b);
        c.block_until_ready();
        peak.sample();
      },
      o.warmup, o.reps);
  const double peak_mb = peak.extra_mb();

  // Peer: the same product through cblas_sgemm directly, on the same data, with OpenBLAS's own
  // 2 threads. (Tessera runs OpenBLAS single-threaded inside its pool: restore that after.)
  const int tessera_blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(2);
  std::vector<float> hc(static_cast<size_t>(n) * n);
  Timing tp = time_median(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, ha.data(), n,
                    hb.data(), n, 0.0f, hc.data(), n);
      },
      o.warmup, o.reps);
  openblas_set_num_threads(tessera_blas_threads);
  // The two results must agree (up to summation order).
  const float* pc = c.data<float>();
  double max_err = 0, max_ref = 0;
  for (size_t i = 0; i < hc.size(); ++i) {
    max_err = std::max(max_err, std::fabs(double(pc[i]) - double(hc[i])));
    max_ref = std::max(max_ref, std::fabs(double(hc[i])));
  }
  const double flops = 2.0 * n * n * n;
  Json rec;
  rec["bench"] = "eager";
  rec["case"] = "matmul_2048";
  rec["tessera_ms"] = t.median_ms;
  rec["peer"] = std::string("cblas_sgemm (OpenBLAS ") + openblas_get_corename() + ", 2 threads)";
  rec["peer_ms"] = tp.median_ms;
  rec["gflops"] = flops / (t.median_ms * 1e6);
  rec["peer_gflops"] = flops / (tp.median_ms * 1e6);
  rec["peak_mb"] = peak_mb;
  rec["max_rel_diff"] = max_err / std::max(max_ref, 1e-30);
  emit(rec);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> cases = {"dispatch_add_1elem", "add_16M", "tanh_chain_16M",
                                          "matmul_2048"};
  Options o = parse_options(argc, argv, cases);
  try {
    bool show_config = true;  // the NumPy peer prints its BLAS configuration once
    if (o.wants("dispatch_add_1elem")) dispatch_add_1elem(o);
    if (o.wants("add_16M")) {
      add_16M(o, show_config);
      show_config = false;
    }
    if (o.wants("tanh_chain_16M")) tanh_chain_16M(o, show_config);
    if (o.wants("matmul_2048")) matmul_2048(o);
  } catch (const std::exception& e) {
    std::cerr << "bench_eager: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
