// The sub-jaxpr transformations of src/prims/control_flow_util.h, checked directly: each
// transformed jaxpr, evaluated on fresh random inputs, must agree with the transformation applied
// to the original function (jvp, vmap, linearize, vjp through the public API), and linearize's
// residual bookkeeping must say which residuals are forwarded inputs.
#include <gtest/gtest.h>

#include "prims/control_flow_util.h"
#include "tessera/tessera.h"
#include "util/test_util.h"

namespace tessera {
namespace {

namespace tnp = tessera::numpy;
namespace cf = tessera::prims::cf;
using testing::compare;
using testing::random_array;
using testing::to_doubles;

#define EXPECT_CLOSE(got, want, tol) \
  EXPECT_EQ(compare(to_doubles(got), to_doubles(want), tol, tol), "")

// f(c, x, n) = (sin(c * x) + x * x, n + 1, c): float const c, float x, int n.
std::vector<Array> body(std::span<const Array> a) {
  Array y = lax::add(lax::sin(lax::mul(a[0], a[1])), lax::mul(a[1], a[1]));
  return {y, lax::add(a[2], tnp::asarray(1, DType::kInt32)), a[0]};
}

std::vector<Aval> body_avals() {
  return {Aval{{4}, DType::kFloat32}, Aval{{4}, DType::kFloat32}, Aval{{}, DType::kInt32}};
}

std::vector<Array> args() {
  return {random_array({4}, DType::kFloat32), random_array({4}, DType::kFloat32),
          tnp::asarray(3, DType::kInt32)};
}

TEST(ControlFlowUtil, StageHoistsClosedOverArrays) {
  Array k = random_array({4}, DType::kFloat32);
  flat::Fun f = [&](std::span<const Array> a) { return std::vector<Array>{lax::mul(a[0], k)}; };
  std::vector<Aval> avals = {Aval{{4}, DType::kFloat32}};
  cf::Staged s = cf::stage(f, avals);
  ASSERT_EQ(s.consts.size(), 1u);
  EXPECT_TRUE(s.jaxpr->constvars.empty());
  EXPECT_EQ(s.jaxpr->invars.size(), 2u);
  Array x = random_array({4}, DType::kFloat32);
  std::vector<Array> in = {s.consts[0], x};
  EXPECT_CLOSE(cf::as_fun(s.jaxpr)(in)[0], lax::mul(x, k), 0);
}

TEST(ControlFlowUtil, JvpJaxprMatchesJvp) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  std::vector<Array> a = args();
  Array tx = random_array({4}, DType::kFloat32);
  // Only x has a tangent; outputs: y nonzero, n + 1 integer (none), c zero unless instantiated.
  cf::JvpJaxpr jj = cf::jvp_jaxpr(*j, {false, true, false}, {false, false, true});
  EXPECT_EQ(jj.out_nonzero, (std::vector<bool>{true, false, true}));
  std::vector<Array> in = {a[0], a[1], a[2], tx};
  std::vector<Array> out = cf::as_fun(jj.jaxpr)(in);
  ASSERT_EQ(out.size(), 5u);
  auto [po, to] = flat::jvp(body, a, std::vector<Array>{Array(), tx, Array()});
  EXPECT_CLOSE(out[0], po[0], 0);
  EXPECT_CLOSE(out[3], to[0], 1e-6);
  EXPECT_CLOSE(out[4], tnp::zeros({4}), 0);
}

TEST(ControlFlowUtil, BatchJaxprMatchesLoop) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  const int64_t B = 3;
  Array xs = random_array({B, 4}, DType::kFloat32);
  Array c = random_array({4}, DType::kFloat32);
  Array n = tnp::asarray(5, DType::kInt32);
  cf::BatchedJaxpr bj = cf::batch_jaxpr(*j, {false, true, false}, B, {false, true, false});
  EXPECT_EQ(bj.out_batched, (std::vector<bool>{true, true, false}));
  std::vector<Array> in = {c, xs, n};
  std::vector<Array> out = cf::as_fun(bj.jaxpr)(in);
  ASSERT_EQ(out[1].shape(), (Shape{B}));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<Array> one = body(std::vector<Array>{c, xs[b], n});
    EXPECT_CLOSE(out[0][b], one[0], 1e-6);
    EXPECT_EQ(to_doubles(out[1][b])[0], 6.0);
  }
}

TEST(ControlFlowUtil, LinearizeJaxprSplitsKnownAndLinear) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  std::vector<Array> a = args();
  cf::LinearizedJaxpr lj = cf::linearize_jaxpr(*j, {true, true, false}, {false, false, false});
  EXPECT_EQ(lj.out_nonzero, (std::vector<bool>{true, false, true}));
  // Known part: primal outputs then residuals.
  std::vector<Array> kin = lj.known_consts;
  kin.insert(kin.end(), a.begin(), a.end());
  std::vector<Array> known = cf::as_fun(lj.known)(kin);
  ASSERT_EQ(known.size(), 3 + lj.res_avals.size());
  std::vector<Array> ref = body(a);
  EXPECT_CLOSE(known[0], ref[0], 0);
  // x (input 1) is needed by the tangent of x*x and c*x: some residual is a forwarded input.
  bool forwards_input = false;
  for (int64_t r : lj.res_input) forwards_input |= r >= 0;
  EXPECT_TRUE(forwards_input);
  // Linear part on the residuals vs jvp.
  Array tc = random_array({4}, DType::kFloat32), tx = random_array({4}, DType::kFloat32);
  std::vector<Array> lin_in = lj.lin_consts;
  lin_in.insert(lin_in.end(), known.begin() + 3, known.end());
  lin_in.push_back(tc);
  lin_in.push_back(tx);
  std::vector<Array> t = cf::as_fun(lj.lin)(lin_in);
  auto [po, to] = flat::jvp(body, a, std::vector<Array>{tc, tx, Array()});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_CLOSE(t[0], to[0], 1e-5);
  EXPECT_CLOSE(t[1], tc, 0);
}

TEST(ControlFlowUtil, TransposeJaxprIsTheAdjoint) {
  cf::JaxprPtr j = cf::stage(body, body_avals()).jaxpr;
  std::vector<Array> a = args();
  cf::LinearizedJaxpr lj = cf::linearize_jaxpr(*j, {true, true, false}, {false, false, false});
  std::vector<Array> kin = lj.known_consts;
  kin.insert(kin.end(), a.begin(), a.end());
  std::vector<Array> known = cf::as_fun(lj.known)(kin);
  std::vector<Array> res(known.begin() + 3, known.end());
  size_t nl = lj.lin_consts.size() + res.size();
  std::vector<bool> linear(nl + 2, false);
  linear[nl] = linear[nl + 1] = true;
  cf::JaxprPtr tj = cf::transpose_jaxpr(*lj.lin, linear);
  Array uy = random_array({4}, DType::kFloat32), uc = random_array({4}, DType::kFloat32);
  std::vector<Array> tin = lj.lin_consts;
  tin.insert(tin.end(), res.begin(), res.end());
  tin.push_back(uy);
  tin.push_back(uc);
  std::vector<Array> cts = cf::as_fun(tj)(tin);
  ASSERT_EQ(cts.size(), 2u);
  // Against vjp of the function in (c, x).
  auto f2 = [&](std::span<const Array> cx) {
    std::vector<Array> o = body(std::vector<Array>{cx[0], cx[1], a[2]});
    return std::vector<Array>{o[0], o[2]};
  };
  flat::Linearized l = flat::linearize(f2, std::vector<Array>{a[0], a[1]});
  std::vector<Array> want = l.vjp(std::vector<Array>{uy, uc});
  EXPECT_CLOSE(cts[0], want[0], 1e-5);
  EXPECT_CLOSE(cts[1], want[1], 1e-5);
}

}  // namespace
}  // namespace tessera
