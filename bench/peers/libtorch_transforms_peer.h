// libtorch peers for the `transforms` suite (bench/transforms_bench.cpp), in their own
// translation unit so that only it sees Torch's headers. Built only with Torch
// (TESSERA_BENCH_HAVE_TORCH).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::bench::torch_peer {

// A float32 tensor on the host, row-major.
struct HostTensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
};

// value_and_grad of an MLP in PyTorch autograd, as its users write it: params = {w1, b1, w2,
// b2, ...} with w_i of shape [in, out] (requires_grad), h = relu(addmm(b, h, w)) between the
// layers, cross_entropy(logits, labels) averaged over the batch, then
// torch::autograd::grad(loss, params).
//
// Each step() runs with `intra_op_threads` ATen threads and `blas_threads` OpenBLAS threads and
// restores the previous settings when it returns, so that steps can be interleaved with
// Tessera's (which keeps OpenBLAS single-threaded inside its own pool).
class MlpGrad {
 public:
  MlpGrad(const std::vector<HostTensor>& params, const HostTensor& x,
          const std::vector<int64_t>& labels, int intra_op_threads, int blas_threads);
  ~MlpGrad();
  MlpGrad(const MlpGrad&) = delete;
  MlpGrad& operator=(const MlpGrad&) = delete;

  void step();
  // The last step's loss and gradients (one per parameter, in the order given).
  float loss() const;
  std::vector<HostTensor> grads() const;
  int intra_op_threads() const { return intra_op_threads_; }
  int blas_threads() const { return blas_threads_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int intra_op_threads_;
  int blas_threads_;
};

}  // namespace tessera::bench::torch_peer
