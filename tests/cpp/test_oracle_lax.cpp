// The lax primitives against NumPy (tests/oracle/numpy_oracle.py), one batch and one python
// process per op family: every op x every dtype (64-bit dtypes under x64), lax broadcasting
// (rank 0, size-1 dims), empty arrays and zero-size axes, rank 0, NaN/inf/-0 and extreme
// values; integer division edge cases (x/0, INT_MIN/-1) follow XLA; dtypes a primitive does
// not accept must raise TypeError as JAX's do. Fixed coverage first, then random cases until
// the family's time box runs out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

std::string sn(DType d) { return std::string(dtype_short_name(d)); }

std::string case_name(const std::string& op, DType d, std::initializer_list<Shape> shapes) {
  std::string s = op + " " + sn(d);
  for (auto& sh : shapes) {
    s += ' ';
    s += shape_str(sh);
  }
  return s;
}

template <class T>
const T& pick(const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng())];
}
int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

// Copies some elements of `from` into `a` (same shape and dtype) so that comparisons see
// equal operands.
Array share_some(const Array& a, const Array& from) {
  if (a.shape() != from.shape() || a.size() == 0) return a;
  Array out = empty_array(a.aval(), "share_some");
  const size_t item = itemsize(a.dtype());
  std::memcpy(out.buffer()->data(), a.raw_data(), a.nbytes());
  auto* o = static_cast<char*>(out.buffer()->data());
  const auto* f = static_cast<const char*>(from.raw_data());
  for (int64_t i = 0; i < a.size(); ++i)
    if (uniform_int(0, 2) == 0) std::memcpy(o + i * item, f + i * item, item);
  return out;
}

using BinaryFn = Array (*)(const Array&, const Array&);
struct BinaryOp {
  const char* name;
  BinaryFn fn;
};

// Shape pairs every binary op sees for every dtype: rank 0, lax broadcasting, empty arrays,
// plus pairs that lax rejects (the oracle expects an error).
const std::vector<std::pair<Shape, Shape>>& fixed_pairs() {
  static const std::vector<std::pair<Shape, Shape>> v = {
      {{}, {}},         {{7}, {7}},
      {{}, {2, 3}},     {{2, 3}, {}},
      {{3, 1}, {3, 4}}, {{1, 4}, {3, 1}},
      {{0}, {0}},       {{2, 0, 3}, {2, 1, 3}},
      {{}, {0, 2}},     {{2, 3, 2, 2}, {2, 3, 2, 2}},
      {{3}, {4}},       {{3}, {1, 3}}};
  return v;
}

void add_binary(OracleBatch& b, const BinaryOp& op, DType d, const Shape& sx, const Shape& sy,
                bool misaligned = false) {
  X64Scope x64(is_64bit(d));
  Array x = oracle_array(sx, d), y = oracle_array(sy, d);
  if (std::strlen(op.name) == 2) y = share_some(y, x);  // comparisons: some equal operands
  if (misaligned) x = misaligned_copy(x);
  b.add(case_name(op.name, d, {sx, sy}) + (misaligned ? " misaligned" : ""),
        std::string("lax.") + op.name, "{}", {x, y}, [&] { return op.fn(x, y); });
}

// Large operands take the vectorized, multi-threaded paths (odd sizes leave remainders).
const std::vector<DType>& large_dtypes() {
  static const std::vector<DType> v = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                       DType::kFloat64, DType::kInt32,   DType::kUInt8,
                                       DType::kInt64,   DType::kBool};
  return v;
}

void run_binary_family(const char* family, const std::vector<BinaryOp>& ops) {
  OracleBatch b(family);
  for (const auto& op : ops)
    for (DType d : all_dtypes())
      for (const auto& [sx, sy] : fixed_pairs()) add_binary(b, op, d, sx, sy);
  const std::vector<std::pair<Shape, Shape>> large = {
      {{100003}, {100003}}, {{513, 257}, {513, 1}}, {{1, 257}, {513, 257}}, {{}, {70001}}};
  for (const auto& op : ops)
    for (int k = 0; k < 3; ++k) {
      const auto& [sx, sy] = pick(large);
      add_binary(b, op, pick(large_dtypes()), sx, sy, k == 0);
    }
  // Mixed dtypes are an error in lax (no promotion).
  for (const auto& op : ops) {
    Array x = oracle_array({3}, DType::kFloat32), y = oracle_array({3}, DType::kInt32);
    b.add(std::string(op.name) + " f32,i32", std::string("lax.") + op.name, "{}", {x, y},
          [&] { return op.fn(x, y); });
  }
  while (b.time_left()) {
    const auto& op = ops[static_cast<size_t>(uniform_int(0, static_cast<int>(ops.size()) - 1))];
    DType d = pick(all_dtypes());
    Shape sx = random_shape(0, 4);
    Shape sy = lax_partner_shape(sx);
    if (uniform_int(0, 1)) std::swap(sx, sy);
    add_binary(b, op, d, sx, sy);
  }
  b.run();
}

}  // namespace

TEST(LaxOracle, BinaryArithmetic) {
  TESSERA_REQUIRE_ORACLE();
  run_binary_family("lax.binary", {{"add", lax::add},
                                   {"sub", lax::sub},
                                   {"mul", lax::mul},
                                   {"div", lax::div},
                                   {"max", lax::max},
                                   {"min", lax::min},
                                   {"pow", lax::pow}});
}

TEST(LaxOracle, Comparisons) {
  TESSERA_REQUIRE_ORACLE();
  run_binary_family("lax.compare", {{"eq", lax::eq},
                                    {"ne", lax::ne},
                                    {"lt", lax::lt},
                                    {"le", lax::le},
                                    {"gt", lax::gt},
                                    {"ge", lax::ge}});
}

// Division by zero, INT_MIN / -1, truncation of negative quotients; IEEE special cases of
// division and pow. The expected values are computed by the oracle (XLA's definitions).
TEST(LaxOracle, DivisionAndPowEdgeCases) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("lax.div_pow_edges");
  for (DType d : int_dtypes()) {
    X64Scope x64(is_64bit(d));
    const IInfo info = iinfo(d);
    const double mn = static_cast<double>(info.min), mx = static_cast<double>(info.max);
    const bool sgn = is_signed_integer(d);
    std::vector<double> xs = {mn, mn, 7, 0, mx, mx, mn, 1, 0};
    std::vector<double> ys = {sgn ? -1.0 : 1.0, 0, 0, 0, 0, sgn ? -1.0 : mx, 1, mx, mx};
    if (sgn) {
      for (double v : {-7.0, 7.0, -7.0, -1.0, 5.0}) xs.push_back(v);
      for (double v : {2.0, -2.0, -2.0, 0.0, -3.0}) ys.push_back(v);
    }
    Array x = host_array(xs, {static_cast<int64_t>(xs.size())}, d);
    Array y = host_array(ys, {static_cast<int64_t>(ys.size())}, d);
    b.add("div edges " + sn(d), "lax.div", "{}", {x, y}, [&] { return lax::div(x, y); });
    // x / 0 with a rank-0 zero divisor.
    Array z = host_array({0}, {}, d);
    b.add("div by scalar 0 " + sn(d), "lax.div", "{}", {x, z}, [&] { return lax::div(x, z); });
  }
  const double inf = INFINITY, nan = NAN;
  for (DType d : float_dtypes()) {
    X64Scope x64(is_64bit(d));
    std::vector<double> xs = {1, -1, 0, -0.0, inf, -inf, nan, 1, 0, -8, 2, -2, 0, 1, nan, -inf};
    std::vector<double> ys = {0, 0, 0, 0, inf, 2, 1, nan, -1, 1.0 / 3, -1, 3, -0.0, inf, 0, 3};
    Array x = host_array(xs, {16}, d), y = host_array(ys, {16}, d);
    b.add("div edges " + sn(d), "lax.div", "{}", {x, y}, [&] { return lax::div(x, y); });
    b.add("pow edges " + sn(d), "lax.pow", "{}", {x, y}, [&] { return lax::pow(x, y); });
    b.add("max edges " + sn(d), "lax.max", "{}", {x, y}, [&] { return lax::max(x, y); });
    b.add("min edges " + sn(d), "lax.min", "{}", {x, y}, [&] { return lax::min(x, y); });
  }
  b.run();
}

TEST(LaxOracle, Unary) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("lax.unary");
  using UnaryFn = Array (*)(const Array&);
  const std::vector<std::pair<const char*, UnaryFn>> ops = {
      {"neg", lax::neg}, {"exp", lax::exp},   {"log", lax::log},           {"sin", lax::sin},
      {"cos", lax::cos}, {"tanh", lax::tanh}, {"logistic", lax::logistic}, {"sqrt", lax::sqrt}};
  const std::vector<Shape> shapes = {{}, {9}, {0}, {3, 0, 2}, {2, 3, 4}, {1, 1, 5, 2}};
  const std::vector<int64_t> powers = {0, 1, 2, 3, -1, -2, 5};
  auto add_unary = [&](const char* name, UnaryFn fn, DType d, const Shape& s, ValueOpts vo) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d, vo);
    b.add(case_name(name, d, {s}), std::string("lax.") + name, "{}", {x}, [&] { return fn(x); });
  };
  auto add_ipow = [&](int64_t y, DType d, const Shape& s) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d);
    b.add(case_name("integer_pow y=" + std::to_string(y), d, {s}), "lax.integer_pow",
          json_obj({{"y", json_int(y)}}), {x}, [&] { return lax::integer_pow(x, y); });
  };
  ValueOpts wide;  // arguments far outside [-2, 2): range reduction, overflow, underflow
  wide.lo = -100;
  wide.hi = 100;
  for (auto& [name, fn] : ops) {
    for (DType d : all_dtypes()) {
      for (const Shape& s : shapes) add_unary(name, fn, d, s, {});
      if (is_floating(d)) add_unary(name, fn, d, {64}, wide);
    }
  }
  for (int64_t y : powers)
    for (DType d : all_dtypes()) add_ipow(y, d, {3, 4});
  for (auto& [name, fn] : ops) {  // large inputs: vectorized loops, threads, 16-byte alignment
    for (int k = 0; k < 2; ++k) {
      DType d = pick(float_dtypes());
      X64Scope x64(is_64bit(d));
      Array x = oracle_array({100003}, d, wide);
      if (k == 0) x = misaligned_copy(x);
      b.add(case_name(name, d, {x.shape()}) + (k == 0 ? " misaligned" : ""),
            std::string("lax.") + name, "{}", {x}, [&] { return fn(x); });
    }
  }
  add_ipow(3, DType::kFloat32, {100003});
  add_ipow(2, DType::kInt32, {100003});
  while (b.time_left()) {
    DType d = pick(all_dtypes());
    Shape s = random_shape(0, 4);
    if (uniform_int(0, 8) == 0) {
      add_ipow(pick(powers), d, s);
    } else {
      auto& [name, fn] = ops[static_cast<size_t>(uniform_int(0, static_cast<int>(ops.size()) - 1))];
      add_unary(name, fn, d, s, uniform_int(0, 3) ? ValueOpts{} : wide);
    }
  }
  b.run();
}

TEST(LaxOracle, SelectN) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("lax.select_n");
  auto add_select = [&](DType d, const Shape& s, bool scalar_which, int ncases, bool bool_which) {
    X64Scope x64(is_64bit(d));
    std::vector<Array> cases;
    for (int k = 0; k < ncases; ++k) cases.push_back(oracle_array(s, d));
    Shape ws = scalar_which ? Shape{} : s;
    Array which;
    if (bool_which) {
      which = oracle_array(ws, DType::kBool);
    } else {
      ValueOpts vo;
      vo.int_full_range = false;
      vo.int_lo = 0;
      vo.int_hi = ncases - 1;
      which = oracle_array(ws, DType::kInt32, vo);
    }
    std::vector<Array> ins = {which};
    ins.insert(ins.end(), cases.begin(), cases.end());
    b.add(case_name("select_n " + std::to_string(ncases) + (bool_which ? " bool" : " i32"), d,
                    {ws, s}),
          "lax.select_n", "{}", ins, [&] { return lax::select_n(which, cases); });
  };
  for (DType d : all_dtypes()) {
    for (const Shape& s : std::vector<Shape>{{}, {5}, {0, 3}, {2, 3, 2}}) {
      add_select(d, s, false, 2, true);
      add_select(d, s, true, 2, true);
      add_select(d, s, false, 3, false);
      add_select(d, s, true, 4, false);
      add_select(d, s, false, 1, false);
    }
  }
  // Errors: case dtypes differ; predicate shape differs.
  {
    Array w = oracle_array({3}, DType::kBool);
    Array f = oracle_array({3}, DType::kFloat32), i = oracle_array({3}, DType::kInt32);
    b.add("select_n mixed case dtypes", "lax.select_n", "{}", {w, f, i}, [&] {
      return lax::select_n(w, {f, i});
    });
    Array w2 = oracle_array({2}, DType::kBool);
    b.add("select_n predicate shape", "lax.select_n", "{}", {w2, f, f}, [&] {
      return lax::select_n(w2, {f, f});
    });
    Array wf = oracle_array({3}, DType::kFloat32);
    b.add("select_n float predicate", "lax.select_n", "{}", {wf, f, f}, [&] {
      return lax::select_n(wf, {f, f});
    });
  }
  add_select(DType::kFloat32, {100003}, false, 2, true);
  add_select(DType::kBFloat16, {300, 301}, false, 3, false);
  add_select(DType::kInt64, {70001}, false, 2, true);
  add_select(DType::kUInt8, {70001}, true, 2, true);
  while (b.time_left()) {
    add_select(pick(all_dtypes()), random_shape(0, 4), uniform_int(0, 3) == 0, uniform_int(1, 4),
               false);
  }
  b.run();
}

// Every (source, destination) dtype pair, in-range values and, separately, NaN/inf and
// out-of-range values (whose integer results saturate, NaN -> 0, as the oracle states).
TEST(LaxOracle, ConvertElementType) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("lax.convert_element_type");
  auto add_convert = [&](DType src, DType dst, const Shape& s, const ValueOpts& vo,
                         const std::string& tag) {
    X64Scope x64(is_64bit(src) || is_64bit(dst));
    Array x = oracle_array(s, src, vo);
    b.add(case_name("convert" + tag + " ->" + sn(dst), src, {s}), "lax.convert_element_type",
          json_obj({{"new_dtype", json_str(dtype_name(dst))}}), {x},
          [&] { return lax::convert_element_type(x, dst); });
  };
  for (DType src : all_dtypes()) {
    for (DType dst : all_dtypes()) {
      ValueOpts in_range;
      if (is_integer(dst) && is_floating(src)) {
        // Values the destination holds (truncation toward zero is then well defined).
        in_range.nan_inf = false;
        in_range.extremes = false;
        in_range.lo = is_unsigned_integer(dst) ? 0.0 : -100.0;
        in_range.hi = 100.0;
      }
      add_convert(src, dst, {}, in_range, "");
      add_convert(src, dst, {4, 5}, in_range, "");
      add_convert(src, dst, {0, 2}, in_range, "");
      if (is_integer(dst) && is_floating(src)) {
        ValueOpts edge;
        edge.special_rate = 0.6;
        edge.lo = -1e12;
        edge.hi = 1e12;
        add_convert(src, dst, {32}, edge, " edge");
      }
    }
  }
  // Rounding edges: float16/bfloat16 overflow thresholds, ties, subnormals; integers whose
  // conversion through float64 or float32 would round twice.
  const double inf = INFINITY;
  const std::vector<double> fedges = {65504,
                                      65519.99,
                                      65520,
                                      -65520,
                                      6.103515625e-05,
                                      5.9604644775390625e-08,
                                      2.98023223876953125e-08,
                                      3e-08,
                                      1.0009765625,
                                      1.00048828125,
                                      1.00048828125000001,
                                      3.3895313892515355e+38,
                                      3.3961775292304574e+38,
                                      3.39617752923e+38,
                                      1e-40,
                                      9.18354961579912e-41,
                                      3.4028235677973366e+38,
                                      3.4028235677973366e+38 * 1.0000001,
                                      1e-45,
                                      7e-46,
                                      1.401298464324817e-45,
                                      -0.0,
                                      inf,
                                      -inf,
                                      NAN,
                                      0.1,
                                      1.0 / 3};
  for (DType src : {DType::kFloat64, DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (DType dst : float_dtypes()) {
      X64Scope x64(true);
      Array x = host_array(fedges, {static_cast<int64_t>(fedges.size())}, src);
      b.add("convert edges " + sn(src) + "->" + sn(dst), "lax.convert_element_type",
            json_obj({{"new_dtype", json_str(dtype_name(dst))}}), {x},
            [&] { return lax::convert_element_type(x, dst); });
    }
  }
  const std::vector<int64_t> iedges = {(int64_t{1} << 24) + 1,
                                       257,
                                       259,
                                       385,
                                       -257,
                                       (int64_t{1} << 62) + (int64_t{1} << 54) + 1,
                                       INT64_MIN,
                                       INT64_MAX,
                                       INT32_MAX,
                                       (int64_t{1} << 25) + 3,
                                       (int64_t{1} << 53) + 1,
                                       -((int64_t{1} << 40) + (int64_t{1} << 32) + 1)};
  for (DType src : {DType::kInt64, DType::kUInt64, DType::kInt32, DType::kUInt32}) {
    X64Scope x64(true);
    Array x = empty_array(Aval{{static_cast<int64_t>(iedges.size())}, src, false}, "edges");
    auto* p = static_cast<char*>(x.buffer()->data());
    for (size_t i = 0; i < iedges.size(); ++i)  // wraps into 32-bit types: still edge-ish
      std::memcpy(p + i * itemsize(src), &iedges[i], itemsize(src));
    for (DType dst : float_dtypes())
      b.add("convert int edges " + sn(src) + "->" + sn(dst), "lax.convert_element_type",
            json_obj({{"new_dtype", json_str(dtype_name(dst))}}), {x},
            [&] { return lax::convert_element_type(x, dst); });
  }
  for (int k = 0; k < 10; ++k) {  // large: the vectorized, threaded conversion loops
    DType src = pick(all_dtypes()), dst = pick(all_dtypes());
    ValueOpts vo;
    if (is_integer(dst) && is_floating(src)) vo.special_rate = 0.3;  // NaN, inf, out of range
    add_convert(src, dst, {100003}, vo, " large");
  }
  while (b.time_left()) {
    DType src = pick(all_dtypes()), dst = pick(all_dtypes());
    ValueOpts vo;
    if (is_integer(dst) && is_floating(src)) {
      vo.nan_inf = vo.extremes = false;
      vo.lo = is_unsigned_integer(dst) ? 0.0 : -100.0;
      vo.hi = 100.0;
    }
    add_convert(src, dst, random_shape(0, 4), vo, "");
  }
  b.run();
}

namespace {
// A random shape with the same number of elements as s (dims regrouped, 1s inserted).
Shape regroup(const Shape& s) {
  std::vector<int64_t> factors;
  for (int64_t d : s) factors.push_back(d);
  Shape out;
  int64_t cur = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    cur *= factors[i];
    if (uniform_int(0, 1) || i + 1 == factors.size()) {
      out.push_back(cur);
      cur = 1;
    }
    if (uniform_int(0, 5) == 0) out.push_back(1);
  }
  if (out.empty() && uniform_int(0, 1)) out.push_back(1);
  return out;
}
}  // namespace

TEST(LaxOracle, Structural) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("lax.structural");
  auto add_bid = [&](DType d, const Shape& target) {
    X64Scope x64(is_64bit(d));
    std::vector<int64_t> dims;
    Shape xs;
    for (size_t k = 0; k < target.size(); ++k) {
      if (uniform_int(0, 2) == 0) continue;
      dims.push_back(static_cast<int64_t>(k));
      xs.push_back(uniform_int(0, 3) == 0 ? 1 : target[k]);
    }
    Array x = oracle_array(xs, d);
    b.add(case_name("broadcast_in_dim", d, {xs, target}), "lax.broadcast_in_dim",
          json_obj({{"shape", json_ints(target)}, {"broadcast_dimensions", json_ints(dims)}}), {x},
          [&] { return lax::broadcast_in_dim(x, target, dims); });
  };
  auto add_broadcast = [&](DType d, const Shape& s, const Shape& sizes) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d);
    b.add(case_name("broadcast", d, {s, sizes}), "lax.broadcast",
          json_obj({{"sizes", json_ints(sizes)}}), {x}, [&] { return lax::broadcast(x, sizes); });
  };
  auto add_reshape = [&](DType d, const Shape& s, const Shape& to) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d);
    b.add(case_name("reshape", d, {s, to}), "lax.reshape", json_obj({{"new_sizes", json_ints(to)}}),
          {x}, [&] { return lax::reshape(x, to); });
  };
  auto add_transpose = [&](DType d, const Shape& s, std::vector<int64_t> perm) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d);
    b.add(case_name("transpose", d, {s, perm}), "lax.transpose",
          json_obj({{"permutation", json_ints(perm)}}), {x},
          [&] { return lax::transpose(x, perm); });
  };
  auto add_iota = [&](DType d, const Shape& s, int64_t dim) {
    X64Scope x64(is_64bit(d));
    b.add(case_name("iota dim=" + std::to_string(dim), d, {s}), "lax.iota",
          json_obj({{"dtype", json_str(dtype_name(d))},
                    {"shape", json_ints(s)},
                    {"dimension", json_int(dim)}}),
          {},
          [&] { return s.size() == 1 ? lax::iota(d, s[0]) : lax::broadcasted_iota(d, s, dim); });
  };
  auto random_perm = [&](size_t n) {
    std::vector<int64_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng());
    return p;
  };
  for (DType d : all_dtypes()) {
    add_bid(d, {2, 3, 4});
    add_bid(d, {0, 3});
    add_bid(d, {});
    add_broadcast(d, {2, 3}, {4});
    add_broadcast(d, {}, {2, 0});
    add_reshape(d, {2, 3, 4}, {6, 4});
    add_reshape(d, {2, 3}, {});
    add_reshape(d, {1, 1}, {});
    add_reshape(d, {0, 3}, {3, 0, 5});
    add_reshape(d, {2, 3}, {5});  // error: sizes differ
    add_transpose(d, {2, 3, 4}, {2, 0, 1});
    add_transpose(d, {2, 0, 4}, {1, 2, 0});
    add_transpose(d, {}, {});
    add_transpose(d, {2, 3}, {0, 0});  // error: not a permutation
    add_iota(d, {7}, 0);
    add_iota(d, {0}, 0);
    add_iota(d, {3, 4, 2}, 1);
  }
  // Large: blocked transposes, broadcasts of big operands.
  add_transpose(DType::kFloat32, {64, 33, 17}, {2, 0, 1});
  add_transpose(DType::kBFloat16, {130, 257}, {1, 0});
  add_transpose(DType::kInt64, {9, 70, 3, 40}, {3, 1, 0, 2});
  add_transpose(DType::kUInt8, {300, 301}, {1, 0});
  add_bid(DType::kFloat32, {257, 31, 129});
  add_bid(DType::kInt16, {3, 1000, 67});
  {  // broadcast_in_dim errors: operand dim neither 1 nor the target's; dims out of range.
    Array x = oracle_array({3}, DType::kFloat32);
    b.add("broadcast_in_dim bad size", "lax.broadcast_in_dim",
          json_obj({{"shape", json_ints({2, 4})}, {"broadcast_dimensions", json_ints({1})}}), {x},
          [&] {
            return lax::broadcast_in_dim(x, {2, 4}, {1});
          });
    b.add("broadcast_in_dim bad dim", "lax.broadcast_in_dim",
          json_obj({{"shape", json_ints({2, 3})}, {"broadcast_dimensions", json_ints({2})}}), {x},
          [&] {
            return lax::broadcast_in_dim(x, {2, 3}, {2});
          });
  }
  while (b.time_left()) {
    DType d = pick(all_dtypes());
    Shape s = random_shape(0, 4);
    switch (uniform_int(0, 4)) {
      case 0:
        add_bid(d, s);
        break;
      case 1:
        add_broadcast(d, s, random_shape(0, 2));
        break;
      case 2:
        add_reshape(d, s, regroup(s));
        break;
      case 3:
        add_transpose(d, s, random_perm(s.size()));
        break;
      default:
        if (s.empty()) s = {uniform_int(0, 6)};
        if (is_bool(d)) d = DType::kInt32;
        add_iota(d, s, uniform_int(0, static_cast<int>(s.size()) - 1));
    }
  }
  b.run();
}

TEST(LaxOracle, Reductions) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("lax.reductions");
  ValueOpts vo;
  vo.extremes = false;   // +-max would overflow in an order-dependent way
  ValueOpts clean = vo;  // large reductions: no NaN/inf, which would hide value errors
  clean.special_rate = 0.0;
  auto add_reduce = [&](bool is_sum, DType d, const Shape& s, std::vector<int64_t> axes,
                        const ValueOpts& opts) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d, opts);
    const char* name = is_sum ? "reduce_sum" : "reduce_max";
    b.add(case_name(std::string(name) + " axes=" + json_ints(axes), d, {s}),
          std::string("lax.") + name, json_obj({{"axes", json_ints(axes)}}), {x},
          [&] { return is_sum ? lax::reduce_sum(x, axes) : lax::reduce_max(x, axes); });
  };
  auto random_axes = [&](size_t rank) {
    std::vector<int64_t> axes;
    for (size_t k = 0; k < rank; ++k)
      if (uniform_int(0, 1)) axes.push_back(static_cast<int64_t>(k));
    std::shuffle(axes.begin(), axes.end(), rng());
    return axes;
  };
  for (bool is_sum : {true, false}) {
    for (DType d : all_dtypes()) {
      add_reduce(is_sum, d, {}, {}, vo);
      add_reduce(is_sum, d, {7}, {0}, vo);
      add_reduce(is_sum, d, {0}, {0}, vo);  // empty: the identity
      add_reduce(is_sum, d, {3, 0, 2}, {1}, vo);
      add_reduce(is_sum, d, {3, 0, 2}, {0, 2}, vo);
      add_reduce(is_sum, d, {3, 4, 5}, {0, 2}, vo);
      add_reduce(is_sum, d, {3, 4, 5}, {2, 1, 0}, vo);
      add_reduce(is_sum, d, {2, 3}, {}, vo);
      add_reduce(is_sum, d, {100}, {0}, vo);
      add_reduce(is_sum, d, {2, 3}, {2}, vo);     // error: axis out of range
      add_reduce(is_sum, d, {2, 3}, {0, 0}, vo);  // error: repeated axis
    }
  }
  // Large: long rows (chunked), column reductions, middle axes; threads.
  const std::vector<std::pair<Shape, std::vector<int64_t>>> large = {
      {{3, 70000}, {1}}, {{70000, 3}, {0}},    {{40, 3000, 5}, {1}}, {{5, 300, 7}, {0, 2}},
      {{200000}, {0}},   {{64, 1031}, {0, 1}}, {{7, 9, 1100}, {0}}};
  for (const auto& [s, axes] : large)
    for (DType d : {DType::kFloat32, pick(large_dtypes())}) {
      add_reduce(true, d, s, axes, clean);
      add_reduce(false, d, s, axes, clean);
    }
  while (b.time_left()) {
    Shape s = random_shape(0, 4, 6);
    add_reduce(uniform_int(0, 1), pick(all_dtypes()), s, random_axes(s.size()), vo);
  }
  b.run();
}

TEST(LaxOracle, DotGeneral) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("lax.dot_general");
  ValueOpts vo;
  vo.extremes = false;
  vo.special_rate = 0.03;
  vo.int_full_range = false;  // keeps int products meaningful (wrapping is still exercised)
  ValueOpts clean = vo;       // large contractions: no NaN/inf, which would hide value errors
  clean.special_rate = 0.0;
  auto add_dot = [&](DType d, const Shape& ls, const Shape& rs, const lax::DotDimensionNumbers& dn,
                     std::optional<DType> pref) {
    X64Scope x64(is_64bit(d) || (pref && is_64bit(*pref)));
    const bool large = shape_size(ls) * shape_size(rs) > 100000;
    Array l = oracle_array(ls, d, large ? clean : vo), r = oracle_array(rs, d, large ? clean : vo);
    std::string params = json_obj({{"lc", json_ints(dn.lhs_contracting)},
                                   {"rc", json_ints(dn.rhs_contracting)},
                                   {"lb", json_ints(dn.lhs_batch)},
                                   {"rb", json_ints(dn.rhs_batch)},
                                   {"preferred", pref ? json_str(dtype_name(*pref)) : "null"}});
    b.add(case_name("dot_general " + params, d, {ls, rs}), "lax.dot_general", params, {l, r},
          [&] { return lax::dot_general(l, r, dn, pref); });
  };
  // Random dimension numbers: nb batch, nc contracting, free dims; dims placed at random.
  auto random_dot = [&](DType d, std::optional<DType> pref) {
    int nb = uniform_int(0, 2), nc = uniform_int(0, 2), lf = uniform_int(0, 2),
        rf = uniform_int(0, 2);
    auto size = [&] {
      return static_cast<int64_t>(uniform_int(0, 9) == 0 ? 0 : uniform_int(1, 5));
    };
    std::vector<int64_t> bs(nb), cs(nc);
    for (auto& v : bs) v = size();
    for (auto& v : cs) v = size();
    auto layout = [&](int nfree, std::vector<int64_t>& bpos, std::vector<int64_t>& cpos) {
      const int rank = nb + nc + nfree;
      std::vector<int64_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng());
      Shape s(rank);
      for (int k = 0; k < nb; ++k) {
        bpos.push_back(perm[k]);
        s[perm[k]] = bs[k];
      }
      for (int k = 0; k < nc; ++k) {
        cpos.push_back(perm[nb + k]);
        s[perm[nb + k]] = cs[k];
      }
      for (int k = nb + nc; k < rank; ++k) s[perm[k]] = size();
      return s;
    };
    lax::DotDimensionNumbers dn;
    Shape ls = layout(lf, dn.lhs_batch, dn.lhs_contracting);
    Shape rs = layout(rf, dn.rhs_batch, dn.rhs_contracting);
    add_dot(d, ls, rs, dn, pref);
  };
  const lax::DotDimensionNumbers mm{{1}, {0}, {}, {}};
  for (DType d : all_dtypes()) {
    add_dot(d, {3, 4}, {4, 5}, mm, std::nullopt);
    add_dot(d, {3, 0}, {0, 5}, mm, std::nullopt);  // empty contraction: zeros
    add_dot(d, {0, 4}, {4, 5}, mm, std::nullopt);
    add_dot(d, {6}, {6}, {{0}, {0}, {}, {}}, std::nullopt);
    add_dot(d, {}, {}, {{}, {}, {}, {}}, std::nullopt);
    add_dot(d, {2, 3, 4}, {2, 4, 5}, {{2}, {1}, {0}, {0}}, std::nullopt);
    add_dot(d, {3, 4}, {5, 4}, {{1}, {1}, {}, {}}, std::nullopt);
    add_dot(d, {3, 4}, {5, 3}, {{1}, {1}, {}, {}}, std::nullopt);  // error: sizes differ
    for (int k = 0; k < 3; ++k) random_dot(d, std::nullopt);
  }
  add_dot(DType::kInt8, {3, 40}, {40, 5}, mm, DType::kInt32);
  add_dot(DType::kFloat16, {3, 40}, {40, 5}, mm, DType::kFloat32);
  add_dot(DType::kBFloat16, {3, 40}, {40, 5}, mm, DType::kFloat32);
  add_dot(DType::kFloat32, {8, 70}, {70, 9}, mm, std::nullopt);
  // Large: BLAS paths, blocked loops, batches.
  add_dot(DType::kFloat32, {64, 300}, {300, 48}, mm, std::nullopt);
  add_dot(DType::kFloat64, {33, 129}, {129, 65}, mm, std::nullopt);
  add_dot(DType::kFloat32, {4, 33, 70}, {4, 70, 20}, {{2}, {1}, {0}, {0}}, std::nullopt);
  add_dot(DType::kFloat32, {70, 4, 33}, {20, 70, 4}, {{0}, {1}, {1}, {2}}, std::nullopt);
  add_dot(DType::kBFloat16, {48, 200}, {200, 40}, mm, std::nullopt);
  add_dot(DType::kFloat16, {48, 200}, {200, 40}, mm, DType::kFloat32);
  add_dot(DType::kInt32, {40, 100}, {100, 30}, mm, std::nullopt);
  add_dot(DType::kInt8, {40, 100}, {100, 30}, mm, DType::kInt32);
  add_dot(DType::kFloat32, {1000}, {1000}, {{0}, {0}, {}, {}}, std::nullopt);
  add_dot(DType::kFloat32, {300, 1000}, {1000}, {{1}, {0}, {}, {}}, std::nullopt);
  {  // mixed dtypes are an error
    Array l = oracle_array({2, 3}, DType::kFloat32), r = oracle_array({3, 2}, DType::kInt32);
    b.add("dot_general f32 x i32", "lax.dot_general",
          json_obj({{"lc", "[1]"}, {"rc", "[0]"}, {"lb", "[]"}, {"rb", "[]"}}), {l, r},
          [&] { return lax::dot_general(l, r, mm); });
  }
  // lax.dot (vector/matrix forms) is dot_general with fixed dimension numbers.
  for (DType d : {DType::kFloat32, DType::kInt32, DType::kBFloat16}) {
    for (auto [ls, rs] : std::vector<std::pair<Shape, Shape>>{
             {{5}, {5}}, {{3, 5}, {5}}, {{5}, {5, 2}}, {{3, 5}, {5, 2}}}) {
      Array l = oracle_array(ls, d, vo), r = oracle_array(rs, d, vo);
      std::string params = json_obj({{"lc", json_ints({static_cast<int64_t>(ls.size()) - 1})},
                                     {"rc", "[0]"},
                                     {"lb", "[]"},
                                     {"rb", "[]"}});
      b.add(case_name("dot", d, {ls, rs}), "lax.dot_general", params, {l, r},
            [&] { return lax::dot(l, r); });
    }
  }
  while (b.time_left()) {
    DType d = pick(all_dtypes());
    std::optional<DType> pref;
    if (d == DType::kInt8 && uniform_int(0, 1)) pref = DType::kInt32;
    if ((d == DType::kFloat16 || d == DType::kBFloat16) && uniform_int(0, 1))
      pref = DType::kFloat32;
    random_dot(d, pref);
  }
  b.run();
}
