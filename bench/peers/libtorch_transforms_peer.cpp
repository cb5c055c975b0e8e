#include "peers/libtorch_transforms_peer.h"

#include <cblas.h>

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/functional/loss.h>
#include <torch/types.h>

#include <stdexcept>

namespace tessera::bench::torch_peer {
namespace {

torch::Tensor to_tensor(const HostTensor& h) {
  // from_blob borrows the data: clone so that the tensor owns its copy.
  return torch::from_blob(const_cast<float*>(h.data.data()), h.shape, torch::kFloat32).clone();
}

HostTensor to_host(const torch::Tensor& t) {
  torch::Tensor c = t.contiguous();
  HostTensor h;
  h.shape.assign(c.sizes().begin(), c.sizes().end());
  const float* p = c.data_ptr<float>();
  h.data.assign(p, p + c.numel());
  return h;
}

// Sets ATen's and OpenBLAS's thread counts for a scope.
class ThreadScope {
 public:
  ThreadScope(int intra_op, int blas)
      : saved_intra_(at::get_num_threads()), saved_blas_(openblas_get_num_threads()) {
    if (intra_op != saved_intra_) at::set_num_threads(intra_op);
    if (blas != saved_blas_) openblas_set_num_threads(blas);
  }
  ~ThreadScope() {
    if (at::get_num_threads() != saved_intra_) at::set_num_threads(saved_intra_);
    if (openblas_get_num_threads() != saved_blas_) openblas_set_num_threads(saved_blas_);
  }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_intra_, saved_blas_;
};

}  // namespace

struct MlpGrad::Impl {
  std::vector<torch::Tensor> params;
  torch::Tensor x, labels, loss;
  std::vector<torch::Tensor> grads;
};

MlpGrad::MlpGrad(const std::vector<HostTensor>& params, const HostTensor& x,
                 const std::vector<int64_t>& labels, int intra_op_threads, int blas_threads)
    : impl_(std::make_unique<Impl>()),
      intra_op_threads_(intra_op_threads),
      blas_threads_(blas_threads) {
  if (params.empty() || params.size() % 2 != 0)
    throw std::invalid_argument("libtorch peer: params must be {w1, b1, w2, b2, ...}");
  for (const HostTensor& h : params) impl_->params.push_back(to_tensor(h).requires_grad_(true));
  impl_->x = to_tensor(x);
  impl_->labels = torch::from_blob(const_cast<int64_t*>(labels.data()),
                                   {static_cast<int64_t>(labels.size())}, torch::kInt64)
                      .clone();
}

MlpGrad::~MlpGrad() = default;

void MlpGrad::step() {
  ThreadScope threads(intra_op_threads_, blas_threads_);
  const std::vector<torch::Tensor>& ps = impl_->params;
  impl_->grads.clear();  // as a training step does: the previous gradients are gone
  torch::Tensor h = impl_->x;
  for (size_t i = 0; i < ps.size(); i += 2) {
    h = torch::addmm(ps[i + 1], h, ps[i]);  // h @ w + b, as torch.nn.functional.linear
    if (i + 2 < ps.size()) h = torch::relu(h);
  }
  impl_->loss = torch::nn::functional::cross_entropy(h, impl_->labels);
  impl_->grads = torch::autograd::grad({impl_->loss}, ps);
}

float MlpGrad::loss() const { return impl_->loss.item<float>(); }

std::vector<HostTensor> MlpGrad::grads() const {
  std::vector<HostTensor> out;
  for (const torch::Tensor& g : impl_->grads) out.push_back(to_host(g));
  return out;
}

}  // namespace tessera::bench::torch_peer
