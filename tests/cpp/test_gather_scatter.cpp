// gather and the scatters against a naive reference written from XLA's semantics (one output
// or update element at a time, in double or the operand's own type), on random dimension
// numbers: indexed, collapsed, window and batching dims in random roles, index values beyond
// both ends, every mode. Then determinism over thread counts, derivatives (finite differences
// in float64 and the adjoint identity), vmap against the loop, jit against eager, and the shape
// rule's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tessera/lax_gather.h"
#include "util/gather_reference.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::Config;
using testing::contains;
using testing::Ints;
using testing::naive_gather;
using testing::naive_scatter;
using testing::random_array;
using testing::rng;
using testing::to_doubles;
using testing::X64Scope;

int64_t uniform(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng());
}

Config random_config() {
  Config c;
  const int64_t r = uniform(1, 3);
  for (int64_t d = 0; d < r; ++d) c.operand.push_back(uniform(1, 5));
  // Roles: 0 window (start 0), 1 indexed window, 2 indexed collapsed, 3 batching.
  Ints role(static_cast<size_t>(r));
  for (auto& x : role) x = uniform(0, 3);
  c.slice_sizes.assign(static_cast<size_t>(r), 1);
  Ints indexed, batching;
  for (int64_t d = 0; d < r; ++d) {
    if (role[d] == 0) c.slice_sizes[d] = uniform(0, c.operand[d]);
    if (role[d] == 1) c.slice_sizes[d] = uniform(1, c.operand[d]);
    if (role[d] == 1 || role[d] == 2) indexed.push_back(d);
    if (role[d] == 2) c.dn.collapsed_slice_dims.push_back(d);
    if (role[d] == 3) batching.push_back(d);
  }
  std::shuffle(indexed.begin(), indexed.end(), rng());
  c.dn.start_index_map = indexed;
  c.dn.operand_batching_dims = batching;
  // Point dims: the batching partners plus 0-2 free ones, in random order.
  Shape points;
  std::vector<int64_t> partner_of;  // per point dim: operand batching dim or -1
  for (int64_t d : batching) {
    points.push_back(c.operand[d]);
    partner_of.push_back(d);
  }
  for (int64_t k = uniform(0, 2); k > 0; --k) {
    points.push_back(uniform(0, 3));
    partner_of.push_back(-1);
  }
  std::vector<size_t> perm(points.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng());
  Shape pts;
  Ints partner;
  for (size_t i : perm) {
    pts.push_back(points[i]);
    partner.push_back(partner_of[i]);
  }
  for (int64_t d : batching)
    for (size_t j = 0; j < partner.size(); ++j)
      if (partner[j] == d) c.dn.start_indices_batching_dims.push_back(static_cast<int64_t>(j));
  c.indices = pts;
  c.indices.push_back(static_cast<int64_t>(indexed.size()));
  // Output: points and window dims interleaved at random, windows in operand order.
  Ints window;
  for (int64_t d = 0; d < r; ++d)
    if (role[d] == 0 || role[d] == 1) window.push_back(c.slice_sizes[d]);
  const int64_t out_rank = static_cast<int64_t>(window.size() + pts.size());
  Ints pos(static_cast<size_t>(out_rank));
  std::iota(pos.begin(), pos.end(), 0);
  std::shuffle(pos.begin(), pos.end(), rng());
  c.dn.offset_dims.assign(pos.begin(), pos.begin() + static_cast<int64_t>(window.size()));
  std::sort(c.dn.offset_dims.begin(), c.dn.offset_dims.end());
  size_t wi = 0, pi = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    c.out.push_back(contains(c.dn.offset_dims, i) ? window[wi++] : pts[pi++]);
  return c;
}

std::string describe(const Config& c) {
  return "operand " + shape_str(c.operand) + " indices " + shape_str(c.indices) + " " +
         param_value_str(c.dn.to_param()) + " slice_sizes " + shape_str(c.slice_sizes);
}

ScatterDimensionNumbers mirror(const GatherDimensionNumbers& g) {
  return {g.offset_dims, g.collapsed_slice_dims, g.start_index_map, g.operand_batching_dims,
          g.start_indices_batching_dims};
}

Array random_indices(const Config& c, DType dt = DType::kInt32) {
  std::vector<int32_t> v;
  const int64_t K = c.indices.back();
  int64_t n = 1;
  for (int64_t d : c.indices) n *= d;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = c.dn.start_index_map[i % K];
    v.push_back(static_cast<int32_t>(uniform(-2, c.operand[d] + 1)));
  }
  Array a = numpy::array(v, c.indices);
  return a.dtype() == dt ? a : lax::convert_element_type(a, dt);
}

const GatherScatterMode kModes[] = {GatherScatterMode::kClip, GatherScatterMode::kFillOrDrop,
                                    GatherScatterMode::kPromiseInBounds};

bool clamps(GatherScatterMode m) { return m != GatherScatterMode::kFillOrDrop; }

TEST(Gather, MatchesTheNaiveReferenceOnRandomDimensionNumbers) {
  X64Scope x64;
  for (int trial = 0; trial < 300; ++trial) {
    const Config c = random_config();
    for (GatherScatterMode m : kModes) {
      for (DType dt : {DType::kFloat64, DType::kInt32, DType::kFloat16}) {
        Array x = random_array(c.operand, dt, -3, 3);
        Array idx = random_indices(c, trial % 2 ? DType::kInt32 : DType::kUInt8);
        lax::GatherOptions o;
        o.mode = m;
        const double fill = dt == DType::kInt32 ? 7.0 : -1.5;
        if (trial % 3 == 0) o.fill_value = fill;
        Array got = lax::gather(x, idx, c.dn, c.slice_sizes, o);
        ASSERT_EQ(got.shape(), c.out);
        const double dflt = dt == DType::kInt32 ? std::numeric_limits<int32_t>::min()
                                                : std::numeric_limits<double>::quiet_NaN();
        std::vector<double> want =
            naive_gather(c, to_doubles(x), to_doubles(idx), clamps(m), o.fill_value ? fill : dflt);
        ASSERT_EQ(testing::compare(to_doubles(got), want, 0, 0), "")
            << "trial " << trial << " operand " << shape_str(c.operand) << " indices "
            << shape_str(c.indices);
      }
    }
  }
}

TEST(Scatter, EveryCombinerMatchesTheNaiveReference) {
  X64Scope x64;
  for (int trial = 0; trial < 200; ++trial) {
    const Config c = random_config();
    for (GatherScatterMode m : kModes) {
      lax::ScatterOptions o;
      o.mode = m;
      Array idx = random_indices(c);
      const auto dn = mirror(c.dn);
      for (DType dt : {DType::kFloat64, DType::kInt32}) {
        Array x = random_array(c.operand, dt, -3, 3);
        Array u = random_array(c.out, dt, -3, 3);
        const auto xs = to_doubles(x), is = to_doubles(idx), us = to_doubles(u);
        auto want = [&](const std::string& op) {
          return naive_scatter(c, xs, is, us, clamps(m), op, dt);
        };
        const std::string where = "trial " + std::to_string(trial) + " operand " +
                                  shape_str(c.operand) + " indices " + shape_str(c.indices);
        EXPECT_EQ(
            testing::compare(to_doubles(lax::scatter(x, idx, u, dn, o)), want("scatter"), 0, 0), "")
            << where;
        EXPECT_EQ(
            testing::compare(to_doubles(lax::scatter_add(x, idx, u, dn, o)), want("add"), 0, 0), "")
            << where;
        EXPECT_EQ(
            testing::compare(to_doubles(lax::scatter_mul(x, idx, u, dn, o)), want("mul"), 0, 0), "")
            << where;
        EXPECT_EQ(
            testing::compare(to_doubles(lax::scatter_min(x, idx, u, dn, o)), want("min"), 0, 0), "")
            << where;
        EXPECT_EQ(
            testing::compare(to_doubles(lax::scatter_max(x, idx, u, dn, o)), want("max"), 0, 0), "")
            << where;
      }
    }
  }
}

// table[ids] for a (rows, dim) table: the embedding lookup.
GatherDimensionNumbers rows_dn() { return {{1}, {0}, {0}, {}, {}}; }
ScatterDimensionNumbers rows_sdn() { return {{1}, {0}, {0}, {}, {}}; }

TEST(Scatter, DuplicatesGiveTheSameBitsForAnyThreadCount) {
  X64Scope x64;
  const int64_t rows = 512, dim = 64, n = 20000;
  Array table = random_array({rows, dim}, DType::kFloat32);
  std::vector<int32_t> ids(n);
  for (auto& i : ids) i = static_cast<int32_t>(uniform(0, rows - 1));
  Array idx = numpy::array(ids, {n, 1});
  Array u = random_array({n, dim}, DType::kFloat32);
  Array one, many;
  {
    testing::Threads t(1);
    one = lax::scatter_add(table, idx, u, rows_sdn());
  }
  {
    testing::Threads t(4);
    many = lax::scatter_add(table, idx, u, rows_sdn());
  }
  EXPECT_EQ(testing::compare(to_doubles(one), to_doubles(many), 0, 0), "");
  // And the sum equals a float64 accumulation closely (1.28M update elements into 32K: the
  // points split into 4 fixed chunks, each summed in order).
  std::vector<double> want = to_doubles(table);
  const auto us = to_doubles(u);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < dim; ++j) want[ids[i] * dim + j] += us[i * dim + j];
  EXPECT_EQ(testing::compare(to_doubles(many), want, 1e-4, 1e-4), "");
}

// Adds of many more update elements than operand elements split their points into chunks
// fixed by the sizes (gather_kernels.cpp): check them against sequential references, on every
// thread count, for rows, strided columns, dropped points, integers that wrap and signed zeros.
std::vector<Array> scatter_add_on_threads(const Array& x, const Array& idx, const Array& u,
                                          const ScatterDimensionNumbers& dn) {
  std::vector<Array> out;
  for (int t : {1, 2, 3, 5}) {
    testing::Threads th(t);
    out.push_back(lax::scatter_add(x, idx, u, dn));
  }
  return out;
}

TEST(Scatter, ChunkedAddsOfRowsAndColumnsMatchTheSumOnEveryThreadCount) {
  X64Scope x64;
  struct Case {
    Shape operand;
    ScatterDimensionNumbers dn;
    int64_t axis;  // the operand dim the index picks; the window spans the other one
  };
  // Rows: updates (n, 32) into (1024, 32); columns: updates (n, 64) into (64, 512), each
  // window a strided column.
  const std::vector<Case> cases = {{{1024, 32}, {{1}, {0}, {0}, {}, {}}, 0},
                                   {{64, 512}, {{1}, {1}, {1}, {}, {}}, 1}};
  for (const Case& c : cases) {
    const int64_t n = 40000, lim = c.operand[c.axis], w = c.operand[1 - c.axis];
    Array x = random_array(c.operand, DType::kFloat32);
    std::vector<int32_t> ids(n);
    for (auto& i : ids) i = static_cast<int32_t>(uniform(-3, lim + 2));  // some dropped
    Array idx = numpy::array(ids, {n, 1});
    Array u = random_array({n, w}, DType::kFloat32);
    const auto got = scatter_add_on_threads(x, idx, u, c.dn);
    for (size_t k = 1; k < got.size(); ++k)
      EXPECT_EQ(testing::compare(to_doubles(got[0]), to_doubles(got[k]), 0, 0), "") << k;
    std::vector<double> want = to_doubles(x);
    const auto us = to_doubles(u);
    for (int64_t p = 0; p < n; ++p) {
      if (ids[p] < 0 || ids[p] >= lim) continue;
      for (int64_t j = 0; j < w; ++j) {
        const int64_t at = c.axis == 0 ? ids[p] * w + j : j * lim + ids[p];
        want[at] += us[p * w + j];
      }
    }
    // ~80 (rows) or ~80 (columns) float32 terms of size <= 2 per element.
    EXPECT_EQ(testing::compare(to_doubles(got[0]), want, 0, 2e-4), "") << c.axis;
  }
}

TEST(Scatter, ChunkedIntegerAddsWrapExactlyAsTheSequentialSum) {
  const int64_t rows = 256, dim = 16, n = 70000;  // 1.12M update elements into 4096
  std::vector<int32_t> xs(rows * dim), us(n * dim), ids(n);
  for (auto& v : xs) v = static_cast<int32_t>(uniform(-2000000000, 2000000000));
  for (auto& v : us) v = static_cast<int32_t>(uniform(-2000000000, 2000000000));
  for (auto& i : ids) i = static_cast<int32_t>(uniform(0, rows - 1));
  std::vector<uint32_t> want(xs.begin(), xs.end());
  for (int64_t p = 0; p < n; ++p)
    for (int64_t j = 0; j < dim; ++j)
      want[ids[p] * dim + j] += static_cast<uint32_t>(us[p * dim + j]);
  const auto got = scatter_add_on_threads(numpy::array(xs, {rows, dim}), numpy::array(ids, {n, 1}),
                                          numpy::array(us, {n, dim}), rows_sdn());
  for (const Array& g : got) {
    ASSERT_EQ(g.dtype(), DType::kInt32);
    const int32_t* d = static_cast<const int32_t*>(g.raw_data());
    int64_t bad = 0;
    for (int64_t i = 0; i < rows * dim; ++i) bad += static_cast<uint32_t>(d[i]) != want[i];
    EXPECT_EQ(bad, 0);
  }
}

TEST(Scatter, ChunkedFloatAddsKeepSignedZerosAndNonFiniteValues) {
  const int64_t rows = 64, dim = 16, n = 70000;  // 1.12M update elements into 1024: 8 chunks
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs(rows * dim, -0.0f), us(n * dim, -0.0f);
  std::vector<int32_t> ids(n);
  for (auto& i : ids) i = static_cast<int32_t>(uniform(0, rows - 2));  // the last row: no updates
  // Row 0 column 1: +0 into -0 once, in the middle chunk; column 2: +inf once and -inf once
  // (NaN); column 3: a NaN.
  ids[n / 2] = 0;
  us[(n / 2) * dim + 1] = 0.0f;
  ids[n / 3] = 0;
  ids[2 * n / 3] = 0;
  us[(n / 3) * dim + 2] = inf;
  us[(2 * n / 3) * dim + 2] = -inf;
  us[(n / 4) * dim + 3] = std::numeric_limits<float>::quiet_NaN();
  ids[n / 4] = 0;
  xs[(rows - 1) * dim] = 0.0f;  // +0 with no updates stays +0
  const auto got = scatter_add_on_threads(numpy::array(xs, {rows, dim}), numpy::array(ids, {n, 1}),
                                          numpy::array(us, {n, dim}), rows_sdn());
  for (const Array& g : got) {
    const float* d = static_cast<const float*>(g.raw_data());
    for (int64_t i = 0; i < rows * dim; ++i) {
      if (i == 1 || i == (rows - 1) * dim) {
        EXPECT_TRUE(d[i] == 0.0f && !std::signbit(d[i])) << i;  // +0
      } else if (i == 2 || i == 3) {
        EXPECT_TRUE(std::isnan(d[i])) << i;
      } else {
        EXPECT_TRUE(d[i] == 0.0f && std::signbit(d[i])) << i;  // -0 + -0 + ... is -0
      }
    }
  }
}

TEST(Gather, LargeRowGatherMatchesTheReferenceWithThreads) {
  X64Scope x64;
  testing::Threads t(3);
  const int64_t rows = 1000, dim = 33, n = 50000;
  Array table = random_array({rows, dim}, DType::kFloat32);
  std::vector<int32_t> ids(n);
  for (auto& i : ids) i = static_cast<int32_t>(uniform(-5, rows + 5));
  Array idx = numpy::array(ids, {n, 1});
  Array got = lax::gather(table, idx, rows_dn(), {1, dim});
  const auto ts = to_doubles(table);
  std::vector<double> want;
  for (int32_t i : ids) {
    const int64_t r = std::clamp<int64_t>(i, 0, rows - 1);
    want.insert(want.end(), ts.begin() + r * dim, ts.begin() + (r + 1) * dim);
  }
  EXPECT_EQ(testing::compare(to_doubles(got), want, 0, 0), "");
}

// ---------------------------------------------------------------- derivatives

double dot_all(const Array& a, const Array& b) {
  const auto x = to_doubles(a), y = to_doubles(b);
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

TEST(Gather, VjpIsTheAdjointAndJvpIsTheGatherOfTheTangent) {
  X64Scope x64;
  for (int trial = 0; trial < 60; ++trial) {
    const Config c = random_config();
    for (GatherScatterMode m : kModes) {
      lax::GatherOptions o;
      o.mode = m;
      Array idx = random_indices(c);
      auto f = [&](const Array& x) { return lax::gather(x, idx, c.dn, c.slice_sizes, o); };
      Array x = random_array(c.operand, DType::kFloat64);
      Array t = random_array(c.operand, DType::kFloat64);
      Array ct = random_array(c.out, DType::kFloat64);
      auto [y, ty] = jvp(f, x, t);
      o.fill_value = 0.0;
      EXPECT_EQ(testing::compare(to_doubles(ty),
                                 to_doubles(lax::gather(t, idx, c.dn, c.slice_sizes, o)), 0, 0),
                "")
          << describe(c) << " idx " << idx << " x " << x << " t " << t << " ty " << ty << " mode "
          << int(m);
      o.fill_value.reset();
      auto [y2, pullback] = vjp(f, x);
      auto [xbar] = pullback(ct);
      // <J t, ct> = <t, J^T ct>
      EXPECT_NEAR(dot_all(ty, ct), dot_all(t, xbar), 1e-9 * (1 + std::abs(dot_all(ty, ct))))
          << "trial " << trial;
    }
  }
}

// Central differences of f: R^n -> R^m (float64), compared with the JVP.
void check_jvp_fd(const std::function<Array(const Array&)>& f, const Array& x, double tol,
                  const std::string& where) {
  Array t = random_array(x.shape(), DType::kFloat64);
  auto [y, ty] = jvp(f, x, t);
  const double h = 1e-6;
  Array xp = lax::add(x, lax::mul(t, numpy::scalar(h, DType::kFloat64)));
  Array xm = lax::sub(x, lax::mul(t, numpy::scalar(h, DType::kFloat64)));
  const auto fp = to_doubles(f(xp)), fm = to_doubles(f(xm));
  std::vector<double> fd(fp.size());
  for (size_t i = 0; i < fp.size(); ++i) fd[i] = (fp[i] - fm[i]) / (2 * h);
  EXPECT_EQ(testing::compare(to_doubles(ty), fd, tol, tol), "") << where;
}

// Updates and operand values with distinct magnitudes, so min/max never tie.
Array distinct_values(const Shape& s, double offset) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = offset + 0.37 * static_cast<double>(i) + 0.01 * std::sin(i);
  std::shuffle(v.begin(), v.end(), rng());
  return numpy::array(v, s);
}

TEST(Scatter, DerivativesMatchFiniteDifferences) {
  X64Scope x64;
  for (int trial = 0; trial < 40; ++trial) {
    const Config c = random_config();
    const auto dn = mirror(c.dn);
    Array idx = random_indices(c);
    for (GatherScatterMode m : kModes) {
      lax::ScatterOptions o;
      o.mode = m;
      Array x = distinct_values(c.operand, -5.0);
      Array u = distinct_values(c.out, 0.1);
      const std::string where = "trial " + std::to_string(trial);
      using Op = Array (*)(const Array&, const Array&, const Array&, const ScatterDimensionNumbers&,
                           const lax::ScatterOptions&);
      for (Op op :
           {Op(lax::scatter), Op(lax::scatter_add), Op(lax::scatter_min), Op(lax::scatter_max)}) {
        check_jvp_fd([&](const Array& a) { return op(a, idx, u, dn, o); }, x, 1e-6, where + " x");
        check_jvp_fd([&](const Array& b) { return op(x, idx, b, dn, o); }, u, 1e-6, where + " u");
        // The adjoint identity of the VJP with respect to both.
        auto f = [&](const Array& a, const Array& b) { return op(a, idx, b, dn, o); };
        Array tx = random_array(x.shape(), DType::kFloat64);
        Array tu = random_array(u.shape(), DType::kFloat64);
        auto [y, pb] = vjp(f, x, u);
        Array ct = random_array(y.shape(), DType::kFloat64);
        auto [cx, cu] = pb(ct);
        auto [y1, ty] = jvp(f, std::make_tuple(x, u), std::make_tuple(tx, tu));
        EXPECT_NEAR(dot_all(ty, ct), dot_all(tx, cx) + dot_all(tu, cu),
                    1e-9 * (1 + std::abs(dot_all(ty, ct))))
            << where;
      }
      // scatter_mul: the operand always, the updates with unique indices only.
      // Factors near 1: a product over many duplicates stays of order 1, so the central
      // difference keeps its precision (with updates up to ~40, four duplicates make values
      // of 1e7 and a difference error of 1e-4).
      Array um = random_array(c.out, DType::kFloat64, 0.8, 1.25);
      check_jvp_fd([&](const Array& a) { return lax::scatter_mul(a, idx, um, dn, o); }, x, 1e-6,
                   where + " mul x " + describe(c));
    }
  }
}

TEST(Scatter, MulGradientInTheUpdatesNeedsUniqueIndices) {
  X64Scope x64;
  Array x = random_array({5}, DType::kFloat64);
  Array idx = numpy::array(std::vector<int32_t>{1, 3}, {2, 1});
  Array u = random_array({2}, DType::kFloat64);
  ScatterDimensionNumbers dn{{}, {0}, {0}, {}, {}};
  auto f = [&](const Array& b) { return numpy::sum(lax::scatter_mul(x, idx, b, dn)); };
  EXPECT_ERROR(NotImplementedError, grad(f)(u), "unique_indices=True");
  lax::ScatterOptions o;
  o.unique_indices = true;
  auto g = [&](const Array& b) { return numpy::sum(lax::scatter_mul(x, idx, b, dn, o)); };
  const auto gx = to_doubles(grad(g)(u));
  const auto xs = to_doubles(x);
  EXPECT_DOUBLE_EQ(gx[0], xs[1]);
  EXPECT_DOUBLE_EQ(gx[1], xs[3]);
}

TEST(Scatter, SetGradientGoesToTheLastDuplicate) {
  X64Scope x64;
  Array x = random_array({4}, DType::kFloat64);
  Array idx = numpy::array(std::vector<int32_t>{2, 0, 2, 9}, {4, 1});
  ScatterDimensionNumbers dn{{}, {0}, {0}, {}, {}};
  auto f = [&](const Array& a, const Array& b) {
    return numpy::sum(
        lax::mul(lax::scatter(a, idx, b, dn), numpy::array(std::vector<double>{1, 2, 3, 4}, {4})));
  };
  Array u = random_array({4}, DType::kFloat64);
  auto [gx, gu] = grad(f, argnums<0, 1>)(x, u);
  EXPECT_EQ(to_doubles(gx), (std::vector<double>{0, 2, 0, 4}));
  EXPECT_EQ(to_doubles(gu), (std::vector<double>{0, 1, 3, 0}));  // index 9 is dropped
}

// ---------------------------------------------------------------- vmap and jit

TEST(Gather, VmapOfEveryOperandCombinationIsOneGather) {
  X64Scope x64;
  for (int trial = 0; trial < 60; ++trial) {
    const Config c = random_config();
    const int64_t B = uniform(1, 3);
    Shape xb = c.operand, ib = c.indices;
    xb.insert(xb.begin(), B);
    ib.insert(ib.begin(), B);
    Array xs = random_array(xb, DType::kFloat32);
    std::vector<Array> idxs;
    for (int64_t b = 0; b < B; ++b) idxs.push_back(random_indices(c));
    Array is = numpy::stack(idxs);
    lax::GatherOptions o;
    o.mode = kModes[trial % 3];
    auto f = [&](const Array& x, const Array& i) {
      return lax::gather(x, i, c.dn, c.slice_sizes, o);
    };
    for (int which = 0; which < 3; ++which) {
      Array got;
      std::vector<Array> loop;
      if (which == 0) {
        got = vmap([&](const Array& x) { return f(x, idxs[0]); })(xs);
        for (int64_t b = 0; b < B; ++b) loop.push_back(f(xs[b], idxs[0]));
      } else if (which == 1) {
        got = vmap([&](const Array& i) { return f(xs[0], i); })(is);
        for (int64_t b = 0; b < B; ++b) loop.push_back(f(xs[0], idxs[b]));
      } else {
        got = vmap(f)(xs, is);
        for (int64_t b = 0; b < B; ++b) loop.push_back(f(xs[b], idxs[b]));
      }
      EXPECT_EQ(testing::compare(to_doubles(got), to_doubles(numpy::stack(loop)), 0, 0), "")
          << "trial " << trial << " which " << which;
      // One gather, no loop.
      std::string text;
      if (which == 2) text = to_string(make_jaxpr(vmap(f))(xs, is));
      if (which == 2) {
        EXPECT_NE(text.find("gather["), std::string::npos) << text;
        EXPECT_EQ(text.find("while"), std::string::npos) << text;
      }
    }
  }
}

TEST(Scatter, VmapMatchesTheLoopAndJitMatchesEager) {
  X64Scope x64;
  for (int trial = 0; trial < 60; ++trial) {
    const Config c = random_config();
    const auto dn = mirror(c.dn);
    const int64_t B = uniform(1, 3);
    std::vector<Array> xs, is, us;
    for (int64_t b = 0; b < B; ++b) {
      xs.push_back(random_array(c.operand, DType::kFloat32));
      is.push_back(random_indices(c));
      us.push_back(random_array(c.out, DType::kFloat32));
    }
    lax::ScatterOptions o;
    o.mode = kModes[trial % 3];
    auto f = [&](const Array& x, const Array& i, const Array& u) {
      return lax::scatter_add(x, i, u, dn, o);
    };
    std::vector<Array> loop, loop_shared_idx;
    for (int64_t b = 0; b < B; ++b) {
      loop.push_back(f(xs[b], is[b], us[b]));
      loop_shared_idx.push_back(f(xs[b], is[0], us[b]));
    }
    Array got = vmap(f)(numpy::stack(xs), numpy::stack(is), numpy::stack(us));
    EXPECT_EQ(testing::compare(to_doubles(got), to_doubles(numpy::stack(loop)), 0, 0), "") << trial;
    Array got2 = vmap([&](const Array& x, const Array& u) { return f(x, is[0], u); })(
        numpy::stack(xs), numpy::stack(us));
    EXPECT_EQ(testing::compare(to_doubles(got2), to_doubles(numpy::stack(loop_shared_idx)), 0, 0),
              "")
        << trial;
    Array jitted = jit(f)(xs[0], is[0], us[0]);
    EXPECT_EQ(testing::compare(to_doubles(jitted), to_doubles(loop[0]), 0, 0), "") << trial;
    auto g = [&](const Array& x, const Array& i) { return lax::gather(x, i, c.dn, c.slice_sizes); };
    EXPECT_EQ(testing::compare(to_doubles(jit(g)(xs[0], is[0])), to_doubles(g(xs[0], is[0])), 0, 0),
              "");
  }
}

// ---------------------------------------------------------------- errors

TEST(Gather, ShapeRuleErrorsNameTheProblem) {
  X64Scope x64;
  Array x = random_array({4, 5}, DType::kFloat32);
  Array idx = numpy::array(std::vector<int32_t>{1, 2}, {2, 1});
  EXPECT_ERROR(TypeError,
               lax::gather(x, lax::convert_element_type(idx, DType::kFloat32), rows_dn(), {1, 5}),
               "integer type");
  EXPECT_ERROR(TypeError, lax::gather(x, idx, rows_dn(), {1}), "one slice size for every input");
  EXPECT_ERROR(TypeError, lax::gather(x, idx, rows_dn(), {1, 6}), "out of range");
  EXPECT_ERROR(TypeError, lax::gather(x, idx, rows_dn(), {2, 5}),
               "collapse slice dims with bound 1");
  EXPECT_ERROR(TypeError, lax::gather(x, idx, {{1}, {0}, {0, 1}, {}, {}}, {1, 5}),
               "elements in start_index_map");
  EXPECT_ERROR(TypeError, lax::gather(x, idx, {{5}, {0}, {0}, {}, {}}, {1, 5}),
               "must lie in the range");
  EXPECT_ERROR(TypeError, lax::gather(x, idx, {{1}, {}, {0}, {}, {}}, {1, 5}), "offset dimension");
  ScatterDimensionNumbers sdn = rows_sdn();
  EXPECT_ERROR(TypeError, lax::scatter_add(x, idx, random_array({2, 5}, DType::kFloat64), sdn),
               "same dtypes");
  EXPECT_ERROR(TypeError, lax::scatter_add(x, idx, random_array({3, 5}, DType::kFloat32), sdn),
               "scatter dimensions of updates");
  EXPECT_ERROR(TypeError, lax::scatter_add(x, idx, random_array({2, 6}, DType::kFloat32), sdn),
               "window dimensions of updates");
  Array ub = random_array({2, 5}, DType::kFloat32);
  EXPECT_ERROR(TypeError, lax::scatter_sub(lax::ne(x, x), idx, lax::ne(ub, ub), sdn), "bool");
}

TEST(Gather, FillDefaultsFollowJax) {
  X64Scope x64;
  Array idx = numpy::array(std::vector<int32_t>{-1}, {1, 1});
  GatherDimensionNumbers dn{{}, {0}, {0}, {}, {}};
  lax::GatherOptions o;
  o.mode = GatherScatterMode::kFillOrDrop;
  auto first = [&](DType dt) {
    return to_doubles(lax::gather(random_array({3}, dt), idx, dn, {1}, o))[0];
  };
  EXPECT_TRUE(std::isnan(first(DType::kFloat32)));
  EXPECT_TRUE(std::isnan(first(DType::kBFloat16)));
  EXPECT_EQ(first(DType::kInt8), -128);
  EXPECT_EQ(first(DType::kUInt16), 65535);
  EXPECT_EQ(first(DType::kBool), 1);
  // promise_in_bounds (the default) clamps on CPU
  Array x = numpy::array(std::vector<float>{1, 2, 3}, {3});
  EXPECT_EQ(to_doubles(lax::gather(x, idx, dn, {1}))[0], 1.0);
}

}  // namespace
}  // namespace tessera
