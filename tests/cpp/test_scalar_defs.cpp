// The contracts a compiler relies on (primitive.h, scalar_ir.h): every primitive declares a kind,
// every elementwise primitive has a scalar definition, and each definition — run by the scalar
// IR's reference evaluator — computes what the eager kernel computes, for every dtype it accepts,
// on random and special inputs (+-0, +-inf, NaN, subnormals, extremes): bit for bit where the
// kernel is exact, within the stated ulp bound otherwise.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/lax.h"
#include "tessera/scalar_ir.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using scalar::ScalarValue;
using testing::kAllDTypes;

// ---------------------------------------------------------------- kinds and slots

TEST(Contracts, EveryPrimitiveHasAKind) {
  register_all();
  std::map<std::string, int> counts;
  for (const std::string& n : primitive_names()) {
    const Primitive* p = find_primitive(n);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(p->kind, PrimitiveKind::kUnset) << n << " declares no kind (primitive.h)";
    counts[primitive_kind_name(p->kind)]++;
  }
  for (const auto& [k, c] : counts) std::cout << "[kinds] " << k << ": " << c << "\n";
}

TEST(Contracts, ElementwisePrimitivesHaveScalarDefinitions) {
  int n = 0;
  for (const std::string& name : primitive_names()) {
    const Primitive* p = find_primitive(name);
    if (p->kind != PrimitiveKind::kElementwise) continue;
    ++n;
    EXPECT_TRUE(p->scalar.rule || p->scalar.exemption)
        << name << " is elementwise but has neither a scalar definition nor an exemption";
    EXPECT_EQ(p->choose_lowering("cpu").source,
              p->scalar.rule ? LoweringSource::kScalarDef : LoweringSource::kEagerThunk);
  }
  EXPECT_GT(n, 60);
}

TEST(Contracts, LoweringDefaultsInOrder) {
  register_all();
  Primitive* add = find_primitive("add");
  Primitive* dot = find_primitive("dot_general");
  Primitive* cumsum = find_primitive("cumsum");
  EXPECT_EQ(add->choose_lowering("cpu").source, LoweringSource::kScalarDef);
  EXPECT_EQ(cumsum->choose_lowering("cpu").source, LoweringSource::kComposite);
  EXPECT_EQ(dot->choose_lowering("cpu").source, LoweringSource::kEagerThunk);
  EXPECT_EQ(dot->lowering("cpu"), nullptr);
  // A registered rule wins for its target only; registering again replaces it.
  Primitive probe("contracts_probe");
  EXPECT_EQ(probe.choose_lowering("cpu").source, LoweringSource::kNone);
  int calls = 0;
  register_lowering(probe, "test_target",
                    [&](LoweringContext&, std::span<const LoweredValue>, const Params&) {
                      ++calls;
                      return std::vector<LoweredValue>{};
                    });
  register_lowering(probe, "test_target",
                    [&](LoweringContext&, std::span<const LoweredValue>, const Params&) {
                      calls += 10;
                      return std::vector<LoweredValue>{};
                    });
  EXPECT_EQ(probe.lowerings.size(), 1u);
  const LoweringChoice c = probe.choose_lowering("test_target");
  ASSERT_EQ(c.source, LoweringSource::kRegistered);
  struct Ctx final : LoweringContext {
    std::string t = "test_target";
    const std::string& target() const override { return t; }
  } ctx;
  (*c.rule)(ctx, {}, Params());
  EXPECT_EQ(calls, 10);
  EXPECT_EQ(probe.choose_lowering("cpu").source, LoweringSource::kNone);
  EXPECT_ERROR(ValueError, register_lowering(probe, "", nullptr), "register_lowering");
  EXPECT_STREQ(lowering_source_name(LoweringSource::kComposite), "composite");
}

// The composites compute what the implementations compute (cumulative ops: JAX's associative
// scan lowering), on fresh random inputs.
TEST(Contracts, CompositesMatchImplementations) {
  int n = 0;
  for (const std::string& name : primitive_names()) {
    const Primitive* p = find_primitive(name);
    if (!p->composite) continue;
    ++n;
    for (DType d : {DType::kFloat32, DType::kInt32}) {
      if (name == "cumlogsumexp" && d == DType::kInt32) continue;
      for (int64_t axis : {0, 1}) {
        for (bool reverse : {false, true}) {
          Array x = testing::random_array({5, 7}, d, -2.0, 2.0);
          const Params params{{"axis", axis}, {"reverse", reverse}};
          Array want = bind1(*p, {x}, params);
          std::vector<Array> got = p->composite(std::span<const Array>(&x, 1), params);
          ASSERT_EQ(got.size(), 1u);
          EXPECT_EQ(got[0].aval(), want.aval()) << name;
          EXPECT_EQ(
              testing::compare(testing::to_doubles(got[0]), testing::to_doubles(want), 1e-5, 1e-5),
              "")
              << name << " " << dtype_name(d) << " axis " << axis << " reverse " << reverse;
        }
      }
    }
  }
  EXPECT_GE(n, 5);
}

// ---------------------------------------------------------------- the builder's type rules

TEST(ScalarIr, BuilderRejectsIllTypedPrograms) {
  const DType in[] = {DType::kFloat32, DType::kInt32, DType::kFloat16};
  scalar::Builder b(in);
  const scalar::Value f = b.input(0), i = b.input(1), h = b.input(2);
  EXPECT_ERROR(InternalError, b.add(f, i), "operands of different types");
  EXPECT_ERROR(InternalError, b.exp(i), "outside the op's domain");
  EXPECT_ERROR(InternalError, b.add(h, h), "outside the op's domain");  // 16-bit: convert first
  EXPECT_ERROR(InternalError, b.bitcast(f, DType::kInt16), "different widths");
  EXPECT_ERROR(InternalError, b.call(scalar::Fn::kErf, {&f, 1}), "externs take float64");
  EXPECT_ERROR(InternalError, b.select(f, f, f), "select takes (bool, T, T)");
  EXPECT_ERROR(InternalError, b.lt(h, h), "comparison operands");
  EXPECT_ERROR(InternalError, b.binary(scalar::Op::kShl, f, f), "outside the op's domain");
  // A well-typed program prints one instruction a line.
  const scalar::Value s = b.add(b.convert(h, DType::kFloat32), f);
  const scalar::Program p = std::move(b).finish({&s, 1});
  EXPECT_NE(p.str().find("%4:f32 = add %3 %0"), std::string::npos) << p.str();
  EXPECT_EQ(p.output_types(), std::vector<DType>{DType::kFloat32});
}

TEST(ScalarIr, OpTablesAreComplete) {
  std::set<std::string> names;
  for (int i = 0; i < scalar::kNumOps; ++i) {
    const auto op = static_cast<scalar::Op>(i);
    EXPECT_TRUE(names.insert(scalar::op_name(op)).second) << scalar::op_name(op);
  }
  EXPECT_EQ(scalar::op_arity(scalar::Op::kFma), 3);
  EXPECT_EQ(scalar::fn_arity(scalar::Fn::kBetainc), 3);
  EXPECT_STREQ(scalar::fn_name(scalar::Fn::kBesselI0e), "bessel_i0e");
}

// ---------------------------------------------------------------- definitions vs eager kernels

// One element of a host buffer as the evaluator's value.
ScalarValue read_value(const uint8_t* p, DType t) {
  switch (t) {
    case DType::kBool:
      return ScalarValue::of_int(*p != 0, t);
    case DType::kInt8:
      return ScalarValue::of_int(*reinterpret_cast<const int8_t*>(p), t);
    case DType::kInt16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return ScalarValue::of_int(v, t);
    }
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return ScalarValue::of_int(v, t);
    }
    case DType::kInt64:
    case DType::kUInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return ScalarValue::of_int(v, t);
    }
    case DType::kUInt8:
      return ScalarValue::of_int(*p, t);
    case DType::kUInt16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return ScalarValue::of_int(v, t);
    }
    case DType::kUInt32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return ScalarValue::of_int(v, t);
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      const float f = t == DType::kFloat16 ? half_bits_to_float(v) : bfloat16_bits_to_float(v);
      return ScalarValue::of_double(f, t);
    }
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      return ScalarValue::of_double(v, t);
    }
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      return ScalarValue::of_double(v, t);
    }
    default:
      return {};
  }
}

void write_value(const ScalarValue& v, DType t, uint8_t* p) {
  const double d = v.as_double();
  switch (t) {
    case DType::kFloat16: {
      const uint16_t b = double_to_half_bits(d);
      std::memcpy(p, &b, 2);
      return;
    }
    case DType::kBFloat16: {
      const uint16_t b = double_to_bfloat16_bits(d);
      std::memcpy(p, &b, 2);
      return;
    }
    case DType::kFloat32: {
      const float f = static_cast<float>(d);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::kFloat64:
      std::memcpy(p, &d, 8);
      return;
    default: {
      const int64_t i = v.as_int();
      std::memcpy(p, &i, itemsize(t));  // little-endian: the low bytes
    }
  }
}

// The value's position among the type's floats (ordered; -0 and +0 share 0).
int64_t float_rank(double v, DType t) {
  uint64_t bits;
  int width;
  switch (t) {
    case DType::kFloat16:
      bits = double_to_half_bits(v), width = 16;
      break;
    case DType::kBFloat16:
      bits = double_to_bfloat16_bits(v), width = 16;
      break;
    case DType::kFloat32:
      bits = std::bit_cast<uint32_t>(static_cast<float>(v)), width = 32;
      break;
    default:
      bits = std::bit_cast<uint64_t>(v), width = 64;
  }
  const uint64_t sign = uint64_t{1} << (width - 1);
  const auto mag = static_cast<int64_t>(bits & ~sign & (width == 64 ? ~uint64_t{0} : sign * 2 - 1));
  return (bits & sign) ? -mag : mag;
}

// Distance in ulps of the type; 0 when both are NaN or bitwise equal, huge for NaN vs number.
double ulp_distance(const ScalarValue& a, const ScalarValue& b) {
  if (!is_floating(a.type)) return a.bits == b.bits ? 0.0 : INFINITY;
  const double x = a.as_double(), y = b.as_double();
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y) ? 0.0 : INFINITY;
  if (std::isinf(x) || std::isinf(y)) return x == y ? 0.0 : INFINITY;
  if (std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y)) return 0.0;
  const int64_t d = float_rank(x, a.type) - float_rank(y, a.type);
  return d == 0 ? 0.5 : std::fabs(static_cast<double>(d));  // 0.5: -0 vs +0
}

bool is_16bit(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// The accepted error of the definition against the eager kernel, in ulps of the output dtype;
// 0 means bit for bit (and then the sign of a zero counts). Float32 bounds are the eager
// kernels' stated ones (vec_math.h, vec_math_extra.h) plus the expansion's own error; 16-bit
// floats round a float32 value once, so a float32 difference moves them at most one ulp; float64
// kernels are libm, which the evaluator calls too, except where the definition expands.
double ulp_bound(const std::string& op, DType out) {
  static const std::map<std::string, double> f32 = {
      {"exp", 2},   {"log", 2},   {"tanh", 4},  {"logistic", 5}, {"sin", 4},
      {"cos", 4},   {"exp2", 1},  {"expm1", 4}, {"log1p", 3},    {"cosh", 5},
      {"asinh", 5}, {"acosh", 5}, {"sinh", 6},  {"atanh", 6},    {"tan", 5},
      {"rsqrt", 1}, {"asin", 4},  {"acos", 4},  {"atan", 2},     {"cbrt", 1},
  };
  static const std::map<std::string, double> f64 = {
      {"asin", 4}, {"acos", 4},  {"atan", 2},  {"sinh", 4},
      {"cosh", 3}, {"asinh", 4}, {"acosh", 4}, {"atanh", 4},
  };
  if (out == DType::kFloat32) {
    auto it = f32.find(op);
    return it == f32.end() ? 0 : it->second;
  }
  if (out == DType::kFloat64) {
    auto it = f64.find(op);
    return it == f64.end() ? 0 : it->second;
  }
  if (is_16bit(out)) return f32.count(op) ? 1 : 0;
  return 0;
}

// Special and random values of dtype t (as doubles for floats, integers otherwise).
std::vector<ScalarValue> sample_values(DType t, int n_random, std::mt19937_64& g) {
  std::vector<ScalarValue> v;
  if (t == DType::kBool) {
    v.push_back(ScalarValue::of_int(0, t));
    v.push_back(ScalarValue::of_int(1, t));
    return v;
  }
  if (is_floating(t)) {
    const FInfo fi = finfo(t);
    const double inf = INFINITY, nan = NAN;
    for (double s : {0.0,
                     -0.0,
                     inf,
                     -inf,
                     nan,
                     1.0,
                     -1.0,
                     0.5,
                     -0.5,
                     2.0,
                     -2.0,
                     3.0,
                     0.25,
                     1e-3,
                     -7.5,
                     10.0,
                     100.0,
                     -100.0,
                     1000.0,
                     fi.tiny,
                     -fi.tiny,
                     fi.smallest_subnormal,
                     -fi.smallest_subnormal,
                     fi.tiny * 0.5,
                     fi.max,
                     -fi.max,
                     fi.eps,
                     1.0 - fi.eps,
                     0.999,
                     -0.999,
                     1.0 + fi.eps,
                     20.0,
                     30.5,
                     85.0,
                     88.5,
                     89.0,
                     709.5,
                     1e10})
      v.push_back(ScalarValue::of_double(s, t));
    std::uniform_real_distribution<double> u(-4.0, 4.0), mant(1.0, 2.0), ex(-30.0, 30.0);
    for (int i = 0; i < n_random; ++i) {
      double x;
      switch (i % 4) {
        case 0:
          x = u(g);
          break;
        case 1:
          x = std::fabs(u(g)) * 0.25;  // [0, 1): the domains of erf_inv, betainc's x, ...
          break;
        case 2:
          x = std::ldexp(mant(g), static_cast<int>(ex(g))) * (g() & 1 ? 1 : -1);
          break;
        default:
          x = std::round(u(g) * 4.0) * 0.5;  // halves and integers: rounding, poles
      }
      v.push_back(ScalarValue::of_double(x, t));
    }
    return v;
  }
  const IInfo ii = iinfo(t);
  const int bits = ii.bits;
  for (int64_t s : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{2}, int64_t{7}, int64_t{bits - 1},
                    int64_t{bits}, int64_t{bits + 1}, ii.min, static_cast<int64_t>(ii.max),
                    ii.min + 1, static_cast<int64_t>(ii.max - 1)})
    v.push_back(ScalarValue::of_int(s, t));
  std::uniform_int_distribution<int64_t> small(-12, 12);
  for (int i = 0; i < n_random; ++i) {
    const auto x = i % 2 ? small(g) : static_cast<int64_t>(g());
    v.push_back(ScalarValue::of_int(x, t));
  }
  return v;
}

// One configuration: operand dtypes and params.
struct Case {
  std::vector<DType> in;
  Params params;
};

std::vector<Case> cases_for(const Primitive& p) {
  const std::string& n = p.name();
  std::vector<Case> cs;
  for (DType d : kAllDTypes) {
    if (n == "select_n") {
      for (DType w : {DType::kBool, DType::kInt32, DType::kUInt8}) {
        cs.push_back({{w, d, d}, {}});
        if (w != DType::kBool) cs.push_back({{w, d, d, d, d}, {}});
      }
      continue;
    }
    if (n == "convert_element_type") {
      for (DType to : kAllDTypes)
        cs.push_back({{d}, Params{{"new_dtype", to}, {"weak_type", false}}});
      continue;
    }
    if (n == "bitcast_convert_type") {
      for (DType to : kAllDTypes)
        if (itemsize(to) == itemsize(d)) cs.push_back({{d}, Params{{"new_dtype", to}}});
      continue;
    }
    const int arity = p.signature.min_args;
    std::vector<DType> in(static_cast<size_t>(arity), d);
    if (n == "round") {
      for (int64_t m : {0, 1}) cs.push_back({in, Params{{"rounding_method", m}}});
    } else if (n == "integer_pow") {
      for (int64_t y : {0, 1, 2, 3, 5, 8, -1, -2, -3, 13}) cs.push_back({in, Params{{"y", y}}});
    } else if (n == "reduce_precision") {
      for (auto [e, m] : {std::pair<int64_t, int64_t>{5, 10},
                          {8, 7},
                          {4, 3},
                          {5, 2},
                          {8, 23},
                          {11, 52},
                          {2, 0},
                          {3, 1}})
        cs.push_back({in, Params{{"exponent_bits", e}, {"mantissa_bits", m}}});
    } else {
      cs.push_back({in, {}});
    }
  }
  return cs;
}

std::string show(const ScalarValue& v) {
  char buf[64];
  if (is_floating(v.type)) {
    std::snprintf(buf, sizeof buf, "%.17g", v.as_double());
  } else {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v.as_int()));
  }
  return buf;
}

// Runs every case of p: eager bind on arrays of sampled inputs vs the evaluator per element.
// Returns the number of (case, element) comparisons; failures are reported (at most a few).
int64_t check_primitive(const Primitive& p, std::mt19937_64& g, int* failures) {
  int64_t compared = 0;
  for (const Case& c : cases_for(p)) {
    std::vector<Aval> avals;
    for (DType d : c.in) avals.push_back(Aval{Shape{}, d, false});
    std::vector<Aval> outs;
    try {
      outs = abstract_eval(p, avals, c.params);
    } catch (const TypeError&) {
      continue;  // a dtype the primitive does not accept
    } catch (const ValueError&) {
      continue;  // params it rejects for this dtype (reduce_precision's widths)
    }
    const scalar::Program prog = scalar_program(p, avals, c.params);
    // Operand values: the specials crossed (two operands) or zipped, plus random tuples.
    std::vector<std::vector<ScalarValue>> pools;
    for (DType d : c.in) pools.push_back(sample_values(d, 200, g));
    const size_t k = c.in.size();
    std::vector<std::vector<ScalarValue>> tuples;
    if (k == 1) {
      for (const ScalarValue& v : pools[0]) tuples.push_back({v});
    } else if (k == 2) {
      const size_t lim = 40;
      for (size_t i = 0; i < std::min(lim, pools[0].size()); ++i)
        for (size_t j = 0; j < std::min(lim, pools[1].size()); ++j)
          tuples.push_back({pools[0][i], pools[1][j]});
      for (int r = 0; r < 400; ++r)
        tuples.push_back({pools[0][g() % pools[0].size()], pools[1][g() % pools[1].size()]});
    } else {
      for (int r = 0; r < 600; ++r) {
        std::vector<ScalarValue> t;
        for (size_t i = 0; i < k; ++i) t.push_back(pools[i][g() % pools[i].size()]);
        tuples.push_back(std::move(t));
      }
    }
    const auto n = static_cast<int64_t>(tuples.size());
    std::vector<Array> args;
    for (size_t i = 0; i < k; ++i) {
      std::vector<uint8_t> host(static_cast<size_t>(n) * itemsize(c.in[i]));
      for (int64_t e = 0; e < n; ++e)
        write_value(tuples[static_cast<size_t>(e)][i], c.in[i],
                    host.data() + static_cast<size_t>(e) * itemsize(c.in[i]));
      args.push_back(array_from_host(Aval{Shape{n}, c.in[i], false}, host.data()));
    }
    const std::vector<Array> eager = tessera::bind(p, args, c.params);
    for (size_t o = 0; o < outs.size(); ++o) {
      const DType od = outs[o].dtype;
      const auto* data = static_cast<const uint8_t*>(eager[o].raw_data());
      const double bound = ulp_bound(p.name(), od);
      for (int64_t e = 0; e < n; ++e) {
        // The evaluator reads the inputs as the arrays hold them (their dtype's values).
        std::vector<ScalarValue> in;
        for (size_t i = 0; i < k; ++i) {
          in.push_back(read_value(static_cast<const uint8_t*>(args[i].raw_data()) +
                                      static_cast<size_t>(e) * itemsize(c.in[i]),
                                  c.in[i]));
        }
        const ScalarValue want = scalar::evaluate(prog, in)[o];
        const ScalarValue got = read_value(data + static_cast<size_t>(e) * itemsize(od), od);
        ++compared;
        const double err = ulp_distance(got, want);
        const bool ok = bound == 0 ? err == 0 : err <= bound;
        if (!ok && ++*failures <= 12) {
          std::string ins;
          for (const ScalarValue& v : in) ins += show(v) + " ";
          ADD_FAILURE() << p.name() << " " << c.params.str() << " on " << dtype_name(c.in[0])
                        << " inputs " << ins << ": eager " << show(got) << ", definition "
                        << show(want) << " (" << err << " ulp, bound " << bound << ")\n"
                        << (*failures <= 2 ? prog.str() : "");
        }
      }
    }
  }
  return compared;
}

TEST(ScalarDefs, MatchEagerKernelsOnEveryDtype) {
  std::mt19937_64 g(testing::test_seed());
  int failures = 0;
  int64_t total = 0;
  int covered = 0;
  for (const std::string& name : primitive_names()) {
    const Primitive* p = find_primitive(name);
    if (p->kind != PrimitiveKind::kElementwise || !p->scalar.rule) continue;
    const int64_t c = check_primitive(*p, g, &failures);
    EXPECT_GT(c, 0) << name << ": no dtype was checked";
    total += c;
    covered += c > 0;
  }
  std::cout << "[scalar defs] " << covered << " primitives, " << total << " comparisons, "
            << failures << " failures\n";
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace tessera
