// Suite `transforms`: Tessera's function transformations (value_and_grad, vmap of grad) on small
// MLPs, against PyTorch peers measured in the same run. One JSON line per case (see harness.h).
//
//   grad_mlp_eager              value_and_grad of an MLP 1024-1024-1024-10 (relu, softmax
//                               cross-entropy, float32) on a batch of 256; peer libtorch
//                               autograd (torch::autograd::grad), timed interleaved with it
//   per_example_grads_128       vmap(grad(loss), {nullopt, 0, 0}) of an MLP 784-512-10 over 128
//                               examples; peer functorch.vmap(functorch.grad(loss)) (Python),
//                               run with the default malloc and with glibc keeping freed
//                               memory (bench/peers/functorch_peer.py): the faster is the peer
//   per_example_grads_vs_loop   the same vmap(grad) against a Tessera loop calling grad once
//                               per example (peer: that loop), timed interleaved with it
//
// Each case also checks, once and untimed, that Tessera's gradients agree with the peer's to
// float32 tolerance: "max_rel_diff" is the largest over the parameters of
// max|tessera - peer| / max|peer|, and a "warning" field appears when it exceeds 1e-4.
// The libtorch peer runs OpenBLAS with as many threads as Tessera's pool (TESSERA_NUM_THREADS,
// or the CPU count); torch's intra-op threads are tried at 1 and that many, the faster kept.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <tessera/tessera.h>

#include "harness.h"
#ifdef TESSERA_BENCH_HAVE_TORCH
#include "peers/libtorch_peer.h"
#include "peers/libtorch_transforms_peer.h"
#endif

namespace tnp = tessera::numpy;
namespace lax = tessera::lax;
using tessera::Array;
using tessera::Shape;
using namespace tessera::bench;

namespace bench_mlp {

// 3-layer MLP (grad_mlp_eager); weights are [in, out]: h = x @ w + b.
struct Mlp3 {
  Array w1, b1, w2, b2, w3, b3;
};
TESSERA_REGISTER_PYTREE(Mlp3, w1, b1, w2, b2, w3, b3);

// 2-layer MLP (per-example gradients).
struct Mlp2 {
  Array w1, b1, w2, b2;
};
TESSERA_REGISTER_PYTREE(Mlp2, w1, b1, w2, b2);

}  // namespace bench_mlp

namespace {

using bench_mlp::Mlp2;
using bench_mlp::Mlp3;

constexpr double kGradTolerance = 1e-4;
constexpr int kClasses = 10;

[[maybe_unused]] int peer_threads() {
  if (const char* env = std::getenv("TESSERA_NUM_THREADS"))
    if (int n = std::atoi(env); n > 0) return n;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Times a() and b() alternately (warm-up calls of each first), so that both see the same
// machine load however it drifts; each sample is timed on steady_clock.
template <class A, class B>
std::pair<Timing, Timing> time_interleaved(A&& a, B&& b, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) {
    a();
    b();
  }
  auto once = [](auto& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> sa, sb;
  for (int i = 0; i < reps; ++i) {
    sa.push_back(once(a));
    sb.push_back(once(b));
  }
  return {summarize(std::move(sa)), summarize(std::move(sb))};
}

// ---- data ----
std::vector<float> uniform(int64_t n, float bound, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

// A dense layer initialized as torch.nn.Linear does: U(-1/sqrt(in), 1/sqrt(in)).
std::pair<Array, Array> linear_init(int64_t in, int64_t out, std::mt19937& gen) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  return {tnp::array(uniform(in * out, bound, gen), {in, out}),
          tnp::array(uniform(out, bound, gen), {out})};
}

std::vector<int64_t> random_labels(int64_t n, std::mt19937& gen) {
  std::uniform_int_distribution<int64_t> dist(0, kClasses - 1);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t& l : v) l = dist(gen);
  return v;
}

// One-hot float32 rows [n, kClasses] (the JAX way to feed labels to a cross-entropy).
Array one_hot(const std::vector<int64_t>& labels) {
  std::vector<float> v(labels.size() * kClasses, 0.0f);
  for (size_t i = 0; i < labels.size(); ++i) v[i * kClasses + labels[i]] = 1.0f;
  return tnp::array(v, {static_cast<int64_t>(labels.size()), kClasses});
}

// ---- the model, as a Tessera user writes it ----
Array relu(const Array& x) { return tnp::maximum(x, 0.0f); }

// Softmax cross-entropy over the last axis, averaged over the leading ones (a scalar for a
// single example): logsumexp(z) - <onehot, z>, with the max shift outside the derivative as
// jax.nn.logsumexp does.
Array softmax_xent(const Array& logits, const Array& onehot) {
  Array m = lax::stop_gradient(tnp::max(logits, -1, true));
  Array shifted = logits - m;
  Array lse = tnp::log(tnp::sum(tnp::exp(shifted), -1, true));
  return tnp::mean(tnp::sum(onehot * (lse - shifted), -1));
}

Array mlp3_loss(const Mlp3& p, const Array& x, const Array& onehot) {
  Array h = relu(tnp::matmul(x, p.w1) + p.b1);
  h = relu(tnp::matmul(h, p.w2) + p.b2);
  return softmax_xent(tnp::matmul(h, p.w3) + p.b3, onehot);
}

Array mlp2_loss(const Mlp2& p, const Array& x, const Array& onehot) {
  Array h = relu(tnp::matmul(x, p.w1) + p.b1);
  return softmax_xent(tnp::matmul(h, p.w2) + p.b2, onehot);
}

// ---- gradient comparison ----
struct Diff {
  double max_rel = 0;  // max over leaves of max|a - b| / max|b|
  std::string worst;   // the leaf that attains it
};

void accumulate(Diff& d, const std::string& name, const float* a, const float* b, size_t n) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < n; ++i) {
    err = std::max(err, std::fabs(double(a[i]) - double(b[i])));
    ref = std::max(ref, std::fabs(double(b[i])));
  }
  const double rel = err / std::max(ref, 1e-30);
  if (!(rel <= d.max_rel)) {  // also catches NaN
    d.max_rel = rel;
    d.worst = name;
  }
}

void add_diff(Json& rec, const Diff& d, const std::string& against) {
  rec["max_rel_diff"] = d.max_rel;
  if (!(d.max_rel <= kGradTolerance))
    rec["warning"] = "gradients differ from " + against + " beyond float32 tolerance (" + d.worst +
                     ": " + std::to_string(d.max_rel) + ")";
}

// ---- grad_mlp_eager ----
void grad_mlp_eager(const Options& o) {
  const int64_t batch = 256, in = 1024, hidden = 1024;
  std::mt19937 gen(11);
  Mlp3 p;
  std::tie(p.w1, p.b1) = linear_init(in, hidden, gen);
  std::tie(p.w2, p.b2) = linear_init(hidden, hidden, gen);
  std::tie(p.w3, p.b3) = linear_init(hidden, kClasses, gen);
  std::vector<float> xh = uniform(batch * in, 1.0f, gen);
  Array x = tnp::array(xh, {batch, in});
  std::vector<int64_t> labels = random_labels(batch, gen);
  Array y = one_hot(labels);

  auto vg = tessera::value_and_grad(mlp3_loss);
  Array loss;
  Mlp3 g;
  auto tessera_step = [&] {
    g = Mlp3{};  // as a training step does: the previous gradients are gone
    std::tie(loss, g) = vg(p, x, y);
  };
  // Peak memory over Tessera's first calls alone (the timing below interleaves the peer's).
  PeakRss peak;
  for (int i = 0; i < o.warmup; ++i) {
    tessera_step();
    peak.sample();
  }
  const double peak_mb = peak.extra_mb();
  // Forward 2·B·(in·h + h·h + h·10) flops; the backward pass twice that.
  const double flops = 3.0 * 2.0 * batch * (in * hidden + hidden * hidden + hidden * kClasses);
  Json rec;
  rec["bench"] = "transforms";
  rec["case"] = "grad_mlp_eager";
#ifdef TESSERA_BENCH_HAVE_TORCH
  std::vector<torch_peer::HostTensor> hp;
  for (const Array& a : {p.w1, p.b1, p.w2, p.b2, p.w3, p.b3})
    hp.push_back({a.to_vector<float>(), std::vector<int64_t>(a.shape().begin(), a.shape().end())});
  // PyTorch's OpenMP intra-op pool fights OpenBLAS's threads on few cores: try 1 and
  // peer_threads() intra-op threads (OpenBLAS peer_threads() threads) and keep the faster.
  std::unique_ptr<torch_peer::MlpGrad> peer;
  double best = 0;
  for (int intra : {1, peer_threads()}) {
    auto cand = std::make_unique<torch_peer::MlpGrad>(hp, torch_peer::HostTensor{xh, {batch, in}},
                                                      labels, intra, peer_threads());
    const double ms = time_median([&] { cand->step(); }, 1, 3).median_ms;
    if (!peer || ms < best) {
      peer = std::move(cand);
      best = ms;
    }
    if (peer_threads() == 1) break;
  }
  auto [t, tp] = time_interleaved(
      tessera_step, [&] { peer->step(); }, o.warmup, o.reps);
  rec["tessera_ms"] = t.median_ms;
  rec["peer"] = torch_peer::name() + " autograd (" + std::to_string(peer->intra_op_threads()) +
                " intra-op threads, OpenBLAS " + std::to_string(peer->blas_threads()) + ")";
  rec["peer_ms"] = tp.median_ms;
  rec["gflops"] = flops / (t.median_ms * 1e6);
  rec["peak_mb"] = peak_mb;
  rec["tessera_min_ms"] = t.min_ms;
  rec["peer_min_ms"] = tp.min_ms;
  Diff d;
  const std::vector<Array> ours = {g.w1, g.b1, g.w2, g.b2, g.w3, g.b3};
  const std::vector<torch_peer::HostTensor> theirs = peer->grads();
  const char* const leaf[] = {"w1", "b1", "w2", "b2", "w3", "b3"};
  for (size_t i = 0; i < ours.size(); ++i)
    accumulate(d, leaf[i], ours[i].data<float>(), theirs[i].data.data(),
               static_cast<size_t>(ours[i].size()));
  const float our_loss = loss.item<float>(), their_loss = peer->loss();
  accumulate(d, "loss", &our_loss, &their_loss, 1);
  add_diff(rec, d, "libtorch's");
#else
  Timing t = time_median(tessera_step, o.warmup, o.reps);
  rec["tessera_ms"] = t.median_ms;
  rec["peer"] = "none";
  rec["gflops"] = flops / (t.median_ms * 1e6);
  rec["peak_mb"] = peak_mb;
  rec["tessera_min_ms"] = t.min_ms;
#endif
  emit(rec);
}

// ---- per-example gradients ----
struct PerExampleData {
  Mlp2 params;
  std::vector<float> xh;
  std::vector<int64_t> labels;
  Array x, y;  // [n, in], one-hot [n, kClasses]
  int64_t n = 128, in = 784, hidden = 512;
};

PerExampleData per_example_data() {
  PerExampleData d;
  std::mt19937 gen(23);
  std::tie(d.params.w1, d.params.b1) = linear_init(d.in, d.hidden, gen);
  std::tie(d.params.w2, d.params.b2) = linear_init(d.hidden, kClasses, gen);
  d.xh = uniform(d.n * d.in, 1.0f, gen);
  d.x = tnp::array(d.xh, {d.n, d.in});
  d.labels = random_labels(d.n, gen);
  d.y = one_hot(d.labels);
  return d;
}

auto per_example_fn() { return tessera::vmap(tessera::grad(mlp2_loss), {std::nullopt, 0, 0}); }

// Runs the vmapped per-example gradients: timing (each call starts with the previous result
// released, as a training step does), the last result and the peak extra memory.
struct VmapRun {
  Timing timing;
  Mlp2 grads;
  double peak_mb = 0;
};
VmapRun run_vmap(const PerExampleData& d, const Options& o) {
  auto pe = per_example_fn();
  VmapRun r;
  PeakRss peak;
  r.timing = time_median(
      [&] {
        r.grads = Mlp2{};
        r.grads = pe(d.params, d.x, d.y);
        peak.sample();
      },
      o.warmup, o.reps);
  r.peak_mb = peak.extra_mb();
  return r;
}

const std::vector<std::string> kMlp2Leaves = {"w1", "b1", "w2", "b2"};
std::vector<Array> leaves(const Mlp2& m) { return {m.w1, m.b1, m.w2, m.b2}; }

void per_example_grads_128(const Options& o) {
  PerExampleData d = per_example_data();
  VmapRun r = run_vmap(d, o);
  Json rec;
  rec["bench"] = "transforms";
  rec["case"] = "per_example_grads_128";
  rec["tessera_ms"] = r.timing.median_ms;

  // The peer reads the same parameters and batch from .npy files and writes its gradients back.
  std::string tmpl = (std::filesystem::temp_directory_path() / "tessera_bench_XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("per_example_grads_128: mkdtemp failed");
  const std::filesystem::path dir = tmpl;
  const std::vector<Array> ps = leaves(d.params);
  for (size_t i = 0; i < ps.size(); ++i)
    tessera::io::save_npy(dir / (kMlp2Leaves[i] + ".npy"), ps[i]);
  tessera::io::save_npy(dir / "x.npy", d.x);
  tessera::io::save_npy(dir / "labels.npy", tnp::array(d.labels, {d.n}));
  // Two runs of the peer: torch's default allocator, which hands each 205 MB gradient buffer
  // back to the kernel (fresh pages are very slow to touch on some VMs), and glibc told to keep
  // freed memory (functorch_peer.py --keep-freed-memory). The faster is the peer; both are
  // reported.
  std::optional<Json> peer;
  for (bool keep : {false, true}) {
    std::vector<std::string> args = {
        "per_example_grads",    dir.string(), "--reps",
        std::to_string(o.reps), "--warmup",   std::to_string(o.warmup)};
    if (keep) args.push_back("--keep-freed-memory");
    auto run = run_python_peer("functorch_peer.py", args);
    if (!run) continue;
    rec[keep ? "functorch_keep_freed_ms" : "functorch_default_malloc_ms"] = (*run)["peer_ms"];
    if (!peer || (*run)["peer_ms"].get<double>() < (*peer)["peer_ms"].get<double>()) peer = run;
  }
  if (peer) {
    rec["peer"] = (*peer)["peer"];
    rec["peer_ms"] = (*peer)["peer_ms"];
    Diff diff;
    const std::vector<Array> ours = leaves(r.grads);
    for (size_t i = 0; i < ours.size(); ++i) {
      Array theirs = tessera::io::load_npy(dir / ("g_" + kMlp2Leaves[i] + ".npy"));
      if (theirs.shape() != ours[i].shape())
        throw std::runtime_error("per_example_grads_128: the peer's " + kMlp2Leaves[i] +
                                 " gradient has shape " + theirs.aval().str() + ", ours " +
                                 ours[i].aval().str());
      accumulate(diff, kMlp2Leaves[i], ours[i].data<float>(), theirs.data<float>(),
                 static_cast<size_t>(ours[i].size()));
    }
    rec["peak_mb"] = r.peak_mb;
    rec["peer_peak_mb"] = (*peer)["peer_peak_mb"];
    for (const char* k : {"torch_by_hand_ms", "torch_by_hand_max_rel_diff"})
      if (peer->contains(k)) rec[k] = (*peer)[k];
    rec["tessera_min_ms"] = r.timing.min_ms;
    add_diff(rec, diff, "functorch's");
  } else {
    rec["peer"] = "none";
    rec["peak_mb"] = r.peak_mb;
    rec["tessera_min_ms"] = r.timing.min_ms;
  }
  std::filesystem::remove_all(dir);
  emit(rec);
}

void per_example_grads_vs_loop(const Options& o) {
  PerExampleData d = per_example_data();
  auto pe = per_example_fn();
  Mlp2 batched_grads;
  auto vmapped = [&] {
    batched_grads = Mlp2{};
    batched_grads = pe(d.params, d.x, d.y);
  };

  // The loop gets its examples as separate arrays made beforehand (untimed), and keeps each
  // example's gradients as they come (no stacking): only the grad calls are timed.
  std::vector<Array> xs, ys;
  for (int64_t i = 0; i < d.n; ++i) {
    xs.push_back(tnp::array(
        std::vector<float>(d.xh.begin() + i * d.in, d.xh.begin() + (i + 1) * d.in), {d.in}));
    ys.push_back(tnp::reshape(one_hot({d.labels[i]}), {kClasses}));
  }
  auto g = tessera::grad(mlp2_loss);
  std::vector<Mlp2> loop_grads(static_cast<size_t>(d.n));
  auto loop = [&] {
    for (int64_t i = 0; i < d.n; ++i) {
      loop_grads[i] = Mlp2{};
      loop_grads[i] = g(d.params, xs[i], ys[i]);
    }
  };
  auto [tv, tl] = time_interleaved(vmapped, loop, o.warmup, o.reps);

  Diff diff;
  const std::vector<Array> batched = leaves(batched_grads);
  for (int64_t i = 0; i < d.n; ++i) {
    const std::vector<Array> one = leaves(loop_grads[i]);
    for (size_t k = 0; k < one.size(); ++k) {
      const size_t per = static_cast<size_t>(one[k].size());
      accumulate(diff, kMlp2Leaves[k] + "[" + std::to_string(i) + "]",
                 batched[k].data<float>() + i * per, one[k].data<float>(), per);
    }
  }
  Json rec;
  rec["bench"] = "transforms";
  rec["case"] = "per_example_grads_vs_loop";
  rec["tessera_ms"] = tv.median_ms;
  rec["peer"] = "Tessera loop of grad over " + std::to_string(d.n) + " examples";
  rec["peer_ms"] = tl.median_ms;
  rec["tessera_min_ms"] = tv.min_ms;
  rec["peer_min_ms"] = tl.min_ms;
  add_diff(rec, diff, "the loop's");
  emit(rec);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> cases = {"grad_mlp_eager", "per_example_grads_128",
                                          "per_example_grads_vs_loop"};
  Options o = parse_options(argc, argv, cases);
  try {
    if (o.wants("grad_mlp_eager")) grad_mlp_eager(o);
    if (o.wants("per_example_grads_128")) per_example_grads_128(o);
    if (o.wants("per_example_grads_vs_loop")) per_example_grads_vs_loop(o);
  } catch (const std::exception& e) {
    std::cerr << "bench_transforms: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
