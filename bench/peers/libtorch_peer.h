// libtorch peers, compiled in their own translation unit so that only it sees Torch's headers.
// Built only when find_package(Torch) succeeds (TESSERA_BENCH_HAVE_TORCH).
#pragma once

#include <string>
#include <vector>

#include "harness.h"

namespace tessera::bench::torch_peer {

// "libtorch <version>".
std::string name();
// torch::add on two 1-element float32 tensors, `iters` calls per timed sample: the per-call
// timing of the median sample, in ms.
double add_1elem_ms(int64_t iters, int warmup, int reps);

// The jit suite's fusion cases in libtorch eager mode (2 intra-op threads, as Tessera's pool):
// `which` is "tanh_chain" (x), "gelu_tanh" (x; torch::gelu's tanh approximation, one fused
// kernel), "logaddexp" (x, y), "bias_relu" (x as [n, n], y holding the scale then the bias,
// each [n]), "stencil", "concat" or "embedding" (x a [rows, 256] table, y the row ids as exact
// floats). Returns the median ms and the last result in `out`.
double elementwise_ms(const std::string& which, const std::vector<float>& x,
                      const std::vector<float>& y, int warmup, int reps, std::vector<float>& out);

// The jit suite's row cases in libtorch eager mode (2 intra-op threads), x as [rows, cols]:
// `which` is "softmax_rows" (torch::softmax(x, 1)) or "layernorm" (torch::layer_norm(x, {cols},
// gamma, beta, 1e-5), p holding gamma then beta, each [cols]). Returns the median ms and the last
// result in `out`.
double rows_ms(const std::string& which, const std::vector<float>& x, int64_t rows,
               const std::vector<float>& p, int warmup, int reps, std::vector<float>& out);

}  // namespace tessera::bench::torch_peer
