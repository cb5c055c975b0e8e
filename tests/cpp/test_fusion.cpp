// Loop fusion (compiler/fusion.h) and the kernel IR (compiler/kernel_ir.h): which equations
// become one kernel, decided from kinds and index-map rules, and every kernel computing what
// the equations it replaces compute — its reference evaluator (kir::evaluate) on the eager
// values of the group's inputs against the eager value of the group's root, on fresh random
// inputs. Also the kernel IR's own contracts: collapsing dimensions, bounds checks, text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/fusion.h"
#include "compiler/index_map.h"
#include "compiler/kernel_ir.h"
#include "compiler/math_expand.h"
#include "compiler/passes/expand.h"
#include "compiler/passes/inline_calls.h"
#include "compiler/pipeline.h"
#include "compiler/reduce_rule.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
using compiler::FusionPlan;
using compiler::plan_fusion;
using testing::random_array;
using testing::to_doubles;

// Every group's kernel, run by the reference evaluator on the eager values of its inputs,
// equals the eager value of its root. Returns the plan for structural checks.
FusionPlan check_plan(const ClosedJaxpr& cj, std::span<const Array> args) {
  const Jaxpr& j = *cj.jaxpr;
  FusionPlan plan = plan_fusion(j);
  for (const compiler::FusionGroup& g : plan.groups) {
    SCOPED_TRACE(g.kernel.text());
    // The eager values of the group's inputs and outputs: the same program with those outputs.
    Jaxpr probe = j;
    probe.outvars.clear();
    for (const Var& v : g.inputs) probe.outvars.push_back(v);
    for (const Var& v : g.outputs) probe.outvars.push_back(v);
    EXPECT_EQ(g.outputs.back(), j.eqns[g.root()].outvars[0]);
    std::vector<Array> vals = eval_jaxpr(probe, cj.consts, args);
    std::vector<const void*> ins;
    for (size_t k = 0; k < g.inputs.size(); ++k) ins.push_back(vals[k].raw_data("test"));
    std::vector<std::vector<char>> bufs;
    std::vector<void*> outs;
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      const Array& want = vals[g.inputs.size() + o];
      bufs.emplace_back(static_cast<size_t>(want.aval().size()) * itemsize(want.dtype()));
    }
    for (auto& b : bufs) outs.push_back(b.data());
    // The evaluator runs the expanded bodies: the expansions are the eager kernels' bits, where
    // libm's transcendentals differ in the last place — which a comparison in the group (a
    // select on tanh(x) > y) can turn into a different branch.
    compiler::kir::Kernel ref = g.kernel;
    ref.body = compiler::expand_math(ref.body);
    for (compiler::kir::Stage& st : ref.stages) st.body = compiler::expand_math(st.body);
    compiler::kir::evaluate(ref, ins, outs);
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      const Array& want = vals[g.inputs.size() + o];
      Array got = array_from_host(want.aval(), bufs[o].data());
      const bool exact = !is_floating(want.dtype());
      // The evaluator folds reductions in order, the eager kernel pairwise: a looser bound there,
      // absolute error growing with the folded length (cancellation in a long sum).
      const double tol = exact ? 0 : g.kernel.stages.empty() ? 2e-6 : 5e-5;
      const double atol =
          exact ? 0
                : tol / 2 * std::max<double>(1.0, static_cast<double>(g.kernel.num_inner()) / 64);
      const std::string bad = testing::compare(to_doubles(got), to_doubles(want), tol, atol);
      EXPECT_EQ(bad, "") << "output " << o << "\n" << to_string(j);
    }
  }
  // group_of agrees with the members.
  for (size_t gi = 0; gi < plan.groups.size(); ++gi)
    for (size_t m : plan.groups[gi].members) EXPECT_EQ(plan.group_of[m], static_cast<int32_t>(gi));
  return plan;
}

template <class F, class... A>
FusionPlan plan_of(F f, const A&... args) {
  ClosedJaxpr cj = make_jaxpr(f)(args...);
  std::vector<Array> flat{args...};
  return check_plan(cj, flat);
}

TEST(Fusion, ElementwiseChainIsOneKernelOverOneDimension) {
  Array a = random_array({4, 5}, DType::kFloat32), b = random_array({4, 5}, DType::kFloat32);
  FusionPlan p =
      plan_of([](const Array& x, const Array& y) { return -(x * y + x) / (y + 3.0f); }, a, b);
  ASSERT_EQ(p.groups.size(), 1u);
  const auto& g = p.groups[0];
  EXPECT_EQ(g.members.size(), 5u);
  EXPECT_EQ(g.kernel.dims, (Shape{20}));  // collapsed
  EXPECT_EQ(g.kernel.inputs.size(), 2u);
  EXPECT_EQ(g.kernel.loads.size(), 2u);  // x read once although used twice
  EXPECT_NE(g.kernel.text().find("fusion.0"), std::string::npos);
}

TEST(Fusion, BroadcastRowVectorKeepsTwoDimensions) {
  Array a = random_array({6, 7}, DType::kFloat32), b = random_array({7}, DType::kFloat32);
  FusionPlan p = plan_of(
      [](const Array& x, const Array& r) {
        return tnp::exp(x) * lax::broadcast_in_dim(r, {6, 7}, {1});
      },
      a, b);
  ASSERT_EQ(p.groups.size(), 1u);
  const auto& k = p.groups[0].kernel;
  EXPECT_EQ(k.dims, (Shape{6, 7}));
  ASSERT_EQ(k.loads.size(), 2u);
  // One load walks the matrix, the other only the column index.
  int rows = 0, cols = 0;
  for (const auto& l : k.loads) {
    if (l.index.coeff == std::vector<int64_t>{7, 1}) ++rows;
    if (l.index.coeff == std::vector<int64_t>{0, 1}) ++cols;
  }
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(cols, 1);
}

TEST(Fusion, ColumnBroadcastOfAScalarAndLiterals) {
  Array a = random_array({3, 4}, DType::kFloat32), c = random_array({3}, DType::kFloat32);
  Array s = random_array({}, DType::kFloat32);
  plan_of(
      [](const Array& x, const Array& col, const Array& sc) {
        return tnp::maximum(x * sc, lax::broadcast_in_dim(col, {3, 4}, {0}) - 1.5f);
      },
      a, c, s);
}

TEST(Fusion, ImplicitSizeOneBroadcastingFuses) {
  // jnp broadcasting leaves f32[1,n] and f32[m,1] operands of elementwise equations.
  Array a = random_array({6, 7}, DType::kFloat32), r = random_array({7}, DType::kFloat32),
        c = random_array({6, 1}, DType::kFloat32);
  FusionPlan p = plan_of([](const Array& x, const Array& row,
                            const Array& col) { return tnp::maximum(x * row + col, 0.0); },
                         a, r, c);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kernel.inputs.size(), 3u);
  EXPECT_EQ(p.groups[0].kernel.dims, (Shape{6, 7}));
  // bitcast to a narrower type adds a dimension: not an elementwise map of points.
  Array s = random_array({}, DType::kFloat32);
  FusionPlan q = plan_of(
      [](const Array& x) {
        return lax::bitcast_convert_type(x * 2.0f, DType::kUInt8) +
               lax::bitcast_convert_type(x, DType::kUInt8);
      },
      s);
  EXPECT_TRUE(q.groups.empty());  // mul and add are separated by the bitcasts
}

TEST(Fusion, TransposeSliceRevSqueezeCompose) {
  Array a = random_array({5, 1, 6}, DType::kFloat32), b = random_array({3, 4}, DType::kFloat32);
  FusionPlan p = plan_of(
      [](const Array& x, const Array& y) {
        Array t = lax::transpose(lax::squeeze(x, {1}) * 2.0f, {1, 0});  // [6, 5]
        Array s = lax::slice(t, {1, 0}, {6, 5}, {2, 2});                // [3, 3]
        Array r = lax::rev(y, {0, 1});                                  // [3, 4]
        return lax::slice(r, {0, 1}, {3, 4}) + s;
      },
      a, b);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kernel.dims, (Shape{3, 3}));
  EXPECT_EQ(p.groups[0].kernel.inputs.size(), 2u);  // x and y: no intermediate buffer
}

TEST(Fusion, IotaIsAnIndexValue) {
  Array a = random_array({4, 3}, DType::kInt32);
  FusionPlan p = plan_of(
      [](const Array& x) {
        return x * lax::broadcasted_iota(DType::kInt32, {4, 3}, 0) +
               lax::broadcasted_iota(DType::kInt32, {4, 3}, 1);
      },
      a);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kernel.indices.size(), 2u);
  EXPECT_EQ(p.groups[0].kernel.inputs.size(), 1u);
}

TEST(Fusion, ReshapeOfAnInputIsALinearLoad) {
  Array a = random_array({2, 6}, DType::kFloat32), b = random_array({3, 4}, DType::kFloat32);
  FusionPlan p = plan_of(
      [](const Array& x, const Array& y) {
        return lax::reshape(x, {3, 4}) * y + 1.0f;
      },
      a, b);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kernel.inputs.size(), 2u);
  EXPECT_EQ(p.groups[0].kernel.dims, (Shape{12}));  // both read row-major: one dimension
}

TEST(Fusion, ReshapeOfAComputedValueComposesOrSplits) {
  // Row-major-compatible: [2,6] -> [12] -> [3,4] of a computed value composes exactly.
  Array a = random_array({2, 6}, DType::kFloat32), b = random_array({3, 4}, DType::kFloat32);
  plan_of(
      [](const Array& x, const Array& y) {
        return lax::reshape(tnp::sin(x), {3, 4}) * y;
      },
      a, b);
  // A reshape whose output point does not delinearize into the computed value's dims (the
  // transposed read of a reshaped computation) splits the group instead of failing.
  Array c = random_array({4, 6}, DType::kFloat32);
  FusionPlan p = plan_of(
      [](const Array& x) {
        Array r = lax::reshape(x * 2.0f + 1.0f, {6, 4});
        return lax::transpose(r, {1, 0}) - 3.0f;
      },
      c);
  for (const auto& g : p.groups) EXPECT_GE(g.members.size(), 2u);
}

TEST(Fusion, ExpensiveProducerIsNotRecomputedUnderABroadcast) {
  Array a = random_array({64}, DType::kFloat32), b = random_array({32, 64}, DType::kFloat32);
  FusionPlan p = plan_of(
      [](const Array& x, const Array& y) {
        return lax::broadcast_in_dim(tnp::exp(x), {32, 64}, {1}) + y * 2.0f;
      },
      a, b);
  ASSERT_EQ(p.groups.size(), 1u);
  // exp stays outside (an eager equation), its result is a kernel input.
  EXPECT_EQ(p.groups[0].kernel.inputs.size(), 2u);
  for (size_t m : p.groups[0].members)
    EXPECT_NE(std::string(make_jaxpr([](const Array& x, const Array& y) {
                            return lax::broadcast_in_dim(tnp::exp(x), {32, 64}, {1}) + y * 2.0f;
                          })(a, b)
                              .jaxpr->eqns[m]
                              .primitive->name()),
              "exp");
  // A cheap producer is recomputed under the broadcast (no buffer).
  FusionPlan q = plan_of(
      [](const Array& x, const Array& y) {
        return lax::broadcast_in_dim(x * 3.0f, {32, 64}, {1}) + y;
      },
      a, b);
  ASSERT_EQ(q.groups.size(), 1u);
  EXPECT_EQ(q.groups[0].members.size(), 3u);
}

TEST(Fusion, SharedValuesAndOutputsBoundGroups) {
  Array a = random_array({8}, DType::kFloat32);
  // t is an output and read by the rest: producer-consumer multi-output keeps it in the group of
  // its first reader (t + 1) as an extra output: one kernel computing t and t + 1; t * t, which
  // reads that kernel's output, is a lone equation (its eager kernel).
  ClosedJaxpr cj = make_jaxpr([](const Array& x) {
    Array t = tnp::tanh(x) * 2.0f;
    return std::vector<Array>{t, t + 1.0f, t * t};
  })(a);
  std::vector<Array> args{a};
  FusionPlan p = check_plan(cj, args);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].members.size(), 3u);
  EXPECT_EQ(p.groups[0].outputs.size(), 2u);
  // Without multi-output (TESSERA_FUSION_MULTI_OUTPUT=0): tanh*2 roots its own group, and
  // t+1, t*t are siblings reading it.
  setenv("TESSERA_FUSION_MULTI_OUTPUT", "0", 1);
  FusionPlan q = check_plan(cj, args);
  unsetenv("TESSERA_FUSION_MULTI_OUTPUT");
  ASSERT_EQ(q.groups.size(), 2u);
  EXPECT_EQ(q.groups[0].outputs.size(), 1u);
  EXPECT_EQ(q.groups[1].outputs.size(), 2u);
}

TEST(Fusion, ProducerConsumerMultiOutput) {
  // A value read by its consumers' kernel and by a later unfused equation (a matmul) or later
  // kernels is an extra output of the kernel that computes it; a reader before that kernel's
  // root keeps it apart (the kernel would run too late).
  Array a = random_array({6, 6}, DType::kFloat32);
  ClosedJaxpr cj = make_jaxpr([](const Array& x) {
    Array h = tnp::tanh(x * 0.5f);
    Array y = h * 3.0f + 1.0f;
    return std::vector<Array>{y, tnp::matmul(h, x) + y};
  })(a);
  std::vector<Array> args{a};
  FusionPlan p = check_plan(cj, args);
  bool extra = false;
  for (const auto& g : p.groups) extra |= g.outputs.size() >= 2 && g.kernel.outputs.size() >= 2;
  EXPECT_TRUE(extra);
  EXPECT_EQ(to_doubles(jit([](const Array& x) {
              Array h = tnp::tanh(x * 0.5f);
              return tnp::matmul(h, x) + h * 3.0f;
            })(a)),
            to_doubles([](const Array& x) {
              Array h = tnp::tanh(x * 0.5f);
              return tnp::matmul(h, x) + h * 3.0f;
            }(a)));
  // h read before the kernel reading it finishes: h*2 (kernel 1) then m = matmul(h * 2, x), then
  // h + m: the group of h + m roots after the matmul, which reads h*2; h can join h + m's group
  // only if every other reader comes after that root — the matmul's operand does not.
  ClosedJaxpr cj2 = make_jaxpr([](const Array& x) {
    Array h = tnp::exp(x);
    Array m = tnp::matmul(h * 2.0f, x);
    return h + m;
  })(a);
  check_plan(cj2, args);
}

TEST(Fusion, IntegerBoolAndConvertChains) {
  Array a = random_array({5, 3}, DType::kInt32), b = random_array({5, 3}, DType::kInt32);
  plan_of(
      [](const Array& x, const Array& y) {
        Array m = lax::gt(x, y);
        Array s = lax::select_n(m, {x - y, x * y});
        return lax::convert_element_type(s, DType::kFloat32) * 0.5f;
      },
      a, b);
  Array u = random_array({7}, DType::kUInt8);
  plan_of([](const Array& x) { return (x + x) * lax::convert_element_type(x, DType::kUInt8); }, u);
}

TEST(Fusion, KindsDecideFusibility) {
  // Effects and non-elementwise primitives stay outside; 16-bit floats fuse (below).
  Array h = random_array({6}, DType::kFloat16);
  FusionPlan p = plan_of([](const Array& x) { return (x * x + x) * x; }, h);
  EXPECT_EQ(p.groups.size(), 1u);
  Array a = random_array({4, 4}, DType::kFloat32);
  auto col = [](const Array& x) { return lax::reduce_sum(tnp::sin(x), {0}) + 1.0f; };
  FusionPlan q = plan_of(col, a);  // a column reduction: one kernel in eager's column order
  ASSERT_EQ(q.groups.size(), 1u);
  EXPECT_EQ(q.groups[0].kernel.columns, 4);
  // Eager's narrow column path (I < 32, many rows) stays a thunk: sin | sum | add.
  EXPECT_EQ(plan_of(col, random_array({1000, 17}, DType::kFloat32)).groups.size(), 0u);
  FusionPlan q2 = plan_of([](const Array& x) { return lax::argmax(tnp::sin(x), 1) + 1; }, a);
  EXPECT_TRUE(q2.groups.empty());  // argmax has no reduction rule
  FusionPlan r = plan_of([](const Array& x) { return tnp::matmul(x + 1.0f, x) * 2.0f; }, a);
  EXPECT_TRUE(r.groups.empty());
}

TEST(Fusion, SixteenBitFloatsRoundAfterEveryOpAsEager) {
  // float16 and bfloat16 chains are one kernel that converts each value to float32, computes, and
  // rounds back after every equation — eager's bits, NaN payloads, infinities, subnormals,
  // overflow to inf and ties included.
  const std::vector<uint16_t> specials_h = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00,
                                            0xfc00, 0x7e00, 0x7d01, 0xfe55, 0x3c00, 0x3c01, 0xbc00};
  const std::vector<uint16_t> specials_b = {0x0000, 0x8000, 0x0001, 0x007f, 0x0080, 0x7f7f, 0x7f80,
                                            0xff80, 0x7fc0, 0x7f81, 0xffd5, 0x3f80, 0x3f81, 0xbf80};
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    Array r = random_array({64}, t);
    std::vector<uint16_t> bits(static_cast<size_t>(r.size()));
    std::memcpy(bits.data(), r.raw_data("test"), bits.size() * 2);
    const auto& sp = t == DType::kFloat16 ? specials_h : specials_b;
    std::copy(sp.begin(), sp.end(), bits.begin());
    const Array x = array_from_host(Aval{{64}, t, false}, bits.data());
    const Array y = tnp::flip(x, 0);
    auto f = [](const Array& a, const Array& b) {
      return tnp::tanh(a * 1.5f + b) * a - tnp::exp(b) / (a * a + 1.0f);
    };
    ClosedJaxpr cj = make_jaxpr(f)(x, y);
    std::vector<Array> args{x, y};
    FusionPlan p = check_plan(cj, args);
    ASSERT_EQ(p.groups.size(), 1u) << dtype_name(t);
    const Array got = jit(f)(x, y), want = f(x, y);
    ASSERT_EQ(got.dtype(), t);
    EXPECT_EQ(std::memcmp(got.raw_data("test"), want.raw_data("test"), 128), 0) << dtype_name(t);
    // Mixed with float32 (promotion) and moved by index maps.
    const Array z = random_array({64}, DType::kFloat32);
    auto g = [](const Array& a, const Array& c) {
      return tnp::concatenate({tnp::flip(a, 0) * c, tnp::astype(c, a.dtype())}, 0);
    };
    const Array g1 = jit(g)(x, z), g2 = g(x, z);
    EXPECT_EQ(std::memcmp(g1.raw_data("test"), g2.raw_data("test"), g1.nbytes()), 0);
  }
}

TEST(Fusion, RandomElementwiseDagsMatchEager) {
  // Random DAGs of unary/binary ops over a few inputs, some broadcast from rows/columns.
  std::mt19937_64& g = testing::rng();
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t m = 1 + static_cast<int64_t>(g() % 5), n = 1 + static_cast<int64_t>(g() % 6);
    Array x = random_array({m, n}, DType::kFloat32), row = random_array({n}, DType::kFloat32),
          col = random_array({m}, DType::kFloat32);
    const uint64_t plan_seed = g();
    auto f = [m, n, plan_seed](const Array& a, const Array& r, const Array& c) {
      std::mt19937_64 pg(plan_seed);
      std::vector<Array> vals{a, lax::broadcast_in_dim(r, {m, n}, {1}),
                              lax::broadcast_in_dim(c, {m, n}, {0})};
      for (int k = 0; k < 8; ++k) {
        const Array& u = vals[pg() % vals.size()];
        const Array& v = vals[pg() % vals.size()];
        switch (pg() % 7) {
          case 0:
            vals.push_back(u + v);
            break;
          case 1:
            vals.push_back(u * v);
            break;
          case 2:
            vals.push_back(tnp::maximum(u, v));
            break;
          case 3:
            vals.push_back(tnp::tanh(u));
            break;
          case 4:
            vals.push_back(lax::rev(u, {1}));
            break;
          case 5:
            vals.push_back(lax::transpose(lax::transpose(u, {1, 0}), {1, 0}) - v);
            break;
          default:
            vals.push_back(tnp::where(lax::gt(u, v), u, v * 0.5f));
            break;
        }
      }
      return vals.back() + vals[vals.size() - 2];
    };
    SCOPED_TRACE("trial " + std::to_string(trial));
    plan_of(f, x, row, col);
  }
}

// ---- reductions: stages of a kernel ----

Array softmax_rows(const Array& x) {
  Array m = tnp::max(x, 1, /*keepdims=*/true);
  Array e = tnp::exp(x - m);
  return e / tnp::sum(e, 1, /*keepdims=*/true);
}

Array layer_norm(const Array& x, const Array& g, const Array& b) {
  Array m = tnp::mean(x, 1, /*keepdims=*/true);
  Array v = tnp::mean(tnp::square(x - m), 1, /*keepdims=*/true);
  return (x - m) * lax::rsqrt(v + 1e-5f) * g + b;
}

// jit(f)(args) against f(args) eagerly (rtol 0: bit for bit; NaNs compare equal).
template <class F, class... A>
void expect_jit_close(F f, double rtol, const A&... args) {
  Array got = jit(f)(args...), want = f(args...);
  ASSERT_EQ(got.aval(), want.aval());
  const bool exact = !is_floating(want.dtype());
  EXPECT_EQ(testing::compare(to_doubles(got), to_doubles(want), exact ? 0 : rtol, exact ? 0 : rtol),
            "");
}

TEST(FusionReductions, SoftmaxIsOneKernelWithTwoStages) {
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{5, 7}, {33, 300}, {3, 64}}) {
    Array x = random_array({m, n}, DType::kFloat32, -8, 8);
    FusionPlan p = plan_of(softmax_rows, x);
    ASSERT_EQ(p.groups.size(), 1u);
    const compiler::kir::Kernel& k = p.groups[0].kernel;
    EXPECT_EQ(k.dims, (Shape{m, n}));
    EXPECT_EQ(k.inner, 1u);
    EXPECT_FALSE(k.row_outputs);
    ASSERT_EQ(k.stages.size(), 2u);
    EXPECT_EQ(k.stages[0].reducers[0].op, scalar::Op::kMax);
    EXPECT_EQ(k.stages[1].reducers[0].op, scalar::Op::kAdd);
    EXPECT_EQ(k.inputs.size(), 1u);  // x, read by every stage: one pass per row
    const std::string t = k.text();
    EXPECT_NE(t.find("stage 0 -> r0 = max {"), std::string::npos) << t;
    EXPECT_NE(t.find("stage 1 -> r1 = add, s0 = saved {"), std::string::npos) << t;
    EXPECT_NE(t.find("= saved s0"), std::string::npos) << t;  // the body reads exp(x - r0)
    size_t exps = 0;
    for (size_t at = t.find(" = exp "); at != std::string::npos; at = t.find(" = exp ", at + 1))
      ++exps;
    EXPECT_EQ(exps, 1u) << t;  // computed once per point
    EXPECT_NE(t.find("= row r1"), std::string::npos) << t;
    expect_jit_close(softmax_rows, 0, x);
    const std::string plan = jit(softmax_rows).lower(x).compile().as_text();
    EXPECT_NE(plan.find("= fused fusion.0"), std::string::npos) << plan;
    const std::string exe = plan.substr(plan.find("executable"));
    EXPECT_EQ(exe.find("reduce"), std::string::npos) << plan;  // no eager reduction thunk
  }
}

TEST(FusionReductions, UnitDimensionsStillFuse) {
  // A unit dimension is read at 0 by broadcasting: the row value is still at the outer point.
  for (Shape s : {Shape{1, 1}, Shape{1, 9}, Shape{4, 1}, Shape{3, 1, 5}}) {
    SCOPED_TRACE(std::to_string(s.size()) + "-d");
    Array x = random_array(s, DType::kFloat32, -4, 4);
    auto f = [](const Array& a) {
      Array m = tnp::max(a, -1, true);
      Array e = tnp::exp(a - lax::stop_gradient(m));
      return e / tnp::sum(e, -1, true);
    };
    FusionPlan p = plan_of(f, x);
    EXPECT_EQ(p.groups.size(), 1u);
    expect_jit_close(f, 0, x);
  }
}

TEST(FusionReductions, KernelTextAddsLlvmIrAndAssembly) {
  Array x = random_array({8, 100}, DType::kFloat32);
  auto f = [](const Array& a) { return tnp::sum(tnp::exp(a) * 3.0f, 1); };
  ASSERT_EQ(setenv("TESSERA_KERNEL_TEXT", "llvm,asm", 1), 0);
  auto with_text = jit(f).lower(x).compile();
  const std::string t = with_text.as_text();
  ASSERT_EQ(unsetenv("TESSERA_KERNEL_TEXT"), 0);
  EXPECT_NE(t.find("; llvm ir:"), std::string::npos) << t;
  EXPECT_NE(t.find("define void @tessera_kernel_"), std::string::npos) << t;
  EXPECT_NE(t.find("; assembly:"), std::string::npos) << t;
  EXPECT_NE(t.find("ret"), std::string::npos) << t;
  // Without the flag: the plan only (also when the kernel comes from the cache with its text).
  const std::string plain = jit(f).lower(x).compile().as_text();
  EXPECT_EQ(plain.find("; llvm ir:"), std::string::npos) << plain;
  ASSERT_EQ(setenv("TESSERA_KERNEL_TEXT", "llvm,ptx", 1), 0);
  EXPECT_ERROR(ValueError, jit(f).lower(x).compile(),
               "[TESSERA_KERNEL_TEXT] unknown item 'ptx' in 'llvm,ptx'; accepted: llvm, asm, all");
  ASSERT_EQ(unsetenv("TESSERA_KERNEL_TEXT"), 0);
}

TEST(FusionSiblings, GroupsReadingOneInputShareAKernel) {
  Array x = random_array({16, 300}, DType::kFloat32), y = random_array({16, 300}, DType::kFloat32);
  // Two reductions of one row: one kernel, x read once, two outputs.
  auto two = [](const Array& a) {
    return std::vector<Array>{tnp::sum(tnp::exp(a), 1), tnp::max(a * 2.0f, 1)};
  };
  ClosedJaxpr cj = make_jaxpr(two)(x);
  FusionPlan p = check_plan(cj, std::vector<Array>{x});
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].outputs.size(), 2u);
  EXPECT_EQ(p.groups[0].inputs.size(), 1u);
  EXPECT_EQ(p.groups[0].kernel.stages.size(), 2u);
  {
    auto jf = jit(two);
    std::vector<Array> got = jf(x), want = two(x);
    for (size_t i = 0; i < 2; ++i)
      EXPECT_EQ(testing::compare(to_doubles(got[i]), to_doubles(want[i]), 0, 0), "");
    const std::string t = jf.lower(x).compile().as_text();
    EXPECT_NE(t.find(", %"), std::string::npos) << t;  // two results of one thunk
  }
  // Elementwise siblings and a softmax beside a row sum of the same input.
  auto three = [](const Array& a, const Array& b) {
    Array e = tnp::exp(a - tnp::max(a, 1, true));
    return std::vector<Array>{a * 2.0f + b, tnp::tanh(a) - b, e / tnp::sum(e, 1, true),
                              tnp::sum(a * b, 1)};
  };
  ClosedJaxpr cj3 = make_jaxpr(three)(x, y);
  FusionPlan p3 = check_plan(cj3, std::vector<Array>{x, y});
  size_t outs = 0;
  for (const auto& g : p3.groups) outs += g.outputs.size();
  EXPECT_EQ(outs, 4u);
  // The maps join the softmax kernel (its body runs at every point); the row sum is stored per
  // row, a kernel of its own.
  EXPECT_EQ(p3.groups.size(), 2u);
  std::vector<Array> got = jit(three)(x, y), want = three(x, y);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(testing::compare(to_doubles(got[i]), to_doubles(want[i]), 0, 0), "") << i;
}

TEST(FusionSiblings, DependentOrEarlierReadGroupsStayApart) {
  Array x = random_array({8, 64}, DType::kFloat32), w = random_array({64, 64}, DType::kFloat32);
  // The second group reads the first's result through a matmul: merging would need it earlier.
  auto f = [w](const Array& a) {
    Array h = tnp::tanh(a * 2.0f);
    Array u = tnp::matmul(h, w);
    return u * tnp::exp(a) + a;
  };
  FusionPlan p = plan_of(f, x);
  EXPECT_EQ(p.groups.size(), 2u);
  for (const auto& g : p.groups) EXPECT_EQ(g.outputs.size(), 1u);
  expect_jit_close(f, 0, x);
  // A reader of the first group's result between the two roots keeps them apart.
  auto g = [w](const Array& a) {
    Array h = tnp::exp(a) * 2.0f;
    Array u = tnp::matmul(h, w);
    Array v = tnp::sin(a) + 1.0f;
    return std::vector<Array>{u, v * v};
  };
  ClosedJaxpr cj = make_jaxpr(g)(x);
  FusionPlan q = check_plan(cj, std::vector<Array>{x});
  for (const auto& gr : q.groups) EXPECT_EQ(gr.outputs.size(), 1u);
}

TEST(FusionReductions, LayerNormIsOneKernel) {
  Array x = random_array({17, 96}, DType::kFloat32, -3, 5), g = random_array({96}, DType::kFloat32),
        b = random_array({96}, DType::kFloat32);
  FusionPlan p = plan_of(layer_norm, x, g, b);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kernel.stages.size(), 2u);  // mean, then variance using the mean
  expect_jit_close(layer_norm, 0, x, g, b);
}

TEST(FusionReductions, ReductionRootsStoreOneValuePerRow) {
  Array x = random_array({6, 5, 40}, DType::kFloat32);
  auto f = [](const Array& a) { return tnp::sum(tnp::exp(a) * 2.0f, 2) + 1.0f; };
  FusionPlan p = plan_of(f, x);
  ASSERT_EQ(p.groups.size(), 1u);
  const compiler::kir::Kernel& k = p.groups[0].kernel;
  EXPECT_TRUE(k.row_outputs);
  EXPECT_EQ(k.dims, (Shape{30, 40}));  // outer dimensions collapsed, the inner one kept
  expect_jit_close(f, 0, x);
  // Several trailing axes fold as one inner dimension; a full reduction has no outer one.
  auto two = [](const Array& a) {
    return tnp::max(tnp::abs(a) - 1.0f, std::vector<int64_t>{1, 2});
  };
  FusionPlan q = plan_of(two, x);
  ASSERT_EQ(q.groups.size(), 1u);
  EXPECT_EQ(q.groups[0].kernel.dims, (Shape{6, 200}));
  expect_jit_close(two, 0, x);
  auto all = [](const Array& a) { return tnp::sum(a * a) * 0.5f; };
  FusionPlan r = plan_of(all, x);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].kernel.dims, (Shape{1200}));
  EXPECT_EQ(r.groups[0].kernel.inner, 1u);
  expect_jit_close(all, 0, x);
}

TEST(FusionReductions, EveryReducerAndDtypeMatchesEager) {
  // Integer sums wrap in their dtype, max/min/and/or/xor are exact: bitwise.
  for (DType t : {DType::kInt32, DType::kInt8, DType::kUInt16, DType::kInt64}) {
    Array x = random_array({9, 70}, t, -100, 100);
    auto f = [](const Array& a) {
      return tnp::sum(a * a, 1) + tnp::max(a + a, 1) - tnp::min(a, 1) +
             tnp::prod(lax::bitwise_and(a, a), 1);
    };
    SCOPED_TRACE(std::string(dtype_short_name(t)));
    plan_of(f, x);
    expect_jit_close(f, 0, x);
    auto bits = [](const Array& a) {
      return lax::reduce_xor(a + a, {1}) + lax::reduce_or(a * a, {1}) + lax::reduce_and(a - a, {1});
    };
    expect_jit_close(bits, 0, x);
  }
  Array x = random_array({9, 70}, DType::kFloat64, -3, 3);
  auto f = [](const Array& a) {
    return tnp::sum(a * a, 1) + tnp::max(a + a, 1) - tnp::min(a, 1) + tnp::prod(a * 0.5, 1);
  };
  expect_jit_close(f, 0, x);
  Array b = lax::gt(random_array({9, 70}, DType::kFloat32), tnp::scalar(1.5, DType::kFloat32));
  auto anyall = [](const Array& a) {
    return lax::bitwise_and(tnp::any(lax::bitwise_not(a), 1), tnp::all(a | a, 1));
  };
  expect_jit_close(anyall, 0, b);
}

TEST(FusionReductions, FloatFoldsAreEagerBitwise) {
  // A stage folds in the eager kernel's order, so jit == eager bit for bit at every length
  // (in order, 8 lanes, blocks paired as a binary counter, the partial block).
  for (int64_t n : {1, 2, 15, 16, 17, 100, 511, 512, 513, 1000, 2600, 4096, 9000, 32768}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array({3, n}, DType::kFloat32);
    auto f = [](const Array& a) {
      return tnp::sum(a * 1.5f, 1) + tnp::prod(a * 1e-3f + 1.0f, 1) + tnp::max(-a, 1);
    };
    expect_jit_close(f, 0, x);
    const std::string plan = jit(f).lower(x).compile().as_text();
    EXPECT_EQ(plan.substr(plan.find("executable")).find("reduce"), std::string::npos) << plan;
  }
  {  // float64 (32 lanes, blocks of 256)
    testing::X64Scope x64;
    for (int64_t n : {15, 100, 255, 256, 257, 3000}) {
      SCOPED_TRACE("f64 n = " + std::to_string(n));
      Array x = random_array({2, n}, DType::kFloat64);
      auto f = [](const Array& a) {
        return tnp::sum(tnp::exp(a) * 1.5, 1) + tnp::prod(a * 1e-3 + 1.0, 1);
      };
      expect_jit_close(f, 0, x);
    }
  }
  // Inner dimensions that cannot collapse (read transposed) fold in row-major order too.
  Array y = random_array({3, 40, 30}, DType::kFloat32);
  auto g = [](const Array& a) {
    return tnp::sum(lax::transpose(a, {0, 2, 1}) * 2.0f, std::vector<int64_t>{1, 2});
  };
  FusionPlan p = plan_of(g, y);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kernel.inner, 2u);
  expect_jit_close(g, 0, y);
  // A saved value over two inner dimensions that do not collapse: the body reads it back at
  // its own point.
  auto sv = [](const Array& a) {
    Array e = tnp::exp(lax::transpose(a, {0, 2, 1}));
    return e / tnp::sum(e, std::vector<int64_t>{1, 2}, true) + lax::transpose(a, {0, 2, 1});
  };
  FusionPlan ps = plan_of(sv, y);
  ASSERT_EQ(ps.groups.size(), 1u);
  EXPECT_EQ(ps.groups[0].kernel.num_saved(), 1u);
  EXPECT_EQ(ps.groups[0].kernel.inner, 2u);
  expect_jit_close(sv, 0, y);
  // Past the eager kernel's one-piece length the reduction stays a thunk.
  Array z = random_array({2, 40000}, DType::kFloat32);
  auto h = [](const Array& a) { return tnp::sum(tnp::exp(a), 1); };
  EXPECT_TRUE(plan_of(h, z).groups.empty());
  expect_jit_close(h, 0, z);
}

TEST(FusionReductions, NaNsAndEmptyRowsFollowEager) {
  std::vector<float> v(4 * 30);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
  v[35] = std::nanf("");
  v[95] = -std::numeric_limits<float>::infinity();
  Array x = array_from_host(Aval{{4, 30}, DType::kFloat32}, v.data());
  auto f = [](const Array& a) { return tnp::max(a * 2.0f, 1) + tnp::min(a + 1.0f, 1); };
  Array got = jit(f)(x), want = f(x);
  const std::vector<double> g = to_doubles(got), w = to_doubles(want);
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_TRUE(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) << i;
  EXPECT_TRUE(std::isnan(g[1]));
  // A row of no elements folds to the identity.
  Array e = tnp::zeros({3, 0}, DType::kFloat32);
  auto h = [](const Array& a) { return tnp::sum(a + 1.0f, 1) * tnp::prod(a, 1); };
  expect_jit_close(h, 0, e);
}

TEST(FusionReductions, ShapesThatDoNotShareASpaceSplit) {
  Array x = random_array({8, 12}, DType::kFloat32), y = random_array({8, 5}, DType::kFloat32);
  // Two rows of different lengths: two kernels, the second reading the first's result.
  auto f = [](const Array& a, const Array& b) {
    return tnp::sum(tnp::exp(a), 1) * tnp::sum(b * b, 1);
  };
  FusionPlan p = plan_of(f, x, y);
  EXPECT_EQ(p.groups.size(), 2u);
  expect_jit_close(f, 0, x, y);
  // A row value read at another row's point (rev) is computed by a kernel of its own.
  auto g = [](const Array& a) {
    Array m = tnp::max(tnp::exp(a), 1, true);
    return lax::rev(m, {0}) * a + 1.0f;
  };
  plan_of(g, x);
  expect_jit_close(g, 0, x);
  // A reduction whose value is broadcast against another row length.
  auto h2 = [](const Array& a, const Array& b) {
    Array s = tnp::sum(a * 3.0f, 1, true);
    return (s + b) * 2.0f;
  };
  plan_of(h2, x, y);
  expect_jit_close(h2, 0, x, y);
}

// Column reductions (a reduced group followed by kept dimensions) fuse with their producers;
// the lowering folds each column in the eager column kernel's order (chunks of rows, leaves of
// 8, halves rounded up to 8), so jit equals eager bit for bit.
void expect_jit_bitwise(const std::function<Array(const Array&)>& f, const Array& x) {
  Array got = jit(f)(x), want = f(x);
  ASSERT_EQ(got.aval(), want.aval());
  EXPECT_EQ(std::memcmp(got.raw_data("test"), want.raw_data("test"), got.nbytes()), 0)
      << testing::compare(to_doubles(got), to_doubles(want), 0, 0);
}

int64_t column_kernels(const FusionPlan& p) {
  int64_t n = 0;
  for (const auto& g : p.groups) n += g.kernel.columns > 0;
  return n;
}

TEST(FusionReductions, ColumnReductionsFuseAndAreEagerBitwise) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  // I >= 32 (eager's wide path); R past a chunk (256 rows when I >= 1024) and past 8 chunks
  // (the partials' own tree); size-1 dimensions anywhere; leading kept dimensions.
  const std::vector<Case> cases = {
      {{64, 300}, {0}},    {{3, 40, 50}, {1}},       {{2, 5, 3, 64}, {1, 2}},
      {{9, 1, 70}, {0}},   {{2600, 40}, {0}},        {{700, 1100}, {0}},
      {{2600, 1024}, {0}}, {{1, 33, 1, 45, 1}, {1}}, {{5, 7, 2, 3, 32}, {1, 2}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.shape));
    Array x = random_array(c.shape, DType::kFloat32, -2, 2);
    const std::vector<int64_t> ax = c.axes;
    auto sum = [ax](const Array& a) { return tnp::sum(tnp::tanh(a) * 1.5f + a, ax); };
    auto mx = [ax](const Array& a) { return tnp::max(a * a - 1.0f, ax); };
    auto mn = [ax](const Array& a) { return tnp::min(-a, {.axis = ax}) * 2.0f; };
    auto prod = [ax](const Array& a) { return tnp::prod(a * 1e-3f + 1.0f, {.axis = ax}); };
    auto mean = [ax](const Array& a) { return tnp::mean(tnp::exp(a), ax); };
    if (shape_size(c.shape) < 200000) {
      FusionPlan p = plan_of(sum, x);
      ASSERT_EQ(p.groups.size(), 1u);
      EXPECT_EQ(column_kernels(p), 1);
      EXPECT_TRUE(p.groups[0].kernel.row_outputs);
    }
    const std::vector<std::function<Array(const Array&)>> fs = {sum, mx, mn, prod, mean};
    for (const auto& f : fs) expect_jit_bitwise(f, x);
  }
  {  // float64 and integers (which fold exactly in any order)
    testing::X64Scope x64;
    Array x = random_array({300, 70}, DType::kFloat64);
    expect_jit_bitwise([](const Array& a) { return tnp::sum(tnp::exp(a) * 0.5, 0); }, x);
    Array i = random_array({300, 70}, DType::kInt32, -100, 100);
    expect_jit_bitwise([](const Array& a) { return tnp::sum(a * a, 0) + tnp::max(a, 0); }, i);
  }
  // NaN wins, ties between -0 and +0 keep eager's operand order.
  std::vector<float> v(40 * 33);
  for (size_t k = 0; k < v.size(); ++k) v[k] = (k % 3 == 0) ? -0.0f : (k % 3 == 1 ? 0.0f : -1.0f);
  v[5 * 33 + 7] = std::nanf("");
  Array z = array_from_host(Aval{{40, 33}, DType::kFloat32}, v.data());
  expect_jit_bitwise([](const Array& a) { return tnp::max(a * 1.0f, 0); }, z);
  expect_jit_bitwise([](const Array& a) { return tnp::min(a + 0.0f, 0); }, z);
  // Eager's narrow path (I < 32, R >= 2 * (256 / I)) is not a column kernel; results agree.
  Array n = random_array({1000, 17}, DType::kFloat32);
  auto narrow = [](const Array& a) { return tnp::sum(a * 2.0f, 0); };
  EXPECT_EQ(column_kernels(plan_of(narrow, n)), 0);
  expect_jit_bitwise(narrow, n);
  // A column value broadcast back over the rows is a kernel of its own (outputs are stored in
  // the space's order, and the value needs every row first).
  Array y = random_array({50, 40}, DType::kFloat32);
  auto centered = [](const Array& a) { return a - tnp::mean(a * 2.0f, 0, true); };
  FusionPlan pc = plan_of(centered, y);
  EXPECT_EQ(column_kernels(pc), 1);
  expect_jit_bitwise(centered, y);
  // Two column reductions of one operand: each its own kernel (one stage per column kernel).
  auto two = [](const Array& a) { return tnp::sum(a, 0) + tnp::max(a * 3.0f, 0); };
  FusionPlan p2 = plan_of(two, y);
  for (const auto& g : p2.groups) EXPECT_LE(g.kernel.stages.size(), 1u);
  expect_jit_bitwise(two, y);
  // A variance over columns: the mean's reduction (read inside the squares' stage) is split
  // off; the squares' sum stays a column kernel.
  auto var = [](const Array& a) { return tnp::var(a * 2.0f, 0); };
  FusionPlan pv = plan_of(var, y);
  EXPECT_EQ(column_kernels(pv), 1);
  expect_jit_bitwise(var, y);
  // Rows and columns of one operand in one program.
  auto both = [](const Array& a) {
    return tnp::sum(tnp::sum(tnp::exp(a), 0)) + tnp::sum(tnp::max(tnp::exp(a), 1));
  };
  expect_jit_bitwise(both, y);
}

TEST(FusionReductions, RandomReductionProgramsMatchEager) {
  // Random chains: elementwise ops over x[m, n] and row broadcasts, row and column reductions
  // of them (sum, max, min) broadcast back, a reduction (of rows or of columns) or a full-shape
  // value as the result.
  std::mt19937_64& g = testing::rng();
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t m = 1 + static_cast<int64_t>(g() % 6), n = 1 + static_cast<int64_t>(g() % 150);
    Array x = random_array({m, n}, DType::kFloat32), row = random_array({n}, DType::kFloat32);
    const uint64_t seed = g();
    auto f = [seed](const Array& a, const Array& r) {
      std::mt19937_64 pg(seed);
      std::vector<Array> vals{a, a + r};
      for (int k = 0; k < 7; ++k) {
        const Array& u = vals[pg() % vals.size()];
        const Array& v = vals[pg() % vals.size()];
        switch (pg() % 8) {
          case 0:
            vals.push_back(u * v);
            break;
          case 6:  // column reductions, broadcast back over the rows
            vals.push_back(u - tnp::sum(tnp::exp(v * 0.1f), 0, true));
            break;
          case 7:
            vals.push_back(u * tnp::max(v, 0, true));
            break;
          case 1:
            vals.push_back(tnp::tanh(u) - v);
            break;
          case 2:
            vals.push_back(u - tnp::max(v, 1, true));
            break;
          case 3:
            vals.push_back(u / (tnp::sum(tnp::abs(v), 1, true) + 1.0f));
            break;
          case 4:
            vals.push_back(tnp::exp(u - tnp::max(u, 1, true)));
            break;
          default:
            vals.push_back(u + tnp::min(v * v, 1, true));
            break;
        }
      }
      switch (pg() % 3) {
        case 0:
          return tnp::sum(vals.back(), 1);
        case 1:
          return tnp::sum(tnp::tanh(vals.back()), 0);
        default:
          return vals.back();
      }
    };
    SCOPED_TRACE("trial " + std::to_string(trial) + " " + std::to_string(m) + "x" +
                 std::to_string(n));
    plan_of(f, x, row);
    expect_jit_close(f, 0, x, row);
  }
}

// Which primitives a fused kernel can compute (their kinds' rules exist) and which still run as
// eager thunks under jit: the list is pinned, so a primitive gaining (or losing) a rule shows
// here. Contractions, library calls, control flow, collectives and effects are thunks by kind.
// ---- guarded loads: pad and concatenate ----

bool has_member(const FusionPlan& p, const Jaxpr& j, const std::string& prim) {
  for (const auto& g : p.groups)
    for (size_t m : g.members)
      if (j.eqns[m].primitive->name() == prim) return true;
  return false;
}

TEST(Fusion, MultiResultElementwiseJoinsTheGroupReadingAllItsResults) {
  // threefry2x32 (two results at each point) inside jax.random.normal: the counter iota, the 20
  // rounds, the bits-to-float steps and erf_inv are one kernel, equal to eager bit for bit.
  // normal's body is a nested `jit` equation (as JAX's jitted samplers): the pipeline's
  // inline_calls pass opens it before fusion, as here.
  const Array key = random::key(20261204);
  auto normal = [](const Array& k) { return random::normal(k, {3, 1000}); };
  ClosedJaxpr cj = make_jaxpr(normal)(key);
  cj.jaxpr = compiler::inline_calls(*cj.jaxpr);
  std::vector<Array> args{key};
  FusionPlan p = check_plan(cj, args);
  EXPECT_TRUE(has_member(p, *cj.jaxpr, "threefry2x32")) << to_string(*cj.jaxpr);
  EXPECT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(to_doubles(jit(normal)(key)), to_doubles(normal(key)));
  // A result read outside the group (here a program output) keeps the equation eager.
  const Array k2 = random::key_data(random::key(7));
  auto both = [](const Array& kd) {
    const Array c = lax::iota(DType::kUInt32, 64);
    std::vector<Array> r =
        bind(*find_primitive("threefry2x32"),
             {lax::index_in_dim(kd, 0, 0, false), lax::index_in_dim(kd, 1, 0, false), c, c});
    return std::vector<Array>{r[0] ^ r[1], r[1]};
  };
  ClosedJaxpr cj2 = make_jaxpr(both)(k2);
  std::vector<Array> args2{k2};
  FusionPlan p2 = check_plan(cj2, args2);
  EXPECT_FALSE(has_member(p2, *cj2.jaxpr, "threefry2x32"));
  const std::vector<Array> got = jit(both)(k2), want = both(k2);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(to_doubles(got[i]), to_doubles(want[i]));
}

TEST(FusionGuards, PadOfAComputedValueIsOneKernel) {
  Array a = random_array({5, 7}, DType::kFloat32), v = random_array({}, DType::kFloat32);
  auto f = [](const Array& x, const Array& pv) {
    return lax::pad(x * 2.0f + 1.0f, pv, {{1, 2, 0}, {3, 0, 0}}) - 0.5f;
  };
  ClosedJaxpr cj = make_jaxpr(f)(a, v);
  std::vector<Array> args{a, v};
  FusionPlan p = check_plan(cj, args);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_TRUE(has_member(p, *cj.jaxpr, "pad"));
  const compiler::kir::Kernel& k = p.groups[0].kernel;
  EXPECT_EQ(k.dims, (Shape{8, 10}));
  EXPECT_EQ(k.inputs.size(), 2u);  // x and the padding value: no buffer in between
  EXPECT_NE(k.text().find(" if "), std::string::npos) << k.text();
  // Negative padding crops: the guard that always holds is dropped.
  plan_of(
      [](const Array& x, const Array& pv) {
        return lax::pad(tnp::abs(x), pv, {{-1, 2, 0}, {-2, -3, 0}});
      },
      a, v);
  // A computed padding value, a rank-0 operand and an empty one.
  plan_of([](const Array& x) { return lax::pad(x + 1.0f, tnp::sum(x) * 0.0f + 3.0f, {}); },
          random_array({}, DType::kFloat32));
  plan_of(
      [](const Array& x) {
        return lax::pad(x + 1.0f, tnp::full({}, 2.0), {{2, 1, 0}});
      },
      random_array({0}, DType::kFloat32));
}

TEST(FusionGuards, InteriorPaddingStaysEager) {
  Array a = random_array({4, 3}, DType::kFloat32);
  auto f = [](const Array& x) {
    return lax::pad(x * 2.0f, tnp::full({}, 0.0), {{0, 0, 1}, {1, 1, 0}}) + 1.0f;
  };
  ClosedJaxpr cj = make_jaxpr(f)(a);
  std::vector<Array> args{a};
  FusionPlan p = check_plan(cj, args);
  EXPECT_FALSE(has_member(p, *cj.jaxpr, "pad"));
}

TEST(FusionGuards, ConcatenateOfComputedPiecesIsOneKernel) {
  Array a = random_array({3, 2}, DType::kFloat32), b = random_array({3, 5}, DType::kFloat32),
        c = random_array({3, 1}, DType::kFloat32), e = random_array({3, 0}, DType::kFloat32);
  auto f = [](const Array& x, const Array& y, const Array& z, const Array& w) {
    return tnp::concatenate({x + 1.0f, w, y * y, z - 3.0f}, 1) * 2.0f;
  };
  ClosedJaxpr cj = make_jaxpr(f)(a, b, c, e);
  std::vector<Array> args{a, b, c, e};
  FusionPlan p = check_plan(cj, args);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_TRUE(has_member(p, *cj.jaxpr, "concatenate"));
  EXPECT_EQ(p.groups[0].kernel.dims, (Shape{3, 8}));
  // Along the leading axis, of integers, and nested inside a pad.
  plan_of(
      [](const Array& x, const Array& y) {
        return tnp::concatenate({x * 3, y, x - y}, 0) + 1;
      },
      random_array({2, 4}, DType::kInt32), random_array({2, 4}, DType::kInt32));
  plan_of(
      [](const Array& x, const Array& y) {
        return lax::pad(tnp::concatenate({x, tnp::negative(y)}, 0), tnp::full({}, 9.0),
                        {{2, 1, 0}}) *
               x.shape()[0];
      },
      random_array({4}, DType::kFloat32), random_array({3}, DType::kFloat32));
}

TEST(FusionGuards, ExpensivePiecesAreNotRecomputedAtEveryPoint) {
  Array a = random_array({16}, DType::kFloat32), b = random_array({48}, DType::kFloat32);
  auto f = [](const Array& x, const Array& y) {
    return tnp::concatenate({tnp::exp(x), y}, 0) * 2.0f;
  };
  ClosedJaxpr cj = make_jaxpr(f)(a, b);
  std::vector<Array> args{a, b};
  FusionPlan p = check_plan(cj, args);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_FALSE(has_member(p, *cj.jaxpr, "exp"));  // exp(x) is computed once, then loaded
}

TEST(FusionGuards, ReshapesTransposesAndReductionsOfPieces) {
  // A pad read through a reshape that merges its dimensions: guards on a combined index.
  Array a = random_array({3, 4}, DType::kFloat32);
  plan_of(
      [](const Array& x) {
        Array p = lax::pad(x + 1.0f, tnp::full({}, 0.0), {{1, 0, 0}, {0, 2, 0}});
        return lax::reshape(p * 2.0f, {24}) + 1.0f;
      },
      a);
  plan_of(
      [](const Array& x) {
        Array p = tnp::concatenate({x * 2.0f, x}, 1);
        return lax::reshape(lax::transpose(p, {1, 0}), {2, 12}) - 1.0f;
      },
      a);
  // A row reduction over a padded row: the stage's loads are guarded; softmax of a concatenation.
  Array r = random_array({6, 40}, DType::kFloat32), q = random_array({6, 24}, DType::kFloat32);
  FusionPlan p = plan_of(
      [](const Array& x) {
        return tnp::sum(lax::pad(x * x, tnp::full({}, 1.0), {{0, 0, 0}, {3, 5, 0}}), 1) + 1.0f;
      },
      r);
  ASSERT_EQ(p.groups.size(), 1u);
  plan_of(
      [](const Array& x, const Array& y) {
        Array c = tnp::concatenate({x, y + 1.0f}, 1);
        Array m = tnp::max(c, 1, true);
        Array e = tnp::exp(c - m);
        return e / tnp::sum(e, 1, true);
      },
      r, q);
}

// ---- dynamic loads: dynamic_slice ----

TEST(FusionDynamic, DynamicSliceIsASymbolOfTheKernel) {
  Array x = random_array({6, 9}, DType::kFloat32);
  for (int32_t i : {0, 2, 4, -3, 100}) {
    for (int32_t j : {0, 5, -1, 7}) {
      Array si = tnp::array(std::vector<int32_t>{i}, {}),
            sj = tnp::array(std::vector<int32_t>{j}, {});
      auto f = [](const Array& a, const Array& s0, const Array& s1) {
        return lax::dynamic_slice(a * 2.0f + 1.0f, {s0, s1}, {3, 4}) - 0.5f;
      };
      ClosedJaxpr cj = make_jaxpr(f)(x, si, sj);
      std::vector<Array> args{x, si, sj};
      FusionPlan p = check_plan(cj, args);
      // lax.dynamic_slice maps negative starts first: those scalars are a kernel of their own.
      const compiler::FusionGroup& g = p.groups.back();
      std::set<std::string> names;
      for (size_t m : g.members) names.insert(cj.jaxpr->eqns[m].primitive->name());
      EXPECT_EQ(names, (std::set<std::string>{"add", "dynamic_slice", "mul", "sub"}));
      EXPECT_EQ(g.kernel.symbols.size(), 2u);
      EXPECT_NE(g.kernel.text().find("= clamp(load p"), std::string::npos);
    }
  }
  // A computed start is materialized first; a full-size slice needs no symbol; a literal start
  // is a constant offset; a dynamic slice feeding a row reduction.
  Array n = tnp::array(std::vector<int32_t>{1}, {});
  plan_of(
      [](const Array& a, const Array& s) {
        return lax::dynamic_slice(a + 1.0f, {s * 2 - 1, s}, {2, 9}) * 3.0f;
      },
      x, n);
  plan_of(
      [](const Array& a, const Array& s) {
        return lax::dynamic_slice(a + 1.0f, {s, s}, {6, 9}) * 3.0f;
      },
      x, n);
  plan_of(
      [](const Array& a) {
        return lax::dynamic_slice(tnp::abs(a),
                                  {tnp::array(std::vector<int32_t>{4}, {}),
                                   tnp::array(std::vector<int32_t>{2}, {})},
                                  {2, 5}) +
               1.0f;
      },
      x);
  // A full-size slice ignores its start: a reduction computing it is never reached, and the
  // kernel takes the root's space (found by the random programs).
  plan_of(
      [](const Array& a) {
        Array k = tnp::astype(tnp::sum(tnp::abs(a)) > 0.0, DType::kInt32);
        return lax::dynamic_slice(a * 2.0f, {k, k}, {6, 9});
      },
      x);
  // (lax.dynamic_slice maps negative starts first: those scalars are a kernel of their own.)
  auto g = [](const Array& a, const Array& s) {
    return tnp::sum(lax::dynamic_slice(a * a, {s, s}, {4, 7}), 1) + 1.0f;
  };
  ClosedJaxpr cj = make_jaxpr(g)(x, n);
  std::vector<Array> args{x, n};
  FusionPlan r = check_plan(cj, args);
  bool together = false;
  for (const auto& grp : r.groups) {
    std::set<std::string> names;
    for (size_t m : grp.members) names.insert(cj.jaxpr->eqns[m].primitive->name());
    together |= names.count("dynamic_slice") && names.count("reduce_sum") && names.count("mul");
  }
  EXPECT_TRUE(together);
}

TEST(FusionDynamic, SiblingsWithSymbolsShareOneKernel) {
  // Two slices of x at different run-time starts (and one at a shared start): one kernel, the
  // equal symbols shared, the outputs each at its own starts.
  Array x = random_array({8, 6}, DType::kFloat32);
  Array s = tnp::array(std::vector<int32_t>{2}, {}), t = tnp::array(std::vector<int32_t>{5}, {});
  ClosedJaxpr cj = make_jaxpr([](const Array& a, const Array& i, const Array& j) {
    return std::vector<Array>{lax::dynamic_slice(a, {i, j}, {3, 2}) * 2.0f,
                              lax::dynamic_slice(a, {j, i}, {3, 2}) - 1.0f};
  })(x, s, t);
  std::vector<Array> args{x, s, t};
  FusionPlan p = check_plan(cj, args);
  size_t merged = 0;  // (the starts' negative-index mapping is merged too: rank-0 kernels)
  for (const auto& g : p.groups)
    if (g.outputs.size() == 2 && !g.kernel.dims.empty()) {
      ++merged;
      EXPECT_LE(g.kernel.symbols.size(), 4u) << g.kernel.text();
      EXPECT_GE(g.kernel.symbols.size(), 2u) << g.kernel.text();
    }
  EXPECT_EQ(merged, 1u);
}

TEST(FusionDynamic, DynamicUpdateSliceSelectsTheWindow) {
  Array x = random_array({7, 9}, DType::kFloat32), u = random_array({3, 4}, DType::kFloat32);
  for (int32_t i : {0, 2, 5, -1, 100})
    for (int32_t j : {0, 4, 6, -30}) {
      Array si = tnp::array(std::vector<int32_t>{i}, {}),
            sj = tnp::array(std::vector<int32_t>{j}, {});
      auto f = [](const Array& a, const Array& b, const Array& s0, const Array& s1) {
        return lax::dynamic_update_slice(a * 2.0f, b - 1.0f, {s0, s1}) + 1.0f;
      };
      ClosedJaxpr cj = make_jaxpr(f)(x, u, si, sj);
      std::vector<Array> args{x, u, si, sj};
      FusionPlan p = check_plan(cj, args);
      const compiler::FusionGroup& g = p.groups.back();
      std::set<std::string> names;
      for (size_t m : g.members) names.insert(cj.jaxpr->eqns[m].primitive->name());
      EXPECT_TRUE(names.count("dynamic_update_slice") && names.count("sub") && names.count("mul"))
          << g.kernel.text();
      EXPECT_EQ(g.kernel.symbols.size(), 2u) << g.kernel.text();
    }
  // A full-width update on one axis, a rank-1 window, an empty update, and the gradient of a
  // dynamic slice (an update into zeros) feeding a reduction.
  Array n = tnp::array(std::vector<int32_t>{3}, {});
  plan_of(
      [](const Array& a, const Array& b, const Array& s) {
        return lax::dynamic_update_slice(a, b * 3.0f, {s, s}) - 2.0f;
      },
      x, random_array({2, 9}, DType::kFloat32), n);
  plan_of(
      [](const Array& a, const Array& s) {
        return lax::dynamic_update_slice(tnp::abs(a), tnp::full({2}, 5.0), {s}) * 2.0f;
      },
      random_array({8}, DType::kFloat32), n);
  plan_of(
      [](const Array& a, const Array& s) {
        return lax::dynamic_update_slice(a + 1.0f, tnp::zeros({0, 3}), {s, s}) * 2.0f;
      },
      x, n);
  plan_of(
      [](const Array& a, const Array& s) {
        Array d = lax::dynamic_update_slice(tnp::zeros({7, 9}), a * a, {s, s});
        return tnp::sum(d + 1.0f, 1);
      },
      random_array({2, 3}, DType::kFloat32), n);
}

// ---- indirect loads: gather ----

// The group holding an equation of primitive `name`, or null.
const compiler::FusionGroup* group_with(const ClosedJaxpr& cj, const FusionPlan& p,
                                        const std::string& name) {
  for (const auto& g : p.groups)
    for (size_t m : g.members)
      if (cj.jaxpr->eqns[m].primitive->name() == name) return &g;
  return nullptr;
}

// Random int32 indices in [lo, hi] of the given shape.
Array random_ids(const Shape& shape, int32_t lo, int32_t hi) {
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<int32_t> v(static_cast<size_t>(shape_size(shape)));
  for (int32_t& x : v) x = d(testing::rng());
  return tnp::array(v, shape);
}

// f's plan checked by the evaluator, and jit(f) bitwise equal to f.
template <class F>
FusionPlan gather_case(F f, const std::vector<Array>& args, ClosedJaxpr* out = nullptr) {
  auto g = [&](const std::vector<Array>& a) { return f(a); };
  ClosedJaxpr cj = make_jaxpr(g)(args);
  FusionPlan p = check_plan(cj, args);
  const Array want = f(args);
  const Array got = jit(g)(args);
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.raw_data("test"), want.raw_data("test"), want.nbytes()), 0)
      << "jit " << got.repr() << "\neager " << want.repr();
  if (out != nullptr) *out = cj;
  return p;
}

TEST(FusionGather, EmbeddingLookupIsAnIndirectLoadOfTheKernel) {
  // table[ids] of a computed table, clamped out-of-range ids included: one kernel, the id a
  // symbol read at every output row.
  const GatherDimensionNumbers dn{{1}, {0}, {0}, {}, {}};
  for (int trial = 0; trial < 4; ++trial) {
    Array table = random_array({10, 7}, DType::kFloat32);
    Array ids = random_ids({6, 1}, -3, 14);
    ClosedJaxpr cj;
    FusionPlan p = gather_case(
        [&](const std::vector<Array>& a) {
          return lax::gather(a[0] * 2.0f + 1.0f, a[1], dn, {1, 7}) - 0.5f;
        },
        {table, ids}, &cj);
    ASSERT_EQ(p.groups.size(), 1u);
    const compiler::FusionGroup& g = p.groups[0];
    std::set<std::string> names;
    for (size_t m : g.members) names.insert(cj.jaxpr->eqns[m].primitive->name());
    EXPECT_EQ(names, (std::set<std::string>{"add", "gather", "mul", "sub"}));
    ASSERT_EQ(g.kernel.symbols.size(), 1u);
    EXPECT_FALSE(g.kernel.symbols[0].index.is_constant()) << g.kernel.text();
    EXPECT_EQ(g.kernel.symbols[0].hi, 9);
  }
}

TEST(FusionGather, EveryDimensionNumberFormMatchesEager) {
  // Points of several indices (x[i, j] pairs), windows wider than 1, a window covering its
  // dimension (no symbol), operand batching dims (vmap of take_along_axis), unsigned and int64
  // indices, all against eager and the evaluator.
  Array x = random_array({6, 8}, DType::kFloat32);
  gather_case(
      [&](const std::vector<Array>& a) {
        return tnp::exp(lax::gather(a[0], a[1], {{}, {0, 1}, {0, 1}, {}, {}}, {1, 1}));
      },
      {x, random_ids({4, 3, 2}, -2, 9)});
  gather_case(
      [&](const std::vector<Array>& a) {
        return lax::gather(tnp::abs(a[0]), a[1], {{1, 2}, {}, {0}, {}, {}}, {3, 8}) * 3.0f;
      },
      {x, random_ids({5, 1}, -1, 7)});
  gather_case(
      [&](const std::vector<Array>& a) {
        return lax::gather(a[0] + 1.0f, a[1], {{0}, {1}, {1}, {}, {}}, {6, 1}) * 3.0f;
      },
      {x, tnp::astype(random_ids({5, 1}, 0, 12), DType::kUInt8)});
  Array y = random_array({4, 6, 3}, DType::kFloat32);
  gather_case(
      [&](const std::vector<Array>& a) {
        return lax::gather(a[0] * a[0], a[1], {{2}, {1}, {1}, {0}, {0}}, {1, 1, 3}) - 1.0f;
      },
      {y, tnp::astype(random_ids({4, 5, 1}, -1, 7), DType::kInt64)});
}

TEST(FusionGather, ReductionsAndWhatCannotBeRead) {
  const GatherDimensionNumbers rows{{1}, {0}, {0}, {}, {}};
  Array table = random_array({9, 16}, DType::kFloat32);
  Array ids = random_ids({5, 1}, 0, 8);
  // A row reduction over the gathered window: the id is constant along the row, one kernel.
  ClosedJaxpr cj;
  FusionPlan p = gather_case(
      [&](const std::vector<Array>& a) {
        return tnp::sum(tnp::exp(lax::gather(a[0], a[1], rows, {1, 16})), 1);
      },
      {table, ids}, &cj);
  const compiler::FusionGroup* g = group_with(cj, p, "gather");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g, group_with(cj, p, "reduce_sum"));
  // A reduction over the gathered points themselves (the id changes along the row): the gather
  // is a kernel of its own.
  p = gather_case(
      [&](const std::vector<Array>& a) {
        return tnp::sum(lax::gather(a[0], a[1], {{0}, {0}, {0}, {}, {}}, {1, 16}) * 2.0f, 1);
      },
      {table, ids}, &cj);
  EXPECT_NE(group_with(cj, p, "gather"), group_with(cj, p, "reduce_sum"));
  // Computed ids are materialized first; a padded gather, whose points leave the indices outside
  // the window, is computed by a kernel of its own.
  gather_case(
      [&](const std::vector<Array>& a) {
        Array k = tnp::astype(tnp::sum(a[0]) > 0.0, DType::kInt32);
        return lax::gather(a[0], a[1] * k + 1, rows, {1, 16}) + 1.0f;
      },
      {table, ids});
  gather_case(
      [&](const std::vector<Array>& a) {
        return lax::pad(lax::gather(a[0] * 2.0f, a[1], rows, {1, 16}), tnp::full({}, 0.5),
                        {{1, 2, 0}, {0, 0, 0}}) +
               1.0f;
      },
      {table, ids});
  // A map kernel reading ids per point does not join a reduction over those points.
  gather_case(
      [&](const std::vector<Array>& a) {
        Array t = a[0] * 2.0f;
        Array gt = lax::gather(t, a[1], {{0}, {0}, {0}, {}, {}}, {1, 16});  // [16, 5]
        return gt + tnp::sum(gt * 3.0f, 1, true);
      },
      {table, ids});
}

TEST(FusionGather, FillModeSelectsTheFillOutsideTheOperand) {
  // FILL_OR_DROP (and ONE_HOT): a window that does not fit is the fill value — the default
  // (NaN, the least signed integer, the greatest unsigned one) or fill_value — in one kernel
  // with its consumers, for windows of one and of several starts, and for jnp.take (fill by
  // default).
  Array table = random_array({9, 6}, DType::kFloat32);
  for (GatherScatterMode mode : {GatherScatterMode::kFillOrDrop, GatherScatterMode::kOneHot}) {
    lax::GatherOptions o;
    o.mode = mode;
    ClosedJaxpr cj;
    FusionPlan p = gather_case(
        [&](const std::vector<Array>& a) {
          return lax::gather(a[0] * 2.0f, a[1], {{1, 2}, {}, {0}, {}, {}}, {3, 6}, o) + 1.0f;
        },
        {table, random_ids({7, 1}, -3, 10)}, &cj);
    const compiler::FusionGroup* g = group_with(cj, p, "gather");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g, group_with(cj, p, "mul"));
    EXPECT_EQ(g, group_with(cj, p, "add"));
  }
  lax::GatherOptions fv;
  fv.mode = GatherScatterMode::kFillOrDrop;
  fv.fill_value = -7.5;
  gather_case(
      [&](const std::vector<Array>& a) {
        return tnp::abs(lax::gather(a[0], a[1], {{}, {0, 1}, {0, 1}, {}, {}}, {1, 1}, fv));
      },
      {table, random_ids({4, 5, 2}, -2, 10)});
  for (DType t : {DType::kInt32, DType::kUInt8, DType::kInt8}) {
    lax::GatherOptions o;
    o.mode = GatherScatterMode::kFillOrDrop;
    gather_case(
        [&](const std::vector<Array>& a) {
          return lax::gather(a[0] + a[0], a[1], {{1, 2}, {}, {0}, {}, {}}, {2, 6}, o);
        },
        {tnp::astype(random_array({9, 6}, DType::kFloat32) * 50.0f, t),
         random_ids({6, 1}, -2, 10)});
    o.fill_value = 1e30;  // saturates to the dtype's greatest value
    gather_case(
        [&](const std::vector<Array>& a) {
          return lax::gather(a[0], a[1], {{1}, {0}, {0}, {}, {}}, {1, 6}, o);
        },
        {tnp::astype(random_array({9, 6}, DType::kFloat32) * 50.0f, t),
         random_ids({6, 1}, -2, 10)});
  }
  gather_case([&](const std::vector<Array>& a) { return tnp::take(a[0] * 3.0f, a[1], 1) - 1.0f; },
              {table, random_ids({4}, -8, 8)});
}

// ---- expansions: argmax / argmin ----

TEST(FusionExpand, ArgmaxAndArgminAreTwoStagesOfOneKernel) {
  // Rows with NaNs (the first NaN wins), ties (the first extreme wins), signed zeros and plain
  // values; float32, float64 and integers; jit equal to eager, and after the passes one kernel
  // with a max (min) stage and an index stage.
  std::mt19937_64& g = testing::rng();
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kUInt8}) {
    Array x = tnp::astype(random_array({37, 50}, DType::kFloat32) * 3.0f, t);
    if (is_floating(t)) {
      std::vector<double> v = to_doubles(x);
      for (size_t r = 0; r < 37; ++r) {
        const int kind = static_cast<int>(g() % 4);
        for (int k = 0; k < 3; ++k) {
          const size_t c = r * 50 + g() % 50;
          v[c] = kind == 0 ? std::nan("") : kind == 1 ? 9.0 : kind == 2 ? (k ? 0.0 : -0.0) : v[c];
        }
      }
      x = tnp::astype(tnp::array(v, {37, 50}), t);
    }
    for (bool kmax : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + (kmax ? " argmax" : " argmin"));
      auto f = [kmax](const Array& a) {
        return kmax ? lax::argmax(a * a, 1) : lax::argmin(a - a * a, 1, DType::kInt64);
      };
      const Array want = f(x), got = jit(f)(x);
      ASSERT_EQ(got.dtype(), want.dtype());
      EXPECT_EQ(to_doubles(got), to_doubles(want));
      ClosedJaxpr cj = make_jaxpr(f)(x);
      ClosedJaxpr opt{compiler::optimize(*cj.jaxpr), cj.consts};
      std::vector<Array> args{x};
      FusionPlan p = check_plan(opt, args);
      ASSERT_EQ(p.groups.size(), 1u) << to_string(*opt.jaxpr);
      EXPECT_EQ(p.groups[0].kernel.stages.size(), 2u) << p.groups[0].kernel.text();
    }
  }
  // Over another axis, and of bool: not expanded (the eager kernel runs).
  Array y = random_array({6, 5}, DType::kFloat32);
  auto h = [](const Array& a) { return lax::argmax(a, 0); };
  EXPECT_EQ(to_doubles(jit(h)(y)), to_doubles(h(y)));
  EXPECT_NE(to_string(*compiler::optimize(*make_jaxpr(h)(y).jaxpr)).find("argmax"),
            std::string::npos);
  auto b = [](const Array& a) { return lax::argmin(a > 0.0f, 1); };
  EXPECT_EQ(to_doubles(jit(b)(y)), to_doubles(b(y)));
}

TEST(KernelIr, GuardedLoadsNarrowTheCheckedRangeAndReadZeroOutside) {
  using compiler::kir::Affine;
  // out[i0, i1] = x[i0, i1 - 2] + 1 where 2 <= i1 < 6, else 1: x is [3, 4], the space [3, 9].
  compiler::kir::Kernel k;
  k.name = "guarded";
  k.dims = {3, 9};
  k.inputs = {{DType::kFloat32, {3, 4}}};
  k.outputs = {{DType::kFloat32, {3, 9}}};
  const Affine idx = Affine::dim(0, 2).scaled(4) + Affine::dim(1, 2) + Affine::constant(-2, 2);
  k.loads = {{0, idx, {{Affine::dim(1, 2), 2, 6}}}};
  const DType t[] = {DType::kFloat32};
  scalar::Builder b(t);
  const scalar::Value o = b.add(b.input(0), b.constant(1.0, DType::kFloat32));
  k.body = std::move(b).finish({&o, 1});
  k.verify();
  EXPECT_NE(k.text().find("if 2 <= i1 < 6"), std::string::npos) << k.text();
  Array x = random_array({3, 4}, DType::kFloat32);
  const std::vector<double> xv = to_doubles(x);
  std::vector<float> out(27);
  const void* ins[] = {x.raw_data("t")};
  void* outs[] = {out.data()};
  compiler::kir::evaluate(k, ins, outs);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 9; ++j) {
      const float want = j >= 2 && j < 6 ? static_cast<float>(xv[i * 4 + j - 2]) + 1.0f : 1.0f;
      EXPECT_EQ(out[i * 9 + j], want) << i << "," << j;
    }
  // Without the guard, or with one too wide, the load leaves the buffer.
  compiler::kir::Kernel wide = k;
  wide.loads[0].guards[0].hi = 7;
  EXPECT_ERROR(InternalError, wide.verify(), "leaves input");
  compiler::kir::Kernel none = k;
  none.loads[0].guards.clear();
  EXPECT_ERROR(InternalError, none.verify(), "leaves input");
  // Collapsing never merges a guarded dimension with the others unless the guard agrees.
  EXPECT_EQ(k.collapsed().dims, (Shape{3, 9}));
}

TEST(Fusion, ListsThePrimitivesThatStayThunks) {
  register_all();
  std::map<std::string, std::vector<std::string>> thunks;  // kind -> names
  int fused = 0;
  for (const std::string& name : primitive_names()) {
    const Primitive& p = *find_primitive(name);
    const bool rule = (p.kind == PrimitiveKind::kElementwise && p.scalar.rule) ||
                      (p.kind == PrimitiveKind::kIndexMap && compiler::index_map_rule(p)) ||
                      (p.kind == PrimitiveKind::kReduction && compiler::reduction_rule(p)) ||
                      compiler::expansion_rule(p) != nullptr;
    if (rule)
      ++fused;
    else
      thunks[primitive_kind_name(p.kind)].push_back(name);
  }
  for (auto& [kind, names] : thunks) {
    std::sort(names.begin(), names.end());
    std::string line = kind + ":";
    for (const std::string& n : names) line += " " + n;
    std::cout << "[thunks] " << line << "\n";
  }
  std::cout << "[fusible] " << fused << " primitives\n";
  EXPECT_GT(fused, 80);
  // Every elementwise primitive has a scalar definition.
  EXPECT_EQ(thunks.count("elementwise"), 0u);
  // Every data-movement primitive composes; argmax/argmin expand into fused reductions (over the
  // last axis); the reductions without a fold rule (cumulative, the generic reduce) stay thunks.
  EXPECT_EQ(thunks.count("index_map"), 0u);
  EXPECT_EQ(thunks["reduction"], (std::vector<std::string>{"cumlogsumexp", "cummax", "cummin",
                                                           "cumprod", "cumsum", "reduce"}));
  for (const char* n : {"reduce_sum", "reduce_max", "broadcast_in_dim", "exp", "select_n"})
    for (const auto& [kind, names] : thunks)
      EXPECT_EQ(std::find(names.begin(), names.end(), n), names.end()) << n << " is a " << kind;
}

// ---- the kernel IR's own contracts ----

compiler::kir::Kernel add_kernel(Shape dims, compiler::kir::Affine ia, compiler::kir::Affine ib,
                                 int64_t na, int64_t nb) {
  compiler::kir::Kernel k;
  k.name = "k";
  k.dims = dims;
  k.inputs = {{DType::kFloat32, {na}}, {DType::kFloat32, {nb}}};
  k.outputs = {{DType::kFloat32, dims}};
  k.loads = {{0, ia}, {1, ib}};
  const DType types[] = {DType::kFloat32, DType::kFloat32};
  scalar::Builder b(types);
  scalar::Value r = b.add(b.input(0), b.input(1));
  k.body = std::move(b).finish({&r, 1});
  return k;
}

TEST(KernelIr, VerifyChecksBoundsByIntervals) {
  using compiler::kir::Affine;
  const Affine rowmajor = Affine::dim(0, 2).scaled(4) + Affine::dim(1, 2);
  compiler::kir::Kernel ok = add_kernel({3, 4}, rowmajor, Affine::dim(1, 2), 12, 4);
  ok.verify();
  compiler::kir::Kernel past =
      add_kernel({3, 4}, rowmajor + Affine::constant(1, 2), Affine::dim(1, 2), 12, 4);
  EXPECT_ERROR(InternalError, past.verify(), "load");
  compiler::kir::Kernel neg = add_kernel({3, 4}, rowmajor, Affine::dim(1, 2).scaled(-1), 12, 4);
  EXPECT_ERROR(InternalError, neg.verify(), "load");
  // A reversed read (3 - i1) stays inside.
  add_kernel({3, 4}, rowmajor, Affine::dim(1, 2).scaled(-1) + Affine::constant(3, 2), 12, 4)
      .verify();
}

TEST(KernelIr, CollapseMergesOnlyWhatEveryFormAgreesOn) {
  using compiler::kir::Affine;
  const Affine rm = Affine::dim(0, 3).scaled(20) + Affine::dim(1, 3).scaled(5) + Affine::dim(2, 3);
  // Both row-major over [2,4,5]: one dimension of 40.
  compiler::kir::Kernel k = add_kernel({2, 4, 5}, rm, rm, 40, 40);
  EXPECT_EQ(k.collapsed().dims, (Shape{40}));
  // A row broadcast of the last dim: [8, 5].
  compiler::kir::Kernel r = add_kernel({2, 4, 5}, rm, Affine::dim(2, 3), 40, 5);
  EXPECT_EQ(r.collapsed().dims, (Shape{8, 5}));
  // Unit dimensions disappear.
  const Affine u = Affine::dim(0, 3).scaled(5) + Affine::dim(2, 3);
  compiler::kir::Kernel w = add_kernel({4, 1, 5}, u, u, 20, 20);
  EXPECT_EQ(w.collapsed().dims, (Shape{20}));
  // Collapsing keeps the values.
  for (const compiler::kir::Kernel* kk : {&k, &r}) {
    Array a = random_array({40}, DType::kFloat32),
          b = random_array({kk->inputs[1].size()}, DType::kFloat32);
    std::vector<float> o1(40), o2(40);
    const void* ins[] = {a.raw_data("t"), b.raw_data("t")};
    void* out1[] = {o1.data()};
    void* out2[] = {o2.data()};
    compiler::kir::evaluate(*kk, ins, out1);
    compiler::kir::evaluate(kk->collapsed(), ins, out2);
    EXPECT_EQ(o1, o2);
  }
}

TEST(KernelIr, TextNamesLoadsAndIsStable) {
  using compiler::kir::Affine;
  compiler::kir::Kernel k =
      add_kernel({3, 4}, Affine::dim(0, 2).scaled(4) + Affine::dim(1, 2), Affine::dim(1, 2), 12, 4);
  const std::string t = k.text();
  EXPECT_NE(t.find("4*i0 + i1"), std::string::npos) << t;
  EXPECT_EQ(t, add_kernel({3, 4}, Affine::dim(0, 2).scaled(4) + Affine::dim(1, 2),
                          Affine::dim(1, 2), 12, 4)
                   .text());
  EXPECT_NE(k.signature_text(), add_kernel({3, 4}, Affine::dim(0, 2).scaled(4) + Affine::dim(1, 2),
                                           Affine::dim(0, 2), 12, 4)
                                    .signature_text());
}

TEST(IndexMap, DelinearizeIsExactOrRefuses) {
  using compiler::kir::Affine;
  // [12] row-major over dims [3,4] into shape [6,2]: i0*4 + i1 -> (2*i0 + i1/2 ...) not affine.
  const Affine l = Affine::dim(0, 2).scaled(4) + Affine::dim(1, 2);
  const std::vector<int64_t> dims{3, 4};
  EXPECT_FALSE(compiler::delinearize(l, {6, 2}, dims).has_value());
  // Into [3,4] itself: the identity point.
  auto p = compiler::delinearize(l, {3, 4}, dims);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ((*p)[0], Affine::dim(0, 2));
  EXPECT_EQ((*p)[1], Affine::dim(1, 2));
  // Into [3,2,2] (splitting the inner dim of size 4): i1 has stride 1 but ranges over 4 > 2.
  EXPECT_FALSE(compiler::delinearize(l, {3, 2, 2}, dims).has_value());
  // Into [1,3,4]: a leading unit dim.
  EXPECT_TRUE(compiler::delinearize(l, {1, 3, 4}, dims).has_value());
}

}  // namespace
}  // namespace tessera
