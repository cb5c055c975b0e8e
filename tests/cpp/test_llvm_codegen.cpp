// The CPU code generator (compiler/cpu/llvm_codegen.h, llvm_jit.h) against the kernel IR's
// reference evaluator, bitwise: every scalar op at every type it takes (the builder's own type
// rules choose the combinations) on random inputs mixed with each type's special values (NaN,
// infinities, -0, subnormals, INT_MIN, -1, shift amounts past the width), every extern, every
// float32 expansion, the sin/cos large-argument fallback; loop structure (broadcast, reversed,
// strided loads, index values, 0-d kernels, chunks that start and end inside rows, the thread
// pool's split); and the code cache.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "compiler/cpu/llvm_codegen.h"
#include "compiler/cpu/llvm_jit.h"
#include "compiler/kernel_ir.h"
#include "compiler/math_expand.h"
#include "tessera/errors.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using compiler::kir::Affine;
using compiler::kir::Kernel;
using scalar::Op;

constexpr DType kTypes[] = {DType::kBool,   DType::kInt8,    DType::kInt16,  DType::kInt32,
                            DType::kInt64,  DType::kUInt8,   DType::kUInt16, DType::kUInt32,
                            DType::kUInt64, DType::kFloat32, DType::kFloat64};

// Random bytes of one element of t, one time in four a special value.
void random_element(DType t, char* out, std::mt19937_64& g, bool small_floats) {
  const uint64_t r = g();
  const bool special = g() % 4 == 0;
  if (t == DType::kBool) {
    out[0] = static_cast<char>(r & 1);
    return;
  }
  if (t == DType::kFloat32 || t == DType::kFloat64) {
    double v;
    if (special) {
      const double sp[] = {0.0,
                           -0.0,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           1.0,
                           -1.0,
                           0.5,
                           1e-40,
                           -3e-39,
                           1e-310,
                           65504.0,
                           3.5e38,
                           -2.0};
      v = sp[g() % std::size(sp)];
    } else if (small_floats || g() % 2 == 0) {
      v = std::uniform_real_distribution<double>(-6.0, 6.0)(g);
    } else {
      v = t == DType::kFloat32 ? static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(r)))
                               : std::bit_cast<double>(r);
    }
    // Quiet NaNs only: the reference evaluator holds values as doubles, which quiets a
    // signaling NaN (a bitcast of one to an integer would differ in that bit); compiled code
    // and the eager kernels keep the bits.
    if (std::isnan(v)) v = std::copysign(std::numeric_limits<double>::quiet_NaN(), v);
    if (t == DType::kFloat32) {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
    } else {
      std::memcpy(out, &v, 8);
    }
    return;
  }
  const size_t n = itemsize(t);
  uint64_t bits = r;
  if (special) {
    const int w = static_cast<int>(n * 8);
    const uint64_t sp[] = {0,
                           1,
                           ~uint64_t{0},
                           uint64_t{1} << (w - 1),
                           (uint64_t{1} << (w - 1)) - 1,
                           static_cast<uint64_t>(w),
                           static_cast<uint64_t>(w - 1),
                           static_cast<uint64_t>(w + 3)};
    bits = sp[g() % std::size(sp)];
  } else if (g() % 2 == 0) {
    bits = r % 70;  // small values: shift amounts, divisors
    if (is_signed_integer(t) && (g() & 1)) bits = ~bits + 1;
  }
  std::memcpy(out, &bits, n);
}

struct Buffers {
  std::vector<std::vector<char>> in, out;
  std::vector<const void*> in_ptrs() const {
    std::vector<const void*> p;
    for (const auto& b : in) p.push_back(b.data());
    return p;
  }
};

Buffers random_buffers(const Kernel& k, std::mt19937_64& g, bool small_floats = false) {
  Buffers b;
  for (const auto& t : k.inputs) {
    b.in.emplace_back(static_cast<size_t>(t.size()) * itemsize(t.dtype));
    for (int64_t i = 0; i < t.size(); ++i)
      random_element(t.dtype, b.in.back().data() + static_cast<size_t>(i) * itemsize(t.dtype), g,
                     small_floats);
  }
  for (const auto& t : k.outputs)
    b.out.emplace_back(static_cast<size_t>(t.size()) * itemsize(t.dtype));
  return b;
}

// Element-wise equality; NaNs equal whatever their payload.
std::string compare_bits(DType t, const std::vector<char>& got, const std::vector<char>& want) {
  const size_t n = itemsize(t);
  for (size_t i = 0; i * n < got.size(); ++i) {
    const char* a = got.data() + i * n;
    const char* b = want.data() + i * n;
    if (std::memcmp(a, b, n) == 0) continue;
    if (t == DType::kFloat32) {
      float x, y;
      std::memcpy(&x, a, 4);
      std::memcpy(&y, b, 4);
      if (std::isnan(x) && std::isnan(y)) continue;
      return "element " + std::to_string(i) + ": got " + std::to_string(x) + " want " +
             std::to_string(y);
    }
    if (t == DType::kFloat64) {
      double x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      if (std::isnan(x) && std::isnan(y)) continue;
      return "element " + std::to_string(i) + ": got " + std::to_string(x) + " want " +
             std::to_string(y);
    }
    uint64_t x = 0, y = 0;
    std::memcpy(&x, a, n);
    std::memcpy(&y, b, n);
    return "element " + std::to_string(i) + ": got bits " + std::to_string(x) + " want " +
           std::to_string(y);
  }
  return "";
}

// Runs k compiled and by the reference evaluator (on its expanded body: the expansions are the
// eager kernels' bits, which the compiled code must give) and compares.
void expect_same(const Kernel& k, std::mt19937_64& g, bool small_floats = false) {
  SCOPED_TRACE(k.text());
  Buffers b = random_buffers(k, g, small_floats);
  std::vector<std::vector<char>> want = b.out;
  Kernel ref = k;
  ref.body = compiler::expand_math(k.body);
  std::vector<void*> wp;
  for (auto& w : want) wp.push_back(w.data());
  compiler::kir::evaluate(ref, b.in_ptrs(), wp);
  auto code = compiler::cpu::compile_kernel(k);
  std::vector<void*> ptrs;
  for (auto& i : b.in) ptrs.push_back(i.data());
  for (auto& o : b.out) ptrs.push_back(o.data());
  code->run(ptrs, k.num_points());
  for (size_t o = 0; o < want.size(); ++o)
    EXPECT_EQ(compare_bits(k.outputs[o].dtype, b.out[o], want[o]), "");
}

// A 1-d kernel of n points computing one op of the program `build` makes from its inputs.
Kernel elementwise(int64_t n, std::vector<DType> in_types, const scalar::Program& body) {
  Kernel k;
  k.name = "op";
  k.dims = {n};
  for (size_t i = 0; i < in_types.size(); ++i) {
    k.inputs.push_back({in_types[i], {n}});
    k.loads.push_back({static_cast<int32_t>(i), Affine::dim(0, 1)});
  }
  for (DType t : body.output_types()) k.outputs.push_back({t, {n}});
  k.body = body;
  return k;
}

TEST(LlvmCodegen, EveryOpAtEveryTypeMatchesTheEvaluator) {
  std::mt19937_64& g = testing::rng();
  int kernels = 0;
  for (int o = 0; o < scalar::kNumOps; ++o) {
    const Op op = static_cast<Op>(o);
    if (op == Op::kInput || op == Op::kConst || op == Op::kExtern || op == Op::kConvert ||
        op == Op::kBitcast || op == Op::kSelect)
      continue;
    for (DType t : kTypes) {
      const int n = scalar::op_arity(op);
      std::vector<DType> ins(static_cast<size_t>(n), t);
      const bool cmp = op >= Op::kEq && op <= Op::kGe;
      scalar::Program p;
      try {
        scalar::Builder b(ins);
        std::vector<scalar::Value> args;
        for (int i = 0; i < n; ++i) args.push_back(b.input(i));
        scalar::Value r = b.op(op, args, cmp ? DType::kBool : t);
        p = std::move(b).finish({&r, 1});
      } catch (const InternalError&) {
        continue;  // the op does not take t
      }
      SCOPED_TRACE(std::string(scalar::op_name(op)) + " " + std::string(dtype_short_name(t)));
      // sin/cos beyond kTrigMax: the evaluator rounds a double sin, the kernels call sinf (tested
      // below); keep float32 sin/cos arguments small here.
      const bool small = t == DType::kFloat32 && (op == Op::kSin || op == Op::kCos);
      expect_same(elementwise(1000 + static_cast<int64_t>(g() % 100), ins, p), g, small);
      ++kernels;
    }
  }
  EXPECT_GT(kernels, 150);
}

TEST(LlvmCodegen, ConvertsBitcastsSelectsAndExterns) {
  std::mt19937_64& g = testing::rng();
  for (DType from : kTypes)
    for (DType to : kTypes) {
      SCOPED_TRACE(std::string(dtype_short_name(from)) + " -> " +
                   std::string(dtype_short_name(to)));
      const DType ins[] = {from};
      scalar::Builder b(ins);
      scalar::Value r = b.convert(b.input(0), to);
      expect_same(elementwise(777, {from}, std::move(b).finish({&r, 1})), g);
      if (from != to && from != DType::kBool && to != DType::kBool &&
          itemsize(from) == itemsize(to)) {
        scalar::Builder c(ins);
        scalar::Value s = c.bitcast(c.input(0), to);
        expect_same(elementwise(777, {from}, std::move(c).finish({&s, 1})), g);
      }
    }
  for (DType t : kTypes) {
    const DType ins[] = {DType::kBool, t, t};
    scalar::Builder b(ins);
    scalar::Value r = b.select(b.input(0), b.input(1), b.input(2));
    expect_same(elementwise(513, {DType::kBool, t, t}, std::move(b).finish({&r, 1})), g);
  }
  for (int f = 0; f < scalar::kNumFns; ++f) {
    const auto fn = static_cast<scalar::Fn>(f);
    SCOPED_TRACE(scalar::fn_name(fn));
    std::vector<DType> ins(static_cast<size_t>(scalar::fn_arity(fn)), DType::kFloat64);
    scalar::Builder b(ins);
    std::vector<scalar::Value> args;
    for (size_t i = 0; i < ins.size(); ++i) args.push_back(b.input(static_cast<int>(i)));
    scalar::Value r = b.call(fn, args);
    expect_same(elementwise(300, ins, std::move(b).finish({&r, 1})), g, /*small_floats=*/true);
  }
}

TEST(LlvmCodegen, SinCosFallbackBeyondTheReducedRangeIsSinf) {
  // Arguments beyond kTrigMax take the fallback row (sinf/cosf), mixed with small ones.
  for (Op op : {Op::kSin, Op::kCos}) {
    const DType ins[] = {DType::kFloat32};
    scalar::Builder b(ins);
    scalar::Value r = b.unary(op, b.input(0));
    Kernel k = elementwise(4096, {DType::kFloat32}, std::move(b).finish({&r, 1}));
    std::vector<float> x(4096), y(4096);
    std::mt19937_64& g = testing::rng();
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = i % 7 == 0 ? std::uniform_real_distribution<float>(1.4e5f, 1e30f)(g)
                        : std::uniform_real_distribution<float>(-100.f, 100.f)(g);
    x[5] = std::numeric_limits<float>::quiet_NaN();
    auto code = compiler::cpu::compile_kernel(k);
    void* ptrs[] = {x.data(), y.data()};
    code->run(ptrs, 4096);
    // The eager kernel: the expansion within range, sinf/cosf beyond.
    Kernel ref = k;
    ref.body = compiler::expand_math(k.body);
    std::vector<float> want(4096);
    const void* in[] = {x.data()};
    void* out[] = {want.data()};
    compiler::kir::evaluate(ref, in, out);
    for (size_t i = 0; i < x.size(); ++i) {
      const float w = std::fabs(x[i]) > compiler::kTrigMax
                          ? (op == Op::kSin ? std::sin(x[i]) : std::cos(x[i]))
                          : want[i];
      if (std::isnan(w) && std::isnan(y[i])) continue;
      ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(w))
          << scalar::op_name(op) << "(" << x[i] << ")";
    }
  }
}

// A 2-d body over loads of every stride kind and an index value.
Kernel strided_kernel(int64_t rows, int64_t cols) {
  Kernel k;
  k.name = "strided";
  k.dims = {rows, cols};
  k.inputs = {{DType::kFloat32, {rows * cols}},      // row-major
              {DType::kFloat32, {cols}},             // row broadcast
              {DType::kFloat32, {rows}},             // column broadcast
              {DType::kFloat32, {rows * cols * 2}},  // stride 2, reversed columns
              {DType::kInt32, {rows * cols}}};       // transposed
  const Affine i0 = Affine::dim(0, 2), i1 = Affine::dim(1, 2);
  k.loads = {{0, i0.scaled(cols) + i1},
             {1, i1},
             {2, i0},
             {3, i0.scaled(2 * cols) + i1.scaled(-2) + Affine::constant(2 * (cols - 1), 2)},
             {4, i1.scaled(rows) + i0}};
  k.indices = {{i0.scaled(3) + i1.scaled(-1) + Affine::constant(5, 2)}};
  const DType ins[] = {DType::kFloat32, DType::kFloat32, DType::kFloat32,
                       DType::kFloat32, DType::kInt32,   DType::kInt64};
  scalar::Builder b(ins);
  scalar::Value s = b.add(b.mul(b.input(0), b.input(1)), b.input(2));
  s = b.fma(s, b.input(3), b.convert(b.input(4), DType::kFloat32));
  s = b.add(s, b.convert(b.input(5), DType::kFloat32));
  scalar::Value m = b.gt(s, b.input(0));
  scalar::Value outs[] = {s, m};
  k.body = std::move(b).finish(outs);
  k.outputs = {{DType::kFloat32, {rows, cols}}, {DType::kBool, {rows, cols}}};
  k.verify();
  return k;
}

TEST(LlvmCodegen, LoopStructureAndChunksInsideRows) {
  std::mt19937_64& g = testing::rng();
  for (auto [r, c] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 17}, {64, 5}, {7, 1000}}) {
    Kernel k = strided_kernel(r, c);
    expect_same(k, g);
    // The entry over arbitrary [begin, end) pieces equals one run over everything.
    Buffers b = random_buffers(k, g);
    auto code = compiler::cpu::compile_kernel(k);
    std::vector<void*> ptrs;
    for (auto& i : b.in) ptrs.push_back(i.data());
    for (auto& o : b.out) ptrs.push_back(o.data());
    code->run(ptrs, k.num_points());
    std::vector<std::vector<char>> whole = b.out;
    for (auto& o : b.out) std::fill(o.begin(), o.end(), 0);
    int64_t p = 0;
    while (p < k.num_points()) {
      const int64_t q = std::min(k.num_points(), p + 1 + static_cast<int64_t>(g() % 13));
      code->entry()(ptrs.data(), p, q);
      p = q;
    }
    for (size_t o = 0; o < whole.size(); ++o)
      EXPECT_EQ(compare_bits(k.outputs[o].dtype, b.out[o], whole[o]), "") << r << "x" << c;
  }
}

TEST(LlvmCodegen, ZeroDimensionalAndLargeKernels) {
  std::mt19937_64& g = testing::rng();
  // One point: no dimensions.
  {
    Kernel k;
    k.name = "scalar";
    k.inputs = {{DType::kFloat64, {}}};
    k.loads = {{0, Affine{}}};
    k.outputs = {{DType::kFloat64, {}}};
    const DType ins[] = {DType::kFloat64};
    scalar::Builder b(ins);
    scalar::Value r = b.mul(b.input(0), b.constant(3.0, DType::kFloat64));
    k.body = std::move(b).finish({&r, 1});
    expect_same(k, g);
  }
  // More points than the pool's chunk: split over threads, same bits.
  {
    const DType ins[] = {DType::kFloat32};
    scalar::Builder b(ins);
    scalar::Value r = b.unary(Op::kTanh, b.unary(Op::kExp, b.input(0)));
    expect_same(elementwise(300001, {DType::kFloat32}, std::move(b).finish({&r, 1})), g, true);
  }
}

TEST(LlvmCodegen, CacheSharesIdenticalKernelsOnly) {
  auto make = [](double c) {
    const DType ins[] = {DType::kFloat32};
    scalar::Builder b(ins);
    scalar::Value r = b.add(b.input(0), b.constant(c, DType::kFloat32));
    return elementwise(64, {DType::kFloat32}, std::move(b).finish({&r, 1}));
  };
  Kernel a = make(1.0), a2 = make(1.0);
  a2.name = "another name";  // names do not make kernels different
  Kernel c = make(static_cast<double>(std::nextafter(1.0f, 2.0f)));  // differs in the last bit
  const compiler::cpu::JitStats s0 = compiler::cpu::jit_stats();
  auto ka = compiler::cpu::compile_kernel(a);
  auto ka2 = compiler::cpu::compile_kernel(a2);
  auto kc = compiler::cpu::compile_kernel(c);
  const compiler::cpu::JitStats s1 = compiler::cpu::jit_stats();
  EXPECT_EQ(ka->entry(), ka2->entry());
  EXPECT_NE(ka->entry(), kc->entry());
  EXPECT_EQ(s1.cache_hits - s0.cache_hits, 1);
  EXPECT_EQ(s1.compiled - s0.compiled, 2);
  std::vector<float> x(64, 1.0f), y(64);
  void* ptrs[] = {x.data(), y.data()};
  kc->run(ptrs, 64);
  EXPECT_EQ(y[0], 1.0f + std::nextafter(1.0f, 2.0f));
  std::cerr << "[jit] target " << compiler::cpu::jit_target() << "; mean compile "
            << s1.compile_ms / static_cast<double>(std::max<int64_t>(1, s1.compiled)) << " ms over "
            << s1.compiled << " kernels\n";
}

TEST(LlvmCodegen, KernelsCompileConcurrently) {
  // Distinct kernels compiled from several threads at once (lowering and code generation run
  // outside the JIT's lock), some of them the same kernel twice: every one computes its own
  // constant, identical kernels end up sharing code, and nothing is compiled twice for good.
  auto make = [](double c) {
    const DType ins[] = {DType::kFloat32};
    scalar::Builder b(ins);
    scalar::Value r = b.mul(b.unary(scalar::Op::kTanh, b.input(0)), b.constant(c, DType::kFloat32));
    return elementwise(256, {DType::kFloat32}, std::move(b).finish({&r, 1}));
  };
  constexpr int kThreads = 4, kEach = 6;
  std::vector<std::shared_ptr<const compiler::cpu::CpuKernel>> got(kThreads * kEach);
  std::vector<std::thread> ts;
  const double base = 1.0 + static_cast<double>(testing::rng()() % 1000) * 1e-3;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i)  // thread t and t ^ 1 compile the same constants
        got[static_cast<size_t>(t * kEach + i)] =
            compiler::cpu::compile_kernel(make(base + (t / 2) * 10 + i));
    });
  for (std::thread& t : ts) t.join();
  std::vector<float> x(256), y(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(i) - 1.0f;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kEach; ++i) {
      const auto& k = got[static_cast<size_t>(t * kEach + i)];
      void* ptrs[] = {x.data(), y.data()};
      k->run(ptrs, 256);
      const float c = static_cast<float>(base + (t / 2) * 10 + i);
      for (size_t j = 0; j < x.size(); j += 37) {
        const float want = std::tanh(x[j]) * c;
        EXPECT_NEAR(y[j], want, 4e-7 * std::abs(want) + 1e-7) << t << " " << i;
      }
      if ((t ^ 1) > t) {
        EXPECT_EQ(k->entry(), got[static_cast<size_t>((t ^ 1) * kEach + i)]->entry());
      }
    }
}

// ---- reduction kernels: stages folded over the inner dimensions ----

namespace reductions {

using compiler::kir::Reducer;
using compiler::kir::Stage;

// x[rows, a, b] read at (o, i1, i2): contiguous (the inner dimensions collapse) or transposed
// over the inner dimensions (they cannot). Stage 0 folds x with `first`, stage 1 folds
// x - r0 with `second`; the body is x * r1 + r0 per point, or r0 - r1 per row.
Kernel two_stage(DType t, int64_t rows, int64_t a, int64_t b, bool transposed, scalar::Op first,
                 scalar::Op second, bool row_outputs) {
  Kernel k;
  k.name = "red";
  k.dims = {rows, a, b};
  k.inner = 2;
  k.row_outputs = row_outputs;
  k.inputs = {{t, {rows, a, b}}};
  Affine x;
  x.coeff = transposed ? std::vector<int64_t>{a * b, 1, a} : std::vector<int64_t>{a * b, b, 1};
  auto build = [&](int rows_in, auto f) {
    std::vector<DType> in{t};
    for (int r = 0; r < rows_in; ++r) in.push_back(t);
    scalar::Builder bl(in);
    scalar::Value v = f(bl);
    return std::move(bl).finish({&v, 1});
  };
  Stage s0{{{0, x}}, {}, build(0, [](scalar::Builder& bl) { return bl.input(0); }), {{first, t}}};
  Stage s1{{{0, x}},
           {},
           build(1,
                 [](scalar::Builder& bl) {
                   return bl.binary(scalar::Op::kSub, bl.input(0), bl.input(1));
                 }),
           {{second, t}}};
  k.stages = {s0, s1};
  if (row_outputs) {
    k.loads = {};
    const std::vector<DType> in{t, t};
    scalar::Builder bl(in);
    scalar::Value v = bl.binary(scalar::Op::kSub, bl.input(0), bl.input(1));
    k.body = std::move(bl).finish({&v, 1});
    k.outputs = {{t, {rows}}};
  } else {
    k.loads = {{0, x}};
    k.body = build(2, [](scalar::Builder& bl) {
      return bl.binary(scalar::Op::kAdd, bl.binary(scalar::Op::kMul, bl.input(0), bl.input(2)),
                       bl.input(1));
    });
    k.outputs = {{t, {rows, a, b}}};
  }
  k.verify();
  return k;
}

// Inputs whose every fold is exact in any order: integers (they wrap), small integer floats.
Buffers exact_inputs(const Kernel& k, std::mt19937_64& g) {
  Buffers b = random_buffers(k, g);
  for (size_t in = 0; in < k.inputs.size(); ++in) {
    const DType t = k.inputs[in].dtype;
    for (int64_t i = 0; i < k.inputs[in].size(); ++i) {
      const double v = static_cast<double>(static_cast<int64_t>(g() % 17) - 8);
      char* p = b.in[in].data() + static_cast<size_t>(i) * itemsize(t);
      if (t == DType::kFloat32) {
        const float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
      } else if (t == DType::kFloat64) {
        std::memcpy(p, &v, 8);
      }
    }
  }
  return b;
}

}  // namespace reductions

// Runs k by the reference evaluator and compiled on b's inputs (b.out gets the compiled
// results); "" when every output has the same bits.
std::string run_both(const Kernel& k, Buffers& b) {
  std::vector<std::vector<char>> want = b.out;
  std::vector<void*> wp;
  for (auto& w : want) wp.push_back(w.data());
  compiler::kir::evaluate(k, b.in_ptrs(), wp);
  auto code = compiler::cpu::compile_kernel(k);
  std::vector<void*> ptrs;
  for (auto& i : b.in) ptrs.push_back(i.data());
  for (auto& o : b.out) ptrs.push_back(o.data());
  code->run(ptrs, k.num_outer());
  for (size_t o = 0; o < want.size(); ++o) {
    const std::string bad = compare_bits(k.outputs[o].dtype, b.out[o], want[o]);
    if (!bad.empty()) return "output " + std::to_string(o) + ": " + bad;
  }
  return "";
}

namespace reductions {

void expect_reduction_same(const Kernel& k, std::mt19937_64& g) {
  SCOPED_TRACE(k.text());
  Buffers b = exact_inputs(k, g);
  EXPECT_EQ(run_both(k, b), "");
  std::vector<void*> ptrs;
  for (auto& i : b.in) ptrs.push_back(i.data());
  for (auto& o : b.out) ptrs.push_back(o.data());
  auto code = compiler::cpu::compile_kernel(k);
  // Any split of the outer points gives the same bits.
  std::vector<std::vector<char>> whole = b.out;
  for (auto& o : b.out) std::fill(o.begin(), o.end(), 0);
  for (int64_t p = 0; p < k.num_outer();) {
    const int64_t q = std::min(k.num_outer(), p + 1 + static_cast<int64_t>(g() % 3));
    code->entry()(ptrs.data(), p, q);
    p = q;
  }
  for (size_t o = 0; o < whole.size(); ++o)
    EXPECT_EQ(compare_bits(k.outputs[o].dtype, b.out[o], whole[o]), "");
}

}  // namespace reductions

TEST(LlvmCodegen, ReductionStagesMatchTheEvaluator) {
  using reductions::two_stage;
  std::mt19937_64& g = testing::rng();
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 1, 1}, {3, 1, 7}, {2, 1, 64}, {2, 1, 65}, {4, 3, 67}, {1, 5, 200}, {2, 0, 5}, {0, 2, 3}};
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kUInt8, DType::kInt64})
    for (const auto& [r, a, b] : shapes)
      for (bool transposed : {false, true})
        for (bool rows : {false, true}) {
          SCOPED_TRACE(std::string(dtype_short_name(t)) + " " + std::to_string(r) + "x" +
                       std::to_string(a) + "x" + std::to_string(b));
          reductions::expect_reduction_same(
              two_stage(t, r, a, b, transposed, Op::kMax, Op::kAdd, rows), g);
          reductions::expect_reduction_same(
              two_stage(t, r, a, b, transposed, Op::kMin, Op::kMax, rows), g);
        }
  // Every integer reducer, and the collapsed form of a contiguous kernel.
  for (DType t : {DType::kInt16, DType::kUInt32})
    for (Op op : {Op::kMul, Op::kAnd, Op::kOr, Op::kXor, Op::kMin, Op::kAdd})
      reductions::expect_reduction_same(two_stage(t, 3, 4, 33, false, op, op, false).collapsed(),
                                        g);
  Kernel c = two_stage(DType::kFloat32, 3, 4, 33, false, Op::kMax, Op::kAdd, true).collapsed();
  EXPECT_EQ(c.dims, (Shape{3, 132}));
  EXPECT_EQ(c.inner, 1u);
  Kernel nc = two_stage(DType::kFloat32, 3, 4, 33, true, Op::kMax, Op::kAdd, true).collapsed();
  EXPECT_EQ(nc.inner, 2u);
}

// Completes a 2-d kernel whose `body` of `loads` gives one value of type t per point: stored
// per point (a map kernel), or (reduce) summed over the last dimension by a stage, one value
// per row.
void as_map_or_row_sum(Kernel& k, const std::vector<compiler::kir::Load>& loads,
                       const scalar::Program& body, DType t, bool reduce) {
  if (reduce) {
    k.inner = 1;
    k.row_outputs = true;
    k.stages = {compiler::kir::Stage{loads, {}, body, {{Op::kAdd, t}}}};
    const std::vector<DType> rin{t};
    scalar::Builder rb(rin);
    const scalar::Value r = rb.input(0);
    k.body = std::move(rb).finish({&r, 1});
    k.outputs = {{t, {k.dims[0]}}};
  } else {
    k.loads = loads;
    k.body = body;
    k.outputs = {{t, k.dims}};
  }
  k.verify();
}

// A padded read: x[i0, i1 - lo] where lo <= i1 < lo + cols (zero elsewhere), plus a second
// guarded load on the leading dimension, in a map kernel or (inner) folded by a stage.
Kernel guarded_kernel(DType t, int64_t rows, int64_t cols, int64_t lo, int64_t hi, bool reduce) {
  Kernel k;
  k.name = "guarded";
  const int64_t width = lo + cols + hi;
  k.dims = {rows, width};
  k.inputs = {{t, {rows, cols}}, {t, {rows - 1}}};
  const Affine i0 = Affine::dim(0, 2), i1 = Affine::dim(1, 2);
  const std::vector<compiler::kir::Load> loads = {
      {0, i0.scaled(cols) + i1 + Affine::constant(-lo, 2), {{i1, lo, lo + cols}}},
      {1, i0 + Affine::constant(-1, 2), {{i0, 1, rows}}}};
  const std::vector<DType> in{t, t};
  scalar::Builder bl(in);
  const scalar::Value v = bl.max(bl.input(0), bl.input(1));
  scalar::Program body = std::move(bl).finish({&v, 1});
  as_map_or_row_sum(k, loads, body, t, reduce);
  return k;
}

TEST(LlvmCodegen, GuardedLoadsMatchTheEvaluatorAndVectorize) {
  std::mt19937_64& g = testing::rng();
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kUInt8, DType::kBool})
    for (auto [r, c, lo, hi] : std::vector<std::array<int64_t, 4>>{
             {2, 1, 0, 0}, {3, 5, 2, 1}, {4, 100, 7, 30}, {5, 300, 0, 17}, {2, 20, -3, 4}})
      for (bool reduce : {false, true}) {
        if (reduce && t == DType::kBool) continue;
        if (c + lo <= 0) continue;
        SCOPED_TRACE(std::string(dtype_short_name(t)) + " " + std::to_string(r) + "x" +
                     std::to_string(c) + " pad " + std::to_string(lo) + "," + std::to_string(hi));
        Kernel k = guarded_kernel(t, r, c, lo, hi, reduce);
        if (reduce)
          reductions::expect_reduction_same(k, g);
        else
          expect_same(k, g);
      }
  // The guarded loop is vectorized with masked loads (no gathers, no scalar loop only).
  auto code = compiler::cpu::compile_kernel(guarded_kernel(DType::kFloat32, 4, 1000, 3, 5, false),
                                            {true, false});
  EXPECT_NE(code->llvm_ir().find("llvm.masked.load"), std::string::npos) << code->llvm_ir();
}

// out[i0, i1] = x[i0 + s0, i1 + s1] with s = clamp(start, 0, n - m) read from a buffer of
// starts (dynamic_slice), in a map kernel or folded over i1 by a stage.
Kernel symbol_kernel(DType start_type, int64_t n0, int64_t n1, int64_t m0, int64_t m1,
                     bool reduce) {
  Kernel k;
  k.name = "dyn";
  k.dims = {m0, m1};
  k.inputs = {{DType::kFloat32, {n0, n1}}, {start_type, {2}}};
  k.symbols = {{1, Affine::constant(0, 2), 0, n0 - m0}, {1, Affine::constant(1, 2), 0, n1 - m1}};
  Affine x = Affine::constant(0, 4);
  x.coeff = {n1, 1, n1, 1};  // (i0 + i2) * n1 + i1 + i3
  const std::vector<DType> in{DType::kFloat32};
  scalar::Builder bl(in);
  const scalar::Value v = bl.mul(bl.input(0), bl.constant(3.0, DType::kFloat32));
  scalar::Program body = std::move(bl).finish({&v, 1});
  as_map_or_row_sum(k, {{0, x}}, body, DType::kFloat32, reduce);
  return k;
}

TEST(LlvmCodegen, SymbolsAreClampedDynamicIndices) {
  std::mt19937_64& g = testing::rng();
  for (DType t : {DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt64, DType::kInt16})
    for (auto [n0, n1, m0, m1] : std::vector<std::array<int64_t, 4>>{
             {4, 5, 2, 3}, {7, 300, 3, 100}, {3, 3, 3, 3}, {9, 70, 1, 64}})
      for (bool reduce : {false, true}) {
        Kernel k = symbol_kernel(t, n0, n1, m0, m1, reduce);
        SCOPED_TRACE(k.text());
        // Starts in range, negative, past the end and (unsigned 64) beyond INT64_MAX.
        for (int64_t trial = 0; trial < 6; ++trial) {
          // A row sum folds in the eager order, the evaluator in order: exact values there.
          Buffers b = reduce ? reductions::exact_inputs(k, g) : random_buffers(k, g);
          const int64_t choices[] = {0, 1, -5, 1000, n0 - m0, -1};
          for (int d = 0; d < 2; ++d) {
            const int64_t v = trial == 5 ? static_cast<int64_t>(g() % 4) : choices[(trial + d) % 6];
            std::memcpy(b.in[1].data() + static_cast<size_t>(d) * itemsize(t), &v, itemsize(t));
          }
          EXPECT_EQ(run_both(k, b), "") << trial;
        }
      }
  // A symbol over a buffer that is not of integers, or past its buffer, is refused.
  Kernel bad = symbol_kernel(DType::kInt32, 4, 5, 2, 3, false);
  bad.inputs[1].dtype = DType::kFloat32;
  EXPECT_THROW(bad.verify(), InternalError);
  Kernel past = symbol_kernel(DType::kInt32, 4, 5, 2, 3, false);
  past.symbols[1].index = Affine::constant(2, 2);
  EXPECT_THROW(past.verify(), InternalError);
  // A symbol range wider than the buffer allows makes the load leave it.
  Kernel wide = symbol_kernel(DType::kInt32, 4, 5, 2, 3, false);
  wide.symbols[0].hi = 3;
  EXPECT_THROW(wide.verify(), InternalError);
  EXPECT_NE(
      symbol_kernel(DType::kInt32, 4, 5, 2, 3, false).text().find("i2 = clamp(load p1[0], 0, 2)"),
      std::string::npos);
}

TEST(LlvmCodegen, ReductionKernelIsCheckedAndPrinted) {
  Kernel k = reductions::two_stage(DType::kInt32, 2, 3, 4, false, Op::kMax, Op::kAdd, true);
  EXPECT_NE(k.text().find("kernel dims=[2,3,4] inner=2 row_outputs"), std::string::npos)
      << k.text();
  EXPECT_NE(k.text().find("stage 1 -> r1 = add {"), std::string::npos) << k.text();
  Kernel bad = k;
  bad.loads = {{0, Affine::dim(2, 3)}};  // a row-output body may not read the inner points
  const std::vector<DType> in{DType::kInt32, DType::kInt32, DType::kInt32};
  scalar::Builder bl(in);
  scalar::Value v = bl.input(0);
  bad.body = std::move(bl).finish({&v, 1});
  EXPECT_THROW(bad.verify(), InternalError);
  Kernel wrong = k;
  wrong.stages[1].reducers[0].type = DType::kFloat32;  // the fold's type is the output's
  EXPECT_THROW(wrong.verify(), InternalError);
  EXPECT_FALSE(compiler::kir::Reducer::supported(Op::kMax, DType::kBool));
  EXPECT_FALSE(compiler::kir::Reducer::supported(Op::kAnd, DType::kFloat32));
  EXPECT_FALSE(compiler::kir::Reducer::supported(Op::kSub, DType::kInt32));
}

// Long bodies interleave 4 vectors of points (map_interleave); the bits stay the evaluator's at
// every length, the vector remainders included.
TEST(LlvmCodegen, LongBodiesInterleaveAndKeepTheirBits) {
  std::mt19937_64& g = testing::rng();
  const std::vector<DType> in{DType::kFloat32, DType::kFloat32};
  auto heavy_body = [&] {
    scalar::Builder bl(in);
    scalar::Value x = bl.input(0), y = bl.input(1);
    scalar::Value v = bl.mul(bl.unary(Op::kTanh, bl.fma(x, bl.like(1.5, x), y)), x);
    v = bl.add(bl.log1p(bl.mul(v, v)), bl.unary(Op::kTanh, bl.sub(y, v)));
    return std::move(bl).finish({&v, 1});
  };
  auto light_body = [&] {
    scalar::Builder bl(in);
    scalar::Value v = bl.add(bl.mul(bl.input(0), bl.input(1)), bl.input(0));
    return std::move(bl).finish({&v, 1});
  };
  EXPECT_EQ(compiler::cpu::map_interleave(elementwise(1000, in, heavy_body())), 4);
  EXPECT_EQ(compiler::cpu::map_interleave(elementwise(255, in, heavy_body())), 1);
  EXPECT_EQ(compiler::cpu::map_interleave(elementwise(1000, in, light_body())), 1);
  {  // a bool output (bernoulli's): the vectorizer already widens; no interleave
    scalar::Builder bl(in);
    scalar::Value v = bl.lt(bl.unary(Op::kTanh, bl.log1p(bl.mul(bl.input(0), bl.input(1)))),
                            bl.unary(Op::kTanh, bl.input(1)));
    Kernel kb = elementwise(1000, in, std::move(bl).finish({&v, 1}));
    EXPECT_EQ(compiler::cpu::map_interleave(kb), 1);
    expect_same(kb, g);
  }
  for (int64_t n : {256, 257, 1000, 1037, 4099}) {
    SCOPED_TRACE(n);
    expect_same(elementwise(n, in, heavy_body()), g);
    expect_same(elementwise(n, in, heavy_body()), g, /*small_floats=*/true);
  }
  // Rows of a 2-d kernel, each its own inner loop (remainder per row).
  Kernel k2 = elementwise(1, in, heavy_body());
  k2.dims = {3, 700};
  for (auto& t : k2.inputs) t.shape = {3, 700};
  for (auto& l : k2.loads) l.index = Affine::dim(0, 2).scaled(700) + Affine::dim(1, 2);
  k2.outputs[0].shape = {3, 700};
  k2.verify();
  EXPECT_EQ(compiler::cpu::map_interleave(k2), 4);
  expect_same(k2, g, true);
}

// A kernel of several stages prefetches the next row's first-stage reads during its last stage
// (only when that load is contiguous over the row); the last row's prefetch points past the
// buffer, which must be harmless.
TEST(LlvmCodegen, MultiStageKernelsPrefetchTheNextRow) {
  using reductions::two_stage;
  std::mt19937_64& g = testing::rng();
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32})
    for (const auto& [r, a, b] : std::vector<std::array<int64_t, 3>>{{3, 2, 700}, {2, 1, 1536}})
      for (bool transposed : {false, true})
        for (bool rows : {false, true}) {
          if (t != DType::kFloat32 && (transposed || rows || b == 1536)) continue;  // time
          SCOPED_TRACE(std::string(dtype_short_name(t)) + " " + std::to_string(r) + "x" +
                       std::to_string(a) + "x" + std::to_string(b) +
                       (transposed ? " transposed" : ""));
          reductions::expect_reduction_same(
              two_stage(t, r, a, b, transposed, Op::kMax, Op::kAdd, rows), g);
        }
  auto ir = [](bool transposed) {
    return compiler::cpu::compile_kernel(
               reductions::two_stage(DType::kFloat32, 3, 2, 700, transposed, Op::kMax, Op::kAdd,
                                     false),
               {true, false})
        ->llvm_ir();
  };
  EXPECT_NE(ir(false).find("llvm.prefetch"), std::string::npos) << ir(false);
  EXPECT_EQ(ir(true).find("llvm.prefetch"), std::string::npos);  // strided: no prefetch
}

// A column kernel: the space [O, I, R] over an [O, R, I] operand, folded over R per column in
// the eager column order; integer and small-integer float values fold exactly in any order, so
// the evaluator (in order) is the reference. Widths past a block, chunks past 8 rows and the
// ends of a thread's range of columns.
Kernel column_kernel(DType t, int64_t O, int64_t R, int64_t I, Op op) {
  Kernel k;
  k.name = "cols";
  k.dims = {O, I, R};
  k.inner = 1;
  k.row_outputs = true;
  k.columns = I;
  k.inputs = {{t, {O, R, I}}};
  Affine x = Affine::constant(0, 3);
  x.coeff = {R * I, 1, I};
  const std::vector<DType> in{t};
  scalar::Builder bl(in);
  const scalar::Value v = bl.add(bl.input(0), bl.input(0));
  k.stages = {compiler::kir::Stage{{{0, x}}, {}, std::move(bl).finish({&v, 1}), {{op, t}}}};
  const std::vector<DType> rin{t};
  scalar::Builder rb(rin);
  const scalar::Value r = rb.input(0);
  k.body = std::move(rb).finish({&r, 1});
  k.outputs = {{t, {O, I}}};
  k.verify();
  return k;
}

TEST(LlvmCodegen, ColumnKernelsMatchTheEvaluator) {
  std::mt19937_64& g = testing::rng();
  for (DType t : {DType::kInt32, DType::kFloat32, DType::kInt64})
    for (auto [O, R, I] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 40}, {2, 9, 33}, {3, 100, 50}, {1, 300, 1030}, {2, 17, 2100}, {1, 2100, 64}})
      for (Op op : {Op::kAdd, Op::kMax}) {
        SCOPED_TRACE(std::string(dtype_short_name(t)) + " " + std::to_string(O) + "x" +
                     std::to_string(R) + "x" + std::to_string(I));
        reductions::expect_reduction_same(column_kernel(t, O, R, I, op), g);
      }
  const Kernel k = column_kernel(DType::kFloat32, 2, 5, 40, Op::kAdd);
  EXPECT_NE(k.text().find("row_outputs columns=40"), std::string::npos) << k.text();
  Kernel two = k;  // one stage per column kernel
  two.stages.push_back(two.stages[0]);
  EXPECT_THROW(two.verify(), InternalError);
  Kernel odd = k;  // the columns divide the outer points
  odd.columns = 3;
  EXPECT_THROW(odd.verify(), InternalError);
  Kernel map = k;  // row outputs only
  map.row_outputs = false;
  EXPECT_THROW(map.verify(), InternalError);
}

}  // namespace
}  // namespace tessera
