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
//
// Loop fusion (compiler/fusion.h, compiler/cpu/): each case is one jitted elementwise program
// that becomes one compiled kernel (no intermediate buffer), against the same program run
// eagerly by Tessera (every op its own pass over memory), NumPy (subprocess, same data
// distribution) and libtorch eager (2 threads, in process) — one record per peer. compile_ms is
// the first jitted call (trace, passes, fusion, LLVM at O2); the results are checked against
// eager Tessera (bitwise up to NaN payloads: the expansions are the eager kernels' bits) and
// libtorch (within 1e-5 relative). `gbps` is the essential traffic (inputs read once, the output
// written once) over tessera_ms; `floor_ms` is that traffic at `floor_gbps`, the bandwidth
// Tessera's eager add_16M (z = x + y, 16M float32 each, 3 x 64 MB) reaches in the same run
// (measured once, before the first case that reports it).
//   jit_tanh_chain_16M      tanh(x * 1.5 + 0.3) * x, float32, 16M elements
//   jit_gelu_tanh_16M       0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3))); torch::gelu(tanh)
//   jit_logaddexp_16M       jnp.logaddexp(x, y)
//   jit_bias_relu_4096x4096 maximum(x * s + b, 0) with s, b rows broadcast over [4096, 4096]
//   jit_argmax_rows_4096x4096 argmax(x, 1) of float32 [4096, 4096] (as float32); torch::argmax
//   jit_embedding_65536x256 table[ids] * 16 + 1: 65536 random rows of a [50000, 256] table
//                           (a gather fused as an indirect load); torch: index_select
// Row reductions, written with tnp/lax as jax.nn writes them; fused stages fold in the eager
// reduction kernel's order, so these are checked bitwise against eager Tessera too:
//   jit_softmax_rows_4096x4096  m = max(x, 1, keepdims); e = exp(x - m); e / sum(e, 1, keepdims)
//                               over float32 [4096, 4096]; torch::softmax(x, 1)
//   jit_col_sum_4096x4096       sum(x * y, 0) over float32 [4096, 4096] (a column reduction
//                               fused with its producer; eager's column order); torch:
//                               (x * y).sum(0)
//   jit_layernorm_8192x1024     (x - mean) * rsqrt(var + 1e-5) * gamma + beta over float32
//                               [8192, 1024] rows (mean, var = mean(square(x - mean)) of each
//                               row; gamma, beta [1024]); torch::layer_norm(x, {1024}, gamma,
//                               beta, 1e-5)
//
//   jit_compile_small  cold compile: jit(f)(x) on a new jit(f) with f a 10-op elementwise chain
//                      (mul, add, tanh, mul, exp, maximum, sub, mul, tanh, add) of one float32
//                      [1024] x, its constant c = 1 + k * 1e-3 different in every repetition k
//                      (warm-ups included), so the kernel cache (keyed by kernel text) misses
//                      and each call traces, runs the passes, fuses, compiles with LLVM and runs
//                      once (tessera_ms, median of at least 21). No peer. kernel_cached_ms: the
//                      same on a second new jit(f) of the same c while the first is alive (its
//                      kernel comes from the cache: trace, passes and fusion only).
#include <cmath>
#include <functional>
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

constexpr int64_t k16M = int64_t{16} * 1024 * 1024;

using Program = std::function<Array(const std::vector<Array>&)>;

// Largest |a - b| / (1 + |b|), NaNs equal.
double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    m = std::max(m, std::fabs(double{a[i]} - double{b[i]}) / (1.0 + std::fabs(double{b[i]})));
  }
  return m;
}

// The bandwidth Tessera's eager add_16M reaches in this run (GB/s of bytes read and written),
// measured on the first call.
double streaming_gbps(const Options& o) {
  static const double gbps = [&] {
    Array x = tnp::array(uniform(k16M, 1), {k16M}), y = tnp::array(uniform(k16M, 2), {k16M});
    Array z;
    Timing t = time_median(
        [&] {
          z = x + y;
          z.block_until_ready();
        },
        o.warmup, o.reps);
    return 3.0 * k16M * 4 / (t.median_ms * 1e6);
  }();
  return gbps;
}

// The jitted result must equal eager Tessera's bitwise (NaNs equal). torch_rows: 0 =
// torch_peer::elementwise_ms(torch_case, hx, hy); otherwise torch_peer::rows_ms(torch_case, hx as
// [torch_rows, ...], hy).
void fusion_case(const Options& o, const std::string& name, const std::string& numpy_case,
                 const std::string& torch_case, const Program& f, std::vector<Array> args,
                 const std::vector<float>& hx, const std::vector<float>& hy, double bytes,
                 int64_t torch_rows = 0) {
  const double floor_gbps = streaming_gbps(o);
  auto jf = tessera::jit(f);
  const auto t0 = std::chrono::steady_clock::now();
  Array first = jf(args);
  first.block_until_ready();
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<float> want = f(args).to_vector<float>();
  const std::vector<float> got = first.to_vector<float>();
  size_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))) ++differ;
  if (differ)
    throw std::runtime_error(name + ": jit differs from eager at " + std::to_string(differ) +
                             " elements");
  Array r;
  Timing tj = time_median(
      [&] {
        r = jf(args);
        r.block_until_ready();
      },
      o.warmup, o.reps);
  Timing te = time_median(
      [&] {
        r = f(args);
        r.block_until_ready();
      },
      o.warmup, o.reps);
  auto base = [&] {
    Json rec;
    rec["bench"] = "jit";
    rec["case"] = name;
    rec["tessera_ms"] = tj.median_ms;
    return rec;
  };
  Json eager = base();
  eager["peer"] = "Tessera eager (no fusion)";
  eager["peer_ms"] = te.median_ms;
  eager["gbps"] = bytes / (tj.median_ms * 1e6);
  eager["floor_ms"] = bytes / (floor_gbps * 1e6);
  eager["floor_gbps"] = floor_gbps;
  eager["compile_ms"] = compile_ms;
  emit(eager);
  Json np = base();
  add_numpy_peer(np, numpy_case, o, false);
  emit(np);
#ifdef TESSERA_BENCH_HAVE_TORCH
  std::vector<float> tout;
  const double tms =
      torch_rows ? torch_peer::rows_ms(torch_case, hx, torch_rows, hy, o.warmup, o.reps, tout)
                 : torch_peer::elementwise_ms(torch_case, hx, hy, o.warmup, o.reps, tout);
  Json tr = base();
  tr["peer"] = torch_peer::name();
  tr["peer_ms"] = tms;
  tr["max_rel_diff"] = max_rel_diff(got, tout);
  if (max_rel_diff(got, tout) > 1e-5) tr["peer"] = torch_peer::name() + " (DIFFERENT VALUES)";
  emit(tr);
#else
  (void)torch_case;
  (void)hx;
  (void)hy;
  (void)torch_rows;
#endif
}

void fusion_cases(const Options& o) {
  if (o.wants("jit_tanh_chain_16M")) {
    std::vector<float> hx = uniform(k16M, 3);
    fusion_case(
        o, "jit_tanh_chain_16M", "tanh_chain_16M", "tanh_chain",
        [](const std::vector<Array>& a) { return tnp::tanh(a[0] * 1.5 + 0.3) * a[0]; },
        {tnp::array(hx, {k16M})}, hx, {}, 2.0 * k16M * 4);
  }
  if (o.wants("jit_gelu_tanh_16M")) {
    std::vector<float> hx = uniform(k16M, 4);
    fusion_case(
        o, "jit_gelu_tanh_16M", "gelu_tanh_16M", "gelu_tanh",
        [](const std::vector<Array>& a) {
          const Array& x = a[0];
          return 0.5 * x * (1.0 + tnp::tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
        },
        {tnp::array(hx, {k16M})}, hx, {}, 2.0 * k16M * 4);
  }
  if (o.wants("jit_logaddexp_16M")) {
    std::vector<float> hx = uniform(k16M, 5), hy = uniform(k16M, 6);
    fusion_case(
        o, "jit_logaddexp_16M", "logaddexp_16M", "logaddexp",
        [](const std::vector<Array>& a) { return tnp::logaddexp(a[0], a[1]); },
        {tnp::array(hx, {k16M}), tnp::array(hy, {k16M})}, hx, hy, 3.0 * k16M * 4);
  }
  if (o.wants("jit_bias_relu_4096x4096")) {
    const int64_t n = 4096;
    std::vector<float> hx = uniform(n * n, 7), hy = uniform(2 * n, 8);
    std::vector<float> s(hy.begin(), hy.begin() + n), b(hy.begin() + n, hy.end());
    fusion_case(
        o, "jit_bias_relu_4096x4096", "bias_relu_4096x4096", "bias_relu",
        [](const std::vector<Array>& a) { return tnp::maximum(a[0] * a[1] + a[2], 0.0); },
        {tnp::array(hx, {n, n}), tnp::array(s, {n}), tnp::array(b, {n})}, hx, hy, 2.0 * n * n * 4);
  }
  if (o.wants("jit_softmax_rows_4096x4096")) {
    const int64_t n = 4096;
    std::vector<float> hx = uniform(n * n, 9);
    fusion_case(
        o, "jit_softmax_rows_4096x4096", "softmax_rows_4096x4096", "softmax_rows",
        [](const std::vector<Array>& a) {
          const Array& x = a[0];
          Array e = tnp::exp(x - tnp::max(x, 1, true));
          return e / tnp::sum(e, 1, true);
        },
        {tnp::array(hx, {n, n})}, hx, {}, 2.0 * n * n * 4, n);
  }
  if (o.wants("jit_layernorm_8192x1024")) {
    const int64_t rows = 8192, cols = 1024;
    std::vector<float> hx = uniform(rows * cols, 10), hy = uniform(2 * cols, 11);
    std::vector<float> gamma(hy.begin(), hy.begin() + cols), beta(hy.begin() + cols, hy.end());
    fusion_case(
        o, "jit_layernorm_8192x1024", "layernorm_8192x1024", "layernorm",
        [](const std::vector<Array>& a) {
          const Array& x = a[0];
          Array d = x - tnp::mean(x, 1, true);
          Array var = tnp::mean(tnp::square(d), 1, true);
          return d * tessera::lax::rsqrt(var + 1e-5) * a[1] + a[2];
        },
        {tnp::array(hx, {rows, cols}), tnp::array(gamma, {cols}), tnp::array(beta, {cols})}, hx, hy,
        (2.0 * rows * cols + 2.0 * cols) * 4, rows);
  }
  if (o.wants("jit_col_sum_4096x4096")) {
    // A column reduction with its producer (a bias gradient's shape): sum(x * y, 0).
    const int64_t n = 4096;
    std::vector<float> hx = uniform(n * n, 14), hy = uniform(n * n, 15);
    for (float& v : hy) v = std::abs(v);  // no cancellation: sums comparable to torch's at 1e-5
    for (float& v : hx) v = std::abs(v);
    fusion_case(
        o, "jit_col_sum_4096x4096", "col_sum_4096x4096", "col_sum",
        [](const std::vector<Array>& a) { return tnp::sum(a[0] * a[1], 0); },
        {tnp::array(hx, {n, n}), tnp::array(hy, {n, n})}, hx, hy, (2.0 * n * n + n) * 4, n);
  }
  if (o.wants("jit_argmax_rows_4096x4096")) {
    // argmax over rows (as float32 for the comparison): eagerly one pass of the argmax kernel;
    // under jit the expansion's max and least-index stages in one kernel.
    const int64_t n = 4096;
    std::vector<float> hx = uniform(n * n, 17);
    fusion_case(
        o, "jit_argmax_rows_4096x4096", "argmax_rows_4096x4096", "argmax_rows",
        [](const std::vector<Array>& a) {
          return tnp::astype(tessera::lax::argmax(a[0], 1), tessera::DType::kFloat32);
        },
        {tnp::array(hx, {n, n})}, hx, {}, 1.0 * n * n * 4 + n * 4.0, n);
  }
  if (o.wants("jit_stencil_4096x4096")) {
    // A three-point stencil over a zero-padded row: pad, two slices, arithmetic — one kernel of
    // guarded loads under jit, five passes eagerly.
    const int64_t n = 4096;
    std::vector<float> hx = uniform(n * n, 12);
    fusion_case(
        o, "jit_stencil_4096x4096", "stencil_4096x4096", "stencil",
        [](const std::vector<Array>& a) {
          const Array& x = a[0];
          Array p = tessera::lax::pad(x, tnp::full({}, 0.0), {{0, 0, 0}, {1, 1, 0}});
          const int64_t m = x.shape()[1];
          Array left = tessera::lax::slice(p, {0, 0}, {x.shape()[0], m});
          Array right = tessera::lax::slice(p, {0, 2}, {x.shape()[0], m + 2});
          return left + right - 2.0 * x;
        },
        {tnp::array(hx, {n, n})}, hx, {}, 2.0 * n * n * 4);
  }
  if (o.wants("jit_embedding_65536x256")) {
    // An embedding lookup and its scaling, table[ids] * 16 + 1 over a [50000, 256] table: under
    // jit the gather is an indirect load of the kernel (the id a symbol per row), eagerly the
    // gathered rows are written, then scaled and shifted in two more passes.
    const int64_t vocab = 50000, dim = 256, n = 65536;
    std::vector<float> hx = uniform(vocab * dim, 15), hy(static_cast<size_t>(n));
    std::vector<int32_t> ids(static_cast<size_t>(n));
    std::mt19937 g(16);
    for (size_t i = 0; i < ids.size(); ++i) {
      ids[i] = static_cast<int32_t>(g() % static_cast<uint32_t>(vocab));
      hy[i] = static_cast<float>(ids[i]);  // the torch peer's ids (exact below 2^24)
    }
    fusion_case(
        o, "jit_embedding_65536x256", "embedding_65536x256", "embedding",
        [](const std::vector<Array>& a) { return a[0][{a[1]}] * 16.0 + 1.0; },
        {tnp::array(hx, {vocab, dim}), tnp::array(ids, {n})}, hx, hy, 2.0 * n * dim * 4 + n * 4.0);
  }
  if (o.wants("jit_concat_4096x2x2048")) {
    const int64_t n = 4096, h = 2048;
    std::vector<float> hx = uniform(n * h, 13), hy = uniform(n * h, 14);
    fusion_case(
        o, "jit_concat_4096x2x2048", "concat_4096x2x2048", "concat",
        [](const std::vector<Array>& a) {
          return tnp::concatenate({a[0] * 2.0, a[1] + 1.0}, 1);
        },
        {tnp::array(hx, {n, h}), tnp::array(hy, {n, h})}, hx, hy, 4.0 * n * h * 4);
  }
}

// The 10-op chain of jit_compile_small with its constant c.
Array small_chain(const Array& x, double c) {
  Array y = tnp::tanh(x * c + 0.5) * x;
  y = tnp::maximum(tnp::exp(y), c);
  y = tnp::tanh((y - 1.0) * 0.25);
  return y + x;
}

void jit_compile_small(const Options& o) {
  const int reps = std::max(o.reps, 21);
  const int64_t n = 1024;
  Array x = tnp::array(uniform(n, 12), {n});
  int k = 0;  // repetitions so far, warm-ups included: each gets its own constant
  double c = 1.0;
  Array r;
  // The jitted functions stay alive until the end, so that no timed call also pays for
  // removing a kernel from the JIT.
  std::vector<std::function<Array(const Array&)>> alive;
  // One cold call: a new jit(f) whose constant no kernel compiled before had.
  auto cold = [&] {
    c = 1.0 + 1e-3 * k++;
    const double cc = c;
    auto jf = tessera::jit([cc](const Array& v) { return small_chain(v, cc); });
    r = jf(x);
    r.block_until_ready();
    alive.emplace_back(std::move(jf));
  };
  cold();
  if (r.to_vector<float>() != small_chain(x, c).to_vector<float>())
    throw std::runtime_error("jit_compile_small: jit(f) differs from f");
  Timing tc = time_median(cold, o.warmup, reps);
  // The same with a live jit(f) of the same constant: its kernel is in the cache.
  std::vector<double> cached;
  for (int i = 0; i < o.warmup + reps; ++i) {
    const double cc = 1.0 + 1e-3 * k++;
    auto f = [cc](const Array& v) { return small_chain(v, cc); };
    auto keep = tessera::jit(f);
    keep(x).block_until_ready();
    auto jf = tessera::jit(f);
    const auto t0 = std::chrono::steady_clock::now();
    r = jf(x);
    r.block_until_ready();
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= o.warmup) cached.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  Json rec;
  rec["bench"] = "jit";
  rec["case"] = "jit_compile_small";
  rec["tessera_ms"] = tc.median_ms;
  rec["peer"] = "none (cold trace + compile + one run of a 10-op float32[1024] chain)";
  rec["tessera_min_ms"] = tc.min_ms;
  rec["kernel_cached_ms"] = summarize(cached).median_ms;
  rec["reps"] = reps;
  emit(rec);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(
      argc, argv,
      {"jit_call_overhead", "jit_scan_loop", "jit_tanh_chain_16M", "jit_gelu_tanh_16M",
       "jit_logaddexp_16M", "jit_bias_relu_4096x4096", "jit_embedding_65536x256",
       "jit_argmax_rows_4096x4096", "jit_softmax_rows_4096x4096", "jit_col_sum_4096x4096",
       "jit_layernorm_8192x1024", "jit_stencil_4096x4096", "jit_concat_4096x2x2048",
       "jit_compile_small"});
  try {
    if (o.wants("jit_call_overhead")) jit_call_overhead(o);
    if (o.wants("jit_scan_loop")) jit_scan_loop(o);
    fusion_cases(o);
    if (o.wants("jit_compile_small")) jit_compile_small(o);
  } catch (const std::exception& e) {
    std::cerr << "bench_jit: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
