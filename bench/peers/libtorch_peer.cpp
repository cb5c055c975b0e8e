#include "peers/libtorch_peer.h"

#include <ATen/Parallel.h>
#include <torch/types.h>
#include <torch/version.h>
#include <stdexcept>

namespace tessera::bench::torch_peer {

std::string name() { return std::string("libtorch ") + TORCH_VERSION; }

double add_1elem_ms(int64_t iters, int warmup, int reps) {
  // One intra-op thread: a 1-element add never parallelizes, and an idle OpenMP pool
  // spinning beside Tessera's threads would distort the other cases.
  at::set_num_threads(1);
  torch::Tensor x = torch::rand({1}, torch::kFloat32);
  torch::Tensor y = torch::rand({1}, torch::kFloat32);
  torch::Tensor r;
  Timing t = time_median(
      [&] {
        for (int64_t i = 0; i < iters; ++i) r = torch::add(x, y);
      },
      warmup, reps);
  if (r.item<float>() != x.item<float>() + y.item<float>())
    throw std::runtime_error("libtorch peer: torch::add returned a wrong sum");
  return t.median_ms / static_cast<double>(iters);
}

}  // namespace tessera::bench::torch_peer
