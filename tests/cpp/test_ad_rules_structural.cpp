// JVP and transpose rules of the structural primitives (broadcast_in_dim, reshape, transpose,
// iota, reduce_sum, reduce_max, dot_general). JVPs are checked against central finite
// differences; transposes by the adjoint identity <u, J v> == <J^T u, v>, all in float64 on
// fresh random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "prims/prims.h"
#include "tessera/param_types.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::compare;
using testing::random_array;
using testing::rng;
using testing::to_doubles;
using Ints = std::vector<int64_t>;

class AdRulesStructural : public ::testing::Test {
 protected:
  void SetUp() override {
    register_all();  // the rules are set on first registration
    saved_ = x64_enabled();
    set_x64_enabled(true);
  }
  void TearDown() override { set_x64_enabled(saved_); }

 private:
  bool saved_ = false;
};

constexpr DType kF64 = DType::kFloat64;

Array from_doubles(const std::vector<double>& v, const Shape& shape) {
  return array_from_host(Aval{shape, kF64, false}, v.data());
}

// x + s * v on the host.
Array axpy(const Array& x, double s, const Array& v) {
  std::vector<double> a = to_doubles(x), b = to_doubles(v);
  for (size_t i = 0; i < a.size(); ++i) a[i] += s * b[i];
  return from_doubles(a, x.shape());
}

double inner(const Array& a, const Array& b) {
  const std::vector<double> x = to_doubles(a), y = to_doubles(b);
  EXPECT_EQ(x.size(), y.size());
  double s = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) s += x[i] * y[i];
  return s;
}

// Checks prim.jvp against central finite differences. tangent_mask[i] false passes a symbolic
// zero (undefined) tangent for input i.
void check_jvp(const Primitive& prim, const std::vector<Array>& primals, const Params& params,
               std::vector<bool> tangent_mask = {}) {
  SCOPED_TRACE(prim.name() + " " + params.str());
  if (tangent_mask.empty()) tangent_mask.assign(primals.size(), true);
  std::vector<Array> tangents(primals.size());
  for (size_t i = 0; i < primals.size(); ++i)
    if (tangent_mask[i]) tangents[i] = random_array(primals[i].shape(), kF64);
  ASSERT_TRUE(prim.jvp);
  auto [outs, touts] = prim.jvp(primals, tangents, params);
  ASSERT_EQ(outs.size(), 1u);
  ASSERT_EQ(touts.size(), 1u);
  const Array want_out = bind1(prim, primals, params);
  EXPECT_EQ(outs[0].aval(), want_out.aval());
  EXPECT_EQ(compare(to_doubles(outs[0]), to_doubles(want_out), 0, 0), "");
  ASSERT_TRUE(touts[0].defined());
  EXPECT_EQ(touts[0].shape(), want_out.shape());
  EXPECT_EQ(touts[0].dtype(), kF64);
  const double eps = 1e-6;
  std::vector<Array> plus(primals), minus(primals);
  for (size_t i = 0; i < primals.size(); ++i) {
    if (!tangents[i].defined()) continue;
    plus[i] = axpy(primals[i], eps, tangents[i]);
    minus[i] = axpy(primals[i], -eps, tangents[i]);
  }
  const std::vector<double> fp = to_doubles(bind1(prim, plus, params));
  const std::vector<double> fm = to_doubles(bind1(prim, minus, params));
  std::vector<double> fd(fp.size());
  for (size_t k = 0; k < fp.size(); ++k) fd[k] = (fp[k] - fm[k]) / (2 * eps);
  EXPECT_EQ(compare(to_doubles(touts[0]), fd, 1e-5, 1e-7), "");
}

// Checks <u, J v> == <J^T u, v> for the map v -> prim(args with v at `linear`).
void check_transpose(const Primitive& prim, std::vector<Array> args, int linear,
                     const Params& params) {
  SCOPED_TRACE(prim.name() + " linear in " + std::to_string(linear) + " " + params.str());
  ASSERT_TRUE(prim.transpose);
  std::vector<Aval> avals;
  for (const Array& a : args) avals.push_back(a.aval());
  const Array v = random_array(avals[linear].shape, kF64);
  args[linear] = v;
  const Array jv = bind1(prim, args, params);
  const Array u = random_array(jv.shape(), kF64);
  args[linear] = Array();
  const std::vector<Array> cts{u};
  const std::vector<Array> res = prim.transpose(cts, args, avals, params);
  ASSERT_EQ(res.size(), args.size());
  for (size_t i = 0; i < res.size(); ++i)
    if (static_cast<int>(i) != linear) {
      EXPECT_FALSE(res[i].defined()) << "input " << i;
    }
  ASSERT_TRUE(res[linear].defined());
  EXPECT_EQ(res[linear].aval().shape, avals[linear].shape);
  EXPECT_EQ(res[linear].dtype(), kF64);
  const double lhs = inner(u, jv), rhs = inner(res[linear], v);
  EXPECT_NEAR(lhs, rhs, 1e-10 * (1 + std::abs(lhs))) << lhs << " vs " << rhs;
}

Params bid_params(const Shape& shape, const Ints& bdims) {
  return Params{{"shape", shape}, {"broadcast_dimensions", bdims}};
}

struct BidCase {
  Shape in, out;
  Ints bdims;
};
const BidCase kBidCases[] = {
    {{3, 1}, {2, 3, 4}, {1, 2}},     // new leading dim, size-1 expansion
    {{1, 4}, {4, 5, 4}, {0, 2}},     // size-1 expansion, new middle dim
    {{3, 4}, {3, 5, 4, 2}, {0, 2}},  // new dims in the middle and last
    {{}, {2, 3}, {}},                // scalar
    {{1, 1}, {1, 3}, {0, 1}},        // a size-1 dim that stays size 1
    {{2, 3}, {2, 3}, {0, 1}},        // identity
};

TEST_F(AdRulesStructural, BroadcastInDimJvp) {
  for (const auto& c : kBidCases)
    check_jvp(prims::broadcast_in_dim, {random_array(c.in, kF64)}, bid_params(c.out, c.bdims));
}

TEST_F(AdRulesStructural, BroadcastInDimTranspose) {
  for (const auto& c : kBidCases)
    check_transpose(prims::broadcast_in_dim, {random_array(c.in, kF64)}, 0,
                    bid_params(c.out, c.bdims));
}

struct ReshapeCase {
  Shape in, out;
};
const ReshapeCase kReshapeCases[] = {
    {{2, 3, 4}, {6, 4}}, {{4, 6}, {2, 2, 6}}, {{}, {1, 1}}, {{5}, {5}}};

TEST_F(AdRulesStructural, ReshapeJvpAndTranspose) {
  for (const auto& c : kReshapeCases) {
    const Params p{{"new_sizes", c.out}};
    check_jvp(prims::reshape, {random_array(c.in, kF64)}, p);
    check_transpose(prims::reshape, {random_array(c.in, kF64)}, 0, p);
  }
}

struct TransposeCase {
  Shape in;
  Ints perm;
};
const TransposeCase kTransposeCases[] = {{{2, 3, 4}, {2, 0, 1}},
                                         {{2, 3, 4}, {1, 2, 0}},
                                         {{2, 3, 4, 5}, {3, 1, 0, 2}},
                                         {{1, 2, 3, 4}, {1, 3, 2, 0}},
                                         {{3, 4}, {1, 0}}};

TEST_F(AdRulesStructural, TransposeJvpAndTranspose) {
  for (const auto& c : kTransposeCases) {
    const Params p{{"permutation", c.perm}};
    check_jvp(prims::transpose, {random_array(c.in, kF64)}, p);
    check_transpose(prims::transpose, {random_array(c.in, kF64)}, 0, p);
  }
}

struct ReduceCase {
  Shape in;
  Ints axes;
};
const ReduceCase kReduceCases[] = {{{2, 3, 4}, {1}}, {{2, 3, 4}, {0, 2}},    {{2, 3, 4}, {0, 1, 2}},
                                   {{2, 3, 4}, {}},  {{3, 4, 5, 2}, {3, 1}}, {{7}, {0}}};

TEST_F(AdRulesStructural, ReduceSumJvpAndTranspose) {
  for (const auto& c : kReduceCases) {
    const Params p{{"axes", c.axes}};
    check_jvp(prims::reduce_sum, {random_array(c.in, kF64)}, p);
    check_transpose(prims::reduce_sum, {random_array(c.in, kF64)}, 0, p);
  }
}

// Distinct values (a shuffled ramp, spaced 0.1 apart, plus small noise) so the maximum is
// unique and finite differences with a tiny step do not cross a tie.
Array distinct_array(const Shape& shape) {
  const int64_t n = shape_size(shape);
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), rng());
  std::uniform_real_distribution<double> noise(0.0, 0.01);
  for (double& x : v) x = 0.1 * x - 1.0 + noise(rng());
  return from_doubles(v, shape);
}

TEST_F(AdRulesStructural, ReduceMaxJvpDistinct) {
  for (const auto& c : kReduceCases)
    check_jvp(prims::reduce_max, {distinct_array(c.in)}, Params{{"axes", c.axes}});
}

// Ties share the derivative evenly: the tangent is the mean of the tangents at the maxima.
TEST_F(AdRulesStructural, ReduceMaxJvpTiesSplitEvenly) {
  const int64_t rows = 5, cols = 6;
  std::uniform_int_distribution<int> small(0, 2);  // few distinct values -> many ties
  std::vector<double> xv(rows * cols);
  for (double& x : xv) x = small(rng());
  xv[0] = xv[1] = 7.0;  // row 0: a guaranteed tie at the top
  const Array x = from_doubles(xv, {rows, cols});
  const Array t = random_array({rows, cols}, kF64);
  const std::vector<double> tv = to_doubles(t);
  // Reduce over columns, then over rows.
  for (int64_t axis : {1, 0}) {
    const Params p{{"axes", Ints{axis}}};
    auto [outs, touts] = prims::reduce_max.jvp(std::vector<Array>{x}, std::vector<Array>{t}, p);
    ASSERT_TRUE(touts[0].defined());
    const int64_t n_out = axis == 1 ? rows : cols, n_red = axis == 1 ? cols : rows;
    std::vector<double> want(n_out);
    for (int64_t o = 0; o < n_out; ++o) {
      auto at = [&](int64_t r) { return axis == 1 ? o * cols + r : r * cols + o; };
      double m = -INFINITY;
      for (int64_t r = 0; r < n_red; ++r) m = std::max(m, xv[at(r)]);
      double s = 0;
      int count = 0;
      for (int64_t r = 0; r < n_red; ++r)
        if (xv[at(r)] == m) s += tv[at(r)], ++count;
      want[o] = s / count;
    }
    EXPECT_EQ(compare(to_doubles(touts[0]), want, 1e-12, 1e-12), "") << "axis " << axis;
  }
  // Row 0 has the tie 7, 7 at columns 0 and 1: the split is exactly half and half.
  auto [outs, touts] = prims::reduce_max.jvp(std::vector<Array>{x}, std::vector<Array>{t},
                                             Params{{"axes", Ints{1}}});
  EXPECT_NEAR(to_doubles(touts[0])[0], 0.5 * (tv[0] + tv[1]), 1e-12);
}

Params dot_params(const Ints& lc, const Ints& rc, const Ints& lb, const Ints& rb) {
  return Params{{"dimension_numbers", DotDimensionNumbers{lc, rc, lb, rb}.to_param()}};
}

struct DotCase {
  Shape lhs, rhs;
  Ints lc, rc, lb, rb;
};
const DotCase kDotCases[] = {
    {{3, 4}, {4, 5}, {1}, {0}, {}, {}},                      // matmul
    {{2, 3, 4}, {2, 4, 5}, {2}, {1}, {0}, {0}},              // batch first
    {{3, 2, 4}, {4, 2, 5}, {2}, {0}, {1}, {1}},              // batch in the middle
    {{4, 3, 5, 2}, {5, 6, 4}, {0, 2}, {2, 0}, {}, {}},       // two contracting dims, not last
    {{2, 3, 4, 5}, {5, 4, 2, 6}, {3, 0}, {0, 2}, {2}, {1}},  // batch + reversed contracting
    {{2, 3, 4, 5}, {4, 5, 2, 6}, {3}, {1}, {0, 2}, {2, 0}},  // two batch dims, swapped
    {{5}, {5}, {0}, {0}, {}, {}},                            // inner product
    {{3}, {4}, {}, {}, {}, {}},                              // outer product
    {{3, 2}, {2, 4, 3}, {0}, {2}, {1}, {0}},                 // lhs has no free dims
};

TEST_F(AdRulesStructural, DotGeneralJvp) {
  for (const auto& c : kDotCases) {
    const Params p = dot_params(c.lc, c.rc, c.lb, c.rb);
    const std::vector<Array> primals{random_array(c.lhs, kF64), random_array(c.rhs, kF64)};
    check_jvp(prims::dot_general, primals, p);
    check_jvp(prims::dot_general, primals, p, {true, false});
    check_jvp(prims::dot_general, primals, p, {false, true});
  }
}

TEST_F(AdRulesStructural, DotGeneralTranspose) {
  for (const auto& c : kDotCases) {
    const Params p = dot_params(c.lc, c.rc, c.lb, c.rb);
    const std::vector<Array> args{random_array(c.lhs, kF64), random_array(c.rhs, kF64)};
    check_transpose(prims::dot_general, args, 0, p);
    check_transpose(prims::dot_general, args, 1, p);
  }
}

// preferred_element_type: float32 operands accumulated to float64; the cotangents come back
// in the operands' dtype.
TEST_F(AdRulesStructural, DotGeneralPreferredTypeTranspose) {
  Params p = dot_params({2}, {1}, {0}, {0});
  p.set("preferred_element_type", kF64);
  const Array lhs = random_array({2, 3, 4}, DType::kFloat32);
  const Array rhs = random_array({2, 4, 5}, DType::kFloat32);
  const Array ct = random_array({2, 3, 5}, kF64);
  const std::vector<Aval> avals{lhs.aval(), rhs.aval()};
  const std::vector<Array> cts{ct};
  auto r0 = prims::dot_general.transpose(cts, std::vector<Array>{Array(), rhs}, avals, p);
  auto r1 = prims::dot_general.transpose(cts, std::vector<Array>{lhs, Array()}, avals, p);
  ASSERT_TRUE(r0[0].defined() && r1[1].defined());
  EXPECT_EQ(r0[0].aval().shape, lhs.shape());
  EXPECT_EQ(r0[0].dtype(), DType::kFloat32);
  EXPECT_EQ(r1[1].aval().shape, rhs.shape());
  EXPECT_EQ(r1[1].dtype(), DType::kFloat32);
  // <ct, lhs . rhs> computed three ways.
  const double want = inner(ct, bind1(prims::dot_general, {lhs, rhs}, p));
  EXPECT_NEAR(inner(r0[0], lhs), want, 1e-4 * (1 + std::abs(want)));
  EXPECT_NEAR(inner(r1[1], rhs), want, 1e-4 * (1 + std::abs(want)));
}

TEST_F(AdRulesStructural, SymbolicZeroTangents) {
  const Array x = random_array({2, 3}, kF64);
  const std::vector<Array> xs{x}, undef{Array()};
  auto expect_zero = [&](const Primitive& prim, const std::vector<Array>& primals,
                         const std::vector<Array>& tangents, const Params& p) {
    SCOPED_TRACE(prim.name());
    auto [outs, touts] = prim.jvp(primals, tangents, p);
    ASSERT_EQ(touts.size(), 1u);
    EXPECT_FALSE(touts[0].defined());
    const Array want = bind1(prim, primals, p);
    EXPECT_EQ(outs[0].aval(), want.aval());
    EXPECT_EQ(compare(to_doubles(outs[0]), to_doubles(want), 0, 0), "");
  };
  expect_zero(prims::broadcast_in_dim, xs, undef, bid_params({4, 2, 3}, {1, 2}));
  expect_zero(prims::reshape, xs, undef, Params{{"new_sizes", Shape{6}}});
  expect_zero(prims::transpose, xs, undef, Params{{"permutation", Ints{1, 0}}});
  expect_zero(prims::reduce_sum, xs, undef, Params{{"axes", Ints{0}}});
  expect_zero(prims::reduce_max, xs, undef, Params{{"axes", Ints{1}}});
  const Array y = random_array({3, 4}, kF64);
  expect_zero(prims::dot_general, {x, y}, {Array(), Array()}, dot_params({1}, {0}, {}, {}));
  // Integer primals have zero tangents even when a tangent array is passed.
  const Array xi = random_array({2, 3}, DType::kInt32);
  const Array ti = random_array({2, 3}, DType::kInt32);
  expect_zero(prims::reshape, {xi}, {ti}, Params{{"new_sizes", Shape{3, 2}}});
  expect_zero(prims::reduce_max, {xi}, {ti}, Params{{"axes", Ints{0}}});
  const Array yi = random_array({3, 4}, DType::kInt32);
  expect_zero(prims::dot_general, {xi, yi}, {ti, Array()}, dot_params({1}, {0}, {}, {}));
  // iota has no inputs: an undefined tangent.
  expect_zero(prims::iota, {}, {},
              Params{{"dtype", kF64}, {"shape", Shape{3, 4}}, {"dimension", int64_t{1}}});
}

}  // namespace
}  // namespace tessera
