// tessera::numpy reductions, statistics and comparisons (include/tessera/numpy_reductions.h)
// against NumPy through the oracle harness (tests/oracle/oracle_npred.py restates jnp's rules):
// random shapes (rank 0, empty axes), every dtype (64-bit ones and some 32-bit ones under x64),
// axis none/int/list with negatives, keepdims, dtype, where masks broadcast to the input,
// initial, ddof, NaN/inf. Then errors with their messages, gradients of var/std/norm against
// central differences, and the staged jaxpr of one call.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "tessera/numpy_reductions.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

using namespace tessera;
using namespace tessera::testing;
namespace tnp = tessera::numpy;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }
bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(rng()) < p; }
template <class T>
const T& pick(const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng())];
}
std::string jdtype(std::optional<DType> d) {
  return d ? json_str(dtype_name(*d)) : std::string("null");
}

using RedFn = std::function<Array(const Array&, const tnp::ReduceOptions&)>;
enum : unsigned { kD = 1, kI = 2, kW = 4, kDd = 8, kNoIdentity = 16, kFloatDType = 32 };
struct Red {
  const char* name;  // the oracle op is "npred.<name>"
  RedFn fn;
  unsigned opts;
};

const std::vector<Red>& reductions() {
  static const std::vector<Red> v = {
      {"sum", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::sum(x, o); },
       kD | kI | kW},
      {"prod", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::prod(x, o); },
       kD | kI | kW},
      {"max", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::max(x, o); },
       kI | kW | kNoIdentity},
      {"min", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::min(x, o); },
       kI | kW | kNoIdentity},
      {"ptp", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::ptp(x, o); },
       kNoIdentity},
      {"all", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::all(x, o); }, kW},
      {"any", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::any(x, o); }, kW},
      {"count_nonzero",
       [](const Array& x, const tnp::ReduceOptions& o) { return tnp::count_nonzero(x, o); }, 0},
      {"mean", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::mean(x, o); },
       kD | kW | kFloatDType},
      {"var", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::var(x, o); },
       kD | kW | kDd | kFloatDType},
      {"std", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::std(x, o); },
       kD | kW | kDd | kFloatDType},
      {"nansum", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::nansum(x, o); },
       kD | kI | kW},
      {"nanprod", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::nanprod(x, o); },
       kD | kI | kW},
      {"nanmax", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::nanmax(x, o); },
       kI | kW | kNoIdentity},
      {"nanmin", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::nanmin(x, o); },
       kI | kW | kNoIdentity},
      {"nanmean", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::nanmean(x, o); },
       kD | kW | kFloatDType},
      {"nanvar", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::nanvar(x, o); },
       kD | kW | kDd | kFloatDType},
      {"nanstd", [](const Array& x, const tnp::ReduceOptions& o) { return tnp::nanstd(x, o); },
       kD | kW | kDd | kFloatDType},
  };
  return v;
}
std::string params(const tnp::ReduceOptions& o) {
  const tnp::Axes& ax = o.axis.axes();
  return json_obj({{"axis", ax ? json_ints(*ax) : "null"},
                   {"keepdims", json_bool(o.keepdims)},
                   {"dtype", jdtype(o.dtype)},
                   {"initial", o.initial ? json_num(*o.initial) : "null"},
                   {"where", json_bool(o.where.has_value())},
                   {"ddof", json_num(o.ddof)}});
}

// A mask shape that broadcasts to s: s with some dims set to 1, maybe with leading dims
// dropped; rarely one that does not broadcast (an error case).
Shape mask_shape(const Shape& s, bool allow_bad) {
  Shape t = s;
  for (auto& d : t)
    if (coin(0.3)) d = 1;
  if (!t.empty() && coin(0.3)) t.erase(t.begin(), t.begin() + uniform_int(0, int(t.size())));
  if (allow_bad && coin(0.05)) t.insert(t.begin(), 2);
  return t;
}

ValueOpts values_for(const std::string& name) {
  ValueOpts vo;
  vo.extremes = false;
  if (name.find("prod") != std::string::npos) {
    vo.lo = -1.4;
    vo.hi = 1.4;
    vo.int_full_range = false;
    vo.int_lo = -3;
    vo.int_hi = 3;
  }
  if (name.rfind("nan", 0) == 0) vo.special_rate = 0.3;
  // Squares of full-range integers overflow float32 (JAX's result is inf there too, but the
  // reference's boundary would be fuzzy).
  if (name.find("var") != std::string::npos || name.find("std") != std::string::npos)
    vo.int_full_range = false;
  return vo;
}

void add_reduction(OracleBatch& b, const Red& r, DType d, const Shape& s, tnp::ReduceOptions o,
                   const ValueOpts& vo, bool x64 = false) {
  X64Scope scope(x64 || is_64bit(d) || (o.dtype && is_64bit(*o.dtype)));
  Array x = oracle_array(s, d, vo);
  std::vector<Array> inputs{x};
  if (o.where) inputs.push_back(*o.where);
  const std::string p = params(o);
  b.add(std::string(r.name) + " " + describe(x) + " " + p + (x64_enabled() ? " x64" : ""),
        std::string("npred.") + r.name, p, inputs, [&] { return r.fn(x, o); });
}

tnp::AxisArg random_axis(const Shape& s) {
  int k = uniform_int(0, 3);
  if (k == 0 || s.empty()) return {};
  const int64_t n = static_cast<int64_t>(s.size());
  if (k == 1) {
    int64_t a = uniform_int(0, int(n) - 1);
    return coin() ? a : a - n;
  }
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < n; ++i)
    if (coin()) axes.push_back(coin() ? i : i - n);
  return axes;
}

// Random options valid for r (and, rarely, an invalid where/initial combination).
tnp::ReduceOptions random_options(const Red& r, const Shape& s) {
  tnp::ReduceOptions o;
  o.axis = random_axis(s);
  o.keepdims = coin();
  if ((r.opts & kD) && coin(0.25)) {
    o.dtype = (r.opts & kFloatDType)
                  ? pick(std::vector<DType>{DType::kFloat32, DType::kFloat16, DType::kBFloat16})
                  : pick(std::vector<DType>{DType::kFloat32, DType::kInt32, DType::kFloat16,
                                            DType::kUInt8, DType::kBool});
  }
  if ((r.opts & kW) && coin(0.4)) o.where = oracle_array(mask_shape(s, true), DType::kBool);
  if ((r.opts & kI) && (coin(0.3) || ((r.opts & kNoIdentity) && o.where && coin(0.9))))
    o.initial = pick(std::vector<double>{0.0, 1.0, -2.0, 3.0});
  if ((r.opts & kDd) && coin(0.5)) o.ddof = pick(std::vector<double>{1.0, 2.0, 0.5});
  return o;
}

}  // namespace

// ---------------------------------------------------------------- oracle: reductions

TEST(NumpyReductions, OracleFixedCases) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("npred.fixed");
  // Every dtype for the basic cases; a rotating few dtypes for the rest (time).
  const std::vector<DType> few = {DType::kBool,    DType::kInt8,    DType::kUInt32,
                                  DType::kInt64,   DType::kFloat16, DType::kBFloat16,
                                  DType::kFloat32, DType::kFloat64};
  for (const Red& r : reductions()) {
    const ValueOpts vo = values_for(r.name);
    for (DType d : all_dtypes()) {
      tnp::ReduceOptions o;
      add_reduction(b, r, d, {3, 4}, o, vo);               // all axes
      add_reduction(b, r, d, {2, 0, 3}, {.axis = 1}, vo);  // empty axis
      add_reduction(b, r, d, {2, 3, 4}, {.axis = {0, -1}, .keepdims = true}, vo);
    }
    for (size_t k = 0; k < 3; ++k) {
      const DType d = few[(k + static_cast<size_t>(&r - reductions().data()) * 3) % few.size()];
      add_reduction(b, r, d, {}, {.keepdims = true}, vo);  // rank 0
      add_reduction(b, r, d, {2, 0, 3}, {.axis = 2}, vo);  // empty input, nonempty axis
      add_reduction(b, r, d, {2, 3}, {.axis = std::vector<int64_t>{}}, vo);  // reduce nothing
      add_reduction(b, r, d, {5}, {.axis = 1}, vo);                          // IndexError
      add_reduction(b, r, d, {5, 2}, {.axis = {0, -2}}, vo);                 // duplicate axis
      if (r.opts & kW) {
        tnp::ReduceOptions w{.axis = -1, .where = oracle_array({3, 1}, DType::kBool)};
        if (r.opts & kNoIdentity) {
          add_reduction(b, r, d, {3, 4}, w, vo);  // where without initial: ValueError
          w.initial = 1.0;
        }
        add_reduction(b, r, d, {3, 4}, w, vo);
        w.where = oracle_array({4}, DType::kFloat32);  // non-bool mask: != 0
        add_reduction(b, r, d, {3, 4}, w, vo);
        w.where = oracle_array({3}, DType::kBool);  // does not broadcast to (3, 4)
        add_reduction(b, r, d, {3, 4}, w, vo);
      }
      if (r.opts & kI) {
        add_reduction(b, r, d, {2, 0}, {.axis = 1, .initial = 2.0}, vo);  // initial on empty
        add_reduction(b, r, d, {3, 4}, {.axis = 0, .initial = -1.0}, vo);
      }
      if (r.opts & kDd) {
        add_reduction(b, r, d, {4, 3}, {.axis = 0, .ddof = 1}, vo);
        add_reduction(b, r, d, {1, 3}, {.axis = 0, .ddof = 1}, vo);  // N - ddof = 0: NaN
        add_reduction(b, r, d, {4, 3}, {.axis = 1, .ddof = 0.5}, vo);
      }
    }
    // Defaults change under x64 (sum of int32 -> int64, mean of int64 -> float64).
    for (DType d : {DType::kInt32, DType::kUInt8, DType::kBool, DType::kFloat32})
      add_reduction(b, r, d, {3, 2}, {}, vo, /*x64=*/true);
    if (r.opts & kD) {
      const DType dd = (r.opts & kFloatDType) ? DType::kFloat64 : DType::kInt64;
      add_reduction(b, r, DType::kInt16, {3, 4}, {.axis = 1, .dtype = dd}, vo);
    }
  }
  b.run();
}

TEST(NumpyReductions, OracleRandom) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("npred.random", 1.5, 300);
  while (b.time_left()) {
    const Red& r = pick(reductions());
    DType d = pick(all_dtypes());
    Shape s = random_shape(0, 4, 5);
    add_reduction(b, r, d, s, random_options(r, s), values_for(r.name), coin(0.15));
  }
  b.run();
}

// ---------------------------------------------------------------- oracle: argmax and friends

TEST(NumpyReductions, OracleArgExtrema) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("npred.arg");
  using ArgFn = Array (*)(const Array&, std::optional<int64_t>, bool);
  const std::vector<std::pair<const char*, ArgFn>> fns = {{"argmax", tnp::argmax},
                                                          {"argmin", tnp::argmin},
                                                          {"nanargmax", tnp::nanargmax},
                                                          {"nanargmin", tnp::nanargmin}};
  auto add = [&](const std::pair<const char*, ArgFn>& f, DType d, const Shape& s,
                 std::optional<int64_t> axis, bool keep, bool x64 = false) {
    X64Scope scope(x64 || is_64bit(d));
    ValueOpts vo;
    vo.int_full_range = false;  // small ints: ties, where the first index must win
    vo.int_lo = -3;
    vo.int_hi = 3;
    vo.special_rate = std::string(f.first).rfind("nan", 0) == 0 ? 0.4 : 0.12;
    Array x = oracle_array(s, d, vo);
    std::string p =
        json_obj({{"axis", axis ? json_int(*axis) : "null"}, {"keepdims", json_bool(keep)}});
    b.add(std::string(f.first) + " " + describe(x) + " " + p, std::string("npred.") + f.first, p,
          {x}, [&] { return f.second(x, axis, keep); });
  };
  for (const auto& f : fns) {
    for (DType d : all_dtypes()) {
      add(f, d, {3, 4}, std::nullopt, false);
      add(f, d, {2, 3, 4}, 1, false);
    }
    for (DType d : {DType::kBool, DType::kInt8, DType::kUInt64, DType::kFloat16, DType::kFloat32}) {
      add(f, d, {3, 4}, -1, true);
      add(f, d, {}, std::nullopt, true);
      add(f, d, {}, 0, false);      // IndexError
      add(f, d, {2, 0}, 0, false);  // fine: axis 0 has 2 elements
      add(f, d, {2, 0}, 1, false);  // ValueError: empty
      add(f, d, {0}, std::nullopt, false);
    }
    add(f, DType::kFloat32, {5, 3}, 0, false, /*x64=*/true);  // int64 indices
    add(f, DType::kFloat32, {1, 5}, 1, true, true);
  }
  while (b.time_left()) {
    Shape s = random_shape(1, 4, 5, 0.03);
    std::optional<int64_t> axis;
    if (coin(0.7)) axis = uniform_int(-int(s.size()), int(s.size()) - 1);
    add(pick(fns), pick(all_dtypes()), s, axis, coin());
  }
  b.run();
}

// ---------------------------------------------------------------- oracle: comparisons

TEST(NumpyReductions, OracleComparisons) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("npred.compare", 2.5);
  // b = a + noise * scale (floats), so that many elements are near the tolerance boundary.
  auto near = [](const Array& a, double scale) {
    if (!is_floating(a.dtype())) return oracle_array(a.shape(), a.dtype());
    Array noise = oracle_array(a.shape(), a.dtype(), ValueOpts{.lo = -1, .hi = 1});
    return tnp::add(a, tnp::multiply(noise, scale));
  };
  auto add_close = [&](DType da, DType db, const Shape& sa, const Shape& sb, double rtol,
                       double atol, bool equal_nan, double scale) {
    X64Scope scope(is_64bit(da) || is_64bit(db));
    Array a = oracle_array(sa, da);
    Array c = near(a, scale);
    Array bb = da == db && sa == sb ? c : oracle_array(sb, db);
    std::string p = json_obj(
        {{"rtol", json_num(rtol)}, {"atol", json_num(atol)}, {"equal_nan", json_bool(equal_nan)}});
    const std::string tag = describe(a) + "," + describe(bb) + " " + p;
    b.add("isclose " + tag, "npred.isclose", p, {a, bb},
          [&] { return tnp::isclose(a, bb, rtol, atol, equal_nan); });
    b.add("allclose " + tag, "npred.allclose", p, {a, bb},
          [&] { return tnp::allclose(a, bb, rtol, atol, equal_nan); });
  };
  for (DType d : all_dtypes()) {
    for (double scale : {1e-4, 1e-2}) {
      add_close(d, d, {4, 5}, {4, 5}, 1e-3, 1e-4, false, scale);
      add_close(d, d, {6}, {6}, 1e-5, 1e-8, true, scale);
    }
    add_close(d, DType::kFloat32, {3, 1}, {4}, 1e-2, 1e-2, false, 0);  // broadcasting
    add_close(d, DType::kInt32, {2}, {3}, 1e-2, 1e-2, false, 0);       // ValueError
    add_close(d, d, {0, 3}, {0, 3}, 1e-2, 1e-2, false, 0);             // empty: allclose true
  }
  while (b.time_left()) {
    Shape s = random_shape(0, 3, 4);
    add_close(pick(all_dtypes()), pick(all_dtypes()), s, numpy_partner_shape(s),
              pick(std::vector<double>{1e-5, 1e-3, 0.1}), pick(std::vector<double>{0, 1e-8, 1e-2}),
              coin(), 0);
    DType d = pick(
        std::vector<DType>{DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64});
    add_close(d, d, s, s, 1e-3, 1e-4, coin(), pick(std::vector<double>{1e-4, 1e-3, 1e-2}));
  }
  // Weak C++ scalars keep the array's dtype.
  {
    Array x = oracle_array({5}, DType::kFloat16);
    Array one = tnp::weak_scalar(1.0);
    b.add("isclose f16, C++ 1.0", "npred.isclose", json_obj({{"rtol", json_num(1e-2)}}), {x, one},
          [&] { return tnp::isclose(x, 1.0, 1e-2); });
  }
  auto add_equal = [&](DType da, DType db, const Shape& sa, const Shape& sb, bool equal_nan,
                       bool same) {
    X64Scope scope(is_64bit(da) || is_64bit(db));
    ValueOpts vo;
    vo.int_full_range = false;
    vo.special_rate = 0.3;
    Array a = oracle_array(sa, da, vo);
    Array c = same ? tnp::astype(a, db) : oracle_array(sb, db, vo);
    std::string p = json_obj({{"equal_nan", json_bool(equal_nan)}});
    b.add("array_equal " + describe(a) + "," + describe(c) + p, "npred.array_equal", p, {a, c},
          [&] { return tnp::array_equal(a, c, equal_nan); });
    b.add("array_equiv " + describe(a) + "," + describe(c), "npred.array_equiv", "{}", {a, c},
          [&] { return tnp::array_equiv(a, c); });
  };
  for (DType d : all_dtypes()) {
    add_equal(d, d, {3, 2}, {3, 2}, false, true);
    add_equal(d, d, {3, 2}, {3, 2}, true, true);
    add_equal(d, DType::kFloat32, {4}, {4}, true, true);
    add_equal(d, d, {3, 2}, {2}, false, false);  // different shapes: false / equiv broadcasts
    add_equal(d, d, {3, 2}, {3}, false, false);  // does not broadcast
    add_equal(d, d, {1}, {1}, true, false);
  }
  // nan_to_num and clip.
  for (DType d : all_dtypes()) {
    X64Scope scope(is_64bit(d));
    ValueOpts vo;
    vo.special_rate = 0.4;
    Array x = oracle_array({4, 5}, d, vo);
    b.add("nan_to_num " + describe(x), "npred.nan_to_num", "{}", {x},
          [&] { return tnp::nan_to_num(x); });
    std::string p =
        json_obj({{"nan", json_num(-1.5)}, {"posinf", json_num(7)}, {"neginf", json_num(-1e30)}});
    b.add("nan_to_num(-1.5, 7, -1e30) " + describe(x), "npred.nan_to_num", p, {x},
          [&] { return tnp::nan_to_num(x, -1.5, 7.0, -1e30); });
    Array lo = oracle_array({5}, d, vo), hi = oracle_array({4, 1}, DType::kFloat32, vo);
    b.add("clip(x, lo, hi) " + describe(x), "npred.clip",
          json_obj({{"has_min", "true"}, {"has_max", "true"}}), {x, lo, hi},
          [&] { return tnp::clip(x, lo, hi); });
    b.add("clip(x, lo) " + describe(x), "npred.clip", json_obj({{"has_min", "true"}}), {x, lo},
          [&] { return tnp::clip(x, lo); });
    b.add("clip(x, none, hi) " + describe(x), "npred.clip", json_obj({{"has_max", "true"}}),
          {x, hi}, [&] { return tnp::clip(x, std::nullopt, hi); });
    Array w0 = tnp::weak_scalar(-0.5), w1 = tnp::weak_scalar_int(1);
    b.add("clip(x, -0.5, 1) " + describe(x), "npred.clip",
          json_obj({{"has_min", "true"}, {"has_max", "true"}}), {x, w0, w1},
          [&] { return tnp::clip(x, -0.5, 1); });
    b.add("clip(x) " + describe(x), "npred.clip", "{}", {x}, [&] { return tnp::clip(x); });
  }
  b.run();
}

// ---------------------------------------------------------------- oracle: linalg.norm

TEST(NumpyReductions, OracleNorm) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("npred.norm");
  using tnp::linalg::NormOrd;
  auto ord_json = [](const NormOrd& o) -> std::string {
    if (o.is_none()) return "null";
    if (!o.name().empty()) return json_str(o.name());
    double p = *o.number();
    if (std::isinf(p)) return json_str(p > 0 ? "inf" : "-inf");
    return json_num(p);
  };
  auto add = [&](DType d, const Shape& s, const NormOrd& ord, const tnp::AxisArg& axis, bool keep) {
    X64Scope scope(is_64bit(d));
    ValueOpts vo;
    vo.extremes = false;
    vo.nan_inf = false;
    vo.special_rate = 0.05;
    Array x = oracle_array(s, d, vo);
    std::string p = json_obj({{"ord", ord_json(ord)},
                              {"axis", axis.axes() ? json_ints(*axis.axes()) : "null"},
                              {"keepdims", json_bool(keep)}});
    b.add("norm " + describe(x) + " " + p, "npred.norm", p, {x},
          [&] { return tnp::linalg::norm(x, ord, axis, keep); });
  };
  const std::vector<NormOrd> vec_ords = {NormOrd(), 2, 1, kInf, -kInf, 0, 3, 0.5, -1.5};
  const std::vector<NormOrd> mat_ords = {NormOrd(), "fro", 1, -1, kInf, -kInf, 2, -2, "nuc", 3};
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt32}) {
    for (const NormOrd& o : vec_ords) {
      add(d, {7}, o, {}, false);
      add(d, {3, 5}, o, -1, coin());
      add(d, {2, 3, 4}, o, 1, true);
    }
    for (const NormOrd& o : mat_ords) {
      add(d, {3, 4}, o, {}, false);
      add(d, {2, 3, 4}, o, {2, 0}, coin());
      add(d, {2, 3, 4}, o, {-1, 1}, true);
    }
    add(d, {2, 3, 4}, NormOrd(), {}, true);  // any rank with ord none
    add(d, {2, 3, 4}, 1, {}, false);         // ValueError: 3 axes
    add(d, {2, 3}, NormOrd(), {0, 1, 0}, false);
    add(d, {0, 3}, kInf, 0, false);  // empty vector max: ValueError
    add(d, {0, 3}, 2, 0, false);     // empty 2-norm: 0
  }
  for (DType d : {DType::kBFloat16, DType::kBool}) {
    add(d, {3, 5}, 3, -1, false);
    add(d, {3, 5}, kInf, {}, true);
    add(d, {3, 5}, NormOrd(), {0, 1}, false);
  }
  while (b.time_left()) {
    Shape s = random_shape(1, 3, 5, 0.03);
    const int64_t n = static_cast<int64_t>(s.size());
    DType d = pick(std::vector<DType>{DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                      DType::kFloat64, DType::kInt8});
    if (coin() && n >= 2) {
      int64_t r = uniform_int(0, int(n) - 1), c = (r + uniform_int(1, int(n) - 1)) % n;
      add(d, s, pick(mat_ords), {coin() ? r : r - n, c}, coin());
    } else {
      add(d, s, pick(vec_ords), uniform_int(-int(n), int(n) - 1), coin());
    }
  }
  b.run();
}

// ---------------------------------------------------------------- errors

TEST(NumpyReductions, Errors) {
  Array x = tnp::ones({3, 4});
  EXPECT_ERROR(ValueError, tnp::max(tnp::zeros({0, 2}), 0), "zero-size array to reduction");
  EXPECT_ERROR(ValueError, tnp::min(tnp::zeros({0, 2})), "which has no identity");
  EXPECT_ERROR(ValueError, tnp::max(x, {.where = tnp::ones({3, 4}, DType::kBool)}),
               "to use a where mask one has to specify 'initial'");
  EXPECT_ERROR(ValueError, tnp::nanmin(x, {.where = tnp::ones({4}, DType::kBool)}),
               "specify 'initial'");
  EXPECT_ERROR(ValueError, tnp::sum(x, {.where = tnp::ones({3}, DType::kBool)}),
               "does not broadcast to the input's shape (3, 4)");
  EXPECT_ERROR(ValueError, tnp::sum(x, {.where = tnp::ones({2, 3, 4}, DType::kBool)}),
               "where mask of shape (2, 3, 4)");
  EXPECT_ERROR(IndexError, tnp::prod(x, 2), "");
  EXPECT_ERROR(ValueError, tnp::var(x, {.axis = {1, -1}}), "duplicate value in 'axis'");
  EXPECT_ERROR(TypeError, tnp::mean(x, {.initial = 1.0}), "unexpected option '.initial'");
  EXPECT_ERROR(TypeError, tnp::max(x, {.dtype = DType::kFloat32}), "unexpected option '.dtype'");
  EXPECT_ERROR(TypeError, tnp::sum(x, {.ddof = 1}), "unexpected option '.ddof'");
  EXPECT_ERROR(TypeError, tnp::ptp(x, {.where = x}), "unexpected option '.where'");
  EXPECT_ERROR(TypeError, tnp::ptp(tnp::ones({2}, DType::kBool)), "not defined for bool");
  EXPECT_ERROR(ValueError, tnp::std(x, {.dtype = DType::kInt32}),
               "dtype argument to jnp.std must be inexact; got int32");
  EXPECT_ERROR(TypeError, tnp::sum(x, {.dtype = DType::kFloat0}), "not a numeric dtype");
  EXPECT_ERROR(ValueError, tnp::argmax(tnp::zeros({0})), "attempt to get argmax of an empty");
  EXPECT_ERROR(ValueError, tnp::nanargmin(tnp::zeros({2, 0}), 1), "empty sequence");
  EXPECT_ERROR(IndexError, tnp::argmin(tnp::zeros({2}), 1), "");
  EXPECT_ERROR(ValueError, tnp::sum(Array()), "undefined Array");
  EXPECT_ERROR(ValueError, tnp::isclose(tnp::ones({2}), tnp::ones({3})), "could not be broadcast");
  namespace la = tnp::linalg;
  EXPECT_ERROR(ValueError, la::norm(x, 3), "Invalid order 3 for matrix norm");
  EXPECT_ERROR(ValueError, la::norm(tnp::ones({3}), "fro"), "Invalid order 'fro' for vector");
  EXPECT_ERROR(ValueError, la::norm(tnp::ones({2, 2, 2}), 1), "Improper number of axes");
  EXPECT_ERROR(ValueError, la::norm(x, 1, {1, -1}), "duplicate axes");
}

// ---------------------------------------------------------------- semantics spot checks

TEST(NumpyReductions, DtypesAndWeakTypes) {
  // Reductions of weak scalars are strong, as jnp's.
  Array w = tnp::weak_scalar(2.5);
  EXPECT_FALSE(tnp::sum(w).weak_type());
  EXPECT_FALSE(tnp::var(w).weak_type());
  EXPECT_EQ(tnp::var(tnp::ones({3}, DType::kInt8)).dtype(), DType::kFloat32);
  EXPECT_EQ(tnp::std(tnp::ones({3}, DType::kFloat16)).dtype(), DType::kFloat16);
  EXPECT_EQ(tnp::prod(tnp::ones({3}, DType::kUInt8)).dtype(), DType::kUInt32);
  EXPECT_EQ(tnp::argmax(tnp::ones({3})).dtype(), DType::kInt32);
  EXPECT_EQ(tnp::count_nonzero(tnp::ones({3}, DType::kBool)).dtype(), DType::kInt32);
  EXPECT_EQ(tnp::nan_to_num(tnp::ones({2}, DType::kInt8)).dtype(), DType::kInt8);
  {
    X64Scope s(true);
    EXPECT_EQ(tnp::sum(tnp::ones({3}, DType::kInt32)).dtype(), DType::kInt64);
    EXPECT_EQ(tnp::argmin(tnp::ones({3})).dtype(), DType::kInt64);
    EXPECT_EQ(tnp::mean(tnp::ones({3}, DType::kInt64)).dtype(), DType::kFloat64);
    EXPECT_EQ(tnp::var(tnp::ones({3}, DType::kInt32)).dtype(), DType::kFloat32);
  }
  // Positional shorthands agree with the options form.
  Array x = random_array({3, 4}, DType::kFloat32);
  EXPECT_EQ(compare(to_doubles(tnp::var(x, 1, true)),
                    to_doubles(tnp::var(x, {.axis = 1, .keepdims = true})), 0, 0),
            "");
  EXPECT_EQ(tnp::var(x, 1, true).shape(), (Shape{3, 1}));
  EXPECT_EQ(tnp::prod(x, {0}).shape(), (Shape{4}));  // a one-element braced list is an int
  EXPECT_EQ(tnp::sum(x, {.axis = {0, 1}}).shape(), (Shape{}));
  EXPECT_EQ(tnp::argmax(x, std::nullopt, true).shape(), (Shape{1, 1}));
  // linalg.norm ord=inf of a vector = max |x|, computed here independently.
  std::vector<double> v = to_doubles(x);
  double m = 0, s2 = 0;
  for (double e : v) {
    m = std::max(m, std::fabs(e));
    s2 += e * e;
  }
  EXPECT_NEAR(tnp::linalg::norm(tnp::reshape(x, {12}), kInf).item<double>(), m, 0);
  EXPECT_NEAR(tnp::linalg::norm(x).item<double>(), std::sqrt(s2), 1e-5 * std::sqrt(s2));
  // allclose / array_equal return rank-0 bool arrays usable in `if`.
  EXPECT_TRUE(bool(tnp::allclose(x, tnp::add(x, 1e-9))));
  EXPECT_FALSE(bool(tnp::array_equal(x, tnp::reshape(x, {4, 3}))));
}

// ---------------------------------------------------------------- gradients

namespace {

// Central differences in float64 of a scalar function at x (float64).
std::vector<double> numeric_grad(const std::function<Array(const Array&)>& f, const Array& x) {
  std::vector<double> base = to_doubles(x), g(base.size());
  const double h = 1e-6;
  for (size_t i = 0; i < base.size(); ++i) {
    std::vector<double> p = base, m = base;
    p[i] += h;
    m[i] -= h;
    double fp = f(tnp::array(p, x.shape(), DType::kFloat64)).item<double>();
    double fm = f(tnp::array(m, x.shape(), DType::kFloat64)).item<double>();
    g[i] = (fp - fm) / (2 * h);
  }
  return g;
}

void check_grad(const char* what, const std::function<Array(const Array&)>& f, const Shape& s) {
  X64Scope scope(true);
  Array x = random_array(s, DType::kFloat64, -2, 2);
  Array g = grad(f)(x);
  EXPECT_EQ(compare(to_doubles(g), numeric_grad(f, x), 1e-6, 1e-6), "") << what;
}

}  // namespace

TEST(NumpyReductions, Gradients) {
  check_grad("sum(var(x, axis=1))", [](const Array& x) { return tnp::sum(tnp::var(x, 1)); },
             {3, 4});
  check_grad("std(x, ddof=1)", [](const Array& x) { return tnp::std(x, {.ddof = 1}); }, {5});
  check_grad(
      "sum(std(x, axis=0, where))",
      [](const Array& x) {
        Array m = tnp::array(std::vector<bool>{true, false, true, true, false, true}, Shape{3, 2});
        return tnp::sum(tnp::std(x, {.axis = 0, .where = m}));
      },
      {3, 2});
  check_grad("nanvar", [](const Array& x) { return tnp::nanvar(x); }, {6});
  check_grad(
      "mean(x, where)",
      [](const Array& x) {
        return tnp::mean(x, {.where = tnp::array(std::vector<bool>{true, false, true}, Shape{3})});
      },
      {2, 3});
  check_grad("norm(x)", [](const Array& x) { return tnp::linalg::norm(x); }, {2, 3});
  check_grad("norm(x, 3)", [](const Array& x) { return tnp::linalg::norm(x, 3); }, {5});
  check_grad("norm(x, 'fro', (0, 1))",
             [](const Array& x) {
               return tnp::linalg::norm(x, "fro", {0, 1});
             },
             {3, 3});
  check_grad(
      "sum(norm(x, axis=-1))",
      [](const Array& x) { return tnp::sum(tnp::linalg::norm(x, tnp::linalg::NormOrd(), -1)); },
      {3, 4});
  check_grad("sum(prod(x, axis=0))", [](const Array& x) { return tnp::sum(tnp::prod(x, 0)); },
             {3, 2});
}

TEST(NumpyReductions, Jaxpr) {
  auto f = [](const Array& x) { return tnp::var(x, {.axis = 1}); };
  std::string j = to_string(make_jaxpr(f)(tnp::ones({2, 3})));
  // jnp.var's composition: mean (reduce_sum, div), subtract, square, reduce_sum, div, select.
  for (const char* piece : {"reduce_sum[axes=(1,)]", "sub", "square", "div", "select_n"})
    EXPECT_NE(j.find(piece), std::string::npos) << piece << " missing from\n" << j;
}

// Under vmap each example is reduced on its own: compare with the batched call's axis form.
TEST(NumpyReductions, Vmap) {
  ValueOpts vo;
  vo.special_rate = 0.3;
  vo.extremes = false;
  Array x = oracle_array({4, 6}, DType::kFloat32, vo);
  auto same = [](const Array& got, const Array& want) {
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(compare(to_doubles(got), to_doubles(want), 1e-6, 1e-6), "");
  };
  same(vmap([](const Array& r) { return tnp::var(r, {.ddof = 1}); })(x),
       tnp::var(x, {.axis = 1, .ddof = 1}));
  same(vmap([](const Array& r) { return tnp::nanmax(r); })(x), tnp::nanmax(x, 1));
  same(vmap([](const Array& r) { return tnp::nanargmin(r); })(x), tnp::nanargmin(x, 1));
  same(vmap([](const Array& r) { return tnp::linalg::norm(r, 3); })(x),
       tnp::linalg::norm(x, 3, -1));
  same(vmap([](const Array& r) { return tnp::allclose(r, r, 0, 0, true); })(x),
       tnp::all(tnp::isclose(x, x, 0, 0, true), 1));
  Array m = oracle_array({6}, DType::kBool);
  same(vmap([&](const Array& r) { return tnp::mean(r, {.where = m}); })(x),
       tnp::mean(x, {.axis = 1, .where = m}));
}
