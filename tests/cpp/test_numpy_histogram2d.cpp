// histogramdd / histogram2d, unique along an axis (numpy_index_funcs.h) and vectorize
// (numpy_vectorize.h).
// References: NumPy through the oracle (tests/oracle/oracle_index_funcs.py: np.histogramdd on
// the edges jnp computes, np.unique(axis=)) on fresh random inputs — counts, explicit edges,
// ranges, weights, density, empty samples; naive loops written here for histogram2d's counts
// and for vectorize (with and without a gufunc signature), under jit, vmap and grad (central
// finite differences in float64). The seed is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/jit.h"
#include "tessera/numpy_index_funcs.h"
#include "tessera/numpy_vectorize.h"
#include "tessera/transforms.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::json_bool;
using testing::json_int;
using testing::json_obj;
using testing::json_str;
using testing::OracleBatch;
using testing::random_array;
using testing::rng;
using testing::to_doubles;
using testing::X64Scope;
namespace tnp = numpy;

constexpr DType kI32 = DType::kInt32, kF32 = DType::kFloat32, kF64 = DType::kFloat64;

int64_t uniform_int(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng());
}

// Sorted, distinct edges from lo upwards in steps of 0.5..2.
std::vector<double> random_edges(int64_t n, double lo) {
  std::vector<double> e;
  for (int64_t i = 0; i < n; ++i) e.push_back(lo += 0.5 * static_cast<double>(uniform_int(1, 4)));
  return e;
}

tnp::HistogramRange R(double lo, double hi) { return std::pair<double, double>{lo, hi}; }

std::string json_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + items[i];
  return s + "]";
}

// ---------------------------------------------------------------- the oracle

void add_histogramdd_cases(OracleBatch& b) {
  for (DType dt : {kF32, kI32, kF64}) {
    X64Scope x64(dt == kF64);
    const int64_t D = uniform_int(1, 3);
    const int64_t N = uniform_int(0, 40) * (uniform_int(0, 9) > 0 ? 1 : 0);  // empty now and then
    const Array sample = random_array({N, D}, dt, -3, 3);
    // Per dimension: a count (with or without a range) or explicit edges.
    std::vector<tnp::HistogramBins> bins;
    std::vector<tnp::HistogramRange> ranges;
    std::vector<std::string> jbins, jranges;
    std::vector<Array> edge_inputs;
    bool any_range = false;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t kind = uniform_int(0, 2);
      if (kind == 2) {
        const std::vector<double> e = random_edges(uniform_int(2, 5), -3.5);
        const Array ea =
            testing::host_array(e, {static_cast<int64_t>(e.size())}, dt == kI32 ? kF32 : dt);
        bins.emplace_back(ea);
        edge_inputs.push_back(ea);
        jbins.push_back("null");
        ranges.emplace_back();
        jranges.push_back("null");
      } else {
        const int64_t n = uniform_int(1, 5);
        bins.emplace_back(n);
        jbins.push_back(json_int(n));
        if (kind == 1) {
          const double lo = -2.5 + 0.5 * static_cast<double>(uniform_int(0, 2));
          ranges.push_back(R(lo, lo + 4.0));
          jranges.push_back(testing::json_nums({lo, lo + 4.0}));
          any_range = true;
        } else {
          ranges.emplace_back();
          jranges.push_back("null");
        }
      }
    }
    const Array w = random_array({N}, dt == kI32 ? kF32 : dt, 0.1, 2);
    for (bool weights : {false, true})
      for (bool density : {false, true}) {
        if (density && N == 0) continue;  // 0 / 0
        std::vector<Array> ins{sample};
        if (weights) ins.push_back(w);
        ins.insert(ins.end(), edge_inputs.begin(), edge_inputs.end());
        const std::optional<Array> wopt = weights ? std::optional<Array>(w) : std::nullopt;
        for (int64_t out = -1; out < (weights || density ? 0 : D); ++out) {
          const std::string p = json_obj({{"bins", json_list(jbins)},
                                          {"ranges", any_range ? json_list(jranges) : "null"},
                                          {"weights", json_bool(weights)},
                                          {"density", json_bool(density)},
                                          {"out", json_int(out)}});
          b.add("histogramdd", "idx.histogramdd", p, ins, [&] {
            tnp::HistogramDD r = tnp::histogramdd(
                sample, bins, any_range ? ranges : std::vector<tnp::HistogramRange>{}, wopt,
                density);
            return out < 0 ? r.hist : r.edges[static_cast<size_t>(out)];
          });
        }
      }
  }
}

void add_unique_axis_cases(OracleBatch& b) {
  for (DType dt : {kI32, kF32}) {
    const Shape s = testing::random_shape(1, 3, 4, 0.0);
    // Few distinct values in short slices, so that slices repeat (+ 0: no -0.0).
    const Array a = tnp::astype(tnp::add(tnp::round(random_array(s, kF32, -1, 1)), 0.0), dt);
    const int64_t nd = static_cast<int64_t>(s.size());
    const int64_t axis = uniform_int(-nd, nd - 1);
    for (const char* out : {"values", "index", "inverse", "counts"}) {
      tnp::UniqueOptions o;
      o.axis = axis;
      o.return_index = o.return_inverse = o.return_counts = true;
      b.add(std::string("unique axis ") + out, "idx.unique_axis",
            json_obj({{"axis", json_int(axis)}, {"out", json_str(out)}}), {a}, [&] {
              const tnp::UniqueResult r = tnp::unique(a, o);
              const std::string w = out;
              return w == "values"    ? r.values
                     : w == "index"   ? r.indices
                     : w == "inverse" ? r.inverse
                                      : r.counts;
            });
    }
  }
}

TEST(Histogram2d, MatchNumpy) {
  TESSERA_REQUIRE_ORACLE();
  OracleBatch b("histogramdd", 2.0);
  do {
    add_histogramdd_cases(b);
    add_unique_axis_cases(b);
  } while (b.time_left() && b.size() < 1500);
  const auto sum = b.run();
  EXPECT_GT(sum.compared, 60);
  EXPECT_EQ(sum.ops.size(), 2u);
}

// ---------------------------------------------------------------- naive references

TEST(Histogram2d, CountsMatchLoop) {
  for (int rep = 0; rep < 5; ++rep) {
    const int64_t n = uniform_int(0, 60);
    const Array x = random_array({n}, kF32, -2, 2), y = random_array({n}, kF32, -1, 3);
    const Array w = random_array({n}, kF32, 0, 1);
    const std::vector<double> xe = random_edges(uniform_int(2, 6), -2.5);
    const int64_t ny = uniform_int(1, 5);
    const Array xea = testing::host_array(xe, {static_cast<int64_t>(xe.size())}, kF32);
    const std::vector<Array> r =
        tnp::histogram2d(x, y, {xea, ny}, {tnp::HistogramRange(), R(-1.0, 3.0)}, w);
    ASSERT_EQ(r.size(), 3u);
    const int64_t nx = static_cast<int64_t>(xe.size()) - 1;
    EXPECT_EQ(r[0].shape(), (Shape{nx, ny}));
    EXPECT_EQ(r[0].dtype(), kF32);
    // The loop: each point in the bin whose edges hold it (the last bin closed on the right).
    const std::vector<double> xs = to_doubles(x), ys = to_doubles(y), ws = to_doubles(w);
    const std::vector<double> xr = to_doubles(r[1]), yr = to_doubles(r[2]);
    EXPECT_EQ(compare(xr, to_doubles(xea), 0, 0), "");
    EXPECT_EQ(yr.front(), -1.0);
    EXPECT_EQ(yr.back(), 3.0);
    auto bin = [](double v, const std::vector<double>& e) -> int64_t {
      const size_t k = e.size();
      if (!(v >= e[0] && v <= e[k - 1])) return -1;
      for (size_t i = 0; i + 1 < k; ++i)
        if (v < e[i + 1]) return static_cast<int64_t>(i);
      return static_cast<int64_t>(k) - 2;
    };
    std::vector<double> want(static_cast<size_t>(nx * ny), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t bx = bin(xs[i], xr), by = bin(ys[i], yr);
      if (bx >= 0 && by >= 0) want[static_cast<size_t>(bx * ny + by)] += ws[i];
    }
    EXPECT_EQ(compare(to_doubles(r[0]), want, 1e-6, 1e-6), "");
    // Without weights: integer counts (the default int), as JAX.
    const Array c = tnp::histogram2d(x, y, {xea, ny}, {tnp::HistogramRange(), R(-1.0, 3.0)})[0];
    EXPECT_EQ(c.dtype(), kI32);
  }
}

TEST(Histogram2d, JitVmapAndGradMatchEager) {
  const Array x = random_array({30}, kF32, -2, 2), y = random_array({30}, kF32, -2, 2);
  // Counts with the data's (traced) range and with a static one.
  auto f = [](const Array& a, const Array& b) {
    return tnp::histogram2d(a, b, {int64_t{3}}, {R(-2.0, 2.0), R(-2.0, 2.0)})[0];
  };
  EXPECT_EQ(compare(to_doubles(tessera::jit(f)(x, y)), to_doubles(f(x, y)), 0, 0), "");
  auto g = [](const Array& a, const Array& b) { return tnp::histogram2d(a, b, {int64_t{4}}); };
  const std::vector<Array> jg = tessera::jit(g)(x, y), eg = g(x, y);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(compare(to_doubles(jg[i]), to_doubles(eg[i]), 1e-6, 1e-6), "") << i;
  // A traced range (rank-0 arrays): the same edges as the numbers.
  auto h = [](const Array& a, const Array& lo, const Array& hi) {
    return tnp::histogramdd(lax::reshape(a, {a.size(), 1}), {int64_t{5}},
                            {tnp::HistogramRange(lo, hi)})
        .edges[0];
  };
  const Array lo = tnp::array({-1.0}, kF32), hi = tnp::array({1.5}, kF32);
  const Array lo0 = lax::reshape(lo, {}), hi0 = lax::reshape(hi, {});
  EXPECT_EQ(compare(to_doubles(tessera::jit(h)(x, lo0, hi0)),
                    to_doubles(tnp::histogram_bin_edges(x, int64_t{5}, R(-1.0, 1.5))), 1e-6, 1e-6),
            "");
  // vmap over rows of points equals a loop.
  const Array xs = random_array({4, 10}, kF32, -2, 2), ys = random_array({4, 10}, kF32, -2, 2);
  const Array vm = tessera::vmap(f)(xs, ys);
  for (int64_t i = 0; i < 4; ++i) {
    const Array xi = lax::reshape(lax::slice(xs, {i, 0}, {i + 1, 10}), {10});
    const Array yi = lax::reshape(lax::slice(ys, {i, 0}, {i + 1, 10}), {10});
    const Array row = lax::reshape(lax::slice(vm, {i, 0, 0}, {i + 1, 3, 3}), {3, 3});
    EXPECT_EQ(compare(to_doubles(row), to_doubles(f(xi, yi)), 0, 0), "") << i;
  }
  // d/dw sum(c * hist(weights=w)) = c at each point's bin (0 outside the range).
  const Array c = random_array({3, 3}, kF32);
  auto loss = [&](const Array& w) {
    return lax::reduce_sum(
        tnp::multiply(c, tnp::histogram2d(x, y, {int64_t{3}}, {R(-1.0, 1.0), R(-1.0, 1.0)}, w)[0]),
        {0, 1});
  };
  const Array gw = tessera::grad(loss)(tnp::ones({30}));
  const std::vector<double> xv = to_doubles(x), yv = to_doubles(y), cv = to_doubles(c);
  std::vector<double> want(30, 0.0);
  for (size_t i = 0; i < 30; ++i) {
    auto bin = [](double v) -> int64_t {
      if (!(v >= -1.0 && v <= 1.0)) return -1;
      return std::min<int64_t>(2, static_cast<int64_t>(std::floor((v + 1.0) / (2.0 / 3.0))));
    };
    const int64_t bx = bin(xv[i]), by = bin(yv[i]);
    if (bx >= 0 && by >= 0) want[i] = cv[static_cast<size_t>(bx * 3 + by)];
  }
  EXPECT_EQ(compare(to_doubles(gw), want, 0, 0), "");
}

TEST(Histogram2d, Errors) {
  const Array s = tnp::zeros({5, 3});
  EXPECT_ERROR(ValueError, tnp::histogramdd(tnp::zeros({5})), "shape (N, D)");
  EXPECT_ERROR(ValueError, tnp::histogramdd(s, {int64_t{2}, int64_t{3}}),
               "should be a bin for each dimension");
  EXPECT_ERROR(ValueError, tnp::histogramdd(s, {int64_t{2}}, {R(0.0, 1.0)}),
               "range must be a sequence of 3 pairs or Nones");
  EXPECT_ERROR(ValueError, tnp::histogramdd(s, {int64_t{2}}, {}, tnp::ones({4})),
               "should have one weight for each sample");
  EXPECT_ERROR(ValueError, tnp::histogram2d(tnp::zeros({3}), tnp::zeros({4})),
               "x and y must be 1-D arrays of the same length");
  EXPECT_ERROR(ConcretizationError, tessera::jit([](const Array& a) {
                 return tnp::unique(a,
                                    [] {
                                      tnp::UniqueOptions o;
                                      o.axis = 0;
                                      return o;
                                    }())
                     .values;
               })(tnp::zeros({3, 2})),
               "The size argument of jnp.unique must be statically specified");
  tnp::UniqueOptions bad;
  bad.axis = 2;
  EXPECT_ERROR(ValueError, tnp::unique(tnp::zeros({3, 2}), bad), "out of bounds");
  // JAX: a zero-size input padded to a nonzero size needs fill_value.
  tnp::UniqueOptions sized;
  sized.size = 2;
  EXPECT_ERROR(ValueError, tnp::unique(tnp::zeros({0}), sized),
               "for zero-sized input with nonzero size argument, fill_value must be specified");
  sized.axis = 0;
  EXPECT_ERROR(ValueError, tnp::unique(tnp::zeros({0, 2}), sized),
               "for zero-sized input with nonzero size argument, fill_value must be specified");
}

TEST(Histogram2d, UniquePaddingFollowsJax) {
  // Random values with repeats; padded to more than the unique count: the values pad with the
  // smallest, the indices with the smallest's first index (JAX's perm[nonzero(mask, size)[0]]),
  // the counts with 0. A loop finds the expected values.
  const int64_t n = uniform_int(1, 12);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = static_cast<double>(uniform_int(-3, 3));
  const Array a = testing::host_array(v, {n}, kI32);
  std::vector<double> uniq, first, counts;
  for (int64_t i = 0; i < n; ++i) {
    size_t j = 0;
    while (j < uniq.size() && uniq[j] < v[i]) ++j;
    if (j < uniq.size() && uniq[j] == v[i]) {
      counts[j] += 1;
      continue;
    }
    uniq.insert(uniq.begin() + static_cast<std::ptrdiff_t>(j), v[i]);
    first.insert(first.begin() + static_cast<std::ptrdiff_t>(j), static_cast<double>(i));
    counts.insert(counts.begin() + static_cast<std::ptrdiff_t>(j), 1.0);
  }
  const int64_t k = static_cast<int64_t>(uniq.size()), size = k + 3;
  tnp::UniqueOptions o;
  o.return_index = o.return_counts = true;
  o.size = size;
  const tnp::UniqueResult r = tnp::unique(a, o);
  std::vector<double> wv = uniq, wi = first, wc = counts;
  wv.resize(static_cast<size_t>(size), uniq[0]);
  wi.resize(static_cast<size_t>(size), first[0]);
  wc.resize(static_cast<size_t>(size), 0.0);
  EXPECT_EQ(compare(to_doubles(r.values), wv, 0, 0), "");
  EXPECT_EQ(compare(to_doubles(r.indices), wi, 0, 0), "");
  EXPECT_EQ(compare(to_doubles(r.counts), wc, 0, 0), "");
  // Truncated: the smallest size values with their exact counts.
  o.size = std::max<int64_t>(k - 1, 0);
  const tnp::UniqueResult t = tnp::unique(a, o);
  wc = counts;
  wc.resize(static_cast<size_t>(*o.size));
  EXPECT_EQ(compare(to_doubles(t.counts), wc, 0, 0), "");
}

// ---------------------------------------------------------------- vectorize

// The value of f at every point of the broadcast loop shape, written as a loop over the flat
// loop index (each argument's core sliced out by hand).
Array loop_reference(const flat::Fun& f, const std::vector<Array>& args,
                     const std::vector<int64_t>& core_ranks, const Shape& loop_shape) {
  const int64_t total = shape_size(loop_shape);
  std::vector<Array> rows;
  for (int64_t p = 0; p < total; ++p) {
    // The loop coordinates of p, then each argument's (broadcast) element there.
    std::vector<int64_t> coord(loop_shape.size());
    int64_t rem = p;
    for (size_t d = loop_shape.size(); d-- > 0;) {
      coord[d] = rem % loop_shape[d];
      rem /= loop_shape[d];
    }
    std::vector<Array> xs;
    for (size_t i = 0; i < args.size(); ++i) {
      const Array& a = args[i];
      const size_t nl = a.ndim() - core_ranks[i];
      std::vector<int64_t> start(a.ndim(), 0), stop = a.shape();
      for (size_t d = 0; d < nl; ++d) {
        const size_t bd = loop_shape.size() - nl + d;
        const int64_t c = a.shape()[d] == 1 ? 0 : coord[bd];
        start[d] = c;
        stop[d] = c + 1;
      }
      Shape core(a.shape().begin() + static_cast<std::ptrdiff_t>(nl), a.shape().end());
      xs.push_back(lax::reshape(lax::slice(a, start, stop), core));
    }
    rows.push_back(f(xs)[0]);
  }
  Shape out = loop_shape;
  const Shape& cs = rows.at(0).shape();
  out.insert(out.end(), cs.begin(), cs.end());
  return lax::reshape(tnp::stack(rows, 0), out);
}

TEST(Vectorize, ElementwiseMatchesLoop) {
  // f(a, b) = a > b ? a - b : a * b on scalars.
  const flat::Fun f = [](std::span<const Array> xs) {
    const Array& a = xs[0];
    const Array& b = xs[1];
    EXPECT_EQ(a.ndim(), 0);
    return std::vector<Array>{
        tnp::where(tnp::greater(a, b), tnp::subtract(a, b), tnp::multiply(a, b))};
  };
  const Array a = random_array({3, 1, 4}, kF32), b = random_array({5, 1}, kF32);
  const Array got = tnp::vectorize(f)(std::vector<Array>{a, b})[0];
  EXPECT_EQ(got.shape(), (Shape{3, 5, 4}));
  EXPECT_EQ(
      compare(to_doubles(got), to_doubles(loop_reference(f, {a, b}, {0, 0}, {3, 5, 4})), 0, 0), "");
  // An axis of size 1 in every argument is kept (mapped by none).
  const Array c = random_array({1, 4}, kF32), d = random_array({1, 1}, kF32);
  const Array g2 = tnp::vectorize(f)(std::vector<Array>{c, d})[0];
  EXPECT_EQ(g2.shape(), (Shape{1, 4}));
  EXPECT_EQ(compare(to_doubles(g2), to_doubles(loop_reference(f, {c, d}, {0, 0}, {1, 4})), 0, 0),
            "");
}

TEST(Vectorize, SignatureMatchesLoop) {
  // (n),(n)->(): a dot product; (n,k),(k)->(n): a matrix-vector product.
  const flat::Fun dot = [](std::span<const Array> xs) {
    EXPECT_EQ(xs[0].ndim(), 1);
    return std::vector<Array>{lax::reduce_sum(tnp::multiply(xs[0], xs[1]), {0})};
  };
  const Array u = random_array({2, 1, 5}, kF32), v = random_array({3, 5}, kF32);
  const Array got = tnp::vectorize(dot, "(n),(n)->()")(std::vector<Array>{u, v})[0];
  EXPECT_EQ(got.shape(), (Shape{2, 3}));
  EXPECT_EQ(
      compare(to_doubles(got), to_doubles(loop_reference(dot, {u, v}, {1, 1}, {2, 3})), 1e-6, 1e-6),
      "");
  const flat::Fun mv = [](std::span<const Array> xs) {
    return std::vector<Array>{tnp::matmul(xs[0], xs[1])};
  };
  const Array m = random_array({4, 2, 3}, kF32), x = random_array({3}, kF32);
  const Array mvg = tnp::vectorize(mv, "(n, k), (k) -> (n)")(std::vector<Array>{m, x})[0];
  EXPECT_EQ(mvg.shape(), (Shape{4, 2}));
  EXPECT_EQ(
      compare(to_doubles(mvg), to_doubles(loop_reference(mv, {m, x}, {2, 1}, {4})), 1e-5, 1e-5),
      "");
  // Two outputs: (n)->(),(n).
  const flat::Fun stats = [](std::span<const Array> xs) {
    const Array mean = tnp::divide(lax::reduce_sum(xs[0], {0}), static_cast<double>(xs[0].size()));
    return std::vector<Array>{mean, tnp::subtract(xs[0], mean)};
  };
  const std::vector<Array> st = tnp::vectorize(stats, "(n)->(),(n)")(std::vector<Array>{m});
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].shape(), (Shape{4, 2}));
  EXPECT_EQ(st[1].shape(), (Shape{4, 2, 3}));
  const std::vector<double> mvals = to_doubles(m), means = to_doubles(st[0]);
  for (size_t r = 0; r < 8; ++r) {
    const double want = (mvals[3 * r] + mvals[3 * r + 1] + mvals[3 * r + 2]) / 3.0;
    EXPECT_NEAR(means[r], want, 1e-6);
  }
}

TEST(Vectorize, UnderJitAndGrad) {
  X64Scope x64;
  const flat::Fun sq = [](std::span<const Array> xs) {
    const Array d = lax::reduce_sum(tnp::multiply(xs[0], xs[1]), {0});
    return std::vector<Array>{tnp::multiply(d, d)};
  };
  const flat::Fun vf = tnp::vectorize(sq, "(n),(n)->()");
  const Array u = random_array({4, 3}, kF64), v = random_array({3}, kF64);
  auto call = [vf](const Array& a, const Array& b) { return vf(std::vector<Array>{a, b})[0]; };
  const Array eager = call(u, v);
  EXPECT_EQ(compare(to_doubles(tessera::jit(call)(u, v)), to_doubles(eager), 1e-12, 1e-12), "");
  EXPECT_EQ(
      compare(to_doubles(eager), to_doubles(loop_reference(sq, {u, v}, {1, 1}, {4})), 1e-12, 1e-12),
      "");
  // grad of sum(f(u, v)) in u against central differences.
  auto loss = [&](const Array& a) { return lax::reduce_sum(call(a, v), {0}); };
  const Array g = tessera::grad(loss)(u);
  const std::vector<double> uv = to_doubles(u);
  std::vector<double> fd(uv.size());
  const double h = 1e-6;
  for (size_t i = 0; i < uv.size(); ++i) {
    std::vector<double> up = uv, dn = uv;
    up[i] += h;
    dn[i] -= h;
    fd[i] = (loss(testing::host_array(up, u.shape(), kF64)).item_double() -
             loss(testing::host_array(dn, u.shape(), kF64)).item_double()) /
            (2 * h);
  }
  EXPECT_EQ(compare(to_doubles(g), fd, 1e-6, 1e-6), "");
  // Elementwise sin: its gradient is cos.
  const flat::Fun s = [](std::span<const Array> xs) { return std::vector<Array>{tnp::sin(xs[0])}; };
  const flat::Fun vs = tnp::vectorize(s);
  const Array gs = tessera::grad([&](const Array& a) {
    return lax::reduce_sum(vs(std::vector<Array>{a})[0], {0, 1});
  })(u);
  EXPECT_EQ(compare(to_doubles(gs), to_doubles(tnp::cos(u)), 1e-12, 1e-12), "");
}

TEST(Vectorize, SignatureParserAndErrors) {
  const tnp::GufuncSignature sig = tnp::parse_gufunc_signature(" (m, n),(n),()->(m) ");
  ASSERT_EQ(sig.inputs.size(), 3u);
  EXPECT_EQ(sig.inputs[0], (std::vector<std::string>{"m", "n"}));
  EXPECT_EQ(sig.inputs[1], (std::vector<std::string>{"n"}));
  EXPECT_TRUE(sig.inputs[2].empty());
  ASSERT_EQ(sig.outputs.size(), 1u);
  EXPECT_EQ(sig.outputs[0], (std::vector<std::string>{"m"}));
  for (const char* bad :
       {"(n)->", "n->()", "(n)", "(n),->()", "(n,)->()", "(n)->()->()", "(-)->()"})
    EXPECT_ERROR(ValueError, tnp::parse_gufunc_signature(bad),
                 std::string("not a valid gufunc signature: ") + bad);
  const flat::Fun id = [](std::span<const Array> xs) { return std::vector<Array>{xs[0]}; };
  const flat::Fun mv = tnp::vectorize(id, "(n,k),(k)->(n)");
  EXPECT_ERROR(ValueError, mv(std::vector<Array>{tnp::ones({3}), tnp::ones({3})}),
               "input with shape (3,) does not have enough dimensions for all core dimensions "
               "('n', 'k') on vectorized function with signature='(n,k),(k)->(n)'");
  EXPECT_ERROR(ValueError, mv(std::vector<Array>{tnp::ones({2, 3}), tnp::ones({4})}),
               "inconsistent size for core dimension 'k': 4 vs 3");
  EXPECT_ERROR(TypeError, mv(std::vector<Array>{tnp::ones({2, 3})}),
               "wrong number of positional arguments: expected 2, got 1");
  EXPECT_ERROR(ValueError, tnp::vectorize(id, "(n)->()")(std::vector<Array>{tnp::ones({3})}),
               "output shape (3,) does not match core dimensions ()");
  EXPECT_ERROR(TypeError, tnp::vectorize(id, "(n)->(n),()")(std::vector<Array>{tnp::ones({3})}),
               "wrong number of output arguments: expected 2, got 1");
  EXPECT_ERROR(ValueError,
               tnp::vectorize(id)(std::vector<Array>{tnp::ones({2, 3}), tnp::ones({4})}),
               "broadcast");
}

}  // namespace
}  // namespace tessera
