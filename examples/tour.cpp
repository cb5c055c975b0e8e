// A short tour of Tessera as it stands: arrays, JAX's type promotion, broadcasting, reductions,
// matmul, printing, error messages and memory accounting. Every number printed is computed.
//
//   ./scripts/demo            (sets up, builds and runs this)
//   ./build/examples/tour
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include <tessera/tessera.h>

namespace tnp = tessera::numpy;
namespace lax = tessera::lax;
using tessera::Array;
using tessera::DType;

namespace {

void section(const std::string& title) { std::cout << "\n== " << title << " ==\n"; }

// Prints "name = <value>   # shape dtype".
void show(const std::string& name, const Array& a) {
  std::cout << name << " = " << a << "\n    # " << a.aval().str()
            << (a.weak_type() ? " (weakly typed)" : "") << "\n";
}

}  // namespace

int main() {
  std::cout << "Tessera tour: JAX's programming model in C++ (eager CPU execution)\n";
  std::cout << "devices:";
  for (tessera::Device* d : tessera::devices()) std::cout << " " << d->repr();
  std::cout << "\n";

  section("arrays");
  Array a = tnp::array({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});  // float32 by default, as jnp
  show("a", a);
  std::cout << "repr(a) = " << a.repr() << "\n";
  show("arange(6)", tnp::arange(6));
  show("linspace(0, 1, 5)", tnp::linspace(0.0, 1.0, 5));
  show("eye(3)", tnp::eye(3));

  section("type promotion (JAX's lattice; C++ scalars are weak)");
  Array h = tnp::astype(tnp::array({0.5, 1.5, 2.5}), DType::kFloat16);
  show("h", h);
  show("h * 2.0", h * 2.0);  // a C++ double is weakly typed: the result stays float16
  show("h * float32(2)", h * tnp::scalar(2.0, DType::kFloat32));  // a strong float32 promotes
  Array i = tnp::arange(3);
  show("i + 1", i + 1);                     // int32 stays int32
  show("i + 0.5", i + 0.5);                 // int32 with a weak float -> float32
  show("i / 2", i / 2);                     // true division: ints -> float32
  show("h + ones(3)", h + tnp::ones({3}));  // float16 with float32 -> float32
  std::cout << "promote_types(bfloat16, float16) = "
            << tessera::promote_types(DType::kBFloat16, DType::kFloat16) << "\n";

  section("broadcasting");
  Array col = tnp::reshape(tnp::array({10.0, 20.0}), {2, 1});
  show("a + col   (2,3) + (2,1)", a + col);
  show("a * [1, 0, -1]", a * tnp::array({1.0, 0.0, -1.0}));
  show("lax.broadcast_in_dim(col, (2,3), {0,1})", lax::broadcast_in_dim(col, {2, 3}, {0, 1}));

  section("elementwise math");
  Array x = tnp::linspace(-1.0, 1.0, 5);
  show("x", x);
  show("tanh(x * 1.5 + 0.3) * x", tnp::tanh(x * 1.5 + 0.3) * x);
  show("where(x > 0, sqrt(x), -x)", tnp::where(x > 0, tnp::sqrt(tnp::maximum(x, 0.0)), -x));

  section("reductions");
  show("sum(a)", tnp::sum(a));
  show("sum(a, axis=0)", tnp::sum(a, 0));
  show("mean(a, axis=1, keepdims)", tnp::mean(a, 1, true));
  show("max(a, axis=-1)", tnp::max(a, -1));

  section("matmul");
  Array b = tnp::transpose(a);
  show("a @ a.T", tnp::matmul(a, b));
  show("a.T @ a", tnp::matmul(b, a));
  // A larger product, timed, with an independent double-precision check of one entry.
  const int64_t n = 512;
  Array m1 = tnp::reshape(tnp::astype(tnp::arange(n * n), DType::kFloat32) / double(n * n), {n, n});
  Array m2 = tnp::transpose(m1);
  tnp::matmul(m1, m2).block_until_ready();  // warm-up: the first call starts BLAS's threads
  auto t0 = std::chrono::steady_clock::now();
  Array p = tnp::matmul(m1, m2);
  p.block_until_ready();
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double want = 0;  // p[1, 2] = sum_k m1[1, k] * m1[2, k]
  for (int64_t k = 0; k < n; ++k)
    want += double((n + k) / double(n * n)) * double((2 * n + k) / double(n * n));
  const float* pd = p.data<float>();
  std::printf("512x512 @ 512x512: %.2f ms (%.1f GFLOP/s); p[1,2] = %.6f (float64 loop: %.6f)\n", ms,
              2.0 * n * n * n / (ms * 1e6), pd[1 * n + 2], want);

  section("errors name the op, the shapes and the fix");
  try {
    Array bad = a + tnp::ones({4});
    std::cout << "unexpected: " << bad << "\n";
  } catch (const tessera::ValueError& e) {
    std::cout << "ValueError: " << e.what() << "\n";
  } catch (const tessera::TypeError& e) {
    std::cout << "TypeError: " << e.what() << "\n";
  }
  try {
    Array bad = tnp::reshape(a, {5});
    std::cout << "unexpected: " << bad << "\n";
  } catch (const tessera::Error& e) {
    std::cout << "Error: " << e.what() << "\n";
  }
  try {
    Array bad = lax::add(a, tnp::astype(a, DType::kInt32));  // lax does not promote
    std::cout << "unexpected: " << bad << "\n";
  } catch (const tessera::Error& e) {
    std::cout << "Error: " << e.what() << "\n";
  }

  section("memory");
  tessera::MemoryStats s = tessera::memory_stats();
  std::cout << "cpu:0 bytes_in_use=" << s.bytes_in_use
            << " peak_bytes_in_use=" << s.peak_bytes_in_use << " bytes_cached=" << s.bytes_cached
            << " num_allocs=" << s.num_allocs << " cache_hits=" << s.num_cache_hits << "\n";
  {
    Array big = tnp::ones({1024, 1024});  // 4 MiB
    tessera::MemoryStats s2 = tessera::memory_stats();
    std::cout << "after ones((1024,1024)): bytes_in_use=" << s2.bytes_in_use << " (+"
              << (s2.bytes_in_use - s.bytes_in_use) << ")\n";
  }
  tessera::MemoryStats s3 = tessera::memory_stats();
  std::cout << "after it is released: bytes_in_use=" << s3.bytes_in_use
            << " bytes_cached=" << s3.bytes_cached << "\n";
  tessera::clear_caches();
  std::cout << "after clear_caches(): bytes_cached=" << tessera::memory_stats().bytes_cached
            << "\n";

  std::cout << "\ntour done.\n";
  return 0;
}
