// Value ranges and decided selects (compiler/value_range.h).
//
// * Soundness on random programs: a time-boxed generator builds well-typed programs over
//   float32, float64, int32, uint32 and bool (constants, arithmetic, fma, max/min, sqrt,
//   rounding, comparisons, selects, converts, bit casts, shifts and masks by constants) and
//   runs them with the reference evaluator on random inputs, specials included (+-0, +-inf,
//   NaN, subnormals, the integer extremes): every instruction's value lies in its range (NaN
//   only where the range allows it), and the program with its decided selects folded gives
//   the same bits for every instruction. The seed is printed.
// * random.normal's kernel body (23 random mantissa bits -> a uniform in (-1, 1) -> XLA's
//   erf_inv with its log1p expansion): the log's special cases and erf_inv's +-1 check are
//   decided, and the folded body computes the same bits on every input pattern tried.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "compiler/math_expand.h"
#include "compiler/value_range.h"
#include "tessera/scalar_ir.h"
#include "util/test_util.h"

namespace tessera::compiler {
namespace {

using scalar::Builder;
using scalar::Op;
using scalar::Program;
using scalar::ScalarValue;
using scalar::Value;

constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64, kI32 = DType::kInt32,
                kU32 = DType::kUInt32, kBool = DType::kBool;

std::mt19937_64& rng() { return testing::rng(); }
int64_t pick(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng());
}

double random_float() {
  static const double specials[] = {0.0,
                                    -0.0,
                                    1.0,
                                    -1.0,
                                    0.5,
                                    2.0,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    1e-45,
                                    -1e-45,
                                    1.17549435e-38,
                                    3.4028234663852886e38,
                                    -3.4028234663852886e38,
                                    5.0,
                                    0.99999994};
  if (pick(0, 2) == 0) return specials[pick(0, std::size(specials) - 1)];
  const double m = std::uniform_real_distribution<double>(-2.0, 2.0)(rng());
  return std::ldexp(m, static_cast<int>(pick(-30, 30)));
}

int64_t random_int(DType t) {
  static const int64_t specials[] = {
      0, 1, -1, 2, 255, 256, 0x7fffffff, -0x7fffffff - 1, 0x3f800000, 0x7f800000, 0x007fffff};
  int64_t v = pick(0, 1) == 0 ? specials[pick(0, std::size(specials) - 1)]
                              : pick(-(int64_t{1} << 31), (int64_t{1} << 31) - 1);
  if (t == kU32) v = static_cast<int64_t>(static_cast<uint32_t>(v));
  if (t == kBool) v = v & 1;
  return v;
}

ScalarValue random_input(DType t) {
  if (t == kF32 || t == kF64) return ScalarValue::of_double(random_float(), t);
  return ScalarValue::of_int(random_int(t), t);
}

Value constant(Builder& b, DType t) {
  if (t == kF32 || t == kF64) {
    double v = random_float();
    if (t == kF32) v = static_cast<float>(v);
    return b.constant(v, t);
  }
  return b.constant_bits(static_cast<uint64_t>(random_int(t)), t);
}

// A random well-typed program; every instruction is an output.
Program random_program(int ninstr) {
  const DType types[] = {kF32, kF64, kI32, kU32, kBool};
  std::vector<DType> ins;
  for (int i = pick(1, 4); i > 0; --i) ins.push_back(types[pick(0, 4)]);
  Builder b(ins);
  std::vector<Value> pool;
  for (int i = 0; i < b.num_inputs(); ++i) pool.push_back(b.input(i));
  auto of_type = [&](DType t) -> Value {
    std::vector<Value> c;
    for (const Value& v : pool)
      if (v.type == t) c.push_back(v);
    if (c.empty() || pick(0, 4) == 0) return constant(b, t);
    return c[static_cast<size_t>(pick(0, static_cast<int64_t>(c.size()) - 1))];
  };
  auto any = [&]() {
    return pool[static_cast<size_t>(pick(0, static_cast<int64_t>(pool.size()) - 1))];
  };
  while (static_cast<int>(pool.size()) < ninstr) {
    const Value a = any();
    const DType t = a.type;
    const bool fl = t == kF32 || t == kF64, in = t == kI32 || t == kU32;
    Value r;
    switch (pick(0, 11)) {
      case 0:
        r = constant(b, types[pick(0, 4)]);
        break;
      case 1:  // float unary
        if (!fl) continue;
        r = b.unary(std::array{Op::kNeg, Op::kAbs, Op::kSqrt, Op::kFloor, Op::kCeil,
                               Op::kRoundEven}[pick(0, 5)],
                    a);
        break;
      case 2:
      case 3: {  // arithmetic
        if (t == kBool) continue;
        const Op ops[] = {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kMax, Op::kMin};
        const Op o = ops[pick(0, fl ? 5 : 5)];
        if (in && o == Op::kDiv) continue;
        r = b.binary(o, a, of_type(t));
        break;
      }
      case 4:
        if (!fl) continue;
        r = b.fma(a, of_type(t), of_type(t));
        break;
      case 5: {
        const Op ops[] = {Op::kEq, Op::kNe, Op::kLt, Op::kLe, Op::kGt, Op::kGe};
        r = b.compare(ops[pick(0, 5)], a, of_type(t));
        break;
      }
      case 6:
        r = b.select(of_type(kBool), a, of_type(t));
        break;
      case 7:
        r = b.convert(a, types[pick(0, 4)]);
        break;
      case 8:
        if (t == kF32)
          r = b.bitcast(a, pick(0, 1) ? kU32 : kI32);
        else if (in)
          r = b.bitcast(a, kF32);
        else
          continue;
        break;
      case 9:
      case 10: {  // integer masks and shifts by constants (how bits become floats)
        if (!in) continue;
        const Op ops[] = {Op::kShrLogical, Op::kShrArith, Op::kAnd, Op::kOr, Op::kXor, Op::kShl};
        const Op o = ops[pick(0, 5)];
        const bool shift = o == Op::kShrLogical || o == Op::kShrArith || o == Op::kShl;
        const Value c = shift ? b.constant_bits(static_cast<uint64_t>(pick(0, 33)), t)
                              : (pick(0, 1) ? constant(b, t) : of_type(t));
        r = b.binary(o, a, c);
        break;
      }
      default:
        if (t != kBool) continue;
        r = pick(0, 2) == 0 ? b.bit_not(a)
                            : b.binary(pick(0, 1) ? Op::kAnd : Op::kOr, a, of_type(kBool));
        break;
    }
    pool.push_back(r);
  }
  Program p = b.program();
  p.outputs.clear();
  for (size_t i = 0; i < p.instrs.size(); ++i) p.outputs.push_back(static_cast<int32_t>(i));
  return p;
}

bool in_range(const ScalarValue& v, const ValueRange& r) {
  const double d = v.as_double();
  if (std::isnan(d)) return r.nan;
  return r.lo <= d && d <= r.hi;
}

TEST(ValueRange, RandomProgramsAreBoundedAndFoldingKeepsTheBits) {
  const auto start = std::chrono::steady_clock::now();
  int programs = 0, folded = 0, checked = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500)) {
    const Program p = random_program(static_cast<int>(pick(4, 40)));
    const std::vector<ValueRange> r = value_ranges(p);
    ASSERT_EQ(r.size(), p.instrs.size());
    int decided = 0;
    const Program f = fold_decided_selects(p, &decided);
    folded += decided;
    ++programs;
    for (int run = 0; run < 40; ++run) {
      std::vector<ScalarValue> in;
      for (DType t : p.inputs) in.push_back(random_input(t));
      const auto want = scalar::evaluate(p, in);
      const auto got = scalar::evaluate(f, in);
      for (size_t i = 0; i < want.size(); ++i) {
        ++checked;
        ASSERT_TRUE(in_range(want[i], r[i]))
            << "instruction " << i << " = " << want[i].as_double() << " outside [" << r[i].lo
            << ", " << r[i].hi << "] nan=" << r[i].nan << " in\n"
            << p.str();
        ASSERT_EQ(want[i].bits, got[i].bits) << "instruction " << i << " after folding\n"
                                             << p.str();
      }
    }
  }
  std::printf("%d programs, %d selects decided, %d values checked\n", programs, folded, checked);
  EXPECT_GT(folded, 0);
}

// random.normal's body for one element: bits -> uniform in [-0.99999994, 1) -> erf_inv.
Program normal_body() {
  const DType in[] = {kU32};
  Builder b(in);
  const Value bits = b.input(0);
  const Value m = b.binary(Op::kOr, b.binary(Op::kShrLogical, bits, b.constant_bits(9, kU32)),
                           b.constant_bits(0x3f800000, kU32));
  const Value f = b.sub(b.bitcast(m, kF32), b.constant(1.0, kF32));
  const Value lo = b.constant(-0.99999994, kF32);
  const Value span = b.sub(b.constant(1.0, kF32), lo);
  const Value u = b.max(lo, b.add(b.mul(f, span), lo));
  const Value y = b.mul(b.constant(1.4142135, kF32), expand_erf_inv_f32(b, u));
  const Value outs[] = {y};
  return std::move(b).finish(outs);
}

TEST(ValueRange, TheNormalSamplersSpecialCasesAreDecided) {
  const Program p = normal_body();
  int decided = 0;
  const Program f = fold_decided_selects(p, &decided);
  // log1p's 1 + x == 1 test and erf_inv's w < 5 stay; the log's subnormal (two selects),
  // zero, negative, infinite and NaN checks, log1p's infinity check and erf_inv's |u| == 1
  // fold.
  std::printf("%d selects decided\n", decided);
  EXPECT_GE(decided, 8) << p.str();
  std::vector<uint32_t> patterns = {0u,          1u,          0x1ffu,      0x200u,     0x7fffffffu,
                                    0x80000000u, 0xfffffe00u, 0xffffffffu, 0x3f800000u};
  for (int i = 0; i < 200000; ++i) patterns.push_back(static_cast<uint32_t>(rng()()));
  for (uint32_t v : patterns) {
    const ScalarValue in[] = {ScalarValue::of_int(v, kU32)};
    const auto want = scalar::evaluate(p, in), got = scalar::evaluate(f, in);
    ASSERT_EQ(want[0].bits, got[0].bits) << std::hex << v;
    ASSERT_TRUE(std::isfinite(want[0].as_double()));
  }
}

}  // namespace
}  // namespace tessera::compiler
