// The NumPy layer (tessera::numpy, jax.numpy's semantics) against NumPy
// (tests/oracle/numpy_oracle.py): creation functions, ufuncs with NumPy broadcasting across
// ranks and JAX's type promotion (weak C++ scalars included; the oracle computes the
// expected dtype and weak flag from its own copy of JAX's promotion lattice), where,
// reductions with axis/keepdims/dtype, shape functions, matmul and dot. 64-bit dtypes run
// under x64; some 32-bit cases also run under x64, where the defaults change.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

using namespace tessera;
using namespace tessera::testing;
namespace tnp = tessera::numpy;

namespace {

std::string sn(DType d) { return std::string(dtype_short_name(d)); }
int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }
template <class T>
const T& pick(const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng())];
}
std::string jdtype(std::optional<DType> d) {
  return d ? json_str(dtype_name(*d)) : std::string("null");
}
std::string names(std::initializer_list<Array> xs) {
  std::string s;
  for (auto& x : xs) {
    if (!s.empty()) s += ",";
    s += describe(x);
  }
  return s;
}

// An operand of a ufunc case: an array, or a C++ scalar (weak, as JAX's Python scalars).
struct Operand {
  Array array;                 // what the oracle sees (a weak rank-0 array for scalars)
  std::optional<double> fval;  // a C++ double literal
  std::optional<int> ival;     // a C++ int literal
  std::optional<bool> bval;    // a C++ bool literal (strong bool)
  tnp::ArrayLike like() const {
    if (fval) return tnp::ArrayLike(*fval);
    if (ival) return tnp::ArrayLike(*ival);
    if (bval) return tnp::ArrayLike(*bval);
    return tnp::ArrayLike(array);
  }
};
Operand array_operand(const Shape& s, DType d, const ValueOpts& vo = {}) {
  return Operand{oracle_array(s, d, vo), {}, {}, {}};
}
Operand scalar_operand(int kind) {
  static const double fs[] = {2.5, -0.5, 3.0};
  static const int is[] = {3, 7, 2};
  if (kind == 0) {
    double v = fs[uniform_int(0, 2)];
    return Operand{tnp::weak_scalar(v), v, {}, {}};
  }
  if (kind == 1) {
    int v = is[uniform_int(0, 2)];
    return Operand{tnp::weak_scalar_int(v), {}, v, {}};
  }
  bool v = uniform_int(0, 1);
  return Operand{tnp::scalar(v ? 1.0 : 0.0, DType::kBool), {}, {}, v};
}

using BinFn = Array (*)(const tnp::ArrayLike&, const tnp::ArrayLike&);
struct NpBinary {
  const char* name;  // the oracle's op
  BinFn fn;
};

const std::vector<NpBinary>& arithmetic_ops() {
  static const std::vector<NpBinary> v = {
      {"np.add", tnp::add},         {"np.subtract", tnp::subtract},  {"np.multiply", tnp::multiply},
      {"np.divide", tnp::divide},   {"np.divide", tnp::true_divide}, {"np.power", tnp::power},
      {"np.maximum", tnp::maximum}, {"np.minimum", tnp::minimum}};
  return v;
}
const std::vector<NpBinary>& comparison_ops() {
  static const std::vector<NpBinary> v = {
      {"np.equal", tnp::equal},     {"np.not_equal", tnp::not_equal},
      {"np.less", tnp::less},       {"np.less_equal", tnp::less_equal},
      {"np.greater", tnp::greater}, {"np.greater_equal", tnp::greater_equal}};
  return v;
}

void add_binary(OracleBatch& b, const NpBinary& op, const Operand& x, const Operand& y,
                bool x64 = false) {
  b.add(std::string(op.name) + " " + names({x.array, y.array}) +
            (x.fval || x.ival || x.bval ? " (x C++ scalar)" : "") +
            (y.fval || y.ival || y.bval ? " (y C++ scalar)" : ""),
        op.name, "{}", {x.array, y.array}, [&] {
          X64Scope s(x64 || x64_enabled());
          return op.fn(x.like(), y.like());
        });
}

// Values that make sense for power: small bases, small non-negative integer exponents.
ValueOpts power_opts(bool exponent) {
  ValueOpts vo;
  vo.int_full_range = false;
  vo.int_lo = exponent ? 0 : -4;
  vo.int_hi = exponent ? 4 : 4;
  vo.extremes = false;
  if (exponent) {
    vo.lo = -3;
    vo.hi = 3;
  }
  return vo;
}

}  // namespace

TEST(NumpyOracle, Creation) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.creation");
  const std::vector<Shape> shapes = {{}, {4}, {0}, {2, 0, 3}, {2, 3}};
  for (bool x64 : {false, true}) {
    X64Scope s(x64);
    for (DType d : all_dtypes()) {
      if (is_64bit(d) && !x64) continue;
      for (const Shape& sh : shapes) {
        const std::string tag = sn(d) + shape_str(sh) + (x64 ? " x64" : "");
        b.add("zeros " + tag, "np.zeros",
              json_obj({{"shape", json_ints(sh)}, {"dtype", jdtype(d)}}), {},
              [&] { return tnp::zeros(sh, d); });
        b.add("ones " + tag, "np.ones", json_obj({{"shape", json_ints(sh)}, {"dtype", jdtype(d)}}),
              {}, [&] { return tnp::ones(sh, d); });
        b.add("empty " + tag, "np.zeros",
              json_obj({{"shape", json_ints(sh)}, {"dtype", jdtype(d)}}), {},
              [&] { return tnp::empty(sh, d); });
        const double fill = is_bool(d) ? 1.0 : is_unsigned_integer(d) ? 7.0 : -3.0;
        b.add("full " + tag, "np.full",
              json_obj({{"shape", json_ints(sh)}, {"value", json_num(fill)}, {"dtype", jdtype(d)}}),
              {}, [&] { return tnp::full(sh, fill, d); });
        Array x = oracle_array(sh, d);
        b.add("zeros_like " + tag, "np.zeros_like", "{}", {x}, [&] { return tnp::zeros_like(x); });
        b.add("ones_like " + tag, "np.ones_like", "{}", {x}, [&] { return tnp::ones_like(x); });
        b.add("empty_like " + tag, "np.zeros_like", "{}", {x}, [&] { return tnp::empty_like(x); });
        b.add("full_like " + tag, "np.full_like", json_obj({{"value", json_num(fill)}}), {x},
              [&] { return tnp::full_like(x, fill); });
        b.add("ones_like f32 " + tag, "np.ones_like",
              json_obj({{"dtype", jdtype(DType::kFloat32)}}), {x},
              [&] { return tnp::ones_like(x, DType::kFloat32); });
        b.add("scalar " + tag, "np.scalar",
              json_obj(
                  {{"kind", json_str("strong")}, {"value", json_num(fill)}, {"dtype", jdtype(d)}}),
              {}, [&] { return tnp::scalar(fill, d); });
        b.add("eye " + tag, "np.eye",
              json_obj({{"n", "3"}, {"m", "4"}, {"k", "1"}, {"dtype", jdtype(d)}}), {},
              [&] { return tnp::eye(3, 4, 1, d); });
        DType to = pick(all_dtypes());
        if (is_64bit(to) && !x64) to = DType::kFloat32;
        b.add("astype " + tag + "->" + sn(to), "np.astype", json_obj({{"dtype", jdtype(to)}}), {x},
              [&] { return tnp::astype(x, to); });
        b.add("asarray " + tag + "->" + sn(to), "np.astype", json_obj({{"dtype", jdtype(to)}}), {x},
              [&] { return tnp::asarray(x, to); });
      }
    }
    const std::string t = x64 ? " x64" : "";
    // Defaults: a double fill is a weak float; weak scalars.
    b.add("full default" + t, "np.full",
          json_obj({{"shape", json_ints({2, 2})}, {"value", json_num(1.5)}, {"dtype", "null"}}), {},
          [&] {
            return tnp::full({2, 2}, 1.5);
          });
    b.add("weak_scalar" + t, "np.scalar",
          json_obj({{"kind", json_str("weak_float")}, {"value", json_num(-2.25)}}), {},
          [&] { return tnp::weak_scalar(-2.25); });
    b.add("weak_scalar_int" + t, "np.scalar",
          json_obj({{"kind", json_str("weak_int")}, {"value", json_num(-7)}}), {},
          [&] { return tnp::weak_scalar_int(-7); });
    // array() overloads.
    b.add("array{double}" + t, "np.array",
          json_obj({{"from", json_str("double")},
                    {"values", json_nums({1.5, -2, 0.25})},
                    {"shape", "[3]"},
                    {"dtype", "null"}}),
          {}, [&] {
            return tnp::array({1.5, -2, 0.25});
          });
    b.add("array{{double}} i16" + t, "np.array",
          json_obj({{"from", json_str("double")},
                    {"values", json_nums({1, -2, 3, 4, 5, -6})},
                    {"shape", "[2,3]"},
                    {"dtype", jdtype(DType::kInt16)}}),
          {}, [&] {
            return tnp::array({{1, -2, 3}, {4, 5, -6}}, DType::kInt16);
          });
    b.add("array(vector<double>) bf16" + t, "np.array",
          json_obj({{"from", json_str("double")},
                    {"values", json_nums({0.1, 1e10, -3, 65504})},
                    {"shape", "[2,2]"},
                    {"dtype", jdtype(DType::kBFloat16)}}),
          {}, [&] {
            return tnp::array(std::vector<double>{0.1, 1e10, -3, 65504}, {2, 2}, DType::kBFloat16);
          });
    b.add("array(vector<float>)" + t, "np.array",
          json_obj({{"from", json_str("float")},
                    {"values", json_nums({0.5, -1.25, 3})},
                    {"shape", "[3,1]"},
                    {"dtype", "null"}}),
          {}, [&] {
            return tnp::array(std::vector<float>{0.5f, -1.25f, 3.f}, {3, 1});
          });
    b.add("array(vector<int32>)" + t, "np.array",
          json_obj({{"from", json_str("int32")},
                    {"values", json_nums({1, -2, 3, 4})},
                    {"shape", "[4]"},
                    {"dtype", "null"}}),
          {}, [&] {
            return tnp::array(std::vector<int32_t>{1, -2, 3, 4}, {4});
          });
    b.add("array(vector<int64>)" + t, "np.array",
          json_obj({{"from", json_str("int64")},
                    {"values", json_nums({5, -6})},
                    {"shape", "[2]"},
                    {"dtype", "null"}}),
          {}, [&] {
            return tnp::array(std::vector<int64_t>{5, -6}, {2});
          });
    b.add("array(vector<bool>)" + t, "np.array",
          json_obj({{"from", json_str("bool")},
                    {"values", json_nums({1, 0, 1})},
                    {"shape", "[3]"},
                    {"dtype", "null"}}),
          {}, [&] {
            return tnp::array(std::vector<bool>{true, false, true}, {3});
          });
    // arange: float and integer forms, negative steps, empty ranges, explicit dtypes.
    struct Ar {
      double start, stop, step;
      bool integral;
      std::optional<DType> dtype;
    };
    const std::vector<Ar> aranges = {{0, 5, 1, false, {}},
                                     {0.5, 3.2, 0.7, false, {}},
                                     {3, -4, -2, true, {}},
                                     {0, 10, 1, true, DType::kInt8},
                                     {2, 2, 1, false, {}},
                                     {1, -1, -0.25, false, {}},
                                     {0, 7, 1, true, {}},
                                     {-3, 9, 4, true, DType::kFloat16},
                                     {0, 1, 0.1, false, DType::kBFloat16},
                                     {0, 100, 3, true, DType::kUInt8}};
    for (const Ar& a : aranges) {
      std::string params = json_obj({{"start", json_num(a.start)},
                                     {"stop", json_num(a.stop)},
                                     {"step", json_num(a.step)},
                                     {"integral", json_bool(a.integral)},
                                     {"dtype", jdtype(a.dtype)}});
      b.add("arange " + params + t, "np.arange", params, {}, [&] {
        if (a.integral) {
          if (a.start == 0 && a.step == 1 && !a.dtype)
            return tnp::arange(static_cast<int64_t>(a.stop));
          return tnp::arange(static_cast<int64_t>(a.start), static_cast<int64_t>(a.stop),
                             static_cast<int64_t>(a.step), a.dtype);
        }
        if (a.start == 0 && a.step == 1) return tnp::arange(a.stop, a.dtype);
        return tnp::arange(a.start, a.stop, a.step, a.dtype);
      });
    }
    struct Ls {
      double start, stop;
      int64_t num;
      bool endpoint;
      std::optional<DType> dtype;
    };
    const std::vector<Ls> linspaces = {{0, 1, 5, true, {}},
                                       {-2, 3, 50, true, {}},
                                       {1, -1, 4, false, {}},
                                       {0, 1, 0, true, {}},
                                       {3, 7, 1, true, {}},
                                       {0, 10, 11, true, DType::kFloat16},
                                       {0, 1, 7, false, DType::kBFloat16}};
    for (const Ls& l : linspaces) {
      std::string params = json_obj({{"start", json_num(l.start)},
                                     {"stop", json_num(l.stop)},
                                     {"num", json_int(l.num)},
                                     {"endpoint", json_bool(l.endpoint)},
                                     {"dtype", jdtype(l.dtype)}});
      b.add("linspace " + params + t, "np.linspace", params, {},
            [&] { return tnp::linspace(l.start, l.stop, l.num, l.endpoint, l.dtype); });
    }
    for (auto [n, m, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {4, 4, 0}, {3, 5, 2}, {5, 3, -1}, {3, 3, 7}, {0, 2, 0}, {2, 0, 0}}) {
      b.add("eye " + std::to_string(n) + "," + std::to_string(m) + "," + std::to_string(k) + t,
            "np.eye",
            json_obj({{"n", json_int(n)},
                      {"m", json_int(m)},
                      {"k", json_int(k)},
                      {"dtype", jdtype(DType::kFloat32)}}),
            {}, [&] { return tnp::eye(n, m, k); });
    }
    b.add("identity" + t, "np.eye", json_obj({{"n", "5"}, {"dtype", jdtype(DType::kInt32)}}), {},
          [&] { return tnp::identity(5, DType::kInt32); });
  }
  b.run();
}

TEST(NumpyOracle, BinaryUfuncsWithPromotion) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.binary", 2.0);
  auto add_pair = [&](const NpBinary& op, DType dx, DType dy, const Shape& sx, const Shape& sy) {
    const bool pow = std::string(op.name) == "np.power";
    X64Scope s(is_64bit(dx) || is_64bit(dy));
    add_binary(b, op, array_operand(sx, dx, pow ? power_opts(false) : ValueOpts{}),
               array_operand(sy, dy, pow ? power_opts(true) : ValueOpts{}));
  };
  // Every dtype pair once for add (the whole promotion table), same-dtype pairs for all ops.
  for (DType dx : all_dtypes())
    for (DType dy : all_dtypes()) add_pair(arithmetic_ops()[0], dx, dy, {3, 1}, {4});
  for (const auto& op : arithmetic_ops())
    for (DType d : all_dtypes()) {
      add_pair(op, d, d, {2, 3}, {2, 3});
      add_pair(op, d, d, {}, {0, 2});
      // With C++ scalars on either side (weak int, weak float, strong bool).
      for (int kind = 0; kind < 3; ++kind) {
        X64Scope s(is_64bit(d));
        auto vo = std::string(op.name) == "np.power" ? power_opts(false) : ValueOpts{};
        add_binary(b, op, array_operand({2, 2}, d, vo), scalar_operand(kind));
        add_binary(b, op, scalar_operand(kind), array_operand({3}, d, vo));
      }
    }
  // Incompatible shapes.
  add_pair(arithmetic_ops()[0], DType::kFloat32, DType::kFloat32, {3}, {4});
  add_pair(arithmetic_ops()[0], DType::kInt32, DType::kFloat32, {2, 3}, {3, 2});
  // Two C++ scalars; scalars under x64 (weak float is float64 there).
  add_binary(b, arithmetic_ops()[0], scalar_operand(0), scalar_operand(1));
  {
    X64Scope s(true);
    add_binary(b, arithmetic_ops()[2], array_operand({3}, DType::kInt32), scalar_operand(0), true);
    add_binary(b, arithmetic_ops()[3], array_operand({3}, DType::kInt16),
               array_operand({3}, DType::kUInt8), true);
  }
  while (b.time_left()) {
    const auto& op = pick(arithmetic_ops());
    Shape sx = random_shape(0, 4);
    Shape sy = numpy_partner_shape(sx);
    if (uniform_int(0, 1)) std::swap(sx, sy);
    add_pair(op, pick(all_dtypes()), pick(all_dtypes()), sx, sy);
  }
  b.run();
}

TEST(NumpyOracle, UnaryUfuncs) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.unary");
  using UnFn = Array (*)(const tnp::ArrayLike&);
  const std::vector<std::pair<const char*, UnFn>> ops = {
      {"np.negative", tnp::negative}, {"np.positive", tnp::positive}, {"np.square", tnp::square},
      {"np.exp", tnp::exp},           {"np.log", tnp::log},           {"np.sin", tnp::sin},
      {"np.cos", tnp::cos},           {"np.tanh", tnp::tanh},         {"np.sqrt", tnp::sqrt}};
  auto add_unary = [&](const char* name, UnFn fn, const Operand& x) {
    b.add(
        std::string(name) + " " + describe(x.array) + (x.fval || x.ival || x.bval ? " (C++)" : ""),
        name, "{}", {x.array}, [&] { return fn(x.like()); });
  };
  for (auto& [name, fn] : ops) {
    for (DType d : all_dtypes()) {
      X64Scope s(is_64bit(d));
      for (const Shape& sh : std::vector<Shape>{{}, {0, 3}, {2, 3, 2}})
        add_unary(name, fn, array_operand(sh, d));
    }
    add_unary(name, fn, scalar_operand(0));
    add_unary(name, fn, scalar_operand(1));
    X64Scope s(true);
    add_unary(name, fn, array_operand({4}, DType::kInt32));  // ints -> float64 under x64
  }
  while (b.time_left()) {
    auto& [name, fn] = ops[static_cast<size_t>(uniform_int(0, static_cast<int>(ops.size()) - 1))];
    DType d = pick(all_dtypes());
    X64Scope s(is_64bit(d));
    add_unary(name, fn, array_operand(random_shape(0, 4), d));
  }
  b.run();
}

TEST(NumpyOracle, ComparisonsAndWhere) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.compare_where");
  ValueOpts small;  // many equal operands
  small.int_full_range = false;
  small.int_lo = -2;
  small.int_hi = 2;
  small.lo = -2;
  small.hi = 2;
  small.special_rate = 0.4;
  for (const auto& op : comparison_ops()) {
    for (DType dx : all_dtypes())
      for (DType dy : {dx, pick(all_dtypes())}) {
        X64Scope s(is_64bit(dx) || is_64bit(dy));
        add_binary(b, op, array_operand({2, 3}, dx, small), array_operand({3}, dy, small));
        add_binary(b, op, array_operand({4}, dx, small), scalar_operand(uniform_int(0, 2)));
      }
    add_binary(b, op, array_operand({2}, DType::kFloat32), array_operand({3}, DType::kFloat32));
  }
  auto add_where = [&](DType dc, DType dx, DType dy, const Shape& sc, const Shape& sx,
                       const Shape& sy, bool scalar_y) {
    X64Scope s(is_64bit(dc) || is_64bit(dx) || is_64bit(dy));
    Array c = oracle_array(sc, dc, small);
    Operand x = array_operand(sx, dx);
    Operand y = scalar_y ? scalar_operand(uniform_int(0, 1)) : array_operand(sy, dy);
    b.add("where " + names({c, x.array, y.array}), "np.where", "{}", {c, x.array, y.array},
          [&] { return tnp::where(c, x.like(), y.like()); });
  };
  for (DType d : all_dtypes()) {
    add_where(DType::kBool, d, d, {2, 3}, {2, 3}, {2, 3}, false);
    add_where(d, DType::kFloat32, DType::kInt8, {3}, {2, 1}, {}, false);
    add_where(DType::kBool, d, pick(all_dtypes()), {4, 1, 2}, {3, 1}, {1, 2}, false);
    add_where(DType::kBool, d, d, {0, 2}, {2}, {1}, true);
  }
  add_where(DType::kBool, DType::kFloat32, DType::kFloat32, {3}, {4}, {3}, false);  // error
  while (b.time_left()) {
    Shape s = random_shape(0, 4);
    if (uniform_int(0, 1)) {
      DType dx = pick(all_dtypes()), dy = pick(all_dtypes());
      X64Scope x64(is_64bit(dx) || is_64bit(dy));
      add_binary(b, pick(comparison_ops()), array_operand(s, dx, small),
                 array_operand(numpy_partner_shape(s), dy, small));
    } else {
      add_where(pick(all_dtypes()), pick(all_dtypes()), pick(all_dtypes()), numpy_partner_shape(s),
                s, numpy_partner_shape(s), uniform_int(0, 4) == 0);
    }
  }
  b.run();
}

TEST(NumpyOracle, Reductions) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.reductions");
  ValueOpts vo;
  vo.extremes = false;
  auto add_red = [&](const char* which, DType d, const Shape& sh, tnp::Axes axis, bool keepdims,
                     std::optional<DType> dtype) {
    X64Scope s(is_64bit(d) || (dtype && is_64bit(*dtype)));
    Array x = oracle_array(sh, d, vo);
    std::string params = json_obj({{"axis", axis ? json_ints(*axis) : "null"},
                                   {"keepdims", json_bool(keepdims)},
                                   {"dtype", jdtype(dtype)}});
    const std::string w = which;
    b.add(w + " " + describe(x) + " " + params, "np." + w, params, {x}, [&] {
      if (w == "sum") return tnp::sum(x, axis, keepdims, dtype);
      if (w == "max") return tnp::max(x, axis, keepdims);
      return tnp::mean(x, axis, keepdims, dtype);
    });
  };
  auto add_int_axis = [&](const char* which, DType d, const Shape& sh, int64_t axis, bool keep) {
    X64Scope s(is_64bit(d));
    Array x = oracle_array(sh, d, vo);
    std::string params = json_obj({{"axis", json_int(axis)}, {"keepdims", json_bool(keep)}});
    const std::string w = which;
    b.add(w + "(int axis) " + describe(x) + " " + params, "np." + w, params, {x}, [&] {
      if (w == "sum") return tnp::sum(x, axis, keep);
      if (w == "max") return tnp::max(x, axis, keep);
      return tnp::mean(x, axis, keep);
    });
  };
  for (const char* w : {"sum", "max", "mean"}) {
    for (DType d : all_dtypes()) {
      add_red(w, d, {3, 4}, std::nullopt, false, std::nullopt);
      add_red(w, d, {}, std::nullopt, true, std::nullopt);
      add_red(w, d, {2, 3, 4}, std::vector<int64_t>{0, -1}, true, std::nullopt);
      add_red(w, d, {2, 3, 4}, std::vector<int64_t>{}, false, std::nullopt);
      add_red(w, d, {2, 0, 3}, std::vector<int64_t>{2}, false, std::nullopt);
      add_red(w, d, {2, 0, 3}, std::vector<int64_t>{1}, true, std::nullopt);  // max: error
      add_red(w, d, {5}, std::vector<int64_t>{1}, false, std::nullopt);       // error: axis
      add_int_axis(w, d, {3, 5}, -1, false);
      add_int_axis(w, d, {3, 5}, 0, true);
    }
  }
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kBool, DType::kFloat16, DType::kInt32}) {
    add_red("sum", d, {4, 5}, std::vector<int64_t>{1}, false, DType::kFloat32);
    if (!is_floating(d)) add_red("sum", d, {4, 5}, std::nullopt, false, DType::kInt16);
    add_red("mean", d, {4, 5}, std::vector<int64_t>{0}, false, DType::kFloat16);
    add_red("sum", d, {4, 5}, std::vector<int64_t>{1}, true, DType::kFloat64);  // x64
  }
  {
    X64Scope s(true);  // default sum dtypes become 64-bit
    for (DType d : {DType::kInt8, DType::kBool, DType::kUInt16, DType::kInt32})
      add_red("sum", d, {3, 3}, std::nullopt, false, std::nullopt);
    add_red("mean", DType::kInt32, {3, 3}, std::nullopt, false, std::nullopt);
  }
  while (b.time_left()) {
    Shape sh = random_shape(0, 4, 6);
    std::vector<int64_t> axes;
    for (size_t k = 0; k < sh.size(); ++k)
      if (uniform_int(0, 1))
        axes.push_back(uniform_int(0, 1) ? int64_t(k) : int64_t(k) - int64_t(sh.size()));
    tnp::Axes axis = uniform_int(0, 3) ? tnp::Axes(axes) : std::nullopt;
    add_red(pick(std::vector<const char*>{"sum", "max", "mean"}), pick(all_dtypes()), sh, axis,
            uniform_int(0, 1), std::nullopt);
  }
  b.run();
}

TEST(NumpyOracle, ShapeFunctions) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.shape");
  auto add_reshape = [&](DType d, const Shape& s, const Shape& to) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d);
    b.add("reshape " + describe(x) + " -> " + shape_str(to), "np.reshape",
          json_obj({{"shape", json_ints(to)}}), {x}, [&] { return tnp::reshape(x, to); });
  };
  auto add_transpose = [&](DType d, const Shape& s, std::optional<std::vector<int64_t>> axes) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d);
    std::string name = "transpose " + describe(x);
    if (axes) name += json_ints(*axes);
    b.add(name, "np.transpose", json_obj({{"axes", axes ? json_ints(*axes) : "null"}}), {x},
          [&] { return tnp::transpose(x, axes); });
  };
  auto add_bto = [&](DType d, const Shape& s, const Shape& to) {
    X64Scope x64(is_64bit(d));
    Array x = oracle_array(s, d);
    b.add("broadcast_to " + describe(x) + " -> " + shape_str(to), "np.broadcast_to",
          json_obj({{"shape", json_ints(to)}}), {x}, [&] { return tnp::broadcast_to(x, to); });
  };
  for (DType d : all_dtypes()) {
    add_reshape(d, {2, 3, 4}, {-1, 4});
    add_reshape(d, {2, 3, 4}, {3, -1, 2});
    add_reshape(d, {6}, {-1});
    add_reshape(d, {}, {1, -1});
    add_reshape(d, {0, 3}, {3, -1});
    add_reshape(d, {2, 3}, {-1, -1});  // error
    add_reshape(d, {2, 3}, {4, -1});   // error
    add_transpose(d, {2, 3, 4}, std::nullopt);
    add_transpose(d, {2, 3, 4}, std::vector<int64_t>{1, -1, 0});
    add_transpose(d, {}, std::nullopt);
    add_transpose(d, {2, 3}, std::vector<int64_t>{0});  // error
    add_bto(d, {3, 1}, {2, 3, 4});
    add_bto(d, {}, {0, 2});
    add_bto(d, {3}, {4});  // error
  }
  // result_type and broadcast_shapes, through a zeros array of the computed dtype/shape.
  for (DType dx : all_dtypes()) {
    for (DType dy : all_dtypes()) {
      for (bool x64 : {false, true}) {
        if (!x64 && (is_64bit(dx) || is_64bit(dy))) continue;
        X64Scope s(x64);
        Array x = oracle_array({}, dx), y = oracle_array({}, dy);
        b.add("result_type " + sn(dx) + "," + sn(dy) + (x64 ? " x64" : ""), "np.result_type", "{}",
              {x, y}, [&] {
                return tnp::zeros({}, tnp::result_type({x, y}));
              });
      }
    }
    Operand f = scalar_operand(0), i = scalar_operand(1);
    Array x = oracle_array({}, dx);
    X64Scope s(is_64bit(dx));
    b.add("result_type " + sn(dx) + ",weak f", "np.result_type", "{}", {x, f.array}, [&] {
      return tnp::zeros({}, tnp::result_type({x, f.like()}));
    });
    b.add("result_type " + sn(dx) + ",weak i", "np.result_type", "{}", {x, i.array}, [&] {
      return tnp::zeros({}, tnp::result_type({x, i.like()}));
    });
  }
  for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{
           {{3, 1}, {4}}, {{}, {2, 0}}, {{2, 1, 5}, {3, 1}}, {{3}, {4}}, {{0}, {1}}}) {
    b.add("broadcast_shapes " + shape_str(sa) + shape_str(sb), "np.broadcast_shapes",
          json_obj({{"a", json_ints(sa)}, {"b", json_ints(sb)}}), {},
          [&] { return tnp::zeros(tnp::broadcast_shapes(sa, sb)); });
  }
  while (b.time_left()) {
    DType d = pick(all_dtypes());
    Shape s = random_shape(0, 4);
    switch (uniform_int(0, 2)) {
      case 0: {
        Shape to = s;
        if (!to.empty())
          to[static_cast<size_t>(uniform_int(0, static_cast<int>(to.size()) - 1))] = -1;
        std::reverse(to.begin(), to.end());
        add_reshape(d, s, to);
        break;
      }
      case 1: {
        std::vector<int64_t> p(s.size());
        std::iota(p.begin(), p.end(), 0);
        std::shuffle(p.begin(), p.end(), rng());
        add_transpose(d, s, p);
        break;
      }
      default: {
        Shape small = numpy_partner_shape(s);
        add_bto(d, small, s);
      }
    }
  }
  b.run();
}

TEST(NumpyOracle, MatmulAndDot) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.matmul_dot");
  ValueOpts vo;
  vo.extremes = false;
  vo.special_rate = 0.03;
  vo.int_full_range = false;
  auto add_mm = [&](const char* which, DType da, DType db, const Shape& sa, const Shape& sb) {
    X64Scope x64(is_64bit(da) || is_64bit(db));
    Array a = oracle_array(sa, da, vo), c = oracle_array(sb, db, vo);
    const std::string w = which;
    b.add(w + " " + names({a, c}), "np." + w, "{}", {a, c},
          [&] { return w == "matmul" ? tnp::matmul(a, c) : tnp::dot(a, c); });
  };
  const std::vector<std::pair<Shape, Shape>> mm_shapes = {
      {{3, 4}, {4, 5}}, {{4}, {4, 5}},         {{3, 4}, {4}},
      {{4}, {4}},       {{2, 3, 4}, {4, 5}},   {{2, 1, 3, 4}, {5, 4, 2}},
      {{0, 3}, {3, 2}}, {{3, 0}, {0, 2}},      {{2, 3}, {4, 5}},
      {{}, {3}},        {{2, 3, 4}, {3, 4, 5}}};
  const std::vector<std::pair<Shape, Shape>> dot_shapes = {
      {{3, 4}, {4, 5}},       {{4}, {4}},       {{3, 4}, {4}},    {{}, {2, 3}},    {{2, 3}, {}},
      {{2, 3, 4}, {5, 4, 2}}, {{4}, {2, 4, 3}}, {{2, 3}, {2, 3}}, {{0, 3}, {3, 0}}};
  for (DType d : all_dtypes()) {
    for (auto& [sa, sb] : mm_shapes) add_mm("matmul", d, d, sa, sb);
    for (auto& [sa, sb] : dot_shapes) add_mm("dot", d, d, sa, sb);
  }
  for (int k = 0; k < 12; ++k) {  // mixed dtypes: promoted first
    add_mm("matmul", pick(all_dtypes()), pick(all_dtypes()), {2, 3}, {3, 2});
    add_mm("dot", pick(all_dtypes()), pick(all_dtypes()), {3}, {3, 2});
  }
  add_mm("matmul", DType::kFloat32, DType::kFloat32, {16, 64}, {64, 24});
  add_mm("dot", DType::kFloat32, DType::kFloat32, {3, 5, 64}, {2, 64, 7});
  while (b.time_left()) {
    DType d = pick(all_dtypes());
    auto dim = [&] { return static_cast<int64_t>(uniform_int(0, 9) == 0 ? 0 : uniform_int(1, 5)); };
    int64_t m = dim(), k = dim(), n = dim();
    Shape batch = random_shape(0, 2, 3);
    Shape sa = numpy_partner_shape(batch), sb = batch;
    sa.push_back(m);
    sa.push_back(k);
    sb.push_back(k);
    sb.push_back(n);
    if (uniform_int(0, 4) == 0) sa = {k};
    if (uniform_int(0, 4) == 0) sb = {k};
    add_mm(uniform_int(0, 2) ? "matmul" : "dot", d, d, sa, sb);
  }
  b.run();
}

// The operators (C++ scalars on either side are weak).
TEST(NumpyOracle, Operators) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("numpy.operators");
  using OpFn = Array (*)(const tnp::ArrayLike&, const tnp::ArrayLike&);
  const std::vector<std::pair<const char*, OpFn>> ops = {
      {"np.add", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x + y; }},
      {"np.subtract", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x - y; }},
      {"np.multiply", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x * y; }},
      {"np.divide", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x / y; }},
      {"np.equal", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x == y; }},
      {"np.not_equal", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x != y; }},
      {"np.less", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x < y; }},
      {"np.less_equal", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x <= y; }},
      {"np.greater", [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x > y; }},
      {"np.greater_equal",
       [](const tnp::ArrayLike& x, const tnp::ArrayLike& y) { return x >= y; }}};
  for (auto& [name, fn] : ops) {
    for (DType d : all_dtypes()) {
      X64Scope s(is_64bit(d));
      NpBinary op{name, fn};
      add_binary(b, op, array_operand({2, 3}, d), array_operand({3}, d));
      add_binary(b, op, array_operand({2, 2}, d), scalar_operand(uniform_int(0, 1)));
      add_binary(b, op, scalar_operand(uniform_int(0, 1)), array_operand({3}, d));
    }
  }
  // Unary minus: on arrays (jnp.negative).
  for (DType d : all_dtypes()) {
    X64Scope s(is_64bit(d));
    Array x = oracle_array({2, 2}, d);
    b.add("operator- " + describe(x), "np.negative", "{}", {x}, [&] { return -x; });
  }
  b.run();
}
