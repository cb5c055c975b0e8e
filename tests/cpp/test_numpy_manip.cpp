// tessera::numpy's manipulation functions, products and basic indexing (numpy_manip.h,
// index.h) against NumPy (tests/oracle/oracle_npmanip.py) on fresh random inputs: every
// function on several shapes (rank 0 where it applies, zero-size dims), einsum on a table of
// subscripts (ellipses, repeated indices, implicit output, 1-4 operands), pad in every mode,
// and random index expressions. Also gradients through the composites vs finite differences.
#include <gtest/gtest.h>

#include <random>

#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

using namespace tessera;
using namespace tessera::testing;
namespace tnp = tessera::numpy;

namespace {

void expect_equal_values(const Array& a, const Array& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(to_doubles(a), to_doubles(b));
}

int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

std::string params(const std::string& fn, const std::string& kwargs = "{}", bool list = false,
                   std::optional<int> index = std::nullopt, bool flt = false) {
  std::string s =
      "{\"fn\": " + json_str(fn) + ", \"kwargs\": " + kwargs + ", \"list\": " + json_bool(list);
  if (index) s += ", \"index\": " + json_int(*index);
  if (flt) s += ", \"float\": true";
  return s + "}";
}

const std::vector<DType> kTypes = {DType::kFloat32, DType::kInt32, DType::kBool, DType::kBFloat16,
                                   DType::kUInt8};

TEST(NumpyManip, AxesFunctions) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.manip axes");
  for (DType d : kTypes) {
    Array x = oracle_array({2, 3, 4}, d);
    b.add("swapaxes", "np.manip", params("swapaxes", "{\"axis1\": 0, \"axis2\": -1}"), {x},
          [&] { return tnp::swapaxes(x, 0, -1); });
    b.add("moveaxis", "np.manip", params("moveaxis", "{\"source\": 0, \"destination\": 2}"), {x},
          [&] { return tnp::moveaxis(x, 0, 2); });
    b.add("moveaxis2", "np.manip",
          params("moveaxis", "{\"source\": [0, 1], \"destination\": [-1, 0]}"), {x}, [&] {
            return tnp::moveaxis(x, {0, 1}, {-1, 0});
          });
    Array y = oracle_array({1, 3, 1}, d);
    b.add("squeeze", "np.manip", params("squeeze"), {y}, [&] { return tnp::squeeze(y); });
    b.add("squeeze2", "np.manip", params("squeeze", "{\"axis\": -1}"), {y},
          [&] { return tnp::squeeze(y, -1); });
    b.add("expand_dims", "np.manip", params("expand_dims", "{\"axis\": [0, 3]}"), {x}, [&] {
      return tnp::expand_dims(x, std::vector<int64_t>{0, 3});
    });
    b.add("ravel", "np.manip", params("ravel"), {x}, [&] { return tnp::ravel(x); });
    Array s = oracle_array({}, d), v = oracle_array({3}, d);
    for (const Array& a : {s, v, x}) {
      b.add("atleast_1d", "np.manip", params("atleast_1d"), {a},
            [&] { return tnp::atleast_1d(a); });
      b.add("atleast_2d", "np.manip", params("atleast_2d"), {a},
            [&] { return tnp::atleast_2d(a); });
      b.add("atleast_3d", "np.manip", params("atleast_3d"), {a},
            [&] { return tnp::atleast_3d(a); });
    }
    b.add("flip", "np.manip", params("flip"), {x}, [&] { return tnp::flip(x); });
    b.add("flip1", "np.manip", params("flip", "{\"axis\": 1}"), {x},
          [&] { return tnp::flip(x, 1); });
    b.add("fliplr", "np.manip", params("fliplr"), {x}, [&] { return tnp::fliplr(x); });
    b.add("flipud", "np.manip", params("flipud"), {x}, [&] { return tnp::flipud(x); });
    for (int k = -1; k <= 5; ++k)
      b.add("rot90_" + std::to_string(k), "np.manip",
            params("rot90", "{\"k\": " + json_int(k) + ", \"axes\": [1, 2]}"), {x}, [&, k] {
              return tnp::rot90(x, k, {1, 2});
            });
    for (int sh : {-7, -1, 0, 2, 13}) {
      b.add("roll_flat", "np.manip", params("roll", "{\"shift\": " + json_int(sh) + "}"), {x},
            [&, sh] { return tnp::roll(x, sh); });
      b.add("roll_ax", "np.manip", params("roll", "{\"shift\": " + json_int(sh) + ", \"axis\": 1}"),
            {x}, [&, sh] { return tnp::roll(x, sh, 1); });
    }
    b.add("roll_multi", "np.manip", params("roll", "{\"shift\": [1, -2], \"axis\": [0, 2]}"), {x},
          [&] {
            return tnp::roll(x, {1, -2}, {0, 2});
          });
    for (int i = 0; i < 4; ++i) {
      // repeat / tile with several counts, including 0.
      const int r = uniform_int(0, 3);
      b.add("repeat_flat", "np.manip", params("repeat", "{\"repeats\": " + json_int(r) + "}"), {x},
            [&, r] { return tnp::repeat(x, r); });
      b.add("repeat_ax", "np.manip",
            params("repeat", "{\"repeats\": " + json_int(r) + ", \"axis\": 1}"), {x},
            [&, r] { return tnp::repeat(x, r, 1); });
    }
    b.add("repeat_list", "np.manip", params("repeat", "{\"repeats\": [2, 0, 1], \"axis\": 1}"), {x},
          [&] {
            return tnp::repeat(x, std::vector<int64_t>{2, 0, 1}, 1);
          });
    for (auto reps : std::vector<std::vector<int64_t>>{{2}, {2, 1}, {1, 2, 1, 3}, {0, 2}})
      b.add("tile", "np.manip", params("tile", "{\"reps\": " + json_ints(reps) + "}"), {x},
            [&, reps] { return tnp::tile(x, reps); });
  }
  b.run();
}

TEST(NumpyManip, JoinAndSplit) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.manip join");
  for (DType d : kTypes) {
    Array x = oracle_array({2, 3}, d), y = oracle_array({2, 3}, d), z = oracle_array({2, 0}, d);
    Array w = oracle_array({4, 3}, d), v = oracle_array({3}, d), u = oracle_array({3}, d);
    b.add("concat0", "np.manip", params("concatenate", "{\"axis\": 0}", true), {x, y, w}, [&] {
      return tnp::concatenate({x, y, w}, 0);
    });
    b.add("concat1", "np.manip", params("concatenate", "{\"axis\": -1}", true), {x, y, z}, [&] {
      return tnp::concatenate({x, y, z}, -1);
    });
    b.add("concat_none", "np.manip", params("concatenate", "{\"axis\": null}", true), {x, v}, [&] {
      return tnp::concatenate_flat({x, v});
    });
    for (int ax : {0, 1, 2, -1})
      b.add("stack", "np.manip", params("stack", "{\"axis\": " + json_int(ax) + "}", true), {x, y},
            [&, ax] {
              return tnp::stack({x, y}, ax);
            });
    b.add("hstack", "np.manip", params("hstack", "{}", true), {x, y}, [&] {
      return tnp::hstack({x, y});
    });
    b.add("hstack1", "np.manip", params("hstack", "{}", true), {v, u}, [&] {
      return tnp::hstack({v, u});
    });
    b.add("vstack", "np.manip", params("vstack", "{}", true), {v, u, x}, [&] {
      return tnp::vstack({v, u, x});
    });
    b.add("dstack", "np.manip", params("dstack", "{}", true), {x, y}, [&] {
      return tnp::dstack({x, y});
    });
    b.add("column_stack", "np.manip", params("column_stack", "{}", true), {v, u}, [&] {
      return tnp::column_stack({v, u});
    });
    Array big = oracle_array({6, 4}, d);
    for (int i = 0; i < 3; ++i) {
      b.add("split3", "np.manip", params("split", "{\"indices_or_sections\": 3}", false, i), {big},
            [&, i] { return tnp::split(big, 3, 0)[i]; });
      b.add("split_idx", "np.manip",
            params("split", "{\"indices_or_sections\": [1, -2], \"axis\": 1}", false, i), {big},
            [&, i] {
              return tnp::split(big, std::vector<int64_t>{1, -2}, 1)[i];
            });
      b.add("array_split", "np.manip",
            params("array_split", "{\"indices_or_sections\": 3, \"axis\": 1}", false, i), {big},
            [&, i] { return tnp::array_split(big, 3, 1)[i]; });
    }
    for (int i = 0; i < 2; ++i)
      b.add("broadcast_arrays", "np.manip", params("broadcast_arrays", "{}", false, i), {x, v},
            [&, i] {
              return tnp::broadcast_arrays({x, v})[i];
            });
  }
  b.run();
  EXPECT_ERROR(ValueError, tnp::split(oracle_array({5}, DType::kFloat32), 2),
               "does not result in an equal division");
  EXPECT_ERROR(
      ValueError,
      tnp::concatenate({oracle_array({2}, DType::kFloat32), oracle_array({2, 2}, DType::kFloat32)}),
      "same number of dimensions");
  EXPECT_ERROR(ValueError,
               tnp::stack({oracle_array({2}, DType::kFloat32), oracle_array({3}, DType::kFloat32)}),
               "same shape");
}

TEST(NumpyManip, DiagonalsAndTriangles) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.manip diag");
  for (DType d : {DType::kFloat32, DType::kInt32, DType::kBool}) {
    for (Shape s : {Shape{3, 5}, Shape{5, 3}, Shape{4, 4}, Shape{2, 3, 4}, Shape{0, 3}}) {
      Array x = oracle_array(s, d);
      for (int k = -4; k <= 4; ++k) {
        b.add("tril", "np.manip", params("tril", "{\"k\": " + json_int(k) + "}"), {x},
              [&, k] { return tnp::tril(x, k); });
        b.add("triu", "np.manip", params("triu", "{\"k\": " + json_int(k) + "}"), {x},
              [&, k] { return tnp::triu(x, k); });
        b.add("diagonal", "np.manip", params("diagonal", "{\"offset\": " + json_int(k) + "}"), {x},
              [&, k] { return tnp::diagonal(x, k); });
        if (s.size() == 3)
          b.add("diagonal_12", "np.manip",
                params("diagonal", "{\"offset\": " + json_int(k) + ", \"axis1\": 2, \"axis2\": 0}"),
                {x}, [&, k] { return tnp::diagonal(x, k, 2, 0); });
        if (d != DType::kBool)
          b.add("trace", "np.manip", params("trace", "{\"offset\": " + json_int(k) + "}"), {x},
                [&, k] {
                  Array t = tnp::trace(x, k);
                  return d == DType::kInt32 ? tnp::astype(t, DType::kInt32) : t;
                });
      }
    }
    Array v = oracle_array({3}, d);
    for (int k = -2; k <= 2; ++k)
      b.add("diag", "np.manip", params("diag", "{\"k\": " + json_int(k) + "}"), {v},
            [&, k] { return tnp::diag(v, k); });
  }
  Array a = oracle_array({3}, DType::kFloat32), c = oracle_array({2}, DType::kFloat32);
  for (const char* ix : {"xy", "ij"})
    for (bool sparse : {false, true})
      for (int i = 0; i < 2; ++i)
        b.add("meshgrid", "np.manip",
              params("meshgrid",
                     std::string("{\"indexing\": \"") + ix +
                         "\", \"sparse\": " + json_bool(sparse) + "}",
                     false, i),
              {a, c}, [&, ix, sparse, i] {
                return tnp::meshgrid({a, c}, ix, sparse)[i];
              });
  b.run();
}

TEST(NumpyManip, PadModes) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.manip pad");
  for (DType d : {DType::kFloat32, DType::kInt32}) {
    for (Shape s : {Shape{3}, Shape{2, 3}, Shape{1, 4}}) {
      Array x = oracle_array(
          s, d, ValueOpts{.nan_inf = false, .extremes = false, .int_full_range = false});
      for (auto [bw, aw] : std::vector<std::pair<int, int>>{{0, 0}, {1, 2}, {3, 0}, {5, 7}}) {
        tnp::PadWidth pw(s.size(), {bw, aw});
        const std::string pws = "[" + std::to_string(bw) + ", " + std::to_string(aw) + "]";
        for (std::string mode : {"constant", "edge", "reflect", "symmetric", "wrap", "maximum",
                                 "minimum", "mean", "linear_ramp"}) {
          if (d == DType::kInt32 && (mode == "mean" || mode == "linear_ramp")) continue;
          std::string kw = "{\"pad_width\": " + pws + ", \"mode\": \"" + mode + "\"";
          tnp::PadOptions o;
          o.mode = mode;
          if (mode == "constant") {
            kw += ", \"constant_values\": 3";
            o.constant_value = 3;
          }
          if (mode == "linear_ramp") {
            kw += ", \"end_values\": -1";
            o.end_value = -1;
          }
          // Computed modes (ramps, means) are compared in float64 with float32 tolerances.
          const bool fl = d == DType::kFloat32;
          b.add("pad_" + mode, "np.manip", params("pad", kw + "}", false, {}, fl), {x},
                [&, pw, o] { return tnp::pad(x, pw, o); });
          if (mode == "reflect" || mode == "symmetric") {
            // Odd reflection iterates 2 * edge - chunk: past the axis length values grow and
            // cancel, so float32 errors scale with the largest magnitude, not each element's.
            o.reflect_type = "odd";
            const std::string odd_kw = kw + ", \"reflect_type\": \"odd\"}";
            std::string pr = params("pad", odd_kw, false, {}, fl);
            if (fl) pr.insert(pr.size() - 1, ", \"atol_of_max\": true");
            b.add("pad_" + mode + "_odd", "np.manip", pr, {x},
                  [&, pw, o] { return tnp::pad(x, pw, o); });
          }
        }
      }
    }
  }
  b.run();
}

// NumPy's per-side arguments: constant_values / end_values / stat_length different per axis and
// side (later axes cover the corners), a single pair for all axes, stat_length longer than the
// axis and of 1.
TEST(NumpyManip, PadPerSideValues) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.manip pad per side");
  for (DType d : {DType::kFloat32, DType::kInt32}) {
    for (Shape s : {Shape{4}, Shape{3, 5}, Shape{2, 3, 4}}) {
      Array x = oracle_array(
          s, d, ValueOpts{.nan_inf = false, .extremes = false, .int_full_range = false});
      const size_t nd = s.size();
      tnp::PadWidth pw;
      std::string pws = "[";
      for (size_t ax = 0; ax < nd; ++ax) {
        pw.push_back({static_cast<int64_t>(ax + 1), static_cast<int64_t>(3 - ax % 3)});
        pws += std::string(ax ? ", " : "") + "[" + std::to_string(ax + 1) + ", " +
               std::to_string(3 - ax % 3) + "]";
      }
      pws += "]";
      auto pairs = [&](auto value) {
        std::string t = "[";
        for (size_t ax = 0; ax < nd; ++ax)
          t += std::string(ax ? ", " : "") + "[" + std::to_string(value(ax, 0)) + ", " +
               std::to_string(value(ax, 1)) + "]";
        return t + "]";
      };
      const bool fl = d == DType::kFloat32;
      {  // constant, per axis and side
        tnp::PadOptions o;
        for (size_t ax = 0; ax < nd; ++ax)
          o.constant_values.push_back(
              {-1.0 - static_cast<double>(ax), 5.0 + static_cast<double>(ax)});
        std::string kw =
            "{\"pad_width\": " + pws + ", \"mode\": \"constant\", \"constant_values\": " +
            pairs([](size_t ax, int side) { return side ? 5 + int(ax) : -1 - int(ax); }) + "}";
        b.add("pad_constant_per_side", "np.manip", params("pad", kw, false, {}, fl), {x},
              [&, pw, o] { return tnp::pad(x, pw, o); });
        tnp::PadOptions one;
        one.constant_values = {{7.0, -2.0}};
        std::string kw1 =
            "{\"pad_width\": " + pws + ", \"mode\": \"constant\", \"constant_values\": [[7, -2]]}";
        b.add("pad_constant_one_pair", "np.manip", params("pad", kw1, false, {}, fl), {x},
              [&, pw, one] { return tnp::pad(x, pw, one); });
      }
      if (fl) {  // linear_ramp, per axis and side
        tnp::PadOptions o;
        o.mode = "linear_ramp";
        for (size_t ax = 0; ax < nd; ++ax)
          o.end_values.push_back({2.0 * static_cast<double>(ax), -3.0});
        std::string kw = "{\"pad_width\": " + pws +
                         ", \"mode\": \"linear_ramp\", \"end_values\": " +
                         pairs([](size_t ax, int side) { return side ? -3 : 2 * int(ax); }) + "}";
        b.add("pad_linear_ramp_per_side", "np.manip", params("pad", kw, false, {}, fl), {x},
              [&, pw, o] { return tnp::pad(x, pw, o); });
      }
      for (std::string mode : {"maximum", "minimum", "mean"}) {
        if (mode == "mean" && !fl) continue;
        for (int variant = 0; variant < 2; ++variant) {
          tnp::PadOptions o;
          o.mode = mode;
          o.stat_length = tnp::PadWidth{};
          for (size_t ax = 0; ax < nd; ++ax)
            o.stat_length->push_back(variant ? std::pair<int64_t, int64_t>{1, 9}
                                             : std::pair<int64_t, int64_t>{2, int64_t(ax) + 1});
          std::string kw = "{\"pad_width\": " + pws + ", \"mode\": \"" + mode +
                           "\", \"stat_length\": " + pairs([variant](size_t ax, int side) {
                             return variant ? (side ? 9 : 1) : (side ? int(ax) + 1 : 2);
                           }) +
                           "}";
          b.add("pad_" + mode + "_stat_length", "np.manip", params("pad", kw, false, {}, fl), {x},
                [&, pw, o] { return tnp::pad(x, pw, o); });
        }
      }
    }
  }
  b.run();
  Array x = tnp::ones({3, 4});
  tnp::PadOptions bad;
  bad.constant_values = {{1, 2}, {3, 4}, {5, 6}};
  EXPECT_ERROR(ValueError, tnp::pad(x, 1, bad),
               "constant_values has 3 (before, after) pairs for an array of 2 axes");
  tnp::PadOptions zero;
  zero.mode = "maximum";
  zero.stat_length = tnp::PadWidth{{0, 1}};
  EXPECT_ERROR(ValueError, tnp::pad(x, 1, zero), "stat_length of 0 yields no value for padding");
  zero.stat_length = tnp::PadWidth{{-1, 1}};
  EXPECT_ERROR(ValueError, tnp::pad(x, 1, zero), "index can't contain negative values");
}

// einsum, tensordot, outer, inner, vdot, kron: float32 values computed in float64 by NumPy.
TEST(NumpyManip, Products) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.manip products");
  const DType f = DType::kFloat32;
  ValueOpts vo{.nan_inf = false, .extremes = false};
  struct E {
    std::string subs;
    std::vector<Shape> shapes;
  };
  const std::vector<E> table = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"ij,jk", {{3, 4}, {4, 5}}},
      {"bhqd,bhkd->bhqk", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
      {"ii->i", {{4, 4}}},
      {"ii", {{4, 4}}},
      {"ij->", {{3, 4}}},
      {"ij->ji", {{3, 4}}},
      {"i,i->", {{5}, {5}}},
      {"i,j->ij", {{3}, {4}}},
      {"...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}},
      {"...ij,jk->...ik", {{2, 1, 3, 4}, {4, 5}}},
      {"...ij,...jk", {{1, 3, 4}, {2, 4, 5}}},
      {"ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}},
      {"ab,bc,cd,de->ae", {{2, 3}, {3, 4}, {4, 5}, {5, 2}}},
      {"abc,cb->a", {{2, 3, 4}, {4, 3}}},
      {"iij->j", {{3, 3, 4}}},
      {"ijk,ikl->ijl", {{2, 3, 4}, {2, 4, 5}}},
      {"i,ij,j->", {{3}, {3, 4}, {4}}},
      {"ij,ij->ij", {{3, 4}, {3, 4}}},
      {"ab,ab,ab->a", {{3, 2}, {3, 2}, {3, 2}}},
      {"ij,kj->ikj", {{3, 0}, {2, 0}}},
      {"...,...->...", {{2, 3}, {3}}},
  };
  for (const E& e : table) {
    std::vector<Array> xs;
    for (const Shape& s : e.shapes) xs.push_back(oracle_array(s, f, vo));
    b.add("einsum " + e.subs, "np.manip",
          "{\"fn\": \"einsum\", \"kwargs\": {}, \"list\": false, \"float\": true, \"prefix\": " +
              json_str(e.subs) + "}",
          xs, [&, e, xs] { return tnp::einsum(e.subs, xs); });
  }
  Array a = oracle_array({2, 3, 4}, f, vo), c = oracle_array({3, 4, 5}, f, vo);
  b.add("tensordot2", "np.manip", params("tensordot", "{\"axes\": 2}", false, {}, true), {a, c},
        [&] { return tnp::tensordot(a, c, 2); });
  Array c2 = oracle_array({4, 2, 3}, f, vo);
  b.add("tensordot_lists", "np.manip",
        params("tensordot", "{\"axes\": [[1, 2], [2, 0]]}", false, {}, true), {a, c2}, [&] {
          return tnp::tensordot(a, c2, {1, 2}, {2, 0});
        });
  b.add("tensordot0", "np.manip", params("tensordot", "{\"axes\": 0}", false, {}, true), {a, c},
        [&] { return tnp::tensordot(a, c, 0); });
  Array v = oracle_array({3, 2}, f, vo), w = oracle_array({4}, f, vo);
  b.add("outer", "np.manip", params("outer", "{}", false, {}, true), {v, w},
        [&] { return tnp::outer(v, w); });
  Array m1 = oracle_array({2, 4}, f, vo), m2 = oracle_array({3, 4}, f, vo);
  b.add("inner", "np.manip", params("inner", "{}", false, {}, true), {m1, m2},
        [&] { return tnp::inner(m1, m2); });
  Array p = oracle_array({2, 3}, f, vo), q = oracle_array({3, 2}, f, vo);
  b.add("vdot", "np.manip", params("vdot", "{}", false, {}, true), {p, q},
        [&] { return tnp::vdot(p, q); });
  for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{
           {{2, 3}, {3, 2}}, {{3}, {2, 2}}, {{2, 1, 2}, {3, 2}}, {{}, {3}}}) {
    Array ka = oracle_array(sa, f, vo), kb = oracle_array(sb, f, vo);
    b.add("kron", "np.manip", params("kron", "{}", false, {}, true), {ka, kb},
          [&, ka, kb] { return tnp::kron(ka, kb); });
  }
  b.run();
  EXPECT_ERROR(ValueError,
               tnp::einsum("ij,jk->ik", {oracle_array({2, 3}, f), oracle_array({4, 5}, f)}),
               "the sizes must agree");
  EXPECT_ERROR(ValueError, tnp::einsum("ij->ik", {oracle_array({2, 3}, f)}),
               "does not appear in any input");
  EXPECT_ERROR(ValueError, tnp::einsum("ij,jk", {oracle_array({2, 3}, f)}), "name 2 operands");
}

// The einsum of the attention scores is one dot_general with no transposes.
TEST(NumpyManip, EinsumStagesOneDot) {
  Array q = tnp::zeros({1, 8, 16, 4}), k = tnp::zeros({1, 8, 16, 4});
  auto j = make_jaxpr([](const Array& a, const Array& b) {
    return tnp::einsum("bhqd,bhkd->bhqk", {a, b});
  })(q, k);
  const std::string s = to_string(j);
  EXPECT_NE(s.find("dot_general"), std::string::npos) << s;
  EXPECT_EQ(s.find("transpose"), std::string::npos) << s;
}

// Random index expressions vs NumPy (ints, slices with any step, None, one Ellipsis).
TEST(NumpyManip, BasicIndexingVsNumpy) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("np.getitem", 2.0, 400);
  auto rand_opt = [&](int lo, int hi) -> std::optional<int64_t> {
    if (uniform_int(0, 3) == 0) return std::nullopt;
    return uniform_int(lo, hi);
  };
  while (b.time_left()) {
    Shape s = random_shape(0, 4, 5);
    Array x = oracle_array(s, uniform_int(0, 1) ? DType::kFloat32 : DType::kInt32);
    std::vector<Index> idx;
    std::string js = "[";
    const int n = uniform_int(0, static_cast<int>(s.size()) + 1);
    bool ell = false;
    int used = 0;
    for (int k = 0; k < n; ++k) {
      if (k) js += ", ";
      const int kind = uniform_int(0, 9);
      if (kind == 0) {
        idx.push_back(newaxis);
        js += "\"None\"";
      } else if (kind == 1 && !ell) {
        ell = true;
        idx.push_back(ellipsis);
        js += "\"...\"";
      } else if (kind <= 3 && used < static_cast<int>(s.size()) && s[used] > 0) {
        const int64_t dim = s[used++];
        const int i = uniform_int(static_cast<int>(-dim), static_cast<int>(dim - 1));
        idx.push_back(i);
        js += json_int(i);
      } else {
        ++used;
        auto st = rand_opt(-7, 7), sp = rand_opt(-7, 7);
        std::optional<int64_t> step;
        if (uniform_int(0, 1)) step = uniform_int(0, 1) ? uniform_int(1, 3) : -uniform_int(1, 3);
        idx.push_back(Slice(st, sp, step));
        auto o = [](std::optional<int64_t> v) { return v ? json_int(*v) : std::string("null"); };
        js += "[" + o(st) + ", " + o(sp) + ", " + o(step) + "]";
      }
    }
    js += "]";
    b.add("getitem " + js, "np.getitem", "{\"index\": " + js + "}", {x},
          [x, idx] { return x[idx]; });
  }
  b.run();
}

TEST(NumpyManip, IndexingErrorsAndDynamic) {
  Array x = tnp::reshape(tnp::arange(12.0), {3, 4});
  EXPECT_ERROR(IndexError, x[{3}], "index 3 is out of bounds for axis 0 with size 3");
  EXPECT_ERROR(IndexError, (x[{0, 0, 0}]), "too many indices for array");
  EXPECT_ERROR(IndexError, (x[{ellipsis, 0, ellipsis}]), "single ellipsis");
  EXPECT_ERROR(ValueError, (x[{Slice(0, 2, 0)}]), "slice step cannot be zero");
  // An integer-array index gathers rows (test_indexing_advanced.py covers the rest).
  expect_equal_values(x[{tnp::array({2, 0}, DType::kInt32)}], tnp::stack({x[{2}], x[{0}]}));
  // A rank-0 integer Array index is dynamic: clamped into range, as JAX.
  Array i = tnp::scalar(7, DType::kInt32);
  expect_equal_values(x[{i}], x[{2}]);
  Array m = tnp::scalar(-1, DType::kInt32);
  expect_equal_values(x[{Slice(), m}], x[{Slice(), 3}]);
  // Under vmap, the index may be batched per example.
  auto rows = vmap([&](const Array& k) { return x[{k}]; })(tnp::array({2, 0, 1}, DType::kInt32));
  expect_equal_values(rows, tnp::stack({x[2], x[0], x[1]}));
}

// Gradients through the composites vs float64 central differences.
TEST(NumpyManip, GradientsThroughComposites) {
  X64Scope x64;
  int compared = 0;
  auto check = [&compared](const char* what, const std::function<Array(const Array&)>& f,
                           const Array& x) {
    Array g = grad([&](const Array& a) { return tnp::sum(tnp::sin(f(a))); })(x);
    std::vector<double> xv = to_doubles(x), gv = to_doubles(g);
    const double h = 1e-6;
    for (size_t i = 0; i < xv.size(); ++i) {
      std::vector<double> p = xv, m = xv;
      p[i] += h;
      m[i] -= h;
      auto val = [&](const std::vector<double>& v) {
        return tnp::sum(tnp::sin(f(tnp::array(v, x.shape(), DType::kFloat64)))).item_double();
      };
      const double fd = (val(p) - val(m)) / (2 * h);
      EXPECT_NEAR(gv[i], fd, 1e-6 * (1 + std::abs(fd))) << what << " at " << i;
      ++compared;
    }
  };
  Array x = random_array({3, 4}, DType::kFloat64);
  check(
      "index",
      [](const Array& a) {
        return a[{Slice(std::nullopt, std::nullopt, -2), 1}];
      },
      x);
  check(
      "roll", [](const Array& a) { return tnp::roll(a, 5); }, x);
  check(
      "tile",
      [](const Array& a) {
        return tnp::tile(a, {2, 1});
      },
      x);
  check(
      "repeat",
      [](const Array& a) {
        return tnp::repeat(a, std::vector<int64_t>{1, 0, 2}, 0);
      },
      x);
  check(
      "diagonal", [](const Array& a) { return tnp::diagonal(a, 1); }, x);
  check(
      "tril", [](const Array& a) { return tnp::tril(a, -1); }, x);
  check(
      "pad_reflect",
      [](const Array& a) {
        return tnp::pad(a, {{2, 1}, {3, 0}}, {.mode = "reflect"});
      },
      x);
  check(
      "einsum",
      [](const Array& a) {
        return tnp::einsum("ij,kj->ik", {a, a});
      },
      x);
  check(
      "kron", [](const Array& a) { return tnp::kron(a, a[{Slice(0, 2)}]); }, x);
  EXPECT_EQ(compared, 9 * 12);
}

}  // namespace
