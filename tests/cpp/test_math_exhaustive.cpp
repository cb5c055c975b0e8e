// Opt-in exhaustive accuracy sweep of the eager float32 kernels that compiler/math_expand.h
// expands (exp, exp2, expm1, log, log1p, tanh, sin, cos, tan, rsqrt): every one of the 2^32
// float32 bit patterns through the eager kernel (lax on blocks of 2^22), against float64 libm
// (two std::threads), the max error in ulps reported and checked against the bound vec_math.h /
// vec_math_extra.h state; NaN inputs must give NaN and infinities and zeros the IEEE results.
// (The expansions equal these kernels bit for bit: test_math_expand.cpp.)
//
// Disabled by default (minutes per op on two cores). Run:
//   ./build/tests/test_math_exhaustive --gtest_also_run_disabled_tests
//   ./build/tests/test_math_exhaustive --gtest_also_run_disabled_tests --gtest_filter='*Tanh*'
// TESSERA_EXHAUSTIVE_STRIDE=k sweeps every k-th bit pattern only (k = 4096: a second per op).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <thread>
#include <vector>

#include "tessera/lax.h"
#include "tessera/tessera.h"

namespace tessera {
namespace {

constexpr DType kF32 = DType::kFloat32;
constexpr uint64_t kAll = uint64_t{1} << 32;
constexpr uint64_t kBlock = uint64_t{1} << 22;

// |got - want| in float32 ulps at want (the float64 value); test_math_expand.cpp's measure.
double ulps(float got, double want) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : kInf;
  if (std::isinf(want) || std::isinf(got))
    return static_cast<double>(got) == want ? 0.0 : (std::fabs(want) > 3.4e38 ? 0.5 : kInf);
  const float wf = static_cast<float>(want);
  const int e = std::isinf(wf) ? 128 : std::max(std::ilogb(wf == 0.0f ? 1e-45f : wf), -126);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, e - 23);
}

uint64_t stride() {
  const char* s = std::getenv("TESSERA_EXHAUSTIVE_STRIDE");
  const long long k = s != nullptr ? std::atoll(s) : 1;
  return k > 1 ? static_cast<uint64_t>(k) : 1;
}

struct Worst {
  double ulps = 0.0;
  float x = 0.0f, got = 0.0f;
  uint64_t specials_wrong = 0;
};

// Errors of ys = f(xs) against ref over [lo, hi) of the block.
void measure(const float* xs, const float* ys, size_t lo, size_t hi, double (*ref)(double),
             Worst& w) {
  for (size_t i = lo; i < hi; ++i) {
    const float x = xs[i];
    const double want = ref(static_cast<double>(x));
    if (std::isnan(x) || std::isinf(x) || x == 0.0f) {
      const bool ok = std::isnan(want) ? std::isnan(ys[i])
                                       : ys[i] == static_cast<float>(want) &&
                                             std::signbit(ys[i]) == std::signbit(want);
      w.specials_wrong += !ok;
      continue;
    }
    const double u = ulps(ys[i], want);
    if (u > w.ulps) w = Worst{u, x, ys[i], w.specials_wrong};
  }
}

void sweep(const char* name, Array (*op)(const Array&), double (*ref)(double), double bound) {
  register_all();
  const uint64_t step = stride();
  const uint64_t n = (kAll + step - 1) / step;
  const auto t0 = std::chrono::steady_clock::now();
  Worst worst[2];
  for (uint64_t start = 0; start < n; start += kBlock) {
    const uint64_t m = std::min(kBlock, n - start);
    Array in = empty_array(Aval{{static_cast<int64_t>(m)}, kF32, false}, "test");
    auto* xs = static_cast<float*>(in.buffer()->data());
    for (uint64_t i = 0; i < m; ++i)
      xs[i] = std::bit_cast<float>(static_cast<uint32_t>((start + i) * step));
    const Array out = op(in);  // the eager kernel (its own thread pool)
    const auto* ys = static_cast<const float*>(out.raw_data());
    const size_t half = static_cast<size_t>(m / 2);
    std::thread other(measure, xs, ys, half, static_cast<size_t>(m), ref, std::ref(worst[1]));
    measure(xs, ys, 0, half, ref, worst[0]);
    other.join();
  }
  const Worst& w = worst[1].ulps > worst[0].ulps ? worst[1] : worst[0];
  const uint64_t specials_wrong = worst[0].specials_wrong + worst[1].specials_wrong;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[exhaustive] " << name << ": max " << w.ulps << " ulp at x = " << w.x << " ("
            << std::hexfloat << w.x << std::defaultfloat << ", got " << w.got << ") over " << n
            << " bit patterns (stride " << step << ") in " << s << " s\n";
  EXPECT_LE(w.ulps, bound) << name;
  EXPECT_EQ(specials_wrong, 0u) << name << ": NaN, inf or zero inputs with a wrong result";
}

TEST(MathExhaustive, DISABLED_Exp) {
  sweep(
      "exp", lax::exp, [](double x) { return std::exp(x); }, 2);
}
TEST(MathExhaustive, DISABLED_Exp2) {
  sweep(
      "exp2", lax::exp2, [](double x) { return std::exp2(x); }, 1);
}
TEST(MathExhaustive, DISABLED_Expm1) {
  sweep(
      "expm1", lax::expm1, [](double x) { return std::expm1(x); }, 4);
}
TEST(MathExhaustive, DISABLED_Log) {
  sweep(
      "log", lax::log, [](double x) { return std::log(x); }, 2);
}
TEST(MathExhaustive, DISABLED_Log1p) {
  sweep(
      "log1p", lax::log1p, [](double x) { return std::log1p(x); }, 3);
}
TEST(MathExhaustive, DISABLED_Tanh) {
  sweep(
      "tanh", lax::tanh, [](double x) { return std::tanh(x); }, 4);
}
TEST(MathExhaustive, DISABLED_Sin) {
  sweep(
      "sin", lax::sin, [](double x) { return std::sin(x); }, 4);
}
TEST(MathExhaustive, DISABLED_Cos) {
  sweep(
      "cos", lax::cos, [](double x) { return std::cos(x); }, 4);
}
TEST(MathExhaustive, DISABLED_Tan) {
  sweep(
      "tan", lax::tan, [](double x) { return std::tan(x); }, 4.5);
}
TEST(MathExhaustive, DISABLED_Rsqrt) {
  sweep(
      "rsqrt", lax::rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 0.5);
}

}  // namespace
}  // namespace tessera
