// Suite `numpy_ops`: tessera::numpy functions of issue 5 against NumPy (bench/peers/
// numpy_peer.py, same sizes, dtype and value range, run in the same invocation). One JSON line
// per case (see harness.h); ratio = NumPy ms / Tessera ms.
//
//   sum_rows_4096x4096   sum(x, axis=1), float32 [4096, 4096]
//   transpose_4096x4096  transpose(x) materialized; peer np.ascontiguousarray(x.T)
//   einsum_bhqd_bhkd     einsum("bhqd,bhkd->bhqk"), B=1 H=8 Q=K=512 d=64, float32;
//                        peer np.einsum(..., optimize=True)
//   logaddexp_16M        logaddexp(x, y), float32, 16M elements
//   concatenate_8x2M     concatenate of 8 float32 arrays of 2M elements
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.h>

#include "harness.h"

namespace tnp = tessera::numpy;
using tessera::Array;
using namespace tessera::bench;

namespace {

constexpr int64_t k16M = int64_t{16} * 1024 * 1024;

Array uniform_array(const tessera::Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(tessera::shape_size(shape)));
  for (float& x : v) x = dist(gen);
  return tnp::array(v, shape);
}

template <class F>
void run_case(const std::string& name, const Options& o, bool show_config, double bytes, F&& f) {
  PeakRss peak;
  Timing t = time_median(
      [&] {
        Array r = f();
        r.block_until_ready();
        peak.sample();
      },
      o.warmup, o.reps);
  Json rec;
  rec["bench"] = "numpy_ops";
  rec["case"] = name;
  rec["tessera_ms"] = t.median_ms;
  add_numpy_peer(rec, name, o, show_config);
  if (bytes > 0) rec["gbps"] = bytes / (t.median_ms * 1e6);
  rec["peak_mb"] = peak.extra_mb();
  emit(rec);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> cases = {"sum_rows_4096x4096", "transpose_4096x4096",
                                          "einsum_bhqd_bhkd", "logaddexp_16M", "concatenate_8x2M"};
  Options o = parse_options(argc, argv, cases);
  try {
    bool show_config = true;
    auto next = [&] {
      const bool s = show_config;
      show_config = false;
      return s;
    };
    const double f4 = sizeof(float);
    if (o.wants("sum_rows_4096x4096")) {
      Array x = uniform_array({4096, 4096}, 1);
      // Check against a float64 loop before timing.
      Array s = tnp::sum(x, int64_t{1});
      const float* px = x.data<float>();
      double worst = 0;
      for (int64_t i = 0; i < 4096; i += 511) {
        double ref = 0;
        for (int64_t j = 0; j < 4096; ++j) ref += px[i * 4096 + j];
        worst = std::max(worst, std::fabs(ref - s.data<float>()[i]));
      }
      if (worst > 1e-2) throw std::runtime_error("sum_rows: wrong result");
      run_case("sum_rows_4096x4096", o, next(), 4096.0 * 4096 * f4,
               [&] { return tnp::sum(x, int64_t{1}); });
    }
    if (o.wants("transpose_4096x4096")) {
      Array x = uniform_array({4096, 4096}, 2);
      run_case("transpose_4096x4096", o, next(), 2.0 * 4096 * 4096 * f4,
               [&] { return tnp::transpose(x); });
    }
    if (o.wants("einsum_bhqd_bhkd")) {
      Array q = uniform_array({1, 8, 512, 64}, 3), k = uniform_array({1, 8, 512, 64}, 4);
      run_case("einsum_bhqd_bhkd", o, next(), 0, [&] {
        return tnp::einsum("bhqd,bhkd->bhqk", {q, k});
      });
    }
    if (o.wants("logaddexp_16M")) {
      Array x = uniform_array({k16M}, 5), y = uniform_array({k16M}, 6);
      run_case("logaddexp_16M", o, next(), 3.0 * k16M * f4, [&] { return tnp::logaddexp(x, y); });
    }
    if (o.wants("concatenate_8x2M")) {
      std::vector<Array> xs;
      for (uint32_t i = 0; i < 8; ++i) xs.push_back(uniform_array({2 * 1024 * 1024}, 10 + i));
      run_case("concatenate_8x2M", o, next(), 2.0 * k16M * f4,
               [&] { return tnp::concatenate(xs); });
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_numpy_ops: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
