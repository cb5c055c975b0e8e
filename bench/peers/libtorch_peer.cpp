#include "peers/libtorch_peer.h"

#include <ATen/Parallel.h>
#include <torch/types.h>
#include <torch/version.h>
#include <cmath>
#include <functional>
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

namespace {

// A float32 tensor of its own holding v.
torch::Tensor tensor(const std::vector<float>& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kFloat32)
      .clone();
}

// Times f (2 intra-op threads), leaves its last result in `out` and returns the median ms.
double time_case(const std::function<torch::Tensor()>& f, int warmup, int reps,
                 std::vector<float>& out) {
  at::set_num_threads(2);
  torch::Tensor r;
  Timing t = time_median([&] { r = f(); }, warmup, reps);
  r = r.contiguous().reshape({-1});
  out.assign(r.data_ptr<float>(), r.data_ptr<float>() + r.numel());
  at::set_num_threads(1);
  return t.median_ms;
}

}  // namespace

double elementwise_ms(const std::string& which, const std::vector<float>& x,
                      const std::vector<float>& y, int warmup, int reps, std::vector<float>& out) {
  torch::Tensor tx = tensor(x);
  std::function<torch::Tensor()> f;
  if (which == "tanh_chain") {
    f = [&] { return torch::tanh(tx * 1.5 + 0.3) * tx; };
  } else if (which == "gelu_tanh") {
    f = [&] { return torch::gelu(tx, "tanh"); };
  } else if (which == "logaddexp") {
    torch::Tensor ty = tensor(y);
    f = [tx, ty] { return torch::logaddexp(tx, ty); };
  } else if (which == "bias_relu") {
    const auto n = static_cast<int64_t>(y.size() / 2);
    torch::Tensor t2 = tx.reshape({n, n});
    torch::Tensor ty = tensor(y);
    torch::Tensor s = ty.slice(0, 0, n), b = ty.slice(0, n, 2 * n);
    f = [t2, s, b] { return torch::relu(t2 * s + b); };
  } else if (which == "stencil") {
    const auto n = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(x.size()))));
    torch::Tensor t2 = tx.reshape({n, n});
    f = [t2, n] {
      torch::Tensor p = torch::constant_pad_nd(t2, {1, 1});
      return p.slice(1, 0, n) + p.slice(1, 2, n + 2) - 2.0 * t2;
    };
  } else if (which == "embedding") {
    torch::Tensor table = tx.reshape({static_cast<int64_t>(x.size()) / 256, 256});
    torch::Tensor ids = tensor(y).to(torch::kLong);
    f = [table, ids] { return table.index_select(0, ids) * 16.0 + 1.0; };
  } else if (which == "concat") {
    const auto half = static_cast<int64_t>(x.size()) / 4096;
    torch::Tensor a = tx.reshape({4096, half}), b = tensor(y).reshape({4096, half});
    f = [a, b] { return torch::cat({a * 2.0, b + 1.0}, 1); };
  } else {
    throw std::runtime_error("libtorch peer: unknown case " + which);
  }
  return time_case(f, warmup, reps, out);
}

double rows_ms(const std::string& which, const std::vector<float>& x, int64_t rows,
               const std::vector<float>& p, int warmup, int reps, std::vector<float>& out) {
  const auto cols = static_cast<int64_t>(x.size()) / rows;
  torch::Tensor tx = tensor(x).reshape({rows, cols});
  std::function<torch::Tensor()> f;
  if (which == "softmax_rows") {
    f = [tx] { return torch::softmax(tx, 1); };
  } else if (which == "layernorm") {
    torch::Tensor tp = tensor(p);
    torch::Tensor gamma = tp.slice(0, 0, cols).contiguous();
    torch::Tensor beta = tp.slice(0, cols, 2 * cols).contiguous();
    f = [tx, gamma, beta, cols] { return torch::layer_norm(tx, {cols}, gamma, beta, 1e-5); };
  } else if (which == "argmax_rows") {
    f = [tx] { return torch::argmax(tx, 1).to(torch::kFloat); };
  } else if (which == "col_sum") {
    torch::Tensor ty = tensor(p).reshape({rows, cols});
    f = [tx, ty] { return (tx * ty).sum(0); };
  } else {
    throw std::runtime_error("libtorch peer: unknown case " + which);
  }
  return time_case(f, warmup, reps, out);
}

}  // namespace tessera::bench::torch_peer
