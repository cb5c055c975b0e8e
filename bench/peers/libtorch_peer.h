// libtorch peers, compiled in their own translation unit so that only it sees Torch's headers.
// Built only when find_package(Torch) succeeds (TESSERA_BENCH_HAVE_TORCH).
#pragma once

#include "harness.h"

namespace tessera::bench::torch_peer {

// "libtorch <version>".
std::string name();
// torch::add on two 1-element float32 tensors, `iters` calls per timed sample: the per-call
// timing of the median sample, in ms.
double add_1elem_ms(int64_t iters, int warmup, int reps);

}  // namespace tessera::bench::torch_peer
