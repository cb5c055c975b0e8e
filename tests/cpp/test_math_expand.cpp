// The scalar-IR math expansions (compiler/math_expand.h) and the scalar runtime
// (compiler/scalar_runtime.h) against the eager kernels they copy.
//
// * Bitwise: each expanded op, as a one-op program run through expand_math and the reference
//   evaluator, gives the eager kernel's bits (lax on an array of the same inputs): the specials
//   (+-0, +-inf, NaNs with several payloads, subnormals, min/max normal, the floats next to every
//   clamp and range threshold of vec_math) and random floats spread over every binade of both
//   signs: 2^20 random ones per op. scalar::evaluate is an interpreter (about a microsecond per
//   run of a 50-instruction program here), so the loop runs on two threads: ~3 s for all ops in
//   Release on two cores (lower kEvalInputs, which the ulp check does not use, if that grows).
//   Signaling NaNs: the evaluator holds floats as doubles, which quiets them, so for those the
//   expected result is the eager bits with the quiet bit set.
// * Accuracy: the eager float32 kernels (so, bitwise, the expansions) against float64 libm,
//   within vec_math.h's / vec_math_extra.h's stated ulp bounds, the specials exactly.
// * The runtime functions against the eager kernels, bitwise; every library op left after
//   expand_math has one; the shared library exports the symbols.
// Random inputs use a fixed seed (printed), so a failure reproduces.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "compiler/math_expand.h"
#include "compiler/scalar_runtime.h"
#include "tessera/lax.h"
#include "tessera/scalar_ir.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using compiler::expand_math;
using scalar::Op;
using scalar::Program;
using scalar::ScalarValue;

constexpr DType kF32 = DType::kFloat32, kF64 = DType::kFloat64;
constexpr uint64_t kSeed = 0x7e55e7a5eedULL;
constexpr size_t kUlpInputs = size_t{1} << 20;  // random floats for the accuracy check
// Of those, run through the evaluator: 2^20 (the CI floor) in the Release run; a
// sanitizer build, ~15x slower, samples 2^16 (the Release run covers the rest).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
constexpr size_t kEvalInputs = size_t{1} << 16;
#else
constexpr size_t kEvalInputs = size_t{1} << 20;
#endif

std::mt19937_64 make_rng(uint64_t salt) {
  static const bool printed = [] {
    std::cout << "[seed] test_math_expand uses seed " << kSeed << " (fixed)\n";
    return true;
  }();
  (void)printed;
  return std::mt19937_64(kSeed ^ (salt * 0x9e3779b97f4a7c15ULL));
}

float f_of(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t u_of(float f) { return std::bit_cast<uint32_t>(f); }
bool is_snan(float f) { return std::isnan(f) && !(u_of(f) & 0x00400000u); }

// ---------------------------------------------------------------- inputs

// The specials and the floats within 3 ulp of each vec_math threshold, both signs.
std::vector<float> special_floats() {
  std::vector<float> v;
  for (uint32_t u :
       {0x00000000u, 0x7f800000u, 0x7fc00000u, 0x7fc00001u, 0x7fd23456u, 0x7fffffffu, 0x7f800001u,
        0x7fa00000u, 0x7fbfffffu, 0x00000001u, 0x00000002u, 0x00000003u, 0x00400000u, 0x007fffffu,
        0x00800000u, 0x00800001u, 0x7f7fffffu, 0x7f7ffffeu, 0x3f800000u}) {
    v.push_back(f_of(u));
    v.push_back(f_of(u | 0x80000000u));
  }
  const float thresholds[] = {88.8f,      104.0f,      128.5f,          152.0f,     131072.0f,
                              0.625f,     0.35f,       88.0f,           4096.0f,    1.0f,
                              2.0f,       0.5f,        1.17549435e-38f, 8388608.0f, 12582912.0f,
                              88.72284f,  87.33655f,   103.97208f,      127.99999f, 149.0f,
                              0.7853982f, 1.5707964f,  3.1415927f,      0.6931472f, 1e-30f,
                              1e-10f,     0.70710677f, 1.4142135f,      65536.0f,   131071.99f};
  for (float t : thresholds) {
    for (float s : {t, -t}) {
      float lo = s, hi = s;
      v.push_back(s);
      for (int k = 0; k < 3; ++k) {
        lo = std::nextafter(lo, -INFINITY);
        hi = std::nextafter(hi, INFINITY);
        v.push_back(lo);
        v.push_back(hi);
      }
    }
  }
  return v;
}

// n random floats, the same number in each binade (exponent field 0..254) of each sign.
std::vector<float> binade_floats(size_t n, uint64_t salt) {
  std::mt19937_64 g = make_rng(salt);
  std::vector<float> v;
  v.reserve(n);
  const size_t per = std::max<size_t>(1, n / 510);
  for (uint32_t e = 0; e < 255; ++e) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      for (size_t i = 0; i < per; ++i)
        v.push_back(f_of(sign | (e << 23) | static_cast<uint32_t>(g() & 0x7fffffu)));
    }
  }
  std::shuffle(v.begin(), v.end(), g);
  return v;
}

// Specials first, then random ones: the first `n_eval` of these go through the evaluator.
std::vector<float> test_floats() {
  std::vector<float> v = special_floats();
  const std::vector<float> r = binade_floats(kUlpInputs, 1);
  v.insert(v.end(), r.begin(), r.end());
  return v;
}

// ---------------------------------------------------------------- arrays and programs

Array f32_array(const std::vector<float>& v) {
  Array a = empty_array(Aval{{static_cast<int64_t>(v.size())}, kF32, false}, "test");
  std::memcpy(a.buffer()->data(), v.data(), v.size() * sizeof(float));
  return a;
}
Array f64_array(const std::vector<double>& v) {
  Array a = empty_array(Aval{{static_cast<int64_t>(v.size())}, kF64, false}, "test");
  std::memcpy(a.buffer()->data(), v.data(), v.size() * sizeof(double));
  return a;
}
template <class T>
std::vector<T> values(const Array& a) {
  std::vector<T> out(static_cast<size_t>(a.size()));
  std::memcpy(out.data(), a.raw_data(), out.size() * sizeof(T));
  return out;
}

Program one_op(Op op, DType t) {
  const std::vector<DType> in(static_cast<size_t>(scalar::op_arity(op)), t);
  scalar::Builder b(in);
  std::vector<scalar::Value> a;
  for (int i = 0; i < b.num_inputs(); ++i) a.push_back(b.input(i));
  const scalar::Value r = b.op(op, a, t);
  return std::move(b).finish({&r, 1});
}

template <class F>
Program unary_program(F build) {
  const DType in[] = {kF32};
  scalar::Builder b(in);
  const scalar::Value r = build(b, b.input(0));
  return std::move(b).finish({&r, 1});
}

float eval_f32(const Program& p, std::initializer_list<float> xs) {
  std::vector<ScalarValue> in;
  for (float x : xs) in.push_back(ScalarValue::of_double(x, kF32));
  return static_cast<float>(scalar::evaluate(p, in).at(0).as_double());
}
double eval_f64(const Program& p, std::initializer_list<double> xs) {
  std::vector<ScalarValue> in;
  for (double x : xs) in.push_back(ScalarValue::of_double(x, kF64));
  return scalar::evaluate(p, in).at(0).as_double();
}

// The bits the evaluator can give for an eager result: a signaling NaN comes back quiet.
uint32_t evaluable(float eager) { return u_of(eager) | (is_snan(eager) ? 0x00400000u : 0u); }
// Equal bits, or both NaN: a NaN's sign and payload are not part of any op's result (x86 makes
// -NaN for an invalid operation, a constant NaN is +NaN; which one a kernel returns depends on
// how its compiler scheduled it).
bool same(uint32_t a, uint32_t b) {
  const auto nan = [](uint32_t u) { return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu); };
  return a == b || (nan(a) && nan(b));
}

std::string hex(uint32_t u) {
  char s[16];
  std::snprintf(s, sizeof(s), "0x%08x", u);
  return s;
}

// ---------------------------------------------------------------- accuracy

// |got - want| in float32 ulps at want (want: the float64 value), as
// test_elementwise_edge_cases.cpp measures the stated bounds.
double ulps(float got, double want) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : kInf;
  if (std::isinf(want) || std::isinf(got))
    return static_cast<double>(got) == want ? 0.0 : (std::fabs(want) > 3.4e38 ? 0.5 : kInf);
  const float wf = static_cast<float>(want);
  const int e = std::isinf(wf) ? 128 : std::max(std::ilogb(wf == 0.0f ? 1e-45f : wf), -126);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, e - 23);
}

struct Case {
  const char* name;
  Op op;
  Array (*eager)(const Array&);
  double (*ref)(double);
  double max_ulps;  // vec_math.h / vec_math_extra.h
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"exp", Op::kExp, lax::exp, [](double x) { return std::exp(x); }, 2},
      {"exp2", Op::kExp2, lax::exp2, [](double x) { return std::exp2(x); }, 1},
      {"expm1", Op::kExpm1, lax::expm1, [](double x) { return std::expm1(x); }, 4},
      {"log", Op::kLog, lax::log, [](double x) { return std::log(x); }, 2},
      {"log1p", Op::kLog1p, lax::log1p, [](double x) { return std::log1p(x); }, 3},
      {"tanh", Op::kTanh, lax::tanh, [](double x) { return std::tanh(x); }, 4},
      {"sin", Op::kSin, lax::sin, [](double x) { return std::sin(x); }, 4},
      {"cos", Op::kCos, lax::cos, [](double x) { return std::cos(x); }, 4},
      {"tan", Op::kTan, lax::tan, [](double x) { return std::tan(x); }, 4.5},
      {"rsqrt", Op::kRsqrt, lax::rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 0.5},
  };
  return c;
}

// The eager kernels of the non-op compositions, with their expansion.
struct Composite {
  const char* name;
  scalar::Value (*expand)(scalar::Builder&, scalar::Value);
  Array (*eager)(const Array&);
};

// ---------------------------------------------------------------- expansion: structure

TEST(MathExpand, ReplacesExactlyTheExpandedOps) {
  for (Op op : {Op::kExp, Op::kExp2, Op::kExpm1, Op::kLog, Op::kLog1p, Op::kTanh, Op::kSin,
                Op::kCos, Op::kTan, Op::kRsqrt, Op::kNextAfter, Op::kCbrt, Op::kAtan2, Op::kPow,
                Op::kRem, Op::kSqrt, Op::kFloor}) {
    for (DType t : {kF32, kF64}) {
      const Program p = one_op(op, t);
      const Program e = expand_math(p);
      int left = 0;  // instructions of op at t
      for (const scalar::Instr& in : e.instrs) left += in.op == op && in.type == t;
      int fallbacks = 0;
      for (size_t i = 0; i < e.instrs.size(); ++i)
        fallbacks += compiler::is_range_fallback(e, static_cast<int32_t>(i));
      const std::string what =
          std::string(scalar::op_name(op)) + " at " + std::string(dtype_short_name(t));
      if (!compiler::expands(op, t)) {
        EXPECT_EQ(e.str(), p.str()) << what << " is not expanded and must be copied as it is";
        continue;
      }
      // sin/cos keep their float32 op as the large-argument fallback; tan's is at float64.
      const bool trig = op == Op::kSin || op == Op::kCos || op == Op::kTan;
      EXPECT_EQ(left, (op == Op::kSin || op == Op::kCos) ? 1 : 0) << what;
      EXPECT_EQ(fallbacks, trig ? 1 : 0) << what;
      EXPECT_GT(e.instrs.size(), p.instrs.size()) << what;
      EXPECT_EQ(expand_math(e).str(), e.str()) << what << ": expand_math is not idempotent";
    }
  }
}

TEST(MathExpand, LeavesOtherTypesAndKeepsTheProgramAround) {
  // float16 exp as the definition driver writes it: converts around a float32 exp.
  const DType in[] = {DType::kFloat16, kF64};
  scalar::Builder b(in);
  const scalar::Value x32 = b.convert(b.input(0), kF32);
  const scalar::Value y16 = b.convert(b.exp(x32), DType::kFloat16);
  const scalar::Value z = b.exp(b.input(1));  // float64: a libm call, kept
  const scalar::Value w = b.call(scalar::Fn::kErf, {&z, 1});
  const scalar::Value outs[] = {y16, w};
  const Program p = std::move(b).finish(outs);
  const Program e = expand_math(p);
  ASSERT_EQ(e.outputs.size(), 2u);
  EXPECT_EQ(e.output_types(), p.output_types());
  int exp64 = 0, exp32 = 0, erf = 0;
  for (const scalar::Instr& i : e.instrs) {
    exp64 += i.op == Op::kExp && i.type == kF64;
    exp32 += i.op == Op::kExp && i.type == kF32;
    erf += i.op == Op::kExtern && i.index == static_cast<int32_t>(scalar::Fn::kErf);
  }
  EXPECT_EQ(exp64, 1);
  EXPECT_EQ(exp32, 0);
  EXPECT_EQ(erf, 1);
  for (double v : {-3.5, 0.0, 1.0, 11.0}) {
    const ScalarValue args[] = {ScalarValue::of_double(v, DType::kFloat16),
                                ScalarValue::of_double(v / 7, kF64)};
    const auto want = scalar::evaluate(p, args), got = scalar::evaluate(e, args);
    EXPECT_EQ(got[1].bits, want[1].bits);
    // float16 of the float32 exp: eager rounds vmath::exp once, the reference libm once.
    EXPECT_EQ(got[0].as_double(), want[0].as_double()) << v;
  }
}

TEST(MathExpand, WrongOperandTypeIsAnInternalError) {
  const DType in[] = {kF64};
  scalar::Builder b(in);
  EXPECT_ERROR(InternalError, compiler::expand_exp_f32(b, b.input(0)), "expand_exp_f32 of a f64");
}

// The expansions rely on the evaluator's float32 fma rounding once (std::fma on floats): with
// a = b = 1 + 2^-12 and c = 2^-60, a*b + c = 1 + 2^-11 + 2^-24 + 2^-60 rounds up to
// 1 + 2^-11 + 2^-23; through double it would round to the tie 1 + 2^-11 + 2^-24, then to even.
TEST(MathExpand, EvaluatorFloat32FmaRoundsOnce) {
  const float a = 1.0f + 0x1p-12f, c = 0x1p-60f;
  const Program p = one_op(Op::kFma, kF32);
  EXPECT_EQ(eval_f32(p, {a, a, c}), 1.0f + 0x1p-11f + 0x1p-23f);
  EXPECT_EQ(std::fma(a, a, c), 1.0f + 0x1p-11f + 0x1p-23f);
  EXPECT_EQ(static_cast<float>(std::fma(double{a}, double{a}, double{c})), 1.0f + 0x1p-11f);
}

// ---------------------------------------------------------------- expansion: bitwise

// Runs check(i) for i in [0, n) on two threads (the evaluator is pure); the indices it
// returns false for, in order.
template <class F>
std::vector<size_t> failing(size_t n, F check) {
  std::vector<size_t> bad[2];
  auto run = [&](int part) {
    for (size_t i = static_cast<size_t>(part); i < n; i += 2)
      if (!check(i)) bad[part].push_back(i);
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  std::vector<size_t> all = bad[0];
  all.insert(all.end(), bad[1].begin(), bad[1].end());
  std::sort(all.begin(), all.end());
  return all;
}

TEST(MathExpand, Float32ExpansionsGiveTheEagerBits) {
  register_all();
  const std::vector<float> xs = test_floats();
  const size_t n_eval = std::min(xs.size(), special_floats().size() + kEvalInputs);
  const auto t0 = std::chrono::steady_clock::now();
  for (const Case& c : cases()) {
    const Program p = one_op(c.op, kF32);
    const Program e = expand_math(p);
    const std::vector<float> eager = values<float>(c.eager(f32_array(xs)));
    const bool libm_fallback = c.op == Op::kSin || c.op == Op::kCos;
    // Beyond kTrigMax eager sin/cos call sinf/cosf: the expansion keeps the float32 op there
    // (a backend calls tessera_rt_sin_f32; RuntimeFunctionsGiveTheEagerBits checks that one),
    // which the evaluator computes as libm in double: compare with the unexpanded op there.
    auto want = [&](size_t i) {
      const float x = xs[i];
      if (libm_fallback && !(std::fabs(x) <= compiler::kTrigMax)) return u_of(eval_f32(p, {x}));
      return evaluable(eager[i]);
    };
    const std::vector<size_t> bad =
        failing(n_eval, [&](size_t i) { return same(u_of(eval_f32(e, {xs[i]})), want(i)); });
    for (size_t k = 0; k < std::min<size_t>(bad.size(), 5); ++k) {
      const size_t i = bad[k];
      ADD_FAILURE() << c.name << "(" << xs[i] << " = " << hex(u_of(xs[i])) << "): expansion "
                    << hex(u_of(eval_f32(e, {xs[i]}))) << ", eager " << hex(want(i));
    }
    EXPECT_EQ(bad.size(), 0u) << c.name << ": " << bad.size() << " of " << n_eval << " differ";
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[bitwise] " << cases().size() << " ops x " << n_eval << " inputs through the "
            << "evaluator in " << s << " s\n";
}

TEST(MathExpand, CompositionsGiveTheEagerBits) {
  register_all();
  const Composite comps[] = {
      {"logistic", compiler::expand_logistic_f32, lax::logistic},
      {"sinh", compiler::expand_sinh_f32, lax::sinh},
      {"cosh", compiler::expand_cosh_f32, lax::cosh},
      {"asinh", compiler::expand_asinh_f32, lax::asinh},
      {"acosh", compiler::expand_acosh_f32, lax::acosh},
      {"atanh", compiler::expand_atanh_f32, lax::atanh},
      {"erf", compiler::expand_erf_f32, lax::erf},
      {"erf_inv", compiler::expand_erf_inv_f32, lax::erf_inv},
  };
  std::vector<float> xs = special_floats();
  const std::vector<float> r = binade_floats(kEvalInputs / 4, 2);
  xs.insert(xs.end(), r.begin(), r.end());
  for (const Composite& c : comps) {
    const Program p = unary_program(c.expand);
    const std::vector<float> eager = values<float>(c.eager(f32_array(xs)));
    size_t bad = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float got = eval_f32(p, {xs[i]});
      if (!same(u_of(got), evaluable(eager[i])) && ++bad <= 5) {
        ADD_FAILURE() << c.name << "(" << xs[i] << " = " << hex(u_of(xs[i])) << "): expansion "
                      << hex(u_of(got)) << ", eager " << hex(u_of(eager[i]));
      }
    }
    EXPECT_EQ(bad, 0u) << c.name;
  }
}

TEST(MathExpand, PowGivesTheEagerBitsAndIsWithinAnUlpOfFloat64) {
  register_all();
  // Pairs: every special crossed with every special (C99's cases), then random bases over the
  // binades with exponents small, large, integral (odd and even) and near overflow/underflow.
  const std::vector<float> s = special_floats();
  std::vector<float> a, b;
  for (size_t i = 0; i < s.size(); i += 2)
    for (size_t j = 0; j < s.size(); j += 2) a.push_back(s[i]), b.push_back(s[j]);
  std::mt19937_64 g = make_rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<float> r = binade_floats(30000, 6);
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::isnan(r[i])) continue;
    const double pick = u(g);
    float y = static_cast<float>((u(g) - 0.5) * (pick < 0.5 ? 6.0 : 300.0));
    if (pick < 0.2) y = std::round(y);
    a.push_back(r[i]);
    b.push_back(y);
  }
  const Program pw = expand_math(one_op(Op::kPow, kF32));
  const std::vector<float> eager = values<float>(lax::pow(f32_array(a), f32_array(b)));
  size_t bad = 0, checked = 0;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (is_snan(a[i]) || is_snan(b[i])) continue;
    const float got = eval_f32(pw, {a[i], b[i]});
    if (!same(u_of(got), u_of(eager[i])) && ++bad <= 5)
      ADD_FAILURE() << "pow(" << a[i] << ", " << b[i] << "): expansion " << hex(u_of(got))
                    << ", eager " << hex(u_of(eager[i]));
    // Accuracy against float64 pow, and C99's special values as libm's powf gives them.
    const double ref = std::pow(static_cast<double>(a[i]), static_cast<double>(b[i]));
    const float rf = static_cast<float>(ref);
    if (std::isnan(ref) || std::isinf(rf) || rf == 0.0f || std::isinf(ref)) {
      const float lf = std::pow(a[i], b[i]);
      EXPECT_TRUE(same(u_of(eager[i]), u_of(lf)))
          << "pow(" << a[i] << ", " << b[i] << ") = " << eager[i] << ", powf " << lf;
      continue;
    }
    const double ulp = std::fabs(rf) < std::numeric_limits<float>::min()
                           ? std::ldexp(1.0, -149)
                           : std::ldexp(1.0, std::ilogb(rf) - 23);
    worst = std::max(worst, std::fabs(static_cast<double>(eager[i]) - ref) / ulp);
    ++checked;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_LE(worst, 1.0);
  std::cout << "[pow] " << a.size() << " pairs, " << checked << " finite: worst " << worst
            << " ulp against float64 pow\n";
}

TEST(MathExpand, RsqrtFloat64AndNextafterGiveTheEagerBits) {
  register_all();
  std::mt19937_64 g = make_rng(3);
  // float64: random bit patterns (every binade, NaNs included) and specials.
  std::vector<double> d = {0.0,
                           -0.0,
                           INFINITY,
                           -INFINITY,
                           NAN,
                           -NAN,
                           5e-324,
                           -5e-324,
                           2.2250738585072014e-308,
                           1.7976931348623157e308,
                           1.0,
                           -1.0};
  for (int i = 0; i < 20000; ++i) d.push_back(std::bit_cast<double>(g()));
  const Program rs = expand_math(one_op(Op::kRsqrt, kF64));
  const std::vector<double> eager_rs = values<double>(lax::rsqrt(f64_array(d)));
  for (size_t i = 0; i < d.size(); ++i) {
    const double got = eval_f64(rs, {d[i]});
    if (std::isnan(eager_rs[i])) {
      EXPECT_TRUE(std::isnan(got)) << d[i];
    } else {
      EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(eager_rs[i])) << d[i];
    }
  }
  // nextafter on pairs: random, equal, zeros of both signs, NaNs, infinities, subnormals.
  const std::vector<float> s = special_floats();
  std::vector<float> a, b;
  for (size_t i = 0; i < s.size(); i += 3)
    for (size_t j = 0; j < s.size(); j += 5) a.push_back(s[i]), b.push_back(s[j]);
  const std::vector<float> r = binade_floats(20000, 4);
  for (size_t i = 0; i + 1 < r.size(); ++i) {
    a.push_back(r[i]);
    b.push_back(i % 7 == 0 ? r[i] : r[i + 1]);
  }
  const Program nf = expand_math(one_op(Op::kNextAfter, kF32));
  const std::vector<float> eager_nf = values<float>(lax::nextafter(f32_array(a), f32_array(b)));
  size_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    // Quiet NaN operands only: the evaluator cannot hold a signaling one.
    if (is_snan(a[i]) || is_snan(b[i])) continue;
    const float got = eval_f32(nf, {a[i], b[i]});
    if (u_of(got) != u_of(eager_nf[i]) && ++bad <= 5) {
      ADD_FAILURE() << "nextafter(" << hex(u_of(a[i])) << ", " << hex(u_of(b[i])) << "): expansion "
                    << hex(u_of(got)) << ", eager " << hex(u_of(eager_nf[i]));
    }
  }
  EXPECT_EQ(bad, 0u);
  std::vector<double> da, db;
  for (size_t i = 0; i + 1 < d.size(); ++i) {
    da.push_back(d[i]);
    db.push_back(i % 5 == 0 ? d[i] : (i % 5 == 1 ? -d[i] : d[i + 1]));
  }
  const Program nd = expand_math(one_op(Op::kNextAfter, kF64));
  const std::vector<double> eager_nd = values<double>(lax::nextafter(f64_array(da), f64_array(db)));
  for (size_t i = 0; i < da.size(); ++i) {
    const uint64_t ua = std::bit_cast<uint64_t>(da[i]), ub = std::bit_cast<uint64_t>(db[i]);
    const auto snan = [](uint64_t u) {
      return (u & 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL && (u & 0x000fffffffffffffULL) &&
             !(u & 0x0008000000000000ULL);
    };
    if (snan(ua) || snan(ub)) continue;
    const double got = eval_f64(nd, {da[i], db[i]});
    EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(eager_nd[i]))
        << da[i] << " " << db[i];
  }
}

// ---------------------------------------------------------------- accuracy

TEST(MathExpand, EagerFloat32KernelsWithinTheirStatedUlpBounds) {
  register_all();
  const std::vector<float> xs = test_floats();
  for (const Case& c : cases()) {
    const std::vector<float> ys = values<float>(c.eager(f32_array(xs)));
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = c.ref(static_cast<double>(xs[i]));
      if (std::isnan(xs[i]) || std::isinf(xs[i]) || xs[i] == 0.0f) {
        // Specials exactly: NaN for NaN, the IEEE value (and sign of zero) otherwise.
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(ys[i])) << c.name << "(" << xs[i] << ")";
        } else {
          EXPECT_EQ(ys[i], static_cast<float>(want)) << c.name << "(" << xs[i] << ")";
          EXPECT_EQ(std::signbit(ys[i]), std::signbit(want)) << c.name << "(" << xs[i] << ")";
        }
        continue;
      }
      const double u = ulps(ys[i], want);
      if (u > worst) worst = u, at = i;
    }
    std::cout << "[accuracy] " << c.name << ": max " << worst << " ulp over " << xs.size()
              << " inputs (at " << xs[at] << ")\n";
    EXPECT_LE(worst, c.max_ulps) << c.name << " at x = " << xs[at] << " = " << hex(u_of(xs[at]))
                                 << " (got " << ys[at] << ", libm "
                                 << c.ref(static_cast<double>(xs[at])) << ")";
  }
}

// ---------------------------------------------------------------- the runtime

// The eager primitive of an op (the lax function), unary or binary.
Array eager_op(Op op, const std::vector<Array>& a) {
  switch (op) {
    case Op::kCbrt:
      return lax::cbrt(a[0]);
    case Op::kExp:
      return lax::exp(a[0]);
    case Op::kExp2:
      return lax::exp2(a[0]);
    case Op::kExpm1:
      return lax::expm1(a[0]);
    case Op::kLog:
      return lax::log(a[0]);
    case Op::kLog1p:
      return lax::log1p(a[0]);
    case Op::kSin:
      return lax::sin(a[0]);
    case Op::kCos:
      return lax::cos(a[0]);
    case Op::kTan:
      return lax::tan(a[0]);
    case Op::kTanh:
      return lax::tanh(a[0]);
    case Op::kAtan2:
      return lax::atan2(a[0], a[1]);
    case Op::kPow:
      return lax::pow(a[0], a[1]);
    case Op::kRem:
      return lax::rem(a[0], a[1]);
    default:
      throw std::runtime_error(std::string("no eager op for ") + scalar::op_name(op));
  }
}

bool same(float a, float b) { return std::isnan(a) ? std::isnan(b) : u_of(a) == u_of(b); }
bool same(double a, double b) {
  return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

TEST(ScalarRuntime, RuntimeFunctionsGiveTheEagerBits) {
  register_all();
  std::mt19937_64 g = make_rng(5);
  std::uniform_real_distribution<double> small(-10.0, 10.0);
  const std::vector<float> pool = binade_floats(size_t{1} << 16, 7);
  int checked = 0;
  for (int o = 0; o < scalar::kNumOps; ++o) {
    const Op op = static_cast<Op>(o);
    for (DType t : {kF32, kF64}) {
      const compiler::RuntimeFn* rt = compiler::runtime_function(op, t);
      if (rt == nullptr) continue;
      ++checked;
      const int n = 20000;
      EXPECT_EQ(rt->arity, scalar::op_arity(op)) << rt->symbol;
      EXPECT_EQ(rt->type, t) << rt->symbol;
      EXPECT_EQ(std::string(rt->symbol), std::string("tessera_rt_") + scalar::op_name(op) + "_" +
                                             (t == kF32 ? "f32" : "f64"));
      std::vector<std::vector<double>> in(static_cast<size_t>(rt->arity));
      for (int k = 0; k < rt->arity; ++k) {
        for (int i = 0; i < n; ++i) {
          double v;
          if (op == Op::kPow && k == 1) {
            v = i % 3 == 0 ? std::round(small(g)) : small(g);  // exponents, integers too
          } else if (t == kF32) {
            v = pool[static_cast<size_t>(g() % pool.size())];
            if (op == Op::kPow && i % 2) v = std::fabs(v);  // real powers of negatives are NaN
            // sin/cos f32: the fallback range of the eager kernel (and inf/NaN).
            if ((op == Op::kSin || op == Op::kCos) && std::fabs(v) <= compiler::kTrigMax)
              v = std::ldexp(1.0 + std::fabs(small(g)) / 10, 17 + i % 110) * (i % 2 ? 1 : -1);
          } else {
            v = std::ldexp(small(g), static_cast<int>(g() % 200) - 100);
          }
          in[static_cast<size_t>(k)].push_back(v);
        }
        in[static_cast<size_t>(k)].insert(in[static_cast<size_t>(k)].end(),
                                          {0.0, -0.0, INFINITY, -INFINITY, NAN});
      }
      const size_t m = in[0].size();
      size_t bad = 0, finite = 0;  // finite: not NaN
      if (t == kF32) {
        std::vector<std::vector<float>> f(in.size());
        std::vector<Array> arrays;
        for (size_t k = 0; k < in.size(); ++k) {
          for (double v : in[k]) f[k].push_back(static_cast<float>(v));
          arrays.push_back(f32_array(f[k]));
        }
        const std::vector<float> eager = values<float>(eager_op(op, arrays));
        for (size_t i = 0; i < m; ++i) {
          const float got =
              rt->arity == 1
                  ? reinterpret_cast<float (*)(float)>(rt->address)(f[0][i])
                  : reinterpret_cast<float (*)(float, float)>(rt->address)(f[0][i], f[1][i]);
          finite += !std::isnan(eager[i]);
          if (!same(got, eager[i]) && ++bad <= 3)
            ADD_FAILURE() << rt->symbol << " at " << f[0][i] << ": " << got << " vs eager "
                          << eager[i];
        }
      } else {
        std::vector<Array> arrays;
        for (const auto& v : in) arrays.push_back(f64_array(v));
        const std::vector<double> eager = values<double>(eager_op(op, arrays));
        for (size_t i = 0; i < m; ++i) {
          const double got =
              rt->arity == 1
                  ? reinterpret_cast<double (*)(double)>(rt->address)(in[0][i])
                  : reinterpret_cast<double (*)(double, double)>(rt->address)(in[0][i], in[1][i]);
          finite += !std::isnan(eager[i]);
          if (!same(got, eager[i]) && ++bad <= 3)
            ADD_FAILURE() << rt->symbol << " at " << in[0][i] << ": " << got << " vs eager "
                          << eager[i];
        }
      }
      EXPECT_EQ(bad, 0u) << rt->symbol;
      EXPECT_GT(finite, m / 2) << rt->symbol << ": the inputs are mostly outside its domain";
    }
  }
  EXPECT_EQ(checked, 18);
}

TEST(ScalarRuntime, ExternsGiveTheEagerBits) {
  register_all();
  std::mt19937_64 g = make_rng(6);
  std::uniform_real_distribution<double> pos(0.05, 12.0), any(-6.0, 6.0), unit(0.0, 1.0);
  for (int fi = 0; fi < scalar::kNumFns; ++fi) {
    const scalar::Fn f = static_cast<scalar::Fn>(fi);
    const compiler::RuntimeFn* rt = compiler::runtime_extern(f);
    ASSERT_NE(rt, nullptr) << scalar::fn_name(f);
    EXPECT_EQ(std::string(rt->symbol), std::string("tessera_rt_fn_") + scalar::fn_name(f));
    EXPECT_EQ(rt->arity, scalar::fn_arity(f));
    EXPECT_EQ(rt->type, kF64);
    const int n = 500;  // the iterative kernels (zeta, betainc, igamma) are slow
    std::vector<std::vector<double>> in(static_cast<size_t>(rt->arity));
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < rt->arity; ++k) {
        double v = pos(g);
        if (rt->arity == 1) v = any(g);
        if (f == scalar::Fn::kPolygamma && k == 0) v = static_cast<double>(g() % 4);
        if (f == scalar::Fn::kZeta && k == 0) v = 1.0 + pos(g);
        if (f == scalar::Fn::kBetainc && k == 2) v = unit(g);
        in[static_cast<size_t>(k)].push_back(v);
      }
    }
    for (auto& v : in) v.insert(v.end(), {0.0, -0.0, INFINITY, NAN, 1.0});
    std::vector<Array> a;
    for (const auto& v : in) a.push_back(f64_array(v));
    Array out;
    switch (f) {
      case scalar::Fn::kErf:
        out = lax::erf(a[0]);
        break;
      case scalar::Fn::kErfc:
        out = lax::erfc(a[0]);
        break;
      case scalar::Fn::kLgamma:
        out = lax::lgamma(a[0]);
        break;
      case scalar::Fn::kDigamma:
        out = lax::digamma(a[0]);
        break;
      case scalar::Fn::kPolygamma:
        out = lax::polygamma(a[0], a[1]);
        break;
      case scalar::Fn::kZeta:
        out = lax::zeta(a[0], a[1]);
        break;
      case scalar::Fn::kIgamma:
        out = lax::igamma(a[0], a[1]);
        break;
      case scalar::Fn::kIgammac:
        out = lax::igammac(a[0], a[1]);
        break;
      case scalar::Fn::kIgammaGradA:
        out = lax::igamma_grad_a(a[0], a[1]);
        break;
      case scalar::Fn::kBesselI0e:
        out = lax::bessel_i0e(a[0]);
        break;
      case scalar::Fn::kBesselI1e:
        out = lax::bessel_i1e(a[0]);
        break;
      case scalar::Fn::kBetainc:
        out = lax::betainc(a[0], a[1], a[2]);
        break;
      case scalar::Fn::kRandomGammaGrad:
        out = lax::random_gamma_grad(a[0], a[1]);
        break;
    }
    const std::vector<double> eager = values<double>(out);
    size_t bad = 0, finite = 0;  // finite: not NaN
    for (size_t i = 0; i < eager.size(); ++i) {
      double got = 0;
      if (rt->arity == 1) got = reinterpret_cast<double (*)(double)>(rt->address)(in[0][i]);
      if (rt->arity == 2)
        got = reinterpret_cast<double (*)(double, double)>(rt->address)(in[0][i], in[1][i]);
      if (rt->arity == 3)
        got = reinterpret_cast<double (*)(double, double, double)>(rt->address)(in[0][i], in[1][i],
                                                                                in[2][i]);
      finite += !std::isnan(eager[i]);
      if (!same(got, eager[i]) && ++bad <= 3)
        ADD_FAILURE() << rt->symbol << " at " << in[0][i] << ": " << got << " vs " << eager[i];
    }
    EXPECT_EQ(bad, 0u) << rt->symbol;
    EXPECT_GT(finite, eager.size() / 2) << rt->symbol << ": inputs mostly outside its domain";
  }
}

// After expand_math every library-like op left is a runtime call, and nothing the pass expands
// is one.
TEST(ScalarRuntime, EveryLibraryOpLeftAfterExpansionHasAFunction) {
  const Op library[] = {Op::kRsqrt, Op::kCbrt,  Op::kExp, Op::kExp2, Op::kExpm1,
                        Op::kLog,   Op::kLog1p, Op::kSin, Op::kCos,  Op::kTan,
                        Op::kTanh,  Op::kAtan2, Op::kPow, Op::kRem,  Op::kNextAfter};
  auto is_library = [&](Op op) {
    return std::find(std::begin(library), std::end(library), op) != std::end(library);
  };
  for (Op op : library) {
    for (DType t : {kF32, kF64}) {
      const Program e = expand_math(one_op(op, t));
      for (const scalar::Instr& in : e.instrs) {
        if (!is_library(in.op)) continue;
        EXPECT_NE(compiler::runtime_function(in.op, in.type), nullptr)
            << scalar::op_name(in.op) << " at " << dtype_short_name(in.type) << " is left by "
            << "expand_math (from " << scalar::op_name(op) << ") but has no runtime function";
      }
      if (compiler::runtime_function(op, t) != nullptr && compiler::expands(op, t)) {
        // Only the sin/cos fallbacks are both.
        EXPECT_TRUE(t == kF32 && (op == Op::kSin || op == Op::kCos)) << scalar::op_name(op);
      }
    }
  }
  EXPECT_EQ(compiler::runtime_function(Op::kAdd, kF32), nullptr);
  EXPECT_EQ(compiler::runtime_function(Op::kExp, DType::kFloat16), nullptr);
  EXPECT_EQ(compiler::runtime_functions().size(), 18u + scalar::kNumFns);
}

TEST(ScalarRuntime, TheSharedLibraryExportsEverySymbol) {
  for (const compiler::RuntimeFn& f : compiler::runtime_functions()) {
    void* sym = dlsym(RTLD_DEFAULT, f.symbol);
    EXPECT_EQ(sym, f.address) << f.symbol << " is not exported (dlsym)";
  }
}

}  // namespace
}  // namespace tessera
